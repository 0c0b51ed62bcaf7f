"""Model-level ops on logical tensors, shared by the PyTorch and ONNX importers.

A frontend sees the model's own semantics: activations in the model's layout
(NCHW for 4-D tensors), weights as numpy arrays. :class:`Lowering` maps each
model op onto :class:`~kgraph.importers.builder.Builder` calls and handles
what is not one-to-one:

- **constants**: weights and other constant tensors stay numpy arrays
  (:class:`T` with ``data``) until an op needs them; data movement on
  constants (reshape, transpose, slice, concat, casts) is folded in numpy, a
  constant scalar becomes a splat ``arith.constant``, any other constant a
  parameter (``kgraph.param``) named after its source;
- **layout**: with ``layout="nhwc"`` every 4-D activation is stored NHWC
  (``T.nhwc``, logical shape still NCHW), convolution filters are permuted to
  ``[F, KH, KW, C]`` at import, per-channel constants are reshaped to ``[C]``
  and axes are remapped; a reshape or transpose that needs the NCHW element
  order transposes back first (not needed when H*W == 1, as after a global
  pool);
- **dtype**: with ``dtype`` set, every float parameter, input and cast target
  becomes that type;
- **batch norm** in eval mode folds into the convolution it follows (a
  convolution is emitted lazily, at its first use, so a batch norm can still
  fold into it); elsewhere it is a multiply and an add by per-channel
  constants;
- softmax, layer norm, silu and the like are decomposed into kgraph ops.

Anything it cannot map raises :class:`Unsupported` with a reason; the
frontends collect those per node (docs/importers.md).
"""

import math

import numpy as np

from .builder import FLOAT_TYPES, NUMPY_OF, Builder, broadcast_shapes
from .reference import COMPARE

#: NCHW logical axis -> NHWC physical axis.
_TO_PHYS = [0, 3, 1, 2]
#: NHWC physical axis -> NCHW logical axis.
_TO_LOGICAL = [0, 2, 3, 1]


#: numpy forms of the unary ops, for folding them on constants.
_NP_UNARY = {"relu": lambda a: np.maximum(a, 0), "neg": np.negative, "abs": np.abs,
             "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
             "rsqrt": lambda a: 1.0 / np.sqrt(a), "tanh": np.tanh,
             "sigmoid": lambda a: 1.0 / (1.0 + np.exp(-a))}


#: numpy type a constant of each kgraph element type is held in while it is
#: folded (numpy has no bfloat16: bf16 constants stay float32 until printed).
_NP_CONST_TYPES = dict(NUMPY_OF, bf16=np.float32)


def _broadcast_shape(a, b):
    try:
        return broadcast_shapes(a, b)
    except ValueError as e:
        raise Unsupported(str(e))


class Unsupported(Exception):
    """A model op (or a form of one) that has no kgraph mapping."""


def _interp_matrix(n, out, mode, align_corners, scale):
    """[out, n] weights of PyTorch's 1-D nearest or linear interpolation
    (``scale``: the user's scale factor, which PyTorch uses instead of
    out / n when given)."""
    m = np.zeros((out, n), np.float64)
    ratio = 1.0 / scale if scale else n / out
    for o in range(out):
        if mode == "nearest":
            m[o, min(int(math.floor(o * ratio)), n - 1)] = 1.0
            continue
        if align_corners:
            src = o * (n - 1) / (out - 1) if out > 1 else 0.0
        else:
            src = max((o + 0.5) * ratio - 0.5, 0.0)
        i0 = min(int(math.floor(src)), n - 1)
        i1 = min(i0 + 1, n - 1)
        frac = src - i0
        m[o, i0] += 1.0 - frac
        m[o, i1] += frac
    return m


class T:
    """A logical tensor: a constant (``data``, a numpy array, optionally a
    parameter ``name``) or an IR value (``val``). ``shape`` is the logical
    shape; ``nhwc`` says a 4-D value is stored as [N, H, W, C]."""

    __slots__ = ("shape", "dtype", "val", "nhwc", "data", "name",
                 "conv", "transposed_of", "pred", "broadcast_of")

    def __init__(self, shape, dtype, val=None, nhwc=False, data=None,
                 name=None, conv=None, transposed_of=None):
        self.shape = [int(d) for d in shape]
        self.dtype = dtype
        self.val, self.nhwc, self.data, self.name = val, nhwc, data, name
        self.conv = conv                  # pending convolution (_Conv)
        self.transposed_of = transposed_of
        self.pred = None                  # (direction, a, b) of a comparison
        self.broadcast_of = None          # the T an expand broadcast to this

    @property
    def rank(self):
        return len(self.shape)

    @property
    def is_const(self):
        return self.data is not None

    def __repr__(self):
        what = "const" if self.is_const else ("nhwc" if self.nhwc else "value")
        return f"T({what} {self.shape} {self.dtype})"


class _Conv:
    """A convolution not emitted yet: batch norm may still fold into it."""

    def __init__(self, x, w, b, wname, bname, strides, padding, dilations, groups):
        self.x, self.w, self.b = x, w, b
        self.wname, self.bname = wname, bname
        self.strides, self.padding = strides, padding
        self.dilations, self.groups = dilations, groups
        self.emitted = None
        self.loc = None               # the location of the model op


_NP_DTYPE_NAMES = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
                   np.dtype(np.float64): "f32", np.dtype(np.int32): "i32",
                   np.dtype(np.int64): "i32", np.dtype(np.int8): "i8",
                   np.dtype(np.bool_): "i1", np.dtype(np.uint8): "i32",
                   np.dtype(np.int16): "i32"}


def np_dtype_name(a):
    return _NP_DTYPE_NAMES.get(np.asarray(a).dtype, "f32")


class Lowering:
    """See the module docstring. ``dtype``: None (keep the model's) or a
    kgraph float type; ``layout``: "nchw" or "nhwc"."""

    def __init__(self, dtype=None, layout="nchw"):
        if layout not in ("nchw", "nhwc"):
            raise ValueError(f"layout must be nchw or nhwc, got {layout!r}")
        self.b = Builder()
        self.dtype = dtype
        self.layout = layout
        self._const_count = 0

    # --- dtypes ----------------------------------------------------------

    def float_type(self, dt):
        """The type a float of model type ``dt`` gets in the IR."""
        if dt in FLOAT_TYPES and self.dtype is not None:
            return self.dtype
        return dt

    # --- inputs, constants, outputs -------------------------------------

    def input(self, shape, dtype, name=None):
        dt = self.float_type(dtype)
        if self.layout == "nhwc" and len(shape) == 4:
            n, c, h, w = shape
            v = self.b.input([n, h, w, c], dt, name)
            return T(shape, dt, val=v, nhwc=True)
        return T(shape, dt, val=self.b.input(shape, dt, name))

    def const(self, data, name=None):
        """A constant tensor; ``name`` makes it a named parameter when it
        reaches the IR. Python scalars are 0-d constants."""
        a = np.asarray(data)
        if a.dtype == np.float64:
            a = a.astype(np.float32)
        return T(a.shape, np_dtype_name(a), data=a, name=name)

    def output(self, t):
        """A result; with layout nhwc every 4-D result is returned NHWC."""
        if self.layout == "nhwc" and t.rank == 4:
            self.b.output(self.phys_nhwc(t))
        else:
            self.b.output(self.value(t))

    def _param_name(self, t, suffix=""):
        if t.name:
            return t.name + suffix
        self._const_count += 1
        return f"const.{self._const_count}{suffix}"

    def _const_value(self, t, dtype, shape=None, nhwc=False):
        """The IR value of constant ``t`` in ``dtype`` (a splat constant
        when all its elements are equal and it is small, else a parameter)."""
        if t.broadcast_of is not None and shape is None and not nhwc:
            return self.b.broadcast_to(self._const_value(t.broadcast_of, dtype), t.shape)
        data = t.data
        if not t.name and data.size > 1 and all(st == 0 for st in data.strides):
            # A scalar broadcast to a shape (full_like): a splat constant.
            if shape is None:
                shape = list(data.shape)
                if nhwc:
                    shape = [shape[0], shape[2], shape[3], shape[1]]
            return self.b.constant(data.flat[0].item(), dtype, list(shape))
        if nhwc:
            data = np.transpose(data, [0, 2, 3, 1])
        if shape is not None:
            data = data.reshape(shape)
        if data.size == 1 and not t.name:
            return self.b.constant(data.reshape(-1)[0].item(), dtype, list(data.shape))
        suffix = ".nhwc" if nhwc else ""
        return self.b.param(self._param_name(t, suffix), data, dtype)

    def value(self, t, keep_nhwc=False, dtype=None):
        """The IR value of ``t`` with its logical shape (an NHWC value is
        transposed back to NCHW unless ``keep_nhwc``)."""
        if t.is_const:
            dt = dtype or (self.float_type(t.dtype))
            return self._const_value(t, dt)
        if t.conv is not None:
            self._emit_conv(t)
        if t.nhwc and not keep_nhwc:
            return self.b.transpose(t.val, [0, 3, 1, 2])
        return t.val

    def phys_nhwc(self, t):
        """The IR value of a logical 4-D (or lower rank, aligned to 4-D by
        numpy rules) ``t`` in NHWC order."""
        if t.is_const:
            data = t.data.reshape([1] * (4 - t.rank) + list(t.shape))
            return self._const_value(T(data.shape, t.dtype, data=data, name=t.name),
                                     self.float_type(t.dtype), nhwc=True)
        if t.conv is not None:
            self._emit_conv(t)
        if t.nhwc:
            return t.val
        v = self.b.reshape(t.val, [1] * (4 - t.rank) + list(t.shape))
        return self.b.transpose(v, [0, 2, 3, 1])

    def rowmajor(self, t):
        """An IR value whose elements are ``t``'s in logical row-major order
        (its shape may differ from ``t.shape`` by a reshape)."""
        if not t.is_const and t.nhwc:
            if t.conv is not None:
                self._emit_conv(t)
            n, c, h, w = t.shape
            if h * w == 1 or c == 1:
                return t.val
        return self.value(t)

    def _wrap(self, v, nhwc=False, shape=None):
        if nhwc:
            n, h, w, c = v.shape
            return T([n, c, h, w], v.dtype, val=v, nhwc=True)
        return T(shape if shape is not None else v.shape, v.dtype, val=v)

    # --- convolution and batch norm --------------------------------------

    def conv2d(self, x, w, b=None, strides=(1, 1), padding=(0, 0, 0, 0),
               dilations=(1, 1), groups=1):
        """``padding`` is [top, bottom, left, right]."""
        if x.rank != 4:
            raise Unsupported(f"convolution of a rank-{x.rank} input (only 2-D "
                              f"convolution of [N, C, H, W] is supported)")
        if not w.is_const:
            raise Unsupported("convolution whose filter is computed, not a weight")
        if w.data.ndim != 4:
            raise Unsupported(f"convolution with a rank-{w.data.ndim} filter")
        if b is not None and not b.is_const:
            raise Unsupported("convolution whose bias is computed, not a weight")
        f = w.data.shape[0]
        n, c, h, wd = x.shape
        kh, kw = w.data.shape[2:]
        oh = (h + padding[0] + padding[1] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
        ow = (wd + padding[2] + padding[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
        conv = _Conv(x, w.data.astype(np.float32),
                     None if b is None else b.data.astype(np.float32).reshape(-1),
                     self._param_name(w), None if b is None else self._param_name(b),
                     list(strides), list(padding), list(dilations), int(groups))
        conv.loc = self.b.loc
        return T([n, f, oh, ow], self.float_type(x.dtype), conv=conv,
                 nhwc=self.layout == "nhwc")

    def _emit_conv(self, t):
        c = t.conv
        if c.emitted is None:
            loc, self.b.loc = self.b.loc, c.loc
            dt = self.float_type(c.x.dtype)
            if self.layout == "nhwc":
                x = self.phys_nhwc(c.x)
                w = self.b.param(c.wname, np.transpose(c.w, [0, 2, 3, 1]), dt)
            else:
                x = self.value(c.x)
                w = self.b.param(c.wname, c.w, dt)
            if x.dtype != w.dtype:
                raise Unsupported(f"convolution of {x.dtype} input with {w.dtype} filter")
            y = self.b.conv2d(x, w, self.layout, c.strides, c.padding,
                              c.dilations, c.groups)
            if c.b is not None:
                shape = [c.b.size] if self.layout == "nhwc" else [c.b.size, 1, 1]
                y = self.b.binary("add", y, self.b.param(c.bname, c.b.reshape(shape), dt))
            c.emitted = y
            self.b.loc = loc
        t.val = c.emitted
        t.conv = None

    def batch_norm(self, x, mean, var, weight, bias, eps):
        """Eval-mode batch norm over dim 1 (statistics are constants)."""
        for name, s in (("running mean", mean), ("running var", var),
                        ("weight", weight), ("bias", bias)):
            if s is not None and not s.is_const:
                raise Unsupported(f"batch norm whose {name} is computed")
        var_d = var.data.astype(np.float64)
        scale = 1.0 / np.sqrt(var_d + eps)
        if weight is not None:
            scale = scale * weight.data.astype(np.float64)
        shift = -mean.data.astype(np.float64) * scale
        if bias is not None:
            shift = shift + bias.data.astype(np.float64)
        if x.conv is not None:
            c = x.conv
            w = (c.w.astype(np.float64) * scale.reshape(-1, 1, 1, 1)).astype(np.float32)
            b0 = c.b.astype(np.float64) if c.b is not None else 0.0
            b = (b0 * scale + shift).astype(np.float32)
            bname = c.bname or (c.wname[:-len(".weight")] + ".bias"
                                if c.wname.endswith(".weight") else c.wname + ".bias")
            bname = (bias.name if bias is not None and bias.name else bname)
            folded = _Conv(c.x, w, b, c.wname + (".bn" if c.emitted else ""),
                           bname, c.strides, c.padding, c.dilations, c.groups)
            folded.loc = c.loc
            return T(x.shape, x.dtype, conv=folded, nhwc=x.nhwc)
        if x.rank < 2:
            raise Unsupported(f"batch norm of a rank-{x.rank} tensor")
        bshape = [-1] + [1] * (x.rank - 2)
        sname = (weight.name if weight is not None and weight.name else None)
        s = self.const(scale.astype(np.float32).reshape(bshape),
                       name=(sname + ".scale") if sname else None)
        h = self.const(shift.astype(np.float32).reshape(bshape),
                       name=(bias.name + ".shift") if bias is not None and bias.name else None)
        return self.binary("add", self.binary("mul", x, s), h)

    # --- elementwise -----------------------------------------------------

    def _common_dtype(self, ts):
        """The IR element type of an elementwise op over ``ts``: a float
        type if any computed operand is a float (integers are promoted, as
        torch does), else the first computed operand's; constants take it."""
        computed = [self.float_type(t.dtype) for t in ts if not t.is_const]
        floats = [d for d in computed if d in FLOAT_TYPES]
        if floats:
            return floats[0]
        if computed:
            if any(t.is_const and t.dtype in FLOAT_TYPES for t in ts):
                return self.float_type("f32")       # int tensor * 0.5
            return computed[0]
        return self.float_type(ts[0].dtype)

    def binary(self, kind, a, b):
        if a.is_const and b.is_const:
            if kind == "div" and np.issubdtype(a.data.dtype, np.integer) and \
                    np.issubdtype(b.data.dtype, np.integer):
                # Integer division truncates (ONNX Div; shape arithmetic).
                q = np.trunc(np.true_divide(a.data, b.data))
                return self.const(q.astype(np.result_type(a.data, b.data)))
            fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                  "div": np.divide, "max": np.maximum, "min": np.minimum,
                  "pow": np.power}[kind]
            return self.const(fn(a.data, b.data))
        if a.dtype == "i1" or b.dtype == "i1":
            # torch: bool * bool is and, bool + bool is or; a bool with a
            # number counts as 0/1.
            if a.dtype == b.dtype and kind in ("mul", "min", "add", "max"):
                return self.logical("and" if kind in ("mul", "min") else "or", a, b)
            a, b = self._as_int(a), self._as_int(b)
        dt = self._common_dtype([a, b])
        if kind == "div" and dt not in FLOAT_TYPES:
            raise Unsupported("integer division (torch rounds it differently)")
        # x / c on floats is x * (1/c): a multiply by a splat fuses into more
        # kernel prologues than a division.
        if kind == "div" and b.is_const and b.data.size == 1 and not b.name:
            return self.binary("mul", a, self.const(np.float32(1.0) / b.data.astype(np.float32)))
        if a.nhwc or b.nhwc:
            if a.rank > 4 or b.rank > 4:
                raise Unsupported("broadcast of an NHWC tensor to rank > 4")
            va = self._nhwc_operand(a, dt)
            vb = self._nhwc_operand(b, dt)
            return self._wrap(self.b.binary(kind, va, vb), nhwc=True)
        va = self._operand(a, dt)
        vb = self._operand(b, dt)
        return self._wrap(self.b.binary(kind, va, vb))

    def _operand(self, t, dt):
        if t.is_const:
            return self._const_value(t, dt)
        return self.b.cast(self.value(t), dt) if self.value(t).dtype != dt else self.value(t)

    def _nhwc_operand(self, t, dt):
        if t.is_const:
            if t.rank == 0:
                return self._const_value(t, dt)
            data = t.data.reshape([1] * (4 - t.rank) + list(t.shape))
            data = np.transpose(data, [0, 2, 3, 1])
            # Drop leading 1s so a per-channel constant is a plain [C].
            shape = list(data.shape)
            while len(shape) > 1 and shape[0] == 1:
                shape.pop(0)
            return self._const_value(T(data.shape, t.dtype, data=data, name=t.name),
                                     dt, shape=shape)
        v = self.phys_nhwc(t)
        return self.b.cast(v, dt) if v.dtype != dt else v

    def unary(self, kind, x, attr=""):
        if x.is_const and kind in _NP_UNARY:
            return self.const(_NP_UNARY[kind](x.data.astype(np.float64)).astype(
                x.data.dtype if x.dtype in FLOAT_TYPES else np.float32))
        if x.is_const:
            raise Unsupported(f"{kind} of a constant")
        v = self.value(x, keep_nhwc=True)
        if kind not in ("relu", "neg", "abs", "clamp") and v.dtype not in FLOAT_TYPES:
            raise Unsupported(f"{kind} of an integer tensor")
        return self._like(x, self.b.unary(kind, v, attr))

    def _like(self, x, v):
        return self._wrap(v, nhwc=x.nhwc, shape=None if x.nhwc else x.shape)

    def clamp(self, x, lo, hi):
        v = self.value(x, keep_nhwc=True)
        lo = -math.inf if lo is None else float(lo)
        hi = math.inf if hi is None else float(hi)
        if lo == 0.0 and hi == math.inf:
            return self._like(x, self.b.unary("relu", v))
        lo = max(lo, -3.0e38)
        hi = min(hi, 3.0e38)
        return self._like(x, self.b.clamp(v, lo, hi))

    def silu(self, x):
        return self.binary("mul", x, self.unary("sigmoid", x))

    def gelu(self, x, approximate=False):
        return self.unary("gelu", x, " {approximate}" if approximate else "")

    def cast(self, x, dtype):
        if x.is_const:
            return self.const(x.data.astype(_NP_CONST_TYPES[dtype]), name=x.name)
        dt = self.float_type(dtype)
        v = self.value(x, keep_nhwc=True)
        if dt == v.dtype:
            return x
        # kgraph.cast has no i1: a boolean becomes 1/0 by a select, a number
        # becomes a boolean by comparing it with 0.
        if v.dtype == "i1":
            return self._like(x, self.b.select(v, self.b.constant(1, dt),
                                               self.b.constant(0, dt)))
        if dt == "i1":
            return self._as_bool(x)
        return self._like(x, self.b.cast(v, dt))

    # --- comparisons and boolean tensors -----------------------------------
    #
    # Booleans are i1 values made by kgraph.compare and consumed by
    # kgraph.select. What has no op of its own (not, and, or, any, all) is
    # computed on 0/1 integers (kgraph.cast has no i1) or, where exact, folded
    # into the comparison that made the boolean.

    def _broadcast(self, ts):
        shape = []
        for t in ts:
            shape = _broadcast_shape(shape, t.shape)
        return shape

    def compare(self, direction, a, b):
        """torch.eq/ne/lt/le/gt/ge: an i1 tensor (floats compare as IEEE:
        ordered, ne true for NaN, which is also kgraph's rule)."""
        if a.is_const and b.is_const:
            return self.const(COMPARE[direction](a.data, b.data))
        if a.dtype == "i1" or b.dtype == "i1":
            a, b = self._as_int(a), self._as_int(b)
        dt = self._common_dtype([a, b])
        if a.nhwc or b.nhwc:
            if a.rank > 4 or b.rank > 4:
                raise Unsupported("broadcast of an NHWC tensor to rank > 4")
            r = self._wrap(self.b.compare(direction, self._nhwc_operand(a, dt),
                                          self._nhwc_operand(b, dt)), nhwc=True)
        else:
            r = self._wrap(self.b.compare(direction, self._operand(a, dt),
                                          self._operand(b, dt)))
        r.pred = (direction, a, b)
        return r

    def _as_bool(self, t):
        """A boolean view of ``t``: itself if i1, else ``t != 0``."""
        if t.dtype == "i1":
            return t
        return self.compare("ne", t, self.const(np.int32(0)))

    def _as_int(self, t, true=1, false=0):
        """An i1 tensor as i32 ``true``/``false``; other tensors unchanged."""
        if t.dtype != "i1":
            return t
        if t.is_const:
            return self.const(np.where(t.data, true, false).astype(np.int32))
        v = self.b.select(self.value(t, keep_nhwc=True), self.b.constant(true, "i32"),
                          self.b.constant(false, "i32"))
        return self._like(t, v)

    def logical_not(self, t):
        if t.is_const:
            return self.const(np.logical_not(t.data))
        t = self._as_bool(t)
        p = t.pred
        if p is not None and p[0] in ("eq", "ne"):
            # Exact with NaN: eq is ordered, ne unordered.
            return self.compare("ne" if p[0] == "eq" else "eq", p[1], p[2])
        return self.compare("eq", self._as_int(t), self.const(np.int32(0)))

    def logical(self, kind, a, b):
        """logical_and / logical_or / logical_xor."""
        if a.is_const and b.is_const:
            fn = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[kind]
            return self.const(fn(a.data, b.data))
        ia, ib = self._as_int(self._as_bool(a)), self._as_int(self._as_bool(b))
        if kind == "xor":
            return self.compare("ne", ia, ib)
        return self.compare("ne", self.binary("min" if kind == "and" else "max", ia, ib),
                            self.const(np.int32(0)))

    def any_all(self, kind, t, axes, keep_dims=False):
        """torch.any / torch.all over ``axes`` (None: every axis)."""
        if axes is None:
            axes = list(range(t.rank))
        if t.is_const:
            fn = np.any if kind == "any" else np.all
            return self.const(np.asarray(fn(t.data, axis=tuple(a % max(t.rank, 1) for a in axes)
                                            if t.rank else None, keepdims=keep_dims)))
        t = self._as_bool(t)
        p = t.pred
        if p is not None and p[0] == ("ne" if kind == "any" else "eq") and \
                p[2].is_const and p[2].data.size == 1 and not p[1].is_const and \
                p[1].dtype in FLOAT_TYPES and float(p[2].data.reshape(-1)[0]) == -math.inf:
            # any(x != -inf) is max(x) != -inf and all(x == -inf) is
            # max(x) == -inf, NaN included (kgraph's max propagates NaN):
            # one reduction, shared with a softmax over the same rows.
            return self.compare(p[0], self.reduce("max", p[1], axes, keep_dims), p[2])
        # any: max of 0/1 is 1; all: max of 1/0 (1 where false) is 0.
        n = self._as_int(t) if kind == "any" else self._as_int(t, true=0, false=1)
        r = self.reduce("max", n, axes, keep_dims)
        return self.compare("ne" if kind == "any" else "eq", r, self.const(np.int32(0)))

    def where(self, cond, a, b):
        """torch.where(cond, a, b) / masked_fill: a where cond holds, else b."""
        shape = self._broadcast([cond, a, b])
        if cond.is_const and a.is_const and b.is_const:
            return self.const(np.where(cond.data.astype(bool), a.data, b.data))
        dt = self._common_dtype([a, b])
        if cond.is_const and cond.data.size and (np.all(cond.data) or not np.any(cond.data)):
            pick = a if np.all(cond.data) else b
            pick = self._like_dtype(pick, dt)
            return self.expand(pick, shape) if pick.shape != shape else pick
        cond = self._as_bool(cond)
        if (cond.nhwc or a.nhwc or b.nhwc) and len(shape) == 4:
            vc = self._nhwc_operand(cond, "i1")
            v = self.b.select(vc, self._nhwc_operand(a, dt), self._nhwc_operand(b, dt))
            return self._wrap(v, nhwc=True)
        v = self.b.select(self._operand(cond, "i1"), self._operand(a, dt), self._operand(b, dt))
        return self._wrap(v)

    def _like_dtype(self, t, dt):
        if t.is_const:
            return t
        v = self.value(t, keep_nhwc=True)
        return t if v.dtype == dt else self._like(t, self.b.cast(v, dt))

    def full_like(self, x, value, dtype=None):
        """A tensor of ``x``'s shape filled with ``value`` (a splat constant;
        only the shape of ``x`` is read)."""
        np_t = _NP_CONST_TYPES[dtype or x.dtype]
        return self.const(np.broadcast_to(np.asarray(value, dtype=np_t), x.shape))

    # --- GEMM ------------------------------------------------------------

    def _mm_operand(self, t, dt):
        """An operand of a matmul; a constant that is a transpose of a named
        2-D weight stays that weight (the matmul gets a transpose flag)."""
        if t.is_const and t.transposed_of is not None and t.rank == 2:
            w = self._const_value(t.transposed_of, dt)
            return self.b.transpose(w, [1, 0])
        if t.is_const:
            return self._const_value(t, dt)
        v = self.value(t)
        return self.b.cast(v, dt) if v.dtype != dt else v

    def matmul(self, a, b):
        """torch.matmul / ONNX MatMul semantics for rank >= 1 operands."""
        dt = self._common_dtype([a, b])
        if a.rank == 1 or b.rank == 1:
            a2 = a if a.rank > 1 else self.reshape(a, [1] + a.shape)
            b2 = b if b.rank > 1 else self.reshape(b, b.shape + [1])
            r = self.matmul(a2, b2)
            shape = r.shape[:]
            if a.rank == 1:
                shape.pop(-2)
            if b.rank == 1:
                shape.pop(-1)
            return self.reshape(r, shape)
        if a.rank == 2 and b.rank == 2:
            return self._wrap(self.b.matmul(self._mm_operand(a, dt), self._mm_operand(b, dt)))
        if b.rank == 2:
            # [..., M, K] x [K, N]: fold the batch dims into M.
            lead = a.shape[:-1]
            a2 = self.reshape(a, [int(np.prod(lead)), a.shape[-1]])
            r = self.matmul(a2, b)
            return self.reshape(r, lead + [r.shape[-1]])
        b2 = self._batch_broadcast(b)
        if b2 is not None:
            # [B.., M, K] x (one [K, N] broadcast over the batch): a plain
            # GEMM with the batch folded into M (torch.export writes a Linear
            # on a 3-D input as such a bmm).
            return self.matmul(a, b2)
        batch = [int(x) for x in np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))]
        if list(a.shape[:-2]) != batch or list(b.shape[:-2]) != batch:
            raise Unsupported(f"batched matmul that broadcasts batch dims "
                              f"({a.shape} x {b.shape})")
        nb = int(np.prod(batch))
        a3 = self.reshape(a, [nb] + a.shape[-2:])
        b3 = self.reshape(b, [nb] + b.shape[-2:])
        r = self._wrap(self.b.matmul(self._mm_operand(a3, dt), self._mm_operand(b3, dt)))
        return self.reshape(r, batch + r.shape[-2:])

    def _batch_broadcast(self, t):
        """The [K, N] matrix that ``t`` (rank > 2) repeats over its batch
        dims, if it is an expand of one; else None."""
        src = t.broadcast_of
        if src is None or t.rank <= 2:
            return None
        if src.rank >= 2 and list(src.shape[-2:]) == list(t.shape[-2:]) and \
                all(d == 1 for d in src.shape[:-2]):
            return src if src.rank == 2 else self.reshape(src, src.shape[-2:])
        return None

    def linear(self, x, w, bias=None):
        """``x @ w.T + bias`` (torch.nn.Linear)."""
        y = self.matmul(x, self.transpose(w, [1, 0]))
        if bias is not None:
            y = self.binary("add", y, bias)
        return y

    def gemm(self, a, b, c=None, alpha=1.0, beta=1.0, trans_a=False, trans_b=False):
        """ONNX Gemm / aten.addmm: ``alpha * op(a) @ op(b) + beta * c``."""
        if trans_a:
            a = self.transpose(a, [1, 0])
        if trans_b:
            b = self.transpose(b, [1, 0])
        y = self.matmul(a, b)
        if alpha != 1.0:
            y = self.binary("mul", y, self.const(np.float32(alpha)))
        if c is not None and beta != 0.0:
            if beta != 1.0:
                c = self.binary("mul", c, self.const(np.float32(beta))) if not c.is_const \
                    else self.const(c.data * np.float32(beta), name=c.name)
            y = self.binary("add", y, c)
        return y

    # --- data movement ---------------------------------------------------

    def reshape(self, x, shape):
        shape = list(int(d) for d in shape)
        numel = int(np.prod(x.shape, dtype=np.int64))
        if shape.count(-1) == 1:
            known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
            shape[shape.index(-1)] = numel // known if known else 0
        if int(np.prod(shape, dtype=np.int64)) != numel:
            raise Unsupported(f"reshape of {x.shape} to {shape}")
        if shape == x.shape:
            return x
        if x.is_const:
            return T(shape, x.dtype, data=x.data.reshape(shape), name=x.name)
        return self._wrap(self.b.reshape(self.rowmajor(x), shape), shape=shape)

    def transpose(self, x, perm):
        perm = [int(p) % max(x.rank, 1) for p in perm]
        if x.is_const:
            t = T([x.shape[p] for p in perm], x.dtype,
                  data=np.ascontiguousarray(np.transpose(x.data, perm)),
                  name=(x.name + ".T") if x.name else None)
            if x.rank == 2 and perm == [1, 0] and x.name:
                t.transposed_of = x
            return t
        if perm == list(range(x.rank)):
            return x
        if x.nhwc and perm == [0, 2, 3, 1]:
            # The logical NHWC permutation of an NHWC value is its storage.
            return self._wrap(self.value(x, keep_nhwc=True))
        return self._wrap(self.b.transpose(self.value(x), perm))

    def slice(self, x, axis, start, end, step=1):
        axis %= x.rank
        dim = x.shape[axis]
        if step <= 0:
            raise Unsupported(f"slice with step {step}")
        start = max(0, min(dim, start + dim if start < 0 else start))
        end = max(0, min(dim, end + dim if end < 0 else end))
        size = max(0, (end - start + step - 1) // step)
        if size == 0:
            raise Unsupported("slice with no elements")
        if x.is_const:
            idx = [slice(None)] * x.rank
            idx[axis] = slice(start, end, step)
            nm = f"{x.name}[{axis}:{start}:{end}:{step}]" if x.name else None
            # A view of the constant's memory, as torch's slice is: an
            # in-place write into it reaches the constant (torch_frontend).
            data = x.data[tuple(idx)]
            return T(list(data.shape), x.dtype, data=data, name=nm)
        if x.nhwc:
            v = self.value(x, keep_nhwc=True)
            pa = _TO_PHYS[axis]
        else:
            v = self.value(x)
            pa = axis
        offsets = [0] * v.rank
        sizes = list(v.shape)
        strides = [1] * v.rank
        offsets[pa], sizes[pa], strides[pa] = start, size, step
        r = self.b.slice(v, offsets, sizes, strides)
        return self._wrap(r, nhwc=x.nhwc)

    def pad(self, x, pads, value=0.0):
        """Constant padding: ``pads[i] = (before, after)`` of axis i (a
        negative amount crops). A concat with splat constants, so it runs
        as data movement."""
        if len(pads) != x.rank:
            raise Unsupported(f"padding of {len(pads)} axes for a rank-{x.rank} tensor")
        y = x
        for axis, (lo, hi) in enumerate(pads):
            lo, hi = int(lo), int(hi)
            if lo < 0 or hi < 0:
                y = self.slice(y, axis, max(0, -lo), y.shape[axis] - max(0, -hi))
            if lo <= 0 and hi <= 0:
                continue
            dt = y.dtype
            if dt == "i1":
                raise Unsupported("padding of a boolean tensor")
            parts = []
            for amount in (lo, hi):
                shape = list(y.shape)
                shape[axis] = amount
                parts.append(self.const(np.broadcast_to(
                    np.asarray(value, dtype=_NP_CONST_TYPES[dt]), shape)) if amount > 0 else None)
            y = self.concat([t for t in (parts[0], y, parts[1]) if t is not None], axis)
        return y

    def split(self, x, sizes, axis):
        out, start = [], 0
        for s in sizes:
            out.append(self.slice(x, axis, start, start + s))
            start += s
        return out

    def concat(self, xs, axis):
        axis %= xs[0].rank
        if all(t.is_const for t in xs):
            return self.const(np.concatenate([t.data for t in xs], axis))
        dt = self._common_dtype(xs)
        if any(t.nhwc for t in xs) and xs[0].rank == 4:
            vs = [self._nhwc_full(t, dt) for t in xs]
            return self._wrap(self.b.concat(vs, _TO_PHYS[axis]), nhwc=True)
        vs = [self._operand(t, dt) for t in xs]
        return self._wrap(self.b.concat(vs, axis))

    def _nhwc_full(self, t, dt):
        if t.is_const:
            return self._const_value(t, dt, nhwc=True)
        v = self.phys_nhwc(t)
        return self.b.cast(v, dt) if v.dtype != dt else v

    def expand(self, x, shape):
        shape = [x.shape[i - (len(shape) - x.rank)] if d == -1 else int(d)
                 for i, d in enumerate(shape)]
        if shape == x.shape:
            return x
        if x.is_const:
            # A read-only broadcast view: no copy; it reaches the IR as the
            # original constant and a kgraph.broadcast_to (_const_value).
            r = self.const(np.broadcast_to(x.data, shape), name=x.name)
        else:
            r = self._wrap(self.b.broadcast_to(self.value(x), shape))
        r.broadcast_of = x
        return r

    # --- reductions and pooling -----------------------------------------

    def reduce(self, kind, x, axes, keep_dims=False):
        axes = sorted({int(a) % max(x.rank, 1) for a in axes}) if x.rank else []
        if x.is_const:
            fn = {"sum": np.sum, "max": np.max, "mean": np.mean}[kind]
            return self.const(np.asarray(fn(x.data, axis=tuple(axes), keepdims=keep_dims)))
        if not axes:
            return x
        if x.dtype == "i1":
            # Booleans count as 0/1 (torch sums them as integers; the max of
            # booleans is their any).
            if kind == "mean":
                raise Unsupported("mean of a boolean tensor")
            r = self.reduce(kind, self._as_int(x), axes, keep_dims)
            return r if kind == "sum" else self._as_bool(r)
        v = self.value(x, keep_nhwc=True)
        if kind == "mean" and v.dtype not in FLOAT_TYPES:
            raise Unsupported("mean of an integer tensor")
        if x.nhwc:
            paxes = [_TO_PHYS[a] for a in axes]
            r = self.b.reduce(kind, v, paxes, keep_dims=False)
            if keep_dims:
                # Stored NHWC with the reduced dims as 1s.
                full = [1 if i in paxes else d for i, d in enumerate(v.shape)]
                return self._wrap(self.b.reshape(r, full), nhwc=True)
            kept_logical = [a for a in range(4) if a not in axes]
            kept_phys = [_TO_LOGICAL[p] for p in range(4) if p not in paxes]
            perm = [kept_phys.index(a) for a in kept_logical]
            return self._wrap(self.b.transpose(r, perm))
        r = self.b.reduce(kind, v, axes, keep_dims=False)
        if keep_dims:
            full = [1 if i in axes else d for i, d in enumerate(x.shape)]
            return self._wrap(self.b.reshape(r, full))
        return self._wrap(r)

    def pool2d(self, kind, x, kernel, strides, padding, ceil_mode=False,
               count_include_pad=True, dilation=(1, 1), divisor_override=None):
        """``padding`` is [top, bottom, left, right]. PyTorch's pooling rules
        (ONNX's agree): ``ceil_mode`` rounds the output size up, except for a
        last window that would start past the input and its leading padding;
        it becomes extra trailing padding, which max ignores. kgraph.pool2d
        avg divides by each window's in-bounds elements; ``count_include_pad``
        (divide by the window clipped to the padded input) and
        ``divisor_override`` multiply that mean by a constant per output
        position."""
        if x.rank != 4:
            raise Unsupported(f"{kind} pool of a rank-{x.rank} tensor")
        if list(dilation) != [1, 1]:
            raise Unsupported("dilated pooling")
        size = list(x.shape[2:])
        pads = list(padding)
        for i, d in enumerate(size):
            lo, hi, k, s = pads[2 * i], pads[2 * i + 1], kernel[i], strides[i]
            if k > d + lo + hi:
                raise Unsupported(f"a {kind} pool window {list(kernel)} larger than the "
                                  f"padded input {size} (padding {list(padding)})")
            if lo >= k or hi >= k:
                raise Unsupported(f"pooling padding {list(padding)} not smaller than the "
                                  f"window {list(kernel)}")
            if ceil_mode:
                o = -(-(d + lo + hi - k) // s) + 1
                if (o - 1) * s >= d + lo:
                    o -= 1
                pads[2 * i + 1] += max(0, (o - 1) * s + k - (d + lo + hi))
        if x.nhwc:
            r = self._wrap(self.b.pool2d(kind, self.value(x, keep_nhwc=True), kernel,
                                         strides, pads, "nhwc"), nhwc=True)
        else:
            r = self._wrap(self.b.pool2d(kind, self.value(x), kernel, strides, pads, "nchw"))
        if kind != "avg" or not (count_include_pad or divisor_override):
            return r
        # scale[oh, ow] = (in-bounds elements) / divisor of each window.
        axes = []
        for i, d in enumerate(size):
            lo, hi, k, s = padding[2 * i], padding[2 * i + 1], kernel[i], strides[i]
            start = np.arange(r.shape[2 + i]) * s - lo
            inb = np.minimum(start + k, d) - np.maximum(start, 0)
            padded = np.minimum(start + k, d + hi) - start
            axes.append((inb, padded))
        inb = np.outer(axes[0][0], axes[1][0]).astype(np.float64)
        div = (np.full_like(inb, float(divisor_override)) if divisor_override
               else np.outer(axes[0][1], axes[1][1]).astype(np.float64))
        scale = inb / div
        if np.all(scale == 1.0):
            return r
        if np.all(scale == scale.flat[0]):
            return self.binary("mul", r, self.const(np.float32(scale.flat[0])))
        return self.binary("mul", r, self.const(scale.astype(np.float32)[None, None]))

    def adaptive_avg_pool2d(self, x, output_size):
        h, w = x.shape[2:]
        oh, ow = [h if o is None else o for o in output_size]
        if (oh, ow) == (1, 1):
            return self.reduce("mean", x, [2, 3], keep_dims=True)
        if h % oh == 0 and w % ow == 0:
            k = [h // oh, w // ow]
            return self.pool2d("avg", x, k, k, [0, 0, 0, 0])
        # Windows of different sizes (PyTorch's bins: floor(i H / OH) to
        # ceil((i + 1) H / OH)): a matmul of the flattened pixels with a
        # constant [H*W, OH*OW] matrix of the windows' weights.
        if h * w * oh * ow > (1 << 24):
            raise Unsupported(f"adaptive average pool from {h}x{w} to {oh}x{ow} "
                              f"(a {h * w}x{oh * ow} averaging matrix is too large)")

        def bins(n, o):
            m = np.zeros((n, o), np.float64)
            for i in range(o):
                lo, hi = (i * n) // o, -((-(i + 1) * n) // o)
                m[lo:hi, i] = 1.0 / (hi - lo)
            return m

        weights = np.einsum("hi,wj->hwij", bins(h, oh), bins(w, ow)).reshape(h * w, oh * ow)
        n, c = x.shape[:2]
        flat = self.reshape(x, [n, c, h * w])
        y = self.matmul(flat, self.const(weights.astype(np.float32)))
        return self.reshape(y, [n, c, oh, ow])

    def resize2d(self, x, size, mode, align_corners=False, scales=(None, None)):
        """Nearest or bilinear resizing of the last two dims as PyTorch
        computes it (upsample_nearest2d / upsample_bilinear2d, given sizes
        or scale factors): matmuls with constant interpolation matrices,
        y = M_h x M_w^T (M_h applied with H moved last)."""
        if x.rank != 4:
            raise Unsupported(f"{mode} resize of a rank-{x.rank} tensor")
        h, w = x.shape[2:]
        oh, ow = (int(d) for d in size)
        if min(oh, ow) <= 0:
            raise Unsupported(f"resize to {oh}x{ow}")
        if max(h * oh, w * ow) > (1 << 24):
            raise Unsupported(f"resize from {h}x{w} to {oh}x{ow} (interpolation matrix too large)")
        mh = _interp_matrix(h, oh, mode, align_corners, scales[0])
        mw = _interp_matrix(w, ow, mode, align_corners, scales[1])
        y = x
        if not (w == ow and np.array_equal(mw, np.eye(w))):
            y = self.matmul(y, self.const(np.ascontiguousarray(mw.T).astype(np.float32)))
        if not (h == oh and np.array_equal(mh, np.eye(h))):
            # Along H: with H last (a matmul's constant operand is the right
            # one, its batch dims broadcast), then back.
            y = self.transpose(y, [0, 1, 3, 2])
            y = self.matmul(y, self.const(np.ascontiguousarray(mh.T).astype(np.float32)))
            y = self.transpose(y, [0, 1, 3, 2])
        return y

    # --- decompositions --------------------------------------------------

    def softmax(self, x, axis, log=False):
        axis %= x.rank
        v = self.value(x)
        m = self.b.reduce("max", v, [axis], keep_dims=True)
        s = self.b.binary("sub", v, m)
        e = self.b.unary("exp", s)
        z = self.b.reduce("sum", e, [axis], keep_dims=True)
        if log:
            return self._wrap(self.b.binary("sub", s, self.b.unary("log", z)))
        return self._wrap(self.b.binary("div", e, z))

    def _f32(self, v):
        return self.const(np.float32(v))

    def _positive_or(self, x, neg):
        """x where x > 0, else ``neg``."""
        return self.where(self.compare("gt", x, self._f32(0.0)), x, neg)

    def leaky_relu(self, x, slope=0.01):
        """x where x > 0, else slope * x."""
        return self._positive_or(x, self.binary("mul", x, self._f32(slope)))

    def elu(self, x, alpha=1.0, scale=1.0, input_scale=1.0):
        """torch.elu (and selu): scale * (x where x > 0, else alpha *
        (exp(input_scale * x) - 1))."""
        neg = self.binary("mul", self.binary("sub", self.unary(
            "exp", self.binary("mul", x, self._f32(input_scale)) if input_scale != 1.0 else x),
            self._f32(1.0)), self._f32(alpha))
        y = self._positive_or(x, neg)
        return y if scale == 1.0 else self.binary("mul", y, self._f32(scale))

    def softplus(self, x, beta=1.0, threshold=20.0):
        """log(1 + exp(beta x)) / beta; x itself where beta x > threshold
        (torch's rule, which also keeps exp from overflowing)."""
        bx = self.binary("mul", x, self._f32(beta)) if beta != 1.0 else x
        big = self.compare("gt", bx, self._f32(threshold))
        # max(bx, 0) + log(1 + exp(-|bx|)): exp never overflows (f16 too).
        e = self.unary("exp", self.unary("neg", self.unary("abs", bx)))
        sp = self.binary("add", self.clamp(bx, 0.0, None),
                         self.unary("log", self.binary("add", e, self._f32(1.0))))
        if beta != 1.0:
            sp = self.binary("mul", sp, self._f32(1.0 / beta))
        return self.where(big, x, sp)

    def prelu(self, x, weight, channel_axis=1):
        """x where x > 0, else weight * x; a 1-D weight of C values applies
        along ``channel_axis`` (torch: dim 1), one value to every element;
        ``channel_axis=None`` broadcasts the weight as it is (ONNX)."""
        w = weight
        if channel_axis is not None and w.rank == 1 and w.shape[0] != 1 and x.rank >= 2:
            shape = [1] * x.rank
            shape[channel_axis] = w.shape[0]
            w = self.reshape(w, shape)
        return self._positive_or(x, self.binary("mul", x, w))

    def mish(self, x):
        """x * tanh(softplus(x))."""
        return self.binary("mul", x, self.unary("tanh", self.softplus(x)))

    def layer_norm(self, x, normalized_shape, weight=None, bias=None, eps=1e-5):
        k = len(normalized_shape)
        if list(x.shape[-k:]) != list(normalized_shape):
            raise Unsupported(f"layer norm over {list(normalized_shape)} of {x.shape}")
        axes = list(range(x.rank - k, x.rank))
        v = self.value(x)
        dt = v.dtype
        mean = self.b.reduce("mean", v, axes, keep_dims=True)
        d = self.b.binary("sub", v, mean)
        var = self.b.reduce("mean", self.b.binary("mul", d, d), axes, keep_dims=True)
        r = self.b.unary("rsqrt", self.b.binary("add", var, self.b.constant(eps, dt)))
        y = self._wrap(self.b.binary("mul", d, r))
        if weight is not None:
            y = self.binary("mul", y, weight)
        if bias is not None:
            y = self.binary("add", y, bias)
        return y
