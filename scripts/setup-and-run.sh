#!/usr/bin/env bash
# From a fresh Debian 12 machine: install, build, and compile the shipped
# examples (and the JSON graphs of examples/graphs, imported with
# kgraph-translate) with fusion (kgraph-opt --fuse --tile=<target>) to PTX and launch
# plans (README command 1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KGRAPH_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" kgraph-opt kgraph-translate
out=$build/examples
mkdir -p "$out"
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
echo
# JSON graphs (docs/graph-json.md) are imported with kgraph-translate first.
for graph in "$root"/examples/graphs/*.json; do
  "$build/bin/kgraph-translate" --import-graph-json "$graph" \
    -o "$out/$(basename "$graph" .json).mlir" 2> /dev/null
done
for example in "$root"/examples/*/*.mlir "$out"/*.mlir; do
  [ -e "$example" ] || continue
  name=$(basename "$example" .mlir)
  for target in sm_80 sm_90a; do
    ptx=$out/$name.$target.ptx
    "$build/bin/kgraph-opt" --fuse --tile=$target "$example" -o "$ptx"
    kernels=$(grep -c '^\.visible \.entry' "$ptx")
    line="$name ($target): $kernels kernels -> $ptx, plan ${ptx%.ptx}.plan.json"
    if [ -x "$ptxas" ]; then
      regs=$("$ptxas" -arch=$target -v "$ptx" -o /dev/null 2>&1 | grep -o 'Used [0-9]* registers' | sort -t' ' -k2 -n | tail -1)
      line="$line; ptxas OK (max ${regs#Used })"
    fi
    echo "$line"
  done
done
echo
echo "Run a plan on a GPU from Python:"
echo "  PYTHONPATH=$root/python python3 -c \"import kgraph, torch; p = kgraph.load('$out/chain.sm_90a.plan.json'); ...\""
echo "(docs/runtime.md). Stages: kgraph-opt --fuse --tile=sm_80 --emit=tiled|gpu|nvvm <file> prints the IR;"
echo "--fuse-report says which ops fused into each kernel and why others were left alone (docs/fusion.md)."
