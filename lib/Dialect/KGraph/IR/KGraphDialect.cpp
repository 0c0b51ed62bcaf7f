//===- KGraphDialect.cpp - kgraph dialect ---------------------------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphDialect.h"
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kgraph;

#include "kgraph/Dialect/KGraph/IR/KGraphDialect.cpp.inc"
#include "kgraph/Dialect/KGraph/IR/KGraphEnums.cpp.inc"
#include "kgraph/Dialect/KGraph/IR/KGraphAttrInterfaces.cpp.inc"

static ParseResult parseMatmulConfigTail(AsmParser &parser, int64_t &groupM,
                                         CopyKind &copy, int64_t &streamK);
static void printMatmulConfigTail(AsmPrinter &printer, int64_t groupM,
                                  CopyKind copy, int64_t streamK);

#define GET_ATTRDEF_CLASSES
#include "kgraph/Dialect/KGraph/IR/KGraphAttrs.cpp.inc"

void KGraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kgraph/Dialect/KGraph/IR/KGraphOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kgraph/Dialect/KGraph/IR/KGraphAttrs.cpp.inc"
      >();
}

/// Folds produce splat constants (e.g. x - x); they are materialized as
/// arith.constant so the graph stays in upstream form.
Operation *KGraphDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  if (auto typed = llvm::dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

/// `kgraph.param = "<name>"` on a func.func argument: a non-empty string on
/// a statically shaped tensor (or, after kgraph-lower-to-gpu, memref)
/// argument, its name used by no other argument of the function. Other
/// kgraph argument attributes (kgraph.result, kgraph.dtype of the lowered
/// host function) are the lowering's and are not checked here.
LogicalResult KGraphDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  if (attr.getName() != kParamAttrName)
    return success();
  auto func = llvm::dyn_cast<FunctionOpInterface>(op);
  if (!func || op->getName().getStringRef() != "func.func" || regionIndex != 0)
    return op->emitOpError("'")
           << kParamAttrName << "' is only valid on a func.func argument";
  auto name = llvm::dyn_cast<StringAttr>(attr.getValue());
  if (!name)
    return op->emitOpError("'")
           << kParamAttrName << "' of argument #" << argIndex
           << " must be a string (the tensor's name in the weights file), got "
           << attr.getValue();
  if (name.getValue().empty())
    return op->emitOpError("'")
           << kParamAttrName << "' of argument #" << argIndex
           << " must be a non-empty name";
  Type type = func.getArgumentTypes()[argIndex];
  auto shaped = llvm::dyn_cast<ShapedType>(type);
  if (!shaped || !llvm::isa<RankedTensorType, MemRefType>(type) ||
      !shaped.hasStaticShape())
    return op->emitOpError("'")
           << kParamAttrName << "' of argument #" << argIndex
           << " must be on a statically shaped tensor argument, got " << type;
  for (unsigned other = 0; other < argIndex; ++other) {
    auto otherName = func.getArgAttrOfType<StringAttr>(other, kParamAttrName);
    if (otherName && otherName == name)
      return op->emitOpError("parameter '")
             << name.getValue() << "' is bound to arguments #" << other
             << " and #" << argIndex;
  }
  return success();
}

/// `kgraph.weights = "<path>"`: a non-empty string on the module.
LogicalResult KGraphDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  if (attr.getName() != kWeightsAttrName)
    return success();
  if (!llvm::isa<ModuleOp>(op))
    return op->emitOpError("'")
           << kWeightsAttrName << "' is only valid on a builtin.module";
  auto path = llvm::dyn_cast<StringAttr>(attr.getValue());
  if (!path || path.getValue().empty())
    return op->emitOpError("'")
           << kWeightsAttrName
           << "' must be a non-empty string (the weights file's path), got "
           << attr.getValue();
  return success();
}

LogicalResult ElementwiseConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t blockSize,
    int64_t vectorWidth, int64_t unroll, int64_t gridSize) {
  if (blockSize <= 0 || blockSize > 1024 || blockSize % 32 != 0)
    return emitError() << "block_size must be a multiple of 32 in [32, 1024], "
                          "got "
                       << blockSize;
  if (vectorWidth <= 0 || vectorWidth > 16 ||
      (vectorWidth & (vectorWidth - 1)) != 0)
    return emitError() << "vector_width must be a power of two in [1, 16], got "
                       << vectorWidth;
  if (unroll <= 0 || unroll > 16)
    return emitError() << "unroll must be in [1, 16], got " << unroll;
  if (gridSize <= 0 || gridSize > 2147483647)
    return emitError() << "grid_size must be in [1, 2^31 - 1], got "
                       << gridSize;
  return success();
}

