// The ResNet-50 3x3 layer (64 -> 64 channels, 56x56, padding 1, batch 64)
// in f16 NHWC, compiled as an implicit GEMM for sm_80 and sm_90a: the PTX
// assembles and does not spill; on sm_80 cp.async (zero-filled at the
// padding), ldmatrix and mma.sync; on sm_90a 256x64x64 wgmma with 8 warps
// (1.4x faster than mma.sync on the H200, session 9) fed by TMA: im2col-mode
// tensor copies for the input, tiled copies for the filter, completed on
// mbarriers (the model's pick since session 13 dropped the lone-block
// penalty for TMA conv blocks).
// REQUIRES: ptxas
// RUN: kgraph-opt --tile=sm_80 %s -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=PTX80 < %t.sm80.ptx
// RUN: kgraph-opt --tile=sm_90a %s -o %t.sm90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=PTX90 < %t.sm90a.ptx

// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// PTXAS: , 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: bytes spill

// PTX80-DAG: cp.async.cg.shared.global
// PTX80-DAG: cp.async.commit_group
// PTX80-DAG: cp.async.wait_group
// PTX80-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX80-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX90-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
// PTX90-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX90-DAG: mbarrier.try_wait.parity.shared.b64
// PTX90-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// PTX90-NOT: {{(mma.sync|cp.async.cg)}}

func.func @main(%x: tensor<64x56x56x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<64x56x56x64xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<64x56x56x64xf16>, tensor<64x3x3x64xf16> -> tensor<64x56x56x64xf16>
  return %0 : tensor<64x56x56x64xf16>
}
