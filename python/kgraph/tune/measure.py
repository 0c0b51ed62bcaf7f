"""``kgraph.tune measure``: time every candidate of prepared work units on
a GPU, check it against the default, and record what was learned.

The discipline (docs/tuning.md): inputs are fresh seeded random values;
every output buffer is poisoned (0xFF bytes, NaN for floats) before each
checked run; each candidate's outputs must match the default's within the
element type's tolerance, else it is dropped with the reason; the L2 cache
is flushed (a memset of twice its size) before every timed launch; samples
are taken in interleaved rounds (every candidate once per round, the order
rotating) so that clock and thermal drift hit all alike; a candidate slower
than ``slow_factor`` times the default after the first round stops being
timed. The winner is chosen by medians with a noise band; see ``choose``.
"""

import ctypes
import datetime
import json
import math
import os
import re
import statistics
import sys
import time

from ..errors import KGraphError
from ..plan import load_plan
from .db import Database
from .prepare import load_units

#: Default timed samples per candidate, and the rounds they are spread over.
REPS = 40
ROUNDS = 5


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


# --- values ----------------------------------------------------------------


def _dtype(name):
    from ..dtypes import DTYPES
    return DTYPES[name]


def _is_float(name):
    return "float" in _dtype(name).torch


def tolerance(dtype):
    """Largest accepted |candidate - default| / (|default| + 1% of the
    output's largest magnitude), by the element type's size: candidates
    differ from the default in accumulation order (and, for 4-byte floats,
    possibly in the tensor-core operand precision); a wrong kernel misses by
    far more. Integers and booleans must match exactly."""
    if not _is_float(dtype):
        return 0.0
    return 3e-2 if _dtype(dtype).bytes <= 2 else 1e-2


def random_bytes(spec, rng):
    """Seeded random contents of buffer ``spec``: normal values for floats,
    zeros for integers (often indices, which must stay in range), random
    booleans."""
    import numpy as np
    n = spec.numel
    if spec.dtype == "i1":
        return rng.integers(0, 2, size=n, dtype=np.uint8).tobytes()
    if not _is_float(spec.dtype):
        return bytes(spec.bytes)
    x = rng.standard_normal(n, dtype=np.float32)
    np_name = _dtype(spec.dtype).numpy
    if np_name is not None:
        return x.astype(np_name).tobytes()
    if spec.dtype == "bf16":  # round to nearest even on the top 16 bits
        bits = x.view(np.uint32)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return bits.astype(np.uint16).tobytes()
    raise KGraphError(f"no host type to fill a {spec.dtype} buffer")


def host_values(raw, spec):
    """The values of buffer ``spec``'s bytes ``raw`` (a uint8 numpy array or
    bytes) as a numpy array of its own type (bf16 widened to float32)."""
    import numpy as np
    raw = np.frombuffer(raw, dtype=np.uint8) if isinstance(raw, bytes) else raw
    if spec.dtype == "bf16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return raw.view(_dtype(spec.dtype).numpy)


def _as_float32(a):
    """A float32 torch CPU tensor of numpy array ``a`` (torch's ops use every
    core: a ResNet activation has 10^8 elements), else a numpy array."""
    try:
        import torch
    except ImportError:
        import numpy as np
        return np.asarray(a, dtype=np.float32)
    return torch.from_numpy(a if a.flags.writeable else a.copy()).float()


