//===- GraphJsonImport.cpp - JSON compute graph to kgraph IR --------------===//
//
// Reads the JSON graph format of docs/graph-json.md with llvm::json and
// builds one func.func of kgraph ops. The input is checked completely before
// a module is returned: a field of the wrong type or size, an unknown field
// or node type, a name that is not defined, shapes that do not fit, a weight
// that the weights file lacks or holds with another shape. Each problem is an
// error located at the offending JSON value whose message starts with the
// value's path (`nodes[3].stride`), so it can be found in a generated file.
//
// llvm::json keeps no source positions, so JsonPositions scans the (already
// validated) text once more and records where each value starts by path.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Translate/GraphJson.h"

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

using namespace mlir;
namespace json = llvm::json;

namespace {

//===----------------------------------------------------------------------===//
// Source positions of JSON values
//===----------------------------------------------------------------------===//

/// The byte offset at which each value of a JSON text starts, by path
/// ("" for the root, "nodes[3].stride" below it). Only run on text that
/// llvm::json::parse accepted; every access is bounds-checked anyway.
class JsonPositions {
public:
  explicit JsonPositions(StringRef text) : text(text) {
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n')
        lineStarts.push_back(i + 1);
    scanValue("");
  }

  /// The 1-based line and column of the value at `path`, or of the nearest
  /// enclosing value that exists (a field that is missing is reported at its
  /// object).
  std::pair<unsigned, unsigned> lineColumn(StringRef path) const {
    while (true) {
      auto it = offsets.find(path);
      if (it != offsets.end())
        return toLineColumn(it->second);
      if (path.empty())
        return {1, 1};
      size_t cut = path.find_last_of(".[");
      path = cut == StringRef::npos ? StringRef() : path.take_front(cut);
    }
  }

  /// The path of the first field an object holds twice (llvm::json keeps
  /// the last silently), or "".
  StringRef getDuplicate() const { return duplicate; }

private:
  std::pair<unsigned, unsigned> toLineColumn(size_t offset) const {
    auto it = llvm::upper_bound(lineStarts, offset);
    size_t line = it - lineStarts.begin();
    return {static_cast<unsigned>(line),
            static_cast<unsigned>(offset - *(it - 1) + 1)};
  }

  bool atEnd() const { return pos >= text.size(); }
  void skipSpace() {
    while (!atEnd() && llvm::isSpace(text[pos]))
      ++pos;
  }
  std::string scanString() {
    std::string result;
    ++pos; // the opening quote
    while (!atEnd() && text[pos] != '"') {
      if (text[pos] == '\\' && pos + 1 < text.size()) {
        char escaped = text[pos + 1];
        pos += 2;
        switch (escaped) {
        case 'n': result += '\n'; break;
        case 't': result += '\t'; break;
        case 'r': result += '\r'; break;
        case 'b': result += '\b'; break;
        case 'f': result += '\f'; break;
        case 'u': {
          // Keys are ASCII in practice; a \u escape of one is decoded, any
          // other only skipped (the path then differs from llvm::json's key
          // and the value is located at its object instead).
          unsigned code = 0;
          if (pos + 4 <= text.size() &&
              !text.substr(pos, 4).getAsInteger(16, code) && code < 0x80)
            result += static_cast<char>(code);
          pos += 4;
          break;
        }
        default: result += escaped; break;
        }
        continue;
      }
      result += text[pos++];
    }
    ++pos; // the closing quote
    return result;
  }
  void scanValue(const std::string &path) {
    skipSpace();
    if (atEnd())
      return;
    if (!offsets.try_emplace(path, pos).second && duplicate.empty())
      duplicate = path;
    char c = text[pos];
    if (c == '{') {
      ++pos;
      skipSpace();
      if (!atEnd() && text[pos] == '}') {
        ++pos;
        return;
      }
      while (!atEnd()) {
        skipSpace();
        if (atEnd() || text[pos] != '"')
          return;
        std::string key = scanString();
        skipSpace();
        if (atEnd() || text[pos] != ':')
          return;
        ++pos;
        scanValue(path.empty() ? key : path + "." + key);
        skipSpace();
        if (atEnd())
          return;
        if (text[pos++] != ',')
          return;
      }
      return;
    }
    if (c == '[') {
      ++pos;
      skipSpace();
      if (!atEnd() && text[pos] == ']') {
        ++pos;
        return;
      }
      for (unsigned i = 0; !atEnd(); ++i) {
        scanValue(path + "[" + std::to_string(i) + "]");
        skipSpace();
        if (atEnd())
          return;
        if (text[pos++] != ',')
          return;
      }
      return;
    }
    if (c == '"') {
      scanString();
      return;
    }
    while (!atEnd() && !StringRef(",]} \t\r\n").contains(text[pos]))
      ++pos;
  }

  StringRef text;
  size_t pos = 0;
  std::vector<size_t> lineStarts{0};
  llvm::StringMap<size_t> offsets;
  std::string duplicate;
};

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

/// A number as a user wrote it ("0.5", "6").
std::string formatNumber(double d) {
  if (d == std::trunc(d) && std::fabs(d) < 1e15)
    return std::to_string(static_cast<int64_t>(d));
  char buffer[32];
  snprintf(buffer, sizeof(buffer), "%g", d);
  return buffer;
}

/// "[1, 3, 224, 224]".
std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, ", ");
  os << "]";
  return s;
}

