"""GPU check of kgraph.distributed at world size 1 (issue 16) on the
manifest's "runtime" case (test/GPU/cases/runtime_cases.py: a two-layer
f16 MLP whose functions take 1 and 8 rows per call, weights from the
plan's safetensors file).

The test sets the variables torchrun sets for one process on this GPU
(RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT on a free port),
so DataParallel starts an NCCL process group of one rank itself, exactly
as under ``torchrun --nproc_per_node=1``; the broadcast, scatter and
gather are real NCCL collectives. Global batches of a call's worth, ragged
and smaller than a call are checked against the same plan run call by
call (bit for bit: the same kernels on the same rows) and against torch on
the weights read back from the file (the case's tolerance), and so are
CPU inputs, ``run_local``, the CUDA-graph calls and the batch checks.
Without a manifest or a GPU the test is skipped like the other GPU tests.
"""

import os
import socket

import pytest

import gpu_harness as H


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The runtime case's weights and float64 reference (the hidden layer
# rounded to f16), shared with test_runtime_gpu.py.
from test_runtime_gpu import _reference, _weights  # noqa: E402


def _rel_l2(torch, out, ref):
    return (torch.linalg.norm((out.double() - ref.double()).flatten()) /
            torch.linalg.norm(ref.double().flatten())).item()


def _call_by_call(torch, prog, x, b):
    """The plan run on x's rows b at a time, the last call zero-padded."""
    outs = []
    for i in range(0, x.shape[0], b):
        part = x[i:i + b]
        if part.shape[0] < b:
            part = torch.cat([part, part.new_zeros((b - part.shape[0],) +
                                                   tuple(part.shape[1:]))])
        outs.append(prog(part)[:min(b, x.shape[0] - i)])
    return torch.cat(outs)


@pytest.fixture
def torchrun_env(monkeypatch, request):
    """torchrun's variables for a world of one process on this GPU; the
    process group is gone afterwards whatever happened."""
    gpu = request.getfixturevalue("gpu")
    for k, v in {"RANK": "0", "LOCAL_RANK": str(gpu.index), "WORLD_SIZE": "1",
                 "LOCAL_WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
                 "MASTER_PORT": str(_free_port())}.items():
        monkeypatch.setenv(k, v)
    yield gpu
    import torch.distributed as dist
    if dist.is_initialized():
        dist.destroy_process_group()


def test_data_parallel_world1(runtime_case, seed, cases_dir, request):
    case = runtime_case
    H.skip_or_fail_uncompiled(case)
    gpu = request.getfixturevalue("torchrun_env")
    import torch
    import torch.distributed as dist
    import kgraph
    from kgraph.distributed import DataParallel
    plan = os.path.join(cases_dir, case["plan"])
    w = _weights(torch, os.path.join(cases_dir, case["weights"]))
    d_in, _, d_out = case["sizes"]
    f = max(case["functions"], key=lambda f: f["batch"])   # 8 rows per call
    b = f["batch"]
    gen = torch.Generator().manual_seed(seed)

    def batch(rows):
        return torch.randn(rows, d_in, generator=gen).half().to(gpu)

    dp = DataParallel(plan, function=f["name"])
    assert dist.is_initialized() and dp.backend == "nccl"
    assert (dp.rank, dp.world_size, dp.per_call, dp.device) == (0, 1, b, gpu)
    prog = dp.program
    results = {}
    for rows in (b, 2 * b + 4, 3, 1):
        x = batch(rows)
        y = dp(x)
        torch.cuda.synchronize(gpu)
        assert tuple(y.shape) == (rows, d_out) and y.device == x.device
        assert dp.shards(rows).calls == -(-rows // b)
        assert torch.equal(y, _call_by_call(torch, prog, x, b)), rows
        err = _rel_l2(torch, y.cpu(), _reference(torch, x.cpu(), w))
        assert err <= case["tol"], f"{rows} rows: relative L2 error {err:.3g}"
        results[rows] = (x, y)
    x, y = results[2 * b + 4]
    # CPU tensors in, CPU tensors out; numpy in, numpy out.
    got = dp(x.cpu())
    assert got.device.type == "cpu" and torch.equal(got, y.cpu())
    assert (dp(x.cpu().numpy()) == y.cpu().numpy()).all()
    # This rank's rows alone, no collective.
    assert torch.equal(dp.run_local(x), y)
    # The batch is checked before any collective; the group still works.
    with pytest.raises(kgraph.DTypeError, match=r"expected dtype f16"):
        dp(x.float())
    with pytest.raises(kgraph.ShapeError, match=rf"expected shape \['B', {d_in}\]"):
        dp(x[:, :-1])
    assert torch.equal(dp(x), y)
    # Calls replayed from a CUDA graph, and the one-row function (a call
    # per row), share the process group dp started.
    with DataParallel(prog, cuda_graph=True) as g:
        assert torch.equal(g(x), y)
    one = min(case["functions"], key=lambda f: f["batch"])
    with DataParallel(plan, function=one["name"]) as single:
        assert single.per_call == one["batch"] == 1
        x5, y5 = results[3][0], results[3][1]
        got = single(x5)
        torch.cuda.synchronize(gpu)
        assert _rel_l2(torch, got.cpu(), _reference(torch, x5.cpu(), w)) <= case["tol"]
        assert torch.equal(got, _call_by_call(torch, single.program, x5, 1))
        assert tuple(y5.shape) == tuple(got.shape)
    assert dist.is_initialized()
    dp.close()
    assert not dist.is_initialized()  # dp started the group, so it ends it
