"""GPU checks of the runtime's model features on the manifest's "runtime"
cases (test/GPU/cases/runtime_cases.py): parameters uploaded from the
weights file, several functions of one plan, CUDA graph capture and replay,
and the per-kernel profile.

Each function's result is compared with torch on the weights read back from
the file (float32 reference of the f16 layer; relative L2 error within the
case's tolerance). A replayed CUDA graph runs the same kernels on the same
data, so it must match a plain call bit for bit.
"""

import os

import gpu_harness as H


def _weights(torch, path):
    import numpy as np
    import kgraph
    w = kgraph.WeightsFile(path)
    out = {}
    for name, t in w.tensors.items():
        arr = np.frombuffer(w.read(name), dtype=kgraph.numpy_dtype(t.dtype))
        out[name] = torch.from_numpy(arr.reshape(t.shape).copy())
    return out


def _reference(torch, x, w):
    h = x.double() @ w["fc1.weight"].double() + w["fc1.bias"].double()
    h = torch.relu(h.half().double())  # the hidden layer is stored in f16
    return (h @ w["fc2.weight"].double() + w["fc2.bias"].double()).float()


def _rel_l2(torch, out, ref):
    return (torch.linalg.norm((out.double() - ref.double()).flatten()) /
            torch.linalg.norm(ref.double().flatten())).item()


def _setup(case, cases_dir, request):
    H.skip_or_fail_uncompiled(case)
    gpu = request.getfixturevalue("gpu")
    import torch
    import kgraph
    prog = kgraph.load(os.path.join(cases_dir, case["plan"]))
    w = _weights(torch, os.path.join(cases_dir, case["weights"]))
    return gpu, torch, kgraph, prog, w


def _input(torch, batch, d_in, gpu, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, d_in, generator=g).half().to(gpu)


def test_functions_with_parameters(runtime_case, seed, cases_dir, request):
    case = runtime_case
    gpu, torch, kgraph, prog, w = _setup(case, cases_dir, request)
    names = [f["name"] for f in case["functions"]]
    assert list(prog.function_names) == names
    d_in = case["sizes"][0]
    for i, f in enumerate(case["functions"]):
        fn = prog.function(f["name"])
        assert [p.name for p in fn.parameters] == [
            "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
        x = _input(torch, f["batch"], d_in, gpu, seed + i)
        y = fn(x)
        torch.cuda.synchronize(gpu)
        err = _rel_l2(torch, y.cpu(), _reference(torch, x.cpu(), w))
        assert err <= case["tol"], f"{f['name']}: relative L2 error {err:.3g}"
    # numpy inputs run too (the parameters are already on the device).
    x = _input(torch, case["functions"][0]["batch"], d_in, gpu, seed)
    y = prog(x.cpu().numpy())
    assert _rel_l2(torch, torch.from_numpy(y), _reference(torch, x.cpu(), w)) \
        <= case["tol"]


def test_cuda_graph_replay(runtime_case, seed, cases_dir, request):
    case = runtime_case
    gpu, torch, kgraph, prog, w = _setup(case, cases_dir, request)
    d_in = case["sizes"][0]
    for i, f in enumerate(case["functions"]):
        fn = prog.function(f["name"])
        x0 = _input(torch, f["batch"], d_in, gpu, seed + 100 + i)
        with fn.capture(x0) as graph:
            assert graph.num_kernels == len(fn.spec.kernels)
            for r in range(3):
                x = _input(torch, f["batch"], d_in, gpu, seed + 200 + 10 * i + r)
                want = fn(x)
                got = graph(x)
                torch.cuda.synchronize(gpu)
                assert torch.equal(got, want), (
                    f"{f['name']}: replay {r} differs from a plain call")
            # replay() on data written into the graph's own input buffer.
            graph.inputs[0].copy_(x0)
            graph.replay()
            torch.cuda.synchronize(gpu)
            assert _rel_l2(torch, graph.outputs[0].cpu(),
                           _reference(torch, x0.cpu(), w)) <= case["tol"]
        # static inputs: the caller's tensor is the graph's input buffer.
        x = _input(torch, f["batch"], d_in, gpu, seed + 300 + i)
        out = torch.empty_like(fn(x))
        with fn.capture(x, outputs=[out], static_inputs=True) as graph:
            x.copy_(_input(torch, f["batch"], d_in, gpu, seed + 400 + i))
            graph.replay()
            want = fn(x)
            torch.cuda.synchronize(gpu)
            assert torch.equal(out, want)
    # numpy graphs copy in and out.
    x = _input(torch, case["functions"][0]["batch"], d_in, gpu, seed).cpu().numpy()
    with prog.capture(x) as graph:
        assert (graph(x) == prog(x)).all()


def test_profile(runtime_case, seed, cases_dir, request):
    case = runtime_case
    gpu, torch, kgraph, prog, w = _setup(case, cases_dir, request)
    f = case["functions"][-1]
    fn = prog.function(f["name"])
    x = _input(torch, f["batch"], case["sizes"][0], gpu, seed)
    prof = fn.profile(x, repeat=10)
    assert [k.name for k in prof.kernels] == [k.name for k in fn.spec.kernels]
    assert prof.total_us > 0
    assert abs(sum(k.share for k in prof.kernels) - 1) < 1e-9
    for k in prof.kernels:
        assert k.time_us > 0 and k.flops > 0 and k.bytes > 0
        assert k.tflops > 0 and k.gbps > 0
        assert all(loc.startswith("mlp.py:") for _, loc in k.ops), k.ops
        # Data small enough to stay in L2 between runs can beat the DRAM
        # roofline: only the sign is certain.
        if prof.peaks is not None:
            assert k.roofline > 0, (k.name, k.roofline)
    ops = [op for k in prof.kernels for op, _ in k.ops]
    assert ops.count("kgraph.matmul") == 2 and "kgraph.relu" in ops
    assert fn.name in prof.table() and "roofline" in prof.table()
