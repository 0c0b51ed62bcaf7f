//===- Emit.cpp - PTX and launch plan from a compiled module --------------===//
//
// Reads the host function kgraph-lower-to-gpu produced (memref arguments,
// memref.alloc'ed intermediates, gpu.launch_func in order) and writes the
// launch plan of docs/launch-plan.md beside the PTX.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Conversion/GPUToPTX/GPUToPTX.h"
#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/IR/KGraphDialect.h"
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Pipelines/Pipelines.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace kgraph;

/// Constant integer behind a launch dimension, or failure.
static FailureOr<int64_t> constantDim(Value v) {
  IntegerAttr attr;
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value();
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if ((attr = llvm::dyn_cast<IntegerAttr>(c.getValue())))
      return attr.getInt();
  return failure();
}

/// A kernel operand as the launch plan passes it: a plan buffer and the
/// offset in bytes of the operand's first element in it.
struct PlanBufferRef {
  int64_t buffer;
  int64_t byteOffset;
};

/// Resolves the kernel operand `v` to its plan buffer: `v` is a buffer (in
/// `bufferIds`) or a view of one that kgraph-lower-to-gpu made for a
/// reshape or a contiguous slice (a memref.reinterpret_cast,
/// kgraph.buffer_view, or what canonicalization made of them: expand_shape,
/// collapse_shape, cast, subview), possibly a view of a view. Failure if
/// `v` is something else. Only kgraph.buffer_view moves the aligned
/// pointer; the other view ops keep it and describe the first element by
/// their layout's offset.
static FailureOr<PlanBufferRef>
resolvePlanBuffer(Value v, const DenseMap<Value, int64_t> &bufferIds) {
  // Where `v`'s aligned pointer points: the root buffer's start, or a
  // buffer_view's first element.
  std::optional<PlanBufferRef> aligned;
  for (Value base = v; !aligned;) {
    if (auto it = bufferIds.find(base); it != bufferIds.end()) {
      aligned = PlanBufferRef{it->second, 0};
      break;
    }
    Operation *def = base.getDefiningOp();
    if (auto view = llvm::dyn_cast_if_present<BufferViewOp>(def)) {
      FailureOr<PlanBufferRef> source =
          resolvePlanBuffer(view.getSource(), bufferIds);
      if (failed(source))
        return failure();
      aligned = PlanBufferRef{source->buffer,
                              source->byteOffset + int64_t(view.getByteOffset())};
      break;
    }
    if (!llvm::isa_and_present<memref::ReinterpretCastOp, memref::ExpandShapeOp,
                               memref::CollapseShapeOp, memref::CastOp,
                               memref::SubViewOp>(def))
      return failure();
    base = def->getOperand(0);
  }
  // `v`'s first element is its layout's offset past the aligned pointer.
  auto type = llvm::cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  const ElementTypeInfo *info = lookupElementType(type.getElementType());
  if (!info || failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset))
    return failure();
  aligned->byteOffset += offset * int64_t(info->storageBytes);
  return *aligned;
}

