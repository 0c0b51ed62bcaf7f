// RUN: kgraph-opt %s --split-input-file --verify-diagnostics --kgraph-tile=target=sm_80

// Groups that break the GEMM-group contract (GemmGroup.h).

func.func @two_anchors(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %m = kgraph.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    // expected-error @+1 {{'kgraph.matmul' op is a second kgraph.matmul/kgraph.conv2d in one GEMM kernel group; a group computes one}}
    %n = kgraph.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %s = kgraph.add %m, %n : tensor<64x64xf32>, tensor<64x64xf32>
    kgraph.yield %s : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @conv_prologue(%a: tensor<2x8x8x16xf32>, %w: tensor<16x1x1x16xf16>) -> tensor<2x8x8x16xf32> {
  %0 = kgraph.fused (%a, %w) : (tensor<2x8x8x16xf32>, tensor<16x1x1x16xf16>) -> tensor<2x8x8x16xf32> {
  ^bb0(%x: tensor<2x8x8x16xf32>, %f: tensor<16x1x1x16xf16>):
    // expected-error @+1 {{'kgraph.cast' op computes an operand of a kgraph.conv2d inside its kernel group; conv2d operands must be group inputs (only a matmul has a prologue)}}
    %h = kgraph.cast %x : tensor<2x8x8x16xf32> to tensor<2x8x8x16xf16>
    %c = kgraph.conv2d %h, %f layout = nhwc : tensor<2x8x8x16xf16>, tensor<16x1x1x16xf16> -> tensor<2x8x8x16xf32>
    kgraph.yield %c : tensor<2x8x8x16xf32>
  }
  return %0 : tensor<2x8x8x16xf32>
}

// -----

func.func @three_prologue_ops(%a: tensor<64x64xf32>, %b: tensor<64x64xf16>) -> tensor<64x64xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<64x64xf32>, tensor<64x64xf16>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf16>):
    %s = arith.constant dense<2.0> : tensor<f32>
    // expected-error @+1 {{'kgraph.mul' op is a third prologue op on operand A of the kgraph.matmul; at most two are fused}}
    %x1 = kgraph.mul %x, %s : tensor<64x64xf32>, tensor<f32>
    %x2 = kgraph.mul %x1, %s : tensor<64x64xf32>, tensor<f32>
    %x3 = kgraph.cast %x2 : tensor<64x64xf32> to tensor<64x64xf16>
    %m = kgraph.matmul %x3, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    kgraph.yield %m : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @scale_by_input(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>, %c: tensor<64xf16>) -> tensor<64x64xf32> {
  %0 = kgraph.fused (%a, %b, %c) : (tensor<64x64xf16>, tensor<64x64xf16>, tensor<64xf16>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>, %z: tensor<64xf16>):
    // expected-error @+1 {{'kgraph.mul' op is on the path to operand B of the kgraph.matmul but does not scale it by a splat constant}}
    %ys = kgraph.mul %y, %z : tensor<64x64xf16>, tensor<64xf16>
    %m = kgraph.matmul %x, %ys : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    kgraph.yield %m : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @other_prologue_op(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    // expected-error @+1 {{'kgraph.neg' op is on the path to operand A of the kgraph.matmul; a prologue holds only kgraph.cast and kgraph.mul by a splat constant, after a slice of a group input}}
    %xn = kgraph.neg %x : tensor<64x64xf16>
    %m = kgraph.matmul %xn, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    kgraph.yield %m : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @shared_prologue_value(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kgraph.fused (%a) : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>):
    // expected-error @+1 {{'kgraph.cast' op computes a prologue value of operand A of the kgraph.matmul that has other uses}}
    %h = kgraph.cast %x : tensor<64x64xf32> to tensor<64x64xf16>
    %m = kgraph.matmul %h, %h : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    kgraph.yield %m : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @non_elementwise_epilogue(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    %m = kgraph.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    // expected-error @+1 {{'kgraph.transpose' op cannot be fused into the epilogue of a GEMM kernel group: only elementwise ops and transposes, broadcasts and slices of group inputs can}}
    %t = kgraph.transpose %m, permutation = [1, 0] : tensor<64x64xf32>
    kgraph.yield %t : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @epilogue_changes_shape(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<2x64x64xf32>) -> tensor<2x64x64xf32> {
  %0 = kgraph.fused (%a, %b, %c) : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<2x64x64xf32>) -> tensor<2x64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>, %z: tensor<2x64x64xf32>):
    %m = kgraph.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    // expected-error @+1 {{'kgraph.add' op result type 'tensor<2x64x64xf32>' does not have the shape of the GEMM result 'tensor<64x64xf32>'; a GEMM epilogue computes on the GEMM's elements}}
    %s = kgraph.add %m, %z : tensor<64x64xf32>, tensor<2x64x64xf32>
    kgraph.yield %s : tensor<2x64x64xf32>
  }
  return %0 : tensor<2x64x64xf32>
}

