//===- KGraphAttrs.td - kgraph enums and attributes --------*- tablegen -*-===//
//
// Enums of the user-facing ops. Each prints as a bare keyword inside an op's
// custom form and as `#kgraph<name value>` in the generic form.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHATTRS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHATTRS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "mlir/IR/EnumAttr.td"

def KGraph_CompareDirection : I32EnumAttr<"CompareDirection",
    "comparison predicate of kgraph.compare", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_CompareDirectionAttr
    : EnumAttr<KGraph_Dialect, KGraph_CompareDirection, "compare_direction">;

def KGraph_Layout : I32EnumAttr<"Layout",
    "activation layout of conv2d and pool2d", [
      I32EnumAttrCase<"nchw", 0>, I32EnumAttrCase<"nhwc", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_LayoutAttr : EnumAttr<KGraph_Dialect, KGraph_Layout, "layout">;

def KGraph_PoolKind : I32EnumAttr<"PoolKind", "kind of kgraph.pool2d", [
      I32EnumAttrCase<"max", 0>, I32EnumAttrCase<"avg", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_PoolKindAttr : EnumAttr<KGraph_Dialect, KGraph_PoolKind, "pool_kind">;

def KGraph_ReduceKind : I32EnumAttr<"ReduceKind", "kind of kgraph.reduce", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"mean", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_ReduceKindAttr
    : EnumAttr<KGraph_Dialect, KGraph_ReduceKind, "reduce_kind">;

/// `tf32` lets an f32 matmul or conv2d run on tensor cores with tf32 inputs.
def KGraph_Precision : I32EnumAttr<"Precision",
    "arithmetic precision an f32 matmul or conv2d may use", [
      I32EnumAttrCase<"ieee", 0>, I32EnumAttrCase<"tf32", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_PrecisionAttr
    : EnumAttr<KGraph_Dialect, KGraph_Precision, "precision">;

//===----------------------------------------------------------------------===//
// Code generation decisions, recorded in the IR
//===----------------------------------------------------------------------===//

def KGraph_ElementwiseConfigAttr
    : KGraph_Attr<"ElementwiseConfig", "elementwise_config"> {
  let summary = "launch configuration of an elementwise kernel";
  let description = [{
    Written by `kgraph-tile` on a `kgraph.fused` group of elementwise ops
    (attribute name `kgraph.config`) and read by `kgraph-lower-to-gpu`. A
    configuration already present is respected, so tests and tuners can pin
    it. Each thread handles `vector_width` consecutive elements per step
    (16-byte accesses for the widest element type), `unroll` steps per loop
    trip; `grid_size` blocks of `block_size` threads stride over the tensor.

    Example:
    ```mlir
    #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 2, grid_size = 1056>
    ```
  }];
  let parameters = (ins "int64_t":$block_size, "int64_t":$vector_width,
                        "int64_t":$unroll, "int64_t":$grid_size);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHATTRS_TD
