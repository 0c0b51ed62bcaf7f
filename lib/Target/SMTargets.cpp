//===- SMTargets.cpp - the table of NVIDIA SM targets ---------------------===//
//
// Numbers are from NVIDIA's CUDA C++ Programming Guide (compute capability
// tables) and the PTX ISA (mma shapes; the PTX version is the lowest that has
// every instruction kgraph emits for the target: 6.5 for sm_75 because
// mma.sync.m16n8k8 arrived in 6.5, though sm_75 itself needs only 6.3).
// SM counts are those of the reference part named in each row.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Target/SMTargets.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace kgraph;

namespace {
using T = MmaOperandType;
// mma.sync shapes per generation.
const MmaShape kVoltaMma[] = {{T::F16, 8, 8, 4}};
const MmaShape kTuringMma[] = {{T::F16, 16, 8, 8}, {T::I8, 8, 8, 16}};
const MmaShape kAmpereMma[] = {{T::F16, 16, 8, 16}, {T::BF16, 16, 8, 16},
                               {T::TF32, 16, 8, 8}, {T::I8, 16, 8, 32}};
const MmaShape kAdaMma[] = {{T::F16, 16, 8, 16}, {T::BF16, 16, 8, 16},
                            {T::TF32, 16, 8, 8},  {T::I8, 16, 8, 32},
                            {T::F8E4M3, 16, 8, 32}};
const MmaShape kHopperMma[] = {{T::F16, 16, 8, 16}, {T::BF16, 16, 8, 16},
                               {T::TF32, 16, 8, 8}, {T::I8, 16, 8, 32}};
const MmaShape kHopperAMma[] = {
    {T::F16, 16, 8, 16},          {T::BF16, 16, 8, 16},
    {T::TF32, 16, 8, 8},          {T::I8, 16, 8, 32},
    {T::F16, 64, 256, 16, true},  {T::BF16, 64, 256, 16, true},
    {T::TF32, 64, 256, 8, true},  {T::I8, 64, 256, 32, true},
    {T::F8E4M3, 64, 256, 32, true}};

constexpr unsigned KiB = 1024;

// name, cc, arch-specific, part, SMs, smem/block (opt-in), smem/SM, regs/SM,
// regs/thread, threads/block, threads/SM, blocks/SM, min PTX, cp.async,
// ldmatrix, TMA, wgmma, mma shapes; then per-SM per-clock throughputs: fp32
// lanes, mma.sync and wgmma f16 multiply-adds, L2 and shared-memory bytes.
// mma.sync f16/bf16 runs at 1024 multiply-adds per clock on the full-rate
// tensor cores of sm_80 and sm_90 (A100: 312 TFLOP/s = 108 SMs x 1.41 GHz x
// 2 x 1024) and at 512 on the others (T4, A10, L40S with f32 accumulation);
// wgmma at twice mma.sync's rate. SIMT fp32: 64 lanes on sm_70/75/80, 128
// from sm_86 on. L2: 32 bytes per clock per SM (A100/H100 class); shared
// memory: 32 banks x 4 bytes. Last, the part's boost clock (MHz) and memory
// bandwidth (GB/s) from its datasheet: V100-SXM2 1530 / 900, T4 1590 / 320,
// A100-SXM4 (80 GB) 1410 / 2039, A10 1695 / 600, L40S 2520 / 864, H200-SXM
// 1980 / 4800.
const SMTarget kTargets[] = {
    {"sm_70", 70, false, "Tesla V100-SXM2", 80, 96 * KiB, 96 * KiB, 65536,
     255, 1024, 2048, 32, 60, false, false, false, false, kVoltaMma,
     64, 512, 0, 32, 128, 1530, 900},
    {"sm_75", 75, false, "Tesla T4", 40, 64 * KiB, 64 * KiB, 65536, 255, 1024,
     1024, 16, 65, false, true, false, false, kTuringMma,
     64, 512, 0, 32, 128, 1590, 320},
    {"sm_80", 80, false, "A100-SXM4", 108, 163 * KiB, 164 * KiB, 65536, 255,
     1024, 2048, 32, 70, true, true, false, false, kAmpereMma,
     64, 1024, 0, 32, 128, 1410, 2039},
    {"sm_86", 86, false, "A10", 72, 99 * KiB, 100 * KiB, 65536, 255, 1024,
     1536, 16, 71, true, true, false, false, kAmpereMma,
     128, 512, 0, 32, 128, 1695, 600},
    {"sm_89", 89, false, "L40S", 142, 99 * KiB, 100 * KiB, 65536, 255, 1024,
     1536, 24, 78, true, true, false, false, kAdaMma,
     128, 512, 0, 32, 128, 2520, 864},
    {"sm_90", 90, false, "H200-SXM", 132, 227 * KiB, 228 * KiB, 65536, 255,
     1024, 2048, 32, 78, true, true, true, false, kHopperMma,
     128, 1024, 0, 32, 128, 1980, 4800},
    {"sm_90a", 90, true, "H200-SXM", 132, 227 * KiB, 228 * KiB, 65536, 255,
     1024, 2048, 32, 80, true, true, true, true, kHopperAMma,
     128, 1024, 2048, 32, 128, 1980, 4800},
};
} // namespace

std::string SMTarget::ptxFeature() const {
  return "+ptx" + std::to_string(minPtxVersion);
}

bool SMTarget::hasMmaOperand(MmaOperandType type, bool warpgroup) const {
  return llvm::any_of(mmaShapes, [&](const MmaShape &s) {
    return s.operandType == type && s.warpgroup == warpgroup;
  });
}

unsigned SMTarget::blocksPerSMByThreads(unsigned threadsPerBlock) const {
  if (threadsPerBlock == 0)
    return 0;
  return std::min(maxBlocksPerSM, maxThreadsPerSM / threadsPerBlock);
}

llvm::ArrayRef<SMTarget> kgraph::getSMTargets() { return kTargets; }

const SMTarget *kgraph::lookupSMTarget(llvm::StringRef name) {
  for (const SMTarget &t : kTargets)
    if (t.name == name)
      return &t;
  return nullptr;
}

std::string kgraph::getKnownSMTargetNames() {
  return llvm::join(llvm::map_range(kTargets,
                                    [](const SMTarget &t) { return t.name; }),
                    ", ");
}
