#!/usr/bin/env bash
# Installs what building and testing kgraph needs on Debian 12 (as root):
# LLVM/MLIR 22 (llvm-22 has the llvm-objcopy lib/CAPI uses), clang and lld,
# ninja, ccache, the Python packages the tests use (torchvision and onnx for
# the importers' tests, matplotlib and tqdm for kgraph.tune's report plot
# and progress bar, pip and setuptools for the package's install test), and
# g++ (Debian's
# default; its libgcc-12-dev brings the ASan and UBSan runtimes libasan8 and
# libubsan1) for the sanitizer build of scripts/test.sh. Safe to run again.
set -euo pipefail
packages=(cmake ninja-build ccache zstd g++
          llvm-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 lld-22
          python3-numpy python3-pytest python3-torch python3-torchvision python3-onnx
          python3-matplotlib python3-tqdm python3-pip python3-setuptools)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "kgraph: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ! -x /usr/local/cuda/bin/ptxas ] && ! command -v ptxas >/dev/null; then
  cat >&2 <<'MSG'
kgraph: no ptxas found (looked on PATH and at /usr/local/cuda/bin/ptxas).
  The tests that assemble every emitted PTX need it, and scripts/test.sh fails
  without it. Get it from NVIDIA's CUDA toolkit: its apt repository's
  cuda-nvcc-<version> package installs /usr/local/cuda-<version>/bin/ptxas
  (link /usr/local/cuda to it, or put its bin/ on PATH); ptxas is one
  self-contained executable, so copying it from any CUDA 12.4+ install to
  /usr/local/cuda/bin works too. To run the tests without it anyway, set
  KGRAPH_ALLOW_NO_PTXAS=1 (the PTX checks are then not run).
MSG
fi
