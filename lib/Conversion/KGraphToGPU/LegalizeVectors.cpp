//===- LegalizeVectors.cpp - n-D vector shape ops to 1-D row moves --------===//

#include "kgraph/Conversion/Passes.h"

#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHLEGALIZEVECTORS
#include "kgraph/Conversion/Passes.h.inc"
} // namespace kgraph

using namespace mlir;

void kgraph::populateLegalizeVectorsPatterns(RewritePatternSet &patterns) {
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  vector::populateVectorBitCastLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::EltWise);
  vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
}

namespace {
struct LegalizeVectorsPass
    : public kgraph::impl::KGraphLegalizeVectorsBase<LegalizeVectorsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    kgraph::populateLegalizeVectorsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
