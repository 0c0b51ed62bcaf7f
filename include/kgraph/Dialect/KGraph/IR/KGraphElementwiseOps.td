//===- KGraphElementwiseOps.td - elementwise ops -----------*- tablegen -*-===//
//
// Elementwise math of the kgraph dialect: binary arithmetic with numpy
// broadcasting, unary math, clamp, cast, compare and select.
//
// Every op is Pure. Ops whose result shape is the broadcast of their operand
// shapes (binary ops, compare, select) carry `ResultsBroadcastableShape`; ops
// that keep their operand's shape (unary ops, clamp, cast) carry
// `Elementwise` and `SameOperandsAndResultShape`, and all of these but cast
// `SameOperandsAndResultElementType`.
//
// Result types are inferred (InferTypeOpAdaptor) so the custom forms only
// spell the operand types. The inference also checks its inputs and reports
// precisely what is wrong, because in the custom form it runs while parsing,
// before any verifier. For the generic form, `KGraph_VerifyInferredTypesFirst`
// (and `KGraph_VerifyIdenticalShapesFirst` on cast) run those precise checks
// before the upstream traits, whose messages are vague.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHELEMENTWISEOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHELEMENTWISEOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "kgraph/Dialect/KGraph/IR/KGraphAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Traits (C++ in KGraphTraits.h)
//===----------------------------------------------------------------------===//

/// Checks the written result types against the inferred ones, emitting the
/// inference's own diagnostics; list it before the upstream shape traits.
def KGraph_VerifyInferredTypesFirst
    : NativeOpTrait<"VerifyInferredTypesFirst"> {
  let cppNamespace = "::kgraph::OpTrait";
}

/// Checks that all operands and results have one shape, naming the first
/// dimension that differs; list it before the upstream shape traits.
def KGraph_VerifyIdenticalShapesFirst
    : NativeOpTrait<"VerifyIdenticalShapesFirst"> {
  let cppNamespace = "::kgraph::OpTrait";
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

/// A binary op with numpy broadcasting: shapes are aligned at their trailing
/// dimension and a dimension of size 1 stretches to match the other operand.
/// Both operands share one element type, which the result keeps.
class KGraph_BinaryOp<string mnemonic, list<Trait> traits = [],
                      Type operandType = KGraph_Tensor>
    : KGraph_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor,
        KGraph_VerifyInferredTypesFirst, ResultsBroadcastableShape])> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

