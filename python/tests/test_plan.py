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
    (("version",), 2, "unsupported launch plan version 2 (this runtime knows [1])"),
    (("version",), "1", "unsupported launch plan version '1'"),
    (("version",), True, "unsupported launch plan version True"),
    (("target",), _DEL, "missing field 'target'"),
    (("ptx",), "", "ptx: expected a non-empty string"),
    (("function",), 3, "function: expected a non-empty string, got 3"),
    (("buffers",), {}, "buffers: expected a list, got dict"),
    (("buffers", 0, "id"), 1, "buffers[1].id: duplicate buffer id 1"),
    (("buffers", 0, "id"), -1, "buffers[0].id: expected an integer >= 0, got -1"),
    (("buffers", 0, "kind"), "weight", "buffers[0].kind: unknown buffer kind 'weight'"),
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
