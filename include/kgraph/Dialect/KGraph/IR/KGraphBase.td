//===- KGraphBase.td - kgraph dialect definition -----------*- tablegen -*-===//
//
// The kgraph dialect, its type constraints and the base class of every op.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHBASE_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def KGraph_Dialect : Dialect {
  let name = "kgraph";
  let cppNamespace = "::kgraph";
  let summary = "Compute graphs of conv2d, GEMM and elementwise ops for GPU kernel generation";
  let description = [{
    The `kgraph` dialect describes a compute graph on ranked, statically
    shaped tensors (value semantics): matmul and conv2d, elementwise math with
    numpy broadcasting, pooling and reductions, and the data movement real
    models need. `kgraph.fused` groups ops that are compiled as one GPU
    kernel. Passes later in the pipeline record their decisions (tile sizes,
    target) as attributes on these ops.

    Supported element types are `f32`, `f16`, `bf16`, `i8` and `i32`;
    `kgraph.compare` produces `i1`, which `kgraph.select` consumes.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  // `kgraph.param` (a func.func argument that is a model parameter) and
  // `kgraph.weights` (the module's weights file): see docs/launch-plan.md.
  let hasRegionArgAttrVerify = 1;
  let hasOperationAttrVerify = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

/// Element types kgraph computes on.
def KGraph_ElementType : AnyTypeOf<[F32, F16, BF16, I8, I32],
    "f32, f16, bf16, i8 or i32">;
def KGraph_FloatElementType : AnyTypeOf<[F32, F16, BF16], "f32, f16 or bf16">;

/// A statically shaped ranked tensor of a supported element type.
def KGraph_Tensor : StaticShapeTensorOf<[F32, F16, BF16, I8, I32]>;
/// Floating-point tensors, for transcendental unary ops.
def KGraph_FloatTensor : StaticShapeTensorOf<[F32, F16, BF16]>;
/// Boolean tensors produced by kgraph.compare.
def KGraph_BoolTensor : StaticShapeTensorOf<[I1]>;
/// Any tensor a kgraph op may consume or produce.
def KGraph_AnyTensor : StaticShapeTensorOf<[F32, F16, BF16, I8, I32, I1]>;

//===----------------------------------------------------------------------===//
// Base op class
//===----------------------------------------------------------------------===//

class KGraph_Op<string mnemonic, list<Trait> traits = []>
    : Op<KGraph_Dialect, mnemonic, traits>;

class KGraph_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<KGraph_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHBASE_TD
