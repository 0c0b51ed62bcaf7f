#!/usr/bin/python3
"""Which sources a GPU-case folder was built from.

scripts/build-gpu-cases.py and scripts/build-model-cases.py record in their
manifests (manifest.json, models/models.json) ``built_from``: the digest of
every source that decides a case's kernels (the compiler's lib/ and
include/, the case generators and the fuzzer, the importers) and, for
people, the git commit. scripts/gpu-check.sh refuses a folder whose digest
is not the tree's: GPU results of kernels an older compiler built say
nothing about this one. KGRAPH_ALLOW_STALE_CASES=1 runs it anyway, loudly.

    scripts/case_digest.py                 print the tree's digest
    scripts/case_digest.py --check .gpu    exit 2 naming what is stale
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

#: What decides the kernels and the cases (files, or folders walked).
SOURCES = ("lib", "include", "test/GPU/cases", "test/fuzz",
           "python/kgraph/importers", "python/tests/model_cases.py",
           "scripts/build-gpu-cases.py", "scripts/build-model-cases.py")


def _files(root):
    for src in SOURCES:
        path = os.path.join(root, src)
        if os.path.isfile(path):
            yield src
        for d, dirs, files in os.walk(path):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            for f in sorted(files):
                if not f.endswith(".pyc"):
                    yield os.path.relpath(os.path.join(d, f), root)


def digest(root=ROOT):
    """16 hex digits of the SHA-256 over the sources' paths and contents."""
    h = hashlib.sha256()
    for rel in _files(root):
        h.update(rel.encode() + b"\0")
        with open(os.path.join(root, rel), "rb") as f:
            h.update(f.read())
        h.update(b"\0")
    return h.hexdigest()[:16]


def built_from(root=ROOT):
    """The manifests' ``built_from``: digest and (where git is) commit."""
    commit = None
    try:
        r = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"],
                           capture_output=True, text=True, timeout=30)
        if r.returncode == 0:
            commit = r.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {"digest": digest(root), "commit": commit}


def check(cases, root=ROOT):
    """Messages naming each manifest of ``cases`` not built from this
    tree's sources (empty: all current)."""
    here = digest(root)
    problems = []
    for rel in ("manifest.json", os.path.join("models", "models.json")):
        path = os.path.join(cases, rel)
        if not os.path.isfile(path):
            continue
        try:
            with open(path) as f:
                made = json.load(f).get("built_from") or {}
        except (OSError, ValueError) as e:
            problems.append(f"{path}: unreadable ({e})")
            continue
        if made.get("digest") != here:
            what = (f"sources {made.get('digest')} (commit {made.get('commit') or '?'})"
                    if made.get("digest") else "sources it does not record")
            problems.append(f"{path} was built from {what}, this tree's are {here}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", metavar="CASES_DIR")
    args = ap.parse_args()
    if not args.check:
        print(digest())
        return 0
    problems = check(args.check)
    for p in problems:
        print(f"stale cases: {p}", file=sys.stderr)
    if problems:
        print("rebuild them with scripts/build-gpu-cases.py (and "
              "scripts/build-model-cases.py), or set KGRAPH_ALLOW_STALE_CASES=1",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
