//===- TransposeTiling.cpp - tiled transpose kernels -----------------------===//
//
// Canonical permutations, the layout of a tiled transpose, the checks of a
// #kgraph.transpose_config and its model (TransposeTiling.h).
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/Transforms/TransposeTiling.h"

#include "kgraph/Target/ElementTypes.h"
#include "kgraph/Target/SMTargets.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace kgraph;

bool CanonicalTranspose::isCopy() const {
  for (auto [i, p] : llvm::enumerate(permutation))
    if (p != int64_t(i))
      return false;
  return true;
}

bool CanonicalTranspose::keepsInnermost() const {
  return !isCopy() && permutation.back() == getRank() - 1;
}

CanonicalTranspose kgraph::canonicalizeTranspose(ArrayRef<int64_t> inShape,
                                                 ArrayRef<int64_t> permutation) {
  // Drop size-1 dims: renumber the remaining input dims in order.
  SmallVector<int64_t> newIndex(inShape.size(), -1);
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(inShape))
    if (size != 1) {
      newIndex[d] = shape.size();
      shape.push_back(size);
    }
  SmallVector<int64_t> perm;
  for (int64_t p : permutation)
    if (newIndex[p] >= 0)
      perm.push_back(newIndex[p]);

  // Runs of output dims that are consecutive input dims in order.
  SmallVector<std::pair<int64_t, int64_t>> runs; // [first, last] input dims
  for (int64_t p : perm) {
    if (!runs.empty() && runs.back().second + 1 == p)
      runs.back().second = p;
    else
      runs.push_back({p, p});
  }
  // Canonical input dims are the runs in input order.
  SmallVector<unsigned> byInput(runs.size());
  for (unsigned i = 0; i < runs.size(); ++i)
    byInput[i] = i;
  llvm::sort(byInput, [&](unsigned x, unsigned y) {
    return runs[x].first < runs[y].first;
  });
  CanonicalTranspose c;
  SmallVector<int64_t> position(runs.size());
  for (auto [k, r] : llvm::enumerate(byInput)) {
    int64_t size = 1;
    for (int64_t d = runs[r].first; d <= runs[r].second; ++d)
      size *= shape[d];
    c.inShape.push_back(size);
    position[r] = k;
  }
  for (unsigned r = 0; r < runs.size(); ++r)
    c.permutation.push_back(position[r]);
  return c;
}

CanonicalTranspose kgraph::canonicalizeTranspose(TransposeOp op) {
  return canonicalizeTranspose(
      llvm::cast<ShapedType>(op.getInput().getType()).getShape(),
      op.getPermutation());
}

FailureOr<TransposeLayout> kgraph::getTransposeLayout(TransposeOp op) {
  CanonicalTranspose c = canonicalizeTranspose(op);
  if (!c.isTiled())
    return failure();
  int64_t r = c.getRank();
  SmallVector<int64_t> inStride(r, 1), outShape(r), outStride(r, 1);
  for (int64_t d = r - 2; d >= 0; --d)
    inStride[d] = inStride[d + 1] * c.inShape[d + 1];
  for (int64_t i = 0; i < r; ++i)
    outShape[i] = c.inShape[c.permutation[i]];
  for (int64_t i = r - 2; i >= 0; --i)
    outStride[i] = outStride[i + 1] * outShape[i + 1];
  int64_t q = llvm::find(c.permutation, r - 1) - c.permutation.begin();
  int64_t b = c.permutation[r - 1];
  TransposeLayout l;
  l.extentA = c.inShape[r - 1];
  l.extentB = c.inShape[b];
  l.inStrideB = inStride[b];
  l.outStrideA = outStride[q];
  for (int64_t i = 0; i < r; ++i) {
    if (i == q || i == r - 1)
      continue;
    l.batch.push_back({outShape[i], inStride[c.permutation[i]], outStride[i]});
    l.batchSize *= outShape[i];
  }
  auto type = llvm::cast<ShapedType>(op.getInput().getType());
  const ElementTypeInfo *info = lookupElementType(type.getElementType());
  l.elementBytes = info ? info->storageBytes
                        : std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  l.numElements = type.getNumElements();
  return l;
}

TransposeOp kgraph::getSoleTransposeOp(FusedOp group) {
  TransposeOp found;
  for (Operation &op : group.getBody().front().without_terminator()) {
    if (op.hasTrait<mlir::OpTrait::ConstantLike>())
      continue;
    auto t = llvm::dyn_cast<TransposeOp>(op);
    if (!t || found)
      return {};
    found = t;
  }
  // The tiled kernel loads its input from memory: a transpose of a cloned
  // (splat) constant is left to the elementwise kernel.
  if (!found || group.getNumResults() != 1 ||
      group.getYield().getValues().front() != found.getResult() ||
      !llvm::isa<BlockArgument>(found.getInput()))
    return {};
  return found;
}

/// Vectors each thread moves per phase.
static int64_t getStepsPerPhase(TransposeConfigAttr config) {
  return config.getTileIn() * config.getTileOut() / config.getVectorWidth() /
         config.getBlockSize();
}

int64_t kgraph::getTransposeSharedBytes(TransposeConfigAttr config,
                                        const TransposeLayout &layout) {
  return config.getTileOut() * (config.getTileIn() + config.getSmemPadding()) *
         layout.elementBytes;
}

/// Static shared memory a kernel may declare without opting in.
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;
/// Vectors per thread and phase the emitter unrolls.
constexpr int64_t kMaxStepsPerPhase = 32;

LogicalResult kgraph::verifyTransposeConfig(
    TransposeConfigAttr config, const TransposeLayout &layout,
    const SMTarget &target, function_ref<InFlightDiagnostic()> emitError) {
  int64_t v = config.getVectorWidth();
  if (v * layout.elementBytes > 16)
    return emitError() << "vector_width " << v << " makes "
                       << v * layout.elementBytes
                       << "-byte accesses; at most 16 bytes";
  if (layout.extentA % v != 0 || layout.extentB % v != 0)
    return emitError() << "vector_width " << v
                       << " does not divide the transposed extents "
                       << layout.extentA << " (input innermost) and "
                       << layout.extentB << " (output innermost)";
  if (config.getBlockSize() > int64_t(target.maxThreadsPerBlock))
    return emitError() << "block_size " << config.getBlockSize()
                       << " exceeds the " << target.maxThreadsPerBlock
                       << " threads per block of " << target.name;
  if (getStepsPerPhase(config) > kMaxStepsPerPhase)
    return emitError() << "each thread would move " << getStepsPerPhase(config)
                       << " vectors per phase; at most " << kMaxStepsPerPhase
                       << " (use a larger block or vector_width)";
  int64_t bytes = getTransposeSharedBytes(config, layout);
  if (bytes > std::min<int64_t>(kMaxStaticSharedBytes, target.sharedMemPerBlock))
    return emitError() << "shared tile of " << bytes
                       << " bytes exceeds the "
                       << std::min<int64_t>(kMaxStaticSharedBytes,
                                            target.sharedMemPerBlock)
                       << " bytes of static shared memory";
  auto [x, y, z] = getTransposeGrid(config, layout);
  (void)y;
  (void)z;
  if (x > 2147483647)
    return emitError() << x << " tiles exceed the grid's 2^31 - 1 blocks";
  return success();
}

std::array<int64_t, 3> kgraph::getTransposeGrid(TransposeConfigAttr config,
                                                const TransposeLayout &layout) {
  int64_t tilesA = llvm::divideCeil(layout.extentA, config.getTileIn());
  int64_t tilesB = llvm::divideCeil(layout.extentB, config.getTileOut());
  return {tilesA * tilesB, 1, std::min<int64_t>(layout.batchSize, 65535)};
}

/// Fraction of the bytes of 32-byte sectors a run of `bytes` contiguous
/// bytes (starting at a sector boundary) uses.
static double sectorEfficiency(int64_t bytes) {
  return double(bytes) / double(llvm::divideCeil(bytes, 32) * 32);
}

