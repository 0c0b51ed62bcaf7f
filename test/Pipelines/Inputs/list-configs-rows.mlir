// Multi-reduction groups: a softmax over odd rows (scalar elements), a
// layer norm in f16 (vectors of 8) and a max-subtract over rows too long to
// hold in registers.
func.func @main(%x: tensor<37x1001xf32>, %y: tensor<9x64xf16>, %g: tensor<64xf16>,
                %z: tensor<128x131072xf32>) -> (tensor<37x1001xf32>, tensor<9x64xf16>, tensor<128x131072xf32>) {
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<37x1001xf32>
  %d = kgraph.sub %x, %m : tensor<37x1001xf32>, tensor<37x1xf32>
  %e = kgraph.exp %d : tensor<37x1001xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<37x1001xf32>
  %o = kgraph.div %e, %s : tensor<37x1001xf32>, tensor<37x1xf32>
  %mu = kgraph.reduce mean %y axes = [1] keep_dims : tensor<9x64xf16>
  %c = kgraph.sub %y, %mu : tensor<9x64xf16>, tensor<9x1xf16>
  %sq = kgraph.mul %c, %c : tensor<9x64xf16>, tensor<9x64xf16>
  %v = kgraph.reduce mean %sq axes = [1] keep_dims : tensor<9x64xf16>
  %eps = arith.constant dense<1.0e-5> : tensor<f16>
  %ve = kgraph.add %v, %eps : tensor<9x1xf16>, tensor<f16>
  %r = kgraph.rsqrt %ve : tensor<9x1xf16>
  %n = kgraph.mul %c, %r : tensor<9x64xf16>, tensor<9x1xf16>
  %ng = kgraph.mul %n, %g : tensor<9x64xf16>, tensor<64xf16>
  %zm = kgraph.reduce max %z axes = [1] keep_dims : tensor<128x131072xf32>
  %zd = kgraph.sub %z, %zm : tensor<128x131072xf32>, tensor<128x1xf32>
  return %o, %ng, %zd : tensor<37x1001xf32>, tensor<9x64xf16>, tensor<128x131072xf32>
}
