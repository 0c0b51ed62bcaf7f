"""Launch plan parsing and validation (docs/launch-plan.md)."""

import json
import os

import pytest

import kgraph
from kgraph import PlanError


def test_valid_plan(plan_dict, write_plan):
    path = write_plan(plan_dict)
    plan = kgraph.load_plan(path)
    assert plan.version == 1 and plan.target == "sm_90a" and plan.function == "main"
    assert plan.ptx_path == os.path.join(os.path.dirname(path), "prog.ptx")
    assert [b.id for b in plan.inputs] == [0, 1]
    assert [b.id for b in plan.outputs] == [3]
    assert [b.id for b in plan.intermediates] == [2]
    assert plan.buffer(3).shape == (5,) and plan.buffer(3).dtype == "f32"
    k0, k1 = plan.kernels
    assert k0.name == "fake_neg_f32" and k0.grid == (1, 1, 1) and k0.block == (128, 1, 1)
    assert k0.args[2].kind == "scalar" and k0.args[2].type == "i64" and k0.args[2].value == 5
    assert k1.args[2].kind == "buffer" and k1.args[2].buffer == 3


def test_load_returns_program(plan_dict, write_plan):
    prog = kgraph.load(write_plan(plan_dict))
    assert isinstance(prog, kgraph.Program)
    assert prog.ptx.startswith(b"//")
    assert "main(f32[5], f32[5]) -> (f32[5])" in repr(prog)


def test_indices_sorted_not_listed_order(plan_dict, write_plan):
    b = plan_dict["buffers"]
    b[0]["index"], b[1]["index"] = 1, 0
    plan = kgraph.load_plan(write_plan(plan_dict))
    assert [x.id for x in plan.inputs] == [1, 0]


def test_all_dtypes_and_rank0(plan_dict, write_plan):
    sizes = {"f32": 4, "f16": 2, "bf16": 2, "i8": 1, "i32": 4, "i1": 1}
    for i, (dt, size) in enumerate(sizes.items()):
        plan_dict["buffers"].append({"id": 10 + i, "kind": "intermediate",
                                     "shape": [3, 7], "dtype": dt, "bytes": 21 * size})
    plan_dict["buffers"].append({"id": 30, "kind": "intermediate", "shape": [],
                                 "dtype": "f32", "bytes": 4})
    plan = kgraph.load_plan(write_plan(plan_dict))
    assert plan.buffer(30).numel == 1
    assert plan.buffer(14).bytes == 84


def _set(d, path, value):
    *parents, last = path
    for p in parents:
        d = d[p]
    if value is _DEL:
        del d[last]
    else:
        d[last] = value


_DEL = object()

