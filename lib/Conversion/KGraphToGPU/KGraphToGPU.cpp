//===- KGraphToGPU.cpp - graph functions to kernel launch sequences -------===//

#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Conversion/Passes.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Dialect/KGraph/Transforms/KernelFamilies.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Dialect/KGraph/Transforms/StencilTiling.h"
#include "kgraph/Target/ElementTypes.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHLOWERTOGPU
#include "kgraph/Conversion/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

/// True if `func` holds a kgraph graph (any kgraph op or tensor signature).
static bool isGraphFunction(func::FuncOp func) {
  if (func.isExternal())
    return false;
  // Any function on tensors is a graph, even one that only returns inputs
  // or constants.
  auto isTensor = [](Type t) { return llvm::isa<TensorType>(t); };
  if (llvm::any_of(func.getArgumentTypes(), isTensor) ||
      llvm::any_of(func.getResultTypes(), isTensor))
    return true;
  bool found = false;
  func.walk([&](Operation *op) {
    if (llvm::isa<KGraphDialect>(op->getDialect()))
      found = true;
  });
  return found;
}

namespace {
/// What the lowering does per kernel family: the checks of a group and its
/// configuration (also for configurations written after kgraph-tile), and
/// the kernel body. The launch comes from KernelConfigAttrInterface.
struct FamilyEmitter {
  LogicalResult (*check)(FusedOp, KernelConfigAttrInterface, const SMTarget &);
  LogicalResult (*emit)(FusedOp, KernelConfigAttrInterface, gpu::GPUFuncOp,
                        const SMTarget &);
};
} // namespace

/// The GEMM emitter's launch must be the one the model counted (grid and
/// shared memory), or occupancy and fit decisions were made on wrong
/// numbers.
static LogicalResult checkGemmLaunch(FusedOp group, MatmulConfigAttr config,
                                     const SMTarget &target) {
  FailureOr<GemmLaunchShape> emitted = getGemmLaunchShape(group, config);
  if (failed(emitted))
    return group.emitOpError("is not a kgraph.matmul or kgraph.conv2d group");
  KernelLaunch model =
      llvm::cast<KernelConfigAttrInterface>(config).getLaunch(group, target);
  if (model.sharedMemoryBytes != emitted->sharedMemoryBytes ||
      model.grid != std::array<int64_t, 3>{emitted->gridX, emitted->gridY,
                                           emitted->gridZ})
    return group.emitOpError("GEMM kernel launches ")
           << emitted->gridX << "x" << emitted->gridY << "x" << emitted->gridZ
           << " blocks with " << emitted->sharedMemoryBytes
           << " bytes of shared memory but the model of " << config
           << " counted " << model.grid[0] << "x" << model.grid[1] << "x"
           << model.grid[2] << " with " << model.sharedMemoryBytes;
  return success();
}

