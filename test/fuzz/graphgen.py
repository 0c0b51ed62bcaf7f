"""Random verifier-valid kgraph graphs (the generator of test/fuzz/kgraph_fuzz.py
and of the `fuzz` GPU suite).

``generate(seed)`` returns a Graph: function arguments, a list of ops (each
one line of the custom assembly form, with the operands, attributes and
result type it was built from) and the values the function returns. Every op
of the dialect is drawn (elementwise, cast, compare, select, matmul, conv2d,
pool2d, reduce, reshape, transpose, slice, concat, broadcast_to, splat and
small dense arith.constant), over every element type, both layouts,
broadcasting operands (lower rank, size-1 dims, rank-0 and splat
constants) and odd shapes (1, primes, powers of two and their neighbours),
and chains of reductions of the same rows through elementwise ops over the
rows (softmax, centering and variance, RMS-style scaling: multi-reduction
groups).
The generator builds only what the verifiers accept; the fuzzer treats a
verifier error as a bug of the generator.

``Graph.torch_ref()`` returns a torch function computing the graph in
float64 (floats) or int64 (integers), for the GPU cases; ``Graph.gpu_safe``
says whether that reference is well conditioned for random inputs in the
domains ``Graph.input_domain`` gives (the GPU suite draws only such graphs).
"""

import math
import re
import random

