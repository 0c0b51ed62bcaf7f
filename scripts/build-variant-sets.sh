#!/usr/bin/env bash
# Configuration variants of the benchmark graphs issue 12 still has to
# measure, one folder each under CASES/variants, for bench/bench_plans.py:
#   scripts/build-variant-sets.sh KGRAPH_OPT CASES   # after build-gpu-cases.py --suite graphs
#   # on the GPU, per folder (the default first, then its variants):
#   python3 bench/bench_plans.py CASES/variants/dw/a_default.plan.json CASES/variants/dw/v*.plan.json
# Folders: stem (ResNet-50's stem at batch 256 as written, with
# --pad-conv-channels=8, with --space-to-depth-convs and pinned conv
# configs of it: cp.async stages and tiles; TMA is out, wgmma's K-major A
# needs tile_k 64 and TMA's im2col one tap, 16 channels, per box), dw (the 3x3 depthwise conv: strips, widths, grids), st (the
# edge stencil chain: tiles and rows per thread), ln and sm (layer norm and
# softmax reduce configs), pool (the max pool's grid).
set -euo pipefail
opt=${1:?usage: build-variant-sets.sh KGRAPH_OPT CASES}
cases=${2:?usage: build-variant-sets.sh KGRAPH_OPT CASES}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$cases/variants
pin() { /usr/bin/python3 "$root/scripts/pin-configs.py" "$opt" "$@"; }
need() { [ -f "$cases/$1.mlir" ] || { echo "error: $cases/$1.mlir missing (build-gpu-cases.py --suite graphs)" >&2; exit 1; }; }

stem=stem_c3_f16_256x224x224
need $stem
mkdir -p "$out/stem"
"$opt" --fuse --tile=sm_90a "$cases/$stem.mlir" -o "$out/stem/a_default.ptx"
"$opt" --fuse --tile=sm_90a --space-to-depth-convs=false "$cases/$stem.mlir" -o "$out/stem/v_written.ptx"
"$opt" --fuse --tile=sm_90a --space-to-depth-convs=false --pad-conv-channels=8 "$cases/$stem.mlir" -o "$out/stem/v_pad8.ptx"
wg="instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, group_m = 8"
pin "$cases/$stem.mlir" "$out/stem" --flags=--space-to-depth-convs --family matmul_config --prefix v_s2d_ \
  "#kgraph.matmul_config<tile_m = 256, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, $wg>" \
  "#kgraph.matmul_config<tile_m = 256, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, $wg>" \
  "#kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 4, warps_n = 1, stages = 4, $wg>" \
  "#kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 4, warps_n = 1, stages = 3, $wg>" \
  "#kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 32, warps_m = 4, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>"

dw=window_conv_f16_32x56x56x128_f128_k3_g128_s11_p1111_d11
need $dw
w() { echo "#kgraph.window_config<vector_width = $1, block_x = $2, block_y = $3, grid_size = $4, strip = $5>"; }
pin "$cases/$dw.mlir" "$out/dw" "$(w 8 16 16 6272 1)" "$(w 8 16 16 2091 1)" "$(w 8 16 16 3136 2)" \
  "$(w 8 16 16 784 4)" "$(w 8 16 8 1568 4)" "$(w 4 32 8 784 4)" "$(w 8 16 16 784 8)" "$(w 4 32 8 1568 8)"

st=stencil_edges_f32_nchw_8x4096x4096
need $st
s() { echo "#kgraph.stencil_config<tile_h = $1, tile_w = $2, block_x = $3, block_y = $4, rows_per_thread = $5>"; }
pin "$cases/$st.mlir" "$out/st" "$(s 64 64 64 4 8)" "$(s 64 64 64 2 8)" "$(s 64 128 64 4 8)" \
  "$(s 64 128 64 4 4)" "$(s 128 64 64 4 8)" "$(s 32 128 128 2 4)" "$(s 128 128 128 2 8)"

r() { echo "#kgraph.reduce_config<threads_per_row = $1, rows_per_block = $2, vector_width = 4, grid_size = $3, row_vectors = $4>"; }
ln=reduce_layer_norm_f32_8192x1024
need $ln
pin "$cases/$ln.mlir" "$out/ln" "$(r 32 4 2048 8)" "$(r 64 4 2048 4)" "$(r 128 1 8192 2)" "$(r 128 2 4096 2)" \
  "$(r 256 1 8192 1)" "$(r 16 8 1024 16)" "$(r 32 8 256 8)" "$(r 32 8 512 8)" "$(r 128 4 512 2)" "$(r 64 2 1024 4)"
sm=reduce_softmax_f32_4096x4096
need $sm
pin "$cases/$sm.mlir" "$out/sm" "$(r 128 1 4096 8)" "$(r 512 1 4096 2)" "$(r 64 4 1024 16)" "$(r 1024 1 4096 1)" \
  "$(r 256 1 1024 4)" "$(r 256 2 1024 4)" "$(r 128 2 1024 8)"

pool=window_pool_max_f16_256x112x112x64_k33_s22_p1111
need $pool
p() { echo "#kgraph.window_config<vector_width = 8, block_x = 8, block_y = 32, grid_size = $1>"; }
pin "$cases/$pool.mlir" "$out/pool" "$(p 8448)" "$(p 25088)"
echo "wrote $out/{stem,dw,st,ln,sm,pool}"
