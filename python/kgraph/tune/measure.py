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
            addresses = dict(program._parameter_addresses(drv, ordinal)
                             if spec.parameters else {})
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
        for ptr in self.owned + self.maps:
            try:
                self.drv.mem_free(ptr)
            except KGraphError:
                pass
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


def measure_unit(drv, ordinal, unit, reps=REPS, rounds=ROUNDS, max_candidates=None,
                 min_gain=0.02, slow_factor=5.0, flush_bytes=0, timer=None):
    """Measures one work unit on device ``ordinal``; returns its result
    (the unit's key, the GPU, every candidate with its times or why it was
    dropped, the winner)."""
    import numpy as np
    from ..runtime import Program
    folder = unit["folder"]
    gpu = drv.device_name(ordinal)
    cands = [dict(name=c["name"], config=c["config"], rank=c.get("rank"),
                  estimate_us=c.get("estimate_us"), source=c.get("source", "model"),
                  status=c.get("status", "ok"), reason=c.get("reason"),
                  plan=c.get("plan"))
             for c in unit["candidates"]]
    if max_candidates is not None:
        for c in cands[max_candidates:]:
            if c["status"] == "ok":
                c.update(status="skipped", reason="not measured: budget")
    result = dict(unit=unit["name"], signature=unit["signature"],
                  structure=unit["structure"], shape=unit["shape"],
                  kind=unit["kind"], space=unit["space"], target=unit["target"],
                  problem=unit["problem"], count=unit.get("count", 1),
                  gpu=gpu, candidates=cands, measured_at=_now())
    if cands[0]["status"] != "ok":
        result["error"] = f"the default does not compile: {cands[0]['reason']}"
        return result

    drv.set_device(ordinal)
    programs = {}
    for c in cands:
        if c["status"] != "ok":
            continue
        try:
            plan = load_plan(os.path.join(folder, c["plan"]))
            with open(plan.ptx_path, "rb") as f:
                programs[c["name"]] = Program(plan, f.read(), device=ordinal)
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
        for b in spec.inputs:
            ptr = drv.mem_alloc(b.bytes)
            inputs.append(ptr)
            data = random_bytes(b, rng)
            buf = ctypes.create_string_buffer(data, len(data))
            drv.memcpy_htod(ptr, ctypes.addressof(buf), len(data))
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
            try:
                r = Resident(drv, ordinal, prog, inputs)
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
        for ptr in inputs:
            try:
                drv.mem_free(ptr)
            except KGraphError:
                pass
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


def _measure_units(ordinal, units, opts, libcuda=None, progress=None):
    from ..driver import get_driver
    drv = get_driver(libcuda)
    drv.set_device(ordinal)
    timer = Timer(drv, _flush_bytes(drv, ordinal, opts.get("flush_mb")))
    results = []
    deadline = opts.get("deadline")
    try:
        for u in units:
            if deadline is not None and time.time() > deadline:
                r = _unmeasured(u, drv.device_name(ordinal),
                                "not measured: the budget was spent")
                results.append(r)
                if progress:
                    progress(r)
                continue
            seconds, ncand = opts["limits"].get(u["name"], (None, None))
            if seconds is not None:
                ncand = _candidates_for_seconds(u, seconds, opts["reps"])
            r = measure_unit(drv, ordinal, u, reps=opts["reps"],
                             rounds=opts["rounds"], max_candidates=ncand,
                             min_gain=opts["min_gain"], timer=timer)
            with open(os.path.join(u["folder"], f"result.{_slug(r['gpu'])}.json"),
                      "w") as f:
                json.dump(r, f, indent=1)
            results.append(r)
            if progress:
                progress(r)
    finally:
        timer.close()
    return results


def _unmeasured(unit, gpu, why):
    return dict(unit=unit["name"], signature=unit["signature"],
                problem=unit["problem"], count=unit.get("count", 1), gpu=gpu,
                candidates=[dict(name=c["name"], config=c["config"],
                                 status="skipped", reason=why)
                            for c in unit["candidates"]],
                error=why)


def _worker(ordinal, folders, opts, libcuda, queue):
    """One process per GPU: takes unit names from ``folders`` (a queue),
    measures them, puts results (or an error) on ``queue``."""
    try:
        import queue as _q
        _, units = load_units(opts["folder"])
        by_name = {u["name"]: u for u in units}
        while True:
            try:
                name = folders.get_nowait()
            except _q.Empty:
                break
            r = _measure_units(ordinal, [by_name[name]], opts, libcuda)[0]
            queue.put(("result", r))
    except BaseException as e:  # reported by the parent
        queue.put(("error", f"GPU {ordinal}: {type(e).__name__}: {e}"))
    queue.put(("done", ordinal))


def measure(folder, db=None, gpus=None, budget=None, reps=REPS, rounds=ROUNDS,
            min_gain=0.02, flush_mb=None, libcuda=None, progress=True,
            log=print):
    """Measures every work unit of ``folder`` and adds a record per kernel to
    the database ``db`` (default ``<folder>/tuning.db.json``). ``gpus``: the
    CUDA ordinals to spread the units over, one worker process each (None:
    device 0, in this process). ``budget``: ("seconds", s) or ("trials", n),
    split over the kernels by their share of the graph's estimated time.
    Returns (results, Database)."""
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
                deadline=deadline)
    bar = _progress_bar(len(units), progress)
    start = time.monotonic()

    def tick(r):
        if bar:
            bar.update(1)
            bar.set_postfix_str(f"{r['unit']} {_speedup_text(r)}")

    try:
        if not gpus:
            results = _measure_units(0, units, opts, libcuda, tick)
        else:
            results = _measure_parallel(gpus, units, opts, libcuda, tick)
    finally:
        if bar:
            bar.close()
    order = {u["name"]: i for i, u in enumerate(units)}
    results.sort(key=lambda r: order[r["unit"]])
    records = [rec for rec in map(to_record, results) if rec]
    database.add(records)
    database.save(db_path)
    log(table(results))
    log(f"measured {len(results)} kernel(s) in {time.monotonic() - start:.1f} s; "
        f"{len(records)} record(s) added to {db_path}")
    return results, database


def _measure_parallel(gpus, units, opts, libcuda, tick):
    import multiprocessing as mp
    ctx = mp.get_context("spawn")
    names = ctx.Queue()
    for u in units:
        names.put(u["name"])
    out = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(g, names, opts, libcuda, out))
             for g in gpus]
    for p in procs:
        p.start()
    results, errors, done = [], [], 0
    while done < len(procs):
        kind, payload = out.get()
        if kind == "result":
            results.append(payload)
            tick(payload)
        elif kind == "error":
            errors.append(payload)
        else:
            done += 1
    for p in procs:
        p.join()
    if errors:
        raise KGraphError("measuring failed: " + "; ".join(errors))
    return results


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
