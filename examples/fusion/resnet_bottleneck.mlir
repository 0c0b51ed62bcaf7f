// A ResNet-50 bottleneck block (f16, nhwc, batch 8, 56x56): 1x1 conv + bias +
// relu, 3x3 conv + bias + relu, 1x1 conv + bias, the residual add of the
// block input, relu.
//
//   kgraph-opt --fuse --tile=sm_90a examples/fusion/resnet_bottleneck.mlir -o block.ptx
//
// compiles to 3 kernels: each convolution is an implicit GEMM whose bias,
// residual add and relu run on the accumulators before the one store.
func.func @main(%x: tensor<8x56x56x256xf16>,
                %w1: tensor<64x1x1x256xf16>, %b1: tensor<64xf16>,
                %w2: tensor<64x3x3x64xf16>, %b2: tensor<64xf16>,
                %w3: tensor<256x1x1x64xf16>, %b3: tensor<256xf16>)
    -> tensor<8x56x56x256xf16> {
  %c1 = kgraph.conv2d %x, %w1 layout = nhwc : tensor<8x56x56x256xf16>, tensor<64x1x1x256xf16> -> tensor<8x56x56x64xf16>
  %a1 = kgraph.add %c1, %b1 : tensor<8x56x56x64xf16>, tensor<64xf16>
  %r1 = kgraph.relu %a1 : tensor<8x56x56x64xf16>
  %c2 = kgraph.conv2d %r1, %w2 layout = nhwc padding = [1, 1, 1, 1] : tensor<8x56x56x64xf16>, tensor<64x3x3x64xf16> -> tensor<8x56x56x64xf16>
  %a2 = kgraph.add %c2, %b2 : tensor<8x56x56x64xf16>, tensor<64xf16>
  %r2 = kgraph.relu %a2 : tensor<8x56x56x64xf16>
  %c3 = kgraph.conv2d %r2, %w3 layout = nhwc : tensor<8x56x56x64xf16>, tensor<256x1x1x64xf16> -> tensor<8x56x56x256xf16>
  %a3 = kgraph.add %c3, %b3 : tensor<8x56x56x256xf16>, tensor<256xf16>
  %s = kgraph.add %a3, %x : tensor<8x56x56x256xf16>, tensor<8x56x56x256xf16>
  %r3 = kgraph.relu %s : tensor<8x56x56x256xf16>
  return %r3 : tensor<8x56x56x256xf16>
}
