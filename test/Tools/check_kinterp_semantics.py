#!/usr/bin/env python3
"""Checks of the kernel interpreter itself (test/Tools/kinterp) on small
hand-written kernels, independent of kgraph's emitters:

- warp instructions composed the way CUTLASS's SM80 GEMMs use them: A by
  ldmatrix.x4 (lane l addresses row l % 16, column 8 (l / 16)), B by
  ldmatrix.x2.trans (lane l addresses row l % 16), one mma.sync m16n8k16
  and the ISA's accumulator layout (row l/4 (+8), column 2 (l%4) (+1))
  must give A x B; the same with bf16 through nvvm.mma.sync on packed
  registers;
- shfl.sync as the NVVM lowering emits it: xor, down, up and idx with a
  width below 32 (out-of-range sources keep their own value);
- the failures it must report: a shared-memory race (a barrier removed),
  an out-of-bounds load, a barrier inside divergent control flow, an op it
  does not implement (named), a deadlock on an mbarrier.

  check_kinterp_semantics.py KGRAPH_OPT

Prints `ok <check>` per check; exit 1 on the first failure.
"""
import subprocess
import sys

import numpy as np

from kinterp.memory import KernelError, Unsupported
from kinterp.plan import Module, run_arrays

OPT = None


def generic(text):
    """`text` (custom assembly) in generic form, through kgraph-opt."""
    p = subprocess.run([OPT, "--mlir-print-op-generic", "-"], input=text, capture_output=True,
                       text=True)
    if p.returncode:
        raise SystemExit(f"kgraph-opt rejects a test kernel:\n{p.stderr}")
    return Module(p.stdout)


def kernel(body, args, workgroup=""):
    wg = f" workgroup({workgroup})" if workgroup else ""
    return (f"module attributes {{gpu.container_module}} {{\n  gpu.module @m {{\n"
            f"    gpu.func @k({args}){wg} kernel {{\n{body}\n      gpu.return\n    }}\n  }}\n}}\n")


MMA = """
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      // Stage A (16x16) and B (16x8) in shared memory, one element per step.
      scf.for %e = %tid to %c32 step %c32 {
        scf.for %i = %c0 to %c8 step %c1 {
          %flat = arith.addi %i, %c0 : index
          %lin = arith.muli %e, %c8 : index
          %x = arith.addi %lin, %i : index
          %r = arith.divui %x, %c16 : index
          %cc = arith.remui %x, %c16 : index
          %v = memref.load %a[%r, %cc] : memref<16x16xELEM>
          memref.store %v, %sa[%r, %cc] : memref<16x16xELEM, #gpu.address_space<workgroup>>
        }
        scf.for %i = %c0 to %c4 step %c1 {
          %lin = arith.muli %e, %c4 : index
          %x = arith.addi %lin, %i : index
          %r = arith.divui %x, %c8 : index
          %cc = arith.remui %x, %c8 : index
          %v = memref.load %b[%r, %cc] : memref<16x8xELEM>
          memref.store %v, %sb[%r, %cc] : memref<16x8xELEM, #gpu.address_space<workgroup>>
        }
      }
      gpu.barrier
      %row = arith.remui %tid, %c16 : index
      %q = arith.divui %tid, %c16 : index
      %col = arith.muli %q, %c8 : index
      %fa = nvgpu.ldmatrix %sa[%row, %col] {numTiles = 4 : i32, transpose = false}
          : memref<16x16xELEM, #gpu.address_space<workgroup>> -> vector<4x2xELEM>
      %fb = nvgpu.ldmatrix %sb[%row, %c0] {numTiles = 2 : i32, transpose = true}
          : memref<16x8xELEM, #gpu.address_space<workgroup>> -> vector<2x2xELEM>
      %zero = arith.constant dense<0.0> : vector<2x2xf32>
MMAOP
      %g = arith.divui %tid, %c4 : index
      %t = arith.remui %tid, %c4 : index
      %c0col = arith.muli %t, %c2 : index
      %c1col = arith.addi %c0col, %c1 : index
      %g8 = arith.addi %g, %c8 : index
      %d00 = vector.extract %d[0, 0] : f32 from vector<2x2xf32>
      %d01 = vector.extract %d[0, 1] : f32 from vector<2x2xf32>
      %d10 = vector.extract %d[1, 0] : f32 from vector<2x2xf32>
      %d11 = vector.extract %d[1, 1] : f32 from vector<2x2xf32>
      memref.store %d00, %out[%g, %c0col] : memref<16x8xf32>
      memref.store %d01, %out[%g, %c1col] : memref<16x8xf32>
      memref.store %d10, %out[%g8, %c0col] : memref<16x8xf32>
      memref.store %d11, %out[%g8, %c1col] : memref<16x8xf32>"""