// -----

func.func @non_splat_constant(%a: tensor<4x64xf32>, %b: tensor<64x2xf32>) -> tensor<4x2xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<4x64xf32>, tensor<64x2xf32>) -> tensor<4x2xf32> {
  ^bb0(%x: tensor<4x64xf32>, %y: tensor<64x2xf32>):
    %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %m = kgraph.matmul %x, %y : tensor<4x64xf32>, tensor<64x2xf32> -> tensor<4x2xf32>
    // expected-error @+1 {{'kgraph.add' op has an operand that is neither a group input, a splat constant nor an epilogue value}}
    %s = kgraph.add %m, %c : tensor<4x2xf32>, tensor<2xf32>
    kgraph.yield %s : tensor<4x2xf32>
  }
  return %0 : tensor<4x2xf32>
}

// -----

func.func @independent_op(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64xf32>) -> tensor<64x64xf32> {
  %0 = kgraph.fused (%a, %b, %c) : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>, %z: tensor<64xf32>):
    // expected-error @+1 {{'kgraph.exp' op result type 'tensor<64xf32>' does not have the shape of the GEMM result}}
    %e = kgraph.exp %z : tensor<64xf32>
    %m = kgraph.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %s = kgraph.add %m, %e : tensor<64x64xf32>, tensor<64xf32>
    kgraph.yield %s : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @independent_full_shape_op(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kgraph.fused (%a, %b, %c) : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>, %z: tensor<64x64xf32>):
    %m = kgraph.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    // expected-error @+1 {{'kgraph.exp' op does not depend on the kgraph.matmul/kgraph.conv2d result: the elementwise ops of a GEMM group are its epilogue (or a matmul operand's prologue)}}
    %e = kgraph.exp %z : tensor<64x64xf32>
    %s = kgraph.add %m, %e : tensor<64x64xf32>, tensor<64x64xf32>
    kgraph.yield %s : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @two_results(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  // expected-error @+1 {{'kgraph.fused' op is a GEMM kernel group and must yield exactly one value}}
  %0:2 = kgraph.fused (%a, %b) : (tensor<64x64xf32>, tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    %m = kgraph.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %r = kgraph.relu %m : tensor<64x64xf32>
    kgraph.yield %m, %r : tensor<64x64xf32>, tensor<64x64xf32>
  }
  return %0#0, %0#1 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

func.func @anchor_yielded_with_epilogue(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    // expected-error @+1 {{'kgraph.matmul' op result is yielded although the group has an epilogue; a GEMM group yields only its last epilogue value}}
    %m = kgraph.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %r = kgraph.relu %m : tensor<64x64xf32>
    kgraph.yield %m : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @yields_an_input(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kgraph.fused' op is a GEMM kernel group and must yield its kgraph.matmul/kgraph.conv2d result or an epilogue value}}
  %0 = kgraph.fused (%a, %b) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    %m = kgraph.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %r = kgraph.relu %m : tensor<64x64xf32>
    kgraph.yield %x : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @shared_operand_slice(%a: tensor<64x128xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = kgraph.fused (%a, %b) : (tensor<64x128xf16>, tensor<64x64xf16>) -> tensor<64x64xf16> {
  ^bb0(%x: tensor<64x128xf16>, %y: tensor<64x64xf16>):
    // expected-error @+1 {{'kgraph.slice' op is the slice operand A of the kgraph.matmul reads in place, and has other uses in its group}}
    %s = kgraph.slice %x offsets = [0, 64] sizes = [64, 64] strides = [1, 1] : tensor<64x128xf16>
    %m = kgraph.matmul %s, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
    %r = kgraph.add %m, %s : tensor<64x64xf16>, tensor<64x64xf16>
    kgraph.yield %r : tensor<64x64xf16>
  }
  return %0 : tensor<64x64xf16>
}
