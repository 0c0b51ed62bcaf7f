#!/usr/bin/env python3
"""Mutation check of the code generator's C++ source: does the CPU suite
notice a broken emitter?

Each entry of MUTATIONS below plants one miscompile in the source of the
emitters (lib/Conversion/KGraphToGPU): a snippet of a file replaced by a
wrong one (a reduction's start value, a gather's lane order, a dropped or
misread bias, an activation before the bias add, an off-by-one row, a mask
one past the ragged edge, a broken swizzle, a wrong mbarrier parity or
pipeline stage, ...). The script copies the source tree to a scratch
directory, builds it there once, and then for each mutation in turn:
applies it, rebuilds `kgraph-opt` and `kgraph-translate`, runs the CPU
suite (the kernel-interpreter lit tests `kernels-interp*.test` first, then
the rest of lit) and reverts the file. Every mutation must make some test
fail; one that does not build is not a valid mutation (an error, not
"caught").

Run it before landing changes to the emitters (it takes a while: about a
full build, then a rebuild of one file and a suite run per mutation):

  /usr/bin/python3 test/Tools/mutate_codegen.py [-j N] [--keep] [--scratch DIR]
      [--interp-only] [MUTATION ...]
  /usr/bin/python3 test/Tools/mutate_codegen.py --list
  /usr/bin/python3 test/Tools/mutate_codegen.py --check-only [--source DIR]

The scratch copy holds the checkout's tracked and untracked (not ignored)
files as they are in the working tree, so uncommitted changes are tested
too; its build uses ccache with CCACHE_BASEDIR at a common parent of the
checkout and the scratch directory (or CCACHE_BASEDIR when set), so the
first build is mostly cache hits of the checkout's own build. --keep leaves
the scratch directory (default: kgraph-mutate-<checkout name> next to the
checkout) for the next run, which then syncs the changed files and rebuilds
only what they touch; the logs of the builds and lit runs are in
<scratch>-logs. Before the mutations the unmutated scratch build runs
the same tests (the baseline; --no-baseline skips it): a test that fails
there is not counted.

Prints `caught <name>: <test> (<its first failure>)`, `MISSED <name>` or
`INVALID <name>: <why>` per mutation with its time, the total time last;
exit 1 unless every mutation is caught.

--check-only (no build; kernels-mutate-codegen-table.test in lit) checks
that every mutation's original snippet occurs exactly once in its file,
so the table follows the code: when an emitter changes, update the entries
that name it.
"""
import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

Mutation = collections.namedtuple("Mutation", "name file original replacement behaviour")

D = "lib/Conversion/KGraphToGPU/"

