//===- KGraphHostOps.td - ops of lowered host functions ------*- tablegen -*-===//
//
// Ops that kgraph-lower-to-gpu writes into the host function (memrefs and
// gpu.launch_func) where upstream ops cannot say what it means. The host
// function is never compiled: the launch-plan writer reads it.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHHOSTOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHHOSTOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// BufferViewOp
//===----------------------------------------------------------------------===//

def KGraph_BufferViewOp : KGraph_Op<"buffer_view", [Pure]> {
  let summary = "a dense memref that starts inside another buffer";
  let description = [{
    The dense row-major memref of the result type whose first element is
    `byte_offset` bytes after the first element of `source`; its bytes lie
    inside `source`'s. Both memrefs have the identity layout, a static shape
    and the same element type.

    kgraph-lower-to-gpu writes it for a view whose first element is not the
    first element of its buffer (a contiguous `kgraph.slice`): kernels take
    identity-layout memrefs (one pointer each, the bare-pointer convention),
    which no upstream view op yields at an offset from a typed buffer
    (`memref.subview` puts the offset into the layout, `memref.view` needs an
    `i8` source). The launch plan passes the root buffer with this
    `byte_offset` (docs/launch-plan.md). Views at offset 0 are
    `memref.reinterpret_cast`s.

    Example:
    ```mlir
    %0 = kgraph.buffer_view %buf byte_offset = 64 : memref<16x8xf32> to memref<4x8xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$source, I64Attr:$byte_offset);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = [{
    $source `byte_offset` `=` $byte_offset attr-dict `:` type($source) `to`
    type($result)
  }];
  let hasVerifier = 1;
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHHOSTOPS_TD
