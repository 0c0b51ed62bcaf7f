//===- StencilEmitter.cpp - stencil groups as one tiled kernel ------------===//
//
// One block computes a tile_h x tile_w output tile of one image (and, for a
// lone pool2d, one block of <= 4 channels); the regions and shared-memory
// layout come from planStencilGroup (StencilTiling.h). A thread computes
// strips of rows_per_thread x cols_per_thread positions. The kernel:
//
//   1. stages every group input a conv2d/pool2d reads: its region (tile plus
//      halo) from global memory into shared memory as f32 (i32 for the
//      integers a max pool reads), consecutive threads on consecutive x;
//      positions outside the image get the reader's padding value (0, or
//      -inf, the i32 minimum for integers, for max pool);
//   2. for each other materialized value, in topological order: computes it
//      over its region strip by strip and stores it (padding value outside
//      the image); barrier;
//   3. computes the yielded values over the tile and stores them once.
//
// Values that no conv2d/pool2d reads are computed where they are used.
// Filter taps are fully unrolled; a strip's shared-memory loads are reused
// by its rows, its columns and every op of the strip. With
// cols_per_thread = V > 1, regions start and end on multiples of V columns
// (planStencilGroup), so shared-memory rows are read and written as aligned
// V-vectors, and rows of global memory whose width is a multiple of V are
// staged, read and stored as V-vectors too. Arithmetic is f32 (elementwise
// ops through ScalarOps.h; integers in i32), each op's result rounded to
// its element type.
//
//===----------------------------------------------------------------------===//

#include "ScalarOps.h"
#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/StencilTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include <limits>
#include <tuple>

using namespace mlir;
using namespace kgraph;

namespace {

class StencilEmitter {
public:
  StencilEmitter(OpBuilder &b, Location loc, FusedOp group,
                 StencilConfigAttr config, const StencilPlan &plan,
                 gpu::GPUFuncOp kernel)
      : b(b), loc(loc), group(group), config(config), plan(plan),
        body(group.getBody().front()), entry(kernel.getBody().front()),
        axes(getActivationAxes(plan.layout)) {}

