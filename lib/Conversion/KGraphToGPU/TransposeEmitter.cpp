//===- TransposeEmitter.cpp - tiled shared-memory transposes --------------===//
//
// A transpose group (one kgraph.transpose that moves the innermost dim, see
// TransposeTiling.h) becomes a kernel in which each block moves one
// `tile_out x tile_in` tile of every batch index it owns:
//
//   for z = blockIdx.z; z < batch; z += gridDim.z     (straight-line when
//                                                      the grid covers it)
//     load:  each thread loads its vectors of V consecutive input elements
//            (along `a`, the input's innermost dim) into registers, then
//            writes them to the shared tile smem[b][a] (rows padded);
//     barrier;
//     store: each thread gathers V consecutive output elements (along `b`)
//            from a column of the tile, then stores them as one vector.
//     barrier (only when the loop runs again).
//
// Every global access is a V-element vector at a multiple of V (V divides
// both extents, so every batch and row offset is a multiple of V). Edge
// tiles clamp their loads into the tensor (the rows and columns they read
// twice are never stored) and mask their stores, so any shape is correct.
// The data is moved in its storage type (i1 as bytes): nothing is computed.
//
//===----------------------------------------------------------------------===//

#include "LaneEvaluator.h"
#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/Transforms/TransposeTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