def compare(got, want, dtype):
    """None if ``got`` matches ``want`` (same NaN and infinity positions,
    values within ``tolerance(dtype)``), else what differs."""
    import numpy as np
    if not _is_float(dtype):
        bad = np.flatnonzero(got != want)
        if bad.size:
            i = bad[0]
            return f"{bad.size} element(s) differ, first at {i}: {got[i]} vs {want[i]}"
        return None
    g, w = _as_float32(got), _as_float32(want)
    lib = type(g).__module__.split(".")[0]
    if lib == "torch":
        import torch as xp
        nz = lambda m: int(m.nonzero()[0]) if m.dim() == 1 else int(m.nonzero()[0][0])  # noqa: E731
    else:
        xp = np
        nz = lambda m: int(np.flatnonzero(m)[0])  # noqa: E731
    gn, wn = xp.isnan(g), xp.isnan(w)
    diff = gn != wn
    if bool(diff.any()):
        i = nz(diff)
        return (f"{int(diff.sum())} NaN position(s) differ, first at {i}: "
                f"{float(g[i])} vs {float(w[i])}" +
                (" (an element never written?)" if bool(gn[i]) else ""))
    gi, wi = xp.isinf(g), xp.isinf(w)
    if bool((gi != wi).any()) or bool((g[wi] != w[wi]).any()):
        return "infinities differ"
    ok = ~(wn | wi)
    if not bool(ok.any()):
        return None
    g, w = g[ok], w[ok]
    aw = xp.abs(w)
    scale = float(aw.max())
    err = xp.abs(g - w) / (aw + 0.01 * scale + 1e-30)
    worst = int(err.argmax())
    if float(err[worst]) > tolerance(dtype):
        return (f"relative error {float(err[worst]):.3g} > {tolerance(dtype):g} "
                f"({float(g[worst])!r} vs {float(w[worst])!r})")
    return None


# --- one program resident on the device ------------------------------------


class Resident:
    """A program's buffers and prepared launches on one device: inputs are
    given (shared by all candidates of a kernel), outputs and intermediates
    owned. ``run()`` enqueues its launches on the null stream."""

    def __init__(self, drv, ordinal, program, input_ptrs):
        self.drv, self.program = drv, program
        spec = program.spec
        self.owned, self.maps = [], []
        try:
            fns = program._kernels_on(drv, ordinal)
            del fns
            addresses = dict(program._parameter_addresses(drv, ordinal))
            for b, ptr in zip(spec.inputs, input_ptrs):
                addresses[b.id] = ptr
            self.outputs = []
            for b in spec.outputs + spec.intermediates:
                ptr = drv.mem_alloc(b.bytes)
                self.owned.append(ptr)
                addresses[b.id] = ptr
                if b.kind == "output":
                    self.outputs.append((b, ptr))
            self.launches = program._prepare_launches(drv, ordinal, None,
                                                      addresses, self.maps)
        except BaseException:
            self.free()
            raise

    def run(self):
        for k, fn, params in self.launches:
            self.drv.launch(fn, k.grid, k.block, k.shared_bytes, None,
                            params.array, name=k.name)

    def poison(self):
        for b, ptr in self.outputs:
            self.drv.memset_d8(ptr, 0xFF, b.bytes)

    def read_outputs(self):
        import numpy as np
        out = []
        for b, ptr in self.outputs:
            raw = np.empty(b.bytes, dtype=np.uint8)
            self.drv.memcpy_dtoh(raw.ctypes.data, ptr, b.bytes)
            out.append(host_values(raw, b))
        return out

    def free(self):
        free_buffers(self.drv, self.owned + self.maps)
        self.owned, self.maps = [], []


class Timer:
    """Times launch sequences with CUDA events, the L2 flushed before each
    (a memset of ``flush_bytes``, not timed)."""

    def __init__(self, drv, flush_bytes):
        self.drv = drv
        self.flush_bytes = flush_bytes
        self.flush = drv.mem_alloc(flush_bytes) if flush_bytes else None
        self.events = []

    def _event_pairs(self, n):
        while len(self.events) < n:
            self.events.append((self.drv.event_create(), self.drv.event_create()))
        return self.events[:n]

    def time(self, run, reps):
        """Microseconds of ``reps`` calls of ``run``, one sample each."""
        pairs = self._event_pairs(reps)
        for start, end in pairs:
            if self.flush:
                self.drv.memset_d8(self.flush, 0, self.flush_bytes)
            self.drv.event_record(start, None)
            run()
            self.drv.event_record(end, None)
        self.drv.event_synchronize(pairs[-1][1])
        return [self.drv.event_elapsed_ms(s, e) * 1e3 for s, e in pairs]

    def close(self):
        for s, e in self.events:
            for ev in (s, e):
                try:
                    self.drv.event_destroy(ev)
                except KGraphError:
                    pass
        self.events = []
        if self.flush:
            self.drv.mem_free(self.flush)
            self.flush = None


def upload_random_inputs(drv, specs, rng):
    """Device buffers of ``specs`` filled with ``random_bytes``; the
    pointers, in order (free them with ``free_buffers``)."""
    ptrs = []
    try:
        for b in specs:
            ptr = drv.mem_alloc(b.bytes)
            ptrs.append(ptr)
            data = random_bytes(b, rng)
            buf = ctypes.create_string_buffer(data, len(data))
            drv.memcpy_htod(ptr, ctypes.addressof(buf), len(data))
    except BaseException:
        free_buffers(drv, ptrs)
        raise
    return ptrs


def free_buffers(drv, ptrs):
    """Frees device buffers, keeping an earlier error the one reported."""
    for ptr in ptrs:
        try:
            drv.mem_free(ptr)
        except KGraphError:
            pass


def stats(samples):
    """median, first and third quartile, min, count of ``samples``."""
    s = sorted(samples)
    q = statistics.quantiles(s, n=4, method="inclusive") if len(s) > 1 else [s[0]] * 3
    return dict(median_us=round(statistics.median(s), 4), q1_us=round(q[0], 4),
                q3_us=round(q[2], 4), min_us=round(s[0], 4), samples=len(s))


def choose(cands, min_gain=0.02):
    """(winner, tied) among measured candidates (dicts with ``median_us``,
    ``q1_us``, ``q3_us``; index 0 the default): the tie band is the fastest
    median plus the larger of ``min_gain`` of it and its interquartile
    range; if the default is in the band it stays; else the first candidate
    in the band (the model's order: the default, recorded configs, then by
    rank) wins if it beats the default beyond noise (median at least
    ``min_gain`` lower and its third quartile below the default's first),
    else the default stays. Deterministic for equal inputs."""
    timed = [c for c in cands if c.get("median_us") is not None]
    default = cands[0]
    if default.get("median_us") is None or len(timed) < 2:
        return default, len(timed)
    fastest = min(timed, key=lambda c: c["median_us"])
    band = fastest["median_us"] + max(min_gain * fastest["median_us"],
                                      fastest["q3_us"] - fastest["q1_us"])
    tied = [c for c in timed if c["median_us"] <= band]
    if default in tied:
        return default, len(tied)
    pick = tied[0]
    if (pick["median_us"] <= default["median_us"] * (1 - min_gain) and
            pick["q3_us"] < default["q1_us"]):
        return pick, len(tied)
    return default, len(tied)


# --- one work unit -----------------------------------------------------------


def _seed(signature):
    return int(signature[:8], 16)


def _target_cc(target):
    m = re.match(r"sm_(\d+)", target or "")
    return divmod(int(m.group(1)), 10) if m else None


def uses_cubin(drv, ordinal, unit):
    """Whether ``unit``'s candidates load from their cubins on device
    ``ordinal``: when it is of the target's compute capability."""
    return _target_cc(unit["target"]) == drv.compute_capability(ordinal)


def _load_program(folder, c, ordinal, use_cubin):
    """The candidate's Program: from its cubin (prepare's ptxas output)
    when ``use_cubin``, else from its PTX (the driver compiles it)."""
    from ..runtime import Program
    plan = load_plan(os.path.join(folder, c["plan"]))
    path = os.path.join(folder, c["cubin"]) if use_cubin and c.get("cubin") \
        else plan.ptx_path
    with open(path, "rb") as f:
        return Program(plan, f.read(), device=ordinal)


def resident(drv, ordinal, folder, c, program, inputs, use_cubin):
    """A Resident of candidate ``c``'s ``program`` (from ``_load_program``)
    on ``inputs``; if the driver refuses the candidate's cubin, of its PTX
    instead. What measure times and ``measure --explain`` profiles."""
    try:
        return Resident(drv, ordinal, program, inputs)
    except KGraphError:
        if not (use_cubin and c.get("cubin")):
            raise
        # A cubin this driver does not take: the PTX then.
        return Resident(drv, ordinal, _load_program(folder, c, ordinal, False),
                        inputs)


