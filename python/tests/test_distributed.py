"""kgraph.distributed without a GPU: the sharding and gathering arithmetic,
the checks of plans, batches and the launch environment, and end-to-end
runs of DataParallel on the gloo backend with world sizes 1, 2 and 3.

The end-to-end runs start this file as a script, once per rank, with the
variables torchrun sets (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT on a free port), so DataParallel starts the process group
itself as it does under torchrun. The calls run a fake callable
(``runner=``, the plan's semantics ``b - a`` in torch) and, once, the real
kgraph Program against the fake libcuda (python/tests/fake_libcuda.c). The
ranks write what they saw to JSON; the tests compare it with a
single-process reference.
"""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import kgraph  # noqa: E402
from kgraph.distributed import (DistributedError, ShardPlan, assemble,  # noqa: E402
                                check_batch, launch_env, per_call_batch,
                                plan_shards, split_padded)

torch = pytest.importorskip("torch")

#: Rows per call of the test plan (its inputs and output are f32[4, 3]).
PER_CALL = 4
#: The global batch sizes the end-to-end runs scatter: one row, fewer
#: than world * b, exact multiples, ragged.
BATCHES = (1, 3, 4, 8, 13, 17)


# --- the arithmetic --------------------------------------------------------------


def test_shard_plan_example():
    # 13 rows, 2 ranks, 4 per call: 2 calls each, shards of 8, 3 pad rows.
    p = plan_shards(13, 2, 4)
    assert (p.calls, p.shard, p.padded, p.padding) == (2, 8, 16, 3)
    assert [p.rows(r) for r in range(2)] == [(0, 8), (8, 13)]
    assert [p.real_calls(r) for r in range(2)] == [2, 2]
    assert p.owner(12) == (1, 4)
    # Fewer rows than one call per rank: rank 1 gets pad only and runs nothing.
    p = plan_shards(3, 2, 4)
    assert (p.calls, p.shard, p.padding) == (1, 4, 5)
    assert [p.rows(r) for r in range(2)] == [(0, 3), (3, 3)]
    assert [p.real_calls(r) for r in range(2)] == [1, 0]
    assert "3 rows on 2 rank(s): 1 call(s) of 4 rows" in p.describe()