FLOATS = ("f32", "f16", "bf16")
INTS = ("i8", "i32")
DTYPES = FLOATS + INTS
DATA_MOVEMENT = ("reshape", "transpose", "slice", "concat", "broadcast_to")
BINARY = ("add", "sub", "mul", "div", "max", "min", "pow")
UNARY_ANY = ("neg", "abs", "relu")
UNARY_FLOAT = ("exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "gelu")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
#: Every op name the generator can emit (for coverage statistics).
ALL_OPS = (BINARY + UNARY_ANY + UNARY_FLOAT +
           ("clamp", "cast", "compare", "select", "matmul", "conv2d", "pool2d",
            "reduce", "constant") + DATA_MOVEMENT)

# Dimension sizes: 1, small primes, powers of two and their neighbours.
_SMALL_DIMS = (1, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 32, 33)
_LARGE_DIMS = (48, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1000)
_MAX_ELEMENTS = 1 << 21


def ttype(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def numel(shape):
    return math.prod(shape)


def broadcast_shapes(*shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        assert len(dims) <= 1, shapes
        out.append(dims.pop() if dims else 1)
    return tuple(out)


class Value:
    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    @property
    def type(self):
        return ttype(self.shape, self.dtype)

    @property
    def rank(self):
        return len(self.shape)


class Node:
    """One op: ``kind`` (op name), ``operands``, ``attrs`` (for the reference),
    ``result``, and ``text``, the op's line."""

    def __init__(self, kind, operands, attrs, result, text):
        self.kind, self.operands, self.attrs = kind, operands, attrs
        self.result, self.text = result, text


class Graph:
    def __init__(self, seed):
        self.seed = seed
        self.args, self.nodes, self.outputs = [], [], []
        self.gpu_safe = True        # cleared by ops whose reference is fragile
        self.input_domain = {}      # arg name -> (lo, hi)
        self.tags = set()           # op kinds, dtypes, layouts, patterns

    @property
    def ops(self):
        return [n.kind for n in self.nodes]

    @property
    def has_data_movement(self):
        return any(n.kind in DATA_MOVEMENT for n in self.nodes)

    def mlir(self, name="main"):
        args = ", ".join(f"%{a.name}: {a.type}" for a in self.args)
        results = ", ".join(o.type for o in self.outputs)
        lines = [f"func.func @{name}({args}) -> ({results}) {{"]
        lines += ["  " + n.text for n in self.nodes]
        lines.append("  return " + ", ".join("%" + o.name for o in self.outputs)
                     + " : " + results)
        lines.append("}")
        return "\n".join(lines) + "\n"


#: Bounds of the small graphs (``small=True``) the CPU kernel interpreter
#: runs (test/Tools/check_kernels_interp.py): elements per value and
#: multiply-adds per matmul or conv2d.
SMALL_MAX_ELEMENTS = 1 << 14
SMALL_MAX_MACS = 1 << 20


class _Builder:
    def __init__(self, seed, small=False):
        self.small = small
        self.max_elements = SMALL_MAX_ELEMENTS if small else _MAX_ELEMENTS
        self.rnd = random.Random(seed)
        self.g = Graph(seed)
        self.values = []        # values ops may read
        self.count = 0

    # --- helpers -------------------------------------------------------------
    def chance(self, p):
        return self.rnd.random() < p

    def dim(self, large=0.15):
        if self.small:
            return self.rnd.choice(_SMALL_DIMS)
        return self.rnd.choice(_LARGE_DIMS if self.chance(large) else _SMALL_DIMS)

    def shape(self, rank, large=0.15):
        for _ in range(20):
            s = tuple(self.dim(large) for _ in range(rank))
            if numel(s) <= self.max_elements:
                return s
        return tuple(self.rnd.choice(_SMALL_DIMS) for _ in range(rank))

    def fresh(self, prefix="v"):
        self.count += 1
        return f"{prefix}{self.count}"

    def arg(self, shape, dtype, lo=None, hi=None, const_ok=True):
        if lo is None:
            lo, hi = ((-2.0, 2.0) if dtype in FLOATS else
                      (-8, 8) if dtype == "i8" else (-1000, 1000))
        # Now and then a splat constant in the argument's place: a constant
        # as the primary operand of any op (a GEMM operand, a pool's or a
        # transpose's input), with a value in the argument's domain.
        if const_ok and self.chance(0.04):
            return self.const_operand(shape, dtype, lo, hi)
        v = Value(self.fresh("a"), shape, dtype)
        self.g.args.append(v)
        self.values.append(v)
        self.g.input_domain[v.name] = (lo, hi)
        self.g.tags.add("dtype:" + dtype)
        return v

    def emit(self, kind, operands, attrs, shape, dtype, text):
        v = Value(self.fresh(), shape, dtype)
        self.g.nodes.append(Node(kind, operands, attrs, v, f"%{v.name} = {text}"))
        self.values.append(v)
        self.g.tags.add("op:" + kind)
        self.g.tags.add("dtype:" + dtype)
        return v

    def pick(self, pred=lambda v: True, recent=True):
        cands = [v for v in self.values if pred(v)]
        if not cands:
            return None
        if recent and self.chance(0.6):
            return cands[-1]
        return self.rnd.choice(cands)

    def broadcast_partner(self, shape):
        """A shape that broadcasts with ``shape`` to ``shape``: trailing dims
        kept or set to 1, leading dims maybe dropped."""
        r = self.rnd.random()
        if r < 0.35:
            return tuple(shape)
        if r < 0.5:
            return ()
        s = list(shape)
        if s and self.chance(0.5):
            s = s[self.rnd.randint(1, len(s)):]
        s = [1 if self.chance(0.4) else d for d in s]
        return tuple(s)

    def constant(self, shape, dtype, splat=True):
        """arith.constant: a splat (usually) or a small dense constant."""
        def lit():
            if dtype == "i1":
                return self.rnd.choice(["true", "false"])
            if dtype in INTS:
                return str(self.rnd.randint(-5, 5))
            return repr(self.rnd.choice([0.0, 1.0, -1.0, 0.5, 2.0, 3.25, -0.125]))
        if splat or numel(shape) > 16:
            body = lit()
        else:
            def nest(dims):
                if not dims:
                    return lit()
                return "[" + ", ".join(nest(dims[1:]) for _ in range(dims[0])) + "]"
            body = nest(list(shape))
            self.g.tags.add("pattern:dense_constant")
        return self.constant_node(shape, dtype, body)

    def constant_node(self, shape, dtype, body):
        """The arith.constant node of literal ``body`` (dense<body>)."""
        v = Value(self.fresh("c"), shape, dtype)
        self.g.nodes.append(Node("constant", [], {"literal": body}, v,
                                 f"%{v.name} = arith.constant dense<{body}> : {v.type}"))
        self.g.tags.add("op:constant")
        return v

    def const_operand(self, shape, dtype, lo, hi):
        """A splat constant in [lo, hi] that later ops may read."""
        if dtype == "i1":
            lit = self.rnd.choice(["true", "false"])
        elif dtype in INTS:
            lit = str(self.rnd.randint(max(int(lo), -5), min(int(hi), 5)))
        else:
            vals = [x for x in (0.0, 1.0, -1.0, 0.5, 2.0, 3.25, -0.125, 0.75) if lo <= x <= hi]
            lit = repr(self.rnd.choice(vals) if vals else (lo + hi) / 2)
        v = self.constant_node(shape, dtype, lit)
        self.g.tags.update(("pattern:const_operand", "dtype:" + dtype))
        self.values.append(v)
        return v

    def operand_like(self, shape, dtype, allow_const=True):
        """A second operand broadcasting with ``shape``: an existing value of
        that shape, a new argument or a splat constant."""
        pshape = self.broadcast_partner(shape)
        if pshape != tuple(shape):
            self.g.tags.add("pattern:broadcast")
        if allow_const and self.chance(0.15):
            self.g.tags.add("pattern:splat_constant")
            return self.constant(pshape, dtype, splat=not self.chance(0.35))
        same = [v for v in self.values if v.dtype == dtype and v.shape == pshape]
        if same and self.chance(0.5):
            return self.rnd.choice(same)
        return self.arg(pshape, dtype)

    # --- ops -----------------------------------------------------------------
    def op_binary(self):
        op = self.rnd.choice(BINARY)
        a = self.pick(lambda v: v.dtype in (FLOATS if op == "pow" else DTYPES))
        if a is None:
            return
        b = self.operand_like(a.shape, a.dtype)
        if self.chance(0.3):
            a, b = b, a
        shape = broadcast_shapes(a.shape, b.shape)
        if op in ("div", "pow", "log"):
            self.g.gpu_safe = False
        if op == "div" and a.dtype in INTS:
            self.g.tags.add("pattern:int_div")
        self.emit(op, [a, b], {}, shape, a.dtype,
                  f"kgraph.{op} %{a.name}, %{b.name} : {a.type}, {b.type}")

    def op_unary(self):
        op = self.rnd.choice(UNARY_ANY + UNARY_FLOAT)
        a = self.pick(lambda v: v.dtype in (FLOATS if op in UNARY_FLOAT else DTYPES))
        if a is None:
            return
        attrs, extra = {}, ""
        if op == "gelu" and self.chance(0.5):
            attrs["approximate"] = True
            extra = " {approximate}"
        if op in ("log", "sqrt", "rsqrt", "exp"):
            self.g.gpu_safe = False
        self.emit(op, [a], attrs, a.shape, a.dtype, f"kgraph.{op} %{a.name}{extra} : {a.type}")

    def op_clamp(self):
        a = self.pick(lambda v: v.dtype in DTYPES)
        if a is None:
            return
        lo = self.rnd.choice([-6.0, -1.0, -0.5, 0.0, 0.25, 1.0, -300.0])
        hi = lo + self.rnd.choice([0.0, 0.5, 1.0, 6.0, 1000.0])
        self.emit("clamp", [a], {"min": lo, "max": hi}, a.shape, a.dtype,
                  f"kgraph.clamp %{a.name} {{max = {hi!r} : f64, min = {lo!r} : f64}} : {a.type}")

    def op_cast(self):
        a = self.pick(lambda v: v.dtype in DTYPES)
        if a is None:
            return
        to = self.rnd.choice(DTYPES)
        if a.dtype in FLOATS and to in INTS:
            self.g.gpu_safe = False   # truncation of a rounded value
        self.emit("cast", [a], {}, a.shape, to, f"kgraph.cast %{a.name} : {a.type} to {ttype(a.shape, to)}")

    def op_compare(self):
        a = self.pick(lambda v: v.dtype in DTYPES)
        if a is None:
            return
        b = self.operand_like(a.shape, a.dtype)
        d = self.rnd.choice(COMPARE)
        if a.dtype in FLOATS:
            self.g.gpu_safe = False   # ties decided by rounding
        shape = broadcast_shapes(a.shape, b.shape)
        self.emit("compare", [a, b], {"direction": d}, shape, "i1",
                  f"kgraph.compare {d}, %{a.name}, %{b.name} : {a.type}, {b.type}")

    def op_select(self):
        c = self.pick(lambda v: v.dtype == "i1")
        if c is None:
            self.op_compare()
            c = self.pick(lambda v: v.dtype == "i1")
            if c is None:
                return
        t = self.pick(lambda v: v.dtype in DTYPES, recent=False)
        if t is None:
            return
        t = self.operand_like(c.shape, t.dtype) if self.chance(0.5) else t
        try:
            broadcast_shapes(c.shape, t.shape)
        except AssertionError:
            t = self.operand_like(c.shape, t.dtype)
        f = self.operand_like(broadcast_shapes(c.shape, t.shape), t.dtype)
        shape = broadcast_shapes(c.shape, t.shape, f.shape)
        self.emit("select", [c, t, f], {}, shape, t.dtype,
                  f"kgraph.select %{c.name}, %{t.name}, %{f.name} : {c.type}, {t.type}, {f.type}")

    def accumulator(self, dtype):
        return {"f32": ["f32"], "f16": ["f16", "f32"], "bf16": ["bf16", "f32"],
                "i8": ["i32"]}[dtype]

    def op_matmul(self):
        a = self.pick(lambda v: v.rank in (2, 3) and v.dtype in ("f32", "f16", "bf16", "i8"))
        if a is None:
            dt = self.rnd.choice(("f32", "f16", "bf16", "i8"))
            a = self.matmul_operand(self.shape(self.rnd.choice((2, 2, 3)), large=0.4), dt)
        ta, tb = self.chance(0.3), self.chance(0.3)
        batch = a.shape[:-2]
        if ta:
            k, m = a.shape[-2:]
        else:
            m, k = a.shape[-2:]
        n = self.dim(large=0.4)
        bshape = batch + ((n, k) if tb else (k, n))
        same = [v for v in self.values if v.shape == bshape and v.dtype == a.dtype]
        b = self.rnd.choice(same) if same and self.chance(0.5) else self.matmul_operand(
            bshape, a.dtype)
        acc = self.rnd.choice(self.accumulator(a.dtype))
        attrs = {"transpose_a": ta, "transpose_b": tb}
        flags = [f for f, on in (("transpose_a", ta), ("transpose_b", tb)) if on]
        prec = ""
        if a.dtype == "f32" and self.chance(0.3):
            attrs["precision"] = self.rnd.choice(("tf32", "ieee"))
            prec = f" precision = {attrs['precision']}"
            if attrs["precision"] == "tf32":
                self.g.tags.add("pattern:tf32")
        if acc != "f32" and a.dtype != "i8":
            self.g.tags.add("pattern:narrow_accumulator")
        attr_text = (" {" + ", ".join(flags) + "}") if flags else ""
        shape = batch + (m, n)
        self.emit("matmul", [a, b], attrs, shape, acc,
                  f"kgraph.matmul %{a.name}, %{b.name}{prec}{attr_text} : {a.type}, {b.type} -> {ttype(shape, acc)}")

    def spatial(self, v, layout):
        n, c, h, w = ((v.shape[0], v.shape[3], v.shape[1], v.shape[2]) if layout == "nhwc"
                      else v.shape)
        return n, c, h, w

    def act_shape(self, n, c, h, w, layout):
        return (n, h, w, c) if layout == "nhwc" else (n, c, h, w)

    def input4d(self, dtypes, channels=None):
        v = self.pick(lambda x: x.rank == 4 and x.dtype in dtypes)
        if v is None or self.chance(0.2):
            c = channels or self.rnd.choice((1, 2, 3, 4, 8, 16, 32))
            if self.small:
                hw = self.rnd.choice(_SMALL_DIMS)
                hw2 = hw if self.chance(0.5) else self.rnd.choice(_SMALL_DIMS)
            else:
                hw = self.rnd.choice(_SMALL_DIMS + (48, 64, 100, 127, 224))
                hw2 = hw if self.chance(0.5) else self.rnd.choice(_SMALL_DIMS + (64, 100))
            layout = self.rnd.choice(("nchw", "nhwc"))
            dt = self.rnd.choice(dtypes)
            v = self.arg(self.act_shape(self.rnd.choice((1, 1, 2, 3)), c, hw, hw2, layout), dt,
                         *((-3, 3) if dt == "i8" else (None, None)))
        return v

    def op_conv2d(self):
        if self.chance(0.12):
            return self.op_deep_conv2d()
        stencil = self.chance(0.4)   # stride 1, "same" padding, <= 4 channels
        v = self.input4d(("f32", "f16", "bf16", "i8") if not stencil else FLOATS)
        layout = self.rnd.choice(("nchw", "nhwc"))
        n, c, h, w = self.spatial(v, layout)
        self.g.tags.add("layout:" + layout)
        if stencil:
            kh, kw = self.rnd.choice((1, 3, 3, 5, 7)), self.rnd.choice((1, 3, 3, 5))
            f = self.rnd.choice((1, 2, 3, 4))
            strides, dil, groups = (1, 1), (1, 1), 1
            pad = (kh // 2, kh // 2, kw // 2, kw // 2)
            if kh % 2 == 0:
                pad = (kh // 2, kh // 2 - 1, pad[2], pad[3])
        else:
            kh, kw = self.rnd.choice((1, 2, 3, 5, 7)), self.rnd.choice((1, 3, 4, 7))
            groups = 1
            divs = [g for g in range(2, c + 1) if c % g == 0]
            if divs and self.chance(0.3):
                groups = self.rnd.choice(divs + [c])
            f = groups * self.rnd.choice((1, 2, 3, 8, 16))
            strides = (self.rnd.choice((1, 1, 2, 3)), self.rnd.choice((1, 1, 2, 4)))
            dil = (self.rnd.choice((1, 1, 1, 2)), self.rnd.choice((1, 1, 2, 3)))
            pad = tuple(self.rnd.choice((0, 0, 1, 2, 3)) for _ in range(4))
        oh = (h + pad[0] + pad[1] - dil[0] * (kh - 1) - 1) // strides[0] + 1
        ow = (w + pad[2] + pad[3] - dil[1] * (kw - 1) - 1) // strides[1] + 1
        if oh <= 0 or ow <= 0:
            return
        cg = c // groups
        fshape = (f, kh, kw, cg) if layout == "nhwc" else (f, cg, kh, kw)
        if self.chance(0.1) and numel(fshape) <= 16:
            filt = self.constant(fshape, v.dtype, splat=False)
        else:
            filt = self.arg(fshape, v.dtype, *((-3, 3) if v.dtype == "i8" else (-1.0, 1.0)))
        acc = self.rnd.choice(self.accumulator(v.dtype))
        attrs = {"layout": layout, "strides": strides, "padding": pad,
                 "dilations": dil, "groups": groups}
        text = f"kgraph.conv2d %{v.name}, %{filt.name}"
        if layout == "nhwc" or self.chance(0.3):
            text += f" layout = {layout}"
        text += f" strides = [{strides[0]}, {strides[1]}] padding = [{', '.join(map(str, pad))}]"
        text += f" dilations = [{dil[0]}, {dil[1]}]"
        if groups != 1:
            text += f" groups = {groups}"
            self.g.tags.add("pattern:grouped_conv")
        if v.dtype == "f32" and self.chance(0.2):
            attrs["precision"] = "tf32"
            text += " precision = tf32"
        shape = self.act_shape(n, f, oh, ow, layout)
        self.emit("conv2d", [v, filt], attrs, shape, acc,
                  text + f" : {v.type}, {filt.type} -> {ttype(shape, acc)}")

    def op_deep_conv2d(self):
        """A conv over many channels and few pixels (a batch-1 CNN's last
        stages), which kgraph-split-k-convs splits over channel slices: a
        fresh input of 256-1024 channels, 1x1 or 3x3 filters, few filters in
        small graphs."""
        layout = self.rnd.choice(("nchw", "nhwc"))
        dt = self.rnd.choice(("f32", "f16", "bf16", "i8"))
        c = self.rnd.choice((256, 512, 768, 1024))
        k = self.rnd.choice((1, 3))
        if self.small:
            f = max(1, min(self.rnd.choice((4, 8, 16, 24)), self.max_elements // (k * k * c)))
            h, w = self.rnd.choice((1, 2, 3, 4)), self.rnd.choice((1, 2, 3, 5))
        else:
            f = self.rnd.choice((8, 40, 64, 128, 512))
            h, w = self.rnd.choice((3, 5, 7, 9, 14)), self.rnd.choice((3, 5, 7, 14))
        n = self.rnd.choice((1, 1, 2))
        if n * h * w * c > self.max_elements or f * k * k * c > self.max_elements:
            return
        stride = self.rnd.choice((1, 1, 2))
        pad = tuple(self.rnd.choice((0, 1)) if k == 3 else 0 for _ in range(4))
        oh = (h + pad[0] + pad[1] - k) // stride + 1
        ow = (w + pad[2] + pad[3] - k) // stride + 1
        if oh <= 0 or ow <= 0:
            return
        lo_hi = (-3, 3) if dt == "i8" else (-1.0, 1.0)
        v = self.arg(self.act_shape(n, c, h, w, layout), dt, *lo_hi)
        fshape = (f, k, k, c) if layout == "nhwc" else (f, c, k, k)
        filt = self.arg(fshape, dt, *lo_hi)
        acc = self.rnd.choice(self.accumulator(dt))
        attrs = {"layout": layout, "strides": (stride, stride), "padding": pad,
                 "dilations": (1, 1), "groups": 1}
        text = (f"kgraph.conv2d %{v.name}, %{filt.name} layout = {layout} "
                f"strides = [{stride}, {stride}] padding = [{', '.join(map(str, pad))}]")
        self.g.tags.add("pattern:deep_conv")
        shape = self.act_shape(n, f, oh, ow, layout)
        self.emit("conv2d", [v, filt], attrs, shape, acc,
                  text + f" : {v.type}, {filt.type} -> {ttype(shape, acc)}")

    def op_pool2d(self):
        kind = "avg" if self.chance(0.4) else "max"
        v = self.input4d(FLOATS if kind == "avg" else DTYPES,
                         channels=self.rnd.choice((1, 2, 3, 4, 5, 8, 13)))
        layout = self.rnd.choice(("nchw", "nhwc"))
        self.g.tags.add("layout:" + layout)
        n, c, h, w = self.spatial(v, layout)
        if self.chance(0.5):   # stencil-shaped: stride 1, same padding
            kh, kw = self.rnd.choice((1, 3, 5, 7)), self.rnd.choice((1, 3, 5))
            strides = (1, 1)
            pad = (kh // 2, kh // 2, kw // 2, kw // 2)
        else:
            kh, kw = self.rnd.randint(1, 7), self.rnd.randint(1, 7)
            strides = (self.rnd.randint(1, 4), self.rnd.randint(1, 4))
            pad = (self.rnd.randint(0, kh - 1), self.rnd.randint(0, kh - 1),
                   self.rnd.randint(0, kw - 1), self.rnd.randint(0, kw - 1))
        oh = (h + pad[0] + pad[1] - kh) // strides[0] + 1
        ow = (w + pad[2] + pad[3] - kw) // strides[1] + 1
        if oh <= 0 or ow <= 0:
            return
        text = (f"kgraph.pool2d {kind} %{v.name} kernel = [{kh}, {kw}] strides = "
                f"[{strides[0]}, {strides[1]}] padding = [{', '.join(map(str, pad))}]")
        if layout == "nhwc" or self.chance(0.3):
            text += f" layout = {layout}"
        attrs = {"kind": kind, "kernel": (kh, kw), "strides": strides, "padding": pad,
                 "layout": layout}
        self.emit("pool2d", [v], attrs, self.act_shape(n, c, oh, ow, layout), v.dtype,
                  text + f" : {v.type}")

    def op_reduce(self):
        kind = self.rnd.choice(("sum", "max", "mean"))
        v = self.pick(lambda x: x.rank >= 1 and x.dtype in (FLOATS if kind == "mean" else DTYPES))
        if v is None:
            return
        axes = sorted(self.rnd.sample(range(v.rank), self.rnd.randint(1, v.rank)))
        if self.chance(0.3):
            self.rnd.shuffle(axes)
        keep = self.chance(0.4)
        shape = tuple((1 if i in axes else d) for i, d in enumerate(v.shape)
                      if keep or i not in axes)
        if kind == "sum" and v.dtype in FLOATS:
            self.g.gpu_safe = self.g.gpu_safe and v.dtype == "f32"
        self.emit("reduce", [v], {"kind": kind, "axes": tuple(axes), "keep_dims": keep},
                  shape, v.dtype,
                  f"kgraph.reduce {kind} %{v.name} axes = [{', '.join(map(str, axes))}]"
                  f"{' keep_dims' if keep else ''} : {v.type}")

    def _reduce(self, v, kind, axes, keep):
        shape = tuple((1 if i in axes else d) for i, d in enumerate(v.shape)
                      if keep or i not in axes)
        if kind == "sum" and v.dtype in FLOATS:
            self.g.gpu_safe = self.g.gpu_safe and v.dtype == "f32"
        return self.emit("reduce", [v], {"kind": kind, "axes": tuple(axes), "keep_dims": keep},
                         shape, v.dtype,
                         f"kgraph.reduce {kind} %{v.name} axes = [{', '.join(map(str, axes))}]"
                         f"{' keep_dims' if keep else ''} : {v.type}")

    def op_nested_reduce(self):
        """A small reduction (at most 8 elements per result) whose result a
        reduction of other rows reads: kgraph-fuse evaluates the small one
        inline in the other's kernel (the N-body's sum over x, y, z inside
        the sum over bodies)."""
        v = self.pick(lambda x: x.rank >= 2 and x.dtype in DTYPES
                      and any(1 < d <= 8 for d in x.shape))
        if v is None:
            return
        small = [i for i, d in enumerate(v.shape) if 1 < d <= 8]
        axes = [self.rnd.choice(small)]
        rest = [i for i in small if i != axes[0] and v.shape[i] * v.shape[axes[0]] <= 8]
        if rest and self.chance(0.3):
            axes = sorted(axes + [self.rnd.choice(rest)])
        floats = v.dtype in FLOATS
        inner = self._reduce(v, self.rnd.choice(("sum", "max", "mean") if floats
                                                else ("sum", "max")),
                             axes, self.chance(0.5))
        if inner is None or inner.rank == 0:
            return
        outer_axes = sorted(self.rnd.sample(range(inner.rank),
                                            self.rnd.randint(1, inner.rank)))
        self._reduce(inner, self.rnd.choice(("sum", "max")), outer_axes, self.chance(0.4))
        self.g.tags.add("nested_reduce")

    def op_row_chain(self):
        """Reductions of the same rows chained through elementwise ops over
        the rows (a multi-reduction group: softmax, centering and variance,
        RMS-style scaling), their per-row results broadcast back along the
        rows (keep_dims, or without it when the reduced axes lead)."""
        v = self.pick(lambda x: x.rank >= 1 and x.dtype in DTYPES)
        if v is None:
            return
        ints = v.dtype in INTS
        k = self.rnd.randint(1, v.rank)
        axes = (list(range(k)) if self.chance(0.2) else
                sorted(self.rnd.sample(range(v.rank), k)))
        kept = tuple(1 if i in axes else d for i, d in enumerate(v.shape))
        leading = axes == list(range(len(axes)))

        def reduce(kind, x, keep=True):
            shape = kept if keep else tuple(d for i, d in enumerate(x.shape) if i not in axes)
            if kind == "sum" and not ints:
                self.g.gpu_safe = self.g.gpu_safe and x.dtype == "f32"
            return self.emit("reduce", [x], {"kind": kind, "axes": tuple(axes), "keep_dims": keep},
                             shape, x.dtype,
                             f"kgraph.reduce {kind} %{x.name} axes = [{', '.join(map(str, axes))}]"
                             f"{' keep_dims' if keep else ''} : {x.type}")

        def binary(op, a, b):
            shape = broadcast_shapes(a.shape, b.shape)
            return self.emit(op, [a, b], {}, shape, a.dtype,
                             f"kgraph.{op} %{a.name}, %{b.name} : {a.type}, {b.type}")

        self.g.tags.add("pattern:multi_reduction")
        pattern = self.rnd.choice(("center", "scale") if ints else ("softmax", "center", "scale"))
        # Without keep_dims the per-row values broadcast along the rows only
        # when the reduced axes lead.
        keep = not leading or self.chance(0.5)
        if pattern == "softmax":
            # exp(x - max) <= 1 and the row sum >= 1: well conditioned.
            m = reduce("max", v, keep)
            d = binary("sub", v, m)
            e = self.emit("exp", [d], {}, d.shape, d.dtype, f"kgraph.exp %{d.name} : {d.type}")
            s_ = reduce("sum", e, keep)
            binary("div", e, s_)
            return
        first = "max" if ints else self.rnd.choice(("mean", "max"))
        if pattern == "center":
            mu = reduce(first, v, keep)
            d = binary("sub", v, mu)
            sq = binary("mul", d, d)
        else:
            d = v
            sq = binary("mul", v, v)
        second = self.rnd.choice(("sum", "max") if ints else ("mean", "sum", "max"))
        var = reduce(second, sq, keep or self.chance(0.5))
        if self.chance(0.6) and (var.shape == kept or leading):
            binary(self.rnd.choice(("mul", "add", "sub")), d, var)
        else:
            binary("add", var, self.constant((), v.dtype))

    def emit_slice(self, v, offs, sizes, strides):
        return self.emit("slice", [v], {"offsets": offs, "sizes": sizes, "strides": strides},
                         tuple(sizes), v.dtype,
                         f"kgraph.slice %{v.name} offsets = [{', '.join(map(str, offs))}] sizes = "
                         f"[{', '.join(map(str, sizes))}] strides = [{', '.join(map(str, strides))}] : {v.type}")

    def matmul_operand(self, shape, dtype):
        """A fresh matmul operand: an argument, or (a quarter of the time, when
        data movement is allowed) a slice of a wider one with a unit step along the last dim, which the
        GEMM kernel reads in place (a Q/K/V block of a fused projection)."""
        lo, hi = (-3, 3) if dtype == "i8" else (-1.0, 1.0)
        if not self.allow_data_movement or not self.chance(0.25):
            return self.arg(shape, dtype, lo, hi)
        offs, strides, wide = [], [], []
        for i, d in enumerate(shape):
            st = 1 if i == len(shape) - 1 else self.rnd.choice((1, 1, 2))
            off = self.rnd.randint(0, 8)
            offs.append(off), strides.append(st)
            wide.append(off + (d - 1) * st + 1 + self.rnd.randint(0, 8))
        if numel(wide) > self.max_elements:
            return self.arg(shape, dtype, lo, hi)
        self.g.tags.add("pattern:sliced_gemm_operand")
        return self.emit_slice(self.arg(tuple(wide), dtype, lo, hi), offs,
                               list(shape), strides)

    def op_data_movement(self):
        # Concat twice as often: it has two code paths (in place, kernel).
        op = self.rnd.choices(DATA_MOVEMENT, (1, 1, 1, 2, 1))[0]
        v = self.pick(lambda x: x.rank >= 1 or op in ("reshape", "broadcast_to"))
        if v is None:
            return
        if op == "reshape":
            total = numel(v.shape)
            dims, rest = [], total
            for p in (2, 3, 5, 7, 11, 13):
                while rest % p == 0 and self.chance(0.5):
                    dims.append(p)
                    rest //= p
            dims.append(rest)
            self.rnd.shuffle(dims)
            shape = tuple(dims[:4]) if len(dims) <= 4 else (numel(dims[:-3]),) + tuple(dims[-3:])
            self.emit(op, [v], {"shape": shape}, shape, v.dtype,
                      f"kgraph.reshape %{v.name} : {v.type} to {ttype(shape, v.dtype)}")
        elif op == "transpose":
            perm = list(range(v.rank))
            self.rnd.shuffle(perm)
            shape = tuple(v.shape[p] for p in perm)
            self.emit(op, [v], {"permutation": tuple(perm)}, shape, v.dtype,
                      f"kgraph.transpose %{v.name}, permutation = [{', '.join(map(str, perm))}] : {v.type}")
        elif op == "slice":
            offs, sizes, strides = [], [], []
            for d in v.shape:
                st = self.rnd.choice((1, 1, 2, 3))
                off = self.rnd.randint(0, d - 1)
                size = self.rnd.randint(1, (d - 1 - off) // st + 1)
                offs.append(off), sizes.append(size), strides.append(st)
            self.emit_slice(v, offs, sizes, strides)
        elif op == "concat":
            # An inner axis (an elementwise kernel over the result) more often
            # than any axis (the outermost non-unit one is written in place
            # by the producers where its offsets are 16-byte aligned).
            axis = (self.rnd.randrange(1, v.rank) if v.rank > 1 and self.chance(0.7)
                    else self.rnd.randrange(v.rank))
            others = [v]
            for _ in range(self.rnd.randint(0, 2)):
                s = list(v.shape)
                s[axis] = self.dim()
                if numel(s) > self.max_elements:
                    continue
                others.append(self.arg(tuple(s), v.dtype))
            shape = list(v.shape)
            shape[axis] = sum(o.shape[axis] for o in others)
            self.emit(op, others, {"axis": axis}, tuple(shape), v.dtype,
                      f"kgraph.concat {', '.join('%' + o.name for o in others)} axis = {axis} : "
                      f"{', '.join(o.type for o in others)}")
        else:
            shape = [d if d != 1 or not self.chance(0.6) else self.dim() for d in v.shape]
            shape = [self.dim() for _ in range(self.rnd.randint(0, 2))] + shape
            if numel(shape) > self.max_elements:
                return
            self.emit(op, [v], {"shape": tuple(shape)}, tuple(shape), v.dtype,
                      f"kgraph.broadcast_to %{v.name} : {v.type} to {ttype(shape, v.dtype)}")

    # --- graphs --------------------------------------------------------------
    def build(self, allow_data_movement=True):
        self.allow_data_movement = allow_data_movement
        theme = self.rnd.choice(("elementwise", "matmul", "conv", "stencil", "pool",
                                 "reduce", "mixed"))
        self.g.tags.add("theme:" + theme)
        rank = {"matmul": self.rnd.choice((2, 3)), "conv": 4, "stencil": 4,
                "pool": 4}.get(theme, self.rnd.randint(0, 4))
        dtype = self.rnd.choice(DTYPES)
        if theme == "stencil":
            layout = self.rnd.choice(("nchw", "nhwc"))
            c = self.rnd.choice((1, 2, 3, 4))
            self.arg(self.act_shape(self.rnd.choice((1, 2)), c, self.dim(0.3), self.dim(0.3),
                                    layout), self.rnd.choice(FLOATS))
        else:
            self.arg(self.shape(rank), dtype)
        weights = {
            "elementwise": [(self.op_binary, 5), (self.op_unary, 4), (self.op_clamp, 1),
                            (self.op_cast, 2), (self.op_compare, 1), (self.op_select, 1)],
            "matmul": [(self.op_matmul, 4), (self.op_binary, 3), (self.op_unary, 2),
                       (self.op_cast, 1), (self.op_clamp, 1)],
            "conv": [(self.op_conv2d, 4), (self.op_binary, 3), (self.op_unary, 2),
                     (self.op_cast, 1), (self.op_pool2d, 1)],
            "stencil": [(self.op_conv2d, 3), (self.op_pool2d, 3), (self.op_binary, 3),
                        (self.op_unary, 2), (self.op_select, 1), (self.op_compare, 1)],
            "pool": [(self.op_pool2d, 5), (self.op_unary, 1), (self.op_binary, 1)],
            "reduce": [(self.op_reduce, 4), (self.op_row_chain, 2), (self.op_nested_reduce, 2),
                       (self.op_binary, 3),
                       (self.op_unary, 2), (self.op_cast, 1)],
            "mixed": [(self.op_binary, 4), (self.op_unary, 3), (self.op_matmul, 1),
                      (self.op_conv2d, 1), (self.op_pool2d, 1), (self.op_reduce, 2),
                      (self.op_row_chain, 1),
                      (self.op_cast, 1), (self.op_clamp, 1), (self.op_compare, 1),
                      (self.op_select, 1)],
        }[theme]
        if allow_data_movement and self.chance(0.15):
            weights = weights + [(self.op_data_movement, 2)]
        fns = [f for f, _ in weights]
        ws = [w for _, w in weights]
        steps = self.rnd.choice((1, 1, 2, 3, 4, 5, 6, 8, 12))
        for _ in range(steps * 3):
            if len(self.g.nodes) - sum(n.kind == "constant" for n in self.g.nodes) >= steps:
                break
            self.rnd.choices(fns, ws)[0]()
        if not [n for n in self.g.nodes if n.kind != "constant"]:
            # neg is defined on every element type
            a = self.g.args[0] if self.g.args else self.arg((3,), "f32", const_ok=False)
            self.emit("neg", [a], {}, a.shape, a.dtype, f"kgraph.neg %{a.name} : {a.type}")
        # Return every value no op reads, and sometimes an intermediate too.
        used = {o.name for n in self.g.nodes for o in n.operands}
        results = [n.result for n in self.g.nodes
                   if n.result.name not in used and n.kind != "constant"]
        inner = [n.result for n in self.g.nodes if n.result.name in used and n.kind != "constant"]
        if inner and self.chance(0.2):
            results.append(self.rnd.choice(inner))
            self.g.tags.add("pattern:returns_intermediate")
        if not results:
            results = [self.g.nodes[-1].result]
        self.g.outputs = results
        if any(o.dtype == "i1" for o in results):
            self.g.tags.add("pattern:i1_output")
        return self.g


def generate(seed, allow_data_movement=True, small=False):
    """The random graph of ``seed`` (an int or a string); ``small``: dims
    from the small sizes only, at most SMALL_MAX_ELEMENTS elements per
    value (a different graph than without)."""
    return _Builder(seed, small).build(allow_data_movement)


# --- torch reference (GPU cases) ----------------------------------------------

_EPS = {"f32": 2.0 ** -23, "f16": 2.0 ** -10, "bf16": 2.0 ** -7}


def _torch_dtype(torch, dt):
    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
            "i8": torch.int8, "i32": torch.int32, "i1": torch.bool}[dt]


def _round(torch, x, dt):
    """``x`` (float64, int64 or bool) rounded to the element type ``dt`` and
    widened again: what a kernel stores between ops."""
    if dt == "i1":
        return x.to(torch.bool)
    if dt in INTS:
        return x.to(torch.int64).to(_torch_dtype(torch, dt)).to(torch.int64)
    return x.to(torch.float64).to(_torch_dtype(torch, dt)).to(torch.float64)


def _nchw(torch, x, layout):
    return x.permute(0, 3, 1, 2) if layout == "nhwc" else x


def _from_nchw(torch, x, layout):
    return x.permute(0, 2, 3, 1) if layout == "nhwc" else x


def _eval_node(torch, F, n, vals):
    k, a = n.kind, n.attrs
    xs = [vals[o.name] for o in n.operands]
    dt = n.result.dtype
    if k == "constant":
        lit = {"true": "1.0", "false": "0.0"}.get(a["literal"], a["literal"])
        data = eval(lit) if lit.startswith("[") else float(lit)  # noqa: S307 (our own literal)
        t = torch.tensor(data, dtype=torch.float64)
        return _round(torch, t.expand(n.result.shape).clone() if t.dim() == 0 else t, dt)
    if k in ("add", "sub", "mul", "max", "min"):
        f = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
             "max": torch.maximum, "min": torch.minimum}[k]
        return _round(torch, f(xs[0], xs[1]), dt)
    if k == "div" and dt in FLOATS:
        return _round(torch, xs[0] / xs[1], dt)
    if k == "exp":
        return _round(torch, torch.exp(xs[0]), dt)
    if k == "neg":
        return _round(torch, -xs[0], dt)
    if k == "abs":
        return _round(torch, xs[0].abs(), dt)
    if k == "relu":
        return _round(torch, torch.clamp(xs[0], min=0), dt)
    if k == "tanh":
        return _round(torch, torch.tanh(xs[0]), dt)
    if k == "sigmoid":
        return _round(torch, torch.sigmoid(xs[0]), dt)
    if k == "gelu":
        return _round(torch, F.gelu(xs[0], approximate="tanh" if a.get("approximate") else "none"), dt)
    if k == "clamp":
        lo, hi = a["min"], a["max"]
        if dt in INTS:
            # Bounds limited to the representable integers: outside the
            # type's range they saturate to it (kgraph.clamp's semantics).
            info = torch.iinfo(_torch_dtype(torch, dt))
            lo = min(max(math.ceil(lo), info.min), info.max)
            hi = min(max(math.floor(hi), info.min), info.max)
        return _round(torch, torch.clamp(xs[0], min=lo, max=hi), dt)
    if k == "cast":
        x, src = xs[0], n.operands[0].dtype
        if src in INTS and dt in FLOATS:
            x = x.to(torch.float32).to(torch.float64)   # i32 -> bf16 rounds through f32
        return _round(torch, x, dt)
    if k == "compare":
        f = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
             "gt": torch.gt, "ge": torch.ge}[a["direction"]]
        return f(xs[0], xs[1])
    if k == "select":
        return _round(torch, torch.where(xs[0], xs[1], xs[2]), dt)
    if k == "matmul":
        x, y = xs
        if a["transpose_a"]:
            x = x.transpose(-1, -2)
        if a["transpose_b"]:
            y = y.transpose(-1, -2)
        if n.operands[0].dtype == "i8":
            return _round(torch, torch.matmul(x.to(torch.int64), y.to(torch.int64)), dt)
        return _round(torch, torch.matmul(x, y), dt)
    if k == "conv2d":
        lay = a["layout"]
        x = _nchw(torch, xs[0], lay)
        w = xs[1].permute(0, 3, 1, 2) if lay == "nhwc" else xs[1]
        p = a["padding"]
        integer = n.operands[0].dtype == "i8"
        x = F.pad(x.to(torch.float64), (p[2], p[3], p[0], p[1]))
        y = F.conv2d(x, w.to(torch.float64), stride=a["strides"], dilation=a["dilations"],
                     groups=a["groups"])
        if integer:
            y = y.round().to(torch.int64)   # exact: |y| < 2^53
        return _round(torch, _from_nchw(torch, y, lay), dt)
    if k == "pool2d":
        lay = a["layout"]
        x = _nchw(torch, xs[0], lay)
        p = a["padding"]
        integer = n.operands[0].dtype in INTS
        xf = x.to(torch.float64)
        if a["kind"] == "max":
            y = F.max_pool2d(F.pad(xf, (p[2], p[3], p[0], p[1]), value=-math.inf),
                             a["kernel"], a["strides"])
            if integer:
                y = y.to(torch.int64)
        else:
            s = F.avg_pool2d(F.pad(xf, (p[2], p[3], p[0], p[1])), a["kernel"], a["strides"],
                             divisor_override=1)
            c = F.avg_pool2d(F.pad(torch.ones_like(xf), (p[2], p[3], p[0], p[1])),
                             a["kernel"], a["strides"], divisor_override=1)
            y = s / c
        return _round(torch, _from_nchw(torch, y, lay), dt)
    if k == "reduce":
        x, axes, keep = xs[0], list(a["axes"]), a["keep_dims"]
        if a["kind"] == "sum":
            y = x.sum(dim=axes, keepdim=keep)
        elif a["kind"] == "mean":
            y = x.mean(dim=axes, keepdim=keep)
        else:
            y = x
            for ax in sorted(axes, reverse=True):
                y = y.amax(dim=ax, keepdim=keep)
        return _round(torch, y, dt)
    raise ValueError(f"no torch reference for kgraph.{k}")


def torch_ref(graph):
    """A function of the graph's inputs (float64/int64/bool tensors, in the
    order of graph.args) returning its outputs, each op rounded to its
    element type as the kernels store it."""
    def ref(*inputs):
        import torch
        import torch.nn.functional as F
        vals = {}
        for arg, x in zip(graph.args, inputs):
            vals[arg.name] = _round(torch, x, arg.dtype)
        for n in graph.nodes:
            vals[n.result.name] = _eval_node(torch, F, n, vals)
        outs = tuple(vals[o.name] for o in graph.outputs)
        return outs if len(outs) > 1 else outs[0]
    return ref


def _accumulated(node):
    """Elements one result element of `node` sums (K of a matmul or conv2d,
    the reduced elements of a sum or mean), 1 for other ops."""
    if node.kind == "matmul":
        s = node.operands[0].shape
        return s[-2] if node.attrs["transpose_a"] else s[-1]
    if node.kind == "conv2d":
        return numel(node.operands[1].shape[1:])
    if node.kind == "reduce" and node.attrs["kind"] == "sum":
        return numel([node.operands[0].shape[i] for i in node.attrs["axes"]])
    return 1


def magnitudes(graph):
    """A bound on |element| of every value (by name), from the input domains
    and constants forward. An accumulation counts one product or element
    (the growth with its own length is tolerance's sqrt(acc)), but the
    values it feeds see its typical size, the product grown by the square
    root of its length: in a chain of GEMMs the sums compound, and so does
    the rounding error of the last one, which is relative to them (a chain
    of four f32 matmuls missed a bound that ignored it, fuzz seed 221211a8
    graph 224.2 on the H200: 5.9e-4 off at an element of -5.5 whose
    summands were ~1e3)."""
    m = {a.name: float(max(abs(lo), abs(hi))) for a, (lo, hi) in
         ((a, graph.input_domain[a.name]) for a in graph.args)}
    grown = dict(m)   # the magnitude a value has as the operand of later ops
    for n in graph.nodes:
        ops = [grown.get(o.name, 1.0) for o in n.operands]
        k = n.kind
        if k == "constant":
            lits = re.findall(r"-?[0-9.]+(?:e-?[0-9]+)?", n.attrs["literal"])
            v = max([abs(float(x)) for x in lits] or [1.0])
        elif k in ("add", "sub"):
            v = ops[0] + ops[1]
        elif k in ("mul", "matmul", "conv2d"):
            v = ops[0] * ops[1]
        elif k in ("tanh", "sigmoid", "compare"):
            v = 1.0
        elif k == "clamp":
            # The result lies between the clamps of the operand's extremes,
            # so a range away from zero lifts it: clamp to [-300, -299] of
            # values in [-2, 2] is -299 everywhere (fuzz seed 5e3a91c2 graph
            # 260.1 on the H100: a matmul of it cancelled to 5.55 from
            # summands of ~300, 4.7e-5 off against a bound that took 2).
            lo, hi = n.attrs["min"], n.attrs["max"]
            v = max(abs(min(max(x, lo), hi)) for x in (-ops[0], ops[0]))
        elif k == "select":
            v = max(ops[1:])
        else:   # max, min, neg, abs, relu, gelu, cast, pool2d, reduce, data movement
            v = max(ops) if ops else 1.0
        m[n.result.name] = v
        grown[n.result.name] = v * math.sqrt(_accumulated(n))
    return m


def tolerance(graph):
    """(rtol, atol) for comparing a GPU run with torch_ref: the machine
    epsilon of the narrowest float type involved (tf32's for tf32 matmuls and
    convs), scaled by the longest accumulation (K of a matmul or conv, the
    elements of a reduce), the number of ops and, for atol, the square root
    of the number of GEMMs (their errors compound) and the largest float
    element magnitude (magnitudes: a cast of an i32 in [-1000, 1000]
    feeds a matmul whose sums cancel far below its products' size)."""
    eps = 0.0
    acc = 1
    for n in graph.nodes:
        for v in [n.result] + n.operands:
            if v.dtype in _EPS:
                eps = max(eps, _EPS[v.dtype])
        if n.attrs.get("precision") == "tf32":
            eps = max(eps, 2.0 ** -10)
        if n.kind == "matmul":
            s = n.operands[0].shape
            acc = max(acc, s[-2] if n.attrs["transpose_a"] else s[-1])
        if n.kind == "conv2d":
            f = n.operands[1].shape
            acc = max(acc, numel(f[1:]))
        if n.kind == "reduce":
            acc = max(acc, numel([n.operands[0].shape[i] for i in n.attrs["axes"]]))
        if n.kind in ("tanh", "sigmoid", "gelu"):
            eps = max(eps, 2.0 ** -21)   # the GPU's approximations, a few ulp of f32
    if eps == 0.0:
        return (0.0, 0.0)   # integers: exact
    depth = max(1, len([n for n in graph.nodes if n.kind != "constant"]))
    mags = magnitudes(graph)
    # Relative to the products of two float inputs in [-2, 2], for which the
    # constants were calibrated.
    scale = max([1.0] + [mags[v.name] / 4 for v in
                         graph.args + [n.result for n in graph.nodes]
                         if v.dtype in _EPS])
    # Each matmul or conv2d after the first multiplies the rounding error of
    # its input again (a chain of GEMMs compounds it): the bound grows with
    # the square root of their number, as independent errors add.
    gemms = max(1, len([n for n in graph.nodes if n.kind in ("matmul", "conv2d")]))
    # A sum of K products rounds K partial sums, which grow like sqrt(K):
    # its error grows like K, not sqrt(K), once K is large. Graph
    # 12713568-258 (an f32 conv, K = 975, 19500 outputs) had one element
    # off by 8.0e-5 against atol 6.0e-5, bit for bit what torch's own f32
    # conv on the CPU computes there.
    rtol = 4 * eps * depth
    atol = (4 * eps * depth * max(4 * math.sqrt(acc), acc) * scale *
            math.sqrt(gemms))
    return (rtol, atol)


def macs(node):
    """Multiply-adds of a matmul or conv2d node (0 for other ops)."""
    if node.kind == "matmul":
        s = node.operands[0].shape
        k = s[-2] if node.attrs["transpose_a"] else s[-1]
        return numel(node.result.shape) * k
    if node.kind == "conv2d":
        return numel(node.result.shape) * numel(node.operands[1].shape[1:])
    return 0


#: The largest finite f16.
F16_MAX = 65504.0


#: Rewrite passes a fuzzed compile adds (drawn per graph from its name:
#: reproducible): they change how convs are computed, never the function.
PASS_FLAGS = ((), (), ("--space-to-depth-convs",), ("--pad-conv-channels=16",))


def pass_flags(name):
    """kgraph-opt flags of PASS_FLAGS for the graph `name`."""
    return list(random.Random(f"flags-{name}").choice(PASS_FLAGS))


def gpu_graph(seed, max_tries=64, small=False):
    """A graph for the GPU sample: verifier-valid, no data movement, and a
    reference that random inputs do not make ill-conditioned (``gpu_safe``:
    no div/pow/log/sqrt/rsqrt/exp but a softmax's exp(x - max) and division
    by its row sum, no float compares or float-to-int casts, no
    accumulation longer than 4096). Returns (graph, the sub-seed used).
    ``small``: graphs of generate(small=True) with at most SMALL_MAX_MACS
    multiply-adds per matmul or conv2d (for the CPU kernel interpreter)."""
    for t in range(max_tries):
        sub = f"{seed}" if t == 0 else f"{seed}.{t}"
        g = generate(sub, allow_data_movement=False, small=small)
        if not g.gpu_safe:
            continue
        big = False
        for n in g.nodes:
            if n.kind == "matmul":
                s = n.operands[0].shape
                big |= (s[-2] if n.attrs["transpose_a"] else s[-1]) > 4096
            if n.kind == "conv2d":
                big |= numel(n.operands[1].shape[1:]) > 4096
            if n.kind == "reduce":
                big |= numel([n.operands[0].shape[i] for i in n.attrs["axes"]]) > 4096
            if n.kind == "matmul" and n.result.dtype in ("f16", "bf16"):
                big = True   # accumulating in f16/bf16: error grows with K
            if n.kind == "conv2d" and n.result.dtype in ("f16", "bf16"):
                big = True
        if any(numel(v.shape) > (1 << 20) for v in g.args + [n.result for n in g.nodes]):
            big = True
        if small and any(macs(n) > SMALL_MAX_MACS for n in g.nodes):
            big = True
        # An f16 value whose bound passes f16's largest finite value may
        # round to infinity (a cast of an i32 in [-1000, 1000] times
        # itself): the reference would be infinite, which the checks reject
        # as a wrong domain rather than compare.
        mags = magnitudes(g)
        if any(mags[v.name] > F16_MAX for v in g.args + [n.result for n in g.nodes]
               if v.dtype == "f16"):
            big = True
        if not big:
            return g, sub
    return None, None