# (mutation path, new value, expected message fragment)
BAD = [
    (("format",), "something-else", "not a kgraph launch plan: format is 'something-else'"),
    (("format",), _DEL, "not a kgraph launch plan: format is None"),
    (("version",), 4, "unsupported launch plan version 4 (this runtime knows [1, 2, 3])"),
    (("version",), "1", "unsupported launch plan version '1'"),
    (("version",), True, "unsupported launch plan version True"),
    (("target",), _DEL, "missing field 'target'"),
    (("ptx",), "", "ptx: expected a non-empty string"),
    (("function",), 3, "function: expected a non-empty string, got 3"),
    (("buffers",), {}, "buffers: expected a list, got dict"),
    (("buffers", 0, "id"), 1, "buffers[1].id: duplicate buffer id 1"),
    (("buffers", 0, "id"), -1, "buffers[0].id: expected an integer >= 0, got -1"),
    (("buffers", 0, "kind"), "weight", "buffers[0].kind: unknown buffer kind 'weight'"),
    # Version 1 plans have no parameters.
    (("buffers", 0, "kind"), "parameter", "buffers[0].kind: unknown buffer kind 'parameter' "
                                          "(expected one of ['input', 'output', 'intermediate'])"),
    (("buffers", 0, "index"), _DEL, "buffers[0]: missing field 'index'"),
    (("buffers", 1, "index"), 0, "input indices must be 0..1 each exactly once, got [0, 0]"),
    (("buffers", 1, "index"), 2, "input indices must be 0..1 each exactly once, got [0, 2]"),
    (("buffers", 3, "index"), 1, "output indices must be 0..0 each exactly once, got [1]"),
    (("buffers", 3, "kind"), "intermediate", "the plan has no output buffer"),
    (("buffers", 0, "shape"), [5, -1], "buffers[0].shape: expected a list of non-negative integers"),
    (("buffers", 0, "shape"), [5.0], "buffers[0].shape: expected a list of non-negative integers"),
    (("buffers", 0, "dtype"), "f64", "buffers[0].dtype: unknown dtype 'f64'"),
    (("buffers", 0, "bytes"), 40, "buffers[0].bytes: is 40 but shape [5] of f32 needs 20"),
    (("buffers", 0), [], "buffers[0]: expected an object, got list"),
    (("kernels",), [], "kernels: the plan has no kernel"),
    (("kernels", 0, "name"), _DEL, "kernels[0]: missing field 'name'"),
    (("kernels", 0, "grid"), [1, 1], "kernels[0].grid: expected three integers >= 1, got [1, 1]"),
    (("kernels", 0, "grid"), [0, 1, 1], "kernels[0].grid: expected three integers >= 1"),
    (("kernels", 0, "block"), [1024, 2, 1], "kernels[0].block: [1024, 2, 1] has more than 1024 threads"),
    (("kernels", 0, "shared_bytes"), -4, "kernels[0].shared_bytes: expected an integer >= 0"),
    (("kernels", 0, "args", 0, "kind"), "tensor", "kernels[0].args[0].kind: unknown argument kind 'tensor'"),
    (("kernels", 0, "args", 0, "buffer"), 9, "kernels[0].args[0].buffer: no buffer with id 9"),
    (("kernels", 0, "args", 2, "type"), "f64", "kernels[0].args[2].type: unknown scalar type 'f64'"),
    (("kernels", 1, "args", 3, "value"), 1 << 40, "kernels[1].args[3].value: 1099511627776 is not a valid i32"),
    (("kernels", 0, "args", 3, "value"), "x", "kernels[0].args[3].value: 'x' is not a valid f32"),
    (("kernels", 0, "args", 0, "byte_offset"), 8,
     "kernels[0].args[0].byte_offset: 8 is not a multiple of 16"),
    (("kernels", 0, "args", 0, "byte_offset"), 32,
     "kernels[0].args[0].byte_offset: 32 is not inside buffer 0 of 20 bytes"),
    (("kernels", 0, "args", 0, "byte_offset"), -16,
     "kernels[0].args[0].byte_offset: expected an integer >= 0, got -16"),
]


@pytest.mark.parametrize("path,value,message", BAD,
                         ids=[".".join(map(str, b[0])) + f"={b[1]!r}"[:20] for b in BAD])
def test_invalid_plan(plan_dict, write_plan, path, value, message):
    _set(plan_dict, path, value)
    plan_path = write_plan(plan_dict)
    with pytest.raises(PlanError) as e:
        kgraph.load(plan_path)
    assert message in str(e.value)
    assert str(e.value).startswith(plan_path)  # names the plan file


def test_plan_not_an_object(write_plan):
    with pytest.raises(PlanError, match="a launch plan is a JSON object, got list"):
        kgraph.load(write_plan([1, 2]))


def test_plan_not_json(tmp_path):
    p = tmp_path / "x.plan.json"
    p.write_text("{not json")
    with pytest.raises(PlanError, match="not valid JSON"):
        kgraph.load(str(p))


def test_plan_file_missing(tmp_path):
    with pytest.raises(PlanError, match="cannot read launch plan .*nope.plan.json"):
        kgraph.load(str(tmp_path / "nope.plan.json"))


def test_ptx_missing(plan_dict, write_plan):
    path = write_plan(plan_dict, ptx=None)
    with pytest.raises(PlanError, match=r"ptx: PTX file .*prog\.ptx not found"):
        kgraph.load(path)


def test_errors_are_kgraph_errors():
    for cls in (kgraph.PlanError, kgraph.NoGPUError, kgraph.ShapeError,
                kgraph.DTypeError, kgraph.ArgumentCountError, kgraph.LayoutError,
                kgraph.CudaError):
        assert issubclass(cls, kgraph.KGraphError)
    assert issubclass(kgraph.ShapeError, ValueError)
    assert issubclass(kgraph.DTypeError, TypeError)
    assert issubclass(kgraph.ArgumentCountError, TypeError)


def test_parse_plan_without_file(plan_dict):
    plan = kgraph.parse_plan(plan_dict, base_dir="/x", check_ptx=False)
    assert plan.ptx_path == "/x/prog.ptx"
    json.dumps(plan_dict)  # unchanged and still serializable