static const FamilyEmitter *getFamilyEmitter(GroupKind kind) {
  static const FamilyEmitter elementwise = {
      [](FusedOp group, KernelConfigAttrInterface, const SMTarget &) {
        return checkElementwiseGroup(group);
      },
      [](FusedOp group, KernelConfigAttrInterface config,
         gpu::GPUFuncOp kernel, const SMTarget &) {
        return emitElementwiseKernel(
            group, llvm::cast<ElementwiseConfigAttr>(config), kernel);
      }};
  static const FamilyEmitter gemm = {
      [](FusedOp group, KernelConfigAttrInterface config,
         const SMTarget &target) {
        auto mm = llvm::cast<MatmulConfigAttr>(config);
        if (failed(checkMatmulGroup(group, mm, &target)))
          return failure();
        return checkGemmLaunch(group, mm, target);
      },
      [](FusedOp group, KernelConfigAttrInterface config,
         gpu::GPUFuncOp kernel, const SMTarget &target) {
        return emitMatmulKernel(group, llvm::cast<MatmulConfigAttr>(config),
                                kernel, target);
      }};
  static const FamilyEmitter reduce = {
      [](FusedOp group, KernelConfigAttrInterface config, const SMTarget &) {
        return checkReduceGroup(group, llvm::cast<ReduceConfigAttr>(config));
      },
      [](FusedOp group, KernelConfigAttrInterface config,
         gpu::GPUFuncOp kernel, const SMTarget &) {
        return emitReduceKernel(group, llvm::cast<ReduceConfigAttr>(config),
                                kernel);
      }};
  static const FamilyEmitter stencil = {
      [](FusedOp group, KernelConfigAttrInterface config,
         const SMTarget &target) {
        if (failed(checkStencilGroup(group)))
          return failure();
        return config.verifyForGroup(group, target,
                                     [&] { return group.emitOpError(); });
      },
      [](FusedOp group, KernelConfigAttrInterface config,
         gpu::GPUFuncOp kernel, const SMTarget &) {
        return emitStencilKernel(group, llvm::cast<StencilConfigAttr>(config),
                                 kernel);
      }};
  static const FamilyEmitter transpose = {
      [](FusedOp group, KernelConfigAttrInterface config,
         const SMTarget &target) {
        if (failed(checkGroupForKind(group, GroupKind::transpose, target)))
          return failure();
        return config.verifyForGroup(group, target,
                                     [&] { return group.emitOpError(); });
      },
      [](FusedOp group, KernelConfigAttrInterface config,
         gpu::GPUFuncOp kernel, const SMTarget &) {
        return emitTransposeKernel(
            group, llvm::cast<TransposeConfigAttr>(config), kernel);
      }};
  static const FamilyEmitter window = {
      [](FusedOp group, KernelConfigAttrInterface config,
         const SMTarget &target) {
        return checkWindowKernelGroup(
            group, llvm::cast<WindowConfigAttr>(config), target);
      },
      [](FusedOp group, KernelConfigAttrInterface config,
         gpu::GPUFuncOp kernel, const SMTarget &) {
        return emitWindowKernel(group, llvm::cast<WindowConfigAttr>(config),
                                kernel);
      }};
  switch (kind) {
  case GroupKind::elementwise:
    return &elementwise;
  case GroupKind::gemm:
    return &gemm;
  case GroupKind::reduce:
    return &reduce;
  case GroupKind::stencil:
    return &stencil;
  case GroupKind::copy:
    return nullptr;
  case GroupKind::transpose:
    return &transpose;
  case GroupKind::window:
    return &window;
  }
  llvm_unreachable("unknown group kind");
}

/// Checks the graph function is in the form the lowering expects.
static LogicalResult checkGraphFunction(func::FuncOp func,
                                        const SMTarget &target) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("graph functions must have a single block");
  for (Type t : llvm::concat<const Type>(func.getArgumentTypes(),
                                         func.getResultTypes())) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape())
      return func.emitOpError("graph function arguments and results must be "
                              "statically shaped tensors, got ")
             << t;
  }
  for (Operation &op : func.getBody().front()) {
    if (llvm::isa<FusedOp, func::ReturnOp>(op))
      continue;
    if (op.hasTrait<mlir::OpTrait::ConstantLike>() || isViewOp(&op) ||
        getConcatInputByteOffsets(&op))
      continue;
    if (isKernelOp(&op))
      return op.emitOpError("must be grouped into kgraph.fused before "
                            "lowering (run kgraph-form-kernels or kgraph-fuse)");
    return op.emitOpError("is not supported in a kgraph graph function");
  }
  for (FusedOp group : func.getBody().getOps<FusedOp>()) {
    KernelConfigAttrInterface config = getKernelConfig(group);
    if (!config)
      return failure();
    if (std::optional<GroupKind> kind = group.getKind();
        kind && *kind != config.getGroupKind())
      return group.emitOpError("is of kind '")
             << stringifyGroupKind(*kind) << "' but its '"
             << kConfigAttrName << "' is for "
             << stringifyGroupKind(config.getGroupKind())
             << " kernels: " << config;
    const FamilyEmitter *emitter = getFamilyEmitter(config.getGroupKind());
    if (!emitter)
      return group.emitOpError("has no kernel emitter for ")
             << stringifyGroupKind(config.getGroupKind()) << " groups yet";
    if (failed(emitter->check(group, config, target)))
      return failure();
  }
  return success();
}

