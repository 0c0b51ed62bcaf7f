"""python_prefix.py PREFIX WORKDIR GRAPH FAKE_LIBCUDA_C: a Python user of an
installed prefix (test/Embedding/python-package.test). Makes a virtualenv
(system site-packages: numpy), adds PREFIX's package folder to it once with a
.pth file (the README's install step), then, from WORKDIR and with an empty
environment, compiles GRAPH with the kgraph-opt the package finds, loads the
plan and runs it on zero inputs through the fake driver built from
FAKE_LIBCUDA_C (selected with KGRAPH_LIBCUDA; FAKE_CUDA_ANY_KERNEL makes it
log the plan's kernels instead of refusing them: it cannot run them, so the
outputs' values are not checked); prints what it found and the launches the
driver saw."""

import os
import subprocess
import sys

prefix, work, graph, fake_c = (os.path.abspath(a) for a in sys.argv[1:5])
fake_so = os.path.join(work, "libfakecuda.so")
subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", fake_so, fake_c], check=True)
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
import ctypes, numpy as np
from kgraph.dtypes import DTYPES
outs = prog(*[np.zeros(b.shape, dtype=DTYPES[b.dtype].numpy) for b in prog.inputs])
outs = outs if isinstance(outs, (list, tuple)) else [outs]
print("ran:", [f"{{o.dtype}}{{list(o.shape)}}" for o in outs])
fake = ctypes.CDLL(os.environ["KGRAPH_LIBCUDA"])
fake.fake_launch.restype = ctypes.c_char_p
for i in range(fake.fake_num_launches()):
    print("launch:", fake.fake_launch(i).decode().split(" stream=")[0])
"""
r = subprocess.run([py, "-c", user], cwd=work, env={"KGRAPH_LIBCUDA": fake_so, "FAKE_CUDA_ANY_KERNEL": "1"},
                   capture_output=True, text=True)
sys.stdout.write(r.stdout)
sys.stderr.write(r.stderr)
sys.exit(r.returncode)