/// A unary elementwise op whose result has exactly the operand's type. The
/// type is inferred by C++ code that names unsupported element types; the
/// `SameOperandsAndResultType` trait is not used because ODS would then
/// generate a competing inference function.
class KGraph_UnaryOp<string mnemonic, Type tensorType,
                     list<Trait> traits = []>
    : KGraph_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor,
        KGraph_VerifyInferredTypesFirst, Elementwise,
        SameOperandsAndResultShape, SameOperandsAndResultElementType])> {
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

/// Unary math defined on floating-point tensors only (f32, f16, bf16).
class KGraph_UnaryFloatOp<string mnemonic, list<Trait> traits = []>
    : KGraph_UnaryOp<mnemonic, KGraph_FloatTensor, traits>;

/// Unary math defined on every kgraph element type (f32, f16, bf16, i8, i32).
class KGraph_UnaryNumericOp<string mnemonic, list<Trait> traits = []>
    : KGraph_UnaryOp<mnemonic, KGraph_Tensor, traits>;

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

def KGraph_AddOp : KGraph_BinaryOp<"add", [Commutative]> {
  let summary = "elementwise addition with numpy broadcasting";
  let description = [{
    Adds `lhs` and `rhs` elementwise after broadcasting them to a common
    shape. Integer addition wraps around (two's complement).

    Folds `x + 0` (a zero splat constant, `+0.0` or `-0.0`, on either side)
    to `x` when the result type equals the type of `x`.

    Example:
    ```mlir
    %0 = kgraph.add %a, %b : tensor<4x1xf32>, tensor<8xf32>  // tensor<4x8xf32>
    ```
  }];
  let hasFolder = 1;
}

def KGraph_SubOp : KGraph_BinaryOp<"sub"> {
  let summary = "elementwise subtraction with numpy broadcasting";
  let description = [{
    Computes `lhs - rhs` elementwise after broadcasting. Integer subtraction
    wraps around (two's complement).

    Folds `x - 0` (a zero splat constant on the right) to `x` when the result
    type equals the type of `x`.

    Example:
    ```mlir
    %0 = kgraph.sub %a, %b : tensor<4x8xf16>, tensor<1x8xf16>  // tensor<4x8xf16>
    ```
  }];
  let hasFolder = 1;
}

def KGraph_MulOp : KGraph_BinaryOp<"mul", [Commutative]> {
  let summary = "elementwise multiplication with numpy broadcasting";
  let description = [{
    Multiplies `lhs` and `rhs` elementwise after broadcasting. Integer
    multiplication wraps around (two's complement).

    Folds `x * 1` (a one splat constant on either side) to `x` when the
    result type equals the type of `x`.

    Example:
    ```mlir
    %0 = kgraph.mul %a, %b : tensor<2x3xi32>, tensor<i32>  // tensor<2x3xi32>
    ```
  }];
  let hasFolder = 1;
}

def KGraph_DivOp : KGraph_BinaryOp<"div"> {
  let summary = "elementwise division with numpy broadcasting";
  let description = [{
    Computes `lhs / rhs` elementwise after broadcasting. On floats this is
    IEEE division. On `i8`/`i32` it is signed division rounding toward zero
    (like `arith.divsi`); integer division by zero, and the minimum value
    divided by -1, are undefined behavior.

    Folds `x / 1` (a one splat constant on the right) to `x` when the result
    type equals the type of `x`.

    Example:
    ```mlir
    %0 = kgraph.div %a, %b : tensor<8xi8>, tensor<8xi8>  // tensor<8xi8>
    ```
  }];
  let hasFolder = 1;
}

def KGraph_MaxOp : KGraph_BinaryOp<"max", [Commutative]> {
  let summary = "elementwise maximum with numpy broadcasting";
  let description = [{
    Computes the larger of `lhs` and `rhs` elementwise after broadcasting.
    On floats a NaN in either operand yields NaN and `-0.0 < +0.0` (like
    `arith.maximumf` and `torch.maximum`); integers compare signed.

    Example:
    ```mlir
    %0 = kgraph.max %a, %b : tensor<4x8xbf16>, tensor<4x1xbf16>  // tensor<4x8xbf16>
    ```
  }];
}

def KGraph_MinOp : KGraph_BinaryOp<"min", [Commutative]> {
  let summary = "elementwise minimum with numpy broadcasting";
  let description = [{
    Computes the smaller of `lhs` and `rhs` elementwise after broadcasting.
    On floats a NaN in either operand yields NaN and `-0.0 < +0.0` (like
    `arith.minimumf` and `torch.minimum`); integers compare signed.

    Example:
    ```mlir
    %0 = kgraph.min %a, %b : tensor<8xi32>, tensor<1xi32>  // tensor<8xi32>
    ```
  }];
}

def KGraph_PowOp : KGraph_BinaryOp<"pow", [], KGraph_FloatTensor> {
  let summary = "elementwise power with numpy broadcasting (floats only)";
  let description = [{
    Raises `lhs` to the power `rhs` elementwise after broadcasting, with the
    semantics of C `powf` (`math.powf`). Only f32, f16 and bf16 are
    accepted.

    Example:
    ```mlir
    %0 = kgraph.pow %a, %b : tensor<4x8xf32>, tensor<f32>  // tensor<4x8xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Unary ops on every element type
//===----------------------------------------------------------------------===//

def KGraph_NegOp : KGraph_UnaryNumericOp<"neg"> {
  let summary = "elementwise negation";
  let description = [{
    Computes `-input`. Integer negation wraps (the minimum value maps to
    itself). `neg(neg(x))` folds to `x`.

    Example:
    ```mlir
    %0 = kgraph.neg %x : tensor<8xi32>
    ```
  }];
  let hasFolder = 1;
}

def KGraph_AbsOp : KGraph_UnaryNumericOp<"abs"> {
  let summary = "elementwise absolute value";
  let description = [{
    Computes `|input|`. For integers the minimum value maps to itself
    (two's complement wrap). `abs(abs(x))` folds to `abs(x)`.

    Example:
    ```mlir
    %0 = kgraph.abs %x : tensor<4x8xf16>
    ```
  }];
  let hasFolder = 1;
}

def KGraph_ReluOp : KGraph_UnaryNumericOp<"relu"> {
  let summary = "elementwise rectified linear unit";
  let description = [{
    Computes `max(input, 0)`; on floats NaN propagates. `relu(relu(x))`
    folds to `relu(x)`.

    Example:
    ```mlir
    %0 = kgraph.relu %x : tensor<2x16xi8>
    ```
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Unary ops on floating-point types
//===----------------------------------------------------------------------===//

def KGraph_ExpOp : KGraph_UnaryFloatOp<"exp"> {
  let summary = "elementwise natural exponential";
  let description = [{
    Computes `e^input`.

    Example:
    ```mlir
    %0 = kgraph.exp %x : tensor<8xf32>
    ```
  }];
}

def KGraph_LogOp : KGraph_UnaryFloatOp<"log"> {
  let summary = "elementwise natural logarithm";
  let description = [{
    Computes `ln(input)`; negative inputs give NaN and zero gives `-inf`.

    Example:
    ```mlir
    %0 = kgraph.log %x : tensor<8xf16>
    ```
  }];
}

def KGraph_SqrtOp : KGraph_UnaryFloatOp<"sqrt"> {
  let summary = "elementwise square root";
  let description = [{
    Computes `sqrt(input)`; negative inputs give NaN.

    Example:
    ```mlir
    %0 = kgraph.sqrt %x : tensor<8xbf16>
    ```
  }];
}

def KGraph_RsqrtOp : KGraph_UnaryFloatOp<"rsqrt"> {
  let summary = "elementwise reciprocal square root";
  let description = [{
    Computes `1 / sqrt(input)`.

    Example:
    ```mlir
    %0 = kgraph.rsqrt %x : tensor<4x8xf32>
    ```
  }];
}

def KGraph_TanhOp : KGraph_UnaryFloatOp<"tanh"> {
  let summary = "elementwise hyperbolic tangent";
  let description = [{
    Computes `tanh(input)`.

    Example:
    ```mlir
    %0 = kgraph.tanh %x : tensor<8xf32>
    ```
  }];
}

def KGraph_SigmoidOp : KGraph_UnaryFloatOp<"sigmoid"> {
  let summary = "elementwise logistic sigmoid";
  let description = [{
    Computes `1 / (1 + exp(-input))`.

    Example:
    ```mlir
    %0 = kgraph.sigmoid %x : tensor<8xf32>
    ```
  }];
}

def KGraph_GeluOp : KGraph_UnaryFloatOp<"gelu"> {
  let summary = "elementwise Gaussian error linear unit";
  let description = [{
    Without `approximate`, computes the exact GELU
    `0.5 * x * (1 + erf(x / sqrt(2)))`. With the unit attribute
    `approximate`, computes the tanh approximation
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`
    (PyTorch's `approximate='tanh'`).

    Example:
    ```mlir
    %0 = kgraph.gelu %x : tensor<8xf32>
    %1 = kgraph.gelu %x {approximate} : tensor<8xf32>
    ```
  }];
  let arguments = (ins KGraph_FloatTensor:$input, UnitAttr:$approximate);
}

//===----------------------------------------------------------------------===//
// Clamp and cast
//===----------------------------------------------------------------------===//

def KGraph_ClampOp : KGraph_UnaryNumericOp<"clamp"> {
  let summary = "elementwise clamp to the closed range [min, max]";
  let description = [{
    Computes `min(max(input, min), max)` with the bounds given as f64
    attributes; `min <= max` is required and neither may be NaN. The
    comparison is exact: for integer and narrow float element types the
    result is the input limited to the representable values inside
    `[min, max]` (for integers, `ceil(min)` and `floor(max)`); a bound
    outside the type's range saturates to it, so a range wholly below (above)
    the type's gives its minimum (maximum). A NaN input stays NaN. `relu6` is `clamp` with `min = 0`, `max = 6`.

    Example:
    ```mlir
    %0 = kgraph.clamp %x {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<8xf32>
    ```
  }];
  let arguments = (ins KGraph_Tensor:$input, F64Attr:$min, F64Attr:$max);
  let hasVerifier = 1;
}

def KGraph_CastOp : KGraph_Op<"cast", [Pure,
    KGraph_VerifyIdenticalShapesFirst, Elementwise,
    SameOperandsAndResultShape]> {
  let summary = "elementwise conversion between element types";
  let description = [{
    Converts each element of `input` to the result element type; input and
    result shapes must be identical. Supported types are f32, f16, bf16, i8
    and i32, in any combination:

    - float -> float: rounds to nearest even; values beyond the target
      range become infinity; NaN stays NaN.
    - float -> int: truncates toward zero, then saturates to the target
      range (e.g. `300.7 -> 127` for i8); NaN becomes 0.
    - int -> float: exact when representable (always for i8, for i32 up to
      2^24 in f32), otherwise rounds to nearest even; i32 values beyond the
      f16 range become infinity. i32 -> bf16 rounds through f32, so for
      |x| > 2^24 the result can differ from a single rounding by one bf16
      ulp (GPUs before sm_90 have no direct conversion).
    - int -> int: signed; widening sign-extends, narrowing keeps the low
      bits (wraps, like `arith.trunci`, numpy and PyTorch).

    A cast to the same type folds away.

    Example:
    ```mlir
    %0 = kgraph.cast %x : tensor<8xf32> to tensor<8xf16>
    ```
  }];
  let arguments = (ins KGraph_Tensor:$input);
  let results = (outs KGraph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Compare and select
//===----------------------------------------------------------------------===//

def KGraph_CompareOp : KGraph_Op<"compare", [Pure, InferTypeOpAdaptor,
    KGraph_VerifyInferredTypesFirst, ResultsBroadcastableShape]> {
  let summary = "elementwise comparison with numpy broadcasting";
  let description = [{
    Compares `lhs` and `rhs` elementwise after broadcasting with the
    predicate `direction` (`eq`, `ne`, `lt`, `le`, `gt`, `ge`), producing an
    `i1` tensor of the broadcast shape. Floats compare ordered (any
    comparison with NaN is false) except `ne`, which is true when either
    side is NaN; integers compare signed.

    Example:
    ```mlir
    %0 = kgraph.compare lt, %a, %b : tensor<4x8xf32>, tensor<8xf32>  // tensor<4x8xi1>
    ```
  }];
  let arguments = (ins KGraph_CompareDirectionAttr:$direction,
                       KGraph_Tensor:$lhs, KGraph_Tensor:$rhs);
  let results = (outs KGraph_BoolTensor:$result);
  let assemblyFormat = [{
    `` $direction `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

def KGraph_SelectOp : KGraph_Op<"select", [Pure, InferTypeOpAdaptor,
    KGraph_VerifyInferredTypesFirst, ResultsBroadcastableShape]> {
  let summary = "elementwise choice between two tensors by an i1 condition";
  let description = [{
    Yields `true_value` where `condition` is true and `false_value` where it
    is false. All three operands broadcast to a common shape; the values
    share one element type, which the result keeps.

    Example:
    ```mlir
    %0 = kgraph.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>  // tensor<4x8xf32>
    ```
  }];
  let arguments = (ins KGraph_BoolTensor:$condition,
                       KGraph_Tensor:$true_value, KGraph_Tensor:$false_value);
  let results = (outs KGraph_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    type($condition) `,` type($true_value) `,` type($false_value)
  }];
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHELEMENTWISEOPS_TD