  LogicalResult emit();

private:
  // Index and scalar helpers.
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, int64_t v) {
    return v == 0 ? x : arith::AddIOp::create(b, loc, x, c(v)).getResult();
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t v) {
    return v == 1 ? x : arith::MulIOp::create(b, loc, x, c(v)).getResult();
  }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value clampTo(Value x, int64_t size) {
    Value lo = arith::MaxSIOp::create(b, loc, x, c(0));
    return arith::MinSIOp::create(b, loc, lo, c(size - 1));
  }
  /// 0 <= y < h && 0 <= x < w (negative indices compare as huge unsigned).
  Value inImage(Value y, int64_t h, Value x, int64_t w) {
    Value iy = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, y, c(h));
    Value ix = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, c(w));
    return arith::AndIOp::create(b, loc, iy, ix);
  }
  /// The padding value in `type`, the compute type of a materialized value
  /// (f32, or i32 for integers, whose "-inf" is the i32 minimum: a max pool
  /// window always holds an in-image element, which wins).
  Value fillValue(StencilFill fill, Type type) {
    if (llvm::isa<FloatType>(type))
      return f32(fill == StencilFill::NegInf
                     ? -std::numeric_limits<double>::infinity()
                     : 0.0);
    int64_t value = fill == StencilFill::NegInf
                        ? std::numeric_limits<int32_t>::min()
                        : 0;
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
  }
  /// The type a materialized value is computed and kept in shared memory in.
  Type computeType(Value v) const {
    return kgraph::detail::getComputeType(elementType(v));
  }

  int64_t rowsPerThread() const { return config.getRowsPerThread(); }
  int64_t colsPerThread() const { return config.getColsPerThread(); }
  /// Positions of a strip; a thread's values of `v` are
  /// [rows][cols][channels], lane = row * colsPerThread() + col.
  int64_t lanes() const { return rowsPerThread() * colsPerThread(); }
  /// {N, C, H, W} of a 4-D value.
  std::array<int64_t, 4> dims(Value v) const {
    ArrayRef<int64_t> s = llvm::cast<ShapedType>(v.getType()).getShape();
    return {s[axes.n], s[axes.c], s[axes.h], s[axes.w]};
  }
  /// Channels of `v` in a strip: the plan's, or the (broadcast) channel
  /// extent of a group input read pointwise.
  int64_t channelsOf(Value v) const {
    if (auto it = plan.values.find(v); it != plan.values.end())
      return it->second.channels;
    auto type = llvm::cast<ShapedType>(v.getType());
    int64_t rank = type.getRank();
    int64_t axis = int64_t(axes.c) - (4 - rank);
    return axis >= 0 ? type.getShape()[axis] : 1;
  }
  /// Indices of the kernel buffer of 4-D (or broadcast, lower-rank) value
  /// `memrefType` at image position (n, c, y, x): the buffer broadcast to a
  /// 4-D activation in the group's layout (size-1 dims read index 0), read
  /// at logical coordinates.
  SmallVector<Value> bufferIndices(MemRefType memrefType, Value n, Value ch,
                                   Value y, Value x) {
    ArrayRef<int64_t> shape = memrefType.getShape();
    SmallVector<int64_t> stored(4 - shape.size(), 1);
    llvm::append_range(stored, shape);
    AccessMap map = AccessMap::activation(stored, plan.layout)
                        .compose(AccessMap::broadcast(shape, stored));
    return map.emitIndices(b, loc, {n, ch, y, x});
  }
  /// The kernel buffer `memrefType` (a group input read at image
  /// coordinates, image width `w`) keeps image rows as its innermost dim,
  /// whole, with a width that is a multiple of colsPerThread():
  /// colsPerThread() consecutive positions from a multiple of it are one
  /// aligned vector.
  bool hasVectorRows(MemRefType memrefType, int64_t w) const {
    int64_t v = colsPerThread();
    if (v == 1)
      return false;
    ArrayRef<int64_t> shape = memrefType.getShape();
    SmallVector<int64_t> stored(4 - shape.size(), 1);
    llvm::append_range(stored, shape);
    AccessMap map = AccessMap::activation(stored, plan.layout)
                        .compose(AccessMap::broadcast(shape, stored));
    ArrayRef<AccessMap::OperandDim> dims = map.getOperandDims();
    unsigned bits = memrefType.getElementType().getIntOrFloatBitWidth();
    return bits >= 8 && llvm::isPowerOf2_32(bits) && !dims.empty() &&
           dims.back().outDim == 3 && dims.back().step == 1 &&
           dims.back().offset == 0 && shape.back() == w && w % v == 0 &&
           map.isContiguousAlong(3, v);
  }
  /// The V-vector of `buffer` (hasVectorRows for an h x w image) holding
  /// image column `x`, a multiple of V, at row `y`, both clamped to the
  /// image (a vector outside it reads the nearest one inside; the caller
  /// masks such lanes).
  Value loadRowVector(Value buffer, Value n, Value ch, Value y, Value x,
                      int64_t h, int64_t w) {
    auto memrefType = llvm::cast<MemRefType>(buffer.getType());
    int64_t v = colsPerThread();
    Value cx = arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, x, c(0)), c(w - v));
    Type et = memrefType.getElementType();
    return vector::LoadOp::create(
        b, loc, VectorType::get({v}, et), buffer,
        bufferIndices(memrefType, n, ch, clampTo(y, h), cx),
        /*nontemporal=*/false,
        llvm::MaybeAlign(v * et.getIntOrFloatBitWidth() / 8));
  }
  /// Stores `lanes`, consecutive columns from `col` (a multiple of their
  /// number), of channel `ch` and row `row` of materialized value `v` in
  /// shared memory: one aligned vector store, a scalar store for one lane.
  void storeShared(Value v, int64_t ch, Value row, Value col,
                   ArrayRef<Value> lanes) {
    SmallVector<Value, 3> at{c(ch), row, col};
    if (lanes.size() == 1) {
      memref::StoreOp::create(b, loc, lanes[0], shared.lookup(v), at);
      return;
    }
    int64_t n = lanes.size();
    Value vec = vector::FromElementsOp::create(
        b, loc, VectorType::get({n}, lanes[0].getType()), lanes);
    vector::StoreOp::create(b, loc, vec, shared.lookup(v), at,
                            /*nontemporal=*/false, llvm::MaybeAlign(n * 4));
  }
  Value kernelArg(Value blockArg) {
    return entry.getArgument(llvm::cast<BlockArgument>(blockArg).getArgNumber());
  }
  Type elementType(Value v) const {
    return llvm::cast<ShapedType>(v.getType()).getElementType();
  }

  /// Emits the loop `for i = tid; i < items; i += threads` and calls `fn`
  /// with a builder inside it.
  void forEachItem(int64_t items, llvm::function_ref<void(Value)> fn);

  void stageInput(Value arg, const StencilValue &sv);
  LogicalResult computeMaterialized(Value v, const StencilValue &sv);
  LogicalResult storeResults();

  // Per-strip evaluation: rows relY0 .. relY0 + R - 1 at column relX of the
  // output grid (relative to the tile origin).
  void beginStrip(Value relY0, Value relX) {
    stripY = relY0;
    stripX = relX;
    memo.clear();
    loads.clear();
    vectorLoads.clear();
  }
  /// The R x channels values of `v` (row-major by row, then channel) at the
  /// strip; `compute` evaluates a materialized value instead of reading it.
  FailureOr<SmallVector<Value>> evaluate(Value v, bool compute = false);
  FailureOr<SmallVector<Value>> evaluateConv(Conv2dOp conv);
  FailureOr<SmallVector<Value>> evaluatePool(Pool2dOp pool);
  /// Channel `ch` of materialized `v` at row stripY * scaleY + dy and column
  /// stripX * scaleX + dx (v's grid, relative to the tile origin).
  Value sharedLoad(Value v, int64_t ch, int64_t dy, int64_t dx);
  /// Tap (f, ch, ky, kx) of a filter read at run time (a group input;
  /// constant filters come from getStencilFilterSlice).
  Value weight(Conv2dOp conv, int64_t f, int64_t ch, int64_t ky, int64_t kx);

  OpBuilder &b;
  Location loc;
  FusedOp group;
  StencilConfigAttr config;
  const StencilPlan &plan;
  Block &body;
  Block &entry;
  ActivationAxes axes;

  Value tid, image, channelBase, tileY, tileX;
  DenseMap<Value, Value> shared; ///< materialized value -> f32 [C][rows][cols]
  DenseMap<std::tuple<Operation *, int64_t, int64_t, int64_t, int64_t>, Value>
      hoistedWeights;
  Value stripY, stripX;
  DenseMap<Value, SmallVector<Value>> memo;
  DenseMap<std::tuple<Value, int64_t, int64_t, int64_t>, Value> loads;
  /// (v, channel, dy, first column) -> the V-vector of shared memory.
  DenseMap<std::tuple<Value, int64_t, int64_t, int64_t>, Value> vectorLoads;
};

} // namespace

void StencilEmitter::forEachItem(int64_t items,
                                 llvm::function_ref<void(Value)> fn) {
  Value upper = c(items);
  auto loop = scf::ForOp::create(b, loc, tid, upper, c(config.getNumThreads()));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  fn(loop.getInductionVar());
}

void StencilEmitter::stageInput(Value arg, const StencilValue &sv) {
  std::array<int64_t, 4> d = dims(arg);
  int64_t h = d[2], w = d[3];
  Value buffer = kernelArg(arg);
  auto memrefType = llvm::cast<MemRefType>(buffer.getType());
  Type et = elementType(arg);
  Value originY = add(mul(tileY, sv.scaleY), sv.y0);
  // The staged columns start computeX0 - x0 columns into the held row.
  Value originX = add(mul(tileX, sv.scaleX), sv.computeX0);
  int64_t skip = sv.computeX0 - sv.x0;
  // Unrolled by up to 8 positions per thread and trip, every load issued
  // before the first store: enough bytes in flight to cover DRAM latency at
  // a few blocks per SM. Positions past the region load a clamped
  // (in-image) address and skip the store.
  // With V-vector rows (the region's columns start at a multiple of V,
  // planStencilGroup) a position is V consecutive columns.
  int64_t vec =
      hasVectorRows(memrefType, w) && sv.computeCols % colsPerThread() == 0
          ? colsPerThread()
          : 1;
  int64_t rowItems = sv.computeCols / vec;
  int64_t items = sv.rows * rowItems, threads = config.getNumThreads();
  int64_t perThread = llvm::divideCeil(items, threads);
  int64_t unroll = llvm::divideCeil(perThread, llvm::divideCeil(perThread, 8));
  Value upper = c(items);
  auto loop = scf::ForOp::create(b, loc, tid, upper, c(unroll * threads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value fill = fillValue(sv.fill, computeType(arg));
  struct Pending {
    Value index, ry, rx;
    SmallVector<SmallVector<Value, 4>> values; ///< per channel, its lanes
  };
  SmallVector<Pending> pending;
  for (int64_t u = 0; u < unroll; ++u) {
    Value i = add(loop.getInductionVar(), u * threads);
    Value ry = arith::DivUIOp::create(b, loc, i, c(rowItems));
    Value rx = mul(arith::RemUIOp::create(b, loc, i, c(rowItems)), vec);
    Value y = add(originY, ry), x = add(originX, rx);
    Pending p{i, ry, add(rx, skip), {}};
    if (vec > 1) {
      // Lanes outside the image get the fill; the load stays inside.
      for (int64_t k = 0; k < sv.channels; ++k) {
        Value row =
            loadRowVector(buffer, image, add(channelBase, k), y, x, h, w);
        SmallVector<Value, 4> &lanesK = p.values.emplace_back();
        for (int64_t e = 0; e < vec; ++e) {
          Value val = kgraph::detail::toComputeType(
              b, loc, vector::ExtractOp::create(b, loc, row, e), et);
          lanesK.push_back(arith::SelectOp::create(
              b, loc, inImage(y, h, add(x, e), w), val, fill));
        }
      }
      pending.push_back(p);
      continue;
    }
    Value inside = inImage(y, h, x, w);
    Value cy = clampTo(y, h), cx = clampTo(x, w);
    for (int64_t k = 0; k < sv.channels; ++k) {
      Value chIdx = add(channelBase, k);
      Value loaded = memref::LoadOp::create(
          b, loc, buffer, bufferIndices(memrefType, image, chIdx, cy, cx));
      Value val = kgraph::detail::toComputeType(b, loc, loaded, et);
      p.values.push_back({arith::SelectOp::create(b, loc, inside, val, fill)});
    }
    pending.push_back(p);
  }
  for (auto [u, p] : llvm::enumerate(pending)) {
    OpBuilder::InsertionGuard storeGuard(b);
    if (u > 0) { // the loop bound covers the first position
      Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          p.index, c(items));
      auto ifOp = scf::IfOp::create(b, loc, valid, /*withElse=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    for (auto [k, lanesK] : llvm::enumerate(p.values))
      storeShared(arg, k, p.ry, p.rx, lanesK);
  }
}

/// True if computing `v` where it is used reads a group input from global
/// memory (its cone of non-materialized values reaches a block argument).
static bool readsGlobal(Value v, const StencilPlan &plan, bool root = true) {
  auto it = plan.values.find(v);
  if (!root && it != plan.values.end() && it->second.materialized)
    return false;
  if (llvm::isa<BlockArgument>(v))
    return true;
  Operation *op = v.getDefiningOp();
  if (llvm::isa<Conv2dOp, Pool2dOp>(op))
    return false; // reads its (materialized) input from shared memory
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    return readsGlobal(operand, plan, /*root=*/false);
  });
}

LogicalResult StencilEmitter::computeMaterialized(Value v,
                                                  const StencilValue &sv) {
  int64_t rpt = rowsPerThread(), cpt = colsPerThread();
  std::array<int64_t, 4> d = dims(v);
  int64_t h = d[2], w = d[3];
  int64_t stripCols = sv.computeCols / cpt;
  int64_t skip = sv.computeX0 - sv.x0; // computed columns' start in the row
  int64_t items = (sv.rows / rpt) * stripCols, threads = config.getNumThreads();
  // A value computed from global memory (e.g. a cast of the image) is
  // unrolled like the staging of inputs, up to 4 strips per trip with all
  // loads first, so enough loads are in flight. Strips past the region
  // compute the last strip again and skip the store.
  int64_t unroll = 1;
  if (readsGlobal(v, plan)) {
    int64_t perThread = llvm::divideCeil(items, threads);
    unroll = llvm::divideCeil(perThread, llvm::divideCeil(perThread, 4));
  }
  Value upper = c(items);
  auto loop = scf::ForOp::create(b, loc, tid, upper, c(unroll * threads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  struct Pending {
    Value index, row0, sx, x, y0;
    SmallVector<Value> values;
  };
  SmallVector<Pending> pending;
  for (int64_t u = 0; u < unroll; ++u) {
    Value i = add(loop.getInductionVar(), u * threads);
    Value item = u == 0 ? i
                        : Value(arith::MinUIOp::create(b, loc, i, c(items - 1)));
    Value sy = arith::DivUIOp::create(b, loc, item, c(stripCols));
    Value sx = mul(arith::RemUIOp::create(b, loc, item, c(stripCols)), cpt);
    Value row0 = mul(sy, rpt);
    Value stripRow = add(row0, sv.y0);
    beginStrip(stripRow, add(sx, sv.computeX0));
    FailureOr<SmallVector<Value>> vals = evaluate(v, /*compute=*/true);
    if (failed(vals))
      return failure();
    pending.push_back({i, row0, add(sx, skip), add(tileX, stripX),
                       add(tileY, stripY), *vals});
  }
  Value fill = fillValue(sv.fill, computeType(v));
  for (auto [u, p] : llvm::enumerate(pending)) {
    OpBuilder::InsertionGuard storeGuard(b);
    if (u > 0) {
      Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          p.index, c(items));
      auto ifOp = scf::IfOp::create(b, loc, valid, /*withElse=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    for (int64_t r = 0; r < rpt; ++r) {
      SmallVector<Value> inside;
      for (int64_t e = 0; e < cpt; ++e)
        inside.push_back(inImage(add(p.y0, r), h, add(p.x, e), w));
      for (int64_t k = 0; k < sv.channels; ++k) {
        SmallVector<Value> row;
        for (int64_t e = 0; e < cpt; ++e)
          row.push_back(arith::SelectOp::create(
              b, loc, inside[e], p.values[(r * cpt + e) * sv.channels + k],
              fill));
        storeShared(v, k, add(p.row0, r), p.sx, row);
      }
    }
  }
  return success();
}

LogicalResult StencilEmitter::storeResults() {
  int64_t rpt = rowsPerThread(), cpt = colsPerThread();
  int64_t th = config.getTileH(), tw = config.getTileW();
  unsigned numInputs = group.getInputs().size();
  LogicalResult status = success();
  forEachItem((th / rpt) * (tw / cpt), [&](Value i) {
    Value sy = arith::DivUIOp::create(b, loc, i, c(tw / cpt));
    Value sx = mul(arith::RemUIOp::create(b, loc, i, c(tw / cpt)), cpt);
    beginStrip(mul(sy, rpt), sx);
    SmallVector<SmallVector<Value>> results;
    for (Value v : group.getYield().getValues()) {
      FailureOr<SmallVector<Value>> vals = evaluate(v);
      if (failed(vals)) {
        status = failure();
        return;
      }
      results.push_back(*vals);
    }
    Value x = add(tileX, stripX);
    // Stores of row r, columns [e0, e1) of the strip: one V-vector per
    // channel where the buffer has vector rows and the whole strip is
    // stored, else element by element.
    auto storeRow = [&](int64_t r, Value y, int64_t e0, int64_t e1,
                        bool vectors) {
      for (auto [k, v] : llvm::enumerate(group.getYield().getValues())) {
        Value buffer = entry.getArgument(numInputs + k);
        auto memrefType = llvm::cast<MemRefType>(buffer.getType());
        int64_t channels = channelsOf(v);
        for (int64_t ch = 0; ch < channels; ++ch) {
          SmallVector<Value> stored;
          for (int64_t e = e0; e < e1; ++e)
            stored.push_back(kgraph::detail::toStorageType(
                b, loc, results[k][(r * cpt + e) * channels + ch],
                elementType(v)));
          Value chIdx = add(channelBase, ch);
          if (vectors && hasVectorRows(memrefType, plan.w)) {
            Type et = memrefType.getElementType();
            vector::StoreOp::create(
                b, loc,
                vector::FromElementsOp::create(
                    b, loc, VectorType::get({cpt}, et), stored),
                buffer, bufferIndices(memrefType, image, chIdx, y, x),
                /*nontemporal=*/false,
                llvm::MaybeAlign(cpt * et.getIntOrFloatBitWidth() / 8));
            continue;
          }
          for (int64_t e = e0; e < e1; ++e)
            memref::StoreOp::create(
                b, loc, stored[e - e0], buffer,
                bufferIndices(memrefType, image, chIdx, y, add(x, e)));
        }
      }
    };
    for (int64_t r = 0; r < rpt; ++r) {
      Value y = add(add(tileY, stripY), r);
      if (cpt == 1) {
        auto ifOp = scf::IfOp::create(b, loc, inImage(y, plan.h, x, plan.w),
                                      /*withElse=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        storeRow(r, y, 0, 1, /*vectors=*/false);
        continue;
      }
      // The whole strip row inside the image (x is a multiple of V), or
      // column by column at the image's right edge.
      Value whole = inImage(y, plan.h, add(x, cpt - 1), plan.w);
      auto ifOp = scf::IfOp::create(b, loc, whole, /*withElse=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      storeRow(r, y, 0, cpt, /*vectors=*/true);
      b.setInsertionPointToStart(ifOp.elseBlock());
      for (int64_t e = 0; e < cpt; ++e) {
        auto edge = scf::IfOp::create(
            b, loc, inImage(y, plan.h, add(x, e), plan.w), /*withElse=*/false);
        OpBuilder::InsertionGuard edgeGuard(b);
        b.setInsertionPointToStart(edge.thenBlock());
        storeRow(r, y, e, e + 1, /*vectors=*/false);
      }
    }
  });
  return status;
}

Value StencilEmitter::sharedLoad(Value v, int64_t ch, int64_t dy, int64_t dx) {
  auto key = std::make_tuple(v, ch, dy, dx);
  if (Value hit = loads.lookup(key))
    return hit;
  const StencilValue &sv = plan.values.find(v)->second;
  Value row = add(mul(stripY, sv.scaleY), dy - sv.y0);
  int64_t vec = colsPerThread();
  if (vec > 1 && sv.scaleX == 1) {
    // stripX - x0 is a multiple of V (strips and regions start on
    // multiples of V): the V-vector from column floor(dx / V) * V of the
    // strip holds dx, and every column of the strip that reads it.
    int64_t base = llvm::divideFloorSigned(dx, vec) * vec;
    auto vkey = std::make_tuple(v, ch, dy, base);
    Value &row4 = vectorLoads[vkey];
    if (!row4) {
      Value col = add(stripX, base - sv.x0);
      Type ct =
          llvm::cast<MemRefType>(shared.lookup(v).getType()).getElementType();
      row4 = vector::LoadOp::create(
          b, loc, VectorType::get({vec}, ct), shared.lookup(v),
          ValueRange{c(ch), row, col},
          /*nontemporal=*/false, llvm::MaybeAlign(vec * 4));
    }
    Value val = vector::ExtractOp::create(b, loc, row4, dx - base);
    loads[key] = val;
    return val;
  }
  Value col = add(mul(stripX, sv.scaleX), dx - sv.x0);
  Value val = memref::LoadOp::create(b, loc, shared.lookup(v),
                                     ValueRange{c(ch), row, col});
  loads[key] = val;
  return val;
}

