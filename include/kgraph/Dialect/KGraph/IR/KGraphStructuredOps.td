//===- KGraphStructuredOps.td - matmul, conv2d, pool2d, reduce -*- tablegen -*-===//
//
// The compute-heavy ops of kgraph: GEMM, 2-D convolution, 2-D pooling and
// reductions. matmul and conv2d write their result type explicitly because
// the accumulator type is a choice (f16 x f16 may produce f16 or f32);
// pool2d and reduce infer theirs.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHSTRUCTUREDOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHSTRUCTUREDOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "kgraph/Dialect/KGraph/IR/KGraphAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

def KGraph_MatmulOp : KGraph_Op<"matmul", [Pure]> {
  let summary = "matrix multiplication, plain or batched";
  let description = [{
    Multiplies `lhs` by `rhs`. Rank 2 computes `[M, K] x [K, N] -> [M, N]`;
    rank 3 computes a batch of independent products
    `[B, M, K] x [B, K, N] -> [B, M, N]` (both operands carry the same batch
    size; there is no batch broadcasting).

    `transpose_a` says `lhs` is stored transposed (`[K, M]`, or `[B, K, M]`);
    `transpose_b` says `rhs` is stored transposed (`[N, K]`, or `[B, N, K]`).
    The result is always `[M, N]` (or `[B, M, N]`).

    Both operands have the same element type. The result element type is the
    accumulator type and is written explicitly; the allowed combinations are:

    | operands | result      |
    |----------|-------------|
    | f32      | f32         |
    | f16      | f16 or f32  |
    | bf16     | bf16 or f32 |
    | i8       | i32         |

    `precision = tf32` lets an f32 matmul use tf32 tensor cores; it is only
    valid for f32 operands. Without it (or with `ieee`) f32 is computed in
    full precision.

    Example:
    ```mlir
    %0 = kgraph.matmul %a, %b : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf32>
    %1 = kgraph.matmul %a, %bt {transpose_b} : tensor<64x32xf16>, tensor<128x32xf16> -> tensor<64x128xf32>
    %2 = kgraph.matmul %x, %y precision = tf32 : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
    ```
  }];
  let arguments = (ins KGraph_Tensor:$lhs, KGraph_Tensor:$rhs,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       OptionalAttr<KGraph_PrecisionAttr>:$precision);
  let results = (outs KGraph_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`precision` `=` `` $precision^)? attr-dict `:` type($lhs) `,`
    type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Conv2dOp
//===----------------------------------------------------------------------===//

def KGraph_Conv2dOp : KGraph_Op<"conv2d", [Pure]> {
  let summary = "2-D convolution (cross-correlation) with groups and dilation";
  let description = [{
    Convolves `input` with `filter`. The shapes depend on `layout`:

    | layout | input          | filter                 | result         |
    |--------|----------------|------------------------|----------------|
    | nchw   | `[N, C, H, W]` | `[F, C/groups, KH, KW]` | `[N, F, OH, OW]` |
    | nhwc   | `[N, H, W, C]` | `[F, KH, KW, C/groups]` | `[N, OH, OW, F]` |

    Attributes (all optional, shown with their defaults):
    - `layout = nchw`: activation layout, see above.
    - `strides = [1, 1]`: `[stride_h, stride_w]`, positive.
    - `padding = [0, 0, 0, 0]`: zero padding `[top, bottom, left, right]`,
      non-negative.
    - `dilations = [1, 1]`: `[dilation_h, dilation_w]`, positive.
    - `groups = 1`: channels are split in `groups` groups; it must divide both
      `C` and `F`. Depthwise convolution is `groups = C`.
    - `precision`: as for `kgraph.matmul` (`tf32` only for f32 operands).

    The output size along each spatial dim is
    `OH = floor((H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1) / stride_h) + 1`
    (and likewise for `OW`); it must be positive.

    `input` and `filter` share an element type; the result element type is the
    accumulator type, written explicitly, with the rules of `kgraph.matmul`
    (f16 -> f16/f32, bf16 -> bf16/f32, i8 -> i32, f32 -> f32).

    Example:
    ```mlir
    %0 = kgraph.conv2d %x, %w strides = [2, 2] padding = [1, 1, 1, 1]
        : tensor<1x3x224x224xf16>, tensor<64x3x3x3xf16> -> tensor<1x64x112x112xf32>
    %1 = kgraph.conv2d %y, %dw layout = nhwc groups = 32
        : tensor<1x56x56x32xf32>, tensor<32x3x3x1xf32> -> tensor<1x54x54x32xf32>
    ```
  }];
  let arguments = (ins
      KGraph_Tensor:$input, KGraph_Tensor:$filter,
      DefaultValuedAttr<KGraph_LayoutAttr, "::kgraph::Layout::nchw">:$layout,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
      DefaultValuedAttr<I64Attr, "1">:$groups,
      OptionalAttr<KGraph_PrecisionAttr>:$precision);
  let results = (outs KGraph_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $filter (`layout` `=` `` $layout^)? (`strides` `=` $strides^)?
    (`padding` `=` $padding^)? (`dilations` `=` $dilations^)?
    (`groups` `=` $groups^)? (`precision` `=` `` $precision^)? attr-dict
    `:` type($input) `,` type($filter) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pool2dOp
//===----------------------------------------------------------------------===//

def KGraph_Pool2dOp : KGraph_Op<"pool2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D max or average pooling";
  let description = [{
    Slides a `kernel = [KH, KW]` window over the spatial dims of `input`
    (`[N, C, H, W]` for `layout = nchw`, `[N, H, W, C]` for `nhwc`) and takes
    the maximum (`max`) or the mean (`avg`) of each window. The result keeps
    the layout; its spatial size is
    `OH = floor((H + pad_top + pad_bottom - KH) / stride_h) + 1` (likewise
    `OW`) and is inferred.

    Attributes: `kernel` (2 positive ints, required), `strides = [1, 1]`
    (positive; note the default is not the kernel size), `padding =
    [0, 0, 0, 0]` (`[top, bottom, left, right]`, each smaller than the kernel
    along its dim so no window lies wholly in padding), `layout = nchw`.

    Padded positions never contribute: `max` ignores them and `avg` divides
    by the number of in-bounds elements of the window. `max` on `i8`/`i32`
    compares signed and is exact. `avg` requires a float element type: an
    integer mean would need a rounding rule of its own (PyTorch has no
    integer `avg_pool2d`); cast to a float type first.

    Example:
    ```mlir
    %0 = kgraph.pool2d max %x kernel = [2, 2] strides = [2, 2] : tensor<1x16x32x32xf16>
    %1 = kgraph.pool2d avg %y kernel = [3, 3] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x8x8x4xf32>
    ```
  }];
  let arguments = (ins
      KGraph_Tensor:$input, KGraph_PoolKindAttr:$kind,
      DenseI64ArrayAttr:$kernel,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
      DefaultValuedAttr<KGraph_LayoutAttr, "::kgraph::Layout::nchw">:$layout);
  let results = (outs KGraph_Tensor:$result);
  let assemblyFormat = [{
    `` $kind $input `kernel` `=` $kernel (`strides` `=` $strides^)?
    (`padding` `=` $padding^)? (`layout` `=` `` $layout^)? attr-dict
    `:` type($input)
  }];
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

def KGraph_ReduceOp : KGraph_Op<"reduce", [Pure, InferTypeOpAdaptor]> {
  let summary = "sum, max or mean over a set of axes";
  let description = [{
    Reduces `input` over `axes` (distinct values in `[0, rank)`, any order).
    Without `keep_dims` the reduced dims are dropped (reducing every axis
    gives a rank-0 tensor); with `keep_dims` they stay as size 1. The result
    element type is the input's; `mean` requires a float element type. An
    empty `axes` list is the identity and folds away.

    Example:
    ```mlir
    %0 = kgraph.reduce sum %x axes = [1] : tensor<4x8xf32>
    %1 = kgraph.reduce mean %x axes = [0, 1] keep_dims : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins KGraph_Tensor:$input, KGraph_ReduceKindAttr:$kind,
                       DenseI64ArrayAttr:$axes, UnitAttr:$keep_dims);
  let results = (outs KGraph_Tensor:$result);
  let assemblyFormat = [{
    `` $kind $input `axes` `=` $axes (`keep_dims` $keep_dims^)? attr-dict
    `:` type($input)
  }];
  let hasFolder = 1;
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHSTRUCTUREDOPS_TD
