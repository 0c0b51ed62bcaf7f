"""GPU tests of imported models against torch eager (issue 10).

The cases are built where kgraph-opt exists by scripts/build-model-cases.py
(``<cases>/models/models.json``: small modules of python/tests/model_cases.py,
torchvision ResNet-50 f32 NCHW and f16 NHWC, its ONNX export, the
transformer encoder layer). Each compiled plan is loaded with its weights
(kgraph.compiler.bind_parameters: only the real inputs are passed), run on
the GPU, and compared with the same model (the state dict saved at build
time) run by torch eager in float32 on the GPU: relative L2 error at most
the case's tolerance (f32 1e-4, f16 1e-2), and for classifiers top-1
agreement on random inputs. Cases the build marked "unsupported" (their
compile needs data-movement code generation) are skipped with the
compiler's message; without a manifest or a GPU every test is skipped with
the reason.
"""

import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "python", "tests"))


def _manifest(config):
    """(path, manifest or None) of ``<cases>/models/models.json``, the cases
    folder from --kgraph-cases (as the other GPU tests), else
    $KGRAPH_GPU_CASES, else .gpu."""
    root = (config.getoption("--kgraph-cases") or os.environ.get("KGRAPH_GPU_CASES")
            or os.path.join(REPO, ".gpu"))
    if os.path.isfile(root):
        root = os.path.dirname(root)
    path = os.path.join(root, "models", "models.json")
    if not os.path.isfile(path):
        return path, None
    with open(path) as f:
        return path, json.load(f)


def pytest_generate_tests(metafunc):
    if "model_case" not in metafunc.fixturenames:
        return
    path, manifest = _manifest(metafunc.config)
    if not manifest:
        metafunc.parametrize("model_case", [pytest.param(None, marks=pytest.mark.skip(
            reason=f"no model manifest at {path}: build it with "
                   f"scripts/build-model-cases.py <kgraph-opt> .gpu"), id="no-manifest")])
        return
    out = []
    for c in manifest["cases"]:
        c = dict(c, folder=os.path.dirname(path))
        marks = []
        if c["status"] == "unsupported":
            marks.append(pytest.mark.skip(reason=f"not compiled: {c['reason']}"))
        out.append(pytest.param(c, marks=marks, id=c["name"]))
    metafunc.parametrize("model_case", out)


def _model(c):
    import torch
    if c["kind"] == "small":
        import model_cases
        model, _ = model_cases.make(c["case"])
    elif c["kind"] in ("resnet50", "resnet50_onnx"):
        import torchvision
        model = torchvision.models.resnet50()
    else:
        model = torch.nn.TransformerEncoderLayer(768, 12, batch_first=True)
    folder = c["folder"]
    model.load_state_dict(torch.load(os.path.join(folder, c["state"]), map_location="cpu"))
    return model.eval()


def test_model(model_case, gpu, seed):
    import torch
    import kgraph
    from kgraph.compiler import bind_parameters
    c = model_case
    assert c["status"] == "ok", c.get("reason")
    folder = c["folder"]
    prog = kgraph.load(os.path.join(folder, c["plan"]))
    prog = bind_parameters(prog, os.path.join(folder, c["mlir"]),
                           os.path.join(folder, c["weights"]) if c["weights"] else None)
    model = _model(c).to(gpu)
    g = torch.Generator(device="cpu").manual_seed(seed)
    xs = [torch.randn(*s, generator=g).to(gpu) for s in c["inputs"]]
    with torch.no_grad():
        ref = model(*xs).float()
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[c["dtype"]]
    ins = [(x.permute(0, 2, 3, 1) if c["layout"] == "nhwc" and x.dim() == 4 else x)
           .contiguous().to(dt) for x in xs]
    out = prog(*ins)
    out = out[0] if isinstance(out, (tuple, list)) else out
    torch.cuda.synchronize()
    out = out.float()
    if c["layout"] == "nhwc" and out.dim() == 4:
        out = out.permute(0, 3, 1, 2)
    assert out.shape == ref.shape
    assert torch.isfinite(out).all()
    rel = (torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref)).item()
    print(f"\n{c['name']}: relative L2 error {rel:.3e} (tolerance {c['tol']})")
    assert rel <= c["tol"]
    if c["kind"].startswith("resnet50"):
        agree = (out.argmax(1) == ref.argmax(1)).float().mean().item()
        print(f"{c['name']}: top-1 agreement {agree:.3f}")
        assert agree >= 7 / 8 if out.shape[0] >= 8 else agree == 1.0


def _need_kgraph_opt():
    import kgraph
    try:
        return kgraph.find_tool("kgraph-opt")
    except kgraph.CompileError as e:
        pytest.skip(f"kgraph.compile needs kgraph-opt on this machine: {e}")


def test_kgraph_compile_runs(gpu, tmp_path, monkeypatch):
    """kgraph.compile end to end (import, kgraph-opt for this GPU, load) on a
    small CNN head in NHWC, against torch eager."""
    import torch
    import kgraph
    import model_cases
    _need_kgraph_opt()
    monkeypatch.setenv("KGRAPH_CACHE_DIR", str(tmp_path))
    model, inputs = model_cases.make("head")
    prog = kgraph.compile(model, inputs, layout="nhwc")
    model = model.to(gpu)
    x = inputs[0].to(gpu)
    with torch.no_grad():
        ref = model(x)
    out = prog(x.permute(0, 2, 3, 1).contiguous())
    rel = (torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref)).item()
    assert rel <= 1e-4


def test_torch_compile_backend(gpu, tmp_path, monkeypatch):
    """torch.compile(model, backend="kgraph") on a graph without breaks."""
    import torch
    import kgraph
    import model_cases
    if not hasattr(torch, "compile"):
        pytest.skip(f"torch {torch.__version__} has no torch.compile")
    _need_kgraph_opt()
    monkeypatch.setenv("KGRAPH_CACHE_DIR", str(tmp_path))
    assert kgraph.register_torch_backend()
    model, inputs = model_cases.make("mlp_gelu")
    model = model.to(gpu)
    x = inputs[0].to(gpu)
    with torch.no_grad():
        ref = model(x)
        out = torch.compile(model, backend="kgraph")(x)
    rel = (torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref)).item()
    assert rel <= 1e-4