Value StencilEmitter::weight(Conv2dOp conv, int64_t f, int64_t ch, int64_t ky,
                             int64_t kx) {
  auto key = std::make_tuple(conv.getOperation(), f, ch, ky, kx);
  if (Value hit = hoistedWeights.lookup(key))
    return hit;
  Value filter = conv.getFilter();
  auto type = llvm::cast<RankedTensorType>(filter.getType());
  SmallVector<int64_t> idx = conv.getLayout() == Layout::nhwc
                                 ? SmallVector<int64_t>{f, ky, kx, ch}
                                 : SmallVector<int64_t>{f, ch, ky, kx};
  SmallVector<Value> indices;
  for (int64_t i : idx)
    indices.push_back(c(i));
  Value loaded = memref::LoadOp::create(b, loc, kernelArg(filter), indices);
  return kgraph::detail::toComputeType(b, loc, loaded, type.getElementType());
}

FailureOr<SmallVector<Value>> StencilEmitter::evaluateConv(Conv2dOp conv) {
  int64_t rpt = rowsPerThread(), cpt = colsPerThread();
  Value in = conv.getInput();
  ArrayRef<int64_t> fshape = conv.getFilter().getType().getShape();
  bool nhwc = conv.getLayout() == Layout::nhwc;
  int64_t numF = fshape[0];
  int64_t kh = nhwc ? fshape[1] : fshape[2], kw = nhwc ? fshape[2] : fshape[3];
  int64_t numC = nhwc ? fshape[3] : fshape[1];
  ArrayRef<int64_t> pad = conv.getPadding();
  Type et = elementType(conv.getResult());
  // acc[(r * cpt + e) * numF + f]: filter f at row r, column e of the strip
  // (stencil convs have stride 1: column e reads columns e - pad .. of the
  // input).
  SmallVector<Value> acc(rpt * cpt * numF);
  auto accumulate = [&](Value &sum, Value w, Value x) {
    sum = sum ? Value(math::FmaOp::create(b, loc, w, x, sum))
              : Value(arith::MulFOp::create(b, loc, w, x));
  };
  for (int64_t f = 0; f < numF; ++f)
    for (int64_t ch = 0; ch < numC; ++ch) {
      // The model's choice (StencilTiling.h): taps of a constant filter
      // that are 0 contribute nothing to a finite sum (Sobel's middle
      // column) and are skipped; a rank-one filter runs as a row pass over
      // the input rows the thread's rows read, then a column pass.
      StencilFilterSlice slice = getStencilFilterSlice(conv, f, ch, rpt);
      // Tap order of a constant pass: a tap of weight 1 first (the sum
      // starts from it for free, -1 taps then subtract), the rest in order.
      auto order = [](ArrayRef<float> ws) {
        SmallVector<int64_t> taps;
        const float *one = llvm::find(ws, 1.0f);
        if (one != ws.end())
          taps.push_back(one - ws.begin());
        for (int64_t t = 0, n = ws.size(); t < n; ++t)
          if (ws[t] != 0.0f && ws.begin() + t != one)
            taps.push_back(t);
        return taps;
      };
      // Direct taps (flat ky * kw + kx), or the row pass's (kx) and the
      // column pass's (ky) of a separable slice.
      SmallVector<int64_t> taps, rowTaps, colTaps;
      if (slice.separable) {
        rowTaps = order(slice.v);
        colTaps = order(slice.u);
      } else if (slice.constant) {
        taps = order(slice.weights);
      } else {
        for (int64_t t = 0; t < kh * kw; ++t)
          taps.push_back(t);
      }
      for (int64_t e = 0; e < cpt; ++e) {
        if (slice.separable) {
          SmallVector<Value> rowSums(rpt - 1 + kh);
          for (auto [dy, sum] : llvm::enumerate(rowSums))
            for (int64_t kx : rowTaps)
              accumulate(
                  sum, f32(slice.v[kx]),
                  sharedLoad(in, ch, int64_t(dy) - pad[0], e + kx - pad[2]));
          for (int64_t r = 0; r < rpt; ++r)
            for (int64_t ky : colTaps)
              accumulate(acc[(r * cpt + e) * numF + f], f32(slice.u[ky]),
                         rowSums[r + ky]);
          continue;
        }
        for (int64_t r = 0; r < rpt; ++r)
          for (int64_t t : taps) {
            int64_t ky = t / kw, kx = t % kw;
            Value w = slice.constant ? f32(slice.weights[ky * kw + kx])
                                     : weight(conv, f, ch, ky, kx);
            accumulate(acc[(r * cpt + e) * numF + f], w,
                       sharedLoad(in, ch, r - pad[0] + ky, e + kx - pad[2]));
          }
      }
    }
  SmallVector<Value> out(rpt * cpt * numF);
  for (auto [i, sum] : llvm::enumerate(acc))
    out[i] = kgraph::detail::roundToType(b, loc, sum ? sum : f32(0.0), et);
  return out;
}

