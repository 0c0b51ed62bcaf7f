//===- TuningDB.cpp - problem signatures and the tuning database ----------===//

#include "kgraph/Dialect/KGraph/Transforms/TuningDB.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

#include <cmath>

using namespace mlir;
using namespace kgraph;

/// 16 hex digits of the SHA-256 of `text`.
static std::string hashText(StringRef text) {
  llvm::SHA256 sha;
  sha.update(text);
  std::array<uint8_t, 32> digest = sha.final();
  return llvm::toHex(ArrayRef<uint8_t>(digest).take_front(8),
                     /*LowerCase=*/true);
}

/// `text` with the dimensions of every `tensor<...>` written as '?'.
static std::string eraseDimensions(StringRef text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text.substr(i).starts_with("tensor<")) {
      out += "tensor<";
      i += 7;
      // Dimensions are digit runs (or '?') each followed by 'x'.
      while (true) {
        size_t j = i;
        while (j < text.size() && (llvm::isDigit(text[j]) || text[j] == '?'))
          ++j;
        if (j == i || j >= text.size() || text[j] != 'x')
          break;
        out += "?x";
        i = j + 1;
      }
      continue;
    }
    out += text[i++];
  }
  return out;
}

/// `300x200xf16` for tensor<300x200xf16>.
static std::string shortType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  StringRef t(text);
  if (t.consume_front("tensor<") && t.consume_back(">"))
    return t.str();
  return text;
}

/// Makes a copy of a group what its problem key describes: no
/// configuration or other discardable attribute, the resolved kind.
static void normalizeCopy(FusedOp copy, GroupKind kind) {
  for (NamedAttribute attr : llvm::to_vector(copy->getDiscardableAttrs()))
    copy->removeDiscardableAttr(attr.getName());
  copy.setKind(kind);
}

ProblemKey kgraph::computeProblemKey(FusedOp group, GroupKind kind) {
  // A detached normalized copy printed in local scope (the region is
  // isolated, so the body reads only its block arguments).
  Operation *clone = group->clone();
  auto copy = llvm::cast<FusedOp>(clone);
  normalizeCopy(copy, kind);
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    copy->print(os, OpPrintingFlags().useLocalScope());
  }
  clone->destroy();

  ProblemKey key;
  key.signature = hashText(text);
  key.structure = hashText(eraseDimensions(text));
  auto addShape = [&](Type type) {
    if (auto shaped = llvm::dyn_cast<ShapedType>(type))
      if (shaped.hasRank())
        llvm::append_range(key.shape, shaped.getShape());
  };
  for (Type type : group.getInputs().getTypes())
    addShape(type);
  for (Type type : group.getResultTypes())
    addShape(type);

  SmallVector<std::string> ops, inputs, results;
  for (Operation &op : group.getBody().front().without_terminator())
    if (op.getDialect() == group->getDialect())
      ops.push_back(op.getName().stripDialect().str());
  for (Type type : group.getInputs().getTypes())
    inputs.push_back(shortType(type));
  for (Type type : group.getResultTypes())
    results.push_back(shortType(type));
  key.summary = (stringifyGroupKind(kind) + " " + llvm::join(ops, "+") + " (" +
                 llvm::join(inputs, ", ") + ") -> " + llvm::join(results, ", "))
                    .str();
  return key;
}