LogicalResult kgraph::emitTransposeKernel(FusedOp group,
                                          TransposeConfigAttr config,
                                          gpu::GPUFuncOp kernel) {
  TransposeOp op = getSoleTransposeOp(group);
  if (!op)
    return group.emitOpError("is not a single kgraph.transpose");
  FailureOr<TransposeLayout> maybeLayout = getTransposeLayout(op);
  if (failed(maybeLayout))
    return op.emitOpError("keeps its innermost dim in place: it is not a "
                          "tiled transpose");
  const TransposeLayout &l = *maybeLayout;

  Location loc = group.getLoc();
  MLIRContext *ctx = kernel.getContext();
  OpBuilder b(ctx);
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };

  Type storage = getStorageElementType(
      llvm::cast<ShapedType>(op.getInput().getType()).getElementType());
  Value in = flattenMemRef(b, loc, entry.getArgument(0));
  Value out = flattenMemRef(b, loc, entry.getArgument(1));

  int64_t tin = config.getTileIn(), tout = config.getTileOut();
  int64_t v = config.getVectorWidth(), block = config.getBlockSize();
  int64_t pad = config.getSmemPadding();
  auto smemType = MemRefType::get(
      {tout, tin + pad}, storage, MemRefLayoutAttrInterface{},
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  Value smem = kernel.addWorkgroupAttribution(smemType, loc);

  std::array<int64_t, 3> grid = getTransposeGrid(config, l);
  int64_t tilesB = llvm::divideCeil(l.extentB, tout);
  bool maskA = l.extentA % tin != 0, maskB = l.extentB % tout != 0;
  int64_t steps = tin * tout / v / block;
  auto align = llvm::MaybeAlign(
      v * std::max(1u, storage.getIntOrFloatBitWidth() / 8));
  VectorType vecType = VectorType::get({v}, storage);

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  // Tile origin: consecutive blocks take consecutive tiles along b (the
  // output's contiguous dim).
  Value a0 = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, bid, c(tilesB)), c(tin));
  Value b0 = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, bid, c(tilesB)), c(tout));

  // The body for batch index `z`.
  auto emitTile = [&](OpBuilder &nb, Value z, bool trailingBarrier) {
    auto k = [&](int64_t x) -> Value {
      return arith::ConstantIndexOp::create(nb, loc, x);
    };
    auto add = [&](Value x, Value y) -> Value {
      return arith::AddIOp::create(nb, loc, x, y);
    };
    auto mul = [&](Value x, int64_t y) -> Value {
      return y == 1 ? x : arith::MulIOp::create(nb, loc, x, k(y)).getResult();
    };
    // Batch offsets, decomposing z over the batch dims (output order).
    Value inBase = k(0), outBase = k(0);
    int64_t inner = l.batchSize;
    for (auto [i, d] : llvm::enumerate(l.batch)) {
      inner /= d.size;
      Value coord = z;
      if (inner != 1)
        coord = arith::DivUIOp::create(nb, loc, coord, k(inner));
      if (i != 0)
        coord = arith::RemUIOp::create(nb, loc, coord, k(d.size));
      inBase = add(inBase, mul(coord, d.inStride));
      outBase = add(outBase, mul(coord, d.outStride));
    }
    auto loadVector = [&](Value memref, Value index) -> SmallVector<Value> {
      if (v == 1)
        return {memref::LoadOp::create(nb, loc, memref, index)};
      Value vec = vector::LoadOp::create(nb, loc, vecType, memref, index,
                                         /*nontemporal=*/false, align);
      SmallVector<Value> lanes;
      for (int64_t j = 0; j < v; ++j)
        lanes.push_back(vector::ExtractOp::create(nb, loc, vec, j));
      return lanes;
    };

    // Load phase: vector s of thread t is tile row r = (t + s*block) / (tin/v)
    // (along b), columns from ((t + s*block) % (tin/v)) * v (along a).
    int64_t rowVectors = tin / v;
    SmallVector<std::pair<std::pair<Value, Value>, SmallVector<Value>>> loaded;
    for (int64_t s = 0; s < steps; ++s) {
      Value linear = s == 0 ? tid : add(tid, k(s * block));
      Value r = arith::DivUIOp::create(nb, loc, linear, k(rowVectors));
      Value col = mul(arith::RemUIOp::create(nb, loc, linear, k(rowVectors)), v);
      Value gb = add(b0, r), ga = add(a0, col);
      if (maskB)
        gb = arith::MinUIOp::create(nb, loc, gb, k(l.extentB - 1));
      if (maskA)
        ga = arith::MinUIOp::create(nb, loc, ga, k(l.extentA - v));
      Value index = add(add(inBase, mul(gb, l.inStrideB)), ga);
      loaded.push_back({{r, col}, loadVector(in, index)});
    }
    for (auto &[pos, lanes] : loaded)
      for (int64_t j = 0; j < v; ++j)
        memref::StoreOp::create(
            nb, loc, lanes[j], smem,
            ValueRange{pos.first, j == 0 ? pos.second : add(pos.second, k(j))});
    gpu::BarrierOp::create(nb, loc);

    // Store phase: vector s of thread t is output row r = (t + s*block) /
    // (tout/v) (along a), columns from ((t + s*block) % (tout/v)) * v.
    int64_t colVectors = tout / v;
    SmallVector<std::tuple<Value, Value, SmallVector<Value>>> gathered;
    for (int64_t s = 0; s < steps; ++s) {
      Value linear = s == 0 ? tid : add(tid, k(s * block));
      Value r = arith::DivUIOp::create(nb, loc, linear, k(colVectors));
      Value col = mul(arith::RemUIOp::create(nb, loc, linear, k(colVectors)), v);
      SmallVector<Value> lanes;
      for (int64_t j = 0; j < v; ++j)
        lanes.push_back(memref::LoadOp::create(
            nb, loc, smem, ValueRange{j == 0 ? col : add(col, k(j)), r}));
      gathered.emplace_back(r, col, std::move(lanes));
    }
    for (auto &[r, col, lanes] : gathered) {
      Value ga = add(a0, r), gb = add(b0, col);
      Value index = add(add(outBase, mul(ga, l.outStrideA)), gb);
      OpBuilder::InsertionGuard guardPoint(nb);
      if (maskA || maskB) {
        Value inside;
        auto both = [&](Value x) {
          inside = inside ? arith::AndIOp::create(nb, loc, inside, x).getResult()
                          : x;
        };
        if (maskA)
          both(arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, ga,
                                     k(l.extentA)));
        if (maskB)
          both(arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, gb,
                                     k(l.extentB)));
        auto guard = scf::IfOp::create(nb, loc, inside);
        nb.setInsertionPointToStart(guard.thenBlock());
      }
      if (v == 1) {
        memref::StoreOp::create(nb, loc, lanes[0], out, index);
      } else {
        Value vec = vector::FromElementsOp::create(nb, loc, vecType, lanes);
        vector::StoreOp::create(nb, loc, vec, out, index,
                                /*nontemporal=*/false, align);
      }
    }
    if (trailingBarrier)
      gpu::BarrierOp::create(nb, loc);
  };

  Value bz = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  if (l.batchSize <= grid[2]) {
    emitTile(b, bz, /*trailingBarrier=*/false);
  } else {
    // The tile is reused across iterations: its readers must be done first.
    auto loop = scf::ForOp::create(b, loc, bz, c(l.batchSize), c(grid[2]));
    OpBuilder nb = OpBuilder::atBlockBegin(loop.getBody());
    emitTile(nb, loop.getInductionVar(), /*trailingBarrier=*/true);
  }
  gpu::ReturnOp::create(b, loc);
  return success();
}
