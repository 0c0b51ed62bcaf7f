"""``measure --explain``: the hardware signals of a kernel's default and
measured winner, from Nsight Compute, so that ``report`` can say why the
winner won (docs/tuning.md).

After a unit is measured, one ``ncu`` run profiles a child process
(``python3 -m kgraph.tune._explain``) that loads the default and the winner
as measure does and launches each plan twice; ncu profiles the second round
(``--launch-skip``/``--launch-count``) with ``--clock-control none`` (the
clocks are left as they are), its caches flushed between replay passes
(``--cache-control all``, as measure flushes the L2 before every timed
run). Its ``--csv --page raw`` output is one row per launch; a candidate's
signals are its kernels' values averaged by their durations, with every
kernel's own values kept beside them.
"""

import csv
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from ..plan import load_plan

#: Signal name -> the Nsight Compute metric it is read from.
METRICS = {
    "occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "l2_hit_pct": "lts__t_sector_hit_rate.pct",
    "dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    # mma.sync (HMMA) and, on Hopper, wgmma (GMMA) use different pipes.
    "tensor_hmma_pct":
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "tensor_gmma_pct":
        "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
}
#: The kernel's duration: the weight of its values in a candidate's.
DURATION = "gpu__time_duration.sum"

#: Where ncu is looked for after PATH (the newest Nsight Compute first).
SEARCH = ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu")

#: Seconds one ncu run may take before it is killed (measure's default).
TIMEOUT = 120.0

_DURATION_SCALE = {"ns": 1e-3, "nsecond": 1e-3, "nsec": 1e-3, "us": 1.0,
                   "usecond": 1.0, "usec": 1.0, "ms": 1e3, "msecond": 1e3,
                   "msec": 1e3, "s": 1e6, "second": 1e6, "sec": 1e6}


class ExplainError(Exception):
    """Nsight Compute is missing or could not profile; the message says
    why."""


def _version_key(path):
    parent = os.path.basename(os.path.dirname(path))
    return [int(x) if x.isdigit() else -1 for x in re.split(r"[.-]", parent)]


def find_ncu(explicit=None):
    """The ncu executable: ``explicit`` if given, else the first of PATH,
    /usr/local/cuda/bin and /opt/nvidia/nsight-compute/<version> (newest
    first). Raises ExplainError naming where it looked."""
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        raise ExplainError(f"--ncu {explicit}: not an executable file")
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in SEARCH:
        for path in sorted(glob.glob(pattern), key=_version_key, reverse=True):
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    raise ExplainError("Nsight Compute (ncu) not found on PATH" +
                       "".join(f", {os.path.dirname(p)}" for p in SEARCH))


def _number(text):
    """The value of a CSV field: '1,234.5' -> 1234.5 (ncu groups the
    thousands); None for 'n/a', an empty field or other text."""
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        return None


def parse_raw_csv(text):
    """[(kernel name, {column: value})] of every profiled launch in ncu's
    ``--csv --page raw`` output ``text``: a header row of quoted column
    names ("ID", "Process ID", ..., "Kernel Name", ..., the metrics), a row
    of their units, then one row per launch; ncu's ``==PROF==`` lines and
    the application's output may come between. Values are floats or None
    (n/a); ``gpu__time_duration.sum`` is in microseconds whatever its unit.
    The kernel name is cut at its parameter list."""
    header, units, rows = None, None, []
    for line in text.splitlines():
        if not line.startswith('"'):
            continue
        try:
            fields = next(csv.reader([line]))
        except csv.Error:
            continue
        if header is None:
            if "ID" in fields and "Kernel Name" in fields:
                header = fields
            continue
        if len(fields) != len(header):
            continue
        row = dict(zip(header, fields))
        if not row["ID"].strip():
            if units is None:
                units = row
            continue
        values = {}
        for col, text_value in row.items():
            if col in ("ID", "Kernel Name"):
                continue
            v = _number(text_value)
            if v is not None and col == DURATION and units:
                v *= _DURATION_SCALE.get(units.get(col, "").strip(), 1.0)
            values[col] = v
        name = row["Kernel Name"].split("(", 1)[0].strip()
        rows.append((name, values))
    return rows


def _round(v):
    return None if v is None else round(v, 3)


def _tensor(values):
    """The tensor pipe's use: whichever of the HMMA and GMMA pipes ncu
    measured is busier (a kernel issues one kind)."""
    found = [values[k] for k in ("tensor_hmma_pct", "tensor_gmma_pct")
             if values.get(k) is not None]
    return max(found) if found else None


def aggregate(launches):
    """A candidate's signals from its kernels' rows (``parse_raw_csv``):
    each signal the average of its kernels' values weighted by their
    durations (unweighted if a duration is missing), the summed
    ``duration_us``, and ``kernels``, every kernel's own values."""
    kernels = []
    for name, values in launches:
        k = {"name": name, "duration_us": _round(values.get(DURATION))}
        for sig, metric in METRICS.items():
            k[sig] = _round(values.get(metric))
        k["tensor_pct"] = _tensor(k)
        kernels.append({key: v for key, v in k.items() if v is not None})
    out = {}
    durations = [k.get("duration_us") for k in kernels]
    if all(d is not None for d in durations):
        out["duration_us"] = _round(sum(durations))
    for sig in list(METRICS) + ["tensor_pct"]:
        pairs = [(k[sig], k.get("duration_us")) for k in kernels if sig in k]
        if not pairs:
            continue
        if all(d for _, d in pairs):
            v = sum(x * d for x, d in pairs) / sum(d for _, d in pairs)
        else:
            v = sum(x for x, _ in pairs) / len(pairs)
        out[sig] = round(v, 2)
    out["kernels"] = kernels
    return out


