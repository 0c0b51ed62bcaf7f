// The default f16 GEMM at 4096^3: PTX for sm_80 (mma.sync) and sm_90a
// (wgmma) that ptxas assembles without spills, with cp.async copies and, on
// sm_80, ldmatrix fragment loads and mma.sync; on sm_90a m64n256k16 wgmmas
// reading both operands through descriptors (tnspA 0: A is K-major; tnspB 1:
// B is N-major), 4 per k tile and slab, fenced, committed and waited with
// wait_group 1 in the loop and 0 before the epilogue.
// REQUIRES: ptxas
// RUN: kgraph-opt --tile=sm_80 %s -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=PTX < %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=PLAN --match-full-lines < %t.sm80.plan.json
// RUN: kgraph-opt --tile=sm_90a %s -o %t.sm90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=WGMMA < %t.sm90a.ptx
// RUN: FileCheck %s --check-prefix=PLAN90 --match-full-lines < %t.sm90a.plan.json

// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// PTXAS: , 0 bytes spill stores, 0 bytes spill loads
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
// PTX-DAG: st.shared.v2.b32
// PTX-DAG: ld.shared.v4.b32
// PTX-DAG: st.global.v4.b32

// The launch: 32 x 32 blocks of 128 threads and 4 stages of
// (128 x 40 + 32 x 136) f16 in dynamic shared memory.
// PLAN: "block": [
// PLAN-NEXT: 128,
// PLAN: "grid": [
// PLAN-NEXT: 32,
// PLAN-NEXT: 32,
// PLAN-NEXT: 1
// PLAN: "shared_bytes": 75776
// On sm_90a: a producer warpgroup loads the operand tiles with TMA
// (cp.async.bulk.tensor completing on mbarriers) while two consumer
// warpgroups run wgmma; setmaxnreg moves registers from the producer to the
// consumers. (The cp.async wgmma pipeline has its own pinned tests in
// matmul-wgmma-ptx.mlir.)
// WGMMA: .visible .entry main_k0(
// WGMMA: .maxntid 384, 1, 1{{$}}
// WGMMA-NOT: mma.sync
// WGMMA-NOT: ldmatrix
// WGMMA-NOT: cp.async.cg
// WGMMA-DAG: mbarrier.init.shared.b64
// WGMMA-DAG: setmaxnreg.dec.sync.aligned.u32
// WGMMA-DAG: setmaxnreg.inc.sync.aligned.u32
// WGMMA-DAG: mbarrier.try_wait.parity.shared.b64
// WGMMA-DAG: mbarrier.arrive.expect_tx.shared.b64
// WGMMA-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// WGMMA-DAG: mbarrier.arrive.shared.b64
// WGMMA-DAG: wgmma.fence.sync.aligned
// WGMMA-DAG: wgmma.commit_group.sync.aligned
// WGMMA-DAG: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// WGMMA-DAG: wgmma.wait_group.sync.aligned 0;
// WGMMA-DAG: bar.sync 1, 256;
// WGMMA-DAG: ld.shared.v4.b32
// WGMMA-DAG: st.global.v4.b32

// The sm_90a launch: the tensor maps of A and B as one argument, 512 blocks
// of 2 consumer warpgroups and the producer warpgroup on a linear grid
// (grouped rasterization), 4 stages of (256 x 64 + 64 x 128) f16 plus 1024
// bytes of alignment slack and 4 x 16 bytes of mbarriers.
// PLAN90: "kind": "tensor_maps",
// PLAN90: "block": [
// PLAN90-NEXT: 384,
// PLAN90: "grid": [
// PLAN90-NEXT: 512,
// PLAN90-NEXT: 1,
// PLAN90-NEXT: 1
// PLAN90: "shared_bytes": 197696
func.func @main(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf32> {
  %0 = kgraph.matmul %a, %b : tensor<4096x4096xf16>, tensor<4096x4096xf16> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}