/// The "tensor_maps" argument of `launch` from the host's description
/// `maps` (getGemmTensorMaps): each map's `arg` is a kernel operand, which
/// must be a plan buffer.
static FailureOr<llvm::json::Object>
tensorMapsArg(gpu::LaunchFuncOp launch, ArrayAttr maps,
              const DenseMap<Value, int64_t> &bufferIds) {
  auto ints = [](Attribute a) {
    llvm::json::Array out;
    if (auto array = llvm::dyn_cast_if_present<ArrayAttr>(a))
      for (Attribute e : array)
        if (auto i = llvm::dyn_cast<IntegerAttr>(e))
          out.push_back(i.getInt());
    return out;
  };
  auto str = [](DictionaryAttr d, StringRef name) {
    auto s = d.getAs<StringAttr>(name);
    return s ? s.getValue().str() : std::string();
  };
  ValueRange operands = launch.getKernelOperands();
  llvm::json::Array out;
  for (Attribute a : maps) {
    auto d = llvm::dyn_cast<DictionaryAttr>(a);
    auto arg = d ? d.getAs<IntegerAttr>("arg") : IntegerAttr();
    if (!arg || arg.getInt() < 0 || arg.getInt() >= int64_t(operands.size()))
      return emitError(launch.getLoc(), "malformed tensor map description");
    FailureOr<PlanBufferRef> ref =
        resolvePlanBuffer(operands[arg.getInt()], bufferIds);
    if (failed(ref))
      return emitError(launch.getLoc(), "tensor map of a kernel operand that "
                                        "is not a plan buffer");
    llvm::json::Object map{
        {"buffer", ref->buffer},
        {"dtype", str(d, "dtype")},
        {"dims", ints(d.get("dims"))},
        {"strides", ints(d.get("strides"))},
        {"swizzle", str(d, "swizzle")},
        {"interleave", str(d, "interleave")},
        {"l2_promotion", str(d, "l2_promotion")},
        {"oob_fill", str(d, "oob_fill")}};
    if (str(d, "mode") == "im2col") {
      // No "box": a runtime that knows only tiled maps fails on it instead
      // of encoding a tiled map (docs/launch-plan.md).
      map["mode"] = "im2col";
      map["lower_corner"] = ints(d.get("lower_corner"));
      map["upper_corner"] = ints(d.get("upper_corner"));
      for (StringRef key : {"channels_per_pixel", "pixels_per_column"})
        if (auto v = d.getAs<IntegerAttr>(key))
          map[key] = v.getInt();
      map["element_strides"] = ints(d.get("element_strides"));
    } else {
      llvm::json::Array box = ints(d.get("box"));
      llvm::json::Array elementStrides;
      for (size_t i = 0; i < box.size(); ++i)
        elementStrides.push_back(1);
      map["box"] = std::move(box);
      map["element_strides"] = std::move(elementStrides);
    }
    // The operand's view offset and the map's own (a slice read in place).
    int64_t byteOffset = ref->byteOffset;
    if (auto own = d.getAs<IntegerAttr>("byte_offset"))
      byteOffset += own.getInt();
    if (byteOffset != 0)
      map["byte_offset"] = byteOffset;
    out.push_back(std::move(map));
  }
  return llvm::json::Object{{"kind", "tensor_maps"}, {"maps", std::move(out)}};
}

/// Integer negations written as `not` + `add 1` (the same two's-complement
/// value). ptxas 13.0 and the r580 driver's JIT, at their default
/// optimization level, miscompile a chain of integer max/min over negated
/// values on sm_90: the 3-input VIMNMX3 they fuse it into drops the
/// negation of its middle operand (found by the GPU fuzz sample, graph
/// a9ba1d6-294.1: `reduce max` of `neg` over an i32 column read every other
/// element unnegated; -O0 and this form are right). `sub 0, x` and
/// `mul x, -1` reach the same defect; the kernels are otherwise unchanged.
std::string kgraph::avoidPtxasDefects(StringRef ptx) {
  if (!ptx.contains("neg.s"))
    return ptx.str();
  // <indent>neg.sNN <ws>%dst, %src;
  static const llvm::Regex neg(
      "^([ \t]*)neg\\.s(16|32|64)[ \t]+(%[A-Za-z0-9_]+),[ \t]*"
      "(%[A-Za-z0-9_]+);[ \t]*$");
  std::string out;
  llvm::raw_string_ostream os(out);
  // Pieces between newlines, joined again with them: the text round-trips.
  llvm::ListSeparator newline("\n");
  for (StringRef line : llvm::split(ptx, '\n')) {
    os << newline;
    SmallVector<StringRef, 5> m;
    if (!line.contains("neg.s") || !neg.match(line, &m)) {
      os << line;
      continue;
    }
    StringRef indent = m[1], bits = m[2], dst = m[3], src = m[4];
    os << indent << "not.b" << bits << " \t" << dst << ", " << src << ";\n"
       << indent << "add.s" << bits << " \t" << dst << ", " << dst << ", 1;";
  }
  return out;
}

/// The profile fields of a kernel entry (docs/launch-plan.md: "ops",
/// "flops", "bytes", "compute") from the launch's kKernelInfoAttrName, which
/// kgraph-lower-to-gpu writes; a launch without it gets none.
static LogicalResult addKernelInfo(gpu::LaunchFuncOp launch,
                                   llvm::json::Object &kernel) {
  auto info = launch->getAttrOfType<DictionaryAttr>(kKernelInfoAttrName);
  if (!info)
    return success();
  auto ops = info.getAs<ArrayAttr>("ops");
  auto flops = info.getAs<IntegerAttr>("flops");
  auto bytes = info.getAs<IntegerAttr>("bytes");
  auto compute = info.getAs<StringAttr>("compute");
  if (!ops || !flops || !bytes || !compute)
    return emitError(launch.getLoc(), "malformed '")
           << kKernelInfoAttrName << "': " << info;
  llvm::json::Array opList;
  for (Attribute a : ops) {
    auto d = llvm::dyn_cast<DictionaryAttr>(a);
    auto name = d ? d.getAs<StringAttr>("op") : StringAttr();
    if (!name)
      return emitError(launch.getLoc(), "malformed '")
             << kKernelInfoAttrName << "': " << info;
    llvm::json::Object op{{"op", name.getValue()}};
    if (auto loc = d.getAs<StringAttr>("loc"))
      op["loc"] = loc.getValue();
    opList.push_back(std::move(op));
  }
  kernel["ops"] = std::move(opList);
  kernel["flops"] = flops.getInt();
  kernel["bytes"] = bytes.getInt();
  kernel["compute"] = compute.getValue();
  return success();
}

/// The bytes of `values` as stored in a buffer of `bytesPerElement`-byte
/// elements (little-endian; i1 as a byte 0 or 1). The element-type table,
/// which the buffer's dtype passed, holds only float and integer types.
static std::string constantBytes(DenseElementsAttr values,
                                 int64_t bytesPerElement) {
  std::string bytes;
  bytes.reserve(values.getNumElements() * bytesPerElement);
  auto append = [&](const APInt &bits) {
    APInt stored = bits.zextOrTrunc(8 * bytesPerElement);
    for (int64_t i = 0; i < bytesPerElement; ++i)
      bytes.push_back(char(stored.extractBitsAsZExtValue(8, 8 * i)));
  };
  if (llvm::isa<FloatType>(values.getElementType()))
    for (const APFloat &v : values.getValues<APFloat>())
      append(v.bitcastToAPInt());
  else
    for (const APInt &v : values.getValues<APInt>())
      append(v);
  return bytes;
}

/// The plan entry of one lowered host function (docs/launch-plan.md,
/// "functions"): its buffers and kernels. Sets `hasParameters` when an
/// argument is a model parameter.
static FailureOr<llvm::json::Object> planFunction(func::FuncOp host,
                                                  bool &hasParameters) {
  // Buffers: arguments first (inputs and parameters, then results), then
  // allocations.
  llvm::json::Array buffers;
  DenseMap<Value, int64_t> bufferIds;
  // Whether each buffer (by id) may be touched by a once kernel: parameters
  // and what once kernels derive from them.
  SmallVector<bool> fromParameters;
  // `logicalDtype` (the kgraph.dtype attribute) names the tensor type of a
  // buffer stored in another type: i1 tensors live in i8 buffers.
  // Dtype names and element sizes are the element-type table's.
  auto addBuffer = [&](Value v, StringRef kind, std::optional<int64_t> index,
                       Attribute logicalDtype,
                       StringAttr name = {}) -> LogicalResult {
    auto type = llvm::cast<MemRefType>(v.getType());
    Type elem = type.getElementType();
    const ElementTypeInfo *stored = lookupElementType(elem);
    if (!stored)
      return emitError(v.getLoc(), "a launch plan has no dtype for ")
             << kind << " buffers of element type " << elem << " (known: "
             << getKnownElementTypeNames() << ")";
    StringRef dtype = stored->planName;
    if (auto s = llvm::dyn_cast_if_present<StringAttr>(logicalDtype)) {
      const ElementTypeInfo *logical = lookupElementType(s.getValue());
      if (!logical || logical->storageBytes != stored->storageBytes)
        return emitError(v.getLoc(), "buffer of ")
               << elem << " elements cannot hold dtype '" << s.getValue()
               << "'";
      dtype = logical->planName;
    }
    int64_t id = bufferIds.size();
    bufferIds[v] = id;
    fromParameters.push_back(kind == "parameter" || kind == "derived" ||
                             kind == "constant");
    llvm::json::Object buffer{
        {"id", id},
        {"kind", kind},
        {"shape", llvm::json::Array(type.getShape())},
        {"dtype", dtype},
        {"bytes", type.getNumElements() * int64_t(stored->storageBytes)}};
    if (index)
      buffer["index"] = *index;
    if (name)
      buffer["name"] = name.getValue();
    if (kind == "constant")
      buffer["data"] = llvm::encodeBase64(
          constantBytes(v.getDefiningOp()->getAttrOfType<DenseElementsAttr>(
                            kConstantAttrName),
                        int64_t(stored->storageBytes)));
    buffers.push_back(std::move(buffer));
    return success();
  };
  // `index` counts the real inputs only: parameters are not passed by the
  // caller.
  int64_t inputIndex = 0;
  for (BlockArgument arg : host.getArguments()) {
    unsigned i = arg.getArgNumber();
    Attribute dtype = host.getArgAttr(i, kDtypeAttrName);
    auto result = host.getArgAttrOfType<IntegerAttr>(i, kResultArgAttrName);
    auto param = host.getArgAttrOfType<StringAttr>(i, kParamAttrName);
    if (result && param)
      return host.emitOpError("argument #")
             << i << " is both result #" << result.getInt()
             << " and parameter '" << param.getValue() << "'";
    LogicalResult added =
        result  ? addBuffer(arg, "output", result.getInt(), dtype)
        : param ? addBuffer(arg, "parameter", std::nullopt, dtype, param)
                : addBuffer(arg, "input", inputIndex++, dtype);
    if (failed(added))
      return failure();
    hasParameters |= bool(param);
  }
  WalkResult allocs = host.walk([&](memref::AllocOp alloc) {
    // Tensor maps are not a buffer of the plan: the runtime builds them
    // (a "tensor_maps" argument).
    if (alloc->hasAttr(kTensorMapsAttrName) ||
        alloc->hasAttr(kWorkspaceAttrName))
      return WalkResult::advance();
    StringRef kind = alloc->hasAttr(kConstantAttrName)  ? "constant"
                     : alloc->hasAttr(kDerivedAttrName) ? "derived"
                                                        : "intermediate";
    if (failed(addBuffer(alloc, kind, std::nullopt,
                         alloc->getAttr(kDtypeAttrName))))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (allocs.wasInterrupted())
    return failure();

  llvm::json::Array kernels;
  for (auto launch : host.getOps<gpu::LaunchFuncOp>()) {
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    SmallVector<int64_t> dims;
    for (Value v : {grid.x, grid.y, grid.z, block.x, block.y, block.z}) {
      FailureOr<int64_t> d = constantDim(v);
      if (failed(d))
        return emitError(launch.getLoc(), "launch dimensions must be constants");
      dims.push_back(*d);
    }
    int64_t shared = 0;
    if (Value smem = launch.getDynamicSharedMemorySize()) {
      FailureOr<int64_t> d = constantDim(smem);
      if (failed(d))
        return emitError(launch.getLoc(), "dynamic shared memory must be a constant");
      shared = *d;
    }
    bool once = launch->hasAttr(kOnceAttrName);
    llvm::json::Array args;
    for (Value operand : launch.getKernelOperands()) {
      if (auto alloc = operand.getDefiningOp<memref::AllocOp>()) {
        if (auto maps = alloc->getAttrOfType<ArrayAttr>(kTensorMapsAttrName)) {
          FailureOr<llvm::json::Object> arg =
              tensorMapsArg(launch, maps, bufferIds);
          if (failed(arg))
            return failure();
          args.push_back(std::move(*arg));
          continue;
        }
        if (alloc->hasAttr(kWorkspaceAttrName)) {
          // A stream-K kernel's own zeroed scratch (docs/launch-plan.md).
          args.push_back(llvm::json::Object{
              {"kind", "workspace"},
              {"bytes",
               llvm::cast<MemRefType>(alloc.getType()).getNumElements()}});
          continue;
        }
      }
      // A view is its root buffer at a byte offset.
      FailureOr<PlanBufferRef> ref = resolvePlanBuffer(operand, bufferIds);
      if (failed(ref))
        return emitError(launch.getLoc(), "kernel operand is not a plan buffer");
      // A once kernel runs at load, before any call's buffers exist.
      if (once && !fromParameters[ref->buffer])
        return emitError(launch.getLoc(), "a '")
               << kOnceAttrName << "' launch uses buffer " << ref->buffer
               << ", which is neither a parameter nor '" << kDerivedAttrName
               << "'";
      llvm::json::Object arg{{"kind", "buffer"}, {"buffer", ref->buffer}};
      if (ref->byteOffset != 0)
        arg["byte_offset"] = ref->byteOffset;
      args.push_back(std::move(arg));
    }
    llvm::json::Object kernel{
        {"name", launch.getKernelName().getValue()},
        {"grid", llvm::json::Array{dims[0], dims[1], dims[2]}},
        {"block", llvm::json::Array{dims[3], dims[4], dims[5]}},
        {"shared_bytes", shared},
        {"args", std::move(args)}};
    if (once)
      kernel["once"] = true;
    if (failed(addKernelInfo(launch, kernel)))
      return failure();
    kernels.push_back(std::move(kernel));
  }
  return llvm::json::Object{{"name", host.getSymName()},
                            {"buffers", std::move(buffers)},
                            {"kernels", std::move(kernels)}};
}

/// `path` relative to the folder `base` when both resolve (real paths, so
/// symbolic links cannot make `..` wrong), else `path` made absolute.
static std::string pathRelativeTo(StringRef path, StringRef base) {
  SmallString<256> realPath, realBase;
  if (llvm::sys::fs::real_path(path, realPath) ||
      llvm::sys::fs::real_path(base, realBase)) {
    SmallString<256> absolute(path);
    llvm::sys::fs::make_absolute(absolute);
    llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
    return absolute.str().str();
  }
  SmallVector<StringRef> from(llvm::sys::path::begin(realBase),
                              llvm::sys::path::end(realBase));
  SmallVector<StringRef> to(llvm::sys::path::begin(realPath),
                            llvm::sys::path::end(realPath));
  size_t common = 0;
  while (common < from.size() && common < to.size() &&
         from[common] == to[common])
    ++common;
  // Different roots (another drive): nothing relative to write.
  if (common == 0)
    return realPath.str().str();
  SmallString<256> out;
  for (size_t i = common; i < from.size(); ++i)
    llvm::sys::path::append(out, "..");
  for (size_t i = common; i < to.size(); ++i)
    llvm::sys::path::append(out, to[i]);
  return out.str().str();
}

/// The plan's "weights": the module's kgraph.weights file, which is relative
/// to the folder of `inputPath` (the current folder for stdin), written
/// relative to the plan's folder. `user` names a function with parameters.
static FailureOr<std::string> planWeightsPath(ModuleOp module,
                                              StringRef inputPath,
                                              StringRef planPath,
                                              StringRef user) {
  auto weights = module->getAttrOfType<StringAttr>(kWeightsAttrName);
  if (!weights)
    return emitError(module.getLoc(), "function '")
           << user << "' has parameters ('" << kParamAttrName
           << "' arguments) but the module has no '" << kWeightsAttrName
           << "' file";
  SmallString<256> file(weights.getValue());
  if (llvm::sys::path::is_relative(file)) {
    SmallString<256> dir;
    if (!inputPath.empty() && inputPath != "-")
      dir = llvm::sys::path::parent_path(inputPath);
    llvm::sys::path::append(dir, weights.getValue());
    file = dir;
  }
  llvm::sys::fs::make_absolute(file);
  llvm::sys::path::remove_dots(file, /*remove_dot_dot=*/true);
  if (!llvm::sys::fs::is_regular_file(file))
    return emitError(module.getLoc(), "weights file '")
           << file.str() << "' (" << kWeightsAttrName << " = \""
           << weights.getValue() << "\") does not exist";
  SmallString<256> planDir(llvm::sys::path::parent_path(planPath));
  if (planDir.empty())
    planDir = ".";
  return pathRelativeTo(file, planDir);
}

/// The PTX text and launch plan of a compiled module, not yet written.
struct EmittedModule {
  std::string ptx;
  llvm::json::Object plan;
};

static FailureOr<EmittedModule> buildPTXAndPlan(ModuleOp module,
                                                StringRef ptxPath,
                                                StringRef planPath,
                                                StringRef inputPath) {
  // The host functions: those that launch kernels or write results.
  SmallVector<func::FuncOp> hosts;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.getOps<gpu::LaunchFuncOp>().empty() ||
        llvm::any_of(func.getArguments(), [&](BlockArgument a) {
          return func.getArgAttr(a.getArgNumber(), kResultArgAttrName);
        }))
      hosts.push_back(func);
  if (hosts.empty())
    return emitError(module.getLoc(), "module has no graph function to emit");

  // One PTX file: the objects of every gpu.binary, linked.
  SmallVector<StringRef> objects;
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    for (Attribute obj : binary.getObjects()) {
      auto object = llvm::dyn_cast<gpu::ObjectAttr>(obj);
      if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
        return emitError(binary.getLoc(), "expected a PTX (format=isa) object");
      objects.push_back(object.getObject().getValue());
    }
  }
  std::string ptx, linkError;
  if (!objects.empty() && failed(linkPTX(objects, ptx, linkError)))
    return emitError(module.getLoc(), "cannot join the PTX of the module's "
                                      "gpu.binary objects: ")
           << linkError;
  if (ptx.empty() && llvm::any_of(hosts, [](func::FuncOp host) {
        return !host.getOps<gpu::LaunchFuncOp>().empty();
      }))
    return emitError(module.getLoc(), "module has kernels but no PTX (gpu.binary)");
  ptx = avoidPtxasDefects(ptx);
  // Math functions come from libdevice; PTX that still declares one as
  // external would fail to load, so never write it.
  for (StringRef line : llvm::split(ptx, '\n')) {
    if (!line.trim().starts_with(".extern .func"))
      continue;
    return emitError(module.getLoc(), "PTX calls an unresolved external function (")
           << line.trim() << "): libdevice was not linked; point --cuda-path "
           << "or $CUDA_HOME at a CUDA toolkit with nvvm/libdevice";
  }

  llvm::json::Array functions;
  StringRef parameterUser;
  for (func::FuncOp host : hosts) {
    bool hasParameters = false;
    FailureOr<llvm::json::Object> function = planFunction(host, hasParameters);
    if (failed(function))
      return failure();
    if (hasParameters && parameterUser.empty())
      parameterUser = host.getSymName();
    functions.push_back(std::move(*function));
  }

  auto target = module->getAttrOfType<StringAttr>(kTargetAttrName);
  llvm::json::Object plan{
      {"format", "kgraph-launch-plan"},
      {"version", 2},
      {"producer", "kgraph " KGRAPH_VERSION_STRING},
      {"target", target ? target.getValue() : StringRef("")},
      {"ptx", llvm::sys::path::filename(ptxPath)},
      {"functions", std::move(functions)}};
  if (!parameterUser.empty()) {
    FailureOr<std::string> weights =
        planWeightsPath(module, inputPath, planPath, parameterUser);
    if (failed(weights))
      return failure();
    plan["weights"] = *weights;
  }
  return EmittedModule{std::move(ptx), std::move(plan)};
}