def measure_unit(drv, ordinal, unit, reps=REPS, rounds=ROUNDS, max_candidates=None,
                 min_gain=0.02, slow_factor=5.0, flush_bytes=0, timer=None,
                 excluded=None, alive=None):
    """Measures one work unit on device ``ordinal``; returns its result
    (the unit's key, the GPU, every candidate with its times or why it was
    dropped, the winner). ``excluded``: {candidate name: (status, reason)}
    of candidates not to run (one that hung before); ``alive(what)`` is
    called before every step that runs a kernel (the watchdog's
    heartbeat)."""
    import numpy as np
    alive = alive or (lambda what: None)
    folder = unit["folder"]
    gpu = drv.device_name(ordinal)
    cands = [dict(name=c["name"], config=c["config"], rank=c.get("rank"),
                  estimate_us=c.get("estimate_us"), source=c.get("source", "model"),
                  status=c.get("status", "ok"), reason=c.get("reason"),
                  plan=c.get("plan"), cubin=c.get("cubin"))
             for c in unit["candidates"]]
    for c in cands:
        if excluded and c["name"] in excluded:
            c["status"], c["reason"] = excluded[c["name"]]
    if max_candidates is not None:
        for c in cands[max_candidates:]:
            if c["status"] == "ok":
                c.update(status="skipped", reason="not measured: budget")
    result = _result(unit, gpu, cands)
    if cands[0]["status"] != "ok":
        result["error"] = f"the default was dropped: {cands[0]['reason']}"
        return result

    drv.set_device(ordinal)
    use_cubin = uses_cubin(drv, ordinal, unit)
    programs = {}
    for c in cands:
        if c["status"] != "ok":
            continue
        try:
            programs[c["name"]] = _load_program(folder, c, ordinal, use_cubin)
        except (OSError, KGraphError) as e:
            c.update(status="failed", reason=f"cannot load: {e}")
    if cands[0]["name"] not in programs:
        result["error"] = f"the default cannot be loaded: {cands[0]['reason']}"
        return result

    spec = programs[cands[0]["name"]].spec
    rng = np.random.default_rng(_seed(unit["signature"]))
    inputs = []
    residents = {}
    own_timer = timer is None
    timer = timer or Timer(drv, flush_bytes)
    try:
        alive("inputs")
        inputs = upload_random_inputs(drv, spec.inputs, rng)
        want = None
        for c in cands:
            prog = programs.get(c["name"])
            if prog is None:
                continue
            if [(x.shape, x.dtype) for x in prog.spec.inputs] != \
                    [(x.shape, x.dtype) for x in spec.inputs] or \
                    [(x.shape, x.dtype) for x in prog.spec.outputs] != \
                    [(x.shape, x.dtype) for x in spec.outputs]:
                c.update(status="failed", reason="its inputs or outputs differ "
                                                 "from the default's")
                continue
            alive(c["name"])
            try:
                r = resident(drv, ordinal, folder, c, prog, inputs, use_cubin)
                r.poison()
                r.run()
                drv.synchronize(None)
                got = r.read_outputs()
            except KGraphError as e:
                c.update(status="failed", reason=f"does not run: {e}")
                if c is cands[0]:
                    result["error"] = f"the default does not run: {e}"
                    return result
                continue
            alive(c["name"])  # host-side checks of large outputs take time too
            if want is None:
                want = got
            else:
                for i, (g, w, b) in enumerate(zip(got, want, spec.outputs)):
                    why = compare(g, w, b.dtype)
                    if why:
                        c.update(status="wrong", reason=f"output {i}: {why}")
                        break
                if c["status"] == "wrong":
                    r.free()
                    continue
            residents[c["name"]] = r

        live = [c for c in cands if c["name"] in residents]
        samples = {c["name"]: [] for c in live}
        per_round = max(1, math.ceil(reps / rounds))
        for rnd in range(rounds):
            k = rnd % len(live)
            for c in live[k:] + live[:k]:
                alive(c["name"])
                res = residents[c["name"]]
                res.run()  # warm (instruction cache, clocks), not timed
                samples[c["name"]] += timer.time(res.run, per_round)
            if rnd == 0 and len(live) > 1:
                d = statistics.median(samples[cands[0]["name"]])
                for c in live[1:]:
                    m = statistics.median(samples[c["name"]])
                    if m > slow_factor * d:
                        c.update(status="slow", reason=f"{m / d:.1f}x the "
                                 f"default's time after the first round")
                live = [c for c in live if c["status"] == "ok"]
        for c in cands:
            if c["status"] == "ok" and samples.get(c["name"]):
                c.update(stats(samples[c["name"]]))
    finally:
        for r in residents.values():
            r.free()
        free_buffers(drv, inputs)
        if own_timer:
            timer.close()

    best, tied = choose(cands, min_gain)
    result["best"] = best["config"]
    result["best_name"] = best["name"]
    result["tied"] = tied
    d = cands[0].get("median_us")
    if d and best.get("median_us"):
        result["speedup"] = round(d / best["median_us"], 4)
    return result


