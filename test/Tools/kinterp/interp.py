"""The executor: runs a gpu.func of the generic-form IR for a grid of
blocks, all threads of a chunk of blocks at once (numpy arrays over lanes).

Control flow is structured (scf.for / scf.if / scf.while): a thread-varying
condition or loop bound narrows the active-lane mask; loads and stores act
for active lanes only. Every block is executed as a generator, which yields
at a barrier (("barrier", mask): the caller checks that whole blocks arrive)
and at a wait that cannot complete yet (("wait", ready, what)). An scf.if
whose two sides wait on each other (the producer and consumer warpgroups of
a TMA pipeline) runs its sides as coroutines, switching when one waits.
Warp-collective ops require all 32 lanes of each warp that executes them
to be active together, as `.sync.aligned` instructions do.
"""
import os

import numpy as np

from . import ops_arith, ops_async, ops_memory, ops_warp
from .memory import KernelError, Lanes, UndefinedValue, Unsupported
from .parser import walk
from .types import Struct

#: Ops whose handlers are generators (they run regions or may block).
_BLOCKING = {"gpu.barrier", "nvvm.mbarrier.try_wait.parity", "nvvm.barrier0",
             "nvvm.barrier"}
_TERMINATORS = {"scf.yield", "gpu.return", "scf.condition"}

#: Lanes executed together at most (blocks are chunked to stay below).
MAX_LANES = 1 << 15


class Pending:
    """The result of an asynchronous instruction (wgmma) until its wait."""

    __slots__ = ("value", "what")

    def __init__(self, what):
        self.value, self.what = None, what

    def get(self, op):
        if self.value is None:
            raise KernelError(f"line {op.line}: {op.name} reads the result of "
                              f"{self.what} before its wait")
        return self.value


def _handlers():
    table = {}
    for mod in (ops_arith, ops_memory, ops_warp, ops_async):
        table.update(mod.HANDLERS)
    table.update({"scf.for": _scf_for, "scf.if": _scf_if, "scf.while": _scf_while,
                  "scf.execute_region": _scf_execute_region,
                  "gpu.barrier": _barrier, "nvvm.barrier0": _barrier,
                  "nvvm.barrier": _nvvm_barrier})
    return table


HANDLERS = None


def prepare(func_op):
    """Binds every op of the kernel to its handler (once); raises Unsupported
    naming the first op the interpreter does not implement."""
    global HANDLERS
    if HANDLERS is None:
        HANDLERS = _handlers()
    missing = []
    for op in walk(func_op.regions[0][0].ops):
        if op.handler is not None:
            continue
        if op.name in _TERMINATORS:
            op.handler = False
            continue
        h = HANDLERS.get(op.name)
        if h is None:
            missing.append(op)
            continue
        op.handler = h
        op.gen = op.name in _GEN_OPS
    if missing:
        names = sorted({o.name for o in missing})
        raise Unsupported("the kernel interpreter does not implement " + ", ".join(names) +
                          f" (first at line {missing[0].line})")
    for op in walk(func_op.regions[0][0].ops):
        if op.name == "scf.if" and "blocks" not in op.cache:
            op.cache["blocks"] = any(o.name in _BLOCKING for r in op.regions
                                     for b in r for o in walk(b.ops))


def lane_mask_shape(mask, rank):
    return mask.reshape((-1,) + (1,) * rank)


def merge(op, cond, a, b, typ):
    """Per lane: a where cond else b (values of type typ)."""
    if isinstance(a, Pending) or isinstance(b, Pending):
        if a is b:
            return a
        raise KernelError(f"line {op.line}: asynchronous results merged under divergent "
                          "control flow")
    if a is b:
        return a
    if not isinstance(a, (np.ndarray, np.generic)) or not isinstance(b, (np.ndarray, np.generic)):
        raise Unsupported(f"line {op.line}: {op.name} merges {type(a).__name__} values "
                          "(memrefs, pointers) under divergent control flow")
    rank = 1 if isinstance(typ, Struct) else getattr(typ, "rank", 0)
    return np.where(lane_mask_shape(cond, rank), a, b)


class Interp:
    """Runs one kernel launch (see run_kernel)."""

    def __init__(self, memory, lanes, shared_bytes, kernel_name):
        self.memory, self.lanes = memory, lanes
        self.shared_bytes = shared_bytes
        self.kernel_name = kernel_name
        self.shared = {}           # name -> SharedMemory of the chunk
        self.async_state = ops_async.AsyncState(self)
        # Barrier intervals per block, for race detection (memory.race_read).
        self.epoch = np.zeros(lanes.nblocks, np.int32)

    # --- regions -----------------------------------------------------------
    def run_block(self, block, env, mask):
        """Generator: runs `block`; returns the operands of its terminator."""
        for op in block.ops:
            h = op.handler
            if h is False:
                return [env[o] for o in op.operands]
            try:
                if op.gen:
                    r = yield from h(self, op, env, mask)
                else:
                    r = h(self, op, env, mask)
            except KeyError as e:
                if e.args and isinstance(e.args[0], str) and e.args[0].startswith("%"):
                    raise UndefinedValue(f"line {op.line}: {op.name} uses {e.args[0]}, "
                                         "which is not defined") from None
                raise
            res = op.results
            if res:
                if len(res) == 1:
                    env[res[0]] = r
                else:
                    for name, v in zip(res, r):
                        env[name] = v
                if CHECK_SHAPES:
                    for name, typ in zip(res, op.result_types):
                        _check_shape(self, op, env[name], typ)
        return []

    def run_region(self, region, env, mask, args=()):
        block = region[0]
        if len(region) != 1:
            raise Unsupported("regions with several blocks (unstructured control flow)")
        for name, v in zip(block.args, args):
            env[name] = v
        return (yield from self.run_block(block, env, mask))


CHECK_SHAPES = bool(os.environ.get("KINTERP_CHECK_SHAPES"))


def _check_shape(ip, op, v, typ):
    """Debugging aid: a register value is uniform (the type's shape) or has
    one leading lane axis."""
    if not isinstance(v, (np.ndarray, np.generic)):
        return
    shape = tuple(getattr(typ, "shape", ()))
    if typ.__class__.__name__ == "Struct":
        shape = (len(typ.elems),)
    if v.shape not in (shape, (ip.lanes.count,) + shape):
        raise AssertionError(f"line {op.line}: {op.name} gave shape {v.shape} for {typ}")


_GEN_OPS = {"scf.for", "scf.if", "scf.while", "scf.execute_region", "gpu.barrier",
            "nvvm.barrier0", "nvvm.barrier", "nvvm.mbarrier.try_wait.parity"}


def _uniform(x):
    return np.ndim(x) == 0


def _collapse(x, mask):
    """`x` as a scalar when every active lane holds the same value (control
    flow on it does not diverge: a persistent block's own loop bounds),
    else `x`."""
    if np.ndim(x) != 1:
        return x
    v = x if mask is None else x[mask]
    if v.size and (v == v[0]).all():
        return v[0]
    return x


def _scf_for(ip, op, env, mask):
    vals = [env[o] for o in op.operands]
    lb, ub, step = (_collapse(v, mask) for v in vals[:3])
    carried = vals[3:]
    region = op.regions[0]
    types = op.result_types
    if _uniform(lb) and _uniform(ub) and _uniform(step):
        iv, ub, step = int(lb), int(ub), int(step)
        if step <= 0:
            raise KernelError(f"line {op.line}: scf.for with step {step}")
        while iv < ub:
            carried = yield from ip.run_region(region, env, mask, [np.int64(iv)] + list(carried))
            iv += step
        return carried if len(carried) != 1 else carried[0]
    n = ip.lanes.count
    iv = np.broadcast_to(np.asarray(lb, dtype=np.int64), (n,)).copy()
    step = np.broadcast_to(np.asarray(step, dtype=np.int64), (n,))
    active = iv < ub
    if mask is not None:
        active &= mask
    while active.any():
        new = yield from ip.run_region(region, env, active, [iv] + list(carried))
        carried = [merge(op, active, a, b, t) for a, b, t in zip(new, carried, types)]
        iv = iv + step
        active = active & (iv < ub)
    return carried if len(carried) != 1 else carried[0]