NVGPU_MMA = """      %d = nvgpu.mma.sync(%fa, %fb, %zero) {mmaShape = [16, 8, 16]}
          : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>"""

NVVM_MMA = """      %a0v = vector.extract %fa[0] : vector<2xbf16> from vector<4x2xbf16>
      %a1v = vector.extract %fa[1] : vector<2xbf16> from vector<4x2xbf16>
      %a2v = vector.extract %fa[2] : vector<2xbf16> from vector<4x2xbf16>
      %a3v = vector.extract %fa[3] : vector<2xbf16> from vector<4x2xbf16>
      %b0v = vector.extract %fb[0] : vector<2xbf16> from vector<2x2xbf16>
      %b1v = vector.extract %fb[1] : vector<2xbf16> from vector<2x2xbf16>
      %a0w = vector.bitcast %a0v : vector<2xbf16> to vector<1xi32>
      %a1w = vector.bitcast %a1v : vector<2xbf16> to vector<1xi32>
      %a2w = vector.bitcast %a2v : vector<2xbf16> to vector<1xi32>
      %a3w = vector.bitcast %a3v : vector<2xbf16> to vector<1xi32>
      %b0w = vector.bitcast %b0v : vector<2xbf16> to vector<1xi32>
      %b1w = vector.bitcast %b1v : vector<2xbf16> to vector<1xi32>
      %a0 = vector.extract %a0w[0] : i32 from vector<1xi32>
      %a1 = vector.extract %a1w[0] : i32 from vector<1xi32>
      %a2 = vector.extract %a2w[0] : i32 from vector<1xi32>
      %a3 = vector.extract %a3w[0] : i32 from vector<1xi32>
      %b0 = vector.extract %b0w[0] : i32 from vector<1xi32>
      %b1 = vector.extract %b1w[0] : i32 from vector<1xi32>
      %zf = arith.constant 0.0 : f32
      %s = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%zf, %zf, %zf, %zf]
          {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
           multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>,
           shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %s0 = llvm.extractvalue %s[0] : !llvm.struct<(f32, f32, f32, f32)>
      %s1 = llvm.extractvalue %s[1] : !llvm.struct<(f32, f32, f32, f32)>
      %s2 = llvm.extractvalue %s[2] : !llvm.struct<(f32, f32, f32, f32)>
      %s3 = llvm.extractvalue %s[3] : !llvm.struct<(f32, f32, f32, f32)>
      %d = vector.from_elements %s0, %s1, %s2, %s3 : vector<2x2xf32>"""


def check_mma(elem):
    body = MMA.replace("MMAOP", NVGPU_MMA if elem == "f16" else NVVM_MMA).replace("ELEM", elem)
    args = f"%a: memref<16x16x{elem}>, %b: memref<16x8x{elem}>, %out: memref<16x8xf32>"
    wg = (f"%sa: memref<16x16x{elem}, #gpu.address_space<workgroup>>, "
          f"%sb: memref<16x8x{elem}, #gpu.address_space<workgroup>>")
    m = generic(kernel(body, args, wg))
    rng = np.random.default_rng(1)
    a = rng.integers(-4, 5, (16, 16)).astype(np.float32)
    b = rng.integers(-4, 5, (16, 8)).astype(np.float32)
    if elem == "f16":
        sa, sb = a.astype(np.float16), b.astype(np.float16)
    else:   # small integers are exact in bf16: the top half of the f32 bits
        sa = (a.view(np.uint32) >> 16).astype(np.uint16)
        sb = (b.view(np.uint32) >> 16).astype(np.uint16)
    out = np.full((16, 8), np.nan, np.float32)
    written = run_arrays(m, "k", [sa, sb, out], (1, 1, 1), (32, 1, 1))
    assert written[2].all(), "mma: some outputs not written"
    assert np.array_equal(out, a @ b), f"mma {elem}: got\n{out}\nexpected\n{a @ b}"


def check_shuffles():
    body = """
      %tid = gpu.thread_id x
      %lane = arith.index_cast %tid : index to i32
      %v = arith.sitofp %lane : i32 to f32
      %c3 = arith.constant 3 : i32
      %c5 = arith.constant 5 : i32
      %c16 = arith.constant 16 : i32
      %c32 = arith.constant 32 : i32
      %x, %xv = gpu.shuffle xor %v, %c5, %c32 : f32
      %d, %dv = gpu.shuffle down %v, %c3, %c32 : f32
      %u, %uv = gpu.shuffle up %v, %c3, %c32 : f32
      %i, %iv = gpu.shuffle idx %v, %c5, %c32 : f32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3i = arith.constant 3 : index
      memref.store %x, %out[%c0, %tid] : memref<4x32xf32>
      memref.store %d, %out[%c1, %tid] : memref<4x32xf32>
      memref.store %u, %out[%c2, %tid] : memref<4x32xf32>
      memref.store %i, %out[%c3i, %tid] : memref<4x32xf32>"""
    m = generic(kernel(body, "%out: memref<4x32xf32>"))
    out = np.zeros((4, 32), np.float32)
    run_arrays(m, "k", [out], (1, 1, 1), (32, 1, 1))
    lane = np.arange(32)
    # PTX shfl.sync: out-of-range sources give the lane its own value.
    want = np.stack([lane ^ 5, np.where(lane + 3 <= 31, lane + 3, lane),
                     np.where(lane - 3 >= 0, lane - 3, lane), np.full(32, 5)])
    assert np.array_equal(out, want), f"shuffles:\n{out}\nexpected\n{want}"