def to_record(result):
    """The database record of a unit's result (None if nothing was
    timed)."""
    if "best" not in result:
        return None
    rec = {k: result[k] for k in ("signature", "structure", "shape", "kind",
                                  "space", "target", "gpu", "problem",
                                  "measured_at", "best")}
    rec["default"] = result["candidates"][0]["config"]
    # The compiler's emitter version when the unit was prepared (records of
    # an older one are skipped as stale, TuningDB.h getEmitterVersion).
    rec["emitter"] = result.get("emitter", 0)
    from .. import __version__
    rec["kgraph"] = __version__
    if "speedup" in result:
        rec["speedup"] = result["speedup"]
    rec["tied"] = result["tied"]
    rec["candidates"] = [
        {k: v for k, v in c.items() if k not in ("name", "plan") and v is not None}
        for c in result["candidates"]]
    return rec


# --- the verb ----------------------------------------------------------------


def _slug(name):
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower() or "gpu"


def plan_budget(units, budget):
    """Per-unit limits from a budget: ("seconds", s) gives each unit its
    share of s by the graph's estimated time (at least 2 % of s); ("trials",
    n) gives each unit that share of n candidate measurements (at least 2,
    the default and one more). Returns {unit name: (seconds or None,
    candidates or None)}."""
    out = {}
    if budget is None:
        return {u["name"]: (None, None) for u in units}
    kind, amount = budget
    for u in units:
        share = u.get("share", 1.0 / max(len(units), 1))
        if kind == "seconds":
            out[u["name"]] = (max(amount * share, 0.02 * amount), None)
        else:
            out[u["name"]] = (None, max(2, round(amount * share)))
    return out


def _candidates_for_seconds(unit, seconds, reps):
    """How many candidates fit ``seconds``: the model's estimate of the
    default per timed sample, plus a flush and launch overhead of ~50 us,
    plus ~20 ms to load and check each candidate."""
    est = unit["candidates"][0].get("estimate_us") or 10.0
    per = 0.02 + reps * (est + 50.0) * 1e-6 * 1.5
    return max(2, int(seconds / per))


def _flush_bytes(drv, ordinal, flush_mb):
    if flush_mb is not None:
        return int(flush_mb * (1 << 20))
    l2 = drv.l2_cache_bytes(ordinal)
    return 2 * l2 if l2 else 128 << 20


def _result(unit, gpu, candidates, **extra):
    """A unit's result: its key and problem, the GPU, the candidates."""
    return dict(unit=unit["name"], signature=unit["signature"],
                structure=unit["structure"], shape=unit["shape"],
                kind=unit["kind"], space=unit["space"],
                emitter=unit.get("emitter", 0), target=unit["target"],
                problem=unit["problem"], count=unit.get("count", 1), gpu=gpu,
                candidates=candidates, measured_at=_now(), **extra)


