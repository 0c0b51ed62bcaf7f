"""The Python package installs as users expect (issue 15, in part): pip
builds it offline from python/ (pyproject.toml, Debian's setuptools), its
console scripts kgraph-import and kgraph-tune run from outside the checkout
with nothing but the install on sys.path, and its version is the CMake
project's."""

import os
import re
import shutil
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _cmake_version():
    text = open(os.path.join(REPO, "CMakeLists.txt")).read()
    return re.search(r"project\(kgraph\b[^)]*VERSION\s+([0-9.]+)", text).group(1)


def test_pip_install_and_console_scripts(tmp_path):
    # Build from a copy: pip writes build/ and *.egg-info beside the sources.
    src = tmp_path / "src"
    shutil.copytree(os.path.join(REPO, "python"), src,
                    ignore=shutil.ignore_patterns("tests", "__pycache__", "build",
                                                  "*.egg-info"))
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                        "--no-build-isolation", "--no-deps", "--no-index",
                        "--target", str(target), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # Outside the checkout, a clean environment: only the install on the path.
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(target)}
    version = _cmake_version()
    for script, verb in (("kgraph-import", None), ("kgraph-tune", "prepare")):
        exe = target / "bin" / script
        assert exe.is_file(), sorted(os.listdir(target / "bin"))
        r = subprocess.run([sys.executable, str(exe), "--version"], cwd=outside,
                           env=env, capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.strip() == f"{script} {version}", r.stderr
        args = [verb, "--help"] if verb else ["--help"]
        r = subprocess.run([sys.executable, str(exe), *args], cwd=outside, env=env,
                           capture_output=True, text=True)
        assert r.returncode == 0 and "usage:" in r.stdout, r.stderr
    r = subprocess.run([sys.executable, "-c",
                        "import kgraph, kgraph.tune; print(kgraph.__version__, kgraph.__file__)"],
                       cwd=outside, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got_version, where = r.stdout.split()
    assert got_version == version and where.startswith(str(target))
    # A useful error, not a traceback, when the compiler is not to be found.
    r = subprocess.run([sys.executable, str(target / "bin" / "kgraph-tune"), "prepare",
                        str(outside / "none.mlir"), "--target", "sm_90a", "-o",
                        str(outside / "u")], cwd=outside, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "kgraph-opt not found" in r.stderr or "no such file" in r.stderr, r.stderr


def test_versions_agree(tmp_path):
    """kgraph-opt --version, the plans' producer, kgraph.__version__ and the
    CMake project version are one version."""
    import kgraph
    opt = kgraph.find_tool("kgraph-opt")
    version = _cmake_version()
    assert kgraph.__version__ == version
    r = subprocess.run([opt, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and f"kgraph {version}\n" in r.stdout, r.stdout
    graph = os.path.join(REPO, "examples", "elementwise", "chain.mlir")
    for tile, name in (("sm_80", "one"), ("sm_80,sm_90a", "bundle")):
        out = tmp_path / f"{name}.ptx"
        subprocess.run([opt, "--fuse", f"--tile={tile}", graph, "-o", str(out)],
                       check=True, capture_output=True)
        plan = kgraph.load_plan(str(tmp_path / f"{name}.plan.json"))
        assert plan.producer == f"kgraph {version}"