/// How a JSON value reads in "expected X, got Y".
std::string describe(const json::Value &value) {
  switch (value.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return *value.getAsBoolean() ? "true" : "false";
  case json::Value::Number: {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << value;
    return s;
  }
  case json::Value::String:
    return "the string \"" + value.getAsString()->str() + "\"";
  case json::Value::Array:
    return "a list of " + std::to_string(value.getAsArray()->size()) +
           " values";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

std::string joinPath(StringRef parent, StringRef key) {
  return parent.empty() ? key.str() : (parent + "." + key).str();
}
std::string indexPath(StringRef parent, size_t index) {
  return (parent + "[" + Twine(index) + "]").str();
}

/// The plan name of an element type ("f32").
std::string typeName(Type type) {
  if (const kgraph::ElementTypeInfo *info = kgraph::lookupElementType(type))
    return info->planName.str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

/// "[1, 3, 224, 224] f32".
std::string formatType(RankedTensorType type) {
  return formatShape(type.getShape()) + " " + typeName(type.getElementType());
}

/// The element count of a shape, saturating at INT64_MAX.
int64_t product(ArrayRef<int64_t> dims) {
  uint64_t n = 1;
  bool overflow = false;
  for (int64_t d : dims)
    n = llvm::SaturatingMultiply<uint64_t>(n, d, &overflow);
  return overflow || n > static_cast<uint64_t>(
                             std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(n);
}

/// Tensors above this many elements are refused (2^48: far beyond any GPU
/// memory, and safe to multiply by the small factors the importer uses).
constexpr int64_t kMaxElements = int64_t(1) << 48;

/// A constant node holds at most this many elements (2^24: 64 MiB of f32),
/// a splat included: its values are written out in the JSON text, the IR
/// and the launch plan, and a larger splat is a broadcast_to of a small one.
constexpr int64_t kMaxConstantElements = int64_t(1) << 24;

/// The element types a graph may name, with the spellings numpy and torch
/// use as aliases.
const char *const kDTypeNames = "f32, f16, bf16, i8, i32";
std::optional<StringRef> canonicalDType(StringRef name) {
  return llvm::StringSwitch<std::optional<StringRef>>(name)
      .Cases({"f32", "float32", "float"}, StringRef("f32"))
      .Cases({"f16", "float16", "half"}, StringRef("f16"))
      .Cases({"bf16", "bfloat16"}, StringRef("bf16"))
      .Cases({"i8", "int8"}, StringRef("i8"))
      .Cases({"i32", "int32"}, StringRef("i32"))
      .Default(std::nullopt);
}

/// The safetensors dtype of a kgraph element type name.
StringRef safetensorsDType(StringRef planName) {
  return llvm::StringSwitch<StringRef>(planName)
      .Case("f32", "F32")
      .Case("f16", "F16")
      .Case("bf16", "BF16")
      .Case("i8", "I8")
      .Case("i32", "I32")
      .Default("");
}

/// `target` relative to the folder `base`; both are made absolute first.
std::string relativePath(StringRef target, StringRef base) {
  SmallString<256> t(target), b(base.empty() ? "." : base);
  llvm::sys::fs::make_absolute(t);
  llvm::sys::fs::make_absolute(b);
  llvm::sys::path::remove_dots(t, /*remove_dot_dot=*/true);
  llvm::sys::path::remove_dots(b, /*remove_dot_dot=*/true);
  SmallVector<StringRef> tParts(llvm::sys::path::begin(t),
                                llvm::sys::path::end(t));
  SmallVector<StringRef> bParts(llvm::sys::path::begin(b),
                                llvm::sys::path::end(b));
  size_t common = 0;
  while (common < tParts.size() && common < bParts.size() &&
         tParts[common] == bParts[common])
    ++common;
  // Different roots (another drive): keep the absolute path.
  if (common == 0)
    return std::string(t);
  SmallString<256> result;
  for (size_t i = common; i < bParts.size(); ++i)
    llvm::sys::path::append(result, "..");
  for (size_t i = common; i < tParts.size(); ++i)
    llvm::sys::path::append(result, tParts[i]);
  return result.empty() ? std::string(".") : std::string(result);
}

/// One tensor of the weights file's header.
struct WeightInfo {
  std::string dtype;
  SmallVector<int64_t> shape;
};

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

class GraphImporter;

/// The fields of one JSON object. Reading a field marks it used; finish()
/// reports the fields nobody read, so a misspelled field is an error rather
/// than silently ignored. Fields whose name starts with '_' are comments.
class Fields {
public:
  Fields(GraphImporter &importer, const json::Object &object, std::string path)
      : importer(importer), object(object), path(std::move(path)) {}

  StringRef getPath() const { return path; }
  std::string pathOf(StringRef key) const { return joinPath(path, key); }
  bool has(StringRef key) const { return object.get(key) != nullptr; }
  const json::Value *get(StringRef key) {
    used.insert(key);
    return object.get(key);
  }

  /// An integer >= `min`; `out` is left alone when the field is absent.
  LogicalResult readInt(StringRef key, int64_t &out, int64_t min,
                        bool *given = nullptr);
  LogicalResult readBool(StringRef key, bool &out, bool *given = nullptr);
  LogicalResult readNumber(StringRef key, double &out, bool *given = nullptr);
  LogicalResult readString(StringRef key, std::string &out,
                           bool *given = nullptr);
  /// A list of integers (any length, each >= `min`).
  LogicalResult readIntList(StringRef key, SmallVector<int64_t> &out,
                            int64_t min, bool *given = nullptr);
  /// `[h, w]`, or one integer for both.
  LogicalResult readPair(StringRef key, std::array<int64_t, 2> &out,
                         int64_t min, bool *given = nullptr);
  /// Padding: one integer, `[h, w]` (both sides), or
  /// `[top, bottom, left, right]`; "valid" is zero. "same" is resolved by the
  /// caller (it needs the kernel), reported through `same`.
  LogicalResult readPadding(StringRef key, std::array<int64_t, 4> &out,
                            bool &same, bool *given = nullptr);

  /// Reports every field not read; `what` names the object ("a conv2d
  /// node").
  LogicalResult finish(StringRef what);

private:
  LogicalResult intValue(const json::Value &value, const std::string &at,
                         int64_t min, int64_t &out);

  GraphImporter &importer;
  const json::Object &object;
  std::string path;
  llvm::StringSet<> used;
};

/// A value of the graph: what a node or graph input produced.
struct GraphValue {
  Value value;
  /// Where it was defined ("inputs[0]", "nodes[2]"), for messages.
  std::string definedAt;
};

class GraphImporter {
public:
  GraphImporter(StringRef text, StringRef bufferName, MLIRContext *context,
                const kgraph::GraphJsonImportOptions &options)
      : text(text), bufferName(bufferName), context(context),
        options(options), builder(context) {}

  OwningOpRef<ModuleOp> run();

  /// An error at the JSON value `path`, its message prefixed with the path.
  InFlightDiagnostic error(StringRef path, const Twine &message) {
    std::string prefix = path.empty() ? "" : (path + ": ").str();
    return mlir::emitError(locationOf(path), prefix + message);
  }

private:
  friend class Fields;

  Location locationOf(StringRef path) {
    if (!positions)
      return FileLineColLoc::get(context, bufferName, 1, 1);
    auto [line, column] = positions->lineColumn(path);
    return FileLineColLoc::get(context, bufferName, line, column);
  }
  /// A note on a default the single-op form took.
  void note(const Twine &message) {
    if (options.noteHandler) {
      options.noteHandler(message.str());
      return;
    }
    context->getDiagEngine().emit(locationOf(""), DiagnosticSeverity::Note)
        << message;
  }

  LogicalResult parseDType(Fields &fields, StringRef key, Type &out,
                           bool *given = nullptr);
  LogicalResult parseLayout(Fields &fields, StringRef key,
                            kgraph::Layout &out, bool *given = nullptr);
  LogicalResult loadWeights(StringRef path, const std::string &jsonPath);

  LogicalResult importGraph(const json::Object &root);
  LogicalResult importSingleOp(const json::Object &root);
  LogicalResult checkNodeTypes(const json::Array &nodes);
  LogicalResult importNode(const json::Object &node, const std::string &path,
                           size_t index);

  /// The operands of a node: its `inputs` (names of values, or numbers,
  /// which become scalar constants where `allowScalars`), or, when absent,
  /// the previous node's result.
  LogicalResult readInputs(Fields &fields, SmallVectorImpl<Value> &out,
                           SmallVectorImpl<std::string> &paths,
                           size_t expected, bool allowScalars,
                           bool variadic = false);
  /// A function argument for the weight `tensorName` of type `type`: a
  /// parameter of the weights file when there is one (checked against its
  /// header), else a plain argument. `what` says what the dims are, for the
  /// message on a shape mismatch.
  FailureOr<Value> parameter(StringRef path, StringRef tensorName,
                             RankedTensorType type, StringRef what);
  /// The header entry of `tensorName` when the graph has a weights file
  /// holding it.
  const WeightInfo *lookupWeight(StringRef tensorName) const {
    auto it = weights.find(tensorName);
    return it == weights.end() ? nullptr : &it->second;
  }
  /// The default of a field the single-op form left out, printed as a note.
  void noteDefault(StringRef key, const Twine &value) {
    if (singleOp)
      note(nodeName + ": " + key + " not given, using " + value);
  }

  Value constantLike(double number, Type elementType);
  Value add(Location loc, Value lhs, Value rhs);

  // Node kinds.
  LogicalResult importConv2d(Fields &f, Location loc);
  LogicalResult importLinear(Fields &f, Location loc);
  LogicalResult importMatmul(Fields &f, Location loc);
  LogicalResult importUnary(Fields &f, Location loc, StringRef type);
  LogicalResult importBinary(Fields &f, Location loc, StringRef type);
  LogicalResult importPool(Fields &f, Location loc, bool isMax);
  LogicalResult importGlobalPool(Fields &f, Location loc, bool isMax);
  LogicalResult importReduce(Fields &f, Location loc, kgraph::ReduceKind kind);
  LogicalResult importSoftmax(Fields &f, Location loc, bool log);
  LogicalResult importReshape(Fields &f, Location loc, bool flatten);
  LogicalResult importTranspose(Fields &f, Location loc);
  LogicalResult importConcat(Fields &f, Location loc);
  LogicalResult importSlice(Fields &f, Location loc);
  LogicalResult importBroadcast(Fields &f, Location loc);
  LogicalResult importCast(Fields &f, Location loc);
  LogicalResult importConstant(Fields &f, Location loc);
  /// One element of a constant's `value` at `path`, as the bits of
  /// `elementType` (integers range-checked, floats rounded to the type).
  FailureOr<APInt> constantElement(const json::Value &value, StringRef path,
                                   Type elementType);
  LogicalResult importIdentity(Fields &f, Location loc);
  LogicalResult importBatchNorm(Fields &f, Location loc);
  LogicalResult importLayerNorm(Fields &f, Location loc);
  /// A weight named by field `key` (default "<node>.<suffix>"), of `type`.
  FailureOr<Value> namedParameter(Fields &f, StringRef key, StringRef suffix,
                                  RankedTensorType type, StringRef what);

  /// The node's result dtype for conv2d/linear/matmul (`out_dtype`,
  /// defaulting to the operand type, i32 for i8).
  LogicalResult readAccumulatorType(Fields &f, Type operandType, Type &out);
  LogicalResult readBias(Fields &f, bool &hasBias, std::string &name);
  /// The node's one tensor input `x` (read from `path`), checked against
  /// its `input_shape`.
  LogicalResult readInput(Fields &f, Value &x, std::string &path);
  /// `precision` of conv2d, linear and matmul (`ieee`, or `tf32` for f32).
  LogicalResult readPrecision(Fields &f, Type operandType,
                              std::optional<kgraph::Precision> &out);
  /// `input_shape` of a graph node: checked against the operand.
  LogicalResult checkInputShape(Fields &f, Value input);
  /// A float element type is required by `what`.
  LogicalResult requireFloat(StringRef path, Value input, StringRef what);
  /// An axis in [-rank, rank), normalized.
  LogicalResult normalizeAxis(StringRef path, int64_t &axis, int64_t rank);

  StringRef text;
  std::string bufferName;
  MLIRContext *context;
  const kgraph::GraphJsonImportOptions &options;
  OpBuilder builder;
  std::optional<JsonPositions> positions;

  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  Block *body = nullptr;
  Type defaultType;
  kgraph::Layout defaultLayout = kgraph::Layout::nchw;
  bool singleOp = false;

  /// The weights file: its path as given, and its header.
  std::string weightsFile;
  bool hasWeights = false;
  llvm::StringMap<WeightInfo> weights;
  /// Parameters by tensor name (a tensor two nodes share is one argument).
  llvm::StringMap<Value> params;
  SmallVector<std::pair<unsigned, std::string>> paramArgs;

  /// Values by name; names of nodes defined later (for a clearer error).
  llvm::StringMap<GraphValue> values;
  llvm::StringMap<std::string> laterNodes;
  /// The node being imported.
  std::string nodeName, nodePath;
  Value lastValue;
  Value result;
};

//===----------------------------------------------------------------------===//
// Fields
//===----------------------------------------------------------------------===//

LogicalResult Fields::intValue(const json::Value &value, const std::string &at,
                               int64_t min, int64_t &out) {
  std::optional<int64_t> v = value.getAsInteger();
  if (!v || value.kind() == json::Value::Boolean)
    return importer.error(at, "expected an integer, got " + describe(value));
  // Sizes, strides and axes beyond 32 bits are typos; refusing them keeps
  // every product of sizes below in range.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (*v > kMax || *v < -kMax)
    return importer.error(at, "expected an integer of magnitude at most " +
                                  Twine(kMax) + ", got " + Twine(*v));
  if (*v < min) {
    // Callers pass 1, 0 or no bound.
    const char *what = min == 1 ? "a positive integer" : "a non-negative integer";
    return importer.error(at, Twine("expected ") + what + ", got " +
                                  Twine(*v));
  }
  out = *v;
  return success();
}

LogicalResult Fields::readInt(StringRef key, int64_t &out, int64_t min,
                              bool *given) {
  const json::Value *v = get(key);
  if (given)
    *given = v != nullptr;
  if (!v)
    return success();
  return intValue(*v, pathOf(key), min, out);
}

LogicalResult Fields::readBool(StringRef key, bool &out, bool *given) {
  const json::Value *v = get(key);
  if (given)
    *given = v != nullptr;
  if (!v)
    return success();
  std::optional<bool> b = v->getAsBoolean();
  if (!b)
    return importer.error(pathOf(key),
                          "expected true or false, got " + describe(*v));
  out = *b;
  return success();
}

LogicalResult Fields::readNumber(StringRef key, double &out, bool *given) {
  const json::Value *v = get(key);
  if (given)
    *given = v != nullptr;
  if (!v)
    return success();
  std::optional<double> d = v->getAsNumber();
  if (!d)
    return importer.error(pathOf(key),
                          "expected a number, got " + describe(*v));
  out = *d;
  return success();
}

LogicalResult Fields::readString(StringRef key, std::string &out,
                                 bool *given) {
  const json::Value *v = get(key);
  if (given)
    *given = v != nullptr;
  if (!v)
    return success();
  std::optional<StringRef> s = v->getAsString();
  if (!s)
    return importer.error(pathOf(key),
                          "expected a string, got " + describe(*v));
  out = s->str();
  return success();
}

LogicalResult Fields::readIntList(StringRef key, SmallVector<int64_t> &out,
                                  int64_t min, bool *given) {
  const json::Value *v = get(key);
  if (given)
    *given = v != nullptr;
  if (!v)
    return success();
  const json::Array *array = v->getAsArray();
  if (!array)
    return importer.error(pathOf(key),
                          "expected a list of integers, got " + describe(*v));
  out.clear();
  for (auto [i, element] : llvm::enumerate(*array)) {
    int64_t x;
    if (failed(intValue(element, indexPath(pathOf(key), i), min, x)))
      return failure();
    out.push_back(x);
  }
  return success();
}

LogicalResult Fields::readPair(StringRef key, std::array<int64_t, 2> &out,
                               int64_t min, bool *given) {
  const json::Value *v = get(key);
  if (given)
    *given = v != nullptr;
  if (!v)
    return success();
  std::string at = pathOf(key);
  if (v->kind() == json::Value::Number) {
    int64_t x;
    if (failed(intValue(*v, at, min, x)))
      return failure();
    out = {x, x};
    return success();
  }
  const json::Array *array = v->getAsArray();
  if (!array)
    return importer.error(at, "expected 2 integers [h, w] or one integer, "
                              "got " +
                                  describe(*v));
  if (array->size() != 2)
    return importer.error(at, "expected 2 integers, got " +
                                  Twine(array->size()));
  for (unsigned i = 0; i < 2; ++i)
    if (failed(intValue((*array)[i], indexPath(at, i), min, out[i])))
      return failure();
  return success();
}

LogicalResult Fields::readPadding(StringRef key, std::array<int64_t, 4> &out,
                                  bool &same, bool *given) {
  const json::Value *v = get(key);
  same = false;
  if (given)
    *given = v != nullptr;
  if (!v)
    return success();
  std::string at = pathOf(key);
  if (std::optional<StringRef> s = v->getAsString()) {
    if (*s == "valid") {
      out = {0, 0, 0, 0};
      return success();
    }
    if (*s == "same") {
      same = true;
      return success();
    }
    return importer.error(at, "expected \"same\", \"valid\" or integers, got " +
                                  describe(*v));
  }
  if (v->kind() == json::Value::Number) {
    int64_t x;
    if (failed(intValue(*v, at, 0, x)))
      return failure();
    out = {x, x, x, x};
    return success();
  }
  const json::Array *array = v->getAsArray();
  if (!array)
    return importer.error(at, "expected an integer, 2 integers [h, w] or 4 "
                              "integers [top, bottom, left, right], got " +
                                  describe(*v));
  if (array->size() != 2 && array->size() != 4)
    return importer.error(at, "expected 2 integers [h, w] or 4 integers "
                              "[top, bottom, left, right], got " +
                                  Twine(array->size()));
  SmallVector<int64_t, 4> p;
  for (auto [i, element] : llvm::enumerate(*array)) {
    int64_t x;
    if (failed(intValue(element, indexPath(at, i), 0, x)))
      return failure();
    p.push_back(x);
  }
  if (p.size() == 2)
    out = {p[0], p[0], p[1], p[1]};
  else
    out = {p[0], p[1], p[2], p[3]};
  return success();
}

LogicalResult Fields::finish(StringRef what) {
  for (const auto &entry : object) {
    StringRef key = entry.first;
    if (used.contains(key) || key.starts_with("_"))
      continue;
    std::string message = ("unknown field of " + what).str();
    // Suggest the closest known field.
    StringRef best;
    unsigned bestDistance = 3;
    for (const auto &known : used) {
      unsigned d = key.edit_distance(known.getKey(), true, bestDistance);
      if (d < bestDistance) {
        bestDistance = d;
        best = known.getKey();
      }
    }
    if (!best.empty())
      message += " (did you mean '" + best.str() + "'?)";
    return importer.error(pathOf(key), message);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Graph structure
//===----------------------------------------------------------------------===//

// clang-format off
/// Node types and the function that imports them.
const char *const kNodeTypes[] = {
    "abs",             "add",             "avg_pool2d",      "batch_norm",
    "broadcast_to",    "cast",            "clamp",           "concat",
    "constant",        "conv2d",          "div",             "dropout",
    "exp",             "flatten",         "gelu",            "global_avg_pool",
    "global_max_pool", "hardtanh",        "identity",        "layer_norm",
    "linear",          "log",             "log_softmax",     "matmul",
    "max",             "max_pool2d",      "min",             "mul",
    "neg",             "pow",             "reduce_max",      "reduce_mean",
    "reduce_sum",      "relu",            "relu6",           "reshape",
    "rsqrt",           "sigmoid",         "silu",            "slice",
    "softmax",         "sqrt",            "sub",             "tanh",
    "transpose"};
// clang-format on

bool isKnownNodeType(StringRef type) {
  return llvm::is_contained(kNodeTypes, type);
}

LogicalResult GraphImporter::parseDType(Fields &fields, StringRef key,
                                        Type &out, bool *given) {
  std::string name;
  bool present = false;
  if (failed(fields.readString(key, name, &present)))
    return failure();
  if (given)
    *given = present;
  if (!present)
    return success();
  std::optional<StringRef> canonical = canonicalDType(name);
  if (!canonical)
    return error(fields.pathOf(key), "unknown dtype '" + name +
                                         "': expected one of " + kDTypeNames);
  out = kgraph::lookupElementType(*canonical)->getType(context);
  return success();
}

LogicalResult GraphImporter::parseLayout(Fields &fields, StringRef key,
                                         kgraph::Layout &out, bool *given) {
  std::string name;
  bool present = false;
  if (failed(fields.readString(key, name, &present)))
    return failure();
  if (given)
    *given = present;
  if (!present)
    return success();
  std::optional<kgraph::Layout> layout = kgraph::symbolizeLayout(name);
  if (!layout)
    return error(fields.pathOf(key),
                 "unknown layout '" + name + "': expected nchw or nhwc");
  out = *layout;
  return success();
}

LogicalResult GraphImporter::loadWeights(StringRef file,
                                         const std::string &jsonPath) {
  SmallString<256> resolved(file);
  if (!llvm::sys::path::is_absolute(resolved) && !options.graphDir.empty()) {
    resolved = options.graphDir;
    llvm::sys::path::append(resolved, file);
  }
  auto fail = [&](const Twine &why) {
    return error(jsonPath, "cannot read weights file '" + resolved + "': " +
                               why);
  };
  auto bufferOr = llvm::MemoryBuffer::getFile(resolved, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
  if (!bufferOr)
    return fail(bufferOr.getError().message());
  StringRef data = (*bufferOr)->getBuffer();
  if (data.size() < 8)
    return fail("shorter than the 8-byte safetensors header size");
  uint64_t headerSize =
      llvm::support::endian::read64le(data.data());
  if (headerSize > data.size() - 8)
    return fail("header size " + Twine(headerSize) +
                " exceeds the file size " + Twine(data.size()));
  uint64_t dataSize = data.size() - 8 - headerSize;
  llvm::Expected<json::Value> header =
      json::parse(data.substr(8, headerSize));
  if (!header)
    return fail("the header is not JSON: " +
                llvm::toString(header.takeError()));
  const json::Object *entries = header->getAsObject();
  if (!entries)
    return fail("the header is not a JSON object");
  for (const auto &entry : *entries) {
    if (entry.first == "__metadata__")
      continue;
    const json::Object *tensor = entry.second.getAsObject();
    std::optional<StringRef> dtype =
        tensor ? tensor->getString("dtype") : std::nullopt;
    const json::Array *shape = tensor ? tensor->getArray("shape") : nullptr;
    const json::Array *range =
        tensor ? tensor->getArray("data_offsets") : nullptr;
    if (!dtype || !shape || !range || range->size() != 2)
      return fail("tensor '" + entry.first.str() +
                  "' lacks dtype, shape or data_offsets");
    WeightInfo info;
    info.dtype = dtype->str();
    for (const json::Value &dim : *shape) {
      std::optional<int64_t> d = dim.getAsInteger();
      if (!d || *d < 0)
        return fail("tensor '" + entry.first.str() + "' has a bad shape");
      info.shape.push_back(*d);
    }
    std::optional<int64_t> begin = (*range)[0].getAsInteger();
    std::optional<int64_t> end = (*range)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > dataSize)
      return fail("tensor '" + entry.first.str() +
                  "' has data_offsets outside the data section");
    weights[entry.first] = std::move(info);
  }
  return success();
}

LogicalResult GraphImporter::checkNodeTypes(const json::Array &nodes) {
  // Everything that is not a node object with a known type, all at once.
  std::vector<std::string> unknown;
  std::string firstPath;
  for (auto [i, node] : llvm::enumerate(nodes)) {
    std::string path = indexPath("nodes", i);
    const json::Object *object = node.getAsObject();
    if (!object)
      return error(path, "expected a node object, got " + describe(node));
    const json::Value *type = object->get("type");
    if (!type)
      return error(path, "node has no \"type\"");
    std::optional<StringRef> typeName = type->getAsString();
    if (!typeName)
      return error(joinPath(path, "type"),
                   "expected a string, got " + describe(*type));
    if (isKnownNodeType(*typeName))
      continue;
    std::string name = path;
    if (std::optional<StringRef> n = object->getString("name"))
      name = "'" + n->str() + "'";
    unsigned line = positions->lineColumn(path).first;
    unknown.push_back(name + " (" + typeName->str() + ", line " +
                      std::to_string(line) + ")");
    if (firstPath.empty())
      firstPath = joinPath(path, "type");
  }
  if (unknown.empty())
    return success();
  std::string supported;
  llvm::raw_string_ostream os(supported);
  llvm::interleave(kNodeTypes, os, ", ");
  return error(firstPath, Twine(unknown.size()) +
                              (unknown.size() == 1 ? " node has a type"
                                                   : " nodes have types") +
                              " kgraph-translate does not support: " +
                              llvm::join(unknown, ", ") +
                              "; supported types: " + supported);
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  llvm::Expected<json::Value> root = json::parse(text);
  if (!root) {
    std::string message = llvm::toString(root.takeError());
    // llvm::json reports "[line:column, byte=N]: message".
    llvm::Regex pattern("^\\[([0-9]+):([0-9]+), byte=[0-9]+\\]: (.*)$");
    SmallVector<StringRef> groups;
    unsigned line = 1, column = 1;
    if (pattern.match(message, &groups)) {
      groups[1].getAsInteger(10, line);
      groups[2].getAsInteger(10, column);
      message = groups[3].str();
    }
    mlir::emitError(FileLineColLoc::get(context, bufferName, line,
                                        std::max(column, 1u)),
                    "invalid JSON: " + message);
    return nullptr;
  }
  positions.emplace(text);
  if (!positions->getDuplicate().empty()) {
    // Located at the first occurrence; the message names the field.
    error(positions->getDuplicate(), "the field is given twice");
    return nullptr;
  }
  const json::Object *object = root->getAsObject();
  if (!object) {
    error("", "expected a graph object (with \"nodes\") or a single op "
              "object (with \"type\"), got " +
                  describe(*root));
    return nullptr;
  }
  context->loadDialect<kgraph::KGraphDialect, func::FuncDialect,
                       arith::ArithDialect>();
  module = ModuleOp::create(FileLineColLoc::get(context, bufferName, 1, 1));
  builder.setInsertionPointToEnd(module->getBody());
  LogicalResult imported = failure();
  if (object->get("nodes") || object->get("format"))
    imported = importGraph(*object);
  else if (object->get("type"))
    imported = importSingleOp(*object);
  else
    error("", "expected a graph object (with \"nodes\") or a single op "
              "object (with \"type\")");
  if (failed(imported))
    return nullptr;

  // The function's type from its arguments and results; parameter marks.
  SmallVector<Type> resultTypes;
  for (Value v : cast<func::ReturnOp>(body->getTerminator()).getOperands())
    resultTypes.push_back(v.getType());
  func.setType(
      FunctionType::get(context, body->getArgumentTypes(), resultTypes));
  for (auto &[index, name] : paramArgs)
    func.setArgAttr(index, "kgraph.param", builder.getStringAttr(name));
  if (hasWeights) {
    SmallString<256> resolved(weightsFile);
    if (!llvm::sys::path::is_absolute(resolved) && !options.graphDir.empty()) {
      resolved = options.graphDir;
      llvm::sys::path::append(resolved, weightsFile);
    }
    std::string recorded = llvm::sys::path::is_absolute(weightsFile)
                               ? weightsFile
                               : relativePath(resolved, options.outputDir);
    (*module)->setAttr("kgraph.weights", builder.getStringAttr(recorded));
  }
  if (failed(mlir::verify(*module))) {
    mlir::emitError(module->getLoc(),
                    "internal error: the imported module does not verify");
    return nullptr;
  }
  return std::move(module);
}

LogicalResult GraphImporter::importGraph(const json::Object &root) {
  Fields f(*this, root, "");
  std::string format = "kgraph-graph";
  bool formatGiven = false;
  if (failed(f.readString("format", format, &formatGiven)))
    return failure();
  if (format != "kgraph-graph")
    return error("format", "expected \"kgraph-graph\", got \"" + format + "\"");
  int64_t version = 1;
  if (failed(f.readInt("version", version, 0)))
    return failure();
  if (version != 1)
    return error("version", "unsupported version " + Twine(version) +
                                ": this kgraph-translate reads version 1");
  std::string name = "main";
  if (failed(f.readString("name", name)))
    return failure();
  if (name.empty())
    return error("name", "expected a non-empty function name");
  std::string description;
  if (failed(f.readString("description", description)))
    return failure();
  defaultType = builder.getF32Type();
  if (failed(parseDType(f, "dtype", defaultType)) ||
      failed(parseLayout(f, "layout", defaultLayout)))
    return failure();
  if (failed(f.readString("weights", weightsFile, &hasWeights)))
    return failure();
  if (hasWeights && failed(loadWeights(weightsFile, "weights")))
    return failure();

  const json::Value *inputsValue = f.get("inputs");
  const json::Value *nodesValue = f.get("nodes");
  const json::Value *outputsValue = f.get("outputs");
  if (failed(f.finish("a graph")))
    return failure();
  if (!nodesValue)
    return error("", "a graph needs \"nodes\"");
  const json::Array *nodes = nodesValue->getAsArray();
  if (!nodes)
    return error("nodes", "expected a list of nodes, got " +
                              describe(*nodesValue));
  if (nodes->empty())
    return error("nodes", "a graph needs at least one node");
  if (failed(checkNodeTypes(*nodes)))
    return failure();
  if (!inputsValue)
    return error("", "a graph needs \"inputs\"");
  const json::Array *inputs = inputsValue->getAsArray();
  if (!inputs)
    return error("inputs", "expected a list of inputs, got " +
                               describe(*inputsValue));

  func = func::FuncOp::create(builder, module->getLoc(), name,
                              builder.getFunctionType({}, {}));
  body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);

  for (auto [i, input] : llvm::enumerate(*inputs)) {
    std::string path = indexPath("inputs", i);
    const json::Object *object = input.getAsObject();
    if (!object)
      return error(path, "expected an input object {\"name\", \"shape\", "
                         "\"dtype\"}, got " +
                             describe(input));
    Fields in(*this, *object, path);
    std::string inputName;
    bool nameGiven = false;
    SmallVector<int64_t> shape;
    bool shapeGiven = false;
    Type type = defaultType;
    if (failed(in.readString("name", inputName, &nameGiven)) ||
        failed(in.readIntList("shape", shape, 1, &shapeGiven)) ||
        failed(parseDType(in, "dtype", type)) ||
        failed(in.finish("a graph input")))
      return failure();
    if (!nameGiven || inputName.empty())
      return error(path, "an input needs a non-empty \"name\"");
    if (!shapeGiven)
      return error(path, "input '" + inputName + "' needs a \"shape\"");
    if (product(shape) > kMaxElements)
      return error(in.pathOf("shape"), "a tensor of " +
                                           formatShape(shape) +
                                           " is too large");
    if (values.count(inputName))
      return error(in.pathOf("name"), "'" + inputName + "' is defined twice");
    auto [line, column] = positions->lineColumn(path);
    Location loc = NameLoc::get(
        builder.getStringAttr(inputName),
        FileLineColLoc::get(context, bufferName, line, column));
    Value arg =
        body->addArgument(RankedTensorType::get(shape, type), loc);
    values[inputName] = {arg, path};
    if (!lastValue)
      lastValue = arg;
  }

  // Names of all nodes, so a reference to a later one can say so.
  for (auto [i, node] : llvm::enumerate(*nodes))
    if (std::optional<StringRef> n = node.getAsObject()->getString("name"))
      laterNodes.try_emplace(*n, indexPath("nodes", i));

  for (auto [i, node] : llvm::enumerate(*nodes))
    if (failed(importNode(*node.getAsObject(), indexPath("nodes", i), i)))
      return failure();

  SmallVector<Value> results;
  if (!outputsValue) {
    results.push_back(lastValue);
  } else {
    const json::Array *outputs = outputsValue->getAsArray();
    if (!outputs)
      return error("outputs", "expected a list of value names, got " +
                                  describe(*outputsValue));
    if (outputs->empty())
      return error("outputs", "a graph needs at least one output");
    for (auto [i, output] : llvm::enumerate(*outputs)) {
      std::string path = indexPath("outputs", i);
      std::optional<StringRef> n = output.getAsString();
      if (!n)
        return error(path, "expected a value name, got " + describe(output));
      auto it = values.find(*n);
      if (it == values.end())
        return error(path, "'" + *n +
                               "' is not a graph input or the name of a node");
      results.push_back(it->second.value);
    }
  }
  func::ReturnOp::create(builder, func.getLoc(), results);
  return success();
}

LogicalResult GraphImporter::importSingleOp(const json::Object &root) {
  singleOp = true;
  const json::Value *type = root.get("type");
  std::optional<StringRef> typeName = type->getAsString();
  if (!typeName)
    return error("type", "expected a string, got " + describe(*type));
  if (!isKnownNodeType(*typeName)) {
    std::string supported;
    llvm::raw_string_ostream os(supported);
    llvm::interleave(kNodeTypes, os, ", ");
    return error("type", "1 node has a type kgraph-translate does not "
                         "support: " +
                             typeName->str() + "; supported types: " +
                             supported);
  }
  if (*typeName == "constant")
    return error("type", "a constant is a node of a graph (\"nodes\"); a "
                         "single op object computes on its \"input_shape\" "
                         "operand");
  if (root.get("inputs"))
    return error("inputs", "a single op object takes its operand from "
                           "\"input_shape\"; write a graph (\"nodes\", "
                           "\"inputs\") for named inputs");
  // The graph-level fields a single op may carry: read them into a Fields
  // of their own so the node's Fields sees the rest.
  Fields top(*this, root, "");
  defaultType = builder.getF32Type();
  bool dtypeGiven = false, layoutGiven = false;
  if (failed(parseDType(top, "dtype", defaultType, &dtypeGiven)) ||
      failed(parseLayout(top, "layout", defaultLayout, &layoutGiven)))
    return failure();
  nodeName = typeName->str();
  if (failed(top.readString("name", nodeName)))
    return failure();
  SmallVector<int64_t> shape;
  bool shapeGiven = false;
  if (failed(top.readIntList("input_shape", shape, 1, &shapeGiven)))
    return failure();
  if (!shapeGiven)
    return error("", *typeName + ": a single op object needs "
                                 "\"input_shape\"");
  if (product(shape) > kMaxElements)
    return error("input_shape",
                 "a tensor of " + formatShape(shape) + " is too large");
  if (!dtypeGiven)
    note(nodeName + ": dtype not given, using f32");
  bool layoutMatters = llvm::is_contained(
      {"conv2d", "max_pool2d", "avg_pool2d", "global_avg_pool",
       "global_max_pool", "batch_norm"},
      *typeName);
  if (!layoutGiven && layoutMatters)
    note(nodeName + ": layout not given, using nchw");

  func = func::FuncOp::create(builder, module->getLoc(), "main",
                              builder.getFunctionType({}, {}));
  body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  Location loc = NameLoc::get(builder.getStringAttr("input"),
                              FileLineColLoc::get(context, bufferName, 1, 1));
  lastValue =
      body->addArgument(RankedTensorType::get(shape, defaultType), loc);
  values["input"] = {lastValue, "input_shape"};
  if (failed(importNode(root, "", 0)))
    return failure();
  func::ReturnOp::create(builder, func.getLoc(), ValueRange{lastValue});
  return success();
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::importNode(const json::Object &node,
                                        const std::string &path,
                                        size_t index) {
  Fields f(*this, node, path);
  std::string type;
  (void)f.readString("type", type);
  nodePath = path;
  if (!singleOp) {
    nodeName = indexPath("node", index);
    bool nameGiven = false;
    if (failed(f.readString("name", nodeName, &nameGiven)))
      return failure();
    if (!nameGiven || nodeName.empty())
      return error(path, "a node needs a non-empty \"name\"");
    auto previous = values.find(nodeName);
    if (previous != values.end())
      return error(f.pathOf("name"), "'" + nodeName +
                                         "' is defined twice (first at " +
                                         previous->second.definedAt + ")");
  } else {
    // Read by importSingleOp.
    for (StringRef key : {"name", "dtype", "layout", "input_shape"})
      (void)f.get(key);
  }
  auto [line, column] = positions->lineColumn(path);
  Location loc =
      NameLoc::get(builder.getStringAttr(nodeName),
                   FileLineColLoc::get(context, bufferName, line, column));

  StringRef t = type;
  LogicalResult imported = failure();
  if (t == "conv2d")
    imported = importConv2d(f, loc);
  else if (t == "linear")
    imported = importLinear(f, loc);
  else if (t == "matmul")
    imported = importMatmul(f, loc);
  else if (llvm::is_contained({"add", "sub", "mul", "div", "max", "min", "pow"},
                              t))
    imported = importBinary(f, loc, t);
  else if (t == "max_pool2d" || t == "avg_pool2d")
    imported = importPool(f, loc, t == "max_pool2d");
  else if (t == "global_avg_pool" || t == "global_max_pool")
    imported = importGlobalPool(f, loc, t == "global_max_pool");
  else if (t == "reduce_sum")
    imported = importReduce(f, loc, kgraph::ReduceKind::sum);
  else if (t == "reduce_mean")
    imported = importReduce(f, loc, kgraph::ReduceKind::mean);
  else if (t == "reduce_max")
    imported = importReduce(f, loc, kgraph::ReduceKind::max);
  else if (t == "softmax" || t == "log_softmax")
    imported = importSoftmax(f, loc, t == "log_softmax");
  else if (t == "reshape" || t == "flatten")
    imported = importReshape(f, loc, t == "flatten");
  else if (t == "transpose")
    imported = importTranspose(f, loc);
  else if (t == "concat")
    imported = importConcat(f, loc);
  else if (t == "slice")
    imported = importSlice(f, loc);
  else if (t == "broadcast_to")
    imported = importBroadcast(f, loc);
  else if (t == "cast")
    imported = importCast(f, loc);
  else if (t == "constant")
    imported = importConstant(f, loc);
  else if (t == "batch_norm")
    imported = importBatchNorm(f, loc);
  else if (t == "layer_norm")
    imported = importLayerNorm(f, loc);
  else if (t == "identity" || t == "dropout")
    imported = importIdentity(f, loc);
  else
    imported = importUnary(f, loc, t);
  if (failed(imported) || failed(f.finish(("a " + t + " node").str())))
    return failure();
  values[nodeName] = {result, path};
  lastValue = result;
  return success();
}

LogicalResult GraphImporter::readInputs(Fields &f, SmallVectorImpl<Value> &out,
                                        SmallVectorImpl<std::string> &paths,
                                        size_t expected, bool allowScalars,
                                        bool variadic) {
  std::string at = f.pathOf("inputs");
  const json::Value *inputs = singleOp ? nullptr : f.get("inputs");
  if (!inputs) {
    if (expected != 1 || variadic) {
      if (singleOp)
        return error(f.getPath(), "a single op object has one operand; a " +
                                      Twine(expected) +
                                      "-operand op needs a graph");
      return error(f.getPath(), "this node needs \"inputs\"");
    }
    if (!lastValue)
      return error(f.getPath(), "this node needs \"inputs\" (the graph has "
                                "no inputs and no earlier node)");
    out.push_back(lastValue);
    paths.push_back(at);
    return success();
  }
  const json::Array *array = inputs->getAsArray();
  if (!array)
    return error(at, "expected a list of value names, got " +
                         describe(*inputs));
  if (variadic ? array->empty() : array->size() != expected)
    return error(at, variadic ? Twine("expected at least one input")
                              : "expected " + Twine(expected) +
                                    (expected == 1 ? " input" : " inputs") +
                                    ", got " + Twine(array->size()));
  SmallVector<std::pair<size_t, double>> scalars;
  for (auto [i, input] : llvm::enumerate(*array)) {
    std::string path = indexPath(at, i);
    paths.push_back(path);
    if (std::optional<double> number = input.getAsNumber();
        number && input.kind() == json::Value::Number) {
      if (!allowScalars)
        return error(path, "expected a value name, got " + describe(input));
      scalars.push_back({i, *number});
      out.push_back(nullptr);
      continue;
    }
    std::optional<StringRef> name = input.getAsString();
    if (!name)
      return error(path, "expected a value name" +
                             Twine(allowScalars ? " or a number" : "") +
                             ", got " + describe(input));
    auto it = values.find(*name);
    if (it == values.end()) {
      auto later = laterNodes.find(*name);
      if (later != laterNodes.end() && later->second != nodePath)
        return error(path, "'" + *name + "' is defined later, at " +
                               later->second +
                               ": nodes must come after the nodes they use");
      if (*name == nodeName)
        return error(path, "'" + *name + "' is this node's own name");
      return error(path, "'" + *name +
                             "' is not a graph input or an earlier node");
    }
    out.push_back(it->second.value);
  }
  if (!scalars.empty()) {
    Value tensor;
    for (Value v : out)
      if (v)
        tensor = v;
    if (!tensor)
      return error(at, "at least one input must be a value, not a number");
    Type elementType = cast<RankedTensorType>(tensor.getType()).getElementType();
    for (auto [i, number] : scalars) {
      if (auto intType = dyn_cast<IntegerType>(elementType)) {
        unsigned width = intType.getWidth();
        double lo = -std::ldexp(1.0, width - 1),
               hi = std::ldexp(1.0, width - 1) - 1;
        if (number != std::trunc(number) || number < lo || number > hi)
          return error(paths[i], "expected an integer from " +
                                     formatNumber(lo) + " to " +
                                     formatNumber(hi) + " for an " +
                                     typeName(elementType) +
                                     " operand, got " + formatNumber(number));
      }
      out[i] = constantLike(number, elementType);
    }
  }
  return success();
}

Value GraphImporter::constantLike(double number, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (isa<FloatType>(elementType))
    element = builder.getFloatAttr(elementType, number);
  else
    element = IntegerAttr::get(
        elementType, APInt(elementType.getIntOrFloatBitWidth(),
                           static_cast<int64_t>(number), /*isSigned=*/true));
  return arith::ConstantOp::create(builder, func.getLoc(),
                                   DenseElementsAttr::get(type, element));
}

FailureOr<Value> GraphImporter::parameter(StringRef path, StringRef tensorName,
                                          RankedTensorType type,
                                          StringRef what) {
  if (hasWeights) {
    const WeightInfo *info = lookupWeight(tensorName);
    if (!info) {
      error(path, "the weights file '" + weightsFile + "' has no tensor '" +
                      tensorName + "'");
      return failure();
    }
    StringRef expectedDType = safetensorsDType(typeName(type.getElementType()));
    if (info->dtype != expectedDType ||
        ArrayRef<int64_t>(info->shape) != type.getShape()) {
      error(path, "tensor '" + tensorName + "' of '" + weightsFile + "' is " +
                      formatShape(info->shape) + " " + info->dtype +
                      ", expected " + formatShape(type.getShape()) + " " +
                      expectedDType + " (" + what + ")");
      return failure();
    }
  }
  auto it = params.find(tensorName);
  if (it != params.end()) {
    if (it->second.getType() != type) {
      error(path, "tensor '" + tensorName + "' is used as " +
                      formatType(type) + " here but as " +
                      formatType(cast<RankedTensorType>(it->second.getType())) +
                      " before");
      return failure();
    }
    return it->second;
  }
  auto [line, column] = positions->lineColumn(path);
  Value arg = body->addArgument(
      type, NameLoc::get(builder.getStringAttr(tensorName),
                         FileLineColLoc::get(context, bufferName, line,
                                             column)));
  if (hasWeights) {
    params[tensorName] = arg;
    paramArgs.push_back(
        {cast<BlockArgument>(arg).getArgNumber(), tensorName.str()});
  } else if (!tensorName.empty()) {
    params[tensorName] = arg;
  }
  return arg;
}

Value GraphImporter::add(Location loc, Value lhs, Value rhs) {
  return kgraph::AddOp::create(builder, loc, lhs, rhs);
}

LogicalResult GraphImporter::readInput(Fields &f, Value &x, std::string &path) {
  SmallVector<Value> inputs;
  SmallVector<std::string> paths;
  if (failed(readInputs(f, inputs, paths, 1, false)) ||
      failed(checkInputShape(f, inputs[0])))
    return failure();
  x = inputs[0];
  path = paths[0];
  return success();
}

/// The optional "bias" of a conv2d or linear node: false (the default),
/// true (the tensor "<node>.bias") or a tensor name.
LogicalResult GraphImporter::readBias(Fields &f, bool &hasBias,
                                      std::string &name) {
  const json::Value *bias = f.get("bias");
  if (!bias) {
    noteDefault("bias", "false");
    return success();
  }
  if (std::optional<bool> b = bias->getAsBoolean()) {
    hasBias = *b;
    name = nodeName + ".bias";
    return success();
  }
  if (std::optional<StringRef> given = bias->getAsString()) {
    hasBias = true;
    name = given->str();
    return success();
  }
  return error(f.pathOf("bias"),
               "expected true, false or a tensor name, got " + describe(*bias));
}

LogicalResult GraphImporter::readAccumulatorType(Fields &f, Type operandType,
                                                 Type &out) {
  Type i8 = builder.getIntegerType(8);
  out = operandType == i8 ? builder.getIntegerType(32) : operandType;
  bool given = false;
  if (failed(parseDType(f, "out_dtype", out, &given)))
    return failure();
  if (!given)
    return success();
  Type f32 = builder.getF32Type();
  bool ok = out == operandType ? operandType != i8
                               : (out == f32 && (operandType.isF16() ||
                                                 operandType.isBF16())) ||
                                     (operandType == i8 && out.isInteger(32));
  if (!ok)
    return error(f.pathOf("out_dtype"),
                 "a " + typeName(operandType) + " operand cannot produce " +
                     typeName(out) +
                     " (f32 -> f32, f16 -> f16 or f32, bf16 -> bf16 or f32, "
                     "i8 -> i32)");
  return success();
}

LogicalResult
GraphImporter::readPrecision(Fields &f, Type operandType,
                             std::optional<kgraph::Precision> &out) {
  std::string name;
  bool given = false;
  if (failed(f.readString("precision", name, &given)))
    return failure();
  if (!given)
    return success();
  out = kgraph::symbolizePrecision(name);
  if (!out)
    return error(f.pathOf("precision"),
                 "unknown precision '" + name + "': expected ieee or tf32");
  if (*out == kgraph::Precision::tf32 && !operandType.isF32())
    return error(f.pathOf("precision"), "tf32 is only for f32 operands");
  return success();
}

LogicalResult GraphImporter::checkInputShape(Fields &f, Value input) {
  if (singleOp)
    return success();
  SmallVector<int64_t> shape;
  bool given = false;
  if (failed(f.readIntList("input_shape", shape, 1, &given)))
    return failure();
  auto type = cast<RankedTensorType>(input.getType());
  if (given && ArrayRef<int64_t>(shape) != type.getShape())
    return error(f.pathOf("input_shape"),
                 "the input is " + formatShape(type.getShape()) + ", not " +
                     formatShape(shape));
  return success();
}

LogicalResult GraphImporter::requireFloat(StringRef path, Value input,
                                          StringRef what) {
  Type elementType = cast<RankedTensorType>(input.getType()).getElementType();
  if (isa<FloatType>(elementType))
    return success();
  return error(path, what + " needs a float input (f32, f16 or bf16), got " +
                         typeName(elementType));
}

LogicalResult GraphImporter::normalizeAxis(StringRef path, int64_t &axis,
                                           int64_t rank) {
  if (axis < -rank || axis >= rank)
    return error(path, "axis " + Twine(axis) + " is out of range for rank " +
                           Twine(rank) + " (expected " + Twine(-rank) +
                           " to " + Twine(rank - 1) + ")");
  if (axis < 0)
    axis += rank;
  return success();
}

LogicalResult GraphImporter::importConv2d(Fields &f, Location loc) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  auto xType = cast<RankedTensorType>(x.getType());
  if (xType.getRank() != 4)
    return error(xPath, "conv2d needs a 4-d input, got " +
                            formatShape(xType.getShape()));
  kgraph::Layout layout = defaultLayout;
  if (!singleOp && failed(parseLayout(f, "layout", layout)))
    return failure();
  bool nchw = layout == kgraph::Layout::nchw;
  ArrayRef<int64_t> s = xType.getShape();
  int64_t n = s[0], c = nchw ? s[1] : s[3], h = nchw ? s[2] : s[1],
          w = nchw ? s[3] : s[2];

  std::string weightName = nodeName + ".weight";
  bool weightNamed = false;
  if (failed(f.readString("weight", weightName, &weightNamed)))
    return failure();
  const WeightInfo *fileWeight = lookupWeight(weightName);
  bool fromFile = fileWeight && fileWeight->shape.size() == 4;

  int64_t groups = 1;
  bool groupsGiven = false;
  if (failed(f.readInt("groups", groups, 1, &groupsGiven)))
    return failure();
  if (!groupsGiven)
    noteDefault("groups", "1");
  if (c % groups)
    return error(f.pathOf("groups"), "groups = " + Twine(groups) +
                                         " does not divide the " + Twine(c) +
                                         " input channels");

  int64_t outChannels = 0;
  bool outGiven = false;
  if (failed(f.readInt("out_channels", outChannels, 1, &outGiven)))
    return failure();
  if (!outGiven) {
    if (fromFile) {
      outChannels = fileWeight->shape[0];
    } else if (singleOp) {
      outChannels = groups == 1 ? 64 : c;
      noteDefault("out_channels", Twine(outChannels));
    } else {
      return error(f.getPath(),
                   "conv2d '" + nodeName + "' needs \"out_channels\"" +
                       (hasWeights ? " (the weights file has no 4-d tensor '" +
                                         weightName + "')"
                                   : std::string()));
    }
  }
  if (outChannels % groups)
    return error(f.pathOf("out_channels"),
                 "groups = " + Twine(groups) + " does not divide the " +
                     Twine(outChannels) + " output channels");

  std::array<int64_t, 2> kernel{0, 0}, stride{1, 1}, dilation{1, 1};
  bool kernelGiven = false, strideGiven = false, dilationGiven = false;
  if (failed(f.readPair("kernel_size", kernel, 1, &kernelGiven)) ||
      failed(f.readPair("stride", stride, 1, &strideGiven)) ||
      failed(f.readPair("dilation", dilation, 1, &dilationGiven)))
    return failure();
  if (!kernelGiven) {
    if (!fromFile)
      return error(f.getPath(), "conv2d '" + nodeName +
                                    "' needs \"kernel_size\"");
    kernel = nchw ? std::array<int64_t, 2>{fileWeight->shape[2],
                                           fileWeight->shape[3]}
                  : std::array<int64_t, 2>{fileWeight->shape[1],
                                           fileWeight->shape[2]};
  }
  if (!strideGiven)
    noteDefault("stride", "[1, 1]");
  if (!dilationGiven)
    noteDefault("dilation", "[1, 1]");

  std::array<int64_t, 4> padding{0, 0, 0, 0};
  bool same = false, paddingGiven = false;
  if (failed(f.readPadding("padding", padding, same, &paddingGiven)))
    return failure();
  if (!paddingGiven)
    noteDefault("padding", "[0, 0]");
  if (same) {
    if (stride[0] != 1 || stride[1] != 1)
      return error(f.pathOf("padding"),
                   "padding \"same\" needs stride 1, got " +
                       formatShape(stride));
    int64_t th = dilation[0] * (kernel[0] - 1),
            tw = dilation[1] * (kernel[1] - 1);
    padding = {th / 2, th - th / 2, tw / 2, tw - tw / 2};
  }

  std::array<int64_t, 2> out;
  for (unsigned d = 0; d < 2; ++d) {
    int64_t in = d == 0 ? h : w;
    int64_t span = in + padding[2 * d] + padding[2 * d + 1] -
                   dilation[d] * (kernel[d] - 1) - 1;
    if (span < 0)
      return error(f.pathOf("kernel_size"),
                   Twine("the ") + (d == 0 ? "height" : "width") +
                       " of the kernel (" + Twine(kernel[d]) +
                       (dilation[d] > 1 ? ", dilated " + Twine(dilation[d])
                                        : Twine()) +
                       ") exceeds the padded input (" + Twine(in) + " + " +
                       Twine(padding[2 * d] + padding[2 * d + 1]) + ")");
    out[d] = span / stride[d] + 1;
  }

  Type resultElement;
  if (failed(readAccumulatorType(f, xType.getElementType(), resultElement)))
    return failure();
  std::optional<kgraph::Precision> precision;
  if (failed(readPrecision(f, xType.getElementType(), precision)))
    return failure();

  std::string biasName;
  bool hasBias = false;
  if (failed(readBias(f, hasBias, biasName)))
    return failure();

  int64_t cPerGroup = c / groups;
  SmallVector<int64_t> filterShape =
      nchw ? SmallVector<int64_t>{outChannels, cPerGroup, kernel[0], kernel[1]}
           : SmallVector<int64_t>{outChannels, kernel[0], kernel[1], cPerGroup};
  auto filterType = RankedTensorType::get(filterShape, xType.getElementType());
  FailureOr<Value> filter = parameter(
      weightNamed ? f.pathOf("weight") : f.getPath(), weightName, filterType,
      nchw ? "out_channels, in_channels / groups, kernel_h, kernel_w"
           : "out_channels, kernel_h, kernel_w, in_channels / groups");
  if (failed(filter))
    return failure();

  SmallVector<int64_t> resultShape =
      nchw ? SmallVector<int64_t>{n, outChannels, out[0], out[1]}
           : SmallVector<int64_t>{n, out[0], out[1], outChannels};
  auto resultType = RankedTensorType::get(resultShape, resultElement);
  SmallVector<NamedAttribute> attrs = {
      builder.getNamedAttr("layout",
                           kgraph::LayoutAttr::get(context, layout)),
      builder.getNamedAttr("strides", builder.getDenseI64ArrayAttr(stride)),
      builder.getNamedAttr("padding", builder.getDenseI64ArrayAttr(padding)),
      builder.getNamedAttr("dilations",
                           builder.getDenseI64ArrayAttr(dilation)),
      builder.getNamedAttr("groups", builder.getI64IntegerAttr(groups))};
  if (precision)
    attrs.push_back(builder.getNamedAttr(
        "precision", kgraph::PrecisionAttr::get(context, *precision)));
  result = kgraph::Conv2dOp::create(builder, loc, TypeRange{resultType},
                                    ValueRange{x, *filter}, attrs);
  if (hasBias) {
    auto biasType = RankedTensorType::get({outChannels}, resultElement);
    FailureOr<Value> bias =
        parameter(f.pathOf("bias"), biasName, biasType, "out_channels");
    if (failed(bias))
      return failure();
    Value b = *bias;
    if (nchw)
      b = kgraph::ReshapeOp::create(
          builder, loc,
          RankedTensorType::get({outChannels, 1, 1}, resultElement), b);
    result = add(loc, result, b);
  }
  return success();
}

LogicalResult GraphImporter::importLinear(Fields &f, Location loc) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  auto xType = cast<RankedTensorType>(x.getType());
  if (xType.getRank() < 2)
    return error(xPath, "linear needs an input of rank 2 or more, got " +
                            formatShape(xType.getShape()));
  int64_t k = xType.getShape().back();
  std::string weightName = nodeName + ".weight";
  bool weightNamed = false;
  if (failed(f.readString("weight", weightName, &weightNamed)))
    return failure();
  const WeightInfo *fileWeight = lookupWeight(weightName);
  int64_t outFeatures = 0;
  bool outGiven = false;
  if (failed(f.readInt("out_features", outFeatures, 1, &outGiven)))
    return failure();
  if (!outGiven) {
    if (fileWeight && fileWeight->shape.size() == 2) {
      outFeatures = fileWeight->shape[0];
    } else if (singleOp) {
      outFeatures = 64;
      noteDefault("out_features", "64");
    } else {
      return error(f.getPath(),
                   "linear '" + nodeName + "' needs \"out_features\"" +
                       (hasWeights ? " (the weights file has no 2-d tensor '" +
                                         weightName + "')"
                                   : std::string()));
    }
  }
  Type resultElement;
  std::optional<kgraph::Precision> precision;
  if (failed(readAccumulatorType(f, xType.getElementType(), resultElement)) ||
      failed(readPrecision(f, xType.getElementType(), precision)))
    return failure();
  std::string biasName;
  bool hasBias = false;
  if (failed(readBias(f, hasBias, biasName)))
    return failure();
  auto weightType =
      RankedTensorType::get({outFeatures, k}, xType.getElementType());
  FailureOr<Value> weight =
      parameter(weightNamed ? f.pathOf("weight") : f.getPath(), weightName,
                weightType, "out_features, in_features");
  if (failed(weight))
    return failure();
  ArrayRef<int64_t> s = xType.getShape();
  int64_t m = product(s.drop_back());
  Value lhs = x;
  if (xType.getRank() > 2)
    lhs = kgraph::ReshapeOp::create(
        builder, loc, RankedTensorType::get({m, k}, xType.getElementType()),
        x);
  auto mmType = RankedTensorType::get({m, outFeatures}, resultElement);
  SmallVector<NamedAttribute> attrs = {
      builder.getNamedAttr("transpose_b", builder.getUnitAttr())};
  if (precision)
    attrs.push_back(builder.getNamedAttr(
        "precision", kgraph::PrecisionAttr::get(context, *precision)));
  result = kgraph::MatmulOp::create(builder, loc, TypeRange{mmType},
                                    ValueRange{lhs, *weight}, attrs);
  if (xType.getRank() > 2) {
    SmallVector<int64_t> shape(s.drop_back());
    shape.push_back(outFeatures);
    result = kgraph::ReshapeOp::create(
        builder, loc, RankedTensorType::get(shape, resultElement), result);
  }
  if (hasBias) {
    FailureOr<Value> bias =
        parameter(f.pathOf("bias"), biasName,
                  RankedTensorType::get({outFeatures}, resultElement),
                  "out_features");
    if (failed(bias))
      return failure();
    result = add(loc, result, *bias);
  }
  return success();
}

LogicalResult GraphImporter::importMatmul(Fields &f, Location loc) {
  SmallVector<Value> inputs;
  SmallVector<std::string> paths;
  if (failed(readInputs(f, inputs, paths, 2, false)))
    return failure();
  bool ta = false, tb = false;
  if (failed(f.readBool("transpose_a", ta)) ||
      failed(f.readBool("transpose_b", tb)))
    return failure();
  auto aType = cast<RankedTensorType>(inputs[0].getType());
  auto bType = cast<RankedTensorType>(inputs[1].getType());
  for (unsigned i = 0; i < 2; ++i) {
    auto type = i ? bType : aType;
    if (type.getRank() != 2 && type.getRank() != 3)
      return error(paths[i], "matmul needs 2-d or 3-d (batched) operands, "
                             "got " +
                                 formatShape(type.getShape()));
  }
  if (aType.getRank() != bType.getRank())
    return error(f.pathOf("inputs"),
                 "the operands have different ranks: " +
                     formatShape(aType.getShape()) + " and " +
                     formatShape(bType.getShape()));
  if (aType.getElementType() != bType.getElementType())
    return error(f.pathOf("inputs"),
                 "the operands have different dtypes: " +
                     typeName(aType.getElementType()) + " and " +
                     typeName(bType.getElementType()) +
                     " (insert a cast node)");
  ArrayRef<int64_t> a = aType.getShape(), b = bType.getShape();
  bool batched = a.size() == 3;
  if (batched && a[0] != b[0])
    return error(f.pathOf("inputs"), "the batch sizes differ: " +
                                         Twine(a[0]) + " and " + Twine(b[0]));
  int64_t r = a.size();
  int64_t m = ta ? a[r - 1] : a[r - 2], ka = ta ? a[r - 2] : a[r - 1];
  int64_t kb = tb ? b[r - 1] : b[r - 2], nn = tb ? b[r - 2] : b[r - 1];
  if (ka != kb)
    return error(f.pathOf("inputs"),
                 "the inner dimensions differ: " + formatShape(a) +
                     (ta ? " (transposed)" : "") + " has K = " + Twine(ka) +
                     ", " + formatShape(b) + (tb ? " (transposed)" : "") +
                     " has K = " + Twine(kb));
  Type resultElement;
  std::optional<kgraph::Precision> precision;
  if (failed(readAccumulatorType(f, aType.getElementType(), resultElement)) ||
      failed(readPrecision(f, aType.getElementType(), precision)))
    return failure();
  SmallVector<int64_t> shape;
  if (batched)
    shape.push_back(a[0]);
  shape.append({m, nn});
  SmallVector<NamedAttribute> attrs;
  if (ta)
    attrs.push_back(builder.getNamedAttr("transpose_a", builder.getUnitAttr()));
  if (tb)
    attrs.push_back(builder.getNamedAttr("transpose_b", builder.getUnitAttr()));
  if (precision)
    attrs.push_back(builder.getNamedAttr(
        "precision", kgraph::PrecisionAttr::get(context, *precision)));
  result = kgraph::MatmulOp::create(
      builder, loc, TypeRange{RankedTensorType::get(shape, resultElement)},
      ValueRange{inputs[0], inputs[1]}, attrs);
  return success();
}

LogicalResult GraphImporter::importUnary(Fields &f, Location loc,
                                         StringRef type) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  bool floatOnly = !llvm::is_contained(
      {"relu", "neg", "abs", "clamp", "relu6", "hardtanh"}, type);
  if (floatOnly && failed(requireFloat(xPath, x, type)))
    return failure();
  if (type == "relu") {
    result = kgraph::ReluOp::create(builder, loc, x);
  } else if (type == "neg") {
    result = kgraph::NegOp::create(builder, loc, x);
  } else if (type == "abs") {
    result = kgraph::AbsOp::create(builder, loc, x);
  } else if (type == "exp") {
    result = kgraph::ExpOp::create(builder, loc, x);
  } else if (type == "log") {
    result = kgraph::LogOp::create(builder, loc, x);
  } else if (type == "sqrt") {
    result = kgraph::SqrtOp::create(builder, loc, x);
  } else if (type == "rsqrt") {
    result = kgraph::RsqrtOp::create(builder, loc, x);
  } else if (type == "tanh") {
    result = kgraph::TanhOp::create(builder, loc, x);
  } else if (type == "sigmoid") {
    result = kgraph::SigmoidOp::create(builder, loc, x);
  } else if (type == "silu") {
    Value s = kgraph::SigmoidOp::create(builder, loc, x);
    result = kgraph::MulOp::create(builder, loc, x, s);
  } else if (type == "gelu") {
    std::string approximate = "none";
    bool approximateGiven = false;
    if (failed(f.readString("approximate", approximate, &approximateGiven)))
      return failure();
    if (!approximateGiven)
      noteDefault("approximate", "\"none\"");
    if (approximate != "none" && approximate != "tanh")
      return error(f.pathOf("approximate"),
                   "expected \"none\" or \"tanh\", got \"" + approximate +
                       "\"");
    SmallVector<NamedAttribute> attrs;
    if (approximate == "tanh")
      attrs.push_back(
          builder.getNamedAttr("approximate", builder.getUnitAttr()));
    result = kgraph::GeluOp::create(builder, loc, TypeRange{x.getType()},
                                    ValueRange{x}, attrs);
  } else {
    // clamp, hardtanh, relu6.
    double lo = type == "relu6" ? 0.0 : -1.0, hi = type == "relu6" ? 6.0 : 1.0;
    if (type != "relu6") {
      bool loGiven = false, hiGiven = false;
      if (failed(f.readNumber("min", lo, &loGiven)) ||
          failed(f.readNumber("max", hi, &hiGiven)))
        return failure();
      if (type == "hardtanh" && !loGiven)
        noteDefault("min", "-1");
      if (type == "hardtanh" && !hiGiven)
        noteDefault("max", "1");
      if (type == "clamp" && !loGiven && !hiGiven)
        return error(f.getPath(), "clamp needs \"min\", \"max\" or both");
      if (type == "clamp" && !loGiven)
        lo = -std::numeric_limits<double>::infinity();
      if (type == "clamp" && !hiGiven)
        hi = std::numeric_limits<double>::infinity();
      if (lo > hi)
        return error(f.pathOf("min"), "min " + formatNumber(lo) +
                                          " is greater than max " +
                                          formatNumber(hi));
    }
    result = kgraph::ClampOp::create(builder, loc, x,
                                     builder.getF64FloatAttr(lo),
                                     builder.getF64FloatAttr(hi));
  }
  return success();
}

/// The numpy broadcast of two shapes, or std::nullopt; `badDim` is the
/// first (negative, from the end) dim that does not broadcast.
static std::optional<SmallVector<int64_t>>
broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b, int64_t &badDim) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      badDim = -static_cast<int64_t>(i) - 1;
      return std::nullopt;
    }
    shape[rank - 1 - i] = da == 1 ? db : da;
  }
  return shape;
}

