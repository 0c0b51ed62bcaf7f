"""Finding and running the compiler's command-line tools from Python.

``kgraph-opt`` and ``kgraph-translate`` are looked up, in order, in the
environment variable (``$KGRAPH_OPT``, ``$KGRAPH_TRANSLATE``), in the
install prefix's ``bin/`` (a package ``cmake --install`` put there, which
carries ``_prefix.py``), beside the package (``<package>/bin/``, and
``build/bin/`` of the source tree the package lives in), and on ``PATH``.
"""

import os
import shutil
import subprocess

from .errors import CompileError

_ENV = {"kgraph-opt": "KGRAPH_OPT", "kgraph-translate": "KGRAPH_TRANSLATE"}
_HERE = os.path.dirname(os.path.abspath(__file__))


def find_tool(name):
    """The path of tool ``name`` ("kgraph-opt" or "kgraph-translate");
    CompileError naming every place looked at when there is none."""
    env = _ENV.get(name)
    tried = []
    if env and os.environ.get(env):
        p = os.environ[env]
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
        raise CompileError(f"${env} is {p!r}, which is not an executable file")
    if env:
        tried.append(f"${env} (unset)")
    dirs = [os.path.join(_HERE, "bin"),
            os.path.join(_HERE, "..", "..", "build", "bin")]
    try:  # written by cmake --install: the prefix's bin/
        from . import _prefix
        dirs.insert(0, os.path.join(_HERE, _prefix.BIN))
    except ImportError:
        pass
    for d in dirs:
        p = os.path.abspath(os.path.join(d, name))
        tried.append(p)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    p = shutil.which(name)
    if p:
        return p
    tried.append("PATH")
    raise CompileError(f"{name} not found (looked at {', '.join(tried)}); build kgraph "
                       f"or set ${env}")


def run_tool(name, args, timeout=None, with_stderr=False):
    """Runs tool ``name`` with ``args``; returns its stdout (and stderr with
    ``with_stderr``), CompileError with the command line and stderr when it
    fails."""
    exe = find_tool(name)
    cmd = [exe] + [str(a) for a in args]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CompileError(f"{' '.join(cmd)}: timed out after {timeout} s") from None
    if r.returncode != 0:
        err = r.stderr.strip() or r.stdout.strip()
        raise CompileError(f"{' '.join(cmd)} failed (exit {r.returncode}):\n{err}")
    return (r.stdout, r.stderr) if with_stderr else r.stdout
