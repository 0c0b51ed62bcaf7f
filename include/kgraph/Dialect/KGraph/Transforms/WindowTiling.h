//===- WindowTiling.h - the model of window kernels -------------*- C++ -*-===//
//
// A window group (docs/architecture.md, "Window kernels") is one
// channels-last kgraph.pool2d, or kgraph.conv2d with groups > 1 and few
// input channels per group (depthwise), with elementwise producers of its
// input and consumers of its result (isWindowOp, FusionRules.h). Its kernel
// gives each thread W consecutive output channels and walks strips of R
// consecutive output pixels of a row; every input column of a strip's
// window rows is one W-wide load of the input. This header
// is the family's one resource model: the problem, the legality check of a
// #kgraph.window_config, its launch and its estimate, shared by kgraph-tile
// and the emitter (WindowEmitter.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_WINDOWTILING_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_WINDOWTILING_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

namespace kgraph {

struct SMTarget;

/// Most window taps (KH * KW * input channels per group) a thread unrolls
/// per pixel; larger windows loop over their outer dims.
inline constexpr int64_t kMaxUnrolledWindowTaps = 64;

/// What the anchor of a window group computes per output element.
enum class WindowOpKind { MaxPool, AvgPool, Conv };

/// The shapes of a window group's anchor, channels-last.
struct WindowProblem {
  mlir::Operation *anchor = nullptr;
  WindowOpKind kind = WindowOpKind::MaxPool;
  int64_t n = 0, h = 0, w = 0, c = 0; ///< input [N, H, W, C]
  int64_t oh = 0, ow = 0, f = 0;      ///< output [N, OH, OW, F]
  int64_t kh = 1, kw = 1;             ///< window
  int64_t strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t padTop = 0, padLeft = 0;
  /// conv2d: input and output channels per group (pools: 1 and 1, each
  /// output channel reads its own input channel).
  int64_t groupIn = 1, groupOut = 1;

  int64_t getPixels() const { return n * oh * ow; }
  /// Multiply-adds (or comparisons) per output element.
  int64_t getTaps() const { return kh * kw * groupIn; }
  /// Strips of `strip` consecutive output pixels of a row: N * OH *
  /// ceil(OW / strip), what a kernel's threads walk.
  int64_t getStrips(int64_t strip) const {
    return n * oh * ((ow + strip - 1) / strip);
  }
  /// Input columns per window row that `strip` consecutive output pixels
  /// read: the distinct offsets r * stride_w + kw * dilation_w.
  int64_t getStripColumns(int64_t strip) const;
};

/// The anchor of `group` and its shapes, after checkWindowGroup.
mlir::FailureOr<WindowProblem> getWindowProblem(FusedOp group);

/// Checks `group` against the window-group contract (one window op, the
/// rest elementwise ops and splat constants, every yielded value of the
/// anchor result's shape); diagnoses the offending op otherwise.
mlir::LogicalResult checkWindowGroup(FusedOp group);

/// Largest vector width the group's operands allow: 16 bytes of its widest
/// element type, a power of two dividing the output channels.
int64_t getMaxWindowVectorWidth(FusedOp group, const WindowProblem &p);

/// Whether a thread loads its filter taps into registers once (a conv2d
/// whose taps are all unrolled and, times W, few enough) instead of once per
/// pixel. The emitter and the estimate ask this.
bool windowPreloadsFilter(const WindowProblem &p, int64_t vectorWidth);

/// The model's 32-bit registers per thread of a kernel with `vectorWidth`
/// lanes and `strip` pixels: accumulators, preloaded filter taps, one window
/// row's input columns and a fixed overhead.
int64_t estimateWindowRegisters(const WindowProblem &p, int64_t vectorWidth,
                                int64_t strip);

/// Grid and block of `config` for `p`.
KernelLaunch getWindowLaunch(WindowConfigAttr config, const WindowProblem &p);

/// Checks `config` fits `group` on `target`.
mlir::LogicalResult
verifyWindowConfig(FusedOp group, WindowConfigAttr config,
                   const SMTarget &target,
                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The model's time of `config`: the group's bytes at the part's memory
/// bandwidth or its instructions at the SMs' issue rate, whichever is
/// larger, stretched by idle threads and the last partial wave.
double estimateWindowMicroseconds(FusedOp group, WindowConfigAttr config,
                                  const SMTarget &target);

/// The default configuration first, then the other candidates (narrower
/// vectors, other block shapes and grid sizes).
llvm::SmallVector<WindowConfigAttr>
enumerateWindowConfigs(FusedOp group, const SMTarget &target);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_WINDOWTILING_H