LogicalResult GraphImporter::importBinary(Fields &f, Location loc,
                                          StringRef type) {
  SmallVector<Value> inputs;
  SmallVector<std::string> paths;
  if (failed(readInputs(f, inputs, paths, 2, true)))
    return failure();
  auto aType = cast<RankedTensorType>(inputs[0].getType());
  auto bType = cast<RankedTensorType>(inputs[1].getType());
  if (aType.getElementType() != bType.getElementType())
    return error(f.pathOf("inputs"),
                 type + " operands have different dtypes: " +
                     typeName(aType.getElementType()) + " and " +
                     typeName(bType.getElementType()) +
                     " (insert a cast node)");
  int64_t badDim = 0;
  if (!broadcastShapes(aType.getShape(), bType.getShape(), badDim))
    return error(f.pathOf("inputs"),
                 "shapes " + formatShape(aType.getShape()) + " and " +
                     formatShape(bType.getShape()) +
                     " do not broadcast (dim " + Twine(badDim) + ")");
  if (type == "pow" && failed(requireFloat(paths[0], inputs[0], "pow")))
    return failure();
  Value a = inputs[0], b = inputs[1];
  if (type == "add")
    result = kgraph::AddOp::create(builder, loc, a, b);
  else if (type == "sub")
    result = kgraph::SubOp::create(builder, loc, a, b);
  else if (type == "mul")
    result = kgraph::MulOp::create(builder, loc, a, b);
  else if (type == "div")
    result = kgraph::DivOp::create(builder, loc, a, b);
  else if (type == "max")
    result = kgraph::MaxOp::create(builder, loc, a, b);
  else if (type == "min")
    result = kgraph::MinOp::create(builder, loc, a, b);
  else
    result = kgraph::PowOp::create(builder, loc, a, b);
  return success();
}

