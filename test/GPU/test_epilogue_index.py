"""CPU self-check of the GEMM epilogue's input addressing
(test/Tools/check_epilogue_index.py): runs without a GPU."""

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "Tools", "check_epilogue_index.py")


def _load():
    spec = importlib.util.spec_from_file_location("check_epilogue_index",
                                                  SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


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
