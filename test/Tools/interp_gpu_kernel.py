#!/usr/bin/env python3
"""CPU interpreter for the kernels kgraph-lower-to-gpu emits (generic MLIR
form, after canonicalize/cse), for checking emitters without a GPU.

Supports the subset the stencil, transpose and elementwise emitters
produce: arith, math.fma/sqrt/exp, memref.load/store/view/reinterpret_cast,
vector.load/store/extract/from_elements (1-D), scf.for/if (with results),
gpu thread/block ids, dynamic shared memory, workgroup attributions and gpu.barrier. Each thread is a Python generator that pauses at a
barrier; a block runs its threads phase by phase. Floats are numpy float32
(fma computed in float64, then rounded). Slow: use tiny shapes.

Used by test/GPU-free checks (test/Tools/check_stencil_kernels.py).
"""
import re

import numpy as np

_OP = re.compile(r'^\s*(?:(%[\w#]+(?::\d+)?)\s*=\s*)?"([\w.]+)"\((.*?)\)(.*)$')


class Op:
    def __init__(self, result, name, operands, rest):
        self.result, self.name, self.operands, self.rest = result, name, operands, rest
        self.regions = []


def parse(lines, i):
    """Parses ops from lines[i] until a line closing the region; returns
    (ops, block_args, next index)."""
    ops, args = [], []
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith('^bb'):
            args = re.findall(r'(%[\w]+):', line)
            i += 1
            continue
        if line.startswith('})') or line.startswith('}, {') or line == '}':
            return ops, args, i
        m = _OP.match(line)
        if not m:
            i += 1
            continue
        res, name, operands, rest = m.groups()
        op = Op(res, name, [o.strip() for o in operands.split(',') if o.strip()], rest)
        i += 1
        if rest.rstrip().endswith('({'):
            while True:
                body, bargs, i = parse(lines, i)
                op.regions.append((body, bargs))
                closing = lines[i].strip()
                i += 1
                if closing.startswith('}, {'):
                    continue
                break
        ops.append(op)
    return ops, args, i


def find_kernel(text, name=None):
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if '"gpu.func"' in line and (name is None or f'sym_name = "{name}"' in
                                     _func_attrs(lines, k)):
            ops, args, _ = parse(lines, k + 1)
            return ops, args
    raise ValueError(f"no gpu.func {name or ''}")


def _func_attrs(lines, k):
    """The attribute text of the gpu.func starting at lines[k] (its
    properties on the first line, the rest after its region's end)."""
    depth = 0
    for line in lines[k:]:
        depth += line.count('({') - line.count('})')
        if depth <= 0 and '})' in line:
            return lines[k] + line
    return lines[k]


_NP = {"f32": np.float32, "f16": np.float16, "i8": np.int8, "i32": np.int32,
       "i1": np.bool_}


def workgroup_buffers(text, name=None):
    """(shape, numpy dtype) of each workgroup attribution of the kernel."""
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if '"gpu.func"' in line and (name is None or f'sym_name = "{name}"' in
                                     _func_attrs(lines, k)):
            head = lines[k + 1]
            out = []
            for shape, ty in re.findall(
                    r'memref<([\dx]+)x(\w+), #gpu\.address_space<workgroup>>', head):
                out.append(([int(d) for d in shape.split('x')], _NP[ty]))
            return out
    return []


def _attr(rest, key):
    m = re.search(key + r'\s*=\s*([^,>}]+)', rest)
    return m.group(1).strip() if m else None


_CMPI = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b,
         3: lambda a, b: a <= b, 4: lambda a, b: a > b, 5: lambda a, b: a >= b}
_U64 = 1 << 64


def _ucmp(pred, a, b):
    a, b = a % _U64, b % _U64
    return {6: a < b, 7: a <= b, 8: a > b, 9: a >= b}[pred]