/// The group result whose buffer can be the output buffer of the returned
/// value `v`: `v` is a reshape (or a chain of them) of a group result, and
/// each value of the chain has one use (the next reshape, finally the
/// return). The group then writes the output buffer through a view of it
/// instead of an intermediate that a copy kernel would copy out. Null if
/// there is none.
static Value getReshapedGroupResult(Value v) {
  Value root = v;
  while (auto reshape = root.getDefiningOp<ReshapeOp>()) {
    if (!root.hasOneUse())
      return {};
    root = reshape.getInput();
  }
  if (root == v || !root.hasOneUse() ||
      !llvm::isa_and_present<FusedOp>(root.getDefiningOp()))
    return {};
  return root;
}

/// Row-major strides of `shape`.
static SmallVector<int64_t> getRowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The dense memref of `type` whose first element is `byteOffset` bytes
/// into the buffer `source` (docs/launch-plan.md, "Views"): a
/// memref.reinterpret_cast at offset 0, else a kgraph.buffer_view.
static Value createBufferView(OpBuilder &b, Location loc, Value source,
                              MemRefType type, int64_t byteOffset) {
  if (byteOffset != 0)
    return BufferViewOp::create(b, loc, type, source,
                                b.getI64IntegerAttr(byteOffset));
  return memref::ReinterpretCastOp::create(b, loc, type, source, 0,
                                           type.getShape(),
                                           getRowMajorStrides(type.getShape()));
}

/// An identity group (a copy kernel) of `v` at `b`'s insertion point: it
/// yields its input unchanged, or materializes a splat constant (which has
/// no buffer, so it is cloned into the group). Returns its result.
static Value createCopyGroup(OpBuilder &b, Value v) {
  OpBuilder::InsertionGuard guard(b);
  Operation *def = v.getDefiningOp();
  bool constant = def && def->hasTrait<mlir::OpTrait::ConstantLike>() &&
                  isFoldedConstant(def, [](Operation *) { return true; });
  auto copy = FusedOp::create(b, v.getLoc(), TypeRange{v.getType()},
                              constant ? ValueRange{} : ValueRange{v});
  Block *body = b.createBlock(&copy.getBody());
  Value yielded = constant
                      ? b.clone(*def)->getResult(0)
                      : Value(body->addArgument(v.getType(), v.getLoc()));
  YieldOp::create(b, v.getLoc(), ValueRange{yielded});
  return copy.getResult(0);
}

/// Makes every input of a concat that needs no kernel
/// (getConcatInputByteOffsets) the result of a group of its own whose only
/// use it is, so that the group can write it into its view of the concat's
/// buffer: an input that is not one gets a copy group.
static void materializeConcatInputs(func::FuncOp func) {
  for (auto concat :
       llvm::make_early_inc_range(func.getBody().getOps<ConcatOp>())) {
    if (!getConcatInputByteOffsets(concat))
      continue;
    OpBuilder b(concat);
    for (OpOperand &operand : concat->getOpOperands()) {
      Value v = operand.get();
      if (llvm::isa_and_present<FusedOp>(v.getDefiningOp()) && v.hasOneUse())
        continue;
      operand.set(createCopyGroup(b, v));
    }
  }
}

