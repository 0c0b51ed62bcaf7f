"""Constant buffers (docs/launch-plan.md): a graph's tensor constants, their
bytes in the plan (base64), uploaded and kept per device like parameters;
once kernels may read them. Against the fake libcuda
(python/tests/fake_libcuda.c); no GPU needed."""

import base64
import copy

import numpy as np
import pytest

import kgraph
from kgraph.errors import PlanError

from test_plan_v2 import _DEL, BIAS, X5, _arg, _buf, _set

DATA = base64.b64encode(BIAS.tobytes()).decode()

#: "main": d = -c (once, into a derived buffer), out = x + d; "plain":
#: out = x + c, the constant read by the call's kernel itself.
CONST_PLAN = {
    "format": "kgraph-launch-plan", "version": 2, "target": "sm_90a",
    "ptx": "prog.ptx",
    "functions": [
        {"name": "main",
         "buffers": [_buf(0, "input", [5], index=0),
                     _buf(1, "output", [5], index=0),
                     _buf(2, "constant", [5], data=DATA),
                     _buf(3, "derived", [5])],
         "kernels": [
             {"name": "fake_neg_f32", "grid": [1, 1, 1], "block": [32, 1, 1],
              "shared_bytes": 0, "once": True,
              "args": [_arg(2), _arg(3), {"kind": "scalar", "type": "i64", "value": 5},
                       {"kind": "scalar", "type": "f32", "value": 1.0}]},
             {"name": "fake_add_f32", "grid": [1, 1, 1], "block": [32, 1, 1],
              "shared_bytes": 0,
              "args": [_arg(0), _arg(3), _arg(1),
                       {"kind": "scalar", "type": "i32", "value": 5}]}]},
        {"name": "plain",
         "buffers": [_buf(0, "input", [5], index=0),
                     _buf(1, "output", [5], index=0),
                     _buf(2, "constant", [5], data=DATA)],
         "kernels": [
             {"name": "fake_add_f32", "grid": [1, 1, 1], "block": [32, 1, 1],
              "shared_bytes": 0,
              "args": [_arg(0), _arg(2), _arg(1),
                       {"kind": "scalar", "type": "i32", "value": 5}]}]},
    ]}


@pytest.fixture
def consts(write_plan):
    def write(plan=None):
        return write_plan(copy.deepcopy(plan or CONST_PLAN))
    return write


def test_plan_reads_constant_bytes(consts):
    spec = kgraph.load_plan(consts()).function_plan("main")
    assert [b.id for b in spec.constants] == [2]
    np.testing.assert_array_equal(np.frombuffer(spec.constants[0].data, np.float32), BIAS)
    assert spec.intermediates == () and spec.parameters == ()


def test_constants_upload_once_per_device(fake_cuda, consts, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_DEVICES", "2")
    live = fake_cuda.fake_live_allocs()
    prog = kgraph.load(consts(), function="main")
    np.testing.assert_array_equal(prog(X5), X5 - BIAS)
    np.testing.assert_array_equal(prog(X5 * 2), X5 * 2 - BIAS)
    # The constant and the derived buffer stay with the plan.
    assert fake_cuda.fake_live_allocs() == live + 2
    # Another function of the plan: its own constant, on the shared module.
    plain = prog.function("plain")
    np.testing.assert_array_equal(plain(X5), X5 + BIAS)
    assert fake_cuda.fake_live_allocs() == live + 3
    on1 = kgraph.load(consts(), device=1, function="plain")
    np.testing.assert_array_equal(on1(X5 * 3), X5 * 3 + BIAS)
    graph = prog.capture(X5)
    np.testing.assert_array_equal(graph(X5 * 4), X5 * 4 - BIAS)
    graph.close()
    for p in (on1, plain, prog):
        p.release()
    assert fake_cuda.fake_live_allocs() == live


F0 = ("functions", 0)


@pytest.mark.parametrize("path, value, message", [
    (F0 + ("buffers", 2, "data"), "not base64!",
     r"functions\[0\].buffers\[2\].data: is not base64"),
    (F0 + ("buffers", 2, "data"), base64.b64encode(b"1234").decode(),
     r"functions\[0\].buffers\[2\].data: holds 4 bytes but the buffer has 20"),
    (F0 + ("buffers", 2, "data"), 7,
     r"functions\[0\].buffers\[2\]"),
    (F0 + ("buffers", 0, "data"), DATA,
     r"functions\[0\].buffers\[0\].data: only constant buffers carry data, "
     r"not input buffers"),
    (F0 + ("buffers", 2, "data"), _DEL,
     r"functions\[0\].buffers\[2\]: missing field 'data'"),
])
def test_malformed_constant_plans(consts, path, value, message):
    plan = copy.deepcopy(CONST_PLAN)
    _set(plan, path, value)
    with pytest.raises(PlanError, match=message):
        kgraph.load_plan(consts(plan))
