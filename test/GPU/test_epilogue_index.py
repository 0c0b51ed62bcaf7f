"""CPU self-check of the GEMM epilogue's input addressing
(test/Tools/check_epilogue_index.py), and the compiled epilogues against
it: kgraph-opt's kernels for the model's problems run in the CPU kernel
interpreter (test/Tools/kinterp). Runs without a GPU; kgraph-opt comes from
$KGRAPH_OPT or <repo>/build/bin (kgraph.tools.find_tool)."""

import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "Tools", "check_epilogue_index.py")


def _load():
    spec = importlib.util.spec_from_file_location("check_epilogue_index",
                                                  SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def opt():
    import kgraph
    try:
        return kgraph.find_tool("kgraph-opt")
    except kgraph.CompileError as e:
        # Reported (pytest -rs), as the GPU machine's test run, which may
        # lack a build, would report it.
        pytest.skip(f"the compiled-epilogue checks need kgraph-opt: {e}")


def test_epilogue_input_index_matches_numpy_broadcasting():
    mod = _load()
    fails = []
    for kind, out, groups in mod.problems():
        mod.check_problem(kind, out, groups, fails)
    assert fails == []


def test_checker_catches_a_wrong_channel():
    # A conv2d channel that forgets the group offset must be reported.
    mod = _load()
    fails = []
    right = mod.groups_of
    mod.groups_of = lambda kind, out, b, row, col, fpg: right(
        kind, out, 0, row, col, fpg)
    mod.check_problem("nhwc", (2, 3, 5, 4), 2, fails)
    mod.groups_of = right
    assert fails


_MOD = _load()


@pytest.mark.parametrize(
    "problem", list(_MOD.compiled_problems()),
    ids=lambda p: (f"{p[0]}-{'x'.join(map(str, p[1]))}-g{p[2]}-{p[3]}"
                   f"{'-full-tiles' if p[4] else ''}"))
def test_compiled_epilogue_reads_what_the_model_reads(opt, problem):
    # Every result element holds the index of the input element the kernel
    # read; full tiles: the layout model's shared memory, and per run of the
    # model's width (staged: 4 columns; direct: 2) the loads it allows.
    fails = []
    _MOD.check_compiled(opt, *problem, fails)
    assert fails == []


def test_compiled_check_catches_a_model_change(opt):
    # A model that no longer expects the vector loads of nhwc channels, or
    # expects the direct epilogue's column pairs where it is staged, or a
    # staged nchw epilogue, or forgets the group offset of a channel,
    # disagrees with the compiler.
    mod = _load()
    fails = []
    mod.run_loads = lambda kind, inp, out, fpg, width: False
    mod.check_compiled(opt, "nhwc", (2, 2, 4, 16), 2, "sm_80", mod.MMA16, fails)
    assert any("loads of widths [4], the model [1]" in f for f in fails)
    mod = _load()
    fails = []
    mod.STAGED_RUN = 2
    mod.check_compiled(opt, "nhwc", (2, 2, 4, 16), 2, "sm_80", mod.MMA16, fails)
    assert any("loads of widths [4], the model [2]" in f for f in fails)
    mod = _load()
    fails = []
    right = mod.epilogue_layout
    mod.epilogue_layout = lambda kind, cfg: right("nhwc", cfg)
    mod.check_compiled(opt, "nchw", (2, 16, 2, 4), 1, "sm_80", mod.MMA16_NCHW, fails)
    assert any("the model 64 (runs of 4)" in f for f in fails)
    mod = _load()
    fails = []
    right = mod.groups_of
    mod.groups_of = lambda kind, out, b, row, col, fpg: right(kind, out, 0, row, col, fpg)
    mod.check_compiled(opt, "nhwc", (2, 3, 5, 4), 2, "sm_80", None, fails)
    assert any("reads" in f for f in fails)