def _error_lines(text):
    return [line.split("==ERROR==", 1)[1].strip()
            for line in text.splitlines() if "==ERROR==" in line]


def _why(rc, out, err, got, want):
    """Why a run profiled ``got`` of ``want`` launches, from what ncu and
    the child printed."""
    text = err + "\n" + out
    errors = _error_lines(text)
    child = [line.strip() for line in text.splitlines()
             if line.startswith("kgraph.tune._explain: error:")]
    if errors:
        why = errors[0]
        if "ERR_NVGPUCTRPERM" in text:
            why += (" (no access to the GPU's performance counters: run as "
                    "root or allow profiling, NVreg_RestrictProfilingToAdminUsers=0)")
    elif child:
        why = child[0]
    elif rc:
        why = f"ncu exited with code {rc}"
    else:
        why = "ncu printed no measurements"
    return f"{why} (profiled {got} of {want} kernel launch(es))"


def _run(cmd, timeout, alive, env):
    """(exit code, stdout, stderr) of ``cmd`` in a session of its own,
    calling ``alive()`` first and every second (the watchdog's heartbeat,
    which also says that ncu runs); killed
    with its children after ``timeout`` seconds."""
    alive()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env,
                                start_new_session=True)
    except OSError as e:
        raise ExplainError(f"cannot run {cmd[0]}: {e.strerror}") from None
    deadline = time.monotonic() + timeout
    while True:
        try:
            out, err = proc.communicate(timeout=1.0)
            break
        except subprocess.TimeoutExpired:
            alive()
            if time.monotonic() > deadline:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.communicate()
                raise ExplainError(f"ncu did not finish in {timeout:g} s and "
                                   f"was killed (--explain-timeout)") from None
    return (proc.returncode, out.decode(errors="replace"),
            err.decode(errors="replace"))


def _child_env(libcuda):
    """The environment of ncu and the child: this kgraph first on
    PYTHONPATH, so ``-m kgraph.tune._explain`` finds the same package."""
    import kgraph
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(kgraph.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    if libcuda:
        env["KGRAPH_LIBCUDA"] = libcuda
    return env


def command(ncu, metrics, folder, names, ordinal, launches):
    """The ncu command line profiling the second of two rounds of
    ``launches`` kernel launches of candidates ``names``."""
    return [ncu, "--clock-control", "none", "--cache-control", "all",
            "--csv", "--page", "raw", "--metrics", ",".join(metrics),
            "--launch-skip", str(launches), "--launch-count", str(launches),
            sys.executable, "-m", "kgraph.tune._explain", folder, *names,
            "--device", str(ordinal)]


def explain_unit(unit, result, ordinal, ncu, timeout=TIMEOUT, libcuda=None,
                 alive=None):
    """{candidate name: signals} of the default and the winner of
    ``result`` (measure_unit's, with a winner), from one ncu run of
    ``ncu``; raises ExplainError with why when ncu is missing, fails, does
    not finish in ``timeout`` seconds or measures other launches than the
    plans'. A metric ncu does not know on this GPU (an error naming it) is
    left out and the run repeated once; one it reports as n/a is left out
    of the signals."""
    alive = alive or (lambda: None)
    cands = {c["name"]: c for c in result["candidates"]}
    names = [result["candidates"][0]["name"]]
    if result["best_name"] != names[0]:
        names.append(result["best_name"])
    kernels = {}
    for n in names:
        plan = load_plan(os.path.join(unit["folder"], cands[n]["plan"]))
        kernels[n] = [k.name for k in plan.function_plan(None).kernels]
    want = sum(len(v) for v in kernels.values())
    metrics = list(METRICS.values()) + [DURATION]
    env = _child_env(libcuda)
    for attempt in range(2):
        cmd = command(ncu, metrics, unit["folder"], names, ordinal, want)
        rc, out, err = _run(cmd, timeout, alive, env)
        rows = parse_raw_csv(out)
        if len(rows) == want:
            break
        errors = "\n".join(_error_lines(err + "\n" + out))
        unknown = [m for m in metrics if m != DURATION and m in errors]
        if attempt == 0 and unknown:
            metrics = [m for m in metrics if m not in unknown]
            continue
        raise ExplainError(_why(rc, out, err, len(rows), want))
    got = [name for name, _ in rows]
    expected = [k for n in names for k in kernels[n]]
    if got != expected:
        raise ExplainError(f"ncu profiled kernels {', '.join(got)}, not the "
                           f"plans' {', '.join(expected)}")
    signals, i = {}, 0
    for n in names:
        signals[n] = aggregate(rows[i:i + len(kernels[n])])
        i += len(kernels[n])
    return signals