LogicalResult GraphImporter::importPool(Fields &f, Location loc, bool isMax) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  auto xType = cast<RankedTensorType>(x.getType());
  StringRef what = isMax ? "max_pool2d" : "avg_pool2d";
  if (xType.getRank() != 4)
    return error(xPath, what + " needs a 4-d input, got " +
                            formatShape(xType.getShape()));
  if (!isMax && failed(requireFloat(xPath, x, what)))
    return failure();
  kgraph::Layout layout = defaultLayout;
  if (!singleOp && failed(parseLayout(f, "layout", layout)))
    return failure();
  bool nchw = layout == kgraph::Layout::nchw;
  std::array<int64_t, 2> kernel{0, 0}, stride{0, 0}, dilation{1, 1};
  bool kernelGiven = false, strideGiven = false;
  if (failed(f.readPair("kernel_size", kernel, 1, &kernelGiven)) ||
      failed(f.readPair("stride", stride, 1, &strideGiven)) ||
      failed(f.readPair("dilation", dilation, 1)))
    return failure();
  if (!kernelGiven)
    return error(f.getPath(), what + " '" + nodeName +
                                  "' needs \"kernel_size\"");
  if (dilation[0] != 1 || dilation[1] != 1)
    return error(f.pathOf("dilation"),
                 "pooling with dilation is not supported (kgraph.pool2d has "
                 "none)");
  if (!strideGiven) {
    stride = kernel;
    noteDefault("stride", formatShape(stride) + " (the kernel size)");
  }
  std::array<int64_t, 4> padding{0, 0, 0, 0};
  bool same = false, paddingGiven = false;
  if (failed(f.readPadding("padding", padding, same, &paddingGiven)))
    return failure();
  if (!paddingGiven)
    noteDefault("padding", "[0, 0]");
  if (same)
    return error(f.pathOf("padding"),
                 "padding \"same\" is for conv2d; give the pooling padding "
                 "as integers");
  bool ceilMode = false, countPad = false;
  if (failed(f.readBool("ceil_mode", ceilMode)))
    return failure();
  if (!isMax && failed(f.readBool("count_include_pad", countPad)))
    return failure();
  ArrayRef<int64_t> s = xType.getShape();
  int64_t h = nchw ? s[2] : s[1], w = nchw ? s[3] : s[2];
  // PyTorch's rules (ONNX's agree): ceil_mode rounds the output size up but
  // drops a last window that would start past the input and its leading
  // padding; the extra window becomes trailing padding, which pool2d ignores.
  std::array<int64_t, 4> poolPadding = padding;
  for (unsigned d = 0; d < 2; ++d) {
    if (padding[2 * d] >= kernel[d] || padding[2 * d + 1] >= kernel[d])
      return error(f.pathOf("padding"),
                   "padding " + formatShape(padding) +
                       " must be smaller than the kernel " +
                       formatShape(kernel) + " along each dim");
    int64_t in = d == 0 ? h : w;
    int64_t span = in + padding[2 * d] + padding[2 * d + 1];
    if (span < kernel[d])
      return error(f.pathOf("kernel_size"),
                   "the kernel " + formatShape(kernel) +
                       " is larger than the padded input " +
                       formatShape({h, w}));
    if (ceilMode) {
      int64_t out = llvm::divideCeil(span - kernel[d], stride[d]) + 1;
      if ((out - 1) * stride[d] >= in + padding[2 * d])
        --out;
      poolPadding[2 * d + 1] +=
          std::max<int64_t>(0, (out - 1) * stride[d] + kernel[d] - span);
    }
  }
  SmallVector<NamedAttribute> attrs = {
      builder.getNamedAttr(
          "kind", kgraph::PoolKindAttr::get(context, isMax
                                                         ? kgraph::PoolKind::max
                                                         : kgraph::PoolKind::avg)),
      builder.getNamedAttr("kernel", builder.getDenseI64ArrayAttr(kernel)),
      builder.getNamedAttr("strides", builder.getDenseI64ArrayAttr(stride)),
      builder.getNamedAttr("padding",
                           builder.getDenseI64ArrayAttr(poolPadding)),
      builder.getNamedAttr("layout",
                           kgraph::LayoutAttr::get(context, layout))};
  result = kgraph::Pool2dOp::create(builder, loc, ValueRange{x}, attrs);
  if (!countPad)
    return success();
  // count_include_pad: pool2d avg divides by each window's in-bounds
  // elements; PyTorch by the window clipped to the padded input (ceil_mode's
  // extra window not counted). Scale by their ratio per output position.
  auto poolType = cast<RankedTensorType>(result.getType());
  int64_t oh = poolType.getShape()[nchw ? 2 : 1];
  int64_t ow = poolType.getShape()[nchw ? 3 : 2];
  auto counts = [&](unsigned d, int64_t o, int64_t in) {
    int64_t start = o * stride[d] - padding[2 * d];
    int64_t inBounds = std::min(start + kernel[d], in) - std::max<int64_t>(start, 0);
    int64_t padded = std::min(start + kernel[d], in + padding[2 * d + 1]) - start;
    return std::make_pair(inBounds, padded);
  };
  SmallVector<double> scale;
  bool allOne = true;
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      auto [ih, ph] = counts(0, i, h);
      auto [iw, pw] = counts(1, j, w);
      scale.push_back(double(ih * iw) / double(ph * pw));
      allOne &= scale.back() == 1.0;
    }
  if (allOne)
    return success();
  auto floatType = cast<FloatType>(xType.getElementType());
  SmallVector<APFloat> values;
  for (double v : scale) {
    APFloat a(v);
    bool lost;
    a.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &lost);
    values.push_back(a);
  }
  SmallVector<int64_t> scaleShape =
      nchw ? SmallVector<int64_t>{1, 1, oh, ow}
           : SmallVector<int64_t>{1, oh, ow, 1};
  Value scaleValue = arith::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(RankedTensorType::get(scaleShape, floatType),
                             values));
  result = kgraph::MulOp::create(builder, loc, result, scaleValue);
  return success();
}

