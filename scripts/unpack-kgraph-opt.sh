#!/usr/bin/env bash
# Unpacks the static kgraph-opt made by scripts/build-static-kgraph-opt.sh, on
# a machine with no LLVM/MLIR (the GPU machine):
#   scripts/unpack-kgraph-opt.sh ARCHIVE [DEST]     (DEST default: .kgraph-opt)
# DEST/bin/kgraph-opt then runs as is, linking DEST/nvvm/libdevice/libdevice.10.bc
# when the machine has no CUDA toolkit with libdevice; the script prints its
# path (e.g. export KGRAPH_OPT=$(scripts/unpack-kgraph-opt.sh ...)). Uses
# Python's tarfile/lzma only, so no xz or zstd binary is needed. The same in
# Python:
#   import tarfile; tarfile.open(ARCHIVE).extractall(DEST, filter="tar")
set -euo pipefail
archive=${1:?usage: unpack-kgraph-opt.sh ARCHIVE [DEST]}
dest=${2:-.kgraph-opt}
python=${PYTHON:-python3}
"$python" - "$archive" "$dest" <<'EOF'
import os
import shutil
import sys
import tarfile

archive, dest = sys.argv[1], sys.argv[2]
# The archive holds one folder, kgraph-opt/ (bin/, nvvm/libdevice/); its
# contents become DEST's, replacing an older unpacked copy.
tmp = dest + ".unpack-tmp"
shutil.rmtree(tmp, ignore_errors=True)
with tarfile.open(archive, "r:xz") as tar:
    names = tar.getnames()
    if any(n != "kgraph-opt" and not n.startswith("kgraph-opt/") for n in names):
        sys.exit(f"unpack-kgraph-opt.sh: {archive} is not a kgraph-opt package")
    if hasattr(tarfile, "tar_filter"):  # extraction filters: 3.12+, backports
        tar.extractall(tmp, filter="tar")
    else:
        tar.extractall(tmp)
shutil.rmtree(dest, ignore_errors=True)
os.replace(os.path.join(tmp, "kgraph-opt"), dest)
os.rmdir(tmp)
exe = os.path.join(dest, "bin", "kgraph-opt")
if not os.access(exe, os.X_OK):
    sys.exit(f"unpack-kgraph-opt.sh: {exe} is missing or not executable")
print(os.path.abspath(exe))
EOF
