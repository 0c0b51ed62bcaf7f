"""The tuning database: what ``kgraph.tune measure`` learned, read back by
``kgraph-opt --tuning-db`` (docs/tuning.md).

A database is one JSON file::

    {"kgraph_tuning_db": 1, "records": [record, ...]}

A record is one kernel measured on one GPU in one session: its key (the
problem ``signature``, the shape-free ``structure``, the ``shape``, the
``kind``, the SM ``target``, the ``gpu`` name and the configuration-space
version ``space``), the model's pick (``default``) and the measured winner
(``best``), ``speedup`` (the default's median over the winner's), and every
candidate measured (``candidates``: config, model rank and estimate, median
and quartiles, samples, status and reason; for the default and winner of
``measure --explain`` optionally ``signals``, Nsight Compute's hardware
signals, which only ``report`` reads). Of several records of one key
the newest (``measured_at``) applies; ``merge`` joins files and drops exact
duplicates.
"""

import json
import os
import tempfile

#: The format number this package writes (and the highest it reads); the
#: compiler's kTuningDatabaseFormat (TuningDB.h).
FORMAT = 1

#: Fields every record carries (the compiler skips records without them).
KEY_FIELDS = ("signature", "structure", "shape", "kind", "target", "gpu",
              "space")
REQUIRED = KEY_FIELDS + ("best",)


class TuningDBError(ValueError):
    """A database file that cannot be used (unreadable, not JSON, foreign,
    of a newer format); the message names the file and what is wrong."""


def record_key(rec):
    """(signature, target, gpu, space): the records of one key compete, the
    newest applies."""
    return (rec["signature"], rec["target"], rec["gpu"], rec["space"])


def check_record(rec):
    """None if ``rec`` has what the compiler needs, else why not."""
    if not isinstance(rec, dict):
        return "is not an object"
    for f in REQUIRED:
        if f not in rec:
            return f"has no '{f}'"
    for f in ("signature", "structure", "kind", "target", "gpu", "best"):
        if not isinstance(rec[f], str):
            return f"has a '{f}' that is not a string"
    if not (isinstance(rec["space"], int) and rec["space"] >= 0):
        return "has no 'space' version (a non-negative integer)"
    if "emitter" in rec and not (isinstance(rec["emitter"], int) and
                                 rec["emitter"] >= 0):
        return "has an 'emitter' version that is not a non-negative integer"
    if not (isinstance(rec["shape"], list) and
            all(isinstance(d, int) and d >= 0 for d in rec["shape"])):
        return "has no 'shape' (an array of dimensions)"
    return None


class Database:
    """The records of one file (or of none yet); ``warnings`` lists the
    malformed records that were left out when it was read."""

    def __init__(self, records=(), path=None, warnings=()):
        self.records = list(records)
        self.path = path
        self.warnings = list(warnings)

    @classmethod
    def load(cls, path, missing_ok=False):
        if missing_ok and not os.path.exists(path):
            return cls(path=path)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise TuningDBError(f"tuning database {path}: cannot read: "
                                f"{e.strerror}") from None
        except UnicodeDecodeError:
            raise TuningDBError(f"tuning database {path}: not JSON (not "
                                f"UTF-8 text)") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise TuningDBError(f"tuning database {path}: not JSON: {e.msg} "
                                f"at line {e.lineno} column {e.colno}") from None
        if not isinstance(data, dict) or "kgraph_tuning_db" not in data:
            raise TuningDBError(f"tuning database {path}: not a kgraph tuning "
                                f"database (no \"kgraph_tuning_db\" format "
                                f"number)")
        fmt = data["kgraph_tuning_db"]
        if not isinstance(fmt, int) or not 1 <= fmt <= FORMAT:
            raise TuningDBError(f"tuning database {path}: format {fmt!r}, this "
                                f"kgraph reads format 1 to {FORMAT}")
        raw = data.get("records")
        if not isinstance(raw, list):
            raise TuningDBError(f"tuning database {path}: has no \"records\" "
                                f"array")
        records, warnings = [], []
        for i, rec in enumerate(raw):
            why = check_record(rec)
            if why:
                warnings.append(f"{path}: record {i} {why}; skipped")
            else:
                records.append(rec)
        return cls(records, path=path, warnings=warnings)

    def save(self, path=None):
        """Writes the file atomically (a reader never sees half of it)."""
        path = path or self.path
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tuning-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"kgraph_tuning_db": FORMAT, "records": self.records},
                          f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        self.path = path

    def add(self, records):
        """Adds records, leaving out exact duplicates of ones present."""
        seen = {_identity(r) for r in self.records}
        added = 0
        for r in records:
            ident = _identity(r)
            if ident not in seen:
                seen.add(ident)
                self.records.append(r)
                added += 1
        return added

    def latest(self, signature, target, gpu=None, space=None):
        """The record that applies to a key: the newest of its GPU (the
        first GPU by name when ``gpu`` is None), as the compiler picks it."""
        found = [r for r in self.records
                 if r["signature"] == signature and r["target"] == target and
                 (gpu is None or r["gpu"] == gpu) and
                 (space is None or r["space"] == space)]
        return applying(found) if found else None

    def configs_for(self, signature, target):
        """Every winning configuration recorded for ``signature`` on
        ``target``, from any GPU, newest first (first candidates when tuning
        on another GPU)."""
        recs = [r for r in self.records
                if r["signature"] == signature and r["target"] == target]
        recs.sort(key=lambda r: r.get("measured_at", ""), reverse=True)
        out = []
        for r in recs:
            if r["best"] not in out:
                out.append(r["best"])
        return out

    def near(self, unit, limit=3):
        """The winners of the nearest other shapes of ``unit``'s structure
        (same kind, target, space), nearest first: what the compiler would
        use as a near record."""
        import math
        by_signature = {}
        for r in self.records:
            if (r["structure"] == unit["structure"] and
                    r["signature"] != unit["signature"] and
                    r["kind"] == unit["kind"] and r["target"] == unit["target"] and
                    r["space"] == unit["space"] and
                    r.get("emitter", 0) == unit.get("emitter", 0) and
                    len(r["shape"]) == len(unit["shape"])):
                by_signature.setdefault(r["signature"], []).append(r)
        ranked = []
        for recs in by_signature.values():
            r = applying(recs)
            d = sum(abs(math.log(max(a, 1)) - math.log(max(b, 1)))
                    for a, b in zip(r["shape"], unit["shape"]))
            ranked.append((d, r))
        ranked.sort(key=lambda x: (x[0], x[1]["signature"]))
        return ranked[:limit]


def applying(records):
    """Of records competing for one group, the one the compiler applies
    (TuningDB.cpp): of the first GPU by name, the newest (of equal times,
    the later in the file)."""
    gpu = min(r["gpu"] for r in records)
    mine = [(i, r) for i, r in enumerate(records) if r["gpu"] == gpu]
    return max(mine, key=lambda ir: (ir[1].get("measured_at", ""), ir[0]))[1]


def _identity(rec):
    return json.dumps(rec, sort_keys=True)


def merge(paths, output):
    """Joins the databases at ``paths`` into ``output`` (which may be one of
    them); returns (the merged Database, records added, warnings)."""
    out = Database(path=output)
    warnings = []
    total = 0
    for p in paths:
        db = Database.load(p)
        warnings.extend(db.warnings)
        total += out.add(db.records)
    out.save(output)
    return out, total, warnings