def _unmeasured(unit, gpu, why):
    return _result(unit, gpu, [dict(name=c["name"], config=c["config"],
                                    status="skipped", reason=why)
                               for c in unit["candidates"]], error=why)


def _worker(ordinal, inbox, out, opts, libcuda, doing, stamp):
    """One process per GPU: measures the units the parent sends (name and
    the candidates to leave out), reporting each result and "done" when
    told to stop. Before every step that runs a kernel it writes what it
    runs into ``doing`` and the time into ``stamp`` (shared memory: still
    there when the process dies abruptly)."""
    try:
        from ..driver import get_driver
        drv = get_driver(libcuda)
        drv.set_device(ordinal)
        gpu = drv.device_name(ordinal)
        timer = Timer(drv, _flush_bytes(drv, ordinal, opts.get("flush_mb")))
        _, units = load_units(opts["folder"])
        by_name = {u["name"]: u for u in units}
        try:  # the comparisons' torch, loaded before any unit's clock runs
            import torch  # noqa: F401
        except ImportError:
            pass
    except BaseException as e:  # reported by the parent
        out.put(("fatal", ordinal, f"GPU {ordinal}: {type(e).__name__}: {e}"))
        return
    explain = opts.get("explain")
    try:
        while True:
            job = inbox.get()
            if job is None:
                break
            name, excluded = job
            _beat(doing, stamp, "")
            u = by_name[name]
            deadline = opts.get("deadline")
            if deadline is not None and time.time() > deadline:
                r = _unmeasured(u, gpu, "not measured: the budget was spent")
            else:
                seconds, ncand = opts["limits"].get(name, (None, None))
                if seconds is not None:
                    ncand = _candidates_for_seconds(u, seconds, opts["reps"])
                try:
                    r = measure_unit(
                        drv, ordinal, u, reps=opts["reps"], rounds=opts["rounds"],
                        max_candidates=ncand, min_gain=opts["min_gain"],
                        timer=timer, excluded=excluded,
                        alive=lambda what: _beat(doing, stamp, what))
                except Exception as e:  # noqa: BLE001 - one unit, reported
                    r = _unmeasured(u, gpu, f"measuring failed: "
                                            f"{type(e).__name__}: {e}")
                if explain and "best_name" in r and "explain" not in excluded:
                    if not _explain(u, r, ordinal, explain, libcuda,
                                    lambda: _beat(doing, stamp, "explain")):
                        explain = None  # ncu fails alike for every unit
                with open(os.path.join(u["folder"], f"result.{_slug(gpu)}.json"),
                          "w") as f:
                    json.dump(r, f, indent=1)
            out.put(("result", ordinal, r))
    finally:
        try:
            timer.close()
        except KGraphError:
            pass
    out.put(("done", ordinal, None))


def _explain(unit, result, ordinal, explain, libcuda, alive):
    """Adds the hardware signals of ``result``'s default and winner to its
    candidates (``measure --explain``); False, with the reason in
    ``result["explain_error"]``, if Nsight Compute failed."""
    from .explain import ExplainError, explain_unit
    try:
        signals = explain_unit(unit, result, ordinal, explain["ncu"],
                               explain["timeout"], libcuda, alive)
    except (ExplainError, OSError, KGraphError) as e:
        result["explain_error"] = str(e)
        return False
    for c in result["candidates"]:
        if c["name"] in signals:
            c["signals"] = signals[c["name"]]
    return True


def _beat(doing, stamp, what):
    doing.value = what.encode()[:63]
    stamp.value = time.time()


