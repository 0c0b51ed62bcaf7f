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
import re
import subprocess
import sys

import numpy as np

from kinterp.memory import KernelError, Unsupported
from kinterp.plan import Module, run_arrays, run_plan

OPT = None


def generic_text(text):
    """`text` (custom assembly) in generic form, through kgraph-opt."""
    p = subprocess.run([OPT, "--mlir-print-op-generic", "-"], input=text, capture_output=True,
                       text=True)
    if p.returncode:
        raise SystemExit(f"kgraph-opt rejects a test kernel:\n{p.stderr}")
    return p.stdout


def generic(text):
    """The Module of `text` (custom assembly)."""
    return Module(generic_text(text))


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


# ---- TMA im2col --------------------------------------------------------------

#: One thread inits the mbarrier, expects every load's bytes and issues the
#: loads; the block waits (parity 0), then copies shared memory out.
IM2COL = """
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %cn = arith.constant SBYTES : index
      %one = arith.constant 1 : i32
      %zero = arith.constant 0 : i32
      %tx = arith.constant SBYTES : i32
      %bb = memref.extract_aligned_pointer_as_index %b : memref<8xi8, #gpu.address_space<workgroup>> -> index
      %bi = arith.index_castui %bb : index to i64
      %bar = llvm.inttoptr %bi : i64 to !llvm.ptr<3>
      %sb = memref.extract_aligned_pointer_as_index %s : memref<SBYTESxi8, #gpu.address_space<workgroup>> -> index
      %mb = memref.extract_aligned_pointer_as_index %maps : memref<128xi8> -> index
      %mi = arith.index_castui %mb : index to i64
      %map = llvm.inttoptr %mi : i64 to !llvm.ptr
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
        nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32
LOADS
      }
      gpu.barrier
      nvvm.mbarrier.try_wait.parity %bar, %zero, %zero : !llvm.ptr<3>, i32, i32
      scf.for %i = %tid to %cn step %c32 {
        %v = memref.load %s[%i] : memref<SBYTESxi8, #gpu.address_space<workgroup>>
        memref.store %v, %out[%i] : memref<SBYTESxi8>
      }"""

#: One load (`@` is its number): destination %sb + OFF, coordinates
#: {C, W, H, N}, offsets {offW, offH} (offW an i16 constant, offH truncated
#: from i32).
IM2COL_LOAD = """
        %d@ = arith.constant OFF : index
        %da@ = arith.addi %sb, %d@ : index
        %di@ = arith.index_castui %da@ : index to i64
        %dp@ = llvm.inttoptr %di@ : i64 to !llvm.ptr<3>
        %dst@ = llvm.addrspacecast %dp@ : !llvm.ptr<3> to !llvm.ptr<7>
        %kc@ = arith.constant CC : i32
        %kw@ = arith.constant CW : i32
        %kh@ = arith.constant CH : i32
        %kn@ = arith.constant CN : i32
        %ow@ = arith.constant OW : i16
        %oh32@ = arith.constant OH : i32
        %oh@ = arith.trunci %oh32@ : i32 to i16
        nvvm.cp.async.bulk.tensor.shared.cluster.global %dst@, %map, %bar, LOADBOX : !llvm.ptr<7>, !llvm.ptr"""

IM2COL_BOX = "box[%kc@, %kw@, %kh@, %kn@] im2col[%ow@, %oh@] {mode = #nvvm.tma_load_mode<im2col>}"
TILE_BOX = "box[%kc@, %kw@, %kh@, %kn@]"


def im2col_kernel(loads, sbytes, box=IM2COL_BOX):
    """The kernel text of `loads`: (shared byte offset, coordinates
    [c, w, h, n], offsets [offW, offH]) each."""
    text = []
    for i, (off, (cc, cw, ch, cn), (ow, oh)) in enumerate(loads):
        one = IM2COL_LOAD.replace("LOADBOX", box)
        for key, v in (("OFF", off), ("CC", cc), ("CW", cw), ("CH", ch), ("CN", cn),
                       ("OW", ow), ("OH", oh)):
            one = one.replace(key, str(v))
        text.append(one.replace("@", str(i)))
    body = IM2COL.replace("LOADS", "".join(text).lstrip("\n")).replace("SBYTES", str(sbytes))
    args = f"%maps: memref<128xi8>, %out: memref<{sbytes}xi8>"
    wg = (f"%s: memref<{sbytes}xi8, #gpu.address_space<workgroup>>, "
          "%b: memref<8xi8, #gpu.address_space<workgroup>>")
    return kernel(body, args, wg)