FailureOr<SmallVector<Value>> StencilEmitter::evaluatePool(Pool2dOp pool) {
  int64_t rpt = rowsPerThread(), cpt = colsPerThread();
  Value in = pool.getInput();
  int64_t kh = pool.getKernel()[0], kw = pool.getKernel()[1];
  int64_t sy = pool.getStrides()[0], sx = pool.getStrides()[1];
  ArrayRef<int64_t> pad = pool.getPadding();
  bool isMax = pool.getKind() == PoolKind::max;
  int64_t channels = plan.values.find(in)->second.channels;
  std::array<int64_t, 4> d = dims(in);
  int64_t inH = d[2], inW = d[3];
  Type et = elementType(pool.getResult());
  // avg: the number of window positions inside the image (padding is not
  // counted), from the window's first input column (per column e of the
  // strip) and rows.
  SmallVector<Value> colCount(cpt);
  if (!isMax)
    for (int64_t e = 0; e < cpt; ++e) {
      Value x0 = add(mul(add(add(tileX, stripX), e), sx), -pad[2]);
      Value lo = arith::MaxSIOp::create(b, loc, x0, c(0));
      Value x1 = add(x0, kw);
      Value hi = arith::MinSIOp::create(b, loc, x1, c(inW));
      colCount[e] = arith::SubIOp::create(b, loc, hi, lo);
    }
  // max (NaN-propagating for floats) or sum: associative, so a window may
  // be combined row by row (getStencilPoolCost says when that pays).
  auto combine = [&](Value &acc, Value x) {
    if (!acc)
      acc = x;
    else if (isMax && !llvm::isa<FloatType>(x.getType()))
      acc = arith::MaxSIOp::create(b, loc, acc, x);
    else if (isMax)
      acc = arith::MaximumFOp::create(b, loc, acc, x);
    else
      acc = arith::AddFOp::create(b, loc, acc, x);
  };
  bool separable = getStencilPoolCost(pool, rpt).second;
  DenseMap<std::tuple<int64_t, int64_t, int64_t>, Value> rows;
  // Input column of window column kx for strip column e.
  auto column = [&](int64_t e, int64_t kx) { return e * sx + kx - pad[2]; };
  auto rowCombine = [&](int64_t k, int64_t dy, int64_t e) {
    Value &row = rows[{k, dy, e}];
    if (!row)
      for (int64_t kx = 0; kx < kw; ++kx)
        combine(row, sharedLoad(in, k, dy, column(e, kx)));
    return row;
  };
  SmallVector<Value> out(rpt * cpt * channels);
  for (int64_t r = 0; r < rpt; ++r) {
    Value rowCells;
    if (!isMax) {
      Value y0 = add(mul(add(add(tileY, stripY), r), sy), -pad[0]);
      Value lo = arith::MaxSIOp::create(b, loc, y0, c(0));
      Value y1 = add(y0, kh);
      Value hi = arith::MinSIOp::create(b, loc, y1, c(inH));
      rowCells = arith::SubIOp::create(b, loc, hi, lo);
    }
    for (int64_t e = 0; e < cpt; ++e) {
      Value count;
      if (!isMax) {
        Value cells = arith::MulIOp::create(b, loc, rowCells, colCount[e]);
        Value asInt = arith::IndexCastOp::create(b, loc, b.getI32Type(), cells);
        count = arith::SIToFPOp::create(b, loc, b.getF32Type(), asInt);
      }
      for (int64_t k = 0; k < channels; ++k) {
        Value acc;
        for (int64_t ky = 0; ky < kh; ++ky) {
          if (separable) {
            // The window's row ky, combined once per input row (rowCombine).
            combine(acc, rowCombine(k, r * sy - pad[0] + ky, e));
            continue;
          }
          for (int64_t kx = 0; kx < kw; ++kx)
            combine(acc,
                    sharedLoad(in, k, r * sy - pad[0] + ky, column(e, kx)));
        }
        if (!isMax)
          acc = arith::DivFOp::create(b, loc, acc, count);
        out[(r * cpt + e) * channels + k] =
            kgraph::detail::roundToType(b, loc, acc, et);
      }
    }
  }
  return out;
}