MUTATIONS = [
    Mutation(
        "gather_reversed", D + "LaneEvaluator.cpp",
        "    gathered.indices.push_back(mapIndex(laneIndex(access, l), map));\n",
        "    gathered.indices.insert(gathered.indices.begin(),\n"
        "                            mapIndex(laneIndex(access, l), map));\n",
        "the lanes of a broadcast gather read their elements in reverse order"),
    Mutation(
        "max_start_zero", D + "ReduceEmitter.cpp",
        "value = b.getF32FloatAttr(isMax ? -std::numeric_limits<float>::infinity()\n"
        "                                    : 0.0f);\n",
        "value = b.getF32FloatAttr(isMax ? 0.0f\n"
        "                                    : 0.0f);\n",
        "a float max reduction starts at 0 instead of -inf"),
    Mutation(
        "sum_start_one", D + "ReduceEmitter.cpp",
        "value = b.getF32FloatAttr(isMax ? -std::numeric_limits<float>::infinity()\n"
        "                                    : 0.0f);\n",
        "value = b.getF32FloatAttr(isMax ? -std::numeric_limits<float>::infinity()\n"
        "                                    : 1.0f);\n",
        "a float sum (and mean) starts at 1 instead of 0"),
    Mutation(
        "bias_dropped", D + "MatmulEpilogue.cpp",
        "  } else {\n"
        "    SmallVector<SmallVector<Value>> operands;\n",
        "  } else {\n"
        "    // MUTATION: an add of a bias (a group input with fewer elements than\n"
        "    // the result, or a view of one) yields its other operand.\n"
        "    auto isBias = [&](Value x) {\n"
        "      Operation *def = x.getDefiningOp();\n"
        "      if (def && isAccessMapOp(def))\n"
        "        x = def->getOperand(0);\n"
        "      return llvm::isa<BlockArgument>(x) &&\n"
        "             llvm::cast<ShapedType>(x.getType()).getNumElements() <\n"
        "                 llvm::cast<ShapedType>(v.getType()).getNumElements();\n"
        "    };\n"
        "    if (op->getName().getStringRef() == \"kgraph.add\")\n"
        "      for (unsigned i = 0; i < 2; ++i)\n"
        "        if (isBias(op->getOperand(i))) {\n"
        "          FailureOr<SmallVector<Value>> other =\n"
        "              evaluateEpilogue(b, op->getOperand(1 - i), at);\n"
        "          if (failed(other))\n"
        "            return failure();\n"
        "          at.memo[v] = *other;\n"
        "          return *other;\n"
        "        }\n"
        "    SmallVector<SmallVector<Value>> operands;\n",
        "the GEMM epilogue drops the bias add"),
    Mutation(
        "bias_run_column", D + "MatmulEpilogue.cpp",
        "  if (map.isBroadcastAlong(channelDim)) {\n",
        "  if (map.isBroadcastAlong(channelDim) ||\n"
        "      argType.getNumElements() < outType.getNumElements()) {\n",
        "every lane of a GEMM epilogue run reads the bias of the run's first "
        "column (bias[col]), not of its own (bias[col + e])"),
    Mutation(
        "activation_before_bias", D + "MatmulEpilogue.cpp",
        "  } else {\n"
        "    SmallVector<SmallVector<Value>> operands;\n",
        "  } else {\n"
        "    // MUTATION: relu(x + y) computed as relu(x) + y.\n"
        "    Operation *addOp = op->getName().getStringRef() == \"kgraph.relu\"\n"
        "                           ? op->getOperand(0).getDefiningOp()\n"
        "                           : nullptr;\n"
        "    if (addOp && addOp->getName().getStringRef() == \"kgraph.add\") {\n"
        "      FailureOr<SmallVector<Value>> x =\n"
        "          evaluateEpilogue(b, addOp->getOperand(0), at);\n"
        "      FailureOr<SmallVector<Value>> y =\n"
        "          evaluateEpilogue(b, addOp->getOperand(1), at);\n"
        "      if (failed(x) || failed(y))\n"
        "        return failure();\n"
        "      FailureOr<SmallVector<Value>> fx =\n"
        "          emitScalarOpLanes(b, loc, op, {*x}, at.acc.size());\n"
        "      if (failed(fx))\n"
        "        return failure();\n"
        "      FailureOr<SmallVector<Value>> r =\n"
        "          emitScalarOpLanes(b, loc, addOp, {*fx, *y}, at.acc.size());\n"
        "      if (failed(r))\n"
        "        return failure();\n"
        "      at.memo[v] = *r;\n"
        "      return *r;\n"
        "    }\n"
        "    SmallVector<SmallVector<Value>> operands;\n",
        "epilogue order: the GEMM epilogue applies the relu before the add "
        "(bias or residual) that feeds it"),
    Mutation(
        "acc_row_off_by_one", D + "WarpMma.cpp",
        "    Value row = im.add(g, mi * 16 + h * 8);\n",
        "    Value row = im.add(g, mi * 16 + h * 9);\n",
        "index math: the second half of an mma.sync accumulator fragment "
        "(c2, c3) is stored one row too low (row g + 9 instead of g + 8)"),
    Mutation(
        "ragged_row_mask", D + "MatmulEpilogue.cpp",
        "      Value rowInside = m.ult(at.row, m.c(p.m));\n",
        "      Value rowInside = m.ult(at.row, m.c(p.m + 1));\n",
        "ragged edge: the GEMM epilogue's checked stores let the row one past "
        "the last through"),
    Mutation(
        "staged_run_overlap", D + "MatmulEpilogue.cpp",
        "      Value col = sm.mul(sm.rem(idx, perRow), vector);\n",
        "      Value col = sm.mul(sm.rem(idx, perRow), vector / 2);\n",
        "index math: the staged epilogue's read-back runs start half a run "
        "apart, so they overlap and the second half of each row is never "
        "stored"),
    Mutation(
        "staged_barrier_dropped", D + "MatmulEpilogue.cpp",
        "  epilogueBarrier(b);\n"
        "  // Read back row-major",
        "  // Read back row-major",
        "the staged epilogue reads its result tile back without the barrier "
        "after the fragment writes (other warps' rows may not be there yet)"),
    Mutation(
        "elementwise_tail_dropped", D + "ElementwiseEmitter.cpp",
        "  if (succeeded(status) && numElements % width != 0) {\n",
        "  if (succeeded(status) && numElements % width > width) {\n",
        "ragged edge: an elementwise kernel skips the elements past the last "
        "full vector"),
    Mutation(
        "swizzle_xor_rows", D + "Wgmma.cpp",
        "        arith::XOrIOp::create(im.b, im.loc, chunkInRow, im.rem(row, 8));\n",
        "        arith::XOrIOp::create(im.b, im.loc, chunkInRow, im.rem(row, 4));\n",
        "swizzle: cp.async staging for wgmma XORs the 16-byte chunk with row % 4 "
        "instead of the 128-byte swizzle's row % 8"),
    Mutation(
        "tma_parity_per_tile", D + "TmaPipeline.cpp",
        "        m.b, loc, arith::DivUIOp::create(m.b, loc, it, n), i32(m.b, 1));\n",
        "        m.b, loc, it, i32(m.b, 1));\n",
        "stage parity: the TMA pipeline's mbarrier waits use the parity of "
        "iteration iter instead of its round iter / stages"),
    Mutation(
        "streamk_partial_slot", D + "TmaPipeline.cpp",
        "                              ValueRange{slotIndex(w, seg.part, v)}, false,\n",
        "                              ValueRange{slotIndex(w, w.c(0), v)}, false,\n",
        "stream-K: every block of a split tile writes its partial to the "
        "head's slot, so the pieces overwrite each other"),
    Mutation(
        "streamk_head_counted_twice", D + "TmaPipeline.cpp",
        "        sb, loc, sm.c(own.empty() ? 0 : 1), sm.c(parts), sm.c(1), init,\n",
        "        sb, loc, sm.c(0), sm.c(parts), sm.c(1), init,\n",
        "stream-K: a split tile's head, finishing it early, adds its own "
        "registers and then its (stale) partial slot too"),
    Mutation(
        "inline_reduce_last_only", D + "LaneEvaluator.cpp",
        "      acc[l] = emitReduceCombine(b, loc, reduce.getKind(), acc[l], (*lanes)[l]);\n",
        "      acc[l] = (*lanes)[l];\n",
        "nested reduction: an inline reduction (the N-body's sum over x, y, z) "
        "keeps its last input element instead of combining them"),
    Mutation(
        "im2col_offsets_swapped", D + "TmaPipeline.cpp",
        "          i16(l.mul(l.rem(tap, g.kernelW), g.dilationW)),\n"
        "          i16(l.mul(l.div(tap, g.kernelW), g.dilationH))};\n",
        "          i16(l.mul(l.div(tap, g.kernelW), g.dilationH)),\n"
        "          i16(l.mul(l.rem(tap, g.kernelW), g.dilationW))};\n",
        "TMA im2col: the filter tap's offsets go in (h, w) order instead of "
        "the instruction's innermost-first (w, h)"),
    Mutation(
        "im2col_origin_unpadded", D + "TmaPipeline.cpp",
        "    return {origin(ow, g.strideW, g.padLeft), origin(oh, g.strideH, g.padTop),\n",
        "    return {origin(ow, g.strideW, 0), origin(oh, g.strideH, g.padTop),\n",
        "TMA im2col: the walk starts at the output pixel's column times the "
        "stride, without the left padding"),
    Mutation(
        "im2col_channel_box", D + "TmaPipeline.cpp",
        "        SmallVector<Value> coords = {toI32(l, l.add(c0, j * boxesA.boxCols)),\n",
        "        SmallVector<Value> coords = {toI32(l, c0),\n",
        "TMA im2col: every 64-channel box of a k tile loads the tile's first "
        "64 channels"),
    Mutation(
        "cp_async_stage", D + "MatmulMainLoop.cpp",
        "          loadTiles(ib, imb.rem(next, stages), next);\n",
        "          loadTiles(ib, imb.rem(kt, stages), next);\n",
        "pipeline stage: the cp.async main loop loads tile kt + ahead into the "
        "stage of tile kt"),
    Mutation(
        "cp_async_wait_short", D + "MatmulMainLoop.cpp",
        "          wait(lb, ahead - 1);\n",
        "          wait(lb, ahead);\n",
        "the cp.async main loop computes tile kt while its copy group may "
        "still be in flight (wait_group one too many)"),
    Mutation(
        "stencil_pad_right", D + "StencilEmitter.cpp",
        "    Value inside = inImage(y, h, x, w);\n",
        "    Value inside = inImage(y, h, x, w + 1);\n",
        "ragged edge: a stencil's staging of an input takes the column one past "
        "the image's right edge for inside (the clamped last column instead of "
        "the padding)"),
    Mutation(
        "transpose_clamp_short", D + "TransposeEmitter.cpp",
        "        gb = arith::MinUIOp::create(nb, loc, gb, k(l.extentB - 1));\n",
        "        gb = arith::MinUIOp::create(nb, loc, gb, k(l.extentB - 2));\n",
        "ragged edge: a transpose tile's load clamps its rows to one "
        "before the last (the last input row reads the one before)"),
    Mutation(
        "shuffle_step_skipped", D + "ReduceEmitter.cpp",
        "  for (int64_t offset = n / 2; offset >= 1; offset /= 2) {\n",
        "  for (int64_t offset = n / 2; offset > 1; offset /= 2) {\n",
        "a row reduction's xor-shuffle tree skips its last step (offset 1)"),
    Mutation(
        "window_max_start_zero", D + "WindowEmitter.cpp",
        "        b.getFloatAttr(accType, max ? -std::numeric_limits<double>::infinity()\n",
        "        b.getFloatAttr(accType, max ? 0.0\n",
        "a window kernel's float max pool starts at 0 instead of -inf (and pads "
        "with 0)"),
    Mutation(
        "window_padding_kept", D + "WindowEmitter.cpp",
        "    lane = arith::SelectOp::create(b, loc, valid, lane, pad);\n",
        "    (void)valid;\n",
        "a window tap outside the image reads the clamped edge pixel instead of "
        "the padding value"),
    Mutation(
        "window_avg_counts_padding", D + "WindowEmitter.cpp",
        "      Value lo = arith::MaxSIOp::create(b, loc, base, c(b, 0));\n",
        "      Value lo = base;\n",
        "a window average pool divides by taps in the top and left padding too"),
    Mutation(
        "window_filter_taps_transposed", D + "WindowEmitter.cpp",
        "  return filter[(cst(kh) * p.kw + cst(kw)) * p.groupIn + cst(ci)];\n",
        "  return filter[(cst(kw) * p.kw + cst(kh)) * p.groupIn + cst(ci)];\n",
        "a depthwise conv's preloaded filter taps are read with kh and kw "
        "swapped"),
    Mutation(
        "stencil_smem_reused_while_read", "lib/Dialect/KGraph/Transforms/StencilTiling.cpp",
        "        if (q.first <= last && first <= q.last)\n",
        "        if (q.first <= last && first < q.last)\n",
        "a stencil value's shared memory is given to the value computed in the "
        "stage that reads it for the last time (overwritten while read)"),
    Mutation(
        "stencil_separable_column_rows", D + "StencilEmitter.cpp",
        "                         rowSums[r + ky]);\n",
        "                         rowSums[ky]);\n",
        "a separable filter's column pass combines the first rows' sums for "
        "every output row of the thread"),
    Mutation(
        "stencil_vector_lane_shifted", D + "StencilEmitter.cpp",
        "    Value val = vector::ExtractOp::create(b, loc, row4, dx - base);\n",
        "    Value val = vector::ExtractOp::create(b, loc, row4, (dx - base + 1) % vec);\n",
        "a strip of several columns takes each shared-memory tap from the "
        "next lane of its aligned vector"),
    Mutation(
        "stencil_strip_column_ignored", D + "StencilEmitter.cpp",
        "  auto column = [&](int64_t e, int64_t kx) { return e * sx + kx - pad[2]; };\n",
        "  auto column = [&](int64_t e, int64_t kx) { return kx - pad[2]; };\n",
        "a pool in a strip of several columns computes every column's window "
        "at the strip's first column"),
    Mutation(
        "stencil_pool_rows_unstrided", D + "StencilEmitter.cpp",
        "            combine(acc, rowCombine(k, r * sy - pad[0] + ky, e));\n",
        "            combine(acc, rowCombine(k, r - pad[0] + ky, e));\n",
        "a separable pool's rows ignore its row stride"),
    Mutation(
        "window_filter_chunks_transposed", D + "WindowEmitter.cpp",
        "        lanes.push_back(chunks[(l * taps + t) / width][(l * taps + t) % width]);\n",
        "        lanes.push_back(chunks[t][l]);\n",
        "a preloaded filter's W-wide loads are read as if each held one tap of "
        "the W channels instead of consecutive taps of one channel"),
    Mutation(
        "window_strip_column_stride", D + "WindowEmitter.cpp",
        "    return i * p.strideW + kw * p.dilationW;\n",
        "    return i + kw * p.dilationW;\n",
        "a strip's pixel r reads the window columns of r instead of r * "
        "stride_w (strided windows)"),
    Mutation(
        "held_vector_past_row", D + "MultiReduceEmitter.cpp",
        "        if (valid[c])\n"
        "          x = arith::SelectOp::create(b, loc, valid[c], x, identity);\n",
        "        if (false)\n"
        "          x = arith::SelectOp::create(b, loc, valid[c], x, identity);\n",
        "ragged edge: a multi-reduction kernel's vector past the row's end (the "
        "row's last vector again) counts in the reductions"),
    Mutation(
        "row_total_lane0_only", D + "MultiReduceEmitter.cpp",
        "partials.lookup(acc.getType()), /*everyLane=*/true);\n",
        "partials.lookup(acc.getType()), /*everyLane=*/false);\n",
        "a multi-reduction kernel combines a row of more than a warp so that "
        "only lane 0 of each warp has the total (the other lanes use a partial)"),
]

# The kernel-interpreter lit tests (stage 1) and the tests never run on a
# mutated tree: the IR-level mutation check (it plants its own miscompiles)
# and this script's table check (the snippet it looks for is the one
# replaced).
INTERP_TESTS = r"kernels-interp"
NEVER = r"kernels-interp-mutations|kernels-mutate-codegen"


def repo_root():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def log(msg=""):
    print(msg, flush=True)


def check_table(source, mutations):
    """Messages for the mutations whose snippet is not in their file exactly
    once (or whose entry is malformed)."""
    problems = []
    names = collections.Counter(m.name for m in MUTATIONS)
    for m in mutations:
        if names[m.name] != 1:
            problems.append(f"{m.name}: the name is used {names[m.name]} times")
        if m.original == m.replacement:
            problems.append(f"{m.name}: the replacement is the original")
        path = os.path.join(source, m.file)
        if not os.path.isfile(path):
            problems.append(f"{m.name}: {m.file} does not exist")
            continue
        n = open(path).read().count(m.original)
        if n != 1:
            problems.append(f"{m.name}: its original snippet occurs {n} times in {m.file} "
                            "(it must occur exactly once; update the entry)")
    return problems


def run(cmd, **kw):
    return subprocess.run(cmd, text=True, **kw)


def sync_tree(root, scratch):
    """Copies the checkout's tracked and untracked-not-ignored files to
    `scratch`, only those whose content differs (so the scratch build
    rebuilds what changed); removes files an earlier sync copied that are
    gone now. Returns the number of files copied."""
    out = run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
               "--exclude-standard"], capture_output=True, check=True).stdout
    inside = os.path.relpath(scratch, root)
    inside = None if inside.startswith("..") else inside + os.sep
    files = sorted({f for f in out.split("\0") if f and os.path.isfile(os.path.join(root, f))
                    and not os.path.islink(os.path.join(root, f))
                    and not (inside and f.startswith(inside))})
    manifest = os.path.join(scratch, ".mutate-codegen-files")
    old = set(open(manifest).read().split("\0")) if os.path.exists(manifest) else set()
    copied = 0
    for f in files:
        src, dst = os.path.join(root, f), os.path.join(scratch, f)
        with open(src, "rb") as fh:
            data = fh.read()
        if os.path.exists(dst):
            with open(dst, "rb") as fh:
                if fh.read() == data:
                    continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        # A fresh mtime (not the source's): ninja must rebuild what changed.
        shutil.copyfile(src, dst)
        shutil.copymode(src, dst)
        copied += 1
    for f in old - set(files):
        if f and os.path.isfile(os.path.join(scratch, f)):
            os.remove(os.path.join(scratch, f))
    with open(manifest, "w") as fh:
        fh.write("\0".join(files))
    return copied