@pytest.mark.parametrize("world", range(1, 9))
def test_shard_plan_invariants(world):
    for per_call in (1, 3, 8):
        for batch in list(range(1, 3 * world * per_call + 2)) + [1000, 4099]:
            p = plan_shards(batch, world, per_call)
            assert p.calls == -(-batch // (world * per_call))
            # The fewest calls that hold the batch.
            assert (p.calls - 1) * world * per_call < batch <= p.padded
            assert p.padding == p.padded - batch
            bounds = [p.rows(r) for r in range(world)]
            # The ranks own consecutive row ranges covering the batch once,
            # in rank order; only one rank's shard is partly filled.
            assert bounds[0][0] == 0 and bounds[-1][1] == batch
            assert all(bounds[r][1] == bounds[r + 1][0] for r in range(world - 1))
            sizes = [stop - start for start, stop in bounds]
            assert sum(sizes) == batch
            assert sum(0 < n < p.shard for n in sizes) <= 1
            assert sizes == sorted(sizes, reverse=True)
            for r, n in enumerate(sizes):
                assert p.real_calls(r) == -(-n // per_call) <= p.calls
            for row in (0, batch // 2, batch - 1):
                rank, local = p.owner(row)
                assert bounds[rank][0] + local == row


@pytest.mark.parametrize("args,match", [
    ((0, 2, 4), "the global batch has 0 rows: nothing to run"),
    ((-1, 2, 4), "the global batch size must be at least 1, got -1"),
    ((2.0, 2, 4), "the global batch size must be an integer, got float"),
    ((8, 0, 4), "the world size must be at least 1, got 0"),
    ((8, 2, 0), "the rows per call must be at least 1, got 0"),
    ((True, 2, 4), "must be an integer, got bool"),
])
def test_shard_plan_rejects(args, match):
    with pytest.raises(DistributedError, match=match):
        plan_shards(*args)


def test_shard_plan_rank_and_row_range():
    p = plan_shards(5, 2, 2)
    with pytest.raises(DistributedError, match="rank 2 is outside the world of 2"):
        p.rows(2)
    with pytest.raises(DistributedError, match="row 5 is outside the batch of 5"):
        p.owner(5)
    assert isinstance(p, ShardPlan)


@pytest.mark.parametrize("world", range(1, 9))
def test_split_and_assemble_keep_the_order(world):
    for batch in (1, 3, 7, 2 * world * 3, 2 * world * 3 + 1):
        p = plan_shards(batch, world, 3)
        x = torch.arange(batch * 2, dtype=torch.float32).reshape(batch, 2) + 1
        parts = split_padded(x, p)
        assert len(parts) == world
        for r, part in enumerate(parts):
            assert tuple(part.shape) == (p.shard, 2)
            start, stop = p.rows(r)
            assert torch.equal(part[:stop - start], x[start:stop])
            assert not part[stop - start:].any()  # the pad is zeros
        # A row-wise function of the shards, gathered in rank order, is the
        # function of the batch; the pad rows' results are dropped.
        got = assemble([q * 10 - 1 for q in parts], p)
        assert torch.equal(got, x * 10 - 1)
        # Gathering order matters: shards in another order give other rows.
        if p.real_rows(0) and world > 1 and p.real_rows(1):
            assert not torch.equal(assemble(parts[::-1], p), x)


def test_split_views_and_numpy():
    p = plan_shards(8, 2, 4)
    x = torch.arange(16.0).reshape(8, 2)
    parts = split_padded(x, p)
    assert all(q.data_ptr() == x[4 * r:].data_ptr() for r, q in enumerate(parts))
    # One shard holding the whole batch comes back as a view, not a copy.
    p1 = plan_shards(3, 1, 4)
    shard = torch.arange(8.0).reshape(4, 2)
    assert assemble([shard], p1).data_ptr() == shard.data_ptr()
    xn = np.arange(10, dtype=np.int32).reshape(5, 2)
    p = plan_shards(5, 3, 1)
    parts = split_padded(xn, p)
    assert [q.shape for q in parts] == [(2, 2)] * 3
    assert parts[2].tolist() == [[8, 9], [0, 0]]
    assert (assemble(parts, p) == xn).all()


def test_assemble_rejects():
    p = plan_shards(5, 2, 2)
    with pytest.raises(DistributedError, match="expected 2 result shard"):
        assemble([torch.zeros(4, 1)], p)
    with pytest.raises(kgraph.ShapeError, match="rank 1 has 3 rows, expected 4"):
        assemble([torch.zeros(4, 1), torch.zeros(3, 1)], p)
    with pytest.raises(kgraph.ShapeError, match="the batch has 4 rows"):
        split_padded(torch.zeros(4, 1), p)


# --- plans and batches ------------------------------------------------------------


def _function(ins, outs, dtype="f32"):
    """A FunctionPlan with inputs ``ins`` and outputs ``outs`` (shapes)."""
    bufs, i = [], 0
    for kind, shapes in (("input", ins), ("output", outs)):
        for j, s in enumerate(shapes):
            n = int(np.prod(s)) if s else 1
            bufs.append({"id": i, "kind": kind, "index": j, "shape": list(s),
                         "dtype": dtype, "bytes": 4 * n})
            i += 1
    plan = {"format": "kgraph-launch-plan", "version": 1, "target": "sm_90a",
            "ptx": "p.ptx", "function": "main", "buffers": bufs,
            "kernels": [{"name": "fake_nop", "grid": [1, 1, 1], "block": [1, 1, 1],
                         "shared_bytes": 0,
                         "args": [{"kind": "buffer", "buffer": 0}]}]}
    return kgraph.parse_plan(plan, check_ptx=False).function_plan()


def test_per_call_batch():
    assert per_call_batch(_function([[8, 224, 224, 3]], [[8, 1000]])) == 8
    assert per_call_batch(_function([[4, 3], [16]], [[4, 3]]), replicated=[1]) == 4


@pytest.mark.parametrize("ins,outs,replicated,match", [
    ([[]], [[1]], (), r"'main' has no batch dimension: input 0 is a scalar \(f32\[\]\)"),
    ([[4, 3], [5, 3]], [[4, 3]], (), r"no common batch dimension: input 0 is "
     r"f32\[4, 3\] \(4 rows per call\), input 1 is f32\[5, 3\]; pass replicated=\[1\]"),
    ([[4, 3]], [[3]], (), r"output 0 of 'main' is f32\[3\]: it has no batch "
     r"dimension of 4 rows"),
    ([[4, 3]], [[]], (), r"output 0 of 'main' is f32\[\]"),
    ([], [[4]], (), r"'main' has no batched input \(inputs: none\)"),
    ([[4]], [[4]], (0,), r"'main' has no batched input \(inputs: f32\[4\]\)"),
    ([[4]], [[4]], (3,), r"replicated input\(s\) \[3\] of 'main': it has 1 input"),
])
def test_per_call_batch_rejects(ins, outs, replicated, match):
    with pytest.raises(kgraph.PlanError, match=match):
        per_call_batch(_function(ins, outs), replicated)


def test_check_batch():
    f = _function([[4, 3], [4, 3]], [[4, 3]])
    a = torch.zeros(13, 3)
    assert check_batch(f, [a, a]) == 13
    assert check_batch(f, [np.zeros((2, 3), np.float32)] * 2) == 2
    with pytest.raises(kgraph.ArgumentCountError, match=r"takes 2 input\(s\)"):
        check_batch(f, [a])
    with pytest.raises(kgraph.DTypeError, match=r"input 1 of 'main': expected dtype "
                       r"f32 \(torch.float32\), got torch.float64 \(DataParallel "
                       r"converts nothing\)"):
        check_batch(f, [a, a.double()])
    with pytest.raises(kgraph.DTypeError, match="got numpy.float64"):
        check_batch(f, [a, np.zeros((13, 3))])
    with pytest.raises(kgraph.DTypeError, match="expected a torch.Tensor or "
                       "numpy.ndarray, got list"):
        check_batch(f, [a, [[0.0] * 3]])
    with pytest.raises(kgraph.ShapeError, match=r"input 0 of 'main': expected shape "
                       r"\['B', 3\] \(any B >= 1, run in calls of 4 rows\), got \[13, 4\]"):
        check_batch(f, [torch.zeros(13, 4), a])
    with pytest.raises(kgraph.ShapeError, match=r"got \[39\]"):
        check_batch(f, [torch.zeros(39), a])
    with pytest.raises(kgraph.ShapeError, match=r"the global batch has 0 rows"):
        check_batch(f, [torch.zeros(0, 3), torch.zeros(0, 3)])
    with pytest.raises(kgraph.ShapeError, match=r"input 1 of 'main': 12 rows, but "
                       r"input 0 has 13"):
        check_batch(f, [a, torch.zeros(12, 3)])
    g = _function([[4, 3], [16]], [[4, 3]])
    assert check_batch(g, [a, torch.zeros(16)], replicated=[1]) == 13
    with pytest.raises(kgraph.ShapeError, match=r"input 1 of 'main' \(replicated on "
                       r"every rank\): expected shape \[16\], got \[13, 16\]"):
        check_batch(g, [a, torch.zeros(13, 16)], replicated=[1])


# --- launching -------------------------------------------------------------------


TORCHRUN_ENV = {"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4",
                "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "29500"}


def test_launch_env():
    e = launch_env(TORCHRUN_ENV)
    assert (e.rank, e.local_rank, e.world_size, e.local_world_size) == (3, 1, 4, 2)
    # Without LOCAL_RANK: the rank on a host of LOCAL_WORLD_SIZE processes.
    env = dict(TORCHRUN_ENV)
    del env["LOCAL_RANK"]
    assert launch_env(env).local_rank == 1


@pytest.mark.parametrize("change,match", [
    ({"RANK": None, "MASTER_PORT": None}, r"not launched by torchrun \(RANK, "
     r"MASTER_PORT not set\): launch one process per GPU with `torchrun "
     r"--nproc_per_node=<GPUs> your_script.py`"),
    ({"WORLD_SIZE": "four"}, r"WORLD_SIZE='four' is not an integer"),
    ({"RANK": "4"}, r"RANK=4 does not fit WORLD_SIZE=4"),
    ({"LOCAL_RANK": "-1"}, r"LOCAL_RANK=-1 is negative"),
])
def test_launch_env_rejects(change, match):
    env = dict(TORCHRUN_ENV)
    for k, v in change.items():
        if v is None:
            del env[k]
        else:
            env[k] = v
    with pytest.raises(DistributedError, match=match):
        launch_env(env)


def test_data_parallel_outside_torchrun(monkeypatch, tmp_path):
    import torch.distributed as dist
    assert not dist.is_initialized()
    for v in TORCHRUN_ENV:
        monkeypatch.delenv(v, raising=False)
    with pytest.raises(DistributedError, match=r"not launched by torchrun .*"
                       r"torchrun --nproc_per_node=<GPUs>"):
        kgraph.distributed.DataParallel(_write_plan(tmp_path), runner=lambda a, b: b - a)


# --- end to end on gloo ------------------------------------------------------------


def _fixtures():
    """(BASE_PLAN, FAKE_PTX) of this folder's conftest.py, loaded by path:
    `import conftest` would find test/GPU's when both folders are collected
    in one pytest run."""
    import importlib.util
    name = "kgraph_python_tests_conftest"
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "conftest.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules[name] = mod
    return mod.BASE_PLAN, mod.FAKE_PTX


def _write_plan(folder, name="prog", out_shape=None):
    """The test plan: out = b - a on f32[4, 3] (the fake driver's kernels
    fake_neg_f32 and fake_add_f32 through an intermediate); ``out_shape``
    gives the output another shape of as many elements."""
    BASE_PLAN, FAKE_PTX = _fixtures()
    plan = json.loads(json.dumps(BASE_PLAN))
    n = PER_CALL * 3
    for b in plan["buffers"]:
        b["shape"], b["bytes"] = [PER_CALL, 3], 4 * n
    if out_shape:
        plan["buffers"][3]["shape"] = out_shape
    plan["kernels"][0]["args"][2]["value"] = n
    plan["kernels"][1]["args"][3]["value"] = n
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "prog.ptx"), "w") as f:
        f.write(FAKE_PTX)
    path = os.path.join(folder, f"{name}.plan.json")
    with open(path, "w") as f:
        json.dump(plan, f)
    return path


def _inputs(batch, seed):
    """A batch whose every element differs (row order shows)."""
    a = torch.arange(batch * 3, dtype=torch.float32).reshape(batch, 3) * 0.5 + seed
    b = (torch.arange(batch * 3, dtype=torch.float32).reshape(batch, 3) - seed) ** 2
    return a, b


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(plan_path, out_path):
    """One rank of the end-to-end run (started by _launch with torchrun's
    variables); records what it saw in ``out_path``."""
    import torch.distributed as dist
    from kgraph.distributed import DataParallel
    seen = {}
    calls = []

    def runner(a, b):
        assert a.shape == (PER_CALL, 3) and a.dtype == torch.float32, a.shape
        calls.append(a.shape[0])
        return b - a

    dp = DataParallel(plan_path, runner=runner, timeout=60)
    rank, root = dp.rank, dp.rank == 0
    seen["info"] = {"rank": rank, "world": dp.world_size, "per_call": dp.per_call,
                    "backend": dp.backend, "device": str(dp.device), "repr": repr(dp)}
    for batch in BATCHES:
        before = len(calls)
        y = dp(*_inputs(batch, batch)) if root else dp()
        seen[f"b{batch}"] = {"out": None if y is None else y.tolist(),
                             "calls": len(calls) - before}
    # The root rejects a batch: every rank raises (none waits), then goes on.
    try:
        dp(torch.zeros(5, 3, dtype=torch.float64), torch.zeros(5, 3)) if root else dp()
        seen["rejected"] = None
    except kgraph.KGraphError as e:
        seen["rejected"] = [type(e).__name__, str(e)]
    a, b = _inputs(5, 2)
    y = dp(a.numpy(), b.numpy()) if root else dp()
    seen["numpy"] = None if y is None else [type(y).__module__, y.tolist()]
    # Each rank's own rows, no communication.
    a, b = _inputs(5 + rank, rank)
    seen["local"] = dp.run_local(a, b).tolist()
    # A plan whose output has no batch dimension is refused at once.
    try:
        DataParallel(plan_path.replace("prog.plan", "flat.plan"), runner=runner)
        seen["no_batch"] = None
    except kgraph.PlanError as e:
        seen["no_batch"] = str(e)
    # The real Program (fake libcuda), in the group dp started.
    real = DataParallel(plan_path)
    y = real(*_inputs(7, 1)) if root else real()
    seen["program"] = None if y is None else y.tolist()
    real.close()
    # A group of the last rank alone: its root is that rank; the others are
    # not in it.
    # all_gather_into_tensor (the list form under gloo), rank order.
    from kgraph.distributed import all_gather_into_tensor
    mine = torch.full((2, 3), float(rank))
    everyone = torch.empty(2 * dp.world_size, 3)
    all_gather_into_tensor(everyone, mine)
    seen["all_gather"] = everyone[:, 0].tolist()
    seen["nbody"] = _nbody_blocks(dp.world_size)
    group = dist.new_group([dp.world_size - 1])
    try:
        sub = DataParallel(plan_path, runner=lambda a, b: b - a, group=group)
        y = sub(*_inputs(6, 3))
        seen["subgroup"] = {"root": sub.root, "rank": sub.rank, "out": y.tolist()}
        sub.close()
    except kgraph.KGraphError as e:
        seen["subgroup"] = {"error": str(e)}
    dist.barrier()
    dp.close()
    seen["closed"] = not dist.is_initialized()
    with open(out_path, "w") as f:
        json.dump(seen, f)


class _TorchBlock:
    """The N-body block plan's computation in torch (float32), standing in
    for the kgraph Program bench/bench_distributed.py loads."""

    def __init__(self, path, device=None):
        self.path = path

    def prepare(self, *args):
        pass

    def run(self, inputs, outputs):
        pt, ps, ms = inputs
        d = ps[None] - pt[:, None]
        inv = ((d * d).sum(-1, keepdim=True) + 0.01) ** -1.5
        outputs[0].copy_((d * inv * ms[None, :, None]).sum(1))


def _nbody_blocks(world):
    """The distributed N-body step of bench/bench_distributed.py (blocks of
    N/p bodies, positions all-gathered, the local block while the gather
    runs, the others' bodies rotated after it) with the kernel in torch:
    the gathered accelerations' relative error against float64 on rank 0,
    and whether a step (with and without overlap) keeps them finite."""
    import types
    sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
    import bench_distributed as bd
    real_load = kgraph.load
    kgraph.load = _TorchBlock
    try:
        import torch.distributed as dist
        rank = dist.get_rank()
        ctx = types.SimpleNamespace(torch=torch, rank=rank, world=world,
                                    local_rank=rank, device=torch.device("cpu"),
                                    groups={world: None})
        n = 24 * 7
        body = bd.NBodyRank(ctx, "-", {"local": "l", "remote": "r"}, n, world,
                            0.01, 1e-3)
        a = body.accelerations(overlap=rank % 2 == 0)
        everyone = torch.empty(n, 3)
        kgraph.distributed.all_gather_into_tensor(everyone, a)
        body.step(True)
        body.step(False)
        err = None
        if rank == 0:
            ref = bd.nbody_reference(torch, body.pos0, body.mass0, torch.arange(n), 0.01)
            err = bd.rel_l2(torch, everyone, ref)
        return {"rel_l2": err, "finite": bool(torch.isfinite(body.x).all())}
    finally:
        kgraph.load = real_load


def _launch(world, folder, libcuda):
    """Runs _worker on ``world`` ranks as torchrun would start them; returns
    what each rank saw."""
    plan = _write_plan(os.path.join(folder, "plan"))
    _write_plan(os.path.join(folder, "plan"), "flat", [PER_CALL * 3])
    port = _free_port()
    procs, outs = [], []
    for rank in range(world):
        out = os.path.join(folder, f"rank{rank}.json")
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank),
                   WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   GLOO_SOCKET_IFNAME="lo", KGRAPH_LIBCUDA=libcuda,
                   FAKE_CUDA_DEVICES=str(world), CUDA_VISIBLE_DEVICES="",
                   PYTHONPATH=os.path.join(HERE, ".."))
        procs.append(subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", plan, out],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        outs.append(out)
    logs = []
    try:
        for p in procs:
            logs.append(p.communicate(timeout=90)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for rank, (p, log) in enumerate(zip(procs, logs)):
        assert p.returncode == 0, f"rank {rank} failed:\n{log}"
    result = []
    for out in outs:
        with open(out) as f:
            result.append(json.load(f))
    return result


@pytest.fixture(scope="module", params=[1, 2, 3], ids=["world1", "world2", "world3"])
def run(request, tmp_path_factory, fake_libcuda_path):
    world = request.param
    return world, _launch(world, str(tmp_path_factory.mktemp(f"dist{world}")),
                          fake_libcuda_path)


def _ref(batch, seed):
    a, b = _inputs(batch, seed)
    return (b - a).tolist()


def test_gloo_ranks(run):
    world, seen = run
    for rank, s in enumerate(seen):
        assert s["info"]["rank"] == rank and s["info"]["world"] == world
        assert s["info"]["per_call"] == PER_CALL
        assert s["info"]["backend"] == "gloo" and s["info"]["device"] == "cpu"
        assert f"rank {rank} of {world}, gloo, 4 rows per call" in s["info"]["repr"]
        assert s["closed"]


def test_gloo_results_equal_one_process(run):
    world, seen = run
    for batch in BATCHES:
        assert seen[0][f"b{batch}"]["out"] == _ref(batch, batch), batch
        for rank in range(1, world):
            assert seen[rank][f"b{batch}"]["out"] is None
        # Each rank ran its calls with real rows, none made of pad only.
        p = plan_shards(batch, world, PER_CALL)
        assert [s[f"b{batch}"]["calls"] for s in seen] == \
            [p.real_calls(r) for r in range(world)]
    assert seen[0]["numpy"] == ["numpy", _ref(5, 2)]


def test_gloo_rejected_batch(run):
    world, seen = run
    assert seen[0]["rejected"] == [
        "DTypeError", "input 0 of 'main': expected dtype f32 (torch.float32), "
        "got torch.float64 (DataParallel converts nothing)"]
    for s in seen[1:]:
        assert s["rejected"][0] == "DistributedError"
        assert "rank 0 of the group rejected its batch" in s["rejected"][1]


def test_gloo_plan_without_batch_dimension(run):
    world, seen = run
    for s in seen:
        assert s["no_batch"] == ("output 0 of 'main' is f32[12]: it has no batch "
                                 "dimension of 4 rows (that of input 0, f32[4, 3]), "
                                 "so its rows cannot be split over GPUs")


def test_gloo_run_local(run):
    world, seen = run
    for rank, s in enumerate(seen):
        assert s["local"] == _ref(5 + rank, rank)


def test_gloo_program_with_fake_driver(run):
    # The default runner: kgraph.load on each rank, calls through numpy
    # views into the fake libcuda's host "device".
    world, seen = run
    assert seen[0]["program"] == _ref(7, 1)
    assert all(s["program"] is None for s in seen[1:])


def test_gloo_all_gather_into_tensor(run):
    world, seen = run
    for s in seen:
        assert s["all_gather"] == [float(r) for r in range(world) for _ in range(2)]


def test_gloo_nbody_blocks(run):
    # bench/bench_distributed.py's decomposition of the N-body step gives
    # the one-process accelerations (float32 against float64).
    world, seen = run
    assert seen[0]["nbody"]["rel_l2"] < 1e-4
    assert all(s["nbody"]["finite"] for s in seen)


def test_gloo_subgroup(run):
    world, seen = run
    last = seen[-1]["subgroup"]
    assert last == {"root": world - 1, "rank": 0, "out": _ref(6, 3)}
    for rank, s in enumerate(seen[:-1]):
        assert s["subgroup"] == {"error": f"this process (global rank {rank}) is "
                                          f"not in the process group it was given"}


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    _worker(sys.argv[2], sys.argv[3])
