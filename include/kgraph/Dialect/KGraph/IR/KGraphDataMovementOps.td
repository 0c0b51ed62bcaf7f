//===- KGraphDataMovementOps.td - reshape, transpose, slice, ... -*- tablegen -*-===//
//
// Ops that move or replicate elements without arithmetic. They accept every
// kgraph element type including i1, so masks from kgraph.compare can be
// reshaped, transposed, sliced, concatenated and broadcast too.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDATAMOVEMENTOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDATAMOVEMENTOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

def KGraph_ReshapeOp : KGraph_Op<"reshape", [Pure]> {
  let summary = "reinterprets a tensor with a new shape";
  let description = [{
    Returns the elements of `input`, in row-major order, arranged in the
    result shape. Both types have the same element type and element count.

    Folds: a reshape to the input's own type is the input; a reshape of a
    reshape reshapes the original input; a reshape of a splat constant is a
    splat constant.

    Example:
    ```mlir
    %0 = kgraph.reshape %x : tensor<2x3xf32> to tensor<6xf32>
    ```
  }];
  let arguments = (ins KGraph_AnyTensor:$input);
  let results = (outs KGraph_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

def KGraph_TransposeOp : KGraph_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permutes the dims of a tensor";
  let description = [{
    Result dim `i` is input dim `permutation[i]`:
    `result[i0, ..., in] = input[j]` with `j[permutation[k]] = ik`, so
    `result.shape[i] = input.shape[permutation[i]]`. `permutation` holds each
    of `0 .. rank-1` exactly once. The result type is inferred.

    Folds: the identity permutation is the input; a transpose of a transpose
    is one transpose with the composed permutation (the input itself when
    that is the identity); a transpose of a splat constant is a splat
    constant.

    Example:
    ```mlir
    %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins KGraph_AnyTensor:$input,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs KGraph_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` `permutation` `=` $permutation attr-dict `:` type($input)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

def KGraph_SliceOp : KGraph_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "extracts a strided static window of a tensor";
  let description = [{
    Takes along each dim `d` the `sizes[d]` elements
    `offsets[d] + k * strides[d]` for `k = 0 .. sizes[d]-1`. `offsets`,
    `sizes` and `strides` have one entry per input dim; offsets and sizes are
    non-negative, strides positive, and every index taken is in bounds. The
    result shape is `sizes` (inferred).

    Folds: a slice that takes the whole input (zero offsets, unit strides,
    sizes equal to the input shape) is the input; a slice of a splat constant
    is a splat constant.

    Example:
    ```mlir
    %0 = kgraph.slice %x offsets = [0, 2] sizes = [4, 3] strides = [1, 2] : tensor<8x8xf32>
    ```
  }];
  let arguments = (ins KGraph_AnyTensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs KGraph_AnyTensor:$result);
  let assemblyFormat = [{
    $input `offsets` `=` $offsets `sizes` `=` $sizes `strides` `=` $strides
    attr-dict `:` type($input)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

def KGraph_ConcatOp : KGraph_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "joins tensors along one axis";
  let description = [{
    Concatenates one or more `inputs` along `axis` (in `[0, rank)`). The
    inputs share rank and element type, and all their dims other than `axis`
    are equal; the result's `axis` dim is the sum of the inputs' (inferred).

    Folds: a concat of a single input is that input.

    Example:
    ```mlir
    %0 = kgraph.concat %a, %b axis = 1 : tensor<2x3xf32>, tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Variadic<KGraph_AnyTensor>:$inputs,
                       I64Attr:$axis);
  let results = (outs KGraph_AnyTensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` type($inputs)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// BroadcastToOp
//===----------------------------------------------------------------------===//

def KGraph_BroadcastToOp : KGraph_Op<"broadcast_to", [Pure]> {
  let summary = "broadcasts a tensor to a larger shape with numpy rules";
  let description = [{
    Replicates `input` to the result shape under numpy rules: the shapes are
    aligned at their trailing dims, the result has at least the input's rank,
    and each input dim either equals the aligned result dim or is 1 (and is
    then repeated). The element type is unchanged.

    Folds: a broadcast to the input's own type is the input; a broadcast of a
    broadcast broadcasts the original input; a broadcast of a splat constant
    is a splat constant.

    Example:
    ```mlir
    %0 = kgraph.broadcast_to %x : tensor<1x8xf32> to tensor<4x8xf32>
    %1 = kgraph.broadcast_to %b : tensor<8xf32> to tensor<2x4x8xf32>
    ```
  }];
  let arguments = (ins KGraph_AnyTensor:$input);
  let results = (outs KGraph_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDATAMOVEMENTOPS_TD
