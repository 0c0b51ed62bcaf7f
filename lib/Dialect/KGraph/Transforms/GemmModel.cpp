//===- GemmModel.cpp - the resource model of GEMM kernels -----------------===//
//
// The problem, shared-memory layout and load-width rule of GEMM kernels,
// shared by kgraph-tile's selection model and the GEMM emitter (see
// GemmModel.h).
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/Transforms/GemmModel.h"
#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmGroup.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kgraph;

//===----------------------------------------------------------------------===//
// Problem
//===----------------------------------------------------------------------===//

Type MatmulProblem::getAccumulatorType() const {
  return kgraph::getAccumulatorType(operandType);
}

/// `type` as MLIR prints it, for diagnostics.
static std::string describeType(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

/// Whether kgraph has GEMM kernels for operands of `type`: the element-type
/// table gives it an accumulator.
static bool hasGemmKernel(Type type) {
  return static_cast<bool>(kgraph::getAccumulatorType(type));
}

FailureOr<MatmulProblem> kgraph::getMatmulProblem(MatmulOp op,
                                                  std::string *whyNot) {
  auto fail = [&](const Twine &why) -> FailureOr<MatmulProblem> {
    if (whyNot)
      *whyNot = why.str();
    return failure();
  };
  auto lhs = llvm::dyn_cast<RankedTensorType>(op.getLhs().getType());
  auto rhs = llvm::dyn_cast<RankedTensorType>(op.getRhs().getType());
  auto result = llvm::dyn_cast<RankedTensorType>(op.getResult().getType());
  if (!lhs || !rhs || !result || lhs.getRank() < 2 || lhs.getRank() > 3 ||
      rhs.getRank() != lhs.getRank() || result.getRank() != lhs.getRank())
    return fail("operands are not rank-2 or rank-3 tensors of one rank");

  MatmulProblem p;
  int64_t rank = lhs.getRank();
  p.batch = rank == 3 ? lhs.getDimSize(0) : 1;
  p.transposeA = op.getTransposeA();
  p.transposeB = op.getTransposeB();
  p.m = result.getDimSize(rank - 2);
  p.n = result.getDimSize(rank - 1);
  p.k = lhs.getDimSize(p.transposeA ? rank - 2 : rank - 1);
  p.operandType = lhs.getElementType();
  p.resultType = result.getElementType();
  p.allowTf32 = op.getPrecision() == Precision::tf32;
  if (p.batch <= 0 || p.m <= 0 || p.n <= 0 || p.k <= 0)
    return fail("the product is empty (batch " + Twine(p.batch) + ", M " +
                Twine(p.m) + ", N " + Twine(p.n) + ", K " + Twine(p.k) + ")");
  if (!hasGemmKernel(p.operandType))
    return fail("operands of element type " + describeType(p.operandType) +
                " have no matmul kernel");
  return p;
}

FailureOr<MatmulProblem> kgraph::getConvProblem(Conv2dOp op,
                                                std::string *whyNot) {
  auto fail = [&](const Twine &why) -> FailureOr<MatmulProblem> {
    if (whyNot)
      *whyNot = why.str();
    return failure();
  };
  auto input = llvm::dyn_cast<RankedTensorType>(op.getInput().getType());
  auto filter = llvm::dyn_cast<RankedTensorType>(op.getFilter().getType());
  auto result = llvm::dyn_cast<RankedTensorType>(op.getResult().getType());
  if (!input || !filter || !result || input.getRank() != 4 ||
      filter.getRank() != 4 || result.getRank() != 4)
    return fail("operands are not rank-4 tensors");
  bool nhwc = op.getLayout() == Layout::nhwc;
  int64_t groups = op.getGroups();
  ArrayRef<int64_t> in = input.getShape(), out = result.getShape(),
                    fil = filter.getShape();
  int64_t channels = nhwc ? in[3] : in[1];
  int64_t filters = nhwc ? out[3] : out[1];
  int64_t outH = nhwc ? out[1] : out[2], outW = nhwc ? out[2] : out[3];
  if (groups <= 0 || channels % groups != 0 || filters % groups != 0)
    return fail("groups do not divide the channels");

  MatmulProblem p;
  p.batch = groups;
  p.m = in[0] * outH * outW;
  p.n = filters / groups;
  // [F, C/g, KH, KW] or [F, KH, KW, C/g]: a filter row is its K.
  p.k = fil[1] * fil[2] * fil[3];
  p.transposeA = false;
  p.transposeB = true;
  p.contiguousRunA = nhwc ? channels / groups : 1;
  p.operandType = input.getElementType();
  p.resultType = result.getElementType();
  p.allowTf32 = op.getPrecision() == Precision::tf32;
  ConvGeometry c;
  c.nhwc = nhwc;
  c.batch = in[0];
  c.channels = channels;
  c.height = nhwc ? in[1] : in[2];
  c.width = nhwc ? in[2] : in[3];
  c.filters = fil[0];
  c.kernelH = nhwc ? fil[1] : fil[2];
  c.kernelW = nhwc ? fil[2] : fil[3];
  c.outH = outH;
  c.outW = outW;
  c.strideH = op.getStrides()[0];
  c.strideW = op.getStrides()[1];
  ArrayRef<int64_t> pad = op.getPadding();
  c.padTop = pad[0];
  c.padLeft = pad[2];
  c.padded = llvm::any_of(pad, [](int64_t v) { return v != 0; });
  c.dilationH = op.getDilations()[0];
  c.dilationW = op.getDilations()[1];
  c.groups = groups;
  p.conv = c;
  if (p.m <= 0 || p.n <= 0 || p.k <= 0)
    return fail("the convolution is empty (M " + Twine(p.m) + ", N " +
                Twine(p.n) + ", K " + Twine(p.k) + ")");
  if (!hasGemmKernel(p.operandType))
    return fail("operands of element type " + describeType(p.operandType) +
                " have no conv2d kernel");
  return p;
}

/// Where the matrix `slice` takes (isGemmOperandSlice) lies in its
/// row-major input: its access map's linear offset and the steps of its
/// row and batch coordinates.
static MatmulProblem::StoredLayout getSliceLayout(SliceOp slice) {
  AccessMap map = AccessMap::slice(
      llvm::cast<RankedTensorType>(slice.getInput().getType()).getShape(),
      slice.getOffsets(), slice.getSizes(), slice.getStrides());
  int64_t rank = map.getOutRank();
  MatmulProblem::StoredLayout l;
  l.offset = map.getOffset();
  l.rowStride = map.getCoefficient(rank - 2);
  l.batchStride =
      rank == 3 && slice.getSizes()[0] > 1 ? map.getCoefficient(0) : 0;
  return l;
}

FailureOr<MatmulProblem> kgraph::getGemmProblem(const GemmGroupParts &parts,
                                                std::string *whyNot) {
  Operation *anchor = parts.anchor;
  FailureOr<MatmulProblem> p =
      llvm::isa<Conv2dOp>(anchor)
          ? getConvProblem(llvm::cast<Conv2dOp>(anchor), whyNot)
          : getMatmulProblem(llvm::cast<MatmulOp>(anchor), whyNot);
  if (failed(p))
    return failure();
  p->stagedInRegisters =
      !parts.lhsPrologue.empty() || !parts.rhsPrologue.empty();
  if (parts.lhsSlice)
    p->layoutA = getSliceLayout(parts.lhsSlice);
  if (parts.rhsSlice)
    p->layoutB = getSliceLayout(parts.rhsSlice);
  // The epilogue's global traffic: the result's stores, and every group
  // input its ops read (directly or through an access map), once each.
  auto bytesOf = [](Type type) -> int64_t {
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return 0;
    const ElementTypeInfo *info = lookupElementType(tensor.getElementType());
    int64_t eb = info ? info->storageBytes
                      : llvm::divideCeil(tensor.getElementTypeBitWidth(), 8);
    return tensor.getNumElements() * eb;
  };
  p->epilogueBytes = bytesOf(parts.result.getType());
  llvm::SmallPtrSet<Value, 4> read;
  for (Operation *op : parts.epilogue)
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && isAccessMapOp(def))
        v = def->getOperand(0);
      if (llvm::isa<BlockArgument>(v) && read.insert(v).second)
        p->epilogueBytes += bytesOf(v.getType());
    }
  return p;
}