def _measure_watched(gpus, units, opts, libcuda, on_result, hang_timeout, log):
    """Spreads ``units`` over one worker process per GPU. A worker whose
    heartbeat stops for ``hang_timeout`` seconds (a kernel that never
    finishes) or that dies is killed and replaced; the candidate it was
    running is left out of that unit ("hung" or "crashed") and the unit is
    measured again."""
    import collections
    import multiprocessing as mp
    import queue as _queue
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    pending = collections.deque(u["name"] for u in units)
    excluded = {}
    workers = {}
    results = []

    def start(g):
        inbox = ctx.Queue()
        doing, stamp = ctx.Array("c", 64), ctx.Value("d", time.time())
        p = ctx.Process(target=_worker, daemon=True,
                        args=(g, inbox, out, opts, libcuda, doing, stamp))
        p.start()
        workers[g] = dict(proc=p, inbox=inbox, unit=None, doing=doing,
                          stamp=stamp, done=False)

    def dispatch(g):
        w = workers[g]
        _beat(w["doing"], w["stamp"], "")
        if pending:
            w["unit"] = pending.popleft()
            w["inbox"].put((w["unit"], dict(excluded.get(w["unit"], {}))))
        else:
            w["unit"] = None
            w["inbox"].put(None)

    def replace(g, status, why):
        w = workers[g]
        w["proc"].kill()
        w["proc"].join()
        name = w["unit"]
        what = w["doing"].value.decode() or "c00"
        if what == "inputs":
            what = "c00"
        excluded.setdefault(name, {})[what] = (status, why)
        if what == "explain":  # measured; Nsight Compute's run took it down
            log(f"{name}: its worker {status} while Nsight Compute ran "
                f"({why}); measuring {name} again without --explain")
        else:
            log(f"{name}: {what} {why}; measuring {name} again without it")
        pending.appendleft(name)
        start(g)
        dispatch(g)

    try:
        for g in gpus:
            start(g)
            dispatch(g)
        while not all(w["done"] for w in workers.values()):
            try:
                kind, g, payload = out.get(timeout=1.0)
            except _queue.Empty:
                kind = None
            if kind == "fatal":
                raise KGraphError(f"measuring failed: {payload}")
            if kind is not None:
                w = workers[g]
                if kind == "result":
                    results.append(payload)
                    on_result(payload)
                    dispatch(g)
                elif kind == "done":
                    w["done"] = True
            now = time.time()
            for g, w in list(workers.items()):
                if w["done"] or w["unit"] is None:
                    continue
                if now - w["stamp"].value > hang_timeout:
                    replace(g, "hung", f"did not finish in {hang_timeout:g} s "
                                       f"(a kernel that never ends?)")
                elif not w["proc"].is_alive():
                    replace(g, "crashed", f"killed its worker process (exit "
                                          f"code {w['proc'].exitcode})")
    finally:
        for w in workers.values():
            if w["proc"].is_alive():
                w["proc"].kill()
            w["proc"].join()
    return results