LogicalResult GraphImporter::importGlobalPool(Fields &f, Location loc,
                                              bool isMax) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  auto xType = cast<RankedTensorType>(x.getType());
  StringRef what = isMax ? "global_max_pool" : "global_avg_pool";
  if (xType.getRank() != 4)
    return error(xPath, what + " needs a 4-d input, got " +
                            formatShape(xType.getShape()));
  if (!isMax && failed(requireFloat(xPath, x, what)))
    return failure();
  kgraph::Layout layout = defaultLayout;
  if (!singleOp && failed(parseLayout(f, "layout", layout)))
    return failure();
  bool keepDims = true, keepGiven = false;
  if (failed(f.readBool("keep_dims", keepDims, &keepGiven)))
    return failure();
  if (!keepGiven)
    noteDefault("keep_dims", "true");
  SmallVector<int64_t> axes = layout == kgraph::Layout::nchw
                                  ? SmallVector<int64_t>{2, 3}
                                  : SmallVector<int64_t>{1, 2};
  SmallVector<NamedAttribute> attrs = {
      builder.getNamedAttr(
          "kind", kgraph::ReduceKindAttr::get(
                      context, isMax ? kgraph::ReduceKind::max
                                     : kgraph::ReduceKind::mean)),
      builder.getNamedAttr("axes", builder.getDenseI64ArrayAttr(axes))};
  if (keepDims)
    attrs.push_back(builder.getNamedAttr("keep_dims", builder.getUnitAttr()));
  result = kgraph::ReduceOp::create(builder, loc, ValueRange{x}, attrs);
  return success();
}