double kgraph::estimateTransposeMicroseconds(TransposeConfigAttr config,
                                             const TransposeLayout &layout,
                                             const SMTarget &target) {
  int64_t tilesA = llvm::divideCeil(layout.extentA, config.getTileIn());
  int64_t tilesB = llvm::divideCeil(layout.extentB, config.getTileOut());
  double fill = double(layout.extentA * layout.extentB) /
                double(tilesA * config.getTileIn() * tilesB * config.getTileOut());
  int64_t e = layout.elementBytes;
  double sectors =
      0.5 * (sectorEfficiency(std::min(config.getTileIn(), layout.extentA) * e) +
             sectorEfficiency(std::min(config.getTileOut(), layout.extentB) * e));
  int64_t smem = getTransposeSharedBytes(config, layout);
  int64_t perSM = std::min<int64_t>(
      target.blocksPerSMByThreads(config.getBlockSize()),
      std::max<int64_t>(1, target.sharedMemPerSM / std::max<int64_t>(1, smem)));
  int64_t resident = int64_t(target.numSMs) * perSM;
  auto grid = getTransposeGrid(config, layout);
  int64_t blocks = grid[0] * grid[2];
  double waves = std::ceil(double(blocks) / double(resident));
  double wave = double(blocks) / (waves * double(resident));
  double bytes = 2.0 * double(layout.numElements * e);
  // Moving the tile's elements through shared memory once in and once out.
  double smemCycles = 2.0 * double(tilesA * tilesB * config.getTileIn() *
                                   config.getTileOut() * layout.batchSize * e) /
                      double(target.sharedBytesPerClock * target.numSMs);
  double dram = target.dramMicroseconds(bytes) / (fill * sectors * wave);
  return std::max(dram, target.cyclesToMicroseconds(smemCycles));
}

/// The largest power of two <= 16 / bytes that divides both extents.
static int64_t widestVector(const TransposeLayout &layout) {
  int64_t v = std::max<int64_t>(1, 16 / layout.elementBytes);
  while (v > 1 && (layout.extentA % v != 0 || layout.extentB % v != 0))
    v /= 2;
  return v;
}

/// A tile of about `area` elements for the two extents: each side the
/// extent rounded up to a power of two, at most `side`, grown (up to 256) on
/// the side whose extent is longer while the other is short.
static std::pair<int64_t, int64_t> fitTile(const TransposeLayout &layout,
                                           int64_t side, int64_t area,
                                           int64_t v) {
  int64_t needA = int64_t(llvm::PowerOf2Ceil(layout.extentA));
  int64_t needB = int64_t(llvm::PowerOf2Ceil(layout.extentB));
  int64_t tin = std::max(v, std::min(side, needA));
  int64_t tout = std::max(v, std::min(side, needB));
  while (tin * tout < area) {
    if (tout < needB && tout < 256)
      tout *= 2;
    else if (tin < needA && tin < 256)
      tin *= 2;
    else
      break;
  }
  // At least one warp of vectors.
  while (tin * tout / v < 32) {
    if (tin <= tout && tin < 256)
      tin *= 2;
    else
      tout *= 2;
  }
  return {tin, tout};
}

SmallVector<TransposeConfigAttr>
kgraph::enumerateTransposeConfigs(MLIRContext *ctx,
                                  const TransposeLayout &layout,
                                  const SMTarget &target) {
  SmallVector<TransposeConfigAttr> configs;
  int64_t pad = std::max<int64_t>(1, 4 / layout.elementBytes);
  auto add = [&](int64_t tin, int64_t tout, int64_t v, int64_t block) {
    block = std::min(block, tin * tout / v);
    if (block < 32 || (tin * tout / v) % block != 0)
      return;
    auto c = TransposeConfigAttr::get(ctx, tin, tout, v, block, pad);
    if (!llvm::is_contained(configs, c))
      configs.push_back(c);
  };
  int64_t widest = widestVector(layout);
  auto [tin, tout] = fitTile(layout, 64, 64 * 64, widest);
  add(tin, tout, widest, 256);
  for (int64_t v = widest; v >= 1; v /= 2)
    for (int64_t side : {64, 32, 128})
      for (int64_t block : {256, 128, 512}) {
        auto [a, b] = fitTile(layout, side, side * side, v);
        add(a, b, v, block);
      }
  (void)target;
  return configs;
}