def _scf_if(ip, op, env, mask):
    cond = _collapse(env[op.operands[0]], mask)
    then_r = op.regions[0]
    else_r = op.regions[1] if len(op.regions) > 1 and op.regions[1][0].ops else None
    nres = len(op.results)
    if _uniform(cond):
        if bool(cond):
            r = yield from ip.run_region(then_r, env, mask)
        elif else_r is not None:
            r = yield from ip.run_region(else_r, env, mask)
        else:
            r = []
        return r if nres != 1 else r[0]
    cond = np.asarray(cond, dtype=bool)
    mt = cond if mask is None else (cond & mask)
    me = ~cond if mask is None else (~cond & mask)
    any_t, any_e = bool(mt.any()), bool(me.any())
    if not any_e or else_r is None and nres == 0:
        if not any_t:
            return None if nres == 0 else ([] if nres > 1 else None)
        r = yield from ip.run_region(then_r, env, mt)
        return r if nres != 1 else r[0]
    if not any_t:
        r = yield from ip.run_region(else_r, env, me)
        return r if nres != 1 else r[0]
    if op.cache.get("blocks"):
        rt, re_ = yield from _interleave(ip, op, [(then_r, mt), (else_r, me)], env)
    else:
        rt = yield from ip.run_region(then_r, env, mt)
        re_ = yield from ip.run_region(else_r, env, me)
    r = [merge(op, cond, a, b, t) for a, b, t in zip(rt, re_, op.result_types)]
    return r if nres != 1 else r[0]


def _interleave(ip, op, sides, env):
    """Runs the regions of `sides` ((region, mask) each) as coroutines:
    each runs until it waits or reaches a barrier, then the next. Returns
    their results."""
    gens = [ip.run_region(region, env, m) for region, m in sides]
    masks = [m for _, m in sides]
    state = ["run"] * len(gens)   # run | wait | barrier | done
    waits = [None] * len(gens)
    results = [None] * len(gens)
    while True:
        progressed = False
        for k, g in enumerate(gens):
            if state[k] == "wait" and waits[k][1]():
                state[k] = "run"
            while state[k] == "run":
                try:
                    ev = next(g)
                except StopIteration as stop:
                    results[k] = stop.value
                    state[k] = "done"
                    break
                progressed = True
                if ev[0] == "wait":
                    if ev[1]():
                        continue
                    state[k], waits[k] = "wait", ev
                elif ev[0] == "barrier":
                    state[k], waits[k] = "barrier", ev
                elif ev[0] == "named_barrier":
                    # Its threads are all on this side: they order their
                    # accesses without waiting for the other side.
                    yield ev
                else:
                    raise KernelError(f"unknown event {ev}")
        live = [k for k in range(len(gens)) if state[k] != "done"]
        if not live:
            return results
        if all(state[k] == "barrier" for k in live):
            where = waits[live[0]][2]
            if len(live) != len(gens):
                raise KernelError(f"{where}: a barrier is reached by one side of a divergent "
                                  f"branch (the scf.if at line {op.line}) only")
            union = masks[0].copy()
            for m in masks[1:]:
                union |= m
            yield ("barrier", union, where)
            for k in live:
                state[k] = "run"
            continue
        if not progressed:
            waiting = [waits[k] for k in live if state[k] == "wait"]
            yield ("wait", lambda: any(w[1]() for w in waiting),
                   " and ".join(w[2] for w in waiting))


def _scf_while(ip, op, env, mask):
    before, after = op.regions
    args = [env[o] for o in op.operands]
    active = mask
    results = None
    while True:
        out = yield from ip.run_region(before, env, active, args)
        cond, fwd = _collapse(out[0], active), out[1:]
        if results is None:
            results = list(fwd)
        else:
            results = [merge(op, active, a, b, t) if active is not None else a
                       for a, b, t in zip(fwd, results, op.result_types)]
        if _uniform(cond):
            if not bool(cond):
                break
            go = active
        else:
            go = np.asarray(cond, bool) if active is None else (active & np.asarray(cond, bool))
            if not go.any():
                break
        args = yield from ip.run_region(after, env, go, fwd)
        active = go
    return results if len(results) != 1 else results[0]


