"""python_prefix.py PREFIX WORKDIR GRAPH: a Python user of an installed
prefix (test/Embedding/python-package.test). Makes a virtualenv (system
site-packages: numpy), adds PREFIX's package folder to it once with a .pth
file (the README's install step), then, from WORKDIR and with an empty
environment, compiles GRAPH with the kgraph-opt the package finds and loads
the plan; prints what it found."""

import os
import subprocess
import sys

prefix, work, graph = (os.path.abspath(a) for a in sys.argv[1:4])
venv = os.path.join(work, "venv")
subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                venv], check=True)
py = os.path.join(venv, "bin", "python")
site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                      capture_output=True, text=True, check=True).stdout.strip()
with open(os.path.join(site, "kgraph-prefix.pth"), "w") as f:
    f.write(os.path.join(prefix, "lib", "python3", "site-packages") + "\n")
user = f"""
import os, kgraph
opt = kgraph.find_tool("kgraph-opt")
print("package:", os.path.relpath(kgraph.__file__, {prefix!r}))
print("kgraph-opt:", os.path.relpath(opt, {prefix!r}))
from kgraph.tools import run_tool
run_tool("kgraph-opt", ["--fuse", "--tile=sm_80", {graph!r}, "-o", "out.ptx"])
prog = kgraph.load("out.plan.json")
print("loaded:", prog.name, [b.describe() for b in prog.inputs], "->",
      [b.describe() for b in prog.outputs])
"""
r = subprocess.run([py, "-c", user], cwd=work, env={}, capture_output=True, text=True)
sys.stdout.write(r.stdout)
sys.stderr.write(r.stderr)
sys.exit(r.returncode)
