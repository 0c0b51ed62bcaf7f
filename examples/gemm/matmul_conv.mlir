// A GEMM and a ResNet-50 3x3 convolution (f16 NHWC, f32 accumulation).
//
//   kgraph-opt --tile=sm_90a examples/gemm/matmul_conv.mlir -o gemm.ptx
//
// writes gemm.ptx (two kernels: cp.async pipelines, ldmatrix, mma.sync) and
// gemm.plan.json. `--tile=sm_90a --emit=tiled` shows the configurations the
// tiling model chose (#kgraph.matmul_config).
func.func @main(%a: tensor<2048x1024xf16>, %b: tensor<1024x4096xf16>,
                %x: tensor<8x56x56x64xf16>, %w: tensor<64x3x3x64xf16>)
    -> (tensor<2048x4096xf32>, tensor<8x56x56x64xf32>) {
  %0 = kgraph.matmul %a, %b : tensor<2048x1024xf16>, tensor<1024x4096xf16> -> tensor<2048x4096xf32>
  %1 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1]
      : tensor<8x56x56x64xf16>, tensor<64x3x3x64xf16> -> tensor<8x56x56x64xf32>
  return %0, %1 : tensor<2048x4096xf32>, tensor<8x56x56x64xf32>
}
