"""scripts/case_digest.py: the digest follows the sources that decide the
kernels, and a case folder built from other sources is named stale."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(REPO, "scripts", "case_digest.py")


def _load():
    spec = importlib.util.spec_from_file_location("case_digest", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def tree(tmp_path):
    """A tree with one file in each kind of source, and one that is not."""
    for rel in ("lib/a.cpp", "include/a.h", "test/GPU/cases/c.py", "test/fuzz/f.py",
                "python/kgraph/importers/i.py", "docs/readme.md",
                "lib/__pycache__/x.pyc"):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(rel)
    return tmp_path


def test_digest_follows_the_sources(tree):
    cd = _load()
    d0 = cd.digest(str(tree))
    assert len(d0) == 16 and d0 == cd.digest(str(tree))
    (tree / "docs" / "readme.md").write_text("changed")  # not a source
    (tree / "lib" / "__pycache__" / "x.pyc").write_text("changed")
    assert cd.digest(str(tree)) == d0
    (tree / "lib" / "a.cpp").write_text("changed")
    d1 = cd.digest(str(tree))
    assert d1 != d0
    (tree / "lib" / "a.cpp").rename(tree / "lib" / "b.cpp")  # a rename too
    assert cd.digest(str(tree)) not in (d0, d1)


def test_check_names_stale_manifests(tree, tmp_path):
    cd = _load()
    cases = tmp_path / "cases"
    (cases / "models").mkdir(parents=True)
    here = cd.digest(str(tree))
    (cases / "manifest.json").write_text(json.dumps(
        {"built_from": {"digest": here, "commit": "abc"}}))
    assert cd.check(str(cases), str(tree)) == []
    (cases / "models" / "models.json").write_text(json.dumps({"cases": []}))
    (msg,) = cd.check(str(cases), str(tree))
    assert "models.json was built from sources it does not record" in msg
    (cases / "models" / "models.json").write_text(json.dumps(
        {"built_from": {"digest": "0" * 16, "commit": "v1-3-gdeadbee"}}))
    (msg,) = cd.check(str(cases), str(tree))
    assert f"built from sources {'0' * 16} (commit v1-3-gdeadbee), this tree's are {here}" in msg
    (cases / "manifest.json").write_text("{not json")
    assert any("unreadable" in m for m in cd.check(str(cases), str(tree)))


def test_command_line(tmp_path):
    r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
    assert r.returncode == 0 and len(r.stdout.strip()) == 16
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "manifest.json").write_text(json.dumps({"built_from": {"digest": "x"}}))
    r = subprocess.run([sys.executable, SCRIPT, "--check", str(cases)],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "stale cases:" in r.stderr and "KGRAPH_ALLOW_STALE_CASES=1" in r.stderr
    (cases / "manifest.json").write_text(json.dumps(
        {"built_from": {"digest": _load().digest()}}))
    r = subprocess.run([sys.executable, SCRIPT, "--check", str(cases)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
