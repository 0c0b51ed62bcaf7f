"""Building kgraph IR text from Python: values, ops, parameters, printing.

The importers (PyTorch, ONNX) translate a model into calls on a
:class:`Builder`. Each call computes the result's static shape, records one
kgraph (or ``arith.constant``) op and returns its :class:`Value`. A few
peepholes keep the IR small and compilable by today's kgraph-opt:

- a reshape to the value's own shape is the value; a reshape of a reshape
  reshapes the original value; a transpose that only moves size-1 dims is a
  reshape; a transpose of a transpose composes; a reduction reshaped to
  its keep_dims (or dropped-dims) form is built in that form;
- :meth:`Builder.matmul` turns an operand that is a transpose of its last two
  dims into the op's ``transpose_a``/``transpose_b`` flag;
- at :meth:`Builder.module_text` time ops whose results are unused are
  dropped (every kgraph op is pure).

Parameters (model weights) are function arguments with the argument
attribute ``kgraph.param = "<name>"``; their data (numpy arrays) is written by
:func:`kgraph.importers.safetensors.write_safetensors` into the file the
module's ``kgraph.weights`` attribute names (docs/importers.md).
"""

import math

import numpy as np

#: numpy dtype of each kgraph element type the importers produce.
NUMPY_OF = {"f32": np.float32, "f16": np.float16, "i32": np.int32,
            "i8": np.int8, "i1": np.bool_}
FLOAT_TYPES = ("f32", "f16", "bf16")


def _fmt_shape(shape, dtype):
    if not shape:
        return f"tensor<{dtype}>"
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


#: Bit patterns of (+inf, -inf, NaN) per type: MLIR reads a hexadecimal
#: float literal as the bits of the attribute's own type.
_SPECIAL_BITS = {"f32": ("0x7F800000", "0xFF800000", "0x7FC00000"),
                 "f16": ("0x7C00", "0xFC00", "0x7E00"),
                 "bf16": ("0x7F80", "0xFF80", "0x7FC0"),
                 "f64": ("0x7FF0000000000000", "0xFFF0000000000000",
                         "0x7FF8000000000000")}


def _fmt_float(v, dtype="f32"):
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        pos, neg, nan = _SPECIAL_BITS[dtype]
        return nan if math.isnan(v) else (pos if v > 0 else neg)
    r = repr(v)
    if "e" in r:
        mant, exp = r.split("e")
        return (mant if "." in mant else mant + ".0") + "e" + exp
    return r if "." in r else r + ".0"


def _ints(xs):
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"


def broadcast_shapes(a, b):
    """The numpy broadcast of shapes ``a`` and ``b`` (ValueError if none)."""
    ra, rb = list(a), list(b)
    n = max(len(ra), len(rb))
    ra = [1] * (n - len(ra)) + ra
    rb = [1] * (n - len(rb)) + rb
    out = []
    for x, y in zip(ra, rb):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"shapes {list(a)} and {list(b)} do not broadcast")
        out.append(y if x == 1 else x)
    return out


class Value:
    """An SSA value: its shape, element type and defining op (None for a
    function argument)."""

    def __init__(self, shape, dtype, op=None, arg=None):
        self.shape = [int(d) for d in shape]
        self.dtype = dtype
        self.op = op
        self.arg = arg
        self.name = None          # assigned when printed

    @property
    def rank(self):
        return len(self.shape)

    @property
    def numel(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def type(self):
        return _fmt_shape(self.shape, self.dtype)

    def __repr__(self):
        return f"Value({self.type})"


class Op:
    """One recorded op. ``fmt`` renders its text from the printed operand
    names: ``fmt(names) -> str`` (everything after ``%r = ``)."""

    def __init__(self, kind, operands, result, fmt, loc=None, attrs=None):
        self.kind = kind
        self.operands = list(operands)
        self.result = result
        self.fmt = fmt
        self.loc = loc
        self.attrs = attrs or {}
        result.op = self


class Argument:
    """A function argument: a real input (``param`` None) or a parameter
    named ``param`` with its numpy ``data``."""

    def __init__(self, value, name, param=None, data=None):
        self.value, self.name, self.param, self.data = value, name, param, data


class Builder:
    """Collects the arguments, ops and results of one graph function."""

    def __init__(self, func_name="main"):
        self.func_name = func_name
        self.args = []
        self.ops = []
        self.results = []
        self._params = {}
        self._reductions = {}
        self.loc = None           # location given to the ops recorded next

    # --- arguments -------------------------------------------------------

    def input(self, shape, dtype, name=None):
        v = Value(shape, dtype)
        a = Argument(v, name or f"input{len(self.inputs())}")
        v.arg = a
        self.args.append(a)
        return v

    def inputs(self):
        return [a for a in self.args if a.param is None]

    def params(self):
        return [a for a in self.args if a.param is not None]

    def param(self, name, data, dtype):
        """A parameter argument holding ``data`` (converted to ``dtype``);
        one argument per distinct name (a second call with the same name and
        equal data returns the first)."""
        # bf16 data is kept as float32 here and rounded when written.
        npdt = np.float32 if dtype == "bf16" else NUMPY_OF[dtype]
        data = np.ascontiguousarray(np.asarray(data).astype(npdt))
        if name in self._params:
            old = self._params[name]
            if old.data.shape == data.shape and old.data.dtype == data.dtype \
                    and np.array_equal(old.data, data):
                return old.value
            i = 1
            while f"{name}.{i}" in self._params:
                i += 1
            name = f"{name}.{i}"
        v = Value(data.shape, dtype)
        a = Argument(v, name, param=name, data=data)
        v.arg = a
        self.args.append(a)
        self._params[name] = a
        return v

    def weights(self):
        """The parameters' data for write_safetensors, in argument order."""
        from .safetensors import f32_to_bf16_bits
        out = {}
        for a in self.params():
            if a.value.dtype == "bf16":
                out[a.param] = (f32_to_bf16_bits(a.data), "BF16")
            else:
                out[a.param] = a.data
        return out

    def output(self, value):
        self.results.append(value)

    # --- recording -------------------------------------------------------

    def _op(self, kind, operands, shape, dtype, fmt, attrs=None):
        r = Value(shape, dtype)
        self.ops.append(Op(kind, operands, r, fmt, self.loc, attrs))
        return r

    def constant(self, value, dtype, shape=()):
        """A splat constant (``arith.constant dense<v>``), scalar by default."""
        if dtype in FLOAT_TYPES:
            lit = _fmt_float(value, dtype)
        elif dtype == "i1":
            lit = "true" if value else "false"
        else:
            lit = str(int(value))
        t = _fmt_shape(shape, dtype)
        return self._op("constant", [], shape, dtype,
                        lambda n: f"arith.constant dense<{lit}> : {t}",
                        attrs={"value": float(value)})

    # --- elementwise -----------------------------------------------------

    # An elementwise op on a reshaped value is done before the reshape, on
    # the value the reshape read, and its result reshaped (a view): so it can
    # fuse into the kernel that computes that value (a GEMM's epilogue; a
    # reshape stops fusion). torch writes a Linear on a 3-D input as
    # view(addmm(...)) followed by its activation and residual add.

    @staticmethod
    def _reshape_source(v):
        """The op-computed value a reshape made ``v`` from, else None."""
        if v.op is None or v.op.kind != "reshape":
            return None
        src = v.op.operands[0]
        return src if src.op is not None and src.op.kind != "constant" else None

    def _before_reshape(self, a, b, shape):
        """(a', b') over the shape a reshaped operand had before its reshape,
        or None. The other operand must have the reshaped shape and be a
        reshape of that shape, an argument or a constant (reshaped alike), or
        vary only along trailing dims the reshape kept (a bias)."""
        for i, (x, y) in enumerate(((a, b), (b, a))):
            src = self._reshape_source(x)
            if src is None or list(x.shape) != list(shape):
                continue
            if list(y.shape) == list(shape):
                y_src = y.op.operands[0] if y.op is not None and y.op.kind == "reshape" \
                    else None
                if not (y.op is None or y.op.kind == "constant" or
                        (y_src is not None and y_src.shape == src.shape)):
                    continue  # y may be an epilogue candidate itself
                y2 = self.reshape(y, src.shape)
            else:
                ys = list(y.shape)
                while ys and ys[0] == 1:
                    ys.pop(0)
                kept = 0
                while kept < min(len(src.shape), len(shape)) and \
                        src.shape[-1 - kept] == shape[-1 - kept]:
                    kept += 1
                if len(ys) > kept:
                    continue
                y2 = y if y.rank <= src.rank else self.reshape(y, ys)
            return (src, y2) if i == 0 else (y2, src)
        return None

    def binary(self, kind, a, b, _move=True):
        assert a.dtype == b.dtype, (kind, a, b)
        shape = broadcast_shapes(a.shape, b.shape)
        moved = self._before_reshape(a, b, shape) if _move else None
        if moved is not None:
            return self.reshape(self.binary(kind, *moved, _move=False), shape)
        return self._op(kind, [a, b], shape, a.dtype,
                        lambda n: f"kgraph.{kind} {n[0]}, {n[1]} : {a.type}, {b.type}")

    def unary(self, kind, x, attr="", attrs=None):
        src = self._reshape_source(x)
        if src is not None:
            return self.reshape(self.unary(kind, src, attr, attrs), x.shape)
        return self._op(kind, [x], x.shape, x.dtype,
                        lambda n: f"kgraph.{kind} {n[0]}{attr} : {x.type}",
                        attrs=attrs or {"approximate": "approximate" in attr})

    def clamp(self, x, lo, hi):
        attr = (f" {{max = {_fmt_float(hi, 'f64')} : f64, "
                f"min = {_fmt_float(lo, 'f64')} : f64}}")
        return self.unary("clamp", x, attr, attrs={"min": lo, "max": hi})

    def compare(self, direction, a, b):
        """``kgraph.compare``: an i1 tensor of the broadcast shape."""
        assert a.dtype == b.dtype, (direction, a, b)
        shape = broadcast_shapes(a.shape, b.shape)
        return self._op("compare", [a, b], shape, "i1",
                        lambda n: f"kgraph.compare {direction}, {n[0]}, {n[1]} : "
                                  f"{a.type}, {b.type}",
                        attrs={"direction": direction})

    def select(self, cond, a, b):
        """``kgraph.select``: ``a`` where ``cond`` (i1) holds, else ``b``."""
        assert cond.dtype == "i1" and a.dtype == b.dtype, (cond, a, b)
        shape = broadcast_shapes(broadcast_shapes(cond.shape, a.shape), b.shape)
        return self._op("select", [cond, a, b], shape, a.dtype,
                        lambda n: f"kgraph.select {n[0]}, {n[1]}, {n[2]} : "
                                  f"{cond.type}, {a.type}, {b.type}")

    def cast(self, x, dtype):
        if dtype == x.dtype:
            return x
        out = _fmt_shape(x.shape, dtype)
        return self._op("cast", [x], x.shape, dtype,
                        lambda n: f"kgraph.cast {n[0]} : {x.type} to {out}")

    # --- structured ------------------------------------------------------

    def matmul(self, a, b, result_dtype=None):
        """``a @ b`` for rank-2 or rank-3 (same batch) operands; an operand
        produced by a transpose of its last two dims becomes a flag."""
        a, ta = self._split_last2_transpose(a)
        b, tb = self._split_last2_transpose(b)
        m = a.shape[-1] if ta else a.shape[-2]
        k = a.shape[-2] if ta else a.shape[-1]
        kb = b.shape[-1] if tb else b.shape[-2]
        n = b.shape[-2] if tb else b.shape[-1]
        assert k == kb and a.rank == b.rank and a.rank in (2, 3), (a, b)
        shape = ([a.shape[0]] if a.rank == 3 else []) + [m, n]
        rd = result_dtype or a.dtype
        flags = []
        if ta:
            flags.append("transpose_a")
        if tb:
            flags.append("transpose_b")
        fl = (" {" + ", ".join(flags) + "}") if flags else ""
        out = _fmt_shape(shape, rd)
        return self._op("matmul", [a, b], shape, rd,
                        lambda n: f"kgraph.matmul {n[0]}, {n[1]}{fl} : "
                                  f"{a.type}, {b.type} -> {out}",
                        attrs={"transpose_a": ta, "transpose_b": tb})

    def _split_last2_transpose(self, v):
        """(u, True) when ``v`` is ``u`` with its last two dims swapped: ``v``
        is a transpose whose permutation swaps them last (the rest of the
        permutation stays a transpose of its own, e.g. the head split of
        attention); else (v, False)."""
        if v.op is None or v.op.kind != "transpose" or v.rank < 2:
            return v, False
        p = list(v.op.attrs["permutation"])
        if p[-1] < p[-2]:
            inner = p[:-2] + [p[-1], p[-2]]
            return self.transpose(v.op.operands[0], inner), True
        return v, False

    def conv2d(self, x, w, layout, strides, padding, dilations, groups):
        """``padding`` is [top, bottom, left, right]."""
        if layout == "nchw":
            n, c, h, wd = x.shape
            f, _, kh, kw = w.shape
        else:
            n, h, wd, c = x.shape
            f, kh, kw, _ = w.shape
        oh = (h + padding[0] + padding[1] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
        ow = (wd + padding[2] + padding[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
        shape = [n, f, oh, ow] if layout == "nchw" else [n, oh, ow, f]
        attrs = []
        if layout != "nchw":
            attrs.append(f"layout = {layout}")
        if list(strides) != [1, 1]:
            attrs.append(f"strides = {_ints(strides)}")
        if list(padding) != [0, 0, 0, 0]:
            attrs.append(f"padding = {_ints(padding)}")
        if list(dilations) != [1, 1]:
            attrs.append(f"dilations = {_ints(dilations)}")
        if groups != 1:
            attrs.append(f"groups = {int(groups)}")
        at = (" " + " ".join(attrs)) if attrs else ""
        out = _fmt_shape(shape, x.dtype)
        return self._op("conv2d", [x, w], shape, x.dtype,
                        lambda n_: f"kgraph.conv2d {n_[0]}, {n_[1]}{at} : "
                                   f"{x.type}, {w.type} -> {out}",
                        attrs={"layout": layout, "strides": list(strides),
                               "padding": list(padding), "dilations": list(dilations),
                               "groups": int(groups)})

    def pool2d(self, kind, x, kernel, strides, padding, layout):
        if layout == "nchw":
            n, c, h, w = x.shape
        else:
            n, h, w, c = x.shape
        oh = (h + padding[0] + padding[1] - kernel[0]) // strides[0] + 1
        ow = (w + padding[2] + padding[3] - kernel[1]) // strides[1] + 1
        shape = [n, c, oh, ow] if layout == "nchw" else [n, oh, ow, c]
        attrs = [f"kernel = {_ints(kernel)}"]
        if list(strides) != [1, 1]:
            attrs.append(f"strides = {_ints(strides)}")
        if list(padding) != [0, 0, 0, 0]:
            attrs.append(f"padding = {_ints(padding)}")
        if layout != "nchw":
            attrs.append(f"layout = {layout}")
        at = " ".join(attrs)
        return self._op("pool2d", [x], shape, x.dtype,
                        lambda n_: f"kgraph.pool2d {kind} {n_[0]} {at} : {x.type}",
                        attrs={"kind": kind, "kernel": list(kernel), "strides": list(strides),
                               "padding": list(padding), "layout": layout})

    def reduce(self, kind, x, axes, keep_dims=False):
        axes = sorted({a % x.rank for a in axes}) if x.rank else []
        if not axes:
            return x
        if keep_dims:
            shape = [1 if i in axes else d for i, d in enumerate(x.shape)]
        else:
            shape = [d for i, d in enumerate(x.shape) if i not in axes]
        kd = " keep_dims" if keep_dims else ""
        # The same reduction of the same value is built once (softmax's row
        # maximum also answers a "row is all -inf" test; kgraph-fuse sees no
        # common subexpressions).
        key = (kind, id(x), tuple(axes), bool(keep_dims))
        hit = self._reductions.get(key)
        if hit is not None and hit.op.operands[0] is x:
            return hit
        r = self._op("reduce", [x], shape, x.dtype,
                     lambda n: f"kgraph.reduce {kind} {n[0]} axes = "
                               f"{_ints(axes)}{kd} : {x.type}",
                     attrs={"kind": kind, "axes": axes, "keep_dims": keep_dims})
        self._reductions[key] = r
        return r

    # --- data movement ---------------------------------------------------

    def reshape(self, x, shape):
        shape = [int(d) for d in shape]
        assert int(np.prod(shape, dtype=np.int64)) == x.numel, (x, shape)
        while x.op is not None and x.op.kind == "reshape":
            x = x.op.operands[0]
        if shape == x.shape:
            return x
        if x.op is not None and x.op.kind == "reduce":
            # A reduction reshaped to its other form (size-1 dims kept or
            # dropped) is that reduction with keep_dims flipped.
            src, at = x.op.operands[0], x.op.attrs
            kept = [1 if i in at["axes"] else d for i, d in enumerate(src.shape)]
            dropped = [d for i, d in enumerate(src.shape) if i not in at["axes"]]
            if shape == (dropped if at["keep_dims"] else kept):
                return self.reduce(at["kind"], src, at["axes"], not at["keep_dims"])
        out = _fmt_shape(shape, x.dtype)
        return self._op("reshape", [x], shape, x.dtype,
                        lambda n: f"kgraph.reshape {n[0]} : {x.type} to {out}")

    def transpose(self, x, perm):
        perm = [int(p) % max(x.rank, 1) for p in perm]
        assert sorted(perm) == list(range(x.rank)), (x, perm)
        if x.op is not None and x.op.kind == "transpose":
            inner = x.op.attrs["permutation"]
            x = x.op.operands[0]
            perm = [inner[p] for p in perm]
        shape = [x.shape[p] for p in perm]
        if perm == list(range(x.rank)):
            return x
        moved = [p for p in perm if x.shape[p] != 1]
        if moved == sorted(moved):
            return self.reshape(x, shape)
        return self._op("transpose", [x], shape, x.dtype,
                        lambda n: f"kgraph.transpose {n[0]}, permutation = "
                                  f"{_ints(perm)} : {x.type}",
                        attrs={"permutation": perm})

    def slice(self, x, offsets, sizes, strides):
        if list(offsets) == [0] * x.rank and list(sizes) == x.shape and \
                list(strides) == [1] * x.rank:
            return x
        return self._op("slice", [x], sizes, x.dtype,
                        lambda n: f"kgraph.slice {n[0]} offsets = {_ints(offsets)} "
                                  f"sizes = {_ints(sizes)} strides = "
                                  f"{_ints(strides)} : {x.type}",
                        attrs={"offsets": list(offsets), "sizes": list(sizes),
                               "strides": list(strides)})

    def concat(self, xs, axis):
        if len(xs) == 1:
            return xs[0]
        shape = list(xs[0].shape)
        shape[axis] = sum(v.shape[axis] for v in xs)
        types = ", ".join(v.type for v in xs)
        return self._op("concat", xs, shape, xs[0].dtype,
                        lambda n: f"kgraph.concat {', '.join(n)} axis = {axis} : {types}",
                        attrs={"axis": axis})

    def broadcast_to(self, x, shape):
        shape = [int(d) for d in shape]
        if shape == x.shape:
            return x
        out = _fmt_shape(shape, x.dtype)
        return self._op("broadcast_to", [x], shape, x.dtype,
                        lambda n: f"kgraph.broadcast_to {n[0]} : {x.type} to {out}")

    # --- printing --------------------------------------------------------

    def live_ops(self):
        """The recorded ops the results depend on, in order."""
        live = set()
        stack = list(self.results)
        while stack:
            v = stack.pop()
            if v.op is None or id(v.op) in live:
                continue
            live.add(id(v.op))
            stack.extend(v.op.operands)
        return [op for op in self.ops if id(op) in live]

    def used_args(self):
        used = set()
        for op in self.live_ops():
            for v in op.operands:
                if v.arg is not None:
                    used.add(id(v.arg))
        for v in self.results:
            if v.arg is not None:
                used.add(id(v.arg))
        return used

    def function_text(self):
        used = self.used_args()
        # Parameters nothing uses (e.g. a folded batch norm's statistics) are
        # left out; real inputs always stay, in their order.
        args = [a for a in self.args if a.param is None or id(a) in used]
        self.args = args
        self._params = {a.param: a for a in args if a.param is not None}
        lines = []
        sig = []
        for i, a in enumerate(args):
            a.value.name = f"%arg{i}"
            attr = f' {{kgraph.param = "{a.param}"}}' if a.param else ""
            sig.append(f"{a.value.name}: {a.value.type}{attr}")
        rtypes = ", ".join(v.type for v in self.results)
        if len(self.results) != 1:
            rtypes = f"({rtypes})"
        lines.append(f"  func.func @{self.func_name}(" + ", ".join(sig) +
                     f") -> {rtypes} {{")
        for i, op in enumerate(self.live_ops()):
            op.result.name = f"%{i}"
            text = op.fmt([v.name for v in op.operands])
            loc = _fmt_loc(op.loc)
            lines.append(f"    {op.result.name} = {text}{loc}")
        names = ", ".join(v.name for v in self.results)
        types = ", ".join(v.type for v in self.results)
        lines.append(f"    return {names} : {types}")
        lines.append("  }")
        return "\n".join(lines)

    def module_text(self, weights_file=None, header=""):
        body = self.function_text()
        attr = ""
        if weights_file and self.params():
            attr = f' attributes {{kgraph.weights = "{_escape(weights_file)}"}}'
        return f"{header}module{attr} {{\n{body}\n}}\n"

    def op_counts(self):
        counts = {}
        for op in self.live_ops():
            counts[op.kind] = counts.get(op.kind, 0) + 1
        return counts


def _fmt_loc(loc):
    """`` loc("name")`` or `` loc("name"("file":line:0))`` for a location given
    as a name or (name, "file:line" or None); empty for None."""
    if not loc:
        return ""
    if isinstance(loc, tuple):
        name, where = loc
    else:
        name, where = loc, None
    if where and ":" in where:
        f, _, line = where.rpartition(":")
        if line.isdigit():
            return f' loc("{_escape(name)}"("{_escape(f)}":{line}:0))'
    return f' loc("{_escape(name)}")'


def _escape(s):
    return str(s).replace("\\", "\\\\").replace('"', '\\"')