def build(scratch, env, jobs, targets, logfile):
    """True when ninja built `targets` (all when empty) in scratch/build."""
    if not os.path.exists(os.path.join(scratch, "build", "build.ninja")):
        cmd = [os.path.join(scratch, "scripts", "build.sh"), f"-j{jobs}", *targets]
    else:
        cmd = ["ninja", "-C", os.path.join(scratch, "build"), f"-j{jobs}", *targets]
    with open(logfile, "a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        p = run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=scratch)
    return p.returncode == 0


def first_failure(block):
    """The first informative line of a failed test's output."""
    lines = block.splitlines()
    # check_kernels_interp.py's failure lines, as FileCheck quotes them (in
    # a note or in its dump of the input, after the line number), its
    # summary line when the dump left them out, then errors.
    for pat in (r"^\s*(?:\d+: )?((?:FAIL|rejected|invalid) .*)$",
                r"^\s*(?:\d+: )?(interp: .*\b[1-9]\d* (?:failed|rejected).*)$",
                r"^(.*\berror: .*)$",
                r"^(.*(?:Traceback|Error\b|Assertion).*)$"):
        for l in lines:
            m = re.match(pat, l)
            if m:
                return m.group(1).strip()[:200]
    return ""


def lit_stage(lit, scratch, jobs, include, exclude, env, logfile, timeout):
    """Runs lit on scratch/build/test (tests matching `include`, not
    `exclude`). Returns [(test, first failure line)] of the failed tests,
    in lit's order, or None when lit ran no test."""
    cmd = [lit, "-v", f"-j{jobs}", os.path.join(scratch, "build", "test"),
           "--filter-out", exclude]
    if include:
        cmd += ["--filter", include]
    # Its own session: a stage that times out is killed with every process
    # it started.
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        with open(logfile, "a") as fh:
            fh.write("$ " + " ".join(cmd) + "\n" + out + "\n(timed out)\n")
        return [("lit", f"timed out after {timeout} s")]
    with open(logfile, "a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n" + out + "\n")
    failed = []
    blocks = {}
    for m in re.finditer(r"\*{20} TEST '[^']*? :: (\S+)' FAILED \*{20}\n(.*?)\n\*{20}\n",
                         out, re.S):
        blocks[m.group(1)] = m.group(2)
    for m in re.finditer(r"^(FAIL|XPASS|UNRESOLVED|TIMEOUT): [^:]+ :: (\S+)", out, re.M):
        failed.append((m.group(2), first_failure(blocks.get(m.group(2), ""))))
    if not failed and not re.search(r"^\s*(Passed|Unsupported|Expectedly Failed)\s*:", out, re.M):
        return None
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mutations", nargs="*", help="names of MUTATIONS to plant (default: all)")
    ap.add_argument("--check-only", action="store_true",
                    help="only check that every snippet occurs once in --source (no build)")
    ap.add_argument("--list", action="store_true", help="print the mutation table")
    ap.add_argument("--source", default=repo_root(), help="the checkout (default: this one)")
    ap.add_argument("--scratch", help="scratch directory (default: kgraph-mutate-<checkout "
                    "name> next to the checkout)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory for the "
                    "next run")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2,
                    help="parallel jobs of ninja and lit")
    ap.add_argument("--interp-only", action="store_true",
                    help="run only the kernel-interpreter lit tests, not the rest of lit")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the run of the tests on the unmutated build")
    ap.add_argument("--lit", default="/usr/lib/llvm-22/bin/lit")
    ap.add_argument("--timeout", type=int, default=3600,
                    help="seconds one lit stage may take (longer counts as a failure)")
    args = ap.parse_args()
    root = os.path.abspath(args.source)

    known = {m.name: m for m in MUTATIONS}
    unknown = [n for n in args.mutations if n not in known]
    if unknown:
        sys.exit(f"mutate_codegen: unknown mutation(s) {', '.join(unknown)}; --list lists them")
    selected = [known[n] for n in args.mutations] if args.mutations else MUTATIONS

    if args.list:
        for m in selected:
            log(f"{m.name:26} {m.file}: {m.behaviour}")
        return 0
    problems = check_table(root, selected)
    for p in problems:
        log(f"mutate_codegen: {p}")
    if problems:
        return 1
    if args.check_only:
        log(f"mutate_codegen: {len(selected)} mutations, every original snippet occurs once "
            "in its file")
        return 0

    t_start = time.time()
    scratch = os.path.abspath(args.scratch or os.path.join(
        os.path.dirname(root), "kgraph-mutate-" + os.path.basename(root)))
    marker = os.path.join(scratch, ".mutate-codegen-files")
    if os.path.exists(scratch) and os.listdir(scratch) and not os.path.exists(marker):
        sys.exit(f"mutate_codegen: {scratch} exists and is not a scratch directory of this "
                 "script; pass another --scratch")
    os.makedirs(scratch, exist_ok=True)
    logdir = scratch.rstrip(os.sep) + "-logs"   # kept: a few files
    os.makedirs(logdir, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("CCACHE_BASEDIR", os.path.commonpath([root, scratch]))
    env["KGRAPH_BUILD_DIR"] = os.path.join(scratch, "build")
    log(f"mutate_codegen: scratch {scratch} (logs in {logdir}), "
        f"CCACHE_BASEDIR={env['CCACHE_BASEDIR']}")

    results = []
    with open(os.path.join(logdir, "baseline.log"), "w"):
        pass
    try:
        n = sync_tree(root, scratch)
        log(f"synced {n} changed files")
        t0 = time.time()
        if not build(scratch, env, args.jobs, [] if not args.interp_only else
                     ["kgraph-opt", "kgraph-translate"], os.path.join(logdir, "baseline.log")):
            log(f"mutate_codegen: the unmutated scratch tree does not build; see "
                f"{logdir}/baseline.log")
            return 2
        log(f"built the unmutated tree in {time.time() - t0:.0f} s")

        def suite(logfile):
            """[(test, why)] failed: stage 1 (interp), then the rest of lit."""
            failed = lit_stage(args.lit, scratch, args.jobs, INTERP_TESTS, NEVER, env,
                               logfile, args.timeout)
            if failed is None:
                return None
            if not args.interp_only:
                rest = lit_stage(args.lit, scratch, args.jobs, None,
                                 INTERP_TESTS + "|" + NEVER, env, logfile, args.timeout)
                failed += rest or []
            return failed

        baseline = set()
        if not args.no_baseline:
            t0 = time.time()
            failed = suite(os.path.join(logdir, "baseline.log"))
            if failed is None:
                log("mutate_codegen: lit ran no kernel-interpreter test on the scratch build")
                return 2
            baseline = {t for t, _ in failed}
            for t, why in failed:
                log(f"baseline: {t} fails without a mutation ({why}); not counted")
            log(f"baseline suite in {time.time() - t0:.0f} s")

        for m in selected:
            t0 = time.time()
            logfile = os.path.join(logdir, m.name + ".log")
            if os.path.exists(logfile):
                os.remove(logfile)
            path = os.path.join(scratch, m.file)
            original = open(path).read()
            if original.count(m.original) != 1:
                results.append((m.name, "INVALID", "snippet not found once in the scratch copy"))
            else:
                try:
                    with open(path, "w") as fh:
                        fh.write(original.replace(m.original, m.replacement))
                    if not build(scratch, env, args.jobs, ["kgraph-opt", "kgraph-translate"],
                                 logfile):
                        results.append((m.name, "INVALID", f"does not build (see {logfile})"))
                    else:
                        tb = time.time() - t0
                        failed = suite(logfile)
                        failed = [(t, w) for t, w in failed or [] if t not in baseline] \
                            if failed is not None else None
                        if failed is None:
                            results.append((m.name, "INVALID", "lit ran no test"))
                        elif failed:
                            t, why = failed[0]
                            also = ("; also " + ", ".join(os.path.basename(t) for t, _ in
                                                          failed[1:])) if len(failed) > 1 else ""
                            results.append((m.name, "caught",
                                            f"{t}" + (f" ({why})" if why else "") + also))
                        else:
                            results.append((m.name, "MISSED", ""))
                        results[-1] += (tb,)
                finally:
                    with open(path, "w") as fh:
                        fh.write(original)
            r = results[-1]
            dt = time.time() - t0
            timing = f"[{dt:.0f} s" + (f", build {r[3]:.0f} s" if len(r) > 3 else "") + "]"
            if r[1] == "caught":
                log(f"caught {r[0]}: {r[2]} {timing}")
            elif r[1] == "MISSED":
                log(f"MISSED {r[0]}: {m.behaviour} {timing}")
            else:
                log(f"INVALID {r[0]}: {r[2]} {timing}")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    caught = sum(r[1] == "caught" for r in results)
    log(f"mutate_codegen: {caught} of {len(results)} mutations caught, "
        f"{sum(r[1] == 'MISSED' for r in results)} missed, "
        f"{sum(r[1] == 'INVALID' for r in results)} invalid; total {time.time() - t_start:.0f} s")
    return 0 if caught == len(selected) else 1


if __name__ == "__main__":
    sys.exit(main())
