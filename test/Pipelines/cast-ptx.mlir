// kgraph.cast from a float to i32 truncates toward zero, saturates and
// takes NaN to 0: what PTX's cvt.rzi.s32.f32 does, so the kernel calls
// llvm.nvvm.f2i.rz (one instruction) instead of clamping and selecting
// around an fptosi. Narrower integers still clamp first (cvt.rzi.s8 would
// not give the i8 rule after the f32 compute type). Valid PTX for sm_75
// and sm_90a.
// REQUIRES: ptxas
// RUN: kgraph-opt --tile=sm_90a --emit=gpu %s | FileCheck %s --check-prefix=GPU
// RUN: kgraph-opt --tile=sm_90a %s -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: kgraph-opt --tile=sm_75 %s -o %t.75.ptx
// RUN: %ptxas -arch=sm_75 %t.75.ptx -o %t.75.cubin

// GPU-LABEL: gpu.func @main_k0
// GPU: llvm.call_intrinsic "llvm.nvvm.f2i.rz"({{.*}}) : (f32) -> i32
// GPU-LABEL: gpu.func @main_k1
// GPU-NOT: llvm.nvvm.f2i.rz
// GPU: arith.maximumf
// GPU: arith.fptosi

// PTX-LABEL: .entry main_k0
// PTX-NOT: max.NaN
// PTX: cvt.rzi.s32.f32
// PTX-NOT: selp
// PTX: st.global
// PTX-LABEL: .entry main_k1
func.func @main(%x: tensor<1000xf32>, %y: tensor<1000xf16>) -> (tensor<1000xi32>, tensor<1000xi8>) {
  %a = kgraph.cast %x : tensor<1000xf32> to tensor<1000xi32>
  %b = kgraph.cast %y : tensor<1000xf16> to tensor<1000xi8>
  return %a, %b : tensor<1000xi32>, tensor<1000xi8>
}
