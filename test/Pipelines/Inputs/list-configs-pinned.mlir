func.func @main(%a: tensor<1000xf32>) -> tensor<1000xf32> {
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.elementwise_config<block_size = 128, vector_width = 2, unroll = 2, grid_size = 3>} : (tensor<1000xf32>) -> tensor<1000xf32> {
  ^bb0(%x: tensor<1000xf32>):
    %r = kgraph.relu %x : tensor<1000xf32>
    kgraph.yield %r : tensor<1000xf32>
  }
  return %0 : tensor<1000xf32>
}