//===----------------------------------------------------------------------===//
// Shared-memory layout
//===----------------------------------------------------------------------===//

GemmTileShape GemmTileShape::fromConfig(MatmulConfigAttr config) {
  GemmTileShape s;
  s.tileM = config.getTileM();
  s.tileN = config.getTileN();
  s.tileK = config.getTileK();
  s.stages = config.getStages();
  s.smemPadding = config.getSmemPadding();
  s.instruction = config.getInstruction();
  s.copy = config.getCopy();
  s.streamK = config.isStreamK();
  return s;
}

/// Bytes of one operand element in shared memory (the element-type
/// table's; problems are only built for types it has).
static int64_t operandBytes(const MatmulProblem &p) {
  const ElementTypeInfo *info = lookupElementType(p.operandType);
  assert(info && "MatmulProblem of an element type kgraph does not have");
  return info->storageBytes;
}

GemmSharedMemoryLayout
kgraph::getGemmSharedMemoryLayout(const MatmulProblem &p,
                                  const GemmTileShape &s) {
  GemmSharedMemoryLayout l;
  int64_t eb = operandBytes(p);
  l.rowsA = p.transposeA ? s.tileK : s.tileM;
  l.colsA = (p.transposeA ? s.tileM : s.tileK) + s.smemPadding;
  l.rowsB = p.transposeB ? s.tileN : s.tileK;
  l.colsB = (p.transposeB ? s.tileK : s.tileN) + s.smemPadding;
  l.stageBytesA = l.rowsA * l.colsA * eb;
  l.stageBytesB = l.rowsB * l.colsB * eb;
  if (s.instruction == MmaKind::wgmma) {
    l.tileAlignment = kWgmmaTileAlignment;
    l.alignmentSlack = kWgmmaTileAlignment;
  }
  l.offsetB = s.stages * l.stageBytesA;
  int64_t operandsEnd = l.offsetB + s.stages * l.stageBytesB;
  if (s.copy == CopyKind::tma)
    l.barrierBytes = kTmaBarrierBytesPerStage * s.stages;
  // A stream-K block's word telling its consumers who finishes a tile.
  if (s.streamK)
    l.barrierBytes += kStreamKFlagBytes;
  // The epilogue is staged where C's rows are contiguous (not an nchw
  // conv2d, whose channels are strided) and the result type is stored as
  // itself in 16-byte vectors that divide the tile's row. The result tile
  // goes over the operand tiles; where it is larger (one or two stages of a
  // short K), the tiles' region grows to hold it, as long as the block
  // stays within the shared memory every target gives without an opt-in,
  // so no configuration legal without staging becomes illegal.
  const ElementTypeInfo *result = lookupElementType(p.resultType);
  bool nchw = p.conv && !p.conv->nhwc;
  int64_t tilesEnd = operandsEnd;
  if (!nchw && result && result->storageBytes * 8 == result->bitWidth &&
      16 % result->storageBytes == 0) {
    int64_t vector = 16 / result->storageBytes;
    // 8 elements of padding: the accumulator fragments are pairs of
    // columns, 4 lanes to a row, so the rows one store phase covers (8 of
    // 16-bit pairs, 4 of 32-bit ones) start 16 (32) bytes = 4 (8) banks
    // apart and hit distinct banks.
    int64_t rowBytes = (s.tileN + 8) * result->storageBytes;
    int64_t staged = s.tileM * rowBytes;
    bool fits = staged <= operandsEnd ||
                l.alignmentSlack + staged + l.barrierBytes <=
                    kStagedEpilogueSharedMemoryLimit;
    if (s.tileN % vector == 0 && s.streamK) {
      // A persistent block's producer loads the next tile's stages while
      // its consumers store this one's: the result tile gets a region of
      // its own after the operand tiles (16-byte aligned rows).
      l.epilogueRowBytes = rowBytes;
      l.epilogueVector = vector;
      l.epilogueOffset = llvm::alignTo(operandsEnd, 16);
      tilesEnd = l.epilogueOffset + staged;
    } else if (s.tileN % vector == 0 && fits) {
      l.epilogueRowBytes = rowBytes;
      l.epilogueVector = vector;
      tilesEnd = std::max(operandsEnd, staged);
    }
  }
  // The mbarriers follow the tiles' region: the staged result never
  // overwrites them (an mbarrier's bytes may not be reused before
  // mbarrier.inval).
  l.offsetBarriers = tilesEnd;
  l.totalBytes = l.alignmentSlack + l.offsetBarriers + l.barrierBytes;
  return l;
}

GemmSharedMemoryLayout
kgraph::getGemmSharedMemoryLayout(const MatmulProblem &p,
                                  MatmulConfigAttr config) {
  return getGemmSharedMemoryLayout(p, GemmTileShape::fromConfig(config));
}

StreamKSchedule kgraph::getStreamKSchedule(int64_t tiles, int64_t kTiles,
                                           int64_t blocks) {
  StreamKSchedule s;
  s.blocks = blocks;
  s.tiles = tiles;
  s.kTiles = kTiles;
  if (blocks <= 0 || tiles <= 0 || kTiles <= 0)
    return s;
  s.rounds = tiles / blocks;
  s.remainder = tiles % blocks;
  s.busiest = s.rounds * kTiles;
  if (s.remainder == 0)
    return s;
  // Whole remaining tiles, one per block, unless a split is cheaper by
  // kStreamKSplitGain with the busiest block's rounds counted in.
  int64_t R = s.remainder, P = s.poolBlocks(), K = kTiles;
  int64_t bestCost = K, bestLoad = K;
  double whole = double(s.rounds * K + K);
  // More pieces than this only add partials to the last block's serial sum.
  constexpr int64_t kMaxPieces = 64;
  for (int64_t S = 1; S <= std::min(K - 1, kMaxPieces); ++S) {
    int64_t q = llvm::divideCeil(R * S, P);
    // The head X balances the pool's q pieces of (K - X) / S iterations and
    // their overheads: X = q ((K - X) / S + O).
    int64_t x0 = q * (K + S * kStreamKPieceIterations) / (S + q);
    // Ties go to the longer head, which then more often finishes last and
    // keeps its partial in registers.
    for (int64_t X = std::min(K - 1, x0 + 2); X >= std::max<int64_t>(1, x0 - 2);
         --X) {
      int64_t L = llvm::divideCeil(K - X, S);
      int64_t pieces = llvm::divideCeil(K - X, L);
      int64_t units = llvm::divideCeil(R * pieces, P);
      int64_t load = std::max(X, units * (L + kStreamKPieceIterations));
      int64_t cost = load + kStreamKPartialIterations * (pieces + 1);
      if (cost < bestCost &&
          double(s.rounds * K + cost) * kStreamKSplitGain <= whole) {
        bestCost = cost;
        bestLoad = load;
        s.head = X;
        s.pieces = pieces;
        s.pieceLength = L;
      }
    }
  }
  s.busiest += bestLoad;
  return s;
}

StreamKWorkspace kgraph::getStreamKWorkspace(const MatmulProblem &p,
                                             MatmulConfigAttr config) {
  StreamKWorkspace w;
  int64_t tm = config.getTileM(), tn = config.getTileN();
  int64_t tiles = p.batch * llvm::divideCeilSigned(p.m, tm) *
                  llvm::divideCeilSigned(p.n, tn);
  int64_t kTiles = llvm::divideCeilSigned(p.k, config.getTileK());
  // More blocks than iterations would leave some without work.
  w.schedule = getStreamKSchedule(
      tiles, kTiles, std::min(config.getStreamK(), tiles * kTiles));
  int64_t split = w.schedule.splits() ? w.schedule.remainder : 0;
  w.partialsOffset = llvm::alignTo(std::max<int64_t>(split, 1) * 4, 128);
  w.slotElements = tm * tn;
  int64_t accBytes = lookupElementType(p.getAccumulatorType())->storageBytes;
  w.totalBytes = w.partialsOffset + split * (w.schedule.pieces + 1) *
                                        w.slotElements * accBytes;
  return w;
}

std::string kgraph::getStreamKError(MatmulConfigAttr config,
                                    const MatmulProblem &p) {
  if (!config.isStreamK())
    return "";
  StreamKWorkspace w = getStreamKWorkspace(p, config);
  std::string msg;
  llvm::raw_string_ostream os(msg);
  // The kernel counts a block's iterations in 32 bits (stage and phase of
  // its pipeline).
  const StreamKSchedule &s = w.schedule;
  int64_t total = s.tiles * s.kTiles;
  int64_t perBlock = s.busiest;
  if (perBlock >= (int64_t(1) << 31)) {
    os << "stream_k = " << config.getStreamK() << " gives a block "
       << perBlock << " of " << total << " iterations (" << s.tiles
       << " tiles x " << s.kTiles
       << " k tiles); a block may run at most 2^31 - 1";
    return msg;
  }
  if (w.totalBytes <= kMaxStreamKWorkspaceBytes)
    return "";
  os << "stream_k = " << config.getStreamK() << " needs " << w.totalBytes
     << " bytes of workspace (" << s.remainder << " split tiles of "
     << s.pieces + 1
     << " partial tiles each); at most "
     << kMaxStreamKWorkspaceBytes;
  return msg;
}