/// Makes every returned value the fresh result of a group: a returned input,
/// constant or repeated value, or a view (other than a reshape that
/// getReshapedGroupResult lets its group write), gets an identity group (a
/// copy kernel), since outputs never alias inputs or each other.
static void materializeReturnedValues(func::FuncOp func) {
  auto ret = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder b(ret);
  llvm::SmallPtrSet<Value, 8> seen;
  for (OpOperand &operand : ret->getOpOperands()) {
    Value v = operand.get();
    Operation *def = v.getDefiningOp();
    bool fresh = (llvm::isa_and_present<FusedOp>(def) ||
                  (def && getConcatInputByteOffsets(def)) ||
                  getReshapedGroupResult(v)) &&
                 seen.insert(v).second;
    if (fresh)
      continue;
    Value copy = createCopyGroup(b, v);
    operand.set(copy);
    seen.insert(copy);
  }
}

std::string kgraph::formatPlanLocation(Location loc) {
  if (auto file = llvm::dyn_cast<FileLineColLoc>(loc)) {
    std::string out = (file.getFilename().getValue() + ":" +
                       Twine(file.getLine()))
                          .str();
    if (file.getColumn() != 0)
      out += ":" + std::to_string(file.getColumn());
    return out;
  }
  if (auto name = llvm::dyn_cast<NameLoc>(loc)) {
    std::string child = formatPlanLocation(name.getChildLoc());
    std::string out = name.getName().getValue().str();
    return child.empty() ? out : out + " (" + child + ")";
  }
  if (auto call = llvm::dyn_cast<CallSiteLoc>(loc))
    return formatPlanLocation(call.getCallee());
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    std::string out;
    llvm::ListSeparator sep(", ");
    for (Location part : fused.getLocations()) {
      std::string s = formatPlanLocation(part);
      if (!s.empty())
        out += StringRef(sep).str() + s;
    }
    return out;
  }
  return "";
}

/// Elements of a statically shaped tensor type, 0 for anything else.
static int64_t numElementsOf(Type type) {
  auto shaped = llvm::dyn_cast<ShapedType>(type);
  return shaped && shaped.hasStaticShape() ? shaped.getNumElements() : 0;
}

/// Bytes of a tensor of `type` in device memory (i1 is one byte).
static int64_t storageBytesOf(Type type) {
  const ElementTypeInfo *info =
      lookupElementType(getStorageElementType(getElementTypeOrSelf(type)));
  return info ? numElementsOf(type) * int64_t(info->storageBytes) : 0;
}

GroupWork kgraph::getGroupWork(FusedOp group) {
  GroupWork work;
  for (Value v : group.getInputs())
    work.bytes += storageBytesOf(v.getType());
  for (Value v : group.getResults())
    work.bytes += storageBytesOf(v.getType());
  group.getBody().walk([&](Operation *op) {
    if (!llvm::isa_and_present<KGraphDialect>(op->getDialect()) ||
        llvm::isa<YieldOp, ReshapeOp, TransposeOp, SliceOp, ConcatOp,
                  BroadcastToOp>(op) ||
        op->getNumResults() != 1)
      return;
    int64_t out = numElementsOf(op->getResult(0).getType());
    if (auto mm = llvm::dyn_cast<MatmulOp>(op)) {
      auto lhs = llvm::cast<ShapedType>(mm.getLhs().getType());
      int64_t k = lhs.getDimSize(lhs.getRank() - (mm.getTransposeA() ? 2 : 1));
      work.flops += 2 * out * k;
    } else if (auto conv = llvm::dyn_cast<Conv2dOp>(op)) {
      auto filter = llvm::cast<ShapedType>(conv.getFilter().getType());
      // Each output element reduces over one filter's C/groups x KH x KW.
      work.flops += 2 * out * (filter.getNumElements() / filter.getDimSize(0));
    } else if (auto pool = llvm::dyn_cast<Pool2dOp>(op)) {
      ArrayRef<int64_t> window = pool.getKernel();
      work.flops += out * window[0] * window[1];
    } else if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      work.flops += numElementsOf(reduce.getInput().getType());
    } else {
      work.flops += out;
    }
  });
  return work;
}