def _cmpf(pred, a, b):
    """arith.cmpf predicates: 1..6 ordered oeq ogt oge olt ole one, 7 ord,
    8..13 unordered ueq ugt uge ult ule une, 14 uno."""
    nan = bool(np.isnan(a) or np.isnan(b))
    rel = [None, a == b, a > b, a >= b, a < b, a <= b, a != b]
    if 1 <= pred <= 6:
        return (not nan) and bool(rel[pred])
    if pred == 7:
        return not nan
    if 8 <= pred <= 13:
        return nan or bool(rel[pred - 7])
    if pred == 14:
        return nan
    raise NotImplementedError(f"cmpf predicate {pred}")


def _const(rest):
    v = _attr(rest, 'value')
    val, _, ty = v.rpartition(':')
    val, ty = val.strip(), ty.strip()
    if ty in ('index',) or ty.startswith('i'):
        if val in ('true', 'false'):
            return val == 'true'
        return int(val)
    if val.startswith('0x'):
        return np.frombuffer(int(val, 16).to_bytes(4, 'little'), np.float32)[0]
    return np.float32(float(val))


def run_thread(ops, env, ctx):
    for op in ops:
        n, o = op.name, [env[x] if x in env else x for x in op.operands]
        r = None
        if n == 'arith.constant':
            r = _const(op.rest)
        elif n == 'arith.addi':
            r = o[0] + o[1]
        elif n == 'arith.subi':
            r = o[0] - o[1]
        elif n == 'arith.muli':
            r = o[0] * o[1]
        elif n == 'arith.divui':
            r = (o[0] % _U64) // (o[1] % _U64)
        elif n == 'arith.remui':
            r = (o[0] % _U64) % (o[1] % _U64)
        elif n == 'arith.maxsi':
            r = max(o[0], o[1])
        elif n == 'arith.minsi':
            r = min(o[0], o[1])
        elif n == 'arith.minui':
            r = min(o[0] % _U64, o[1] % _U64)
        elif n == 'arith.maxui':
            r = max(o[0] % _U64, o[1] % _U64)
        elif n == 'arith.andi':
            r = bool(o[0]) and bool(o[1])
        elif n == 'arith.ori':
            r = bool(o[0]) or bool(o[1])
        elif n == 'arith.xori':
            r = bool(o[0]) != bool(o[1])
        elif n == 'arith.cmpi':
            p = int(_attr(op.rest, 'predicate').split(':')[0])
            r = _CMPI[p](o[0], o[1]) if p < 6 else _ucmp(p, o[0], o[1])
        elif n == 'arith.cmpf':
            r = _cmpf(int(_attr(op.rest, 'predicate').split(':')[0]), o[0], o[1])
        elif n == 'arith.select':
            r = o[1] if o[0] else o[2]
        elif n == 'arith.addf':
            r = np.float32(o[0] + o[1])
        elif n == 'arith.subf':
            r = np.float32(o[0] - o[1])
        elif n == 'arith.mulf':
            r = np.float32(o[0] * o[1])
        elif n == 'arith.divf':
            with np.errstate(all='ignore'):
                r = np.float32(o[0] / o[1])
        elif n == 'arith.negf':
            r = np.float32(-o[0])
        elif n in ('arith.maximumf', 'arith.minimumf'):
            if np.isnan(o[0]) or np.isnan(o[1]):
                r = np.float32(np.nan)
            else:
                r = (max if n.endswith('maximumf') else min)(o[0], o[1])
        elif n == 'math.fma':
            r = np.float32(np.float64(o[0]) * np.float64(o[1]) + np.float64(o[2]))
        elif n == 'math.sqrt':
            with np.errstate(all='ignore'):
                r = np.float32(np.sqrt(o[0]))
        elif n == 'math.exp':
            with np.errstate(all='ignore'):
                r = np.float32(np.exp(o[0]))
        elif n == 'arith.index_cast':
            r = int(o[0])
        elif n == 'arith.fptosi':
            r = int(np.trunc(o[0]))
        elif n in ('arith.extsi', 'arith.extui', 'arith.trunci'):
            r = int(o[0])
        elif n == 'arith.sitofp':
            r = np.float32(o[0])
        elif n == 'arith.extf':
            r = np.float32(o[0])
        elif n == 'arith.truncf':
            r = np.float16(o[0]) if 'f16' in op.rest.split('->')[-1] else np.float32(o[0])
        elif n == 'memref.load':
            r = o[0][tuple(int(i) for i in o[1:])]
        elif n == 'memref.store':
            o[1][tuple(int(i) for i in o[2:])] = o[0]
        elif n == 'memref.reinterpret_cast':
            r = o[0].reshape(-1)
        elif n == 'vector.load':
            width = int(re.search(r'-> vector<(\d+)x', op.rest).group(1))
            r = o[0][int(o[1]):int(o[1]) + width].copy()
        elif n == 'vector.store':
            o[1][int(o[2]):int(o[2]) + len(o[0])] = o[0]
        elif n == 'vector.extract':
            r = o[0][int(re.search(r'static_position = array<i64: (\d+)>', op.rest).group(1))]
        elif n == 'vector.from_elements':
            r = np.array(o)
        elif n == 'memref.view':
            shape = [int(d) for d in re.search(r'-> memref<([\dx]+)x\w+,', op.rest).group(1).split('x')]
            key = int(o[1])
            if key not in ctx['shared']:
                ctx['shared'][key] = np.full(shape, np.float32(np.nan), np.float32)
            r = ctx['shared'][key]
        elif n == 'gpu.thread_id':
            r = ctx['tid']['xyz'.index(_attr(op.rest, 'dimension')[-1])]
        elif n == 'gpu.block_id':
            r = ctx['bid']['xyz'.index(_attr(op.rest, 'dimension')[-1])]
        elif n == 'gpu.dynamic_shared_memory':
            r = None
        elif n == 'gpu.barrier':
            yield
        elif n in ('gpu.return', 'scf.yield'):
            return o
        elif n == 'scf.for':
            body, bargs = op.regions[0]
            iv = o[0]
            while iv < o[1]:
                env[bargs[0]] = iv
                yield from run_thread(body, env, ctx)
                iv += o[2]
        elif n == 'scf.if':
            region = op.regions[0] if o[0] else (op.regions[1] if len(op.regions) > 1 else ([], []))
            yielded = yield from run_thread(region[0], env, ctx)
            if op.result:
                # The values of the taken branch's scf.yield: %r, or %r#i of %r:N.
                name, _, count = op.result.partition(':')
                if count:
                    for k, v in enumerate(yielded):
                        env[f'{name}#{k}'] = v
                    continue
                r = yielded[0]
        else:
            raise NotImplementedError(n)
        if op.result:
            env[op.result] = r


def run_kernel(text, args, grid, block, name=None):
    """Runs the kernel of `text` (the gpu.func `name`, else the first) on
    numpy `args` (modified in place); workgroup attributions get fresh
    NaN/zero-filled buffers per block."""
    ops, kargs = find_kernel(text, name)
    wg = workgroup_buffers(text, name)
    for bz in range(grid[2]):
        for by in range(grid[1]):
            for bx in range(grid[0]):
                shared = {}
                threads = []
                block_args = list(args) + [
                    np.full(shape, np.nan, dt) if np.issubdtype(dt, np.floating)
                    else np.zeros(shape, dt) for shape, dt in wg]
                for tz in range(block[2]):
                    for ty in range(block[1]):
                        for tx in range(block[0]):
                            ctx = {'tid': (tx, ty, tz), 'bid': (bx, by, bz), 'shared': shared}
                            env = dict(zip(kargs, block_args))
                            threads.append(run_thread(ops, env, ctx))
                while threads:
                    alive = []
                    for t in threads:
                        try:
                            next(t)
                            alive.append(t)
                        except StopIteration:
                            pass
                    if alive and len(alive) != len(threads):
                        raise RuntimeError("barrier not reached by every thread")
                    threads = alive