LogicalResult GraphImporter::importReduce(Fields &f, Location loc,
                                          kgraph::ReduceKind kind) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (kind == kgraph::ReduceKind::mean &&
      failed(requireFloat(xPath, x, "reduce_mean")))
    return failure();
  SmallVector<int64_t> axes;
  bool axesGiven = false;
  if (failed(f.readIntList("axes", axes, std::numeric_limits<int64_t>::min(),
                           &axesGiven)))
    return failure();
  if (!axesGiven) {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
    noteDefault("axes", formatShape(axes) + " (all)");
  }
  llvm::SmallDenseSet<int64_t> seen;
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (failed(normalizeAxis(indexPath(f.pathOf("axes"), i), axis, rank)))
      return failure();
    if (!seen.insert(axis).second)
      return error(indexPath(f.pathOf("axes"), i),
                   "axis " + Twine(axis) + " is listed twice");
  }
  bool keepDims = false, keepGiven = false;
  if (failed(f.readBool("keep_dims", keepDims, &keepGiven)))
    return failure();
  if (!keepGiven)
    noteDefault("keep_dims", "false");
  SmallVector<NamedAttribute> attrs = {
      builder.getNamedAttr("kind", kgraph::ReduceKindAttr::get(context, kind)),
      builder.getNamedAttr("axes", builder.getDenseI64ArrayAttr(axes))};
  if (keepDims)
    attrs.push_back(builder.getNamedAttr("keep_dims", builder.getUnitAttr()));
  result = kgraph::ReduceOp::create(builder, loc, ValueRange{x}, attrs);
  return success();
}

