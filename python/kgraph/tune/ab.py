"""``kgraph.tune ab A.plan.json B.plan.json``: two compiled versions of a
graph on the same random inputs: their outputs must agree, and the time
ratio B/A comes with a confidence interval from interleaved rounds."""

import math
import statistics

from ..errors import KGraphError
from .measure import (Resident, Timer, _flush_bytes, compare, free_buffers,
                      upload_random_inputs)


def _t_quantile(p, df):
    """Student's t quantile (Cornish-Fisher expansion of the normal one;
    within 1% for df >= 3)."""
    # Acklam's rational approximation of the normal quantile, central part.
    z = math.sqrt(2) * _erfinv(2 * p - 1)
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3


def _erfinv(y):
    # Newton on math.erf from Winitzki's approximation.
    a = 0.147
    ln = math.log(1 - y * y)
    x = math.copysign(math.sqrt(math.sqrt((2 / (math.pi * a) + ln / 2) ** 2 - ln / a)
                                - (2 / (math.pi * a) + ln / 2)), y)
    for _ in range(3):
        x -= (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _signature(prog):
    return ([(b.shape, b.dtype) for b in prog.spec.inputs],
            [(b.shape, b.dtype) for b in prog.spec.outputs])


def ab(plan_a, plan_b, rounds=20, reps=5, device=0, function=None,
       libcuda=None, flush_mb=None, seed=0, log=print):
    """Runs the plans ``plan_a`` and ``plan_b`` (their function ``function``,
    default the first) on the same seeded random inputs, checks that their
    outputs agree, then times them in ``rounds`` interleaved rounds of
    ``reps`` runs each (the order alternating, the L2 flushed before every
    run). Returns a dict: medians, the B/A ratio (geometric mean of the
    per-round ratios of medians) and its 95% confidence interval."""
    import numpy as np
    from ..driver import get_driver
    from ..runtime import load
    if rounds < 2 or reps < 1:
        raise ValueError(f"ab needs rounds >= 2 and reps >= 1, got "
                         f"rounds={rounds}, reps={reps}")
    pa = load(plan_a, device=device, libcuda=libcuda, function=function)
    pb = load(plan_b, device=device, libcuda=libcuda, function=function)
    if _signature(pa) != _signature(pb):
        raise KGraphError(
            f"{plan_a} and {plan_b} do not compute the same function: inputs "
            f"{[b.describe() for b in pa.spec.inputs]} -> "
            f"{[b.describe() for b in pa.spec.outputs]} against "
            f"{[b.describe() for b in pb.spec.inputs]} -> "
            f"{[b.describe() for b in pb.spec.outputs]}")
    drv = get_driver(libcuda)
    drv.set_device(device)
    rng = np.random.default_rng(seed)
    inputs, residents = [], []
    timer = Timer(drv, _flush_bytes(drv, device, flush_mb))
    try:
        inputs = upload_random_inputs(drv, pa.spec.inputs, rng)
        outs = []
        for prog in (pa, pb):
            r = Resident(drv, device, prog, inputs)
            residents.append(r)
            r.poison()
            r.run()
            drv.synchronize(None)
            outs.append(r.read_outputs())
        for i, (got, want, b) in enumerate(zip(outs[1], outs[0], pa.spec.outputs)):
            why = compare(got, want, b.dtype)
            if why:
                raise KGraphError(f"outputs disagree: output {i} "
                                  f"({b.describe()}): {why}")
        ra, rb = residents
        ta, tb, ratios = [], [], []
        for rnd in range(rounds):
            order = (ra, rb) if rnd % 2 == 0 else (rb, ra)
            meds = {}
            for r in order:
                r.run()
                meds[id(r)] = statistics.median(timer.time(r.run, reps))
            ta.append(meds[id(ra)])
            tb.append(meds[id(rb)])
            ratios.append(math.log(meds[id(rb)] / meds[id(ra)]))
    finally:
        for r in residents:
            r.free()
        free_buffers(drv, inputs)
        timer.close()
    mean = statistics.fmean(ratios)
    sd = statistics.stdev(ratios)
    half = _t_quantile(0.975, rounds - 1) * sd / math.sqrt(rounds)
    res = dict(a=plan_a, b=plan_b, a_median_us=statistics.median(ta),
               b_median_us=statistics.median(tb), ratio=math.exp(mean),
               ci95=(math.exp(mean - half), math.exp(mean + half)),
               rounds=rounds, reps=reps, gpu=drv.device_name(device))
    verdict = ("B is faster" if res["ci95"][1] < 1 else
               "A is faster" if res["ci95"][0] > 1 else "no significant difference")
    log(f"A {plan_a}: {res['a_median_us']:.2f} us (median of round medians)")
    log(f"B {plan_b}: {res['b_median_us']:.2f} us")
    log(f"outputs agree; B/A time ratio {res['ratio']:.4f}, 95% CI "
        f"[{res['ci95'][0]:.4f}, {res['ci95'][1]:.4f}] over {rounds} "
        f"interleaved rounds of {reps} on {res['gpu']}: {verdict}")
    return res
