//===- TuningDB.h - problem signatures and the tuning database --*- C++ -*-===//
//
// What `kgraph.tune` measured, applied by kgraph-tile (tuning-db=...). A
// kernel group is identified by its problem signature: a hash of the group
// as printed without its configuration (ops, attributes, shapes, element
// types, layouts, the fused prologue and epilogue), so records survive
// compiler changes that do not touch the group's IR, and a kernel extracted
// on its own has the signature it has inside its graph. The structure hash
// is the same with every tensor dimension left out: groups of one structure
// differ only in shapes, and a record of the nearest shape can serve a group
// that has none (a near record). docs/tuning.md describes the file.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_TUNINGDB_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_TUNINGDB_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace kgraph {

/// What identifies a group's kernel in a tuning database.
struct ProblemKey {
  /// 16 hex digits of the SHA-256 of the group's canonical text.
  std::string signature;
  /// The same of the text with every tensor dimension written as '?'.
  std::string structure;
  /// Every dimension of the group's input and result types, in order.
  llvm::SmallVector<int64_t> shape;
  /// "gemm matmul+add+relu (300x200xf16, 200x130xf16, 130xf16) ->
  /// 300x130xf16": for people reading a database or a report.
  std::string summary;
};

/// The key of `group` treated as `kind` (its `kgraph.config` and other
/// discardable attributes left out).
ProblemKey computeProblemKey(FusedOp group, GroupKind kind);

/// A module holding `group` alone, as text: `func.func @kernel` takes the
/// group's distinct inputs and returns its results; the group's kind is
/// `kind` and its configuration `config`. Its problem key is the group's,
/// so `kgraph.tune` measures it on its own (a work unit).
std::string printStandaloneKernel(FusedOp group, GroupKind kind,
                                  mlir::Attribute config);

/// The version of `kind`'s configuration space: raised when the family's
/// configuration attribute or what its parameters mean changes, so that
/// records measured against the old space are skipped, not misapplied.
unsigned getConfigSpaceVersion(GroupKind kind);

/// The version of `kind`'s emitters as far as timings go: raised when an
/// emitter change makes the family's measured times stale (the same
/// configuration now runs differently), so that records measured with the
/// old code are skipped rather than trusted. A record without "emitter" was
/// measured with version 0.
unsigned getEmitterVersion(GroupKind kind);

/// One measured kernel of a database (the fields kgraph-tile reads).
struct TuningRecord {
  std::string signature, structure, kind, target, gpu, summary;
  llvm::SmallVector<int64_t> shape;
  unsigned space = 0;
  /// getEmitterVersion of the compiler that measured it.
  unsigned emitter = 0;
  /// The configuration to apply (the measured winner) and the model's pick
  /// it was measured against.
  std::string best, defaultConfig;
  /// Median time of the default over the best's, when both were measured.
  std::optional<double> speedup;
  /// The median time of every candidate measured ("candidates" with a
  /// "median_us"), by configuration text; and the best's third quartile,
  /// its noise (0 where not recorded).
  llvm::StringMap<double> measuredMedianUs;
  double bestQ3Us = 0;

  /// Whether `config` (the model's pick now, as text) was measured in this
  /// record no slower than the best's noise: the record then has nothing to
  /// improve on it, and the model's pick stays.
  bool measuredAsFast(llvm::StringRef config) const;
  /// Why this record cannot serve a `kind` group of this compiler: measured
  /// in another version of the family's configuration space or with
  /// another version of its emitters; empty where both match.
  std::string versionMismatch(GroupKind kind) const;
  /// ISO 8601 time of the measurement: of several records of one key the
  /// newest applies.
  std::string measuredAt;
  /// Position in the file's "records" (from 0), for messages.
  unsigned index = 0;
};

/// A parsed tuning database file.
class TuningDatabase {
public:
  /// Reads `path`. A missing, unreadable, non-JSON or foreign file, or one
  /// of a newer format, fails with `error` set; a malformed record is left
  /// out with a message in `warnings`.
  static std::optional<TuningDatabase>
  load(llvm::StringRef path, std::string &error,
       std::vector<std::string> &warnings);

  /// The newest record for exactly `key` on `target` (of `gpu` unless it is
  /// empty; of several GPUs, the first by name), any space or emitter
  /// version.
  const TuningRecord *findExact(const ProblemKey &key, llvm::StringRef target,
                                llvm::StringRef gpu) const;

  /// Records of the same structure, kind, target, space and emitter
  /// versions (and `gpu` unless empty) but another shape, nearest first by
  /// the summed |log(a/b)| of the shape dimensions; equal distances by
  /// signature.
  llvm::SmallVector<std::pair<const TuningRecord *, double>>
  findNear(const ProblemKey &key, GroupKind kind, llvm::StringRef target,
           llvm::StringRef gpu) const;

  llvm::StringRef getPath() const { return path; }
  size_t size() const { return records.size(); }

private:
  std::string path;
  std::vector<TuningRecord> records;
};

/// The format version of the database files this compiler reads and
/// `kgraph.tune` writes.
inline constexpr int64_t kTuningDatabaseFormat = 1;

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_TUNINGDB_H