FailureOr<SmallVector<Value>> StencilEmitter::evaluate(Value v, bool compute) {
  if (!compute)
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
  int64_t rpt = rowsPerThread(), cpt = colsPerThread();
  int64_t channels = channelsOf(v);
  SmallVector<Value> out;
  auto planned = plan.values.find(v);
  bool materialized =
      planned != plan.values.end() && planned->second.materialized;
  if (materialized && !compute) {
    for (int64_t r = 0; r < rpt; ++r)
      for (int64_t e = 0; e < cpt; ++e)
        for (int64_t k = 0; k < channels; ++k)
          out.push_back(sharedLoad(v, k, r, e));
  } else if (llvm::isa<BlockArgument>(v)) {
    // A group input read pointwise (possibly broadcast): from global memory,
    // at clamped coordinates (positions outside the image are never
    // stored); a strip row at once where the buffer has vector rows (the
    // strip's first column is a multiple of V).
    Value buffer = kernelArg(v);
    auto memrefType = llvm::cast<MemRefType>(buffer.getType());
    bool vectors = hasVectorRows(memrefType, plan.w);
    Value x0 = add(tileX, stripX);
    out.resize(lanes() * channels);
    for (int64_t r = 0; r < rpt; ++r) {
      Value y = add(add(tileY, stripY), r);
      for (int64_t k = 0; k < channels; ++k) {
        Value chIdx = add(channelBase, k);
        Value row =
            vectors ? loadRowVector(buffer, image, chIdx, y, x0, plan.h, plan.w)
                    : Value();
        for (int64_t e = 0; e < cpt; ++e) {
          Value loaded = row ? Value(vector::ExtractOp::create(b, loc, row, e))
                             : Value(memref::LoadOp::create(
                                   b, loc, buffer,
                                   bufferIndices(memrefType, image, chIdx,
                                                 clampTo(y, plan.h),
                                                 clampTo(add(x0, e), plan.w))));
          out[(r * cpt + e) * channels + k] =
              kgraph::detail::toComputeType(b, loc, loaded, elementType(v));
        }
      }
    }
  } else {
    Operation *op = v.getDefiningOp();
    if (auto cst = llvm::dyn_cast<arith::ConstantOp>(op)) {
      FailureOr<Value> scalar = kgraph::detail::emitSplatConstant(b, loc, cst);
      if (failed(scalar))
        return failure();
      out.assign(lanes() * channels, *scalar);
    } else if (auto conv = llvm::dyn_cast<Conv2dOp>(op)) {
      FailureOr<SmallVector<Value>> r = evaluateConv(conv);
      if (failed(r))
        return failure();
      out = *r;
    } else if (auto pool = llvm::dyn_cast<Pool2dOp>(op)) {
      FailureOr<SmallVector<Value>> r = evaluatePool(pool);
      if (failed(r))
        return failure();
      out = *r;
    } else {
      SmallVector<SmallVector<Value>> operands;
      SmallVector<int64_t> operandChannels;
      for (Value operand : op->getOperands()) {
        FailureOr<SmallVector<Value>> l = evaluate(operand);
        if (failed(l))
          return failure();
        operands.push_back(*l);
        operandChannels.push_back(channelsOf(operand));
      }
      Type et = elementType(v);
      // A thread's values of `v` are [lanes][channels]; each operand's are
      // [lanes][its channels], broadcast along a single channel.
      int64_t n = lanes();
      SmallVector<AccessMap, 2> operandMaps;
      for (int64_t oc : operandChannels)
        operandMaps.push_back(AccessMap::broadcast({n, oc}, {n, channels}));
      for (int64_t r = 0; r < n; ++r)
        for (int64_t k = 0; k < channels; ++k) {
          SmallVector<Value> scalars;
          for (auto [vals, map] : llvm::zip(operands, operandMaps)) {
            int64_t idx = map.getLinearIndex({r, k});
            // Splat constants are expanded to one value per (row, channel).
            scalars.push_back(vals[std::min<int64_t>(idx, vals.size() - 1)]);
          }
          FailureOr<Value> res = kgraph::detail::emitScalarOp(b, loc, op, scalars);
          if (failed(res))
            return failure();
          out.push_back(kgraph::detail::roundToType(b, loc, *res, et));
        }
    }
  }
  if (!compute)
    memo[v] = out;
  return out;
}