def _scf_execute_region(ip, op, env, mask):
    r = yield from ip.run_region(op.regions[0], env, mask)
    return r if len(r) != 1 else r[0]


def _barrier(ip, op, env, mask):
    yield ("barrier", mask, f"line {op.line}")


def _nvvm_barrier(ip, op, env, mask):
    """bar.sync: without a thread count, the block barrier; with one
    (`id`, `number_of_threads`), a named barrier over that many threads of
    each block, all of which must be here together (the lanes of one side
    of a divergent branch: the consumer warpgroups of a TMA kernel)."""
    seg = op.array_attr("operandSegmentSizes") if op.operands else [0, 0, 0]
    if len(seg) > 2 and seg[2]:
        raise Unsupported(f"line {op.line}: nvvm.barrier with a reduction")
    if not seg[1]:
        yield ("barrier", mask, f"line {op.line}")
        return
    count = int(env[op.operands[seg[0]]])
    per = ip.lanes.threads_per_block
    here = (np.ones(ip.lanes.count, bool) if mask is None else mask).reshape(-1, per)
    n = here.sum(axis=1)
    bad = np.flatnonzero((n != 0) & (n != count))
    if bad.size:
        raise KernelError(f"line {op.line}: nvvm.barrier over {count} threads is reached by "
                          f"{int(n[bad[0]])} threads of block {int(bad[0])} of the chunk")
    yield ("named_barrier", here.any(axis=1), f"line {op.line}")


def check_barrier(ip, mask, where):
    if mask is None:
        return
    per = ip.lanes.threads_per_block
    m = mask.reshape(-1, per)
    if not (m.all(axis=1) | ~m.any(axis=1)).all():
        blk = int(np.flatnonzero(m.any(axis=1) & ~m.all(axis=1))[0])
        missing = int(np.flatnonzero(~m[blk])[0])
        raise KernelError(f"{where}: gpu.barrier is not reached by every thread of block "
                          f"{blk} of the chunk (thread {missing} is elsewhere)")


def run_kernel(func_op, args, grid, block, shared_bytes, memory, name="kernel",
               max_lanes=None, reverse=False):
    """Runs gpu.func `func_op` on `args` (MemRefVal, or numpy scalars for
    scalar parameters) for `grid` x `block` threads with `shared_bytes` of
    dynamic shared memory, in chunks of whole blocks (the last chunk first
    with `reverse`)."""
    prepare(func_op)
    entry = func_op.regions[0][0]
    nwg = func_op.int_attr("workgroup_attributions", 0)
    nargs = len(entry.args) - nwg
    if len(args) != nargs:
        raise KernelError(f"{name}: {len(args)} arguments for {nargs} parameters")
    per = block[0] * block[1] * block[2]
    total = grid[0] * grid[1] * grid[2]
    if per == 0 or total == 0:
        return
    chunk = max(1, (max_lanes or MAX_LANES) // per)
    firsts = list(range(0, total, chunk))
    for first in (firsts[::-1] if reverse else firsts):
        nblk = min(chunk, total - first)
        lanes = Lanes(grid, block, first, nblk)
        ip = Interp(memory, lanes, shared_bytes, name)
        env = {}
        for a, v in zip(entry.args[:nargs], args):
            env[a] = v
        for a, t in zip(entry.args[nargs:], entry.arg_types[nargs:]):
            env[a] = ops_memory.workgroup_buffer(ip, t, a)
        gen = ip.run_block(entry, env, None)
        while True:
            try:
                ev = next(gen)
            except StopIteration:
                break
            if ev[0] == "named_barrier":
                # The blocks whose threads met at it (ev[1]: per block).
                ip.epoch[np.flatnonzero(ev[1])] += 1
                continue
            if ev[0] == "barrier":
                check_barrier(ip, ev[1], f"{name} {ev[2] if len(ev) > 2 else ''}")
                if ev[1] is None:
                    ip.epoch += 1
                else:
                    ip.epoch[np.unique(lanes.blk[ev[1]])] += 1
            elif ev[0] == "wait":
                if not ev[1]():
                    raise KernelError(f"{name}: deadlock: every thread waits ({ev[2]})")
        ip.async_state.finish()
