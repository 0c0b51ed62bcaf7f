"""CPU tests of the importers (python/kgraph/importers, python3 -m kgraph.import)
and of kgraph.compile up to the loaded plan.

Each op mapping is checked three ways on small modules (model_cases.py): the
imported kgraph ops, evaluated by the numpy reference
(kgraph/importers/reference.py), match torch eager; kgraph-opt parses and
verifies the IR; and kgraph-opt --fuse --tile=sm_80 compiles it. Cases in
model_cases.DATA_MOVEMENT need code generation for reshape / transpose /
slice / concat / broadcast_to, which lands separately: until
DATA_MOVEMENT_CODEGEN is flipped to True their compile test asserts that the
compile fails *only* for that reason (and fails loudly once they compile, so
the flag cannot go stale). Then the whole models: torchvision ResNet-50
(nchw f32, nhwc f16; 56 and 81 kernels at batch 8 on sm_80, 13 of them once), its ONNX export, the transformer encoder
layer; then the error paths of ``python3 -m kgraph.import``.

kgraph-opt comes from $KGRAPH_OPT or <repo>/build/bin (kgraph.tools.find_tool).
"""

import json
import os
import re
import struct
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
PYTHON_DIR = os.path.join(REPO, "python")
sys.path.insert(0, PYTHON_DIR)
sys.path.insert(0, HERE)

import kgraph  # noqa: E402
import model_cases  # noqa: E402
from kgraph.errors import ModelSourceError, UnsupportedModelError  # noqa: E402
from kgraph.importers import import_model, parse_input_spec  # noqa: E402
from kgraph.importers.reference import evaluate  # noqa: E402
from kgraph.importers.safetensors import read_safetensors, write_safetensors  # noqa: E402

#: Flip to True once kgraph-opt generates code for the data-movement ops
#: (issue 10 item 7): every case in model_cases.DATA_MOVEMENT and the
#: encoder layer must then compile.
DATA_MOVEMENT_CODEGEN = True


def _kernels(plan):
    """The kernels of a plan's (first) function: version 2 lists functions,
    version 1 is one."""
    return plan["functions"][0]["kernels"] if "functions" in plan else plan["kernels"]
_DATA_MOVEMENT_ERROR = re.compile(
    r"'kgraph\.(reshape|transpose|slice|concat|broadcast_to)' op has no code generation")


def _opt():
    try:
        return kgraph.find_tool("kgraph-opt")
    except kgraph.CompileError as e:
        pytest.fail(f"these tests need kgraph-opt: {e}")


def _compile(mlir, out_dir, target="sm_80"):
    ptx = os.path.join(out_dir, os.path.splitext(os.path.basename(mlir))[0] + ".ptx")
    p = subprocess.run([_opt(), "--fuse", f"--tile={target}", mlir, "-o", ptx],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, os.path.splitext(ptx)[0] + ".plan.json"


def _verify(mlir):
    p = subprocess.run([_opt(), mlir, "-o", os.devnull], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    assert p.returncode == 0, p.stderr


def _check_compile(name, mlir, tmp_path, needs_data_movement):
    p, plan = _compile(mlir, str(tmp_path))
    if needs_data_movement and not DATA_MOVEMENT_CODEGEN:
        assert p.returncode != 0, (
            f"{name} compiles now: set DATA_MOVEMENT_CODEGEN = True in {__file__} "
            f"(or drop it from model_cases.DATA_MOVEMENT)")
        assert _DATA_MOVEMENT_ERROR.search(p.stderr), p.stderr
        return None
    assert p.returncode == 0, p.stderr
    with open(plan) as f:
        return json.load(f)


def _to_layout(x, layout):
    x = x.detach()
    return (x.permute(0, 2, 3, 1) if layout == "nhwc" and x.dim() == 4 else x).numpy()


def _from_layout(y, layout):
    return y.transpose(0, 3, 1, 2) if layout == "nhwc" and y.ndim == 4 else y


def _rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)


# --- small pieces ---------------------------------------------------------------

def test_parse_input_spec():
    assert parse_input_spec("8x3x224x224:f32") == ([8, 3, 224, 224], "f32")
    assert parse_input_spec("4x16") == ([4, 16], "f32")
    assert parse_input_spec("2x8:f16") == ([2, 8], "f16")
    for bad in ("8x3xf32", "8,3:f32", "8x3:f64", "0x3:f32", "", "x3:f32"):
        with pytest.raises(ModelSourceError, match="bad input shape"):
            parse_input_spec(bad)


def test_safetensors_round_trip(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    h = np.array([1.5, -2.0, 3.25], dtype=np.float16)
    bf_src = np.array([1.0, -3.5, 1e-3], dtype=np.float32)
    from kgraph.importers.safetensors import f32_to_bf16_bits
    path = str(tmp_path / "w.safetensors")
    write_safetensors(path, {"a": a, "h": h, "b": (f32_to_bf16_bits(bf_src), "BF16")})
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    assert header["__metadata__"] == {"format": "kgraph"}
    assert header["a"] == {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}
    assert header["h"]["dtype"] == "F16" and header["h"]["data_offsets"][0] % 16 == 0
    assert header["b"]["dtype"] == "BF16"
    back = read_safetensors(path)
    np.testing.assert_array_equal(back["a"], a)
    np.testing.assert_array_equal(back["h"], h)
    np.testing.assert_allclose(back["b"], bf_src, rtol=2 ** -8)


# --- op mappings -------------------------------------------------------------------

_CASE_IDS = [(n, lay) for n, (_, _, lays) in model_cases.CASES.items() for lay in lays]


@pytest.mark.parametrize("name,layout", _CASE_IDS, ids=[f"{n}-{lay}" for n, lay in _CASE_IDS])
def test_op_mapping(name, layout, tmp_path):
    model, inputs = model_cases.make(name)
    with torch.no_grad():
        ref = model(*inputs).numpy()
    r = import_model(model, inputs=[(list(x.shape), "f32") for x in inputs], layout=layout,
                     output=str(tmp_path / f"{name}.mlir"))
    out = evaluate(r.builder, [_to_layout(x, layout) for x in inputs])[0]
    assert _rel(_from_layout(out, layout), ref) < 1e-5
    _verify(r.mlir)
    _check_compile(name, r.mlir, tmp_path, name in model_cases.DATA_MOVEMENT)


def test_safe_softmax_rows_of_minus_inf(tmp_path):
    """torch 2.x's softmax inside attention: a row that is all -inf gives 0,
    not NaN. The "all -inf" test is folded into the softmax's row maximum
    (one reduce max), and rows with -inf, NaN or finite values match torch."""
    model, (x,) = model_cases.make("safe_softmax")
    x[0, 1, :] = float("-inf")
    x[1, 2, :3] = float("-inf")
    x[2, 0, 4] = float("nan")
    with torch.no_grad():
        ref = model(x).numpy()
    r = import_model(model, inputs=["3x4x8:f32"], output=str(tmp_path / "ss.mlir"))
    assert r.ops.get("reduce") == 2 and r.ops.get("select") == 1, r.ops
    out = evaluate(r.builder, [x.numpy()])[0]
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_allclose(np.nan_to_num(out), np.nan_to_num(ref), atol=1e-6)
    assert not out[0, 1].any()


def test_booleans_without_a_kgraph_op(tmp_path):
    """not/and/or/xor, any/all and bool casts become selects and compares on
    0/1 integers; a logical_not of eq/ne flips the comparison."""
    model, inputs = model_cases.make("compare_where")
    r = import_model(model, inputs=["4x8:f32", "4x8:f32"], output=str(tmp_path / "b.mlir"))
    assert "i1" in r.text and "kgraph.cast" not in r.text.replace("xi1", "")
    m = model_cases.Lambda(lambda x: torch.logical_not(x == 0.5).float()
                           + (~(x != 1.0)).float())
    r = import_model(m, inputs=["4x8:f32"], output=str(tmp_path / "n.mlir"))
    assert r.ops.get("compare") == 2 and r.ops.get("select") == 2, r.ops


def test_tracing_assertions_compute_nothing(tmp_path):
    """Runtime checks torch inserts while tracing (aten._assert_async here;
    torch 2.6+ export also adds aten._assert_tensor_metadata after dtype
    conversions) import as nothing: the graph's shapes are already known."""
    def fn(x):
        torch._assert_async((x == x).all())
        return torch.relu(x) * 2.0
    r = import_model(model_cases.Lambda(fn), inputs=["4x8:f32"],
                     output=str(tmp_path / "a.mlir"))
    assert "assert" not in r.text and r.ops.get("relu") == 1, (r.ops, r.text)
    x = torch.randn(4, 8)
    np.testing.assert_allclose(evaluate(r.builder, [x.numpy()])[0],
                               (torch.relu(x) * 2.0).numpy())


def test_expanded_weight_is_one_gemm(tmp_path):
    """bmm(x, W.expand(B, K, N)) is one [B*M, K] x [K, N] GEMM on the
    weight itself (transpose flag kept), not a batch of B copies."""
    model, inputs = model_cases.make("bmm_shared_weight")
    r = import_model(model, inputs=["3x5x16:f32"], output=str(tmp_path / "m.mlir"))
    mm = [ln for ln in r.text.splitlines() if "kgraph.matmul" in ln]
    assert len(mm) == 1 and "tensor<15x16xf32>, tensor<8x16xf32>" in mm[0] \
        and "transpose_b" in mm[0], mm
    assert "broadcast_to" not in r.text
    assert read_safetensors(r.weights)["ps.0"].shape == (8, 16)


def test_elementwise_ops_move_above_a_reshape(tmp_path):
    """relu(view(addmm(...))) + x: the relu and the residual add are built on
    the GEMM's [M, N] result (the residual reshaped alike, a view) so both
    fuse into the GEMM's epilogue: one kernel."""
    model, inputs = model_cases.make("linear_3d_relu_residual")
    r = import_model(model, inputs=["2x5x16:f32"], output=str(tmp_path / "m.mlir"))
    for op in ("relu", "add"):
        line = next(ln for ln in r.text.splitlines() if f"kgraph.{op} " in ln and "10x16" in ln)
        assert "tensor<10x16xf32>" in line, line
    plan = _check_compile("linear_3d_relu_residual", r.mlir, tmp_path, False)
    assert len(plan["functions"][0]["kernels"]) == 1, plan["functions"][0]["kernels"]


def test_batch_norm_folds_into_conv(tmp_path):
    model, inputs = model_cases.make("conv_bn_relu")
    r = import_model(model, inputs=["2x3x8x8:f32"], output=str(tmp_path / "m.mlir"))
    assert r.ops == {"conv2d": 1, "add": 1, "relu": 1}
    w = read_safetensors(r.weights)
    assert sorted(w) == ["0.weight", "1.bias"]
    assert w["1.bias"].shape == (8, 1, 1)          # nchw bias broadcasts over [C,1,1]


def test_nhwc_weights_permuted(tmp_path):
    model, _ = model_cases.make("conv2d")
    r = import_model(model, inputs=["2x3x8x8:f32"], layout="nhwc",
                     output=str(tmp_path / "m.mlir"))
    w = read_safetensors(r.weights)
    np.testing.assert_array_equal(w["0.weight"],
                                  model[0].weight.detach().numpy().transpose(0, 2, 3, 1))
    assert w["0.bias"].shape == (8,)
    assert r.inputs == [([2, 8, 8, 3], "f32")] and r.outputs == [([2, 8, 8, 8], "f32")]
    assert "layout = nhwc" in r.text


def test_f16_and_bf16(tmp_path):
    model, inputs = model_cases.make("mlp_gelu")
    with torch.no_grad():
        ref = model(*inputs).numpy()
    for dt in ("f16", "bf16"):
        r = import_model(model, inputs=["4x16:f32"], dtype=dt, output=str(tmp_path / f"{dt}.mlir"))
        assert r.inputs == [([4, 16], dt)] and r.outputs == [([4, 8], dt)]
        assert f"x{dt}>" in r.text and "xf32>" not in r.text
        out = evaluate(r.builder, [inputs[0].numpy()])[0]
        assert _rel(out, ref) < (5e-3 if dt == "f16" else 3e-2)
        _verify(r.mlir)
        assert _compile(r.mlir, str(tmp_path))[0].returncode == 0
    with open(tmp_path / "bf16.safetensors", "rb") as f:
        assert b'"BF16"' in f.read(4096)


def test_ir_names_parameters_and_locations(tmp_path):
    model, _ = model_cases.make("linear")
    r = import_model(model, inputs=["4x16:f32"], output=str(tmp_path / "lin.mlir"))
    assert 'module attributes {kgraph.weights = "lin.safetensors"}' in r.text
    assert '{kgraph.param = "0.weight"}' in r.text and '{kgraph.param = "0.bias"}' in r.text
    assert "{transpose_b}" in r.text          # nn.Linear's weight stays [out, in]
    assert re.search(r'loc\("\w+"', r.text)
    assert r.params == 2 and r.values == 16 * 8 + 8 and r.param_bytes == 4 * (16 * 8 + 8)


# --- whole models ------------------------------------------------------------------

def _resnet50():
    try:
        import torchvision
    except ImportError:
        pytest.fail("these tests need torchvision (Debian: python3-torchvision; "
                    "scripts/install-deps.sh installs it)")
    return torchvision.models.resnet50().eval()


@pytest.mark.parametrize("layout,dtype", [("nchw", "f32"), ("nhwc", "f16")])
def test_resnet50_import_and_compile(layout, dtype, tmp_path):
    import resource
    model = _resnet50()
    t0, c0 = time.time(), time.process_time()
    r = import_model(model, inputs=["8x3x224x224:f32"], layout=layout, dtype=dtype,
                     output=str(tmp_path / "resnet50.mlir"))
    t1, c1 = time.time(), time.process_time()
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p, plan_path = _compile(r.mlir, str(tmp_path))
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t2 = time.time()
    assert p.returncode == 0, p.stderr
    kc = (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
    print(f"\nResNet-50 {layout} {dtype}: import {t1 - t0:.1f} s wall ({c1 - c0:.1f} s CPU) "
          f"+ kgraph-opt {t2 - t1:.1f} s wall ({kc:.1f} s CPU) = {t2 - t0:.1f} s wall, "
          f"{c1 - c0 + kc:.1f} s CPU ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})")
    assert r.ops == {"conv2d": 53, "add": 70, "relu": 49, "pool2d": 1, "reduce": 1,
                     "matmul": 1}
    assert r.params == 108          # 53 filters, 53 folded biases, fc weight and bias
    assert r.values == 25_530_472   # torchvision's 25,557,032 less the BN statistics
    n, c, h, w = 8, 3, 224, 224
    assert r.inputs == [([n, c, h, w] if layout == "nchw" else [n, h, w, c], dtype)]
    assert r.outputs == [([8, 1000], dtype)]
    with open(plan_path) as f:
        plan = json.load(f)
    # nhwc: the stem as a stride-1 conv over 2x2 pixel blocks
    # (kgraph-space-to-depth-convs) adds the input's channel pad and
    # transpose (one kernel) and the filter's two kernels; on sm_80 at batch
    # 8, kgraph-split-k-convs splits the nine 3x3 convs of the last two
    # stages and the last stage's two 2048->512 1x1 convs over channel
    # slices (the filter's copy and the partials' sum each: 59 -> 81). The
    # 13 filter kernels read only parameters: once kernels, run at load
    # (68 per call). nchw f32: the 13 stride-1 3x3 convs (925M multiply-adds
    # each at batch 8) are Winograd F(4x4, 3x3) (kgraph-winograd-convs):
    # the filter's transform a once kernel, the input transform, the GEMMs,
    # the output transform with the epilogue (56 -> 95, 82 per call).
    kernels = _kernels(plan)
    once = sum(1 for k in kernels if k.get("once"))
    assert (len(kernels), once) == ((81, 13) if layout == "nhwc" else (95, 13))


def test_resnet18_matches_torch_nhwc_f16(tmp_path):
    """The whole-CNN mapping (folded batch norm, NHWC, f16 weights) evaluated
    with the numpy reference against torch eager."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
        x = torch.randn(2, 3, 64, 64)
        ref = model(x).numpy()
    for layout, dtype, tol in (("nchw", None, 1e-5), ("nhwc", "f16", 1e-2)):
        r = import_model(model, inputs=["2x3x64x64:f32"], layout=layout, dtype=dtype,
                         output=str(tmp_path / "r18.mlir"))
        out = evaluate(r.builder, [_to_layout(x, layout)])[0]
        assert _rel(out, ref) < tol
        assert (out.argmax(1) == ref.argmax(1)).all()


@pytest.mark.parametrize("name,size", [("squeezenet1_0", 96), ("googlenet", 96),
                                       ("convnext_tiny", 64), ("swin_t", 112)])
def test_torchvision_models_match_torch(name, size, tmp_path):
    """Models a new user tries: SqueezeNet's and GoogLeNet's ceil_mode max
    pools (and GoogLeNet's count_include_pad average pool), ConvNeXt's
    layer norms over channels-last and its re-strided pooled mean
    (aten.as_strided_ on torch 1.13); Swin-T's shifted windows (torch.roll,
    F.pad) and its attention mask written in place into slices of
    new_zeros. The numpy reference against torch eager, and kgraph-opt
    compiles each."""
    import torchvision
    torch.manual_seed(0)
    kw = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
    model = getattr(torchvision.models, name)(**kw).eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2.0)
        x = torch.randn(1, 3, size, size)
        ref = model(x).numpy()
    r = import_model(model, inputs=[f"1x3x{size}x{size}:f32"], layout="nhwc",
                     output=str(tmp_path / f"{name}.mlir"))
    out = evaluate(r.builder, [_to_layout(x, "nhwc")])[0]
    assert np.abs(ref).max() > 0
    assert _rel(out, ref) < 1e-5
    p, _ = _compile(r.mlir, str(tmp_path))
    assert p.returncode == 0, p.stderr


def _inplace_on_view(x):
    y = x * 2
    y[:, :2].relu_()
    return y + 0


def _inplace_then_view_of_old(x):
    y = x * 2
    z = y.view(-1)
    y.relu_()
    return z + 0


def _inplace_on_transposed_view(x):
    y = x * 2
    y.t().add_(1)
    return y + 0


def _constant_mask_written_in_place(x):
    m = torch.ones(3, 4)
    m[:, 1].mul_(3)
    return x * m


def _inplace_on_constant(x):
    m = torch.zeros(3, 4)
    m.add_(2)
    return x + m


def _mask_filled_in_slices(x):
    m = torch.zeros(3, 4)
    m[:2] = 1.5
    m[:, 1].mul_(3)
    return x + m


def _constant_clone_written(x):
    m = torch.zeros(3, 4)
    c = m.clone()
    c[:2] = 1
    e = m[0].expand(3, 4)
    m[0, 1:3] = 5
    return x + m + 2 * c + e


def _inplace_on_view_used_alone(x):
    z = (x * 2).view(-1)
    z.relu_()
    return z + 1


def _inplace_chain_then_view(x):
    y = x * 2
    y.relu_()
    y.add_(1)
    return y.view(-1) * 2


@pytest.mark.parametrize("fn,refused", [
    (_inplace_on_view, True), (_inplace_then_view_of_old, True),
    (_inplace_on_transposed_view, True), (_constant_mask_written_in_place, False),
    (_mask_filled_in_slices, False), (_constant_clone_written, False),
    (_inplace_on_view_used_alone, False), (_inplace_chain_then_view, False),
    (_inplace_on_constant, False)], ids=lambda v: getattr(v, "__name__", str(v)))
def test_inplace_ops_and_views(fn, refused, tmp_path):
    """make_fx (torch 1.13) keeps in-place ops: one on a tensor that shares
    memory with another tensor used later (a view or its base) would change
    that one too, which the value graph cannot say, so it is refused by
    name; in-place ops whose aliases are dead import as values; on
    constants the write is done in the constant's memory, which its numpy
    views share (a clone gets its own)."""
    class M(torch.nn.Module):
        def forward(self, x):
            return fn(x)
    x = torch.randn(3, 4)
    with torch.no_grad():
        ref = M()(x.clone()).numpy()
    if refused:
        with pytest.raises(UnsupportedModelError, match="shares memory with"):
            import_model(M(), inputs=["3x4:f32"], output=str(tmp_path / "m.mlir"))
        return
    r = import_model(M(), inputs=["3x4:f32"], output=str(tmp_path / "m.mlir"))
    np.testing.assert_allclose(evaluate(r.builder, [x.numpy()])[0], ref, rtol=1e-6)


@pytest.mark.parametrize("fn,message", [
    # torch 2.x traces aten.pad (named by kgraph), torch 1.13 its own op
    (lambda x: torch.nn.functional.pad(x, (1, 1), mode="reflect"),
     r"reflect padding \(only constant\)|reflection_pad1d.*\(no kgraph mapping\)"),
    (lambda x: torch.nn.functional.pad(x > 0, (1, 1)).float(), "padding of a boolean tensor"),
    (lambda x: torch.as_strided(x * 2, [2, 2], [1, 1], 3), "as_strided with a storage offset"),
], ids=["reflect_pad", "bool_pad", "as_strided_offset"])
def test_new_mappings_name_what_they_refuse(fn, message, tmp_path):
    class M(torch.nn.Module):
        def forward(self, x):
            return fn(x)
    with pytest.raises(UnsupportedModelError, match=message):
        import_model(M(), inputs=["3x4x5:f32"], output=str(tmp_path / "m.mlir"))


def test_onnx_resize_names_unsupported_modes(tmp_path):
    onnx = _need_onnx()
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize0", mode="cubic")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 2])])
    path = str(tmp_path / "resize.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    with pytest.raises(UnsupportedModelError,
                       match="Resize mode cubic with coordinate_transformation_mode half_pixel"):
        import_model(path, output=str(tmp_path / "resize.mlir"))


def test_as_strided(tmp_path):
    """aten.as_strided that reads elements in reshape order is a reshape;
    one that repeats elements is refused by name."""
    class Ok(torch.nn.Module):
        def forward(self, x):
            return torch.as_strided(x * 2, [4, 6], [6, 1]) + 1

    class Repeat(torch.nn.Module):
        def forward(self, x):
            return torch.as_strided(x * 2, [4, 6], [1, 1]) + 1

    x = torch.randn(2, 3, 4)
    r = import_model(Ok(), inputs=["2x3x4:f32"], output=str(tmp_path / "ok.mlir"))
    np.testing.assert_allclose(evaluate(r.builder, [x.numpy()])[0], Ok()(x).numpy(),
                               rtol=1e-6)
    with pytest.raises(UnsupportedModelError, match="reorders, skips or repeats"):
        import_model(Repeat(), inputs=["2x3x4:f32"], output=str(tmp_path / "r.mlir"))


def test_resnet50_onnx(tmp_path):
    onnx = _need_onnx()
    model = _resnet50()
    path = str(tmp_path / "resnet50.onnx")
    with torch.no_grad():
        torch.onnx.export(model, torch.randn(1, 3, 224, 224), path, opset_version=13)
    assert onnx.load(path).opset_import[0].version == 13
    t0 = time.time()
    r = import_model(path, output=str(tmp_path / "resnet50_onnx.mlir"))
    t1 = time.time()
    p, plan_path = _compile(r.mlir, str(tmp_path))
    assert p.returncode == 0, p.stderr
    print(f"\nResNet-50 ONNX: import {t1 - t0:.1f} s + kgraph-opt {time.time() - t1:.1f} s")
    assert r.ops == {"conv2d": 53, "add": 70, "relu": 49, "pool2d": 1, "reduce": 1,
                     "matmul": 1}
    assert r.inputs == [([1, 3, 224, 224], "f32")] and r.outputs == [([1, 1000], "f32")]
    with open(plan_path) as f:
        kernels = _kernels(json.load(f))
    # Batch 1 on sm_80: kgraph-split-k-convs splits 13 deep-K convs over
    # few pixels of the last two stages over channel slices: each adds its
    # filter's copy (a once kernel, run at load: the filters are
    # parameters) and the partials' sum: 56 + 13 per call, 13 once.
    once = sum(1 for k in kernels if k.get("once"))
    assert (len(kernels), once) == (82, 13)


def _need_onnx():
    try:
        import onnx
    except ImportError:
        pytest.fail("these tests need onnx (Debian: python3-onnx; scripts/install-deps.sh "
                    "installs it)")
    return onnx


_ONNX_CASES = [("conv_bn_relu", 13), ("residual", 13), ("head", 13), ("mlp_gelu", 13),
               ("max_pool", 13), ("avg_pool", 13), ("max_pool_ceil", 13),
               ("avg_pool_pad", 13), ("avg_pool_pad_ceil", 13), ("avg_pool_ceil_exclude", 13),
               ("pad_constant", 13), ("activations_piecewise", 17), ("prelu", 13),
               ("interpolate", 13), ("softmax", 13), ("layer_norm", 17),
               ("arith_tensor", 13), ("activations", 13), ("cat", 13), ("slice_narrow", 13),
               ("permute", 13), ("flatten_view", 13), ("attention_batch_first", 13),
               ("compare_where", 13), ("mask_nhwc", 13)]


@pytest.mark.parametrize("name,opset", _ONNX_CASES, ids=[n for n, _ in _ONNX_CASES])
def test_onnx_op_mapping(name, opset, tmp_path):
    """torch.onnx.export of each small module, imported and evaluated with the
    numpy reference against torch eager."""
    _need_onnx()
    model, inputs = model_cases.make(name)
    path = str(tmp_path / f"{name}.onnx")
    with torch.no_grad():
        ref = model(*inputs).numpy()
    # Exported with grad mode on, so that attention takes its decomposed path.
    torch.onnx.export(model, tuple(inputs), path, opset_version=opset)
    r = import_model(path, output=str(tmp_path / f"{name}.mlir"))
    out = evaluate(r.builder, [x.numpy() for x in inputs])[0]
    assert _rel(out, ref) < 1e-5
    _verify(r.mlir)
    _check_compile(name, r.mlir, tmp_path, name in model_cases.DATA_MOVEMENT)


@pytest.mark.parametrize("batch_first", [True, False], ids=["batch_first", "seq_first"])
def test_transformer_encoder_layer(batch_first, tmp_path):
    """nn.TransformerEncoderLayer (d_model 768, 12 heads): the import at batch 8,
    sequence 128 (op counts, IR verifies; compiling it needs data-movement
    code generation), and its numbers at a small size against torch eager."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(768, 12, batch_first=batch_first).eval()
    shape = "8x128x768:f32" if batch_first else "128x8x768:f32"
    r = import_model(layer, inputs=[shape], output=str(tmp_path / "encoder.mlir"))
    assert r.ops["matmul"] == 6        # in_proj, q.k^T, attn.v, out_proj, 2 feed-forward
    assert r.ops["exp"] == 1 and r.ops["rsqrt"] == 2 and r.ops["relu"] == 1
    assert r.params == 12 and r.values == 5_513_984
    assert r.outputs == [(list(parse_input_spec(shape)[0]), "f32")]
    _verify(r.mlir)
    _check_compile("encoder", r.mlir, tmp_path, True)
    x = torch.randn(2, 16, 768) if batch_first else torch.randn(16, 2, 768)
    with torch.no_grad():
        ref = layer(x).numpy()
    r = import_model(layer, inputs=[(list(x.shape), "f32")], output=str(tmp_path / "small.mlir"))
    assert _rel(evaluate(r.builder, [x.numpy()])[0], ref) < 1e-5


# --- errors ---------------------------------------------------------------------------

def _cli(*args, cwd=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PYTHON_DIR, HERE] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return subprocess.run([sys.executable, "-m", "kgraph.import", *args], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_cli_writes_ir_and_weights(tmp_path):
    out = tmp_path / "lin.mlir"
    p = _cli("error_models:linear", "--input", "4x16:f32", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert f"wrote {out}: 2 ops (1 matmul, 1 add)" in p.stdout
    assert "2 parameters, 136 values, 544 bytes" in p.stdout
    assert out.is_file() and (tmp_path / "lin.safetensors").is_file()


def test_cli_unsupported_ops_named(tmp_path):
    out = tmp_path / "bad.mlir"
    p = _cli("error_models:unsupported", "--input", "2x8:f32", "-o", str(out))
    assert p.returncode == 1
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert lines[0] == ("kgraph.import: error: cannot import error_models:unsupported: "
                        "3 unsupported nodes")
    assert re.match(r"  sin: aten\.sin\.default \(no kgraph mapping\) at .*error_models\.py:\d+$",
                    lines[1]), lines[1]
    assert lines[2].startswith("  cumsum: aten.cumsum.default (no kgraph mapping) at ")
    assert lines[3].startswith("  erf: aten.erf.default (no kgraph mapping) at ")
    assert not out.exists() and not (tmp_path / "bad.safetensors").exists()


def test_cli_unsupported_onnx_op(tmp_path):
    onnx = _need_onnx()
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
         helper.make_node("Sin", ["r"], ["s"], name="sin0"),
         helper.make_node("TopK", ["s", "k"], ["v", "i"], name="topk0")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor("k", TensorProto.INT64, [1], [2])])
    path = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    p = _cli(str(path), "-o", str(tmp_path / "bad.mlir"))
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.splitlines() == [
        f"kgraph.import: error: cannot import {path}: 2 unsupported nodes",
        "  sin0: Sin (no kgraph mapping)",
        "  topk0: TopK (no kgraph mapping)"]
    assert not (tmp_path / "bad.mlir").exists()


def test_random_pools_match_torch(tmp_path):
    """Random max / avg pools (kernel, stride, padding, ceil_mode,
    count_include_pad, divisor_override, both layouts) against torch; a
    session-34 run of 300 such configurations, each tenth compiled, found
    none wrong."""
    import random
    rng = random.Random(34)
    for i in range(60):
        k = (rng.randint(1, 5), rng.randint(1, 5))
        st = (rng.randint(1, 4), rng.randint(1, 4))
        pad = (rng.randint(0, k[0] // 2), rng.randint(0, k[1] // 2))
        h, w = rng.randint(k[0], 13), rng.randint(k[1], 13)
        ceil, layout = rng.random() < 0.5, rng.choice(["nchw", "nhwc"])
        if rng.random() < 0.5:
            mod = torch.nn.MaxPool2d(k, st, pad, ceil_mode=ceil)
        else:
            mod = torch.nn.AvgPool2d(k, st, pad, ceil_mode=ceil,
                                     count_include_pad=rng.random() < 0.5,
                                     divisor_override=rng.choice([None, None, 5]))
        x = torch.randn(2, 3, h, w)
        with torch.no_grad():
            ref = mod(x).numpy()
        r = import_model(torch.nn.Sequential(mod), inputs=[f"2x3x{h}x{w}:f32"], layout=layout,
                         output=str(tmp_path / f"pool{i}.mlir"))
        out = _from_layout(evaluate(r.builder, [_to_layout(x, layout)])[0], layout)
        assert out.shape == ref.shape, (mod, h, w, layout)
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6, err_msg=f"{mod} {h}x{w}")
        if i % 20 == 0:
            _verify(r.mlir)


def test_onnx_split_into_equal_parts(tmp_path):
    """ONNX Split without sizes: one equal part per output (opset 13)."""
    onnx = _need_onnx()
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a", "b", "c"], name="split0", axis=1),
         helper.make_node("Sub", ["a", "c"], ["d"], name="sub0"),
         helper.make_node("Mul", ["d", "b"], ["y"], name="mul0")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = str(tmp_path / "split.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    x = np.random.default_rng(1).standard_normal((2, 6, 3)).astype(np.float32)
    r = import_model(path, output=str(tmp_path / "split.mlir"))
    np.testing.assert_allclose(evaluate(r.builder, [x])[0],
                               (x[:, 0:2] - x[:, 4:6]) * x[:, 2:4], rtol=1e-6)
    _verify(r.mlir)


def test_onnx_pad_value_and_crop(tmp_path):
    """ONNX Pad in constant mode: a constant_value input, a negative pad that
    crops; reflect mode is named as unsupported."""
    onnx = _need_onnx()
    from onnx import TensorProto, helper

    def model(mode):
        g = helper.make_graph(
            [helper.make_node("Pad", ["x", "pads", "v"], ["y"], name="pad0", mode=mode)],
            "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            [helper.make_tensor("pads", TensorProto.INT64, [8], [0, 1, -1, 2, 0, 0, 2, -2]),
             helper.make_tensor("v", TensorProto.FLOAT, [], [1.5])])
        path = str(tmp_path / f"pad_{mode}.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
        return path

    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    r = import_model(model("constant"), output=str(tmp_path / "pad.mlir"))
    out = evaluate(r.builder, [x])[0]
    ref = np.pad(x[:, :, 1:, :3], [(0, 0), (1, 0), (0, 2), (2, 0)], constant_values=1.5)
    np.testing.assert_array_equal(out, ref)
    _verify(r.mlir)
    _check_compile("pad", r.mlir, tmp_path, True)
    with pytest.raises(UnsupportedModelError, match="Pad mode reflect"):
        import_model(model("reflect"), output=str(tmp_path / "pad_reflect.mlir"))


@pytest.mark.parametrize("args,message", [
    (["nosuchpackage.models:resnet", "--input", "1x3:f32"],
     "bad model source 'nosuchpackage.models:resnet': no module named 'nosuchpackage'"),
    (["error_models:nothere", "--input", "1x3:f32"],
     "bad model source 'error_models:nothere': module error_models has no 'nothere'"),
    (["error_models:not_a_module", "--input", "1x3:f32"],
     "bad model source 'error_models:not_a_module': it returned an object of type int, "
     "not a torch.nn.Module"),
    (["error_models:raises", "--input", "1x3:f32"],
     "bad model source 'error_models:raises': calling raises() failed: RuntimeError: broken"),
    (["error_models", "--input", "1x3:f32"],
     "bad model source 'error_models': expected package.module:callable, a .onnx or a "
     ".json file"),
    (["error_models:linear", "--input", "8x3xf32"],
     "bad input shape '8x3xf32': expected SHAPE:DTYPE with dims joined by 'x', e.g. "
     "8x3x224x224:f32"),
    (["error_models:linear"],
     "a PyTorch model needs its input shapes: pass --input SHAPE:DTYPE (e.g. "
     "1x3x224x224:f32) per input"),
    (["missing.onnx"], "cannot read ONNX model missing.onnx: no such file"),
    (["corrupt.onnx"], "cannot read ONNX model corrupt.onnx: DecodeError: "),
])
def test_cli_bad_source(args, message, tmp_path):
    (tmp_path / "corrupt.onnx").write_bytes(b"this is not a protobuf \xff\xfe")
    if "corrupt.onnx" in args:
        _need_onnx()
    p = _cli(*args, "-o", "out.mlir", cwd=str(tmp_path))
    assert p.returncode == 1
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"kgraph.import: error: {message}"), lines[0]
    assert not (tmp_path / "out.mlir").exists()


def test_cli_json_needs_kgraph_translate(tmp_path, monkeypatch):
    g = tmp_path / "g.json"
    g.write_text('{"type": "conv2d", "input_shape": [1, 3, 8, 8], "kernel_size": [3, 3]}')
    env_missing = str(tmp_path / "no-such-kgraph-translate")
    monkeypatch.setenv("KGRAPH_TRANSLATE", env_missing)
    p = _cli(str(g), "-o", str(tmp_path / "g.mlir"))
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.strip() == (f"kgraph.import: error: $KGRAPH_TRANSLATE is "
                                f"{env_missing!r}, which is not an executable file")


def test_unsupported_model_error_lists_nodes(tmp_path):
    import error_models
    with pytest.raises(UnsupportedModelError) as e:
        import_model(error_models.unsupported(), inputs=["2x8:f32"],
                     output=str(tmp_path / "x.mlir"))
    assert [n["op"] for n in e.value.nodes] == ["aten.sin.default", "aten.cumsum.default",
                                                "aten.erf.default"]
    assert all(n["location"] and "error_models.py" in n["location"] for n in e.value.nodes)


def test_training_mode_batch_norm_rejected(tmp_path):
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4))
    model.train()
    with pytest.raises(UnsupportedModelError, match=r"batch norm in training mode"):
        import_model(model, inputs=["1x3x8x8:f32"], output=str(tmp_path / "x.mlir"))


# --- kgraph.compile (up to the loaded plan; running needs a GPU) ------------------

def test_compile_loads_plan_and_binds_parameters(tmp_path, monkeypatch):
    monkeypatch.setenv("KGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    model, inputs = model_cases.make("head")
    prog = kgraph.compile(model, inputs, target="sm_80", layout="nhwc")
    assert isinstance(prog, (kgraph.Program, kgraph.BoundProgram))
    assert prog.import_result.inputs == [([2, 8, 8, 4], "f32")]
    with open(prog.plan_path) as f:
        plan = json.load(f)
    assert len(_kernels(plan)) >= 1
    # The runtime sees the real input only (the parameters come from the file).
    with pytest.raises(TypeError):
        prog(np.zeros((2, 8, 8, 4), np.float32), np.zeros((2, 8, 8, 4), np.float32))
    # The same model again: the compiled plan is reused.
    again = kgraph.compile(model, inputs, target="sm_80", layout="nhwc")
    assert again.plan_path == prog.plan_path


def test_compile_unsupported_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("KGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    import error_models
    with pytest.raises(UnsupportedModelError, match="3 unsupported nodes"):
        kgraph.compile(error_models.unsupported(), [torch.randn(2, 8)], target="sm_80")


def test_transformer_encoder_onnx(tmp_path):
    """The encoder layer (gelu) exported to ONNX at opset 13 (layer norm and
    gelu arrive decomposed: ReduceMean/Pow/Sqrt, Erf) imports and matches."""
    _need_onnx()
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(768, 12, batch_first=True,
                                             activation="gelu").eval()
    x = torch.randn(2, 16, 768)
    path = str(tmp_path / "encoder.onnx")
    torch.onnx.export(layer, (x,), path, opset_version=13)   # grad mode: decomposed MHA
    r = import_model(path, output=str(tmp_path / "encoder.mlir"))
    assert r.ops["matmul"] == 6 and r.ops["gelu"] == 1 and r.ops["exp"] == 1
    with torch.no_grad():
        ref = layer(x).numpy()
    assert _rel(evaluate(r.builder, [x.numpy()])[0], ref) < 1e-5
    _verify(r.mlir)


def test_torch_compile_backend_registration():
    """The "kgraph" torch.compile backend is registered where torch has
    dynamo (2.x); torch 1.13 has none and register_torch_backend says so."""
    if hasattr(torch, "compile"):
        assert kgraph.register_torch_backend() is True
        from torch._dynamo.backends.registry import list_backends
        assert "kgraph" in list_backends(exclude_tags=())
    else:
        assert kgraph.register_torch_backend() is False


def test_json_graph_through_kgraph_translate(tmp_path):
    """A .json graph goes through kgraph-translate --import-graph-json (built
    by the JSON-graph importer's work; skipped, with the reason, where that
    tool is not built)."""
    try:
        kgraph.find_tool("kgraph-translate")
    except kgraph.CompileError as e:
        pytest.skip(str(e))
    g = tmp_path / "conv.json"
    g.write_text('{"type": "conv2d", "input_shape": [1, 3, 8, 8], "kernel_size": [3, 3], '
                 '"stride": [1, 1], "padding": [1, 1]}')
    p = _cli(str(g), "-o", str(tmp_path / "conv.mlir"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"wrote {tmp_path / 'conv.mlir'}: 1 ops (1 conv2d)")
    _verify(str(tmp_path / "conv.mlir"))


def test_json_graph_constant_nodes_become_plan_constants(tmp_path):
    """constant nodes of a .json graph (docs/graph-json.md, "Constants")
    compile to plan buffers of kind "constant" holding their values (the
    f16 one rounded to f16), loaded by the plan checker; the splat has no
    buffer (kgraph-opt folds it into its kernel)."""
    try:
        kgraph.find_tool("kgraph-translate")
    except kgraph.CompileError as e:
        pytest.skip(str(e))
    scale = [0.5, -1.0, 2.0, 0.1]
    weight = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]
    graph = {
        "inputs": [{"name": "x", "shape": [2, 4]}, {"name": "h", "shape": [2, 3], "dtype": "f16"}],
        "nodes": [
            {"name": "scale", "type": "constant", "shape": [4], "value": scale},
            {"name": "y", "type": "mul", "inputs": ["x", "scale"]},
            {"name": "w", "type": "constant", "shape": [4, 3], "value": weight},
            {"name": "m", "type": "matmul", "inputs": ["y", "w"]},
            {"name": "two", "type": "constant", "shape": [], "value": 2},
            {"name": "out", "type": "mul", "inputs": ["m", "two"]},
            {"name": "hc", "type": "constant", "dtype": "f16", "shape": [3],
             "value": [0.1, 1000.7, -3]},
            {"name": "hs", "type": "add", "inputs": ["h", "hc"]}],
        "outputs": ["out", "hs"]}
    g = tmp_path / "consts.json"
    g.write_text(json.dumps(graph))
    mlir = tmp_path / "consts.mlir"
    p = _cli(str(g), "-o", str(mlir))
    assert p.returncode == 0, p.stderr
    assert "arith.constant dense<" in mlir.read_text()
    _verify(str(mlir))
    p, plan_path = _compile(str(mlir), str(tmp_path))
    assert p.returncode == 0, p.stderr
    kgraph.load_plan(plan_path)
    with open(plan_path) as f:
        plan = json.load(f)
    fn = plan["functions"][0] if "functions" in plan else plan
    consts = {tuple(b["shape"]): b for b in fn["buffers"] if b["kind"] == "constant"}
    assert sorted(consts) == [(3,), (4,), (4, 3)], fn["buffers"]
    import base64

    def data(shape, dtype):
        return np.frombuffer(base64.b64decode(consts[shape]["data"]), dtype)

    np.testing.assert_array_equal(data((4,), "<f4"), np.array(scale, np.float32))
    np.testing.assert_array_equal(data((4, 3), "<f4").reshape(4, 3),
                                  np.array(weight, np.float32))
    assert consts[(3,)]["dtype"] == "f16"
    np.testing.assert_array_equal(data((3,), "<f2"), np.array([0.1, 1000.7, -3], np.float16))
