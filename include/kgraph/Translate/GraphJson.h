//===- GraphJson.h - import a JSON compute graph into kgraph IR -*- C++ -*-===//
//
// The importer of the JSON graph format (docs/graph-json.md): a graph of
// named nodes (conv2d, linear, matmul, pooling, elementwise math, softmax,
// reshape, transpose, concat, cast, ...) or a single op object becomes one
// func.func of kgraph ops. Weights that a node names in the graph's weights
// file (safetensors) become function arguments marked `kgraph.param`, and the
// module records the file as `kgraph.weights`.
//
// Every problem in the input is reported as an MLIR diagnostic located at the
// offending JSON value (file:line:column) whose message starts with the
// field's path (`nodes[3].stride: expected 2 integers, got 3`); the import
// then returns null and nothing is built. Defaults the single-op form takes
// are reported as notes.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_TRANSLATE_GRAPHJSON_H
#define KGRAPH_TRANSLATE_GRAPHJSON_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace kgraph {

struct GraphJsonImportOptions {
  /// The folder a relative `weights` path of the graph is resolved against:
  /// the graph file's folder ("" = the current directory).
  std::string graphDir;
  /// The folder the module's `kgraph.weights` path is made relative to: the
  /// folder of the .mlir file being written ("" = the current directory).
  std::string outputDir;
  /// Receives each note on a default the single-op form took
  /// ("conv2d: out_channels not given, using 64"). Unset: the notes are
  /// emitted as note diagnostics located at the op object.
  std::function<void(llvm::StringRef)> noteHandler;
};

/// Imports the JSON graph held in `json`; `bufferName` is the file name
/// diagnostics and op locations use (the buffer's identifier when it comes
/// from a llvm::SourceMgr, so diagnostics can show the offending line).
/// Returns null after reporting every problem through `context`'s
/// diagnostic engine.
mlir::OwningOpRef<mlir::ModuleOp>
importGraphJson(llvm::StringRef json, llvm::StringRef bufferName,
                mlir::MLIRContext *context,
                const GraphJsonImportOptions &options = {});

/// Imports the main buffer of `sourceMgr`.
mlir::OwningOpRef<mlir::ModuleOp>
importGraphJson(llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context,
                const GraphJsonImportOptions &options = {});

/// Registers the `--import-graph-json` translation with MLIR's translation
/// registry (for mlirTranslateMain). A relative weights path is resolved
/// against the input file's folder and written relative to the folder of the
/// `-o` file.
void registerGraphJsonTranslation();

} // namespace kgraph

#endif // KGRAPH_TRANSLATE_GRAPHJSON_H