StringRef kgraph::getGroupCompute(FusedOp group,
                                  KernelConfigAttrInterface config) {
  auto mm = llvm::dyn_cast<MatmulConfigAttr>(config);
  if (!mm || mm.getInstruction() == MmaKind::fma || group.getInputs().empty())
    return "simt";
  Type operand = getElementTypeOrSelf(group.getInputs().front().getType());
  const ElementTypeInfo *info = lookupElementType(operand);
  if (!info || !info->mmaOperand)
    return "simt";
  switch (*info->mmaOperand) {
  case MmaOperandType::F16:
  case MmaOperandType::BF16:
    return "tensor_f16";
  case MmaOperandType::TF32:
    return "tensor_tf32";
  case MmaOperandType::I8:
    return "tensor_i8";
  case MmaOperandType::F8E4M3:
    return "simt";
  }
  return "simt";
}

/// The kKernelInfoAttrName dictionary of the kernel of `group`.
static DictionaryAttr getKernelInfo(FusedOp group,
                                    KernelConfigAttrInterface config) {
  MLIRContext *ctx = group.getContext();
  Builder b(ctx);
  SmallVector<Attribute> ops;
  for (Operation &op : group.getBody().front()) {
    // Constants are folded into the kernel: not an op of its own.
    if (llvm::isa<YieldOp>(op) || op.hasTrait<mlir::OpTrait::ConstantLike>())
      continue;
    SmallVector<NamedAttribute> fields{
        b.getNamedAttr("op", b.getStringAttr(op.getName().getStringRef()))};
    std::string loc = formatPlanLocation(op.getLoc());
    if (!loc.empty())
      fields.push_back(b.getNamedAttr("loc", b.getStringAttr(loc)));
    ops.push_back(b.getDictionaryAttr(fields));
  }
  GroupWork work = getGroupWork(group);
  return b.getDictionaryAttr(
      {b.getNamedAttr("ops", b.getArrayAttr(ops)),
       b.getNamedAttr("flops", b.getI64IntegerAttr(work.flops)),
       b.getNamedAttr("bytes", b.getI64IntegerAttr(work.bytes)),
       b.getNamedAttr("compute",
                      b.getStringAttr(getGroupCompute(group, config)))});
}

namespace {
struct LowerToGPUPass
    : public kgraph::impl::KGraphLowerToGPUBase<LowerToGPUPass> {
  using Base::Base;
  void runOnOperation() override;
  LogicalResult lowerFunction(func::FuncOp func, gpu::GPUModuleOp kernels,
                              SymbolTable &kernelSymbols,
                              const SMTarget &target);
};
} // namespace