LogicalResult StencilEmitter::emit() {
  MLIRContext *ctx = b.getContext();
  // Thread and block coordinates.
  Value tx = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value ty = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::y);
  tid = add(mul(ty, config.getBlockX()), tx);
  Value bx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value bz;
  if (plan.foldsZIntoX()) {
    // Images x channel blocks beyond the grid's z limit ride along x.
    bz = arith::DivUIOp::create(b, loc, bx, c(plan.gridX));
    bx = arith::RemUIOp::create(b, loc, bx, c(plan.gridX));
  }
  tileX = mul(bx, config.getTileW());
  tileY = mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y),
              config.getTileH());
  if (!bz)
    bz = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  if (plan.numChannelBlocks > 1) {
    image = arith::DivUIOp::create(b, loc, bz, c(plan.numChannelBlocks));
    channelBase = mul(arith::RemUIOp::create(b, loc, bz,
                                             c(plan.numChannelBlocks)),
                      plan.channelBlock);
  } else {
    image = bz;
    channelBase = c(0);
  }

  // Shared memory: one [channels][rows][cols] array per materialized value
  // in its compute type (f32, or i32 for integers), at the plan's offsets.
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value smem;
  if (plan.sharedMemoryBytes > 0)
    smem = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                        workgroup));
  for (auto &[v, sv] : plan.values) {
    if (!sv.materialized)
      continue;
    auto type = MemRefType::get({sv.channels, sv.rows, sv.cols},
                                computeType(v), AffineMap(), workgroup);
    shared[v] = memref::ViewOp::create(b, loc, type, smem, c(sv.sharedOffset),
                                       ValueRange{});
  }

  // Filter taps of group inputs: loaded once per block into registers while
  // there are few of them (the rest are loaded where used).
  int64_t totalTaps = 0;
  for (Operation &op : body.without_terminator())
    if (auto conv = llvm::dyn_cast<Conv2dOp>(op))
      if (llvm::isa<BlockArgument>(conv.getFilter()))
        totalTaps += conv.getFilter().getType().getNumElements();
  if (totalTaps <= 256) {
    for (Operation &op : body.without_terminator()) {
      auto conv = llvm::dyn_cast<Conv2dOp>(op);
      if (!conv || !llvm::isa<BlockArgument>(conv.getFilter()))
        continue;
      ArrayRef<int64_t> s = conv.getFilter().getType().getShape();
      bool nhwc = conv.getLayout() == Layout::nhwc;
      for (int64_t f = 0; f < s[0]; ++f)
        for (int64_t ch = 0; ch < (nhwc ? s[3] : s[1]); ++ch)
          for (int64_t ky = 0; ky < (nhwc ? s[1] : s[2]); ++ky)
            for (int64_t kx = 0; kx < (nhwc ? s[2] : s[3]); ++kx) {
              Value w = weight(conv, f, ch, ky, kx);
              hoistedWeights[std::make_tuple(conv.getOperation(), f, ch, ky,
                                             kx)] = w;
            }
    }
  }

  bool staged = false;
  for (auto &[v, sv] : plan.values)
    if (sv.materialized && llvm::isa<BlockArgument>(v)) {
      stageInput(v, sv);
      staged = true;
    }
  if (staged)
    gpu::BarrierOp::create(b, loc);
  for (auto &[v, sv] : plan.values) {
    if (!sv.materialized || llvm::isa<BlockArgument>(v))
      continue;
    if (failed(computeMaterialized(v, sv)))
      return failure();
    gpu::BarrierOp::create(b, loc);
  }
  if (failed(storeResults()))
    return failure();
  gpu::ReturnOp::create(b, loc);
  return success();
}

LogicalResult kgraph::emitStencilKernel(FusedOp group, StencilConfigAttr config,
                                        gpu::GPUFuncOp kernel) {
  if (failed(checkStencilGroup(group)))
    return failure();
  StencilPlan plan = planStencilGroup(group, config);
  OpBuilder b(kernel.getContext());
  b.setInsertionPointToStart(&kernel.getBody().front());
  StencilEmitter emitter(b, group.getLoc(), group, config, plan, kernel);
  return emitter.emit();
}