std::string kgraph::printStandaloneKernel(FusedOp group, GroupKind kind,
                                          Attribute config) {
  MLIRContext *ctx = group.getContext();
  ctx->getOrLoadDialect<func::FuncDialect>();
  Location loc = UnknownLoc::get(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(module->getBody());
  SmallVector<Value> distinct;
  for (Value input : group.getInputs())
    if (!llvm::is_contained(distinct, input))
      distinct.push_back(input);
  auto func = func::FuncOp::create(
      builder, loc, "kernel",
      builder.getFunctionType(ValueRange(distinct).getTypes(),
                              group.getResultTypes()));
  Block *entry = func.addEntryBlock();
  IRMapping mapping;
  for (auto [input, arg] : llvm::zip_equal(distinct, entry->getArguments()))
    mapping.map(input, arg);
  builder.setInsertionPointToEnd(entry);
  auto copy = llvm::cast<FusedOp>(builder.clone(*group, mapping));
  normalizeCopy(copy, kind);
  if (config)
    copy->setAttr(kConfigAttrName, config);
  func::ReturnOp::create(builder, loc, copy->getResults());
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

unsigned kgraph::getConfigSpaceVersion(GroupKind kind) {
  // Raise a family's number when its configuration attribute gains, loses
  // or redefines a parameter.
  // #kgraph.reduce_config's row_vectors (multi-reduction groups) kept the
  // reduce space at 1: it defaults to 0, so every configuration of space 1
  // means what it meant and single-pass groups have the candidates they had,
  // and no record can name a multi-reduction group (no such group verified
  // before).
  switch (kind) {
  case GroupKind::elementwise:
  case GroupKind::gemm:
  case GroupKind::reduce:
  case GroupKind::stencil:
  case GroupKind::copy:
  case GroupKind::transpose:
  case GroupKind::window:
    return 1;
  }
  return 1;
}

unsigned kgraph::getEmitterVersion(GroupKind kind) {
  // Raise a family's number when its emitted code changes what a
  // configuration costs. gemm 1: the staged epilogue (session 10; the
  // session-8 H200 records timed the fragments' direct stores, and their
  // winners ran up to 1.5x slower than the model's picks in session 32).
  switch (kind) {
  case GroupKind::gemm:
    return 1;
  case GroupKind::elementwise:
  case GroupKind::reduce:
  case GroupKind::stencil:
  case GroupKind::copy:
  case GroupKind::transpose:
  case GroupKind::window:
    return 0;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// The database file
//===----------------------------------------------------------------------===//

/// Reads one record; a message naming what is wrong on failure.
static std::optional<TuningRecord> parseRecord(const llvm::json::Value &value,
                                               unsigned index,
                                               std::string &why) {
  const llvm::json::Object *obj = value.getAsObject();
  if (!obj) {
    why = "is not an object";
    return std::nullopt;
  }
  TuningRecord record;
  record.index = index;
  auto getString = [&](StringRef name, std::string &into,
                       bool required) -> bool {
    const llvm::json::Value *v = obj->get(name);
    if (!v) {
      if (required)
        why = ("has no '" + name + "'").str();
      return !required;
    }
    std::optional<StringRef> s = v->getAsString();
    if (!s) {
      why = ("has a '" + name + "' that is not a string").str();
      return false;
    }
    into = s->str();
    return true;
  };
  if (!getString("signature", record.signature, true) ||
      !getString("structure", record.structure, true) ||
      !getString("kind", record.kind, true) ||
      !getString("target", record.target, true) ||
      !getString("gpu", record.gpu, true) ||
      !getString("best", record.best, true) ||
      !getString("default", record.defaultConfig, false) ||
      !getString("problem", record.summary, false) ||
      !getString("measured_at", record.measuredAt, false))
    return std::nullopt;
  if (!symbolizeGroupKind(record.kind)) {
    why = "has an unknown kind '" + record.kind + "'";
    return std::nullopt;
  }
  std::optional<int64_t> space =
      obj->get("space") ? obj->get("space")->getAsInteger() : std::nullopt;
  if (!space || *space < 0) {
    why = "has no 'space' version (a non-negative integer)";
    return std::nullopt;
  }
  record.space = *space;
  if (const llvm::json::Value *e = obj->get("emitter")) {
    std::optional<int64_t> emitter = e->getAsInteger();
    if (!emitter || *emitter < 0) {
      why = "has an 'emitter' version that is not a non-negative integer";
      return std::nullopt;
    }
    record.emitter = *emitter;
  }
  const llvm::json::Array *shape = obj->getArray("shape");
  if (!shape) {
    why = "has no 'shape' (an array of dimensions)";
    return std::nullopt;
  }
  for (const llvm::json::Value &d : *shape) {
    std::optional<int64_t> dim = d.getAsInteger();
    if (!dim || *dim < 0) {
      why = "has a 'shape' entry that is not a non-negative integer";
      return std::nullopt;
    }
    record.shape.push_back(*dim);
  }
  if (const llvm::json::Value *s = obj->get("speedup")) {
    std::optional<double> speedup = s->getAsNumber();
    if (!speedup || !(*speedup > 0)) {
      why = "has a 'speedup' that is not a positive number";
      return std::nullopt;
    }
    record.speedup = *speedup;
  }
  // The measured candidates (optional: a record may keep only its winner).
  // Malformed entries are ignored: only the timing comparison uses them.
  if (const llvm::json::Array *cands = obj->getArray("candidates"))
    for (const llvm::json::Value &c : *cands) {
      const llvm::json::Object *co = c.getAsObject();
      if (!co)
        continue;
      std::optional<StringRef> config = co->getString("config");
      std::optional<double> median = co->getNumber("median_us");
      if (!config || !median || !(*median > 0))
        continue;
      record.measuredMedianUs[*config] = *median;
      if (*config == record.best)
        record.bestQ3Us = co->getNumber("q3_us").value_or(*median);
    }
  return record;
}

bool TuningRecord::measuredAsFast(StringRef config) const {
  auto it = measuredMedianUs.find(config);
  auto best = measuredMedianUs.find(this->best);
  if (it == measuredMedianUs.end() || best == measuredMedianUs.end())
    return false;
  return it->second <= std::max(best->second, bestQ3Us);
}

std::string TuningRecord::versionMismatch(GroupKind kind) const {
  StringRef name = stringifyGroupKind(kind);
  if (unsigned current = getConfigSpaceVersion(kind); space != current)
    return llvm::formatv("it was measured in version {0} of the {1} "
                         "configuration space, this compiler has version {2}",
                         space, name, current)
        .str();
  if (unsigned current = getEmitterVersion(kind); emitter != current)
    return llvm::formatv("it was measured with version {0} of the {1} "
                         "emitters, this compiler has version {2} (its "
                         "timings are stale)",
                         emitter, name, current)
        .str();
  return {};
}

std::optional<TuningDatabase>
TuningDatabase::load(StringRef path, std::string &error,
                     std::vector<std::string> &warnings) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = "cannot read: " + buffer.getError().message();
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*buffer)->getBuffer());
  if (!parsed) {
    error = "not JSON: " + llvm::toString(parsed.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *top = parsed->getAsObject();
  std::optional<int64_t> format;
  if (top)
    if (const llvm::json::Value *v = top->get("kgraph_tuning_db"))
      format = v->getAsInteger();
  if (!format) {
    error = "not a kgraph tuning database (no \"kgraph_tuning_db\" format "
            "number; python3 -m kgraph.tune writes them)";
    return std::nullopt;
  }
  if (*format < 1 || *format > kTuningDatabaseFormat) {
    error = llvm::formatv("format {0}, this compiler reads format 1 to {1}",
                          *format, kTuningDatabaseFormat)
                .str();
    return std::nullopt;
  }
  const llvm::json::Array *records = top->getArray("records");
  if (!records) {
    error = "has no \"records\" array";
    return std::nullopt;
  }
  TuningDatabase db;
  db.path = path.str();
  for (auto [i, value] : llvm::enumerate(*records)) {
    std::string why;
    if (std::optional<TuningRecord> record = parseRecord(value, i, why))
      db.records.push_back(std::move(*record));
    else
      warnings.push_back(
          llvm::formatv("record {0} {1}; skipped", i, why).str());
  }
  return db;
}

/// Orders records of one key: by GPU name, then newest first.
static bool preferred(const TuningRecord *a, const TuningRecord *b) {
  if (a->gpu != b->gpu)
    return a->gpu < b->gpu;
  if (a->measuredAt != b->measuredAt)
    return a->measuredAt > b->measuredAt;
  return a->index > b->index;
}

const TuningRecord *TuningDatabase::findExact(const ProblemKey &key,
                                              StringRef target,
                                              StringRef gpu) const {
  const TuningRecord *found = nullptr;
  for (const TuningRecord &r : records) {
    if (r.signature != key.signature || r.target != target ||
        (!gpu.empty() && r.gpu != gpu))
      continue;
    if (!found || preferred(&r, found))
      found = &r;
  }
  return found;
}

SmallVector<std::pair<const TuningRecord *, double>>
TuningDatabase::findNear(const ProblemKey &key, GroupKind kind,
                         StringRef target, StringRef gpu) const {
  StringRef kindName = stringifyGroupKind(kind);
  // The preferred record of every other signature of this structure.
  llvm::StringMap<const TuningRecord *> bySignature;
  for (const TuningRecord &r : records) {
    if (r.structure != key.structure || r.signature == key.signature ||
        r.kind != kindName || r.target != target ||
        (!gpu.empty() && r.gpu != gpu) || r.shape.size() != key.shape.size() ||
        !r.versionMismatch(kind).empty())
      continue;
    const TuningRecord *&slot = bySignature[r.signature];
    if (!slot || preferred(&r, slot))
      slot = &r;
  }
  SmallVector<std::pair<const TuningRecord *, double>> near;
  for (auto &entry : bySignature) {
    const TuningRecord *r = entry.second;
    double distance = 0;
    for (auto [a, b] : llvm::zip_equal(key.shape, r->shape))
      distance += std::fabs(std::log(double(std::max<int64_t>(a, 1))) -
                            std::log(double(std::max<int64_t>(b, 1))));
    near.push_back({r, distance});
  }
  llvm::sort(near, [](const auto &a, const auto &b) {
    if (a.second != b.second)
      return a.second < b.second;
    return a.first->signature < b.first->signature;
  });
  return near;
}