//===----------------------------------------------------------------------===//
// Load width
//===----------------------------------------------------------------------===//

std::string kgraph::getLoadWidthError(MatmulConfigAttr config,
                                      const MatmulProblem &p) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  int64_t lw = config.getLoadWidth();
  int64_t eb = operandBytes(p);
  bool implicit = p.contiguousRunA != 0;
  StringRef nameA = implicit ? "input" : "lhs";
  StringRef nameB = implicit ? "filter" : "rhs";
  if (lw * eb > 16) {
    os << "load_width = " << lw << " moves " << lw * eb
       << " bytes per access of '" << p.operandType
       << "' elements; at most 16";
    return msg;
  }
  auto extent = [&](int64_t e, StringRef operand, StringRef dim) {
    if (e % lw != 0)
      os << "load_width = " << lw << " does not divide the contiguous extent "
         << e << " (" << dim << ") of " << operand;
    return e % lw == 0;
  };
  if (!extent(p.getContiguousExtentA(), nameA,
              implicit       ? "contiguous run of the im2col gather"
              : p.transposeA ? "M"
                             : "K") ||
      !extent(p.getContiguousExtentB(), nameB, p.transposeB ? "K" : "N"))
    return msg;
  // The stored tile rows (unpadded), which every access must not straddle.
  auto tileRow = [&](int64_t cols, StringRef operand, StringRef field) {
    if (cols % lw != 0)
      os << "load_width = " << lw << " does not divide the tile's "
         << "contiguous extent " << cols << " (" << field << ") of "
         << operand;
    return cols % lw == 0;
  };
  int64_t tm = config.getTileM(), tn = config.getTileN(),
          tk = config.getTileK();
  if (tileRow(p.transposeA ? tm : tk, nameA,
              p.transposeA ? "tile_m" : "tile_k"))
    tileRow(p.transposeB ? tk : tn, nameB, p.transposeB ? "tile_k" : "tile_n");
  return msg;
}