def run_tma(module, tmap, x, sbytes):
    """Runs kernel k of `module` as a plan would: its tensor map `tmap` over
    the f16 input `x`, the shared bytes it copies out as an i8 output."""
    fplan = {"buffers": [
        {"id": 0, "kind": "input", "index": 0, "shape": list(x.shape), "dtype": "f16",
         "bytes": x.nbytes},
        {"id": 1, "kind": "output", "index": 0, "shape": [sbytes], "dtype": "i8",
         "bytes": sbytes}],
        "kernels": [{"name": "k", "grid": [1, 1, 1], "block": [32, 1, 1], "shared_bytes": 0,
                     "args": [{"kind": "tensor_maps", "maps": [tmap]},
                              {"kind": "buffer", "buffer": 1}]}]}
    outs, unwritten = run_plan(fplan, module, [x])
    assert not unwritten[0].any(), "im2col: some shared bytes not copied out"
    return outs[0].view(np.uint8)


def im2col_map(x, ksize, stride, pad, cpp, ppc, swizzle):
    """The plan's im2col map of NHWC `x` for a conv2d of `ksize` x `ksize`
    taps (dilation 1): the corners bound the base positions to the first
    tap of every output pixel."""
    n, h, w, c = x.shape
    oh, ow = ((h + 2 * pad - ksize) // stride + 1, (w + 2 * pad - ksize) // stride + 1)
    return {"buffer": 0, "dtype": "f16", "mode": "im2col", "dims": [c, w, h, n],
            "strides": [c * 2, w * c * 2, h * w * c * 2],
            "lower_corner": [-pad, -pad],
            "upper_corner": [(ow - 1) * stride + 1 - w - pad, (oh - 1) * stride + 1 - h - pad],
            "channels_per_pixel": cpp, "pixels_per_column": ppc,
            "element_strides": [1, stride, stride, 1], "swizzle": swizzle,
            "interleave": "none", "l2_promotion": "256B", "oob_fill": "zero"}, oh, ow


def im2col_reference(x, r, s, m0, c0, cpp, ppc, stride, pad, oh, ow):
    """Rows m0 .. m0 + ppc - 1 of the implicit GEMM's A for tap (r, s),
    channels c0 .. c0 + cpp - 1 (zero outside the input)."""
    n_, h_, w_, c_ = x.shape
    out = np.zeros((ppc, cpp), np.float16)
    for j in range(ppc):
        m = m0 + j
        n, y, z = m // (oh * ow), (m // ow) % oh, m % ow
        ih, iw = y * stride - pad + r, z * stride - pad + s
        if n < n_ and 0 <= ih < h_ and 0 <= iw < w_:
            ch = np.arange(c0, c0 + cpp)
            ok = ch < c_
            out[j, ok] = x[n, ih, iw, ch[ok]]
    return out


def check_im2col_case(x, stride, swizzle, taps, ppc=32, cpp=64, ksize=3, pad=1):
    """im2col loads of `taps` ((r, s, first output pixel m0, first channel
    c0) each) must land as the reference gather."""
    tmap, oh, ow = im2col_map(x, ksize, stride, pad, cpp, ppc, swizzle)
    row = ppc * cpp * 2
    loads = []
    for t, (r, s, m0, c0) in enumerate(taps):
        n, y, z = m0 // (oh * ow), (m0 // ow) % oh, m0 % ow
        loads.append((t * row, [c0, z * stride - pad, y * stride - pad, n], [s, r]))
    sbytes = row * len(taps)
    raw = run_tma(generic(im2col_kernel(loads, sbytes)), tmap, x, sbytes)
    for t, (r, s, m0, c0) in enumerate(taps):
        got = raw[t * row:(t + 1) * row]
        if swizzle == "128B":
            # The load's shared window starts 1024-byte aligned (the first
            # workgroup attribution is at 0x400; rows of 4 KiB), so the
            # 16-byte chunk of logical byte L is at L ^ ((L >> 7) & 7) << 4.
            lb = np.arange(row)
            got = got[lb ^ (((lb >> 7) & 7) << 4)]
        got = np.ascontiguousarray(got).view(np.float16).reshape(ppc, cpp)
        want = im2col_reference(x, r, s, m0, c0, cpp, ppc, stride, pad, oh, ow)
        assert np.array_equal(got, want), (
            f"im2col stride {stride} tap ({r}, {s}) from pixel {m0}, channel {c0}: pixels "
            f"{np.flatnonzero((got != want).any(axis=1)).tolist()} differ")


def expect_tma_error(what, text, tmap, x, sbytes, words, exc=KernelError):
    """Running `text` (custom assembly, or a Module) fails with `exc`
    naming the load's line and `words`."""
    try:
        run_tma(text if isinstance(text, Module) else generic(text), tmap, x, sbytes)
    except exc as e:
        assert re.search(r"\bline \d+: ", str(e)), f"{what}: the message names no line: {e}"
        for w in words:
            assert w in str(e), f"{what}: the message lacks {w!r}: {e}"
        return
    raise AssertionError(f"{what}: no {exc.__name__} reported")


def check_im2col():
    rng = np.random.default_rng(7)
    # N=2, H=5, W=7, C=64; 3x3, pad 1, stride 2: OH=3, OW=4, 24 pixels.
    # Columns of 32 pixels from pixels 0, 5 and 13 cross rows, the image
    # boundary (pixel 12) and run past the last image (pixel 24: zeros).
    x = rng.integers(-8, 9, (2, 5, 7, 64)).astype(np.float16)
    check_im2col_case(x, 2, "128B", [(0, 0, 0, 0), (1, 2, 5, 0), (2, 1, 13, 0)])
    # Stride 1 (OH=5, OW=7, 70 pixels), unswizzled, C=96: the load from
    # channel 64 reads 64..127, of which 96..127 are outside (zeros).
    x1 = rng.integers(-8, 9, (2, 5, 7, 96)).astype(np.float16)
    check_im2col_case(x1, 1, "none", [(1, 1, 0, 0), (0, 2, 30, 64), (2, 0, 60, 0)])

    # Misuses, each a KernelError naming the load's line; a mode the
    # interpreter does not implement is Unsupported.
    tmap, _, _ = im2col_map(x, 3, 2, 1, 64, 32, "128B")
    load = [(0, [0, -1, -1, 0], [0, 0])]
    tile = im2col_kernel(load, 4096, box=TILE_BOX)
    expect_tma_error("tile load through an im2col map", tile, tmap, x, 4096,
                     ("tile-mode TMA load through a tensor map of mode im2col",))
    tiled = {k: v for k, v in tmap.items()
             if k not in ("mode", "lower_corner", "upper_corner", "channels_per_pixel",
                          "pixels_per_column")}
    tiled.update(box=[64, 8, 4, 1], element_strides=[1, 1, 1, 1])
    expect_tma_error("im2col load through a tiled map", im2col_kernel(load, 4096), tiled, x,
                     4096, ("im2col-mode TMA load through a tensor map of mode tiled",))
    # The verifier rejects a wrong offset count: drop one from the generic
    # form instead.
    text = generic_text(im2col_kernel(load, 4096))
    bad = re.sub(r", %[\w#]+\) <\{isCTAOnly = false, mode = #nvvm.tma_load_mode<im2col>, "
                 r"operandSegmentSizes = array<i32: 1, 1, 4, 1, 2,",
                 ") <{isCTAOnly = false, mode = #nvvm.tma_load_mode<im2col>, "
                 "operandSegmentSizes = array<i32: 1, 1, 4, 1, 1,", text)
    bad = bad.replace("!llvm.ptr<3>, i16, i16) -> ()", "!llvm.ptr<3>, i16) -> ()")
    assert bad.count("i16) -> ()") == 1 and "1, 1, 4, 1, 1," in bad, \
        "im2col: the generic form of the load is not the expected one"
    expect_tma_error("one im2col offset for a rank-4 map", Module(bad), tmap, x, 4096,
                     ("1 im2col offsets for a rank-4 im2col map",))
    other = text.replace("tma_load_mode<im2col>", "tma_load_mode<im2col_w>")
    assert other != text
    expect_tma_error("im2col_w mode", Module(other), tmap, x, 4096,
                     ("TMA load mode #nvvm.tma_load_mode<im2col_w>",), exc=Unsupported)


CHECKS = [
    ("ldmatrix_mma_f16", lambda: check_mma("f16")),
    ("ldmatrix_mma_bf16_nvvm", lambda: check_mma("bf16")),
    ("shuffles", check_shuffles),
    ("race", check_race),
    ("out_of_bounds", check_out_of_bounds),
    ("divergent_barrier", check_divergent_barrier),
    ("unsupported_op", check_unsupported),
    ("mbarrier_deadlock", check_deadlock),
    ("im2col", check_im2col),
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
