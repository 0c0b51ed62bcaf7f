// An elementwise chain with broadcasting: out = gelu(x * 1.5 + bias) * y + z,
// the chain of ../shared/docs/h200-anchors.md with a per-column bias.
//
//   kgraph-opt --fuse --tile=sm_80 examples/elementwise/chain.mlir -o chain.ptx
//
// writes chain.ptx (one kernel for the five ops; five without --fuse) and
// chain.plan.json.
func.func @main(%x: tensor<4096x4096xf32>, %bias: tensor<4096xf32>,
                %y: tensor<4096x4096xf32>, %z: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %scale = arith.constant dense<1.5> : tensor<1xf32>
  %0 = kgraph.mul %x, %scale : tensor<4096x4096xf32>, tensor<1xf32>
  %1 = kgraph.add %0, %bias : tensor<4096x4096xf32>, tensor<4096xf32>
  %2 = kgraph.gelu %1 : tensor<4096x4096xf32>
  %3 = kgraph.mul %2, %y : tensor<4096x4096xf32>, tensor<4096x4096xf32>
  %4 = kgraph.add %3, %z : tensor<4096x4096xf32>, tensor<4096x4096xf32>
  return %4 : tensor<4096x4096xf32>
}
