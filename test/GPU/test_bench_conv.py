"""CPU self-tests of bench/bench_conv.py: the summary, and one bench row run
on the CPU with a stand-in kgraph program (a correct one is timed, a wrong
one is reported and not timed). Needs torch, no GPU."""

import math
import os
import sys

import pytest

torch = pytest.importorskip("torch")

import conv_ref as CR  # noqa: E402
import gpu_harness as H  # noqa: E402
from gpu_harness import REPO  # noqa: E402
sys.path.insert(0, H.CASES)
import conv_cases as CC  # noqa: E402


BC = H.load_module("bench_conv", "bench/bench_conv.py")


def _small_case(layout="nchw"):
    c = CC.ConvCase("bench_small", "f32_f32", layout, 2, 8, 9, 9, 16, 3, 3,
                    (2, 2), (1, 1, 1, 1), (1, 1), 1, bench=True)
    c.bench_kind = "f32_nchw"
    return c.manifest()


class _Program:
    def __init__(self, case, wrong=False):
        self.case, self.wrong = case, wrong

    def run(self, inputs, outputs):
        x, w = inputs
        res = CR.simulate(self.case, x, w)
        if self.wrong:
            res.view(-1)[0] += 1.0
        outputs[0].copy_(res)


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("wrong", [False, True])
def test_bench_case_on_cpu(monkeypatch, layout, wrong):
    import kgraph
    case = _small_case(layout)
    monkeypatch.setattr(kgraph, "load", lambda path: _Program(case, wrong),
                        raising=False)
    calls = []

    def timer(fn):
        fn()
        calls.append(fn)
        return 0.5

    row = BC.bench_case(case, "/nonexistent", timer, dev=torch.device("cpu"))
    assert row["layer"] == "8, 9, 16, 3x3, s2"
    if wrong:
        assert "wrong result" in row["error"] and not calls
        return
    assert "error" not in row, row
    assert len(calls) == 2 and row["ratio"] == pytest.approx(1.0)
    assert row["kgraph_tflops"] == pytest.approx(case["flops"] / 0.5 / 1e9)
    assert row["cudnn_rel_err"] < 1e-6 and row["rel_err"] < 1e-6


def test_summarize():
    rows = [{"kind": "f16_nhwc", "ratio": 0.25}, {"kind": "f16_nhwc", "ratio": 1.0},
            {"kind": "f16_nhwc", "error": "x"}]
    geo = BC.summarize(rows)
    assert geo["f16_nhwc"] == pytest.approx(math.sqrt(0.25))
    assert geo["f32_nchw"] is None
