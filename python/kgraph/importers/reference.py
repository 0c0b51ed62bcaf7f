"""A numpy evaluator of the ops a :class:`~kgraph.importers.builder.Builder`
recorded: the kgraph semantics of each op (docs/reference/KGraphDialect.md),
computed in float64 (casts round to their type, integer casts truncate).

It exists to test the importers without a GPU: a model imported to kgraph
ops and evaluated here must match torch eager, which checks the op mapping,
the layout conversion, batch-norm folding and the decompositions. It is a
reference, not a fast path (convolution is a loop over the filter taps).
"""

import math

import numpy as np

_ROUND = {"f16": np.float16, "f32": np.float32}


def _round(a, dtype):
    if dtype in _ROUND:
        return a.astype(_ROUND[dtype]).astype(np.float64)
    if dtype == "bf16":
        f = a.astype(np.float32)
        u = f.view(np.uint32).astype(np.uint64)
        u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
        return u.astype(np.uint32).view(np.float32).astype(np.float64)
    return a


def _conv(x, w, layout, strides, padding, dilations, groups):
    if layout == "nhwc":
        x = np.transpose(x, [0, 3, 1, 2])
        w = np.transpose(w, [0, 3, 1, 2])
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    x = np.pad(x, [(0, 0), (0, 0), (padding[0], padding[1]), (padding[2], padding[3])])
    oh = (h + padding[0] + padding[1] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + padding[2] + padding[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, f, oh, ow))
    fg = f // groups
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        ws = w[g * fg:(g + 1) * fg]
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dilations[0], j * dilations[1]
                patch = xs[:, :, r0:r0 + strides[0] * (oh - 1) + 1:strides[0],
                           c0:c0 + strides[1] * (ow - 1) + 1:strides[1]]
                out[:, g * fg:(g + 1) * fg] += np.einsum("nchw,fc->nfhw", patch, ws[:, :, i, j])
    if layout == "nhwc":
        out = np.transpose(out, [0, 2, 3, 1])
    return out


def _pool(x, kind, kernel, strides, padding, layout):
    if layout == "nhwc":
        x = np.transpose(x, [0, 3, 1, 2])
    n, c, h, w = x.shape
    oh = (h + padding[0] + padding[1] - kernel[0]) // strides[0] + 1
    ow = (w + padding[2] + padding[3] - kernel[1]) // strides[1] + 1
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, [(0, 0), (0, 0), (padding[0], padding[1]), (padding[2], padding[3])],
                constant_values=fill)
    ones = np.pad(np.ones((h, w)), [(padding[0], padding[1]), (padding[2], padding[3])])
    out = np.full((n, c, oh, ow), fill)
    cnt = np.zeros((oh, ow))
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            sl = (slice(i, i + strides[0] * (oh - 1) + 1, strides[0]),
                  slice(j, j + strides[1] * (ow - 1) + 1, strides[1]))
            patch = xp[(slice(None), slice(None)) + sl]
            if kind == "max":
                out = np.maximum(out, patch)
            else:
                out = out + patch
                cnt = cnt + ones[sl]
    if kind == "avg":
        out = out / cnt
    if layout == "nhwc":
        out = np.transpose(out, [0, 2, 3, 1])
    return out


_UNARY = {"relu": lambda x: np.maximum(x, 0), "neg": np.negative, "abs": np.abs,
          "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
          "rsqrt": lambda x: 1.0 / np.sqrt(x), "tanh": np.tanh,
          "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x))}
_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
           "max": np.maximum, "min": np.minimum, "pow": np.power}


def _gelu(x, approximate):
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


#: kgraph.compare: floats compare ordered, except ne (true for NaN), as numpy
#: does (also what the importers fold constant comparisons with).
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}


def evaluate(builder, inputs):
    """The results of ``builder``'s function for the real ``inputs`` (numpy
    arrays, in order), as float64 (or integer) numpy arrays."""
    env = {}
    real = builder.inputs()
    if len(inputs) != len(real):
        raise ValueError(f"expected {len(real)} inputs, got {len(inputs)}")
    for a, x in zip(real, inputs):
        env[id(a.value)] = np.asarray(x, dtype=np.float64) \
            if a.value.dtype in ("f32", "f16", "bf16") else np.asarray(x)
    for a in builder.params():
        env[id(a.value)] = _round(np.asarray(a.data, dtype=np.float64), a.value.dtype)
    for op in builder.live_ops():
        ins = [env[id(v)] for v in op.operands]
        r = op.result
        k, at = op.kind, op.attrs
        if k == "constant":
            out = np.full(r.shape, at["value"], dtype=np.float64)
        elif k in _BINARY:
            out = _BINARY[k](ins[0], ins[1])
        elif k in _UNARY:
            out = _UNARY[k](ins[0])
        elif k == "gelu":
            out = _gelu(ins[0], at.get("approximate"))
        elif k == "clamp":
            out = np.clip(ins[0], at["min"], at["max"])
        elif k == "compare":
            out = COMPARE[at["direction"]](ins[0], ins[1])
        elif k == "select":
            out = np.where(ins[0].astype(bool), ins[1], ins[2])
        elif k == "cast":
            out = ins[0]
            if r.dtype in ("i32", "i8"):
                out = np.trunc(out)
        elif k == "matmul":
            a, b = ins
            if at["transpose_a"]:
                a = np.swapaxes(a, -1, -2)
            if at["transpose_b"]:
                b = np.swapaxes(b, -1, -2)
            out = a @ b
        elif k == "conv2d":
            out = _conv(ins[0], ins[1], at["layout"], at["strides"], at["padding"],
                        at["dilations"], at["groups"])
        elif k == "pool2d":
            out = _pool(ins[0], at["kind"], at["kernel"], at["strides"], at["padding"],
                        at["layout"])
        elif k == "reduce":
            fn = {"sum": np.sum, "max": np.max, "mean": np.mean}[at["kind"]]
            out = fn(ins[0], axis=tuple(at["axes"]), keepdims=at["keep_dims"])
        elif k == "reshape":
            out = ins[0].reshape(r.shape)
        elif k == "transpose":
            out = np.transpose(ins[0], at["permutation"])
        elif k == "slice":
            idx = tuple(slice(o, o + s * st, st) if s else slice(0, 0) for o, s, st in
                        zip(at["offsets"], at["sizes"], at["strides"]))
            out = ins[0][idx]
        elif k == "concat":
            out = np.concatenate(ins, axis=at["axis"])
        elif k == "broadcast_to":
            out = np.broadcast_to(ins[0], r.shape)
        else:
            raise NotImplementedError(f"reference: no evaluator for kgraph.{k}")
        out = np.asarray(out).reshape(r.shape)
        env[id(r)] = _round(out, r.dtype)
    return [env[id(v)] for v in builder.results]