def test_buffer_arg_byte_offset(plan_dict, write_plan):
    """A view: the buffer's address plus "byte_offset" (absent = 0)."""
    plan_dict["kernels"][1]["args"][0]["byte_offset"] = 16
    plan = kgraph.load(write_plan(plan_dict)).plan
    assert [a.byte_offset for a in plan.kernels[1].args[:3]] == [16, 0, 0]
    assert plan.kernels[0].args[0].byte_offset == 0


# --- "tensor_maps" arguments (copy = tma kernels) ------------------------------

def _tma_plan(plan_dict):
    """plan_dict whose second kernel takes a valid "tensor_maps" argument: a
    rank-1 map over buffer 0 (f32[5]) and a rank-2 map over buffer 4
    (f16[2, 8], 32 bytes, rows of 16 bytes)."""
    plan_dict["buffers"].append({"id": 4, "kind": "intermediate", "shape": [2, 8],
                                 "dtype": "f16", "bytes": 32})
    plan_dict["kernels"][1]["args"] = [{"kind": "tensor_maps", "maps": [
        {"buffer": 0, "dtype": "f32", "dims": [5], "strides": [], "box": [4],
         "element_strides": [1], "swizzle": "none", "interleave": "none",
         "l2_promotion": "none", "oob_fill": "zero"},
        {"buffer": 4, "dtype": "f16", "dims": [8, 2], "strides": [16],
         "box": [8, 2], "element_strides": [1, 1], "swizzle": "128B",
         "interleave": "none", "l2_promotion": "256B", "oob_fill": "zero"}]}]
    return plan_dict


def test_valid_tensor_maps(plan_dict, write_plan):
    plan = kgraph.load(write_plan(_tma_plan(plan_dict))).plan
    arg = plan.kernels[1].args[0]
    assert arg.kind == "tensor_maps"
    assert [m.buffer for m in arg.maps] == [0, 4]
    m = arg.maps[1]
    assert (m.dtype, m.dims, m.strides, m.box, m.element_strides) == (
        "f16", (8, 2), (16,), (8, 2), (1, 1))
    assert (m.swizzle, m.interleave, m.l2_promotion, m.oob_fill) == (
        "128B", "none", "256B", "zero")


_A = ("kernels", 1, "args", 0)
_M = _A + ("maps", 1)
_W = "kernels[1].args[0]"
_MW = _W + ".maps[1]"