LogicalResult LowerToGPUPass::lowerFunction(func::FuncOp func,
                                            gpu::GPUModuleOp kernels,
                                            SymbolTable &kernelSymbols,
                                            const SMTarget &target) {
  MLIRContext *ctx = func.getContext();
  Location loc = func.getLoc();
  Block &oldBody = func.getBody().front();
  auto ret = llvm::cast<func::ReturnOp>(oldBody.getTerminator());

  // New signature: inputs, then one destination buffer per result.
  SmallVector<Type> argTypes;
  for (Type t : func.getArgumentTypes())
    argTypes.push_back(getStorageMemRefType(llvm::cast<RankedTensorType>(t)));
  for (Type t : func.getResultTypes())
    argTypes.push_back(getStorageMemRefType(llvm::cast<RankedTensorType>(t)));

  auto newBody = std::make_unique<Block>();
  IRMapping buffers; // tensor value -> memref
  for (auto [i, arg] : llvm::enumerate(oldBody.getArguments()))
    buffers.map(arg, newBody->addArgument(argTypes[i], arg.getLoc()));
  DenseMap<Value, Value> resultBuffer;
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    resultBuffer[value] = newBody->addArgument(
        argTypes[func.getNumArguments() + i], value.getLoc());

  // The new block has no parent region yet: give the builder the context.
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(newBody.get());
  // A returned reshape of a group result: the group writes the output
  // buffer through a view of it.
  for (Value value : ret.getOperands())
    if (Value root = getReshapedGroupResult(value))
      resultBuffer[root] = createBufferView(
          b, value.getLoc(), resultBuffer.lookup(value),
          getStorageMemRefType(llvm::cast<RankedTensorType>(root.getType())),
          /*byteOffset=*/0);
  SmallVector<Value> allocations;
  SmallVector<Value> constants; // the tensor constants given a buffer
  // A tensor constant read from memory: a group input (one its kernel does
  // not fold, isFoldedConstant; a splat too where the kernel loads it, a
  // GEMM operand say) or the source of a view. A buffer of its own whose
  // data the plan carries (kind "constant"), uploaded once per device at
  // load like a parameter.
  for (auto cst : oldBody.getOps<arith::ConstantOp>()) {
    auto type = llvm::dyn_cast<RankedTensorType>(cst.getType());
    auto dense = llvm::dyn_cast<DenseElementsAttr>(cst.getValue());
    bool inMemory = llvm::any_of(cst->getUsers(), [](Operation *user) {
      return isa<FusedOp>(user) || getViewByteOffset(user);
    });
    if (!type || !inMemory)
      continue;
    if (!dense)
      return cst.emitOpError("a tensor constant needs dense elements to be "
                             "a plan buffer, got ")
             << cst.getValue();
    auto buffer =
        memref::AllocOp::create(b, cst.getLoc(), getStorageMemRefType(type));
    buffer->setAttr(kConstantAttrName, dense);
    if (StringAttr dtype = getLogicalDtypeAttr(type.getElementType()))
      buffer->setAttr(kDtypeAttrName, dtype);
    buffers.map(cst.getResult(), buffer);
    constants.push_back(cst.getResult());
  }
  // A concat that needs no kernel: its buffer (an output, or allocated
  // here), whose views its inputs' groups write.
  for (auto concat : oldBody.getOps<ConcatOp>()) {
    std::optional<SmallVector<int64_t>> offsets =
        getConcatInputByteOffsets(concat);
    if (!offsets)
      continue;
    auto type = llvm::cast<RankedTensorType>(concat.getType());
    Value buffer = resultBuffer.lookup(concat.getResult());
    if (!buffer) {
      buffer = memref::AllocOp::create(b, concat.getLoc(),
                                       getStorageMemRefType(type));
      if (StringAttr dtype = getLogicalDtypeAttr(type.getElementType()))
        buffer.getDefiningOp()->setAttr(kDtypeAttrName, dtype);
      allocations.push_back(buffer);
    }
    buffers.map(concat.getResult(), buffer);
    for (auto [input, offset] : llvm::zip_equal(concat.getInputs(), *offsets))
      resultBuffer[input] = createBufferView(
          b, concat.getLoc(), buffer,
          getStorageMemRefType(llvm::cast<RankedTensorType>(input.getType())),
          offset);
  }
  // Values that depend on the parameters alone: a group reading only them
  // runs once at load (kgraph.once), its results kept (kgraph.derived).
  DenseSet<Value> fromParameters;
  if (hoistParameterKernels) {
    for (BlockArgument arg : oldBody.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), kParamAttrName))
        fromParameters.insert(arg);
    // Constant buffers are loaded like parameters.
    fromParameters.insert(constants.begin(), constants.end());
  }
  unsigned kernelIndex = 0;
  for (Operation &op : llvm::make_early_inc_range(oldBody)) {
    // A view: its result is a memref view of its input's buffer, which the
    // kernels that read it take as their operand.
    if (std::optional<int64_t> byteOffset = getViewByteOffset(&op)) {
      Value source = buffers.lookupOrNull(op.getOperand(0));
      if (!source)
        return op.emitOpError("views a value that has no device buffer");
      buffers.map(op.getResult(0),
                  createBufferView(b, op.getLoc(), source,
                                   getStorageMemRefType(llvm::cast<
                                       RankedTensorType>(
                                       op.getResult(0).getType())),
                                   *byteOffset));
      if (fromParameters.contains(op.getOperand(0)))
        fromParameters.insert(op.getResult(0));
      continue;
    }
    auto group = llvm::dyn_cast<FusedOp>(op);
    if (!group)
      continue;
    auto config =
        llvm::cast<KernelConfigAttrInterface>(group->getAttr(kConfigAttrName));
    // Results with a buffer already (the function's outputs, concat
    // pieces) are written on every call.
    bool once = hoistParameterKernels &&
                llvm::all_of(group.getInputs(),
                             [&](Value v) { return fromParameters.contains(v); }) &&
                llvm::none_of(group.getResults(), [&](Value v) {
                  return bool(resultBuffer.lookup(v));
                });
    SmallVector<Value> operands;
    for (Value input : group.getInputs()) {
      Value buffer = buffers.lookupOrNull(input);
      if (!buffer)
        return group.emitOpError("reads a value that has no device buffer");
      operands.push_back(buffer);
    }
    for (Value result : group.getResults()) {
      Value buffer = resultBuffer.lookup(result);
      if (!buffer) {
        buffer = memref::AllocOp::create(
            b, group.getLoc(),
            getStorageMemRefType(
                llvm::cast<RankedTensorType>(result.getType())));
        if (StringAttr dtype =
                getLogicalDtypeAttr(getElementTypeOrSelf(result.getType())))
          buffer.getDefiningOp()->setAttr(kDtypeAttrName, dtype);
        if (once)
          buffer.getDefiningOp()->setAttr(kDerivedAttrName, b.getUnitAttr());
        allocations.push_back(buffer);
      }
      if (once)
        fromParameters.insert(result);
      buffers.map(result, buffer);
      operands.push_back(buffer);
    }

    // A GEMM with copy = tma takes its operands' tensor maps (built by the
    // runtime, see docs/launch-plan.md) as one more argument.
    if (auto mm = llvm::dyn_cast_if_present<MatmulConfigAttr>(config);
        mm && mm.getCopy() == CopyKind::tma) {
      FailureOr<ArrayAttr> maps = getGemmTensorMaps(group, mm);
      if (failed(maps) || !*maps)
        return group.emitOpError("is not a kgraph.matmul group");
      auto alloc = memref::AllocOp::create(
          b, group.getLoc(),
          MemRefType::get({int64_t((*maps).size()), 128}, b.getI8Type()));
      alloc->setAttr(kTensorMapsAttrName, *maps);
      operands.push_back(alloc);
      // A stream-K grid's arrival counters and partial tiles.
      if (mm.isStreamK()) {
        FailureOr<int64_t> bytes = getGemmWorkspaceBytes(group, mm);
        if (failed(bytes))
          return group.emitOpError("is not a kgraph.matmul group");
        auto ws = memref::AllocOp::create(
            b, group.getLoc(), MemRefType::get({*bytes}, b.getI8Type()));
        ws->setAttr(kWorkspaceAttrName, b.getUnitAttr());
        operands.push_back(ws);
      }
    }

    // The kernel: one gpu.func per group.
    std::string name =
        (func.getSymName() + "_k" + Twine(kernelIndex++)).str();
    OpBuilder kb = OpBuilder::atBlockEnd(kernels.getBody());
    auto kernel = gpu::GPUFuncOp::create(
        kb, group.getLoc(), name,
        FunctionType::get(ctx, ValueRange(operands).getTypes(), {}));
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    UnitAttr::get(ctx));
    kernelSymbols.insert(kernel);
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, group.getLoc(), v).getResult();
    };
    gpu::KernelDim3 grid, block;
    Value sharedBytes;
    // The block shape is known to the kernel before its body is emitted.
    auto setBlock = [&](int64_t x, int64_t y) {
      kernel.setKnownBlockSizeAttr(
          DenseI32ArrayAttr::get(ctx, {int32_t(x), int32_t(y), 1}));
      block = {c(x), c(y), c(1)};
    };
    auto setSharedBytes = [&](int64_t bytes) {
      sharedBytes = arith::ConstantIntOp::create(b, group.getLoc(),
                                                 b.getI32Type(), bytes);
    };
    // The launch the configuration describes.
    KernelLaunch launch = config.getLaunch(group, target);
    setBlock(launch.block[0], launch.block[1]);
    if (failed(getFamilyEmitter(config.getGroupKind())
                   ->emit(group, config, kernel, target)))
      return failure();
    grid = {c(launch.grid[0]), c(launch.grid[1]), c(launch.grid[2])};
    if (launch.sharedMemoryBytes > 0)
      setSharedBytes(launch.sharedMemoryBytes);
    auto launchOp = gpu::LaunchFuncOp::create(b, group.getLoc(), kernel, grid,
                                              block, sharedBytes, operands);
    launchOp->setAttr(kKernelInfoAttrName, getKernelInfo(group, config));
    if (once)
      launchOp->setAttr(kOnceAttrName, b.getUnitAttr());
  }
  for (Value alloc : allocations)
    memref::DeallocOp::create(b, loc, alloc);
  func::ReturnOp::create(b, loc);

  // Swap in the new body and signature; model parameters stay marked.
  SmallVector<StringAttr> params;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    params.push_back(func.getArgAttrOfType<StringAttr>(i, kParamAttrName));
  SmallVector<Type> oldArgTypes(func.getArgumentTypes());
  SmallVector<Type> oldResultTypes(func.getResultTypes());
  unsigned numInputs = func.getNumArguments();
  unsigned numResults = func.getNumResults();
  oldBody.dropAllDefinedValueUses();
  oldBody.dropAllReferences();
  func.getBody().getBlocks().clear();
  func.getBody().push_back(newBody.release());
  func.setType(FunctionType::get(ctx, argTypes, {}));
  func.setAllArgAttrs(SmallVector<DictionaryAttr>(
      argTypes.size(), DictionaryAttr::get(ctx, {})));
  func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  for (auto [i, name] : llvm::enumerate(params))
    if (name)
      func.setArgAttr(i, kParamAttrName, name);
  for (unsigned i = 0; i < numResults; ++i)
    func.setArgAttr(numInputs + i, kResultArgAttrName,
                    IntegerAttr::get(IntegerType::get(ctx, 64), i));
  // Boolean tensors are stored as bytes; keep their logical type visible.
  SmallVector<Type> logicalTypes(oldArgTypes);
  llvm::append_range(logicalTypes, oldResultTypes);
  for (auto [i, t] : llvm::enumerate(logicalTypes))
    if (StringAttr dtype = getLogicalDtypeAttr(getElementTypeOrSelf(t)))
      func.setArgAttr(i, kDtypeAttrName, dtype);
  return success();
}

void LowerToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<func::FuncOp> graphs;
  for (auto func : module.getOps<func::FuncOp>())
    if (isGraphFunction(func))
      graphs.push_back(func);
  if (graphs.empty())
    return;

  // Identity groups created for returned values need a configuration too;
  // reuse kgraph-tile's choice for the module's target.
  auto target = module->getAttrOfType<StringAttr>(kTargetAttrName);
  const SMTarget *sm = target ? lookupSMTarget(target.getValue()) : nullptr;
  if (!sm) {
    module.emitError("module has no known '")
        << kTargetAttrName << "' (run kgraph-tile first)";
    return signalPassFailure();
  }

  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(&getContext()));
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  if (!kernels)
    kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
  SymbolTable kernelSymbols(kernels);

  for (func::FuncOp func : graphs) {
    if (failed(checkGraphFunction(func, *sm)))
      return signalPassFailure();
    materializeReturnedValues(func);
    materializeConcatInputs(func);
    for (FusedOp group : func.getBody().getOps<FusedOp>())
      if (!group->hasAttr(kConfigAttrName))
        group->setAttr(kConfigAttrName,
                       *chooseElementwiseConfig(group, *sm));
    if (failed(lowerFunction(func, kernels, kernelSymbols, *sm)))
      return signalPassFailure();
  }
}