/// Writes `text` to `path` (kept only when every file of the call is
/// written: `files` holds them until then).
static LogicalResult
writeFile(ModuleOp module, StringRef path, StringRef text,
          SmallVectorImpl<std::unique_ptr<llvm::ToolOutputFile>> &files) {
  std::string errorMessage;
  auto file = openOutputFile(path, &errorMessage);
  if (!file)
    return emitError(module.getLoc(), "cannot write '")
           << path << "': " << errorMessage;
  file->os() << text;
  files.push_back(std::move(file));
  return success();
}

static std::string formatPlan(llvm::json::Object plan) {
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(plan))).str() +
         "\n";
}

LogicalResult kgraph::emitPTXAndPlan(ModuleOp module, StringRef ptxPath,
                                     StringRef planPath, StringRef inputPath) {
  FailureOr<EmittedModule> emitted =
      buildPTXAndPlan(module, ptxPath, planPath, inputPath);
  if (failed(emitted))
    return failure();
  SmallVector<std::unique_ptr<llvm::ToolOutputFile>> files;
  if (failed(writeFile(module, ptxPath, emitted->ptx, files)) ||
      failed(writeFile(module, planPath, formatPlan(std::move(emitted->plan)),
                       files)))
    return failure();
  for (auto &file : files)
    file->keep();
  return success();
}

