"""Version 3 plans: bundles of one variant per target (`kgraph-opt
--tile=sm_80,sm_90a`). Parsing and its errors, the variant a device runs
(choose_target), and kgraph.load picking it by the fake libcuda's compute
capability. No GPU needed."""

import copy
import json

import numpy as np
import pytest

import kgraph
from kgraph import PlanError
from kgraph.plan import choose_target

A = np.array([1, 2, 3, 4, 5], dtype=np.float32)
B = np.array([10, 20, 30, 40, 50], dtype=np.float32)


@pytest.mark.parametrize("targets, cc, chosen", [
    (("sm_80", "sm_90a"), (9, 0), "sm_90a"),    # sm_90a runs on 9.0 only
    (("sm_80", "sm_90a"), (8, 9), "sm_80"),     # the highest plain one below
    (("sm_80", "sm_90a"), (8, 0), "sm_80"),     # exact
    (("sm_80", "sm_90a"), (7, 5), None),        # every target is newer
    (("sm_90", "sm_90a"), (9, 0), "sm_90"),     # exact before specific
    (("sm_90a",), (10, 0), None),               # sm_90a is 9.0's alone
    (("sm_75", "sm_86", "sm_80"), (8, 9), "sm_86"),
    (("sm_70",), (9, 0), "sm_70"),
])
def test_choose_target(targets, cc, chosen):
    assert choose_target(targets, *cc) == chosen


def _bundle(plan_dict, targets=("sm_80", "sm_90a")):
    """A bundle of `plan_dict`'s function once per target, each with its
    own PTX file <target>.ptx."""
    fn = {"name": plan_dict["function"], "buffers": plan_dict["buffers"],
          "kernels": plan_dict["kernels"]}
    return {"format": "kgraph-launch-plan", "version": 3,
            "variants": [{"target": t, "ptx": f"{t}.ptx",
                          "functions": [copy.deepcopy(fn)]} for t in targets]}


@pytest.fixture
def bundle(plan_dict, write_plan, tmp_path):
    """write(data=None, ptx_for=all targets) -> path of a bundle plan."""
    # The fake PTX that write_plan puts beside a plan, once per target.
    write_plan(plan_dict)
    fake_ptx = (tmp_path / "prog.ptx").read_text()

    def write(data=None, ptx_for=None):
        data = data or _bundle(plan_dict)
        for v in data["variants"]:
            if not isinstance(v, dict) or "ptx" not in v:
                continue
            if ptx_for is None or v["target"] in ptx_for:
                (tmp_path / v["ptx"]).write_text(fake_ptx)
        path = tmp_path / "bundle.plan.json"
        path.write_text(json.dumps(data))
        return str(path)

    return write


def test_bundle_parses(bundle, tmp_path):
    plan = kgraph.load_plan(bundle())
    assert plan.version == 3
    assert plan.targets == ("sm_80", "sm_90a")
    assert [v.ptx_path for v in plan.variants] == [
        str(tmp_path / "sm_80.ptx"), str(tmp_path / "sm_90a.ptx")]
    # The plan itself reads as its first variant.
    assert plan.target == "sm_80" and plan.function == "main"
    assert plan.select_variant(9, 0).target == "sm_90a"
    assert plan.select_variant(8, 6).target == "sm_80"
    with pytest.raises(PlanError, match=r"no variant of this bundle runs on a "
                       r"device of compute capability 7\.5 \(sm_75\); the "
                       r"bundle has sm_80, sm_90a"):
        plan.select_variant(7, 5)


def _mutate(path, value):
    def apply(data):
        obj = data
        for key in path[:-1]:
            obj = obj[key]
        if value is _DELETE:
            del obj[path[-1]]
        else:
            obj[path[-1]] = value
    return apply


_DELETE = object()


@pytest.mark.parametrize("change, message", [
    (_mutate(["variants"], []), r"variants: the bundle has no variant"),
    (_mutate(["variants", 1, "target"], "sm_80"),
     r"variants\[1\]\.target: duplicate target 'sm_80'"),
    (_mutate(["variants", 1], "sm_90a"),
     r"variants\[1\]: expected an object, got str"),
    (_mutate(["variants", 0, "ptx"], _DELETE),
     r"variants\[0\]: missing field 'ptx'"),
    (_mutate(["variants", 1, "functions", 0, "buffers", 3, "dtype"], "i32"),
     r"variants\[1\]\.functions: the functions, their inputs, outputs or "
     r"parameters differ from those of variants\[0\]"),
    (_mutate(["variants", 1, "functions", 0, "name"], "other"),
     r"variants\[1\]\.functions: the functions"),
    (_mutate(["variants", 0, "functions"], []),
     r"variants\[0\]\.functions: the plan has no function"),
])
def test_bundle_errors(bundle, plan_dict, change, message):
    data = _bundle(plan_dict)
    change(data)
    with pytest.raises(PlanError, match=message):
        kgraph.load_plan(bundle(data))


def test_bundle_missing_ptx(bundle):
    with pytest.raises(PlanError, match=r"variants\[1\]\.ptx: PTX file .*"
                                        r"sm_90a\.ptx not found"):
        kgraph.load_plan(bundle(ptx_for=("sm_80",)))


@pytest.mark.parametrize("cc, target", [("9.0", "sm_90a"), ("8.6", "sm_80")])
def test_load_picks_the_variant(fake_cuda, bundle, monkeypatch, cc, target):
    monkeypatch.setenv("FAKE_CUDA_CC", cc)
    prog = kgraph.load(bundle())
    assert prog.plan.target == target
    assert prog.plan.ptx_path.endswith(f"{target}.ptx")
    np.testing.assert_array_equal(prog(A, B), B - A)


def test_load_without_a_variant_for_the_device(fake_cuda, bundle, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_CC", "7.0")
    with pytest.raises(PlanError, match=r"compute capability 7\.0 \(sm_70\); "
                                        r"the bundle has sm_80, sm_90a"):
        kgraph.load(bundle())
