"""Once kernels and derived buffers (docs/launch-plan.md): kernels that
compute only from the parameters run once per device after the parameter
upload, never in a call, a CUDA graph or a profile. Against the fake
libcuda (python/tests/fake_libcuda.c); no GPU needed."""

import copy

import numpy as np
import pytest

import kgraph
from kgraph.errors import PlanError
from kgraph.weights import save

from test_plan_v2 import BIAS, X5, _arg, _buf, _set

#: "main": d = -bias (once, fake_neg_f32 into a derived buffer), then per
#: call out = x + d (fake_add_f32): out = x - bias.
ONCE_PLAN = {
    "format": "kgraph-launch-plan", "version": 2, "target": "sm_90a",
    "ptx": "prog.ptx", "weights": "model.safetensors",
    "functions": [
        {"name": "main",
         "buffers": [_buf(0, "parameter", [5], name="bias"),
                     _buf(1, "input", [5], index=0),
                     _buf(2, "derived", [5]),
                     _buf(3, "output", [5], index=0)],
         "kernels": [
             {"name": "fake_neg_f32", "grid": [1, 1, 1], "block": [32, 1, 1],
              "shared_bytes": 0, "once": True,
              "args": [_arg(0), _arg(2), {"kind": "scalar", "type": "i64", "value": 5},
                       {"kind": "scalar", "type": "f32", "value": 1.0}]},
             {"name": "fake_add_f32", "grid": [1, 1, 1], "block": [32, 1, 1],
              "shared_bytes": 0,
              "args": [_arg(1), _arg(2), _arg(3),
                       {"kind": "scalar", "type": "i32", "value": 5}]}]},
    ]}


@pytest.fixture
def once(write_plan, tmp_path):
    def write(plan=None):
        save(str(tmp_path / "model.safetensors"), {"bias": BIAS})
        return write_plan(copy.deepcopy(plan or ONCE_PLAN))
    return write


def _names(fake_cuda, start):
    return [fake_cuda.fake_launch(i).decode().split()[0]
            for i in range(start, fake_cuda.fake_num_launches())]


def test_plan_splits_once_kernels(once):
    spec = kgraph.load_plan(once()).function_plan()
    assert [k.name for k in spec.kernels] == ["fake_add_f32"]
    assert [k.name for k in spec.once_kernels] == ["fake_neg_f32"]
    assert spec.once_kernels[0].once and not spec.kernels[0].once
    assert [b.id for b in spec.derived] == [2] and spec.intermediates == ()
    assert "1 kernel(s) (+1 once at load), 1 parameter(s)" in repr(kgraph.load(once()))


def test_once_kernels_run_once_per_device(fake_cuda, once, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_DEVICES", "2")
    live, start = fake_cuda.fake_live_allocs(), fake_cuda.fake_num_launches()
    prog = kgraph.load(once())
    np.testing.assert_array_equal(prog(X5), X5 - BIAS)
    np.testing.assert_array_equal(prog(X5 * 3), X5 * 3 - BIAS)
    assert _names(fake_cuda, start) == ["fake_neg_f32", "fake_add_f32", "fake_add_f32"]
    # The parameter and the derived buffer stay with the plan.
    assert fake_cuda.fake_live_allocs() == live + 2
    # Another device computes its own copy.
    on1 = kgraph.load(once(), device=1)
    start = fake_cuda.fake_num_launches()
    np.testing.assert_array_equal(on1(X5), X5 - BIAS)
    assert _names(fake_cuda, start) == ["fake_neg_f32", "fake_add_f32"]
    on1.release()
    prog.release()
    assert fake_cuda.fake_live_allocs() == live
    # Released: the next call uploads and derives again.
    start = fake_cuda.fake_num_launches()
    np.testing.assert_array_equal(prog(X5), X5 - BIAS)
    assert _names(fake_cuda, start) == ["fake_neg_f32", "fake_add_f32"]
    prog.release()


def test_prepare_runs_once_kernels(fake_cuda, once):
    prog = kgraph.load(once())
    start = fake_cuda.fake_num_launches()
    prog.prepare()
    assert _names(fake_cuda, start) == ["fake_neg_f32"]
    prog(X5)
    assert _names(fake_cuda, start) == ["fake_neg_f32", "fake_add_f32"]
    prog.release()


def test_graph_and_profile_leave_once_kernels_out(fake_cuda, once):
    prog = kgraph.load(once())
    graph = prog.capture(X5)
    assert graph.num_kernels == 1
    start = fake_cuda.fake_num_launches()
    np.testing.assert_array_equal(graph(X5 * 2), X5 * 2 - BIAS)
    assert _names(fake_cuda, start) == ["graph:fake_add_f32"]
    graph.close()
    prof = prog.profile(X5, repeat=2, warmup=0, print=False)
    assert [k.name for k in prof.kernels] == ["fake_add_f32"]
    prog.release()


def test_failed_once_kernel_frees_and_retries(fake_cuda, once):
    plan = copy.deepcopy(ONCE_PLAN)
    plan["functions"][0]["kernels"][0]["name"] = "fake_rejected"
    plan["functions"][0]["kernels"][0]["args"] = [_arg(2)]
    live = fake_cuda.fake_live_allocs()
    prog = kgraph.load(once(plan))
    with pytest.raises(kgraph.KGraphError, match="fake_rejected"):
        prog(X5)
    prog.release()
    assert fake_cuda.fake_live_allocs() == live


F0 = ("functions", 0)


@pytest.mark.parametrize("path, value, message", [
    # A once kernel must not touch a call's buffers.
    (F0 + ("kernels", 0, "args", 0, "buffer"), 1,
     r"functions\[0\].kernels\[0\].args\[0\]: a once kernel uses input buffer 1 "
     r"\(only parameter, constant and derived buffers\)"),
    (F0 + ("kernels", 0, "args", 1, "buffer"), 3,
     r"kernels\[0\].args\[1\]: a once kernel uses output buffer 3"),
    (F0 + ("kernels", 0, "once"), "yes",
     r"functions\[0\].kernels\[0\].once: expected true or false, got 'yes'"),
    # A derived buffer nothing computes.
    (F0 + ("kernels", 0, "once"), False,
     r"functions\[0\].buffers\[2\]: derived buffer 2 is used by no once kernel"),
    (F0 + ("kernels", 1, "once"), True,
     r"kernels\[1\].args\[0\]: a once kernel uses input buffer 1"),
])
def test_malformed_once_plans(once, path, value, message):
    plan = copy.deepcopy(ONCE_PLAN)
    _set(plan, path, value)
    with pytest.raises(PlanError, match=message):
        kgraph.load_plan(once(plan))


def test_every_kernel_once_is_an_error(once):
    plan = copy.deepcopy(ONCE_PLAN)
    del plan["functions"][0]["kernels"][1]
    with pytest.raises(PlanError, match=r"functions\[0\].kernels: every kernel is a "
                                        r"once kernel: a call would launch nothing"):
        kgraph.load_plan(once(plan))


def test_version_1_has_no_derived_buffers(plan_dict, write_plan):
    plan_dict["buffers"][2]["kind"] = "derived"
    with pytest.raises(PlanError, match=r"buffers\[2\].kind: unknown buffer kind 'derived'"):
        kgraph.load_plan(write_plan(plan_dict))