LogicalResult
StencilConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t tileH, int64_t tileW, int64_t blockX,
                          int64_t blockY, int64_t rowsPerThread,
                          int64_t colsPerThread) {
  if (tileH <= 0 || tileW <= 0)
    return emitError() << "tile_h and tile_w must be positive, got " << tileH
                       << " x " << tileW;
  if (blockX <= 0 || blockY <= 0)
    return emitError() << "block_x and block_y must be positive, got "
                       << blockX << " x " << blockY;
  int64_t threads = blockX * blockY;
  if (threads > 1024 || threads % 32 != 0)
    return emitError() << "block_x * block_y must be a multiple of 32 in "
                          "[32, 1024], got "
                       << threads;
  if (rowsPerThread <= 0 || rowsPerThread > 8)
    return emitError() << "rows_per_thread must be in [1, 8], got "
                       << rowsPerThread;
  if (tileH % rowsPerThread != 0)
    return emitError() << "rows_per_thread (" << rowsPerThread
                       << ") must divide tile_h (" << tileH << ")";
  if (colsPerThread != 1 && colsPerThread != 2 && colsPerThread != 4)
    return emitError() << "cols_per_thread must be 1, 2 or 4, got "
                       << colsPerThread;
  if (tileW % colsPerThread != 0)
    return emitError() << "cols_per_thread (" << colsPerThread
                       << ") must divide tile_w (" << tileW << ")";
  return success();
}

/// The optional tail of #kgraph.matmul_config: `, group_m = N` and
/// `, copy = cp_async|tma`, each printed only when not the default.
static ParseResult parseMatmulConfigTail(AsmParser &parser, int64_t &groupM,
                                         CopyKind &copy, int64_t &streamK) {
  groupM = 1;
  copy = CopyKind::cp_async;
  streamK = 0;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc at = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    if (key == "group_m") {
      int64_t v;
      if (parser.parseInteger(v))
        return failure();
      groupM = v;
    } else if (key == "copy") {
      StringRef kind;
      SMLoc kindAt = parser.getCurrentLocation();
      if (parser.parseKeyword(&kind))
        return failure();
      std::optional<CopyKind> k = symbolizeCopyKind(kind);
      if (!k)
        return parser.emitError(kindAt, "expected copy = cp_async or tma, got ")
               << kind;
      copy = *k;
    } else if (key == "stream_k") {
      if (parser.parseInteger(streamK))
        return failure();
    } else {
      return parser.emitError(at,
                              "expected 'group_m', 'copy' or 'stream_k', got '")
             << key << "'";
    }
  }
  return success();
}

static void printMatmulConfigTail(AsmPrinter &printer, int64_t groupM,
                                  CopyKind copy, int64_t streamK) {
  if (groupM != 1)
    printer << ", group_m = " << groupM;
  if (copy != CopyKind::cp_async)
    printer << ", copy = " << stringifyCopyKind(copy);
  if (streamK != 0)
    printer << ", stream_k = " << streamK;
}

/// The most persistent blocks of a stream-K grid: each has two partial tiles
/// of workspace (docs/launch-plan.md).
static constexpr int64_t kMaxStreamKBlocks = 8192;