LogicalResult GraphImporter::importSoftmax(Fields &f, Location loc, bool log) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  if (failed(requireFloat(xPath, x, log ? "log_softmax" : "softmax")))
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  int64_t axis = -1;
  bool axisGiven = false;
  if (failed(f.readInt("axis", axis, std::numeric_limits<int64_t>::min(),
                       &axisGiven)))
    return failure();
  if (!axisGiven)
    noteDefault("axis", "-1");
  if (rank == 0)
    return error(xPath, "softmax needs an input of rank 1 or more");
  if (failed(normalizeAxis(f.pathOf("axis"), axis, rank)))
    return failure();
  auto reduce = [&](Value v, kgraph::ReduceKind kind) -> Value {
    return kgraph::ReduceOp::create(
        builder, loc, ValueRange{v},
        {builder.getNamedAttr("kind",
                              kgraph::ReduceKindAttr::get(context, kind)),
         builder.getNamedAttr("axes", builder.getDenseI64ArrayAttr({axis})),
         builder.getNamedAttr("keep_dims", builder.getUnitAttr())});
  };
  // softmax(x) = exp(x - max) / sum(exp(x - max));
  // log_softmax(x) = (x - max) - log(sum(exp(x - max))).
  Value shifted =
      kgraph::SubOp::create(builder, loc, x, reduce(x, kgraph::ReduceKind::max));
  Value e = kgraph::ExpOp::create(builder, loc, shifted);
  Value sum = reduce(e, kgraph::ReduceKind::sum);
  if (log)
    result = kgraph::SubOp::create(builder, loc, shifted,
                                   kgraph::LogOp::create(builder, loc, sum));
  else
    result = kgraph::DivOp::create(builder, loc, e, sum);
  return success();
}

LogicalResult GraphImporter::importReshape(Fields &f, Location loc,
                                           bool flatten) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  auto xType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> s = xType.getShape();
  int64_t rank = xType.getRank();
  SmallVector<int64_t> shape;
  if (flatten) {
    int64_t start = 1, end = -1;
    bool startGiven = false, endGiven = false;
    if (failed(f.readInt("start_dim", start,
                         std::numeric_limits<int64_t>::min(), &startGiven)) ||
        failed(f.readInt("end_dim", end, std::numeric_limits<int64_t>::min(),
                         &endGiven)))
      return failure();
    if (!startGiven)
      noteDefault("start_dim", "1");
    if (!endGiven)
      noteDefault("end_dim", "-1");
    int64_t r = std::max<int64_t>(rank, 1);
    if (failed(normalizeAxis(f.pathOf("start_dim"), start, r)) ||
        failed(normalizeAxis(f.pathOf("end_dim"), end, r)))
      return failure();
    if (start > end)
      return error(f.pathOf("start_dim"), "start_dim " + Twine(start) +
                                              " comes after end_dim " +
                                              Twine(end));
    // A rank-0 input flattens to [1], as in PyTorch.
    if (rank == 0) {
      shape.push_back(1);
    } else {
      shape.append(s.begin(), s.begin() + start);
      shape.push_back(product(s.slice(start, end - start + 1)));
      shape.append(s.begin() + end + 1, s.end());
    }
  } else {
    bool given = false;
    if (failed(f.readIntList("shape", shape,
                             std::numeric_limits<int64_t>::min(), &given)))
      return failure();
    if (!given)
      return error(f.getPath(), "reshape '" + nodeName + "' needs \"shape\"");
    int64_t known = 1, inferred = -1;
    for (auto [i, d] : llvm::enumerate(shape)) {
      if (d == 0 || d < -1)
        return error(indexPath(f.pathOf("shape"), i),
                     "expected a positive size or -1, got " + Twine(d));
      if (d != -1) {
        known *= d;
        continue;
      }
      if (inferred >= 0)
        return error(indexPath(f.pathOf("shape"), i),
                     "only one size may be -1");
      inferred = i;
    }
    int64_t count = product(s);
    if (inferred >= 0) {
      if (count % known)
        return error(f.pathOf("shape"),
                     "cannot reshape " + formatShape(s) + " (" +
                         Twine(count) + " elements) to " +
                         formatShape(shape));
      shape[inferred] = count / known;
    }
    if (product(shape) != count)
      return error(f.pathOf("shape"),
                   "cannot reshape " + formatShape(s) + " (" + Twine(count) +
                       " elements) to " + formatShape(shape) + " (" +
                       Twine(product(shape)) + " elements)");
  }
  result = kgraph::ReshapeOp::create(
      builder, loc, RankedTensorType::get(shape, xType.getElementType()), x);
  return success();
}

LogicalResult GraphImporter::importTranspose(Fields &f, Location loc) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  SmallVector<int64_t> perm;
  bool given = false;
  if (failed(f.readIntList("permutation", perm, 0, &given)))
    return failure();
  if (!given)
    return error(f.getPath(),
                 "transpose '" + nodeName + "' needs \"permutation\"");
  if (static_cast<int64_t>(perm.size()) != rank)
    return error(f.pathOf("permutation"),
                 "expected " + Twine(rank) + " integers (the input's rank), "
                 "got " + Twine(perm.size()));
  SmallVector<bool> seen(rank, false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p >= rank || seen[p])
      return error(indexPath(f.pathOf("permutation"), i),
                   "expected each of 0 to " + Twine(rank - 1) +
                       " exactly once, got " + Twine(p) +
                       (p < rank ? " twice" : ""));
    seen[p] = true;
  }
  result = kgraph::TransposeOp::create(
      builder, loc, ValueRange{x},
      {builder.getNamedAttr("permutation",
                            builder.getDenseI64ArrayAttr(perm))});
  return success();
}

LogicalResult GraphImporter::importConcat(Fields &f, Location loc) {
  SmallVector<Value> inputs;
  SmallVector<std::string> paths;
  if (failed(readInputs(f, inputs, paths, 1, false, /*variadic=*/true)))
    return failure();
  auto first = cast<RankedTensorType>(inputs[0].getType());
  int64_t rank = first.getRank();
  int64_t axis = 0;
  if (failed(f.readInt("axis", axis, std::numeric_limits<int64_t>::min())))
    return failure();
  if (rank == 0)
    return error(paths[0], "concat needs inputs of rank 1 or more");
  if (failed(normalizeAxis(f.pathOf("axis"), axis, rank)))
    return failure();
  for (size_t i = 1; i < inputs.size(); ++i) {
    auto type = cast<RankedTensorType>(inputs[i].getType());
    bool ok = type.getRank() == rank &&
              type.getElementType() == first.getElementType();
    for (int64_t d = 0; ok && d < rank; ++d)
      ok = d == axis || type.getDimSize(d) == first.getDimSize(d);
    if (!ok)
      return error(paths[i], "the input is " + formatType(type) + "; expected " +
                                 Twine(rank) + "-d " +
                                 typeName(first.getElementType()) +
                                 " matching " + formatShape(first.getShape()) +
                                 " in every dim but axis " + Twine(axis));
  }
  result = kgraph::ConcatOp::create(builder, loc, ValueRange(inputs),
                                    static_cast<uint64_t>(axis));
  return success();
}

LogicalResult GraphImporter::importSlice(Fields &f, Location loc) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  ArrayRef<int64_t> s = cast<RankedTensorType>(x.getType()).getShape();
  SmallVector<int64_t> offsets, sizes, strides(s.size(), 1);
  bool offsetsGiven = false, sizesGiven = false, stridesGiven = false;
  if (failed(f.readIntList("offsets", offsets, 0, &offsetsGiven)) ||
      failed(f.readIntList("sizes", sizes, 1, &sizesGiven)) ||
      failed(f.readIntList("strides", strides, 1, &stridesGiven)))
    return failure();
  if (!stridesGiven)
    noteDefault("strides", "1 in every dim");
  if (!offsetsGiven || !sizesGiven)
    return error(f.getPath(),
                 "slice '" + nodeName + "' needs \"offsets\" and \"sizes\"");
  for (auto [key, list] : {std::pair<StringRef, SmallVector<int64_t> *>{
                               "offsets", &offsets},
                           {"sizes", &sizes},
                           {"strides", &strides}})
    if (list->size() != s.size())
      return error(f.pathOf(key), "expected " + Twine(s.size()) +
                                      " integers (the input's rank), got " +
                                      Twine(list->size()));
  for (size_t d = 0; d < s.size(); ++d)
    if (offsets[d] + (sizes[d] - 1) * strides[d] >= s[d])
      return error(f.pathOf("sizes"),
                   "dim " + Twine(d) + " reads index " +
                       Twine(offsets[d] + (sizes[d] - 1) * strides[d]) +
                       " of " + Twine(s[d]));
  result = kgraph::SliceOp::create(
      builder, loc, ValueRange{x},
      {builder.getNamedAttr("offsets", builder.getDenseI64ArrayAttr(offsets)),
       builder.getNamedAttr("sizes", builder.getDenseI64ArrayAttr(sizes)),
       builder.getNamedAttr("strides", builder.getDenseI64ArrayAttr(strides))});
  return success();
}

LogicalResult GraphImporter::importBroadcast(Fields &f, Location loc) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  auto xType = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  bool given = false;
  if (failed(f.readIntList("shape", shape, 1, &given)))
    return failure();
  if (!given)
    return error(f.getPath(),
                 "broadcast_to '" + nodeName + "' needs \"shape\"");
  int64_t badDim = 0;
  std::optional<SmallVector<int64_t>> b =
      broadcastShapes(xType.getShape(), shape, badDim);
  if (!b || ArrayRef<int64_t>(*b) != ArrayRef<int64_t>(shape))
    return error(f.pathOf("shape"), "cannot broadcast " +
                                        formatShape(xType.getShape()) +
                                        " to " + formatShape(shape));
  result = kgraph::BroadcastToOp::create(
      builder, loc, RankedTensorType::get(shape, xType.getElementType()), x);
  return success();
}

LogicalResult GraphImporter::importCast(Fields &f, Location loc) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  Type to;
  bool given = false;
  if (failed(parseDType(f, "to", to, &given)))
    return failure();
  if (!given)
    return error(f.getPath(), "cast '" + nodeName + "' needs \"to\" (a dtype)");
  result = kgraph::CastOp::create(
      builder, loc,
      RankedTensorType::get(cast<RankedTensorType>(x.getType()).getShape(), to),
      x);
  return success();
}

FailureOr<APInt> GraphImporter::constantElement(const json::Value &value,
                                                StringRef path,
                                                Type elementType) {
  std::string dtype = typeName(elementType);
  if (auto intType = dyn_cast<IntegerType>(elementType)) {
    unsigned width = intType.getWidth();
    int64_t lo = APInt::getSignedMinValue(width).getSExtValue();
    int64_t hi = APInt::getSignedMaxValue(width).getSExtValue();
    std::optional<double> number = value.getAsNumber();
    if (!number || value.kind() != json::Value::Number) {
      error(path, "expected an integer for an " + dtype + " constant, got " +
                      describe(value));
      return failure();
    }
    std::optional<int64_t> v = value.getAsInteger();
    if (!v && *number != std::trunc(*number)) {
      error(path, "expected an integer for an " + dtype + " constant, got " +
                      formatNumber(*number));
      return failure();
    }
    if (!v || *v < lo || *v > hi) {
      error(path, "expected an integer from " + Twine(lo) + " to " + Twine(hi) +
                      " for an " + dtype + " constant, got " +
                      formatNumber(*number));
      return failure();
    }
    return APInt(width, *v, /*isSigned=*/true);
  }
  auto floatType = cast<FloatType>(elementType);
  std::optional<double> number = value.getAsNumber();
  if (!number || value.kind() != json::Value::Number) {
    error(path, "expected a number, got " + describe(value));
    return failure();
  }
  // JSON has no NaN or infinity, but a literal beyond double's range (1e400)
  // parses as one.
  if (!std::isfinite(*number)) {
    error(path, "expected a finite number, got " + formatNumber(*number));
    return failure();
  }
  const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
  APFloat element(semantics);
  APFloat::opStatus status;
  if (std::optional<int64_t> v = value.getAsInteger()) {
    // Exact from the integer (no double rounding on the way).
    status = element.convertFromAPInt(APInt(64, *v, /*isSigned=*/true),
                                      /*IsSigned=*/true,
                                      APFloat::rmNearestTiesToEven);
  } else {
    element = APFloat(*number);
    bool losesInfo = false;
    status =
        element.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
  }
  if (status & APFloat::opOverflow) {
    error(path,
          formatNumber(*number) + " is out of range for " + dtype +
              " (largest finite " +
              formatNumber(APFloat::getLargest(semantics).convertToDouble()) +
              ")");
    return failure();
  }
  return element.bitcastToAPInt();
}

