#!/usr/bin/env bash
# Builds a fully static kgraph-opt (static MLIR and LLVM with only the NVPTX
# target, static libstdc++ and glibc: no shared library at all) and packs it
# with libdevice for a GPU machine that has no LLVM/MLIR:
#   scripts/build-static-kgraph-opt.sh [OUT_DIR]     (default: build-static/dist)
# writes OUT_DIR/kgraph-opt-static.tar.xz holding
#   kgraph-opt/bin/kgraph-opt
#   kgraph-opt/nvvm/libdevice/libdevice.10.bc
# kgraph-opt looks for libdevice in ../nvvm/libdevice beside its bin/ folder
# when $CUDA_HOME/$CUDA_PATH/$CUDA_ROOT have none (lib/Pipelines/Pipelines.cpp),
# so the unpacked folder works as is. Unpack on the GPU machine with
# scripts/unpack-kgraph-opt.sh (xz through Python's lzma: no xz/zstd binary
# needed there). See docs/runtime.md.
#
# The build folder is ${KGRAPH_STATIC_BUILD_DIR:-build-static}, configured
# like scripts/build.sh's (same compiler and flags, so ccache serves the
# objects) plus -DKGRAPH_LINK_MLIR_DYLIB=OFF -DKGRAPH_STATIC=ON
# (cmake/KGraphStatic.cmake). Only the kgraph-opt target is built, with -j2 at
# nice 10 unless KGRAPH_STATIC_JOBS says otherwise. Needs libzstd-dev (the
# static libzstd.a), installed here if missing. Not part of scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KGRAPH_STATIC_BUILD_DIR:-$root/build-static}
out=${1:-$build/dist}
jobs=${KGRAPH_STATIC_JOBS:-2}
libdevice_src=${KGRAPH_LIBDEVICE:-}

if [ ! -f /usr/lib/x86_64-linux-gnu/libzstd.a ]; then
  echo "kgraph: installing libzstd-dev (static libzstd.a)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libzstd-dev
fi
if [ -z "$libdevice_src" ]; then
  for r in "${CUDA_HOME:-}" "${CUDA_PATH:-}" "${CUDA_ROOT:-}" /usr/local/cuda; do
    if [ -n "$r" ] && [ -f "$r/nvvm/libdevice/libdevice.10.bc" ]; then
      libdevice_src=$r/nvvm/libdevice/libdevice.10.bc
      break
    fi
  done
fi
if [ ! -f "$libdevice_src" ]; then
  echo "build-static-kgraph-opt.sh: no libdevice.10.bc (set KGRAPH_LIBDEVICE or CUDA_HOME)" >&2
  exit 1
fi

start=$(date +%s)
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DKGRAPH_LINK_MLIR_DYLIB=OFF -DKGRAPH_STATIC=ON
fi
nice -n 10 ninja -C "$build" -j"$jobs" kgraph-opt
built=$(date +%s)

exe=$build/bin/kgraph-opt
# Fully static: no PT_INTERP and no DT_NEEDED.
if readelf -d "$exe" | grep -q NEEDED || readelf -l "$exe" | grep -q INTERP; then
  echo "build-static-kgraph-opt.sh: $exe is not fully static:" >&2
  readelf -d "$exe" | grep NEEDED >&2 || true
  exit 1
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/kgraph-opt/bin" "$stage/kgraph-opt/nvvm/libdevice" "$out"
cp "$exe" "$stage/kgraph-opt/bin/kgraph-opt"
cp "$libdevice_src" "$stage/kgraph-opt/nvvm/libdevice/libdevice.10.bc"
# xz -9 with one thread (the machine is shared): Python's lzma/tarfile reads
# it, so the GPU side needs no xz binary.
tar -C "$stage" --owner=0 --group=0 --numeric-owner -cf - kgraph-opt |
  nice -n 10 xz -9 -T1 > "$out/kgraph-opt-static.tar.xz.tmp"
mv "$out/kgraph-opt-static.tar.xz.tmp" "$out/kgraph-opt-static.tar.xz"
done_at=$(date +%s)
echo "kgraph-opt (static): $(stat -c %s "$exe") bytes; $out/kgraph-opt-static.tar.xz: $(stat -c %s "$out/kgraph-opt-static.tar.xz") bytes"
echo "build $((built - start)) s, pack $((done_at - built)) s"
