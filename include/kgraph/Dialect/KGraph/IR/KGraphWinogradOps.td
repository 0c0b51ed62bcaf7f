//===- KGraphWinogradOps.td - Winograd conv2d transforms ----*- tablegen -*-===//
//
// The three transforms of a Winograd F(m x m, 3 x 3) convolution
// (Lavin & Gray): a 3x3 conv2d becomes, per transformed point, a GEMM over
// channels between the filter's and the input tiles' transforms, and the
// output transform sums the points back into m x m output tiles.
// kgraph-winograd-convs writes them; each is computed element by element in
// an elementwise kernel (the output transform with the conv's epilogue).
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHWINOGRADOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHWINOGRADOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "kgraph/Dialect/KGraph/IR/KGraphAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def KGraph_WinogradFilterOp : KGraph_Op<"winograd_filter", [Pure]> {
  let summary = "Winograd transform G g G^T of a 3x3 filter";
  let description = [{
    Transforms each 3x3 slice `g` of a conv2d filter (`[F, C, 3, 3]` for
    layout `nchw`, `[F, 3, 3, C]` for `nhwc`) into the `a x a` points
    `G g G^T` of F(m x m, 3 x 3), `a = m + 2`, `m = output_tile` (2 or 4).
    The result is `[a * a, F, C]`: point `p = i * a + j` holds `(G g
    G^T)[i][j]` of every filter and channel. It depends on the filter only,
    so a model computes it once at load.

    Example:
    ```mlir
    %u = kgraph.winograd_filter %w : tensor<64x32x3x3xf32> -> tensor<36x64x32xf32>
    ```
  }];
  let arguments = (ins
      KGraph_FloatTensor:$filter,
      DefaultValuedAttr<KGraph_LayoutAttr, "::kgraph::Layout::nchw">:$layout,
      DefaultValuedAttr<I64Attr, "4">:$output_tile);
  let results = (outs KGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $filter (`layout` `=` `` $layout^)? (`output_tile` `=` $output_tile^)?
    attr-dict `:` type($filter) `->` type($result)
  }];
  let hasVerifier = 1;
}

def KGraph_WinogradInputOp : KGraph_Op<"winograd_input", [Pure]> {
  let summary = "Winograd transform B^T d B of overlapping input tiles";
  let description = [{
    Cuts the zero-padded input of a 3x3, stride-1 conv2d (`[N, C, H, W]` for
    layout `nchw`, `[N, H, W, C]` for `nhwc`; `padding = [top, bottom,
    left, right]`) into `a x a` tiles `d` that start every `m` pixels
    (`m = output_tile`, 2 or 4, `a = m + 2`), one per `m x m` tile of the
    conv's `OH x OW` output (`OH = H + top + bottom - 2`), and transforms
    each into `B^T d B`. Tiles past the input read zeros. With `TH =
    ceil(OH / m)`, `TW = ceil(OW / m)` and the tiles numbered `t = (n * TH
    + th) * TW + tw`, the result is `[a * a, C, N * TH * TW]` for `nchw`
    and `[a * a, N * TH * TW, C]` for `nhwc`: the right (left) operand of
    the per-point GEMM.

    Example:
    ```mlir
    %v = kgraph.winograd_input %x padding = [1, 1, 1, 1]
        : tensor<2x32x14x14xf32> -> tensor<36x32x32xf32>
    ```
  }];
  let arguments = (ins
      KGraph_FloatTensor:$input,
      DefaultValuedAttr<KGraph_LayoutAttr, "::kgraph::Layout::nchw">:$layout,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
      DefaultValuedAttr<I64Attr, "4">:$output_tile);
  let results = (outs KGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`layout` `=` `` $layout^)? (`padding` `=` $padding^)?
    (`output_tile` `=` $output_tile^)? attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def KGraph_WinogradOutputOp : KGraph_Op<"winograd_output", [Pure]> {
  let summary = "Winograd transform A^T M A back into output tiles";
  let description = [{
    The inverse of `kgraph.winograd_input` for the per-point GEMM's result:
    `input` is `[a * a, F, T]` for layout `nchw`, `[a * a, T, F]` for
    `nhwc` (`T = N * TH * TW` tiles, numbered as `kgraph.winograd_input`
    numbers them); each tile's `a x a` points `M` become the `m x m` output
    pixels `A^T M A` (`m = output_tile`, 2 or 4, `a = m + 2`). The result
    is the conv2d's output, `[N, F, OH, OW]` or `[N, OH, OW, F]`; pixels of
    the last tiles past `OH` or `OW` are dropped.

    Example:
    ```mlir
    %y = kgraph.winograd_output %m : tensor<36x64x32xf32> -> tensor<2x64x14x14xf32>
    ```
  }];
  let arguments = (ins
      KGraph_FloatTensor:$input,
      DefaultValuedAttr<KGraph_LayoutAttr, "::kgraph::Layout::nchw">:$layout,
      DefaultValuedAttr<I64Attr, "4">:$output_tile);
  let results = (outs KGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`layout` `=` `` $layout^)? (`output_tile` `=` $output_tile^)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHWINOGRADOPS_TD