# (mutation path, new value, expected message fragment) on _tma_plan.
BAD_TMA = [
    (_A + ("maps",), _DEL, f"{_W}: missing field 'maps'"),
    (_A + ("maps",), {}, f"{_W}.maps: expected a list, got dict"),
    (_A + ("maps",), [], f"{_W}.maps: no tensor map"),
    (_M, [], f"{_MW}: expected an object, got list"),
    (_M + ("buffer",), _DEL, f"{_MW}: missing field 'buffer'"),
    (_M + ("buffer",), -1, f"{_MW}.buffer: expected an integer >= 0, got -1"),
    (_M + ("buffer",), "4", f"{_MW}.buffer: expected an integer >= 0, got '4'"),
    (_M + ("buffer",), 9, f"{_MW}.buffer: no buffer with id 9"),
    (_M + ("dtype",), _DEL, f"{_MW}: missing field 'dtype'"),
    (_M + ("dtype",), "i8", f"{_MW}.dtype: 'i8' is not one of ['f32', 'f16', 'bf16']"),
    (_M + ("dtype",), "bf16", f"{_MW}.dtype: is bf16 but buffer 4 holds f16"),
    (_M + ("dims",), _DEL, f"{_MW}: missing field 'dims'"),
    (_M + ("dims",), 8, f"{_MW}.dims: expected a list, got int"),
    (_M + ("dims",), [8, 0], f"{_MW}.dims[1]: 0 is not an integer >= 1"),
    (_M + ("dims",), [8.0, 2], f"{_MW}.dims[0]: 8.0 is not an integer >= 1"),
    (_M + ("dims",), [], f"{_MW}.dims: rank 0 is not in [1, 5]"),
    (_M + ("dims",), [1] * 6, f"{_MW}.dims: rank 6 is not in [1, 5]"),
    (_M + ("dims",), [8, 3], f"{_MW}: spans 48 bytes but buffer 4 has 32"),
    (_M + ("strides",), _DEL, f"{_MW}: missing field 'strides'"),
    (_M + ("strides",), [True], f"{_MW}.strides[0]: True is not an integer >= 1"),
    (_M + ("strides",), [], f"{_MW}.strides: needs 1 strides (dims 1..), got 0"),
    (_M + ("strides",), [16, 32], f"{_MW}.strides: needs 1 strides (dims 1..), got 2"),
    (_M + ("strides",), [24], f"{_MW}.strides[0]: 24 is not a multiple of 16"),
    (_M + ("strides",), [32], f"{_MW}: spans 48 bytes but buffer 4 has 32"),
    (_M + ("box",), _DEL, f"{_MW}: missing field 'box'"),
    (_M + ("box",), [8], f"{_MW}.box: needs 2 entries, got 1"),
    (_M + ("box",), [8, 0], f"{_MW}.box[1]: 0 is not an integer >= 1"),
    (_M + ("box",), [8, 257], f"{_MW}.box[1]: 257 is more than 256"),
    (_M + ("element_strides",), _DEL, f"{_MW}: missing field 'element_strides'"),
    (_M + ("element_strides",), [1, 1, 1], f"{_MW}.element_strides: needs 2 entries, got 3"),
    (_M + ("element_strides",), [1, 9], f"{_MW}.element_strides[1]: 9 is more than 8"),
    (_M + ("swizzle",), _DEL, f"{_MW}: missing field 'swizzle'"),
    (_M + ("swizzle",), "256B", f"{_MW}.swizzle: '256B' is not one of ['none', '32B', '64B', '128B']"),
    (_M + ("interleave",), "16B", f"{_MW}.interleave: '16B' is not one of ['none']"),
    (_M + ("l2_promotion",), "512B",
     f"{_MW}.l2_promotion: '512B' is not one of ['none', '64B', '128B', '256B']"),
    (_M + ("oob_fill",), "nan", f"{_MW}.oob_fill: 'nan' is not one of ['zero']"),
    (_M + ("byte_offset",), 16, f"{_MW}: spans 32 bytes from byte 16 but buffer 4 has 32"),
    (_M + ("byte_offset",), 4, f"{_MW}.byte_offset: 4 is not a multiple of 16"),
]


@pytest.mark.parametrize("path,value,message", BAD_TMA,
                         ids=[".".join(map(str, b[0][4:])) + f"={b[1]!r}"[:20]
                              for b in BAD_TMA])
def test_invalid_tensor_maps(plan_dict, write_plan, path, value, message):
    plan = _tma_plan(plan_dict)
    _set(plan, path, value)
    plan_path = write_plan(plan)
    with pytest.raises(PlanError) as e:
        kgraph.load(plan_path)
    assert message in str(e.value)
    assert str(e.value).startswith(plan_path)


def test_tensor_map_fills_its_buffer(plan_dict, write_plan):
    # A map may cover its buffer exactly (and a box may exceed the dims: the
    # out-of-bounds part reads zeros).
    plan = _tma_plan(plan_dict)
    _set(plan, _M + ("dims",), [16, 1])
    _set(plan, _M + ("box",), [64, 2])
    assert kgraph.load(write_plan(plan)).plan.kernels[1].args[0].maps[1].dims == (16, 1)


# --- "workspace" arguments (stream-K kernels) ----------------------------------

def test_valid_workspace(plan_dict, write_plan):
    plan_dict["kernels"][1]["args"].append({"kind": "workspace", "bytes": 4096})
    arg = kgraph.load(write_plan(plan_dict)).plan.kernels[1].args[-1]
    assert (arg.kind, arg.bytes) == ("workspace", 4096)


@pytest.mark.parametrize("value,message", [
    (_DEL, "missing field 'bytes'"),
    (0, "a workspace of 0 bytes (expected 1 to 1073741824)"),
    ((1 << 30) + 1, "a workspace of 1073741825 bytes (expected 1 to 1073741824)"),
    ("64", "expected an integer >= 0, got '64'"),
])
def test_invalid_workspace(plan_dict, write_plan, value, message):
    plan_dict["kernels"][1]["args"].append({"kind": "workspace", "bytes": 64})
    _set(plan_dict, ("kernels", 1, "args", len(plan_dict["kernels"][1]["args"]) - 1,
                     "bytes"), value)
    with pytest.raises(PlanError) as e:
        kgraph.load(write_plan(plan_dict))
    assert message in str(e.value)