LogicalResult kgraph::emitBundle(ArrayRef<BundleVariant> variants,
                                 StringRef planPath, StringRef inputPath) {
  assert(!variants.empty() && "a bundle of no variant");
  llvm::json::Array entries;
  std::optional<llvm::json::Value> weights;
  SmallVector<std::unique_ptr<llvm::ToolOutputFile>> files;
  for (const BundleVariant &v : variants) {
    FailureOr<EmittedModule> emitted =
        buildPTXAndPlan(v.module, v.ptxPath, planPath, inputPath);
    if (failed(emitted) ||
        failed(writeFile(v.module, v.ptxPath, emitted->ptx, files)))
      return failure();
    llvm::json::Object &plan = emitted->plan;
    if (!weights)
      if (llvm::json::Value *w = plan.get("weights"))
        weights = *w;
    entries.push_back(llvm::json::Object{
        {"target", std::move(*plan.get("target"))},
        {"ptx", std::move(*plan.get("ptx"))},
        {"functions", std::move(*plan.get("functions"))}});
  }
  llvm::json::Object bundle{{"format", "kgraph-launch-plan"},
                            {"version", 3},
                            {"producer", "kgraph " KGRAPH_VERSION_STRING},
                            {"variants", std::move(entries)}};
  if (weights)
    bundle["weights"] = std::move(*weights);
  if (failed(writeFile(variants.front().module, planPath,
                       formatPlan(std::move(bundle)), files)))
    return failure();
  for (auto &file : files)
    file->keep();
  return success();
}