def expect_error(what, text, args, arrays, block=(64, 1, 1), exc=KernelError, words=()):
    m = generic(text)
    try:
        run_arrays(m, "k", arrays, (1, 1, 1), block)
    except exc as e:
        for w in words:
            assert w in str(e), f"{what}: the message lacks {w!r}: {e}"
        return
    raise AssertionError(f"{what}: no {exc.__name__} reported")


RACE = """
      %tid = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %c63 = arith.constant 63 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %s[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
BARRIER
      %o = arith.subi %c63, %tid : index
      %w = memref.load %s[%o] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %w, %out[%tid] : memref<64xf32>"""


def check_race():
    wg = "%s: memref<64xf32, #gpu.address_space<workgroup>>"
    ok = generic(kernel(RACE.replace("BARRIER", "      gpu.barrier"), "%out: memref<64xf32>", wg))
    out = np.zeros(64, np.float32)
    run_arrays(ok, "k", [out], (1, 1, 1), (64, 1, 1))
    assert (out == 1).all()
    expect_error("race", kernel(RACE.replace("BARRIER", ""), "%out: memref<64xf32>", wg),
                 None, [np.zeros(64, np.float32)], words=("race", "warp"))


def check_out_of_bounds():
    body = """
      %tid = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %j = arith.addi %tid, %c1 : index
      %v = memref.load %a[%j] : memref<64xf32>
      memref.store %v, %out[%tid] : memref<64xf32>"""
    expect_error("out of bounds", kernel(body, "%a: memref<64xf32>, %out: memref<64xf32>"),
                 None, [np.zeros(64, np.float32), np.zeros(64, np.float32)],
                 words=("out of bounds", "[64]"))


def check_divergent_barrier():
    body = """
      %tid = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %lt = arith.cmpi ult, %tid, %c16 : index
      scf.if %lt {
        gpu.barrier
      }"""
    expect_error("divergent barrier", kernel(body, "%out: memref<64xf32>"), None,
                 [np.zeros(64, np.float32)], words=("barrier",))


def check_unsupported():
    body = """
      %tid = gpu.thread_id x
      %v = memref.load %a[%tid] : memref<64xf32>
      %r = math.atan %v : f32
      memref.store %r, %a[%tid] : memref<64xf32>"""
    expect_error("unsupported op", kernel(body, "%a: memref<64xf32>"), None,
                 [np.zeros(64, np.float32)], exc=Unsupported, words=("math.atan",))


def check_deadlock():
    body = """
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i32
      %zero = arith.constant 0 : i32
      %base = memref.extract_aligned_pointer_as_index %s : memref<8xi8, #gpu.address_space<workgroup>> -> index
      %i = arith.index_castui %base : index to i64
      %p = llvm.inttoptr %i : i64 to !llvm.ptr<3>
      %tid = gpu.thread_id x
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        nvvm.mbarrier.init %p, %one : !llvm.ptr<3>, i32
      }
      gpu.barrier
      // Nobody arrives: the phase of parity 0 never completes.
      nvvm.mbarrier.try_wait.parity %p, %zero, %zero : !llvm.ptr<3>, i32, i32"""
    wg = "%s: memref<8xi8, #gpu.address_space<workgroup>>"
    expect_error("deadlock", kernel(body, "%out: memref<64xf32>", wg), None,
                 [np.zeros(64, np.float32)], words=("deadlock", "try_wait"))


CHECKS = [
    ("ldmatrix_mma_f16", lambda: check_mma("f16")),
    ("ldmatrix_mma_bf16_nvvm", lambda: check_mma("bf16")),
    ("shuffles", check_shuffles),
    ("race", check_race),
    ("out_of_bounds", check_out_of_bounds),
    ("divergent_barrier", check_divergent_barrier),
    ("unsupported_op", check_unsupported),
    ("mbarrier_deadlock", check_deadlock),
]


def main():
    global OPT
    OPT = sys.argv[1]
    failed = 0
    for name, fn in CHECKS:
        try:
            fn()
            print(f"ok   {name}", flush=True)
        except AssertionError as e:
            failed += 1
            print(f"FAIL {name}: {e}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
