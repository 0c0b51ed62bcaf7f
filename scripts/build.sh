#!/usr/bin/env bash
# Configures and builds kgraph into ${KGRAPH_BUILD_DIR:-build} with ninja and
# ccache, linking against libMLIR.so.
#   KGRAPH_COMPILER=clang (default): clang-22 and lld.
#   KGRAPH_COMPILER=gcc: Debian's default gcc/g++ (12), still linking with lld.
#   KGRAPH_SANITIZE=address,undefined (default: none): sanitizers to build
#     with (CMakeLists.txt), at -O0 with assertions on, so an assertion in
#     kgraph's code or in MLIR's inline headers fails too. -O0 because g++
#     spends 2-3x longer on kgraph's MLIR-heavy sources at -O1/-O2 (the
#     lowering files take 4-5 minutes each there), which CI cannot afford.
# They only take effect when the build folder is configured (first run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KGRAPH_BUILD_DIR:-$root/build}
compiler=${KGRAPH_COMPILER:-clang}
sanitize=${KGRAPH_SANITIZE:-}
case $compiler in
  clang) cc=clang-22 cxx=clang++-22 ;;
  gcc) cc=gcc cxx=g++ ;;
  *) echo "build.sh: KGRAPH_COMPILER must be clang or gcc, not '$compiler'" >&2; exit 1 ;;
esac
if [ ! -f "$build/build.ninja" ]; then
  extra=()
  if [ -n "$sanitize" ]; then
    extra+=(-DKGRAPH_SANITIZE="$sanitize"
            -DCMAKE_C_FLAGS_RELEASE="-O0"
            -DCMAKE_CXX_FLAGS_RELEASE="-O0")
  fi
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    "${extra[@]}"
fi
ninja -C "$build" "$@"
