"""Measured tuning (docs/tuning.md): ``python3 -m kgraph.tune`` or
``kgraph-tune``.

    prepare GRAPH.mlir --target SM [--top N] -o DIR   work units, no GPU
    measure DIR [--db DB] [--explain]                  time them on a GPU
    run GRAPH.mlir --target SM --budget 10m --db DB    both, on one machine
    merge DB... -o DB                                  join databases
    ab A.plan.json B.plan.json                         compare two builds
    report DB [--png FILE]                             the model against
                                                       the measurements
    replay DB GRAPH... --target SM                     the current model's
                                                       picks, looked up in DB

``kgraph-opt --tuning-db=DB`` (``kgraph.compile(..., tuning_db=DB)``)
applies a database.
"""

from .ab import ab
from .db import Database, TuningDBError, merge
from .measure import choose, compare, measure, measure_unit, tolerance
from .prepare import load_units, prepare
from .replay import replay
from .report import report

__all__ = ["Database", "TuningDBError", "ab", "choose", "compare", "load_units",
           "measure", "measure_unit", "merge", "prepare", "replay", "report", "run",
           "tolerance", "parse_budget"]


def parse_budget(text):
    """("seconds", s) for '90', '90s', '10m', '1h'; ("trials", n) for
    '200t' or '200trials'."""
    import re
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|t|trials?)?\s*", str(text))
    if not m:
        raise ValueError(f"budget {text!r}: expected seconds (90, 90s, 10m, "
                         f"1h) or trials (200t)")
    value, unit = float(m.group(1)), m.group(2) or "s"
    if unit.startswith("t"):
        if value < 1 or value != int(value):
            raise ValueError(f"budget {text!r}: a whole number of trials")
        return ("trials", int(value))
    scale = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}[unit]
    if value <= 0:
        raise ValueError(f"budget {text!r}: must be positive")
    return ("seconds", value * scale)


def run(graph, target, db, budget=("seconds", 600), top=8, out=None, fuse=True,
        gpus=None, jobs=None, libcuda=None, progress=True, log=print, **kw):
    """prepare + measure where the compiler and a GPU are on one machine:
    the work units go to ``out`` (default a temporary folder), records to
    ``db`` (whose records of other GPUs seed the candidates)."""
    import os
    import shutil
    import tempfile
    tmp = None
    if out is None:
        out = tmp = tempfile.mkdtemp(prefix="kgraph-tune-")
    try:
        seed = Database.load(db) if os.path.exists(db) else None
        prepare(graph, target, out, top=top, fuse=fuse, db=seed, jobs=jobs,
                log=log)
        return measure(out, db=db, gpus=gpus, budget=budget, libcuda=libcuda,
                       progress=progress, log=log, **kw)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
