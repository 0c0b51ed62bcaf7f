// The default f16 GEMM at 4096^3: PTX for sm_80 (mma.sync) and sm_90a
// (wgmma) that ptxas assembles without spills, with cp.async copies and, on
// sm_80, ldmatrix fragment loads and mma.sync; on sm_90a m64n128k16 wgmmas
// reading both operands through descriptors (tnspA 0: A is K-major; tnspB 1:
// B is N-major), 4 per k tile and slab, fenced, committed and waited with
// wait_group 1 in the loop and 0 before the epilogue.
// REQUIRES: ptxas
// RUN: kgraph-opt --tile=sm_80 %s -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=PTX < %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=PLAN < %t.sm80.plan.json
// RUN: kgraph-opt --tile=sm_90a %s -o %t.sm90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=WGMMA < %t.sm90a.ptx
// RUN: FileCheck %s --check-prefix=PLAN90 < %t.sm90a.plan.json

// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}

// PTX: .visible .entry main_k0(
// PTX: .shared .align 16 .b8 __dynamic_shmem__0
// PTX-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16
// PTX-DAG: cp.async.commit_group
// PTX-DAG: cp.async.wait_group
// PTX-DAG: bar.sync
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: st.global.v2.b32

// The launch: 32 x 32 blocks of 128 threads and 4 stages of
// (128 x 40 + 32 x 136) f16 in dynamic shared memory.
// PLAN: "block": [
// PLAN-NEXT: 128,
// PLAN: "grid": [
// PLAN-NEXT: 32,
// PLAN-NEXT: 32,
// PLAN-NEXT: 1
// PLAN: "shared_bytes": 75776
// WGMMA: .visible .entry main_k0(
// WGMMA-NOT: mma.sync
// WGMMA-NOT: ldmatrix
// WGMMA: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16
// WGMMA: wgmma.fence.sync.aligned
// WGMMA-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 1;
// WGMMA-NEXT: }
// WGMMA: wgmma.commit_group.sync.aligned
// WGMMA: wgmma.wait_group.sync.aligned 1
// (LLVM rotates the loop: the next tile's wait, proxy fence and barrier
// follow the wgmmas.)
// WGMMA: cp.async.wait_group
// WGMMA-NEXT: fence.proxy.async.shared::cta
// WGMMA-NEXT: bar.sync
// WGMMA: wgmma.wait_group.sync.aligned 0
// WGMMA: st.global.v2.b32

// The sm_90a launch: 512 blocks of 2 warpgroups on a linear grid (grouped
// rasterization), 4 stages of (256 x 64 + 64 x 128) f16 plus 1024 bytes of
// alignment slack.
// PLAN90: "block": [
// PLAN90-NEXT: 256,
// PLAN90: "grid": [
// PLAN90-NEXT: 512,
// PLAN90-NEXT: 1,
// PLAN90-NEXT: 1
// PLAN90: "shared_bytes": 197632
func.func @main(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf32> {
  %0 = kgraph.matmul %a, %b : tensor<4096x4096xf16>, tensor<4096x4096xf16> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}
