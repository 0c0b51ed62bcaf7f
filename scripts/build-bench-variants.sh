#!/usr/bin/env bash
# Compiles launch-configuration variants of the elementwise benchmarks (add of
# two 64M f32 tensors, exp of one) with the configuration pinned in the IR,
# so one GPU run can compare them (bench/bench_variants.py).
#
#   scripts/build-bench-variants.sh KGRAPH_OPT OUT_DIR [TARGET]
set -eu
opt=$1 out=$2 target=${3:-sm_90a}
mkdir -p "$out"
n=67108864
cat > "$out/add.mlir" <<MLIR
func.func @main(%a: tensor<${n}xf32>, %b: tensor<${n}xf32>) -> tensor<${n}xf32> {
  %0 = kgraph.add %a, %b : tensor<${n}xf32>, tensor<${n}xf32>
  return %0 : tensor<${n}xf32>
}
MLIR
cat > "$out/exp.mlir" <<MLIR
func.func @main(%a: tensor<${n}xf32>) -> tensor<${n}xf32> {
  %0 = kgraph.exp %a : tensor<${n}xf32>
  return %0 : tensor<${n}xf32>
}
MLIR
for op in add exp; do
  "$opt" --tile="$target" --emit=tiled "$out/$op.mlir" -o "$out/$op.tiled.mlir"
  for cfg in 256:1056:1 256:1056:2 256:1056:4 256:2112:1 256:2112:2 256:4224:1 \
             512:528:2 128:2112:2 256:16896:1 256:33792:1 256:65536:1; do
    IFS=: read -r block grid unroll <<<"$cfg"
    name="${op}_b${block}_g${grid}_u${unroll}"
    sed -E "s/block_size = [0-9]+, vector_width = ([0-9]+), unroll = [0-9]+, grid_size = [0-9]+/block_size = $block, vector_width = \1, unroll = $unroll, grid_size = $grid/" \
      "$out/$op.tiled.mlir" > "$out/$name.mlir"
    "$opt" --tile="$target" "$out/$name.mlir" -o "$out/$name.ptx"
  done
done
ls "$out"/*.plan.json | wc -l