def measure(folder, db=None, gpus=None, budget=None, reps=REPS, rounds=ROUNDS,
            min_gain=0.02, flush_mb=None, libcuda=None, progress=True,
            hang_timeout=120.0, explain=False, ncu=None, explain_timeout=None,
            log=print):
    """Measures every work unit of ``folder`` and adds a record per kernel to
    the database ``db`` (default ``<folder>/tuning.db.json``; written after
    every kernel, so an interrupted run keeps what it measured). ``gpus``:
    the CUDA ordinals to spread the units over, one worker process each
    (default [0]). ``budget``: ("seconds", s) or ("trials", n), split over
    the kernels by their share of the graph's estimated time.
    ``hang_timeout``: seconds without progress after which a worker is
    killed and the candidate it ran is left out. ``explain`` (or an
    ``ncu`` path): record the hardware signals of every kernel's default
    and winner with Nsight Compute (kgraph.tune.explain), each ncu run
    killed after ``explain_timeout`` seconds; where ncu is missing or
    fails, a warning says why and measuring goes on without them. Returns
    (results, Database)."""
    summary, units = load_units(folder)
    if reps < 1 or rounds < 1:
        raise ValueError(f"measure needs reps >= 1 and rounds >= 1, got "
                         f"reps={reps}, rounds={rounds}")
    rounds = min(rounds, reps)
    db_path = db or os.path.join(folder, "tuning.db.json")
    database = Database.load(db_path, missing_ok=True)
    for w in database.warnings:
        log(f"warning: {w}")
    # A time budget also ends measuring when spent (what is left keeps the
    # model's choice), whatever the per-kernel estimates said.
    deadline = (time.time() + budget[1]
                if budget is not None and budget[0] == "seconds" else None)
    opts = dict(folder=folder, reps=reps, rounds=rounds, min_gain=min_gain,
                flush_mb=flush_mb, limits=plan_budget(units, budget),
                deadline=deadline, explain=_explain_options(
                    explain, ncu, explain_timeout, log))
    bar = _progress_bar(len(units), progress)
    start = time.monotonic()
    added = [0]
    warned = set()

    def on_result(r):
        why = r.get("explain_error")
        if why and why not in warned:
            warned.add(why)
            log(f"warning: --explain: Nsight Compute failed on {r['unit']}: "
                f"{why}; no hardware signals for it and the kernels after it")
        rec = to_record(r)
        if rec:
            added[0] += database.add([rec])
            database.save(db_path)
        line = (f"{r['unit']} {_speedup_text(r)} (tied {r.get('tied', 0)}) "
                f"{r['problem'][:70]}" + (f": {r['error']}" if "error" in r else ""))
        if bar:
            bar.update(1)
            bar.set_postfix_str(f"{r['unit']} {_speedup_text(r)}")
        else:
            log(line)
            sys.stdout.flush()

    try:
        results = _measure_watched(gpus or [0], units, opts, libcuda, on_result,
                                   hang_timeout, log)
    finally:
        if bar:
            bar.close()
    order = {u["name"]: i for i, u in enumerate(units)}
    results.sort(key=lambda r: order[r["unit"]])
    if not os.path.exists(db_path):
        database.save(db_path)
    log(table(results))
    log(f"measured {len(results)} kernel(s) in {time.monotonic() - start:.1f} s; "
        f"{added[0]} record(s) added to {db_path}")
    if opts["explain"]:
        n = sum(any("signals" in c for c in r["candidates"]) for r in results)
        log(f"hardware signals (Nsight Compute) recorded for {n} of "
            f"{len(results)} kernel(s)")
    return results, database


def _explain_options(explain, ncu, timeout, log):
    """The workers' ``--explain`` settings ({ncu, timeout}), or None when
    not asked for or when ncu is not found (a warning says so)."""
    if not (explain or ncu):
        return None
    from .explain import TIMEOUT, ExplainError, find_ncu
    timeout = TIMEOUT if timeout is None else timeout
    if timeout <= 0:
        raise ValueError(f"--explain-timeout must be positive, got {timeout:g}")
    try:
        return dict(ncu=find_ncu(ncu), timeout=timeout)
    except ExplainError as e:
        log(f"warning: --explain: {e}; measuring without hardware signals")
        return None


def _progress_bar(total, enabled):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="kernel", file=sys.stderr, dynamic_ncols=True)


def _speedup_text(r):
    return f"{r['speedup']:.2f}x" if "speedup" in r else "-"


def table(results):
    """The per-kernel table: default and best median, speedup, how many
    candidates tied, how many were timed and dropped."""
    lines = [f"{'unit':5} {'count':>5} {'default us':>11} {'best us':>10} "
             f"{'speedup':>7} {'tied':>4} {'timed':>5} {'dropped':>7}  problem"]
    for r in results:
        cands = r["candidates"]
        d = cands[0].get("median_us")
        best = next((c for c in cands if c["name"] == r.get("best_name")), None)
        timed = sum(c.get("median_us") is not None for c in cands)
        dropped = sum(c["status"] in ("failed", "wrong", "slow") for c in cands)
        b = best.get("median_us") if best else None
        d_text = f"{d:.2f}" if d else "-"
        b_text = f"{b:.2f}" if b else "-"
        lines.append(
            f"{r['unit']:5} {r['count']:5d} {d_text:>11} {b_text:>10} "
            f"{_speedup_text(r):>7} {r.get('tied', 0):4d} {timed:5d} "
            f"{dropped:7d}  {r['problem'][:70]}")
        if "error" in r:
            lines.append(f"      {r['error']}")
        for c in cands:
            if c["status"] in ("failed", "wrong"):
                lines.append(f"      {c['name']} {c['status']}: {c['reason']}")
    return "\n".join(lines)
