//===- SMTargets.h - the table of NVIDIA SM targets kgraph knows -*- C++ -*-===//
//
// The one place that describes GPU targets. Every pass that needs a target
// fact (SM count, shared memory, registers, tensor-core shapes, PTX version)
// asks this table; nothing else in kgraph hard-codes an SM.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_TARGET_SMTARGETS_H
#define KGRAPH_TARGET_SMTARGETS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace kgraph {

/// Operand type of a tensor-core instruction.
enum class MmaOperandType { F16, BF16, TF32, I8, F8E4M3 };

/// One tensor-core instruction shape (`mma.sync.m16n8k16` is {16, 8, 16}).
/// `warpgroup` marks Hopper's asynchronous wgmma (N is the largest allowed).
struct MmaShape {
  MmaOperandType operandType;
  unsigned m, n, k;
  bool warpgroup = false;
};

/// Facts about one SM target, for the reference part named in `part`.
struct SMTarget {
  llvm::StringRef name;          ///< "sm_80", "sm_90a", ...
  unsigned computeCapability;    ///< 80 for sm_80 and its variants
  bool archSpecific;             ///< the "a" targets (sm_90a): no forward compat
  llvm::StringRef part;          ///< reference part the SM count is taken from
  unsigned numSMs;               ///< multiprocessors of the reference part
  unsigned sharedMemPerBlock;    ///< opt-in maximum per block, bytes
  unsigned sharedMemPerSM;       ///< bytes
  unsigned registersPerSM;       ///< 32-bit registers
  unsigned maxRegistersPerThread;
  unsigned maxThreadsPerBlock;
  unsigned maxThreadsPerSM;
  unsigned maxBlocksPerSM;
  unsigned minPtxVersion;        ///< e.g. 70 for PTX ISA 7.0
  bool hasCpAsync;               ///< cp.async (sm_80+)
  bool hasLdmatrix;              ///< ldmatrix (sm_75+)
  bool hasTma;                   ///< cp.async.bulk.tensor (sm_90+)
  bool hasWgmma;                 ///< wgmma.mma_async (sm_90a)
  llvm::ArrayRef<MmaShape> mmaShapes;
  // Per-SM, per-clock throughputs (the tiling model's cost estimates).
  unsigned f32LanesPerSM;        ///< SIMT fp32 fma lanes
  unsigned mmaF16MacsPerClock;   ///< dense mma.sync f16/bf16 multiply-adds
                                 ///< (tf32 half, i8 twice)
  unsigned wgmmaF16MacsPerClock; ///< the same for wgmma; 0 without wgmma
  unsigned l2BytesPerClock;      ///< L2 bandwidth available to one SM
  unsigned sharedBytesPerClock;  ///< shared-memory bandwidth of one SM
  // The reference part's clock and memory, which turn the models' cycles
  // and bytes into the microseconds of --list-configs.
  unsigned clockMHz;             ///< boost SM clock
  unsigned dramGBps;             ///< device-memory bandwidth, GB/s

  /// `+ptxNN` for NVVM/LLVM target features.
  std::string ptxFeature() const;
  /// Microseconds `cycles` SM clock cycles take.
  double cyclesToMicroseconds(double cycles) const {
    return cycles / double(clockMHz);
  }
  /// Microseconds moving `bytes` through device memory takes at the
  /// part's bandwidth.
  double dramMicroseconds(double bytes) const {
    return bytes / (double(dramGBps) * 1e3);
  }
  /// Whether the target has a tensor-core instruction on `type` operands:
  /// a warpgroup (wgmma) shape when `warpgroup`, else a warp (mma.sync) one.
  bool hasMmaOperand(MmaOperandType type, bool warpgroup) const;
  /// Blocks of `threadsPerBlock` threads that fit on one SM by thread and
  /// block limits alone (registers and shared memory not counted).
  unsigned blocksPerSMByThreads(unsigned threadsPerBlock) const;
};

/// Every known target, in ascending order.
llvm::ArrayRef<SMTarget> getSMTargets();

/// The target named `name`, or nullptr.
const SMTarget *lookupSMTarget(llvm::StringRef name);

/// "sm_70, sm_75, ..." for diagnostics.
std::string getKnownSMTargetNames();

} // namespace kgraph

#endif // KGRAPH_TARGET_SMTARGETS_H