LogicalResult MatmulConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t tileM, int64_t tileN,
    int64_t tileK, int64_t warpsM, int64_t warpsN, int64_t stages,
    MmaKind instruction, ArrayRef<int64_t> shape, int64_t loadWidth,
    int64_t smemPadding, int64_t groupM, CopyKind copy, int64_t streamK) {
  if (copy == CopyKind::tma && instruction != MmaKind::wgmma)
    return emitError() << "copy = tma needs instruction = wgmma, got "
                       << stringifyMmaKind(instruction);
  if (streamK < 0 || streamK > kMaxStreamKBlocks)
    return emitError() << "stream_k must be in [0, " << kMaxStreamKBlocks
                       << "] blocks, got " << streamK;
  if (streamK > 0 && copy != CopyKind::tma)
    return emitError() << "stream_k needs copy = tma (the persistent "
                          "warp-specialized main loop)";
  if (streamK > 0 && groupM != 1)
    return emitError() << "stream_k walks the tiles in row-major order; "
                          "group_m must be 1, got "
                       << groupM;
  if (groupM < 1)
    return emitError() << "group_m must be positive, got " << groupM;
  if (tileM <= 0 || tileN <= 0 || tileK <= 0)
    return emitError() << "tile sizes must be positive, got [" << tileM << ", "
                       << tileN << ", " << tileK << "]";
  if (warpsM <= 0 || warpsN <= 0 || warpsM * warpsN > 32)
    return emitError() << "warps_m x warps_n must be in [1, 32], got "
                       << warpsM << " x " << warpsN;
  if (tileM % warpsM != 0 || tileN % warpsN != 0)
    return emitError() << "tile " << tileM << "x" << tileN
                       << " does not split evenly over " << warpsM << "x"
                       << warpsN << " warps";
  if (stages < 1 || stages > 8)
    return emitError() << "stages must be in [1, 8], got " << stages;
  if (shape.size() != 3 || llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "instruction_shape must be three positive sizes [m, n, k]";
  if (instruction == MmaKind::wgmma) {
    // Four consecutive warps form a warpgroup, stacked along M.
    if (warpsM % 4 != 0)
      return emitError() << "wgmma needs warps_m to be a multiple of 4 (a "
                            "warpgroup is 4 warps along M), got "
                         << warpsM;
    int64_t groupM = tileM / (warpsM / 4), groupN = tileN / warpsN;
    if (groupM % shape[0] != 0 || groupN % shape[1] != 0 ||
        tileK % shape[2] != 0)
      return emitError() << "warpgroup tile " << groupM << "x" << groupN << "x"
                         << tileK
                         << " is not a multiple of the instruction shape ["
                         << shape[0] << ", " << shape[1] << ", " << shape[2]
                         << "]";
  } else if ((tileM / warpsM) % shape[0] != 0 ||
             (tileN / warpsN) % shape[1] != 0 || tileK % shape[2] != 0)
    return emitError() << "warp tile " << tileM / warpsM << "x" << tileN / warpsN
                       << "x" << tileK << " is not a multiple of the instruction shape ["
                       << shape[0] << ", " << shape[1] << ", " << shape[2] << "]";
  if (instruction == MmaKind::fma &&
      (shape[0] != 1 || shape[1] != 1 || shape[2] != 1))
    return emitError() << "fma takes instruction_shape [1, 1, 1]";
  if (loadWidth <= 0 || loadWidth > 16 || (loadWidth & (loadWidth - 1)) != 0)
    return emitError() << "load_width must be a power of two in [1, 16], got "
                       << loadWidth;
  if (smemPadding < 0)
    return emitError() << "smem_padding must be non-negative, got "
                       << smemPadding;
  return success();
}

LogicalResult ReduceConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t threadsPerRow,
    int64_t rowsPerBlock, int64_t vectorWidth, int64_t gridSize,
    int64_t rowVectors) {
  auto isPowerOfTwo = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  if (!isPowerOfTwo(threadsPerRow) || threadsPerRow > 1024)
    return emitError() << "threads_per_row must be a power of two in [1, "
                          "1024], got "
                       << threadsPerRow;
  if (rowsPerBlock <= 0 || rowsPerBlock > 1024)
    return emitError() << "rows_per_block must be in [1, 1024], got "
                       << rowsPerBlock;
  int64_t blockSize = threadsPerRow * rowsPerBlock;
  if (blockSize > 1024 || blockSize % 32 != 0)
    return emitError() << "threads_per_row x rows_per_block must be a "
                          "multiple of 32 in [32, 1024], got "
                       << threadsPerRow << " x " << rowsPerBlock;
  if (!isPowerOfTwo(vectorWidth) || vectorWidth > 16)
    return emitError() << "vector_width must be a power of two in [1, 16], got "
                       << vectorWidth;
  if (gridSize <= 0 || gridSize > 2147483647)
    return emitError() << "grid_size must be in [1, 2^31 - 1], got "
                       << gridSize;
  if (rowVectors < 0)
    return emitError() << "row_vectors must be non-negative, got "
                       << rowVectors;
  return success();
}

LogicalResult WindowConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t vectorWidth,
    int64_t blockX, int64_t blockY, int64_t gridSize, int64_t strip) {
  if (vectorWidth <= 0 || vectorWidth > 16 ||
      (vectorWidth & (vectorWidth - 1)) != 0)
    return emitError() << "vector_width must be a power of two in [1, 16], got "
                       << vectorWidth;
  if (blockX <= 0 || blockY <= 0)
    return emitError() << "block_x and block_y must be positive, got "
                       << blockX << " x " << blockY;
  int64_t threads = blockX * blockY;
  if (threads > 1024 || threads % 32 != 0)
    return emitError() << "block_x * block_y must be a multiple of 32 in "
                          "[32, 1024], got "
                       << threads;
  if (gridSize <= 0 || gridSize > 2147483647)
    return emitError() << "grid_size must be in [1, 2^31 - 1], got "
                       << gridSize;
  if (strip < 1 || strip > 16)
    return emitError() << "strip must be in [1, 16], got " << strip;
  return success();
}

LogicalResult TransposeConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t tileIn,
    int64_t tileOut, int64_t vectorWidth, int64_t blockSize,
    int64_t smemPadding) {
  auto isPowerOfTwo = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  if (!isPowerOfTwo(vectorWidth) || vectorWidth > 16)
    return emitError() << "vector_width must be a power of two in [1, 16], got "
                       << vectorWidth;
  if (!isPowerOfTwo(tileIn) || tileIn < vectorWidth || tileIn > 256)
    return emitError() << "tile_in must be a power of two in [vector_width, "
                          "256], got "
                       << tileIn;
  if (!isPowerOfTwo(tileOut) || tileOut < vectorWidth || tileOut > 256)
    return emitError() << "tile_out must be a power of two in [vector_width, "
                          "256], got "
                       << tileOut;
  if (blockSize <= 0 || blockSize > 1024 || blockSize % 32 != 0)
    return emitError() << "block_size must be a multiple of 32 in [32, 1024], "
                          "got "
                       << blockSize;
  int64_t vectors = tileIn * tileOut / vectorWidth;
  if (vectors % blockSize != 0)
    return emitError() << "block_size " << blockSize
                       << " must divide the tile's " << vectors
                       << " vectors (tile_in * tile_out / vector_width)";
  if (smemPadding < 0 || smemPadding > 16)
    return emitError() << "smem_padding must be in [0, 16], got "
                       << smemPadding;
  return success();
}
