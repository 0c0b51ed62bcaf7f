//===- Winograd.h - F(m x m, 3 x 3) transforms and shapes -------*- C++ -*-===//
//
// The transform matrices of the Winograd convolutions kgraph computes
// (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks"):
// F(2x2, 3x3) on the points 0, 1, -1, inf and F(4x4, 3x3) on 0, 1, -1, 2,
// -2, inf. One conv output tile is Y = A^T [(G g G^T) . (B^T d B)] A.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_WINOGRAD_H
#define KGRAPH_DIALECT_KGRAPH_IR_WINOGRAD_H

#include <cstdint>

namespace kgraph {

/// One F(m x m, 3 x 3): `alpha = m + 2` points; row-major B^T (alpha x
/// alpha), G (alpha x 3) and A^T (m x alpha).
struct WinogradTransform {
  int64_t m;
  int64_t alpha;
  const double *bt;
  const double *g;
  const double *at;

  double getBT(int64_t i, int64_t j) const { return bt[i * alpha + j]; }
  double getG(int64_t i, int64_t j) const { return g[i * 3 + j]; }
  double getAT(int64_t i, int64_t j) const { return at[i * alpha + j]; }
};

/// The transform of output tile `m` (2 or 4); null for any other.
const WinogradTransform *lookupWinogradTransform(int64_t m);

/// Output tiles of `m` pixels covering `size` pixels.
inline int64_t getWinogradTiles(int64_t size, int64_t m) {
  return (size + m - 1) / m;
}

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_IR_WINOGRAD_H