LogicalResult GraphImporter::importConstant(Fields &f, Location loc) {
  if (f.has("inputs"))
    return error(f.pathOf("inputs"), "a constant node takes no inputs");
  Type elementType = defaultType;
  SmallVector<int64_t> shape;
  bool shapeGiven = false;
  if (failed(parseDType(f, "dtype", elementType)) ||
      failed(f.readIntList("shape", shape, 1, &shapeGiven)))
    return failure();
  const json::Value *value = f.get("value");
  // A misspelled field ("values") is likelier than a missing one: name it.
  if ((!shapeGiven || !value) && failed(f.finish("a constant node")))
    return failure();
  if (!shapeGiven && !value)
    return error(f.getPath(),
                 "constant '" + nodeName + "' needs \"shape\" and \"value\"");
  if (!shapeGiven)
    return error(f.getPath(), "constant '" + nodeName + "' needs \"shape\"");
  if (!value)
    return error(f.getPath(), "constant '" + nodeName + "' needs \"value\"");
  int64_t count = product(shape);
  if (count > kMaxConstantElements)
    return error(f.pathOf("shape"),
                 "a constant of " + formatShape(shape) + " (" +
                     (count == std::numeric_limits<int64_t>::max()
                          ? std::string("over 2^63")
                          : std::to_string(count)) +
                     " elements) is too large: a constant holds at most " +
                     Twine(kMaxConstantElements) + " (2^24) elements");
  auto type = RankedTensorType::get(shape, elementType);
  std::string at = f.pathOf("value");

  // One number: a splat of any shape.
  if (value->kind() == json::Value::Number) {
    FailureOr<APInt> bits = constantElement(*value, at, elementType);
    if (failed(bits))
      return failure();
    Attribute splat;
    if (auto floatType = dyn_cast<FloatType>(elementType))
      splat = FloatAttr::get(floatType,
                             APFloat(floatType.getFloatSemantics(), *bits));
    else
      splat = IntegerAttr::get(elementType, *bits);
    result = arith::ConstantOp::create(builder, loc,
                                       DenseElementsAttr::get(type, splat));
    return success();
  }
  const json::Array *list = value->getAsArray();
  if (!list)
    return error(at, "expected a number or a list of numbers, got " +
                         describe(*value));

  // The elements in row-major order, from a flat list of every element or
  // a list nested as the shape (one level per dim; the two agree at rank 1),
  // stored as DenseElementsAttr holds them: one after the other in host byte
  // order (i8, i32, f16, bf16 and f32 are whole bytes).
  unsigned bytes = elementType.getIntOrFloatBitWidth() / 8;
  std::vector<char> raw(static_cast<size_t>(count) * bytes);
  size_t next = 0;
  auto store = [&](const json::Value &v,
                   const std::string &path) -> LogicalResult {
    FailureOr<APInt> bits = constantElement(v, path, elementType);
    if (failed(bits))
      return failure();
    uint64_t word = bits->getZExtValue();
    char *out = raw.data() + next++ * bytes;
    if (bytes == 1) {
      uint8_t b = word;
      std::memcpy(out, &b, 1);
    } else if (bytes == 2) {
      uint16_t b = word;
      std::memcpy(out, &b, 2);
    } else {
      uint32_t b = word;
      std::memcpy(out, &b, 4);
    }
    return success();
  };
  bool nested = !list->empty() && (*list)[0].kind() == json::Value::Array;
  if (!nested) {
    if (static_cast<int64_t>(list->size()) != count)
      return error(at, "expected " + Twine(count) +
                           (count == 1 ? " number" : " numbers") +
                           " (the shape " + formatShape(shape) + "), got " +
                           Twine(list->size()));
    for (auto [i, element] : llvm::enumerate(*list))
      if (failed(store(element, indexPath(at, i))))
        return failure();
  } else {
    if (shape.empty())
      return error(indexPath(at, 0), "expected a number, got " +
                                         describe((*list)[0]) +
                                         ": the shape [] is a scalar");
    // Depth-first; each list must have its dim's size.
    std::function<LogicalResult(const json::Value &, const std::string &,
                                size_t)>
        walk = [&](const json::Value &v, const std::string &path,
                   size_t depth) -> LogicalResult {
      if (depth == shape.size()) {
        if (v.kind() == json::Value::Array)
          return error(path, "expected a number, got " + describe(v) +
                                 ": the list is nested deeper than the "
                                 "shape " +
                                 formatShape(shape));
        return store(v, path);
      }
      const json::Array *sub = v.getAsArray();
      if (!sub || static_cast<int64_t>(sub->size()) != shape[depth])
        return error(path, "expected a list of " + Twine(shape[depth]) +
                               " values (dim " + Twine(depth) +
                               " of the shape " + formatShape(shape) +
                               "), got " + describe(v));
      for (auto [i, element] : llvm::enumerate(*sub))
        if (failed(walk(element, indexPath(path, i), depth + 1)))
          return failure();
      return success();
    };
    if (failed(walk(*value, at, 0)))
      return failure();
  }
  // Equal elements are a splat, whichever way they were written: kgraph-opt
  // folds splats into the kernels that read them.
  ArrayRef<char> data(raw);
  bool splat = true;
  for (size_t i = bytes; splat && i < raw.size(); i += bytes)
    splat = std::memcmp(raw.data(), raw.data() + i, bytes) == 0;
  if (splat)
    data = data.take_front(bytes);
  result = arith::ConstantOp::create(
      builder, loc, DenseElementsAttr::getFromRawBuffer(type, data));
  return success();
}

LogicalResult GraphImporter::importIdentity(Fields &f, Location loc) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  // dropout is the identity at inference; its rate is accepted and unused.
  double p = 0;
  if (failed(f.readNumber("p", p)))
    return failure();
  result = x;
  return success();
}

FailureOr<Value> GraphImporter::namedParameter(Fields &f, StringRef key,
                                               StringRef suffix,
                                               RankedTensorType type,
                                               StringRef what) {
  std::string name = nodeName + "." + suffix.str();
  bool named = false;
  if (failed(f.readString(key, name, &named)))
    return failure();
  return parameter(named ? f.pathOf(key) : f.getPath(), name, type, what);
}

LogicalResult GraphImporter::importBatchNorm(Fields &f, Location loc) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  auto xType = cast<RankedTensorType>(x.getType());
  if (xType.getRank() < 2)
    return error(xPath, "batch_norm needs an input of rank 2 or more, "
                        "got " +
                            formatShape(xType.getShape()));
  if (failed(requireFloat(xPath, x, "batch_norm")))
    return failure();
  kgraph::Layout layout = defaultLayout;
  if (!singleOp && failed(parseLayout(f, "layout", layout)))
    return failure();
  double eps = 1e-5, momentum = 0.1;
  bool affine = true, epsGiven = false, affineGiven = false;
  if (failed(f.readNumber("eps", eps, &epsGiven)) ||
      failed(f.readNumber("momentum", momentum)) ||
      failed(f.readBool("affine", affine, &affineGiven)))
    return failure();
  if (!epsGiven)
    noteDefault("eps", "1e-05");
  if (!affineGiven)
    noteDefault("affine", "true");
  if (eps < 0)
    return error(f.pathOf("eps"), "expected a non-negative number, got " +
                                      formatNumber(eps));
  // The channel dim: 1 in nchw, the last in nhwc (the same for rank 2).
  int64_t rank = xType.getRank();
  int64_t axis = layout == kgraph::Layout::nchw ? 1 : rank - 1;
  int64_t c = xType.getDimSize(axis);
  Type elementType = xType.getElementType();
  auto vecType = RankedTensorType::get({c}, elementType);
  // The parameters in the order of a PyTorch state_dict.
  FailureOr<Value> weight, bias;
  if (affine) {
    weight = namedParameter(f, "weight", "weight", vecType, "channels");
    if (failed(weight))
      return failure();
    bias = namedParameter(f, "bias", "bias", vecType, "channels");
    if (failed(bias))
      return failure();
  }
  FailureOr<Value> mean =
      namedParameter(f, "running_mean", "running_mean", vecType, "channels");
  if (failed(mean))
    return failure();
  FailureOr<Value> var =
      namedParameter(f, "running_var", "running_var", vecType, "channels");
  if (failed(var))
    return failure();
  // scale = weight / sqrt(var + eps), shift = bias - mean * scale: computed
  // on [C], then applied as x * scale + shift.
  Value scale = kgraph::RsqrtOp::create(
      builder, loc,
      kgraph::AddOp::create(builder, loc, *var, constantLike(eps, elementType)));
  Value shift;
  if (affine) {
    scale = kgraph::MulOp::create(builder, loc, *weight, scale);
    shift = kgraph::SubOp::create(
        builder, loc, *bias, kgraph::MulOp::create(builder, loc, *mean, scale));
  } else {
    shift = kgraph::NegOp::create(
        builder, loc, kgraph::MulOp::create(builder, loc, *mean, scale));
  }
  if (axis != rank - 1) {
    SmallVector<int64_t> shape(rank - axis, 1);
    shape[0] = c;
    auto type = RankedTensorType::get(shape, elementType);
    scale = kgraph::ReshapeOp::create(builder, loc, type, scale);
    shift = kgraph::ReshapeOp::create(builder, loc, type, shift);
  }
  result = kgraph::AddOp::create(
      builder, loc, kgraph::MulOp::create(builder, loc, x, scale), shift);
  return success();
}

LogicalResult GraphImporter::importLayerNorm(Fields &f, Location loc) {
  Value x;
  std::string xPath;
  if (failed(readInput(f, x, xPath)))
    return failure();
  auto xType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> s = xType.getShape();
  if (xType.getRank() < 1)
    return error(xPath, "layer_norm needs an input of rank 1 or more");
  if (failed(requireFloat(xPath, x, "layer_norm")))
    return failure();
  SmallVector<int64_t> normalized{s.back()};
  bool normalizedGiven = false;
  if (failed(f.readIntList("normalized_shape", normalized, 1,
                           &normalizedGiven)))
    return failure();
  if (normalized.empty() || normalized.size() > s.size() ||
      ArrayRef<int64_t>(normalized) != s.take_back(normalized.size()))
    return error(f.pathOf("normalized_shape"),
                 formatShape(normalized) + " is not a trailing part of the "
                                           "input shape " +
                     formatShape(s));
  double eps = 1e-5;
  bool affine = true, epsGiven = false, affineGiven = false;
  if (failed(f.readNumber("eps", eps, &epsGiven)) ||
      failed(f.readBool("elementwise_affine", affine, &affineGiven)))
    return failure();
  if (!normalizedGiven)
    noteDefault("normalized_shape", formatShape(normalized));
  if (!epsGiven)
    noteDefault("eps", "1e-05");
  if (!affineGiven)
    noteDefault("elementwise_affine", "true");
  if (eps < 0)
    return error(f.pathOf("eps"), "expected a non-negative number, got " +
                                      formatNumber(eps));
  SmallVector<int64_t> axes;
  for (int64_t i = s.size() - normalized.size(); i < xType.getRank(); ++i)
    axes.push_back(i);
  auto mean = [&](Value v) -> Value {
    return kgraph::ReduceOp::create(
        builder, loc, ValueRange{v},
        {builder.getNamedAttr("kind", kgraph::ReduceKindAttr::get(
                                          context, kgraph::ReduceKind::mean)),
         builder.getNamedAttr("axes", builder.getDenseI64ArrayAttr(axes)),
         builder.getNamedAttr("keep_dims", builder.getUnitAttr())});
  };
  // (x - mean) / sqrt(mean((x - mean)^2) + eps) * weight + bias.
  Type elementType = xType.getElementType();
  Value centered = kgraph::SubOp::create(builder, loc, x, mean(x));
  Value var = mean(kgraph::MulOp::create(builder, loc, centered, centered));
  Value inv = kgraph::RsqrtOp::create(
      builder, loc,
      kgraph::AddOp::create(builder, loc, var, constantLike(eps, elementType)));
  result = kgraph::MulOp::create(builder, loc, centered, inv);
  if (affine) {
    auto type = RankedTensorType::get(normalized, elementType);
    FailureOr<Value> weight =
        namedParameter(f, "weight", "weight", type, "normalized_shape");
    if (failed(weight))
      return failure();
    FailureOr<Value> bias =
        namedParameter(f, "bias", "bias", type, "normalized_shape");
    if (failed(bias))
      return failure();
    result = kgraph::AddOp::create(
        builder, loc, kgraph::MulOp::create(builder, loc, result, *weight),
        *bias);
  }
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp>
kgraph::importGraphJson(StringRef json, StringRef bufferName,
                        MLIRContext *context,
                        const GraphJsonImportOptions &options) {
  return GraphImporter(json, bufferName, context, options).run();
}

OwningOpRef<ModuleOp>
kgraph::importGraphJson(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                        const GraphJsonImportOptions &options) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  return importGraphJson(buffer->getBuffer(), buffer->getBufferIdentifier(),
                         context, options);
}

void kgraph::registerGraphJsonTranslation() {
  static mlir::TranslateToMLIRRegistration registration(
      "import-graph-json",
      "import a JSON compute graph (docs/graph-json.md) into kgraph IR",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) -> OwningOpRef<Operation *> {
        GraphJsonImportOptions options;
        StringRef input =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                ->getBufferIdentifier();
        if (input != "<stdin>" && input != "-")
          options.graphDir = llvm::sys::path::parent_path(input).str();
        // Notes name the file but do not quote it line by line.
        std::string file = input.str();
        options.noteHandler = [file](StringRef note) {
          llvm::errs() << file << ": note: " << note << "\n";
        };
        // mlirTranslateMain's `-o`: kgraph.weights is relative to the folder
        // of the file written.
        auto &registered = llvm::cl::getRegisteredOptions();
        auto it = registered.find("o");
        if (it != registered.end())
          if (auto *output =
                  static_cast<llvm::cl::opt<std::string> *>(it->second);
              output->getValue() != "-")
            options.outputDir =
                llvm::sys::path::parent_path(output->getValue()).str();
        OwningOpRef<ModuleOp> module =
            importGraphJson(sourceMgr, context, options);
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<kgraph::KGraphDialect, func::FuncDialect,
                        arith::ArithDialect>();
      });
  (void)registration;
}
