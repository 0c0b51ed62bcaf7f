"""The PyTorch importer: an nn.Module to kgraph IR through an ATen-level FX graph.

The module is traced to ATen ops with example inputs:

- torch 2.x (``torch.export`` exists): ``torch.export.export`` and
  ``run_decompositions()`` (core ATen); if the export fails, ``make_fx`` as on
  torch 1.13;
- torch 1.13: ``make_fx`` over ``functional_call`` with the parameters and
  buffers as explicit arguments, so each placeholder has its state-dict name.
  Parameters are traced with ``requires_grad`` under grad mode so modules
  with an inference fast path (``nn.TransformerEncoderLayer``,
  ``nn.MultiheadAttention``) trace their decomposed form.

Each FX node is then mapped by :data:`OPS` (keyed by the ATen op's name,
both versions' spellings) onto :class:`~kgraph.importers.lowering.Lowering`.
Nodes whose tensor operands are all constants and that have no mapping of
their own (factory ops, shape arithmetic) are evaluated with torch at import
time. Every node that cannot be mapped is collected, with the reason, and
reported together (:class:`kgraph.errors.UnsupportedModelError`).
"""

import math
import operator

import numpy as np

from .lowering import T, Unsupported

_TORCH_DTYPES = {}


def _dtype_name(torch, dt):
    if not _TORCH_DTYPES:
        _TORCH_DTYPES.update({torch.float32: "f32", torch.float16: "f16",
                              torch.bfloat16: "bf16", torch.float64: "f32",
                              torch.int32: "i32", torch.int64: "i32",
                              torch.int8: "i8", torch.bool: "i1",
                              torch.uint8: "i32", torch.int16: "i32"})
    if dt not in _TORCH_DTYPES:
        raise Unsupported(f"dtype {dt}")
    return _TORCH_DTYPES[dt]


class _Poison:
    """The value of a node that could not be imported; its users are not
    reported again."""


class _NoValue:
    """An output of a multi-result op that kgraph does not compute (batch
    norm statistics, pooling indices, dropout masks)."""

    def __init__(self, what):
        self.what = what


# --- tracing -------------------------------------------------------------

def _functional_call():
    import torch
    fc = getattr(getattr(torch, "func", None), "functional_call", None)
    if fc is None:
        from torch.nn.utils import stateless
        fc = stateless.functional_call
    return fc


def trace_make_fx(model, example_inputs, mode="fake"):
    """(graph module, {placeholder name: (state name, tensor)}) via make_fx.
    ``mode="fake"`` traces with fake tensors (shapes only, no arithmetic:
    a ResNet-50 at batch 8 traces in about 2 s of CPU time instead of
    running on the CPU); "real" runs the model."""
    import torch
    from torch.fx.experimental import proxy_tensor as _pt
    from torch.fx.experimental.proxy_tensor import make_fx
    state = list(model.named_parameters(remove_duplicate=False)) \
        if _has_remove_duplicate(model) else list(model.named_parameters())
    nparams = len(state)
    seen = {n for n, _ in state}
    state += [(n, b) for n, b in model.named_buffers() if n not in seen]
    names = [n for n, _ in state]
    # Parameters (not buffers) require grad: see the module docstring.
    values = [v.detach().clone().requires_grad_(i < nparams and v.is_floating_point())
              for i, (_, v) in enumerate(state)]
    fc = _functional_call()
    k = len(names)

    def fn(*args):
        return fc(model, dict(zip(names, args[:k])), tuple(args[k:]))

    mha = getattr(getattr(torch.backends, "mha", None), "set_fastpath_enabled", None)
    with torch.enable_grad():
        if mha is not None:
            old = torch.backends.mha.get_fastpath_enabled()
            mha(False)
        try:
            tracer_cls = getattr(_pt, "PythonKeyTracer", None)
            old_rst = getattr(tracer_cls, "record_stack_traces", None)
            if tracer_cls is not None:
                tracer_cls.record_stack_traces = True   # source locations
            try:
                gm = make_fx(fn, tracing_mode=mode)(*values, *example_inputs)
            finally:
                if tracer_cls is not None:
                    tracer_cls.record_stack_traces = old_rst
        finally:
            if mha is not None:
                mha(old)
    gm._kgraph_innermost_first = True
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    consts = {}
    for node, name, v in zip(placeholders[:k], names, values):
        consts[node.name] = (name, v.detach())
    return gm, consts


def _has_remove_duplicate(model):
    import inspect
    try:
        return "remove_duplicate" in inspect.signature(model.named_parameters).parameters
    except (TypeError, ValueError):
        return False


def trace_export(model, example_inputs):
    """(graph module, {placeholder name: (state name, tensor)}) via
    torch.export (torch 2.x)."""
    import torch
    mha = getattr(getattr(torch.backends, "mha", None), "set_fastpath_enabled", None)
    if mha is not None:
        old = torch.backends.mha.get_fastpath_enabled()
        mha(False)        # attention's decomposed form, not its fused kernel
    try:
        ep = torch.export.export(model, tuple(example_inputs))
        ep = ep.run_decompositions()
    finally:
        if mha is not None:
            mha(old)
    sig = ep.graph_signature
    consts = {}
    state = dict(ep.state_dict)
    state.update(getattr(ep, "constants", {}) or {})
    for spec in sig.input_specs:
        kind = str(spec.kind).split(".")[-1]
        if kind == "USER_INPUT":
            continue
        name = spec.target
        if name not in state:
            raise Unsupported(f"exported input '{spec.arg.name}' of kind {kind} has no value")
        t = state[name]
        if not hasattr(t, "detach"):
            raise Unsupported(f"exported constant '{name}' is not a tensor")
        consts[spec.arg.name] = (name, t.detach())
    return ep.graph_module, consts


def trace(model, example_inputs, tracer="auto"):
    """Traces ``model``; returns (graph module, consts, tracer used)."""
    import torch
    if tracer == "auto":
        tracer = "export" if hasattr(torch, "export") and \
            hasattr(torch.export, "export") else "make_fx"
    if tracer == "export":
        try:
            gm, consts = trace_export(model, example_inputs)
            gm._kgraph_innermost_first = False
            return gm, consts, "torch.export"
        except Exception as e:          # fall back to make_fx, as on 1.13
            export_error = e
        for mode in ("fake", "real"):
            try:
                gm, consts = trace_make_fx(model, example_inputs, mode)
                return gm, consts, f"make_fx (torch.export failed: {_one_line(export_error)})"
            except Exception:
                pass
        raise export_error
    try:
        gm, consts = trace_make_fx(model, example_inputs, "fake")
        return gm, consts, "make_fx"
    except Exception:
        # Some models do not trace with fake tensors (data-dependent Python
        # code, tensors made inside forward); run them for real.
        gm, consts = trace_make_fx(model, example_inputs, "real")
        return gm, consts, "make_fx (real tensors)"


def _one_line(e):
    s = str(e).strip().splitlines()
    return f"{type(e).__name__}: {s[0] if s else ''}"[:200]


# --- the op table ----------------------------------------------------------

def _op_name(target):
    """'convolution' for aten.convolution.default; the builtin's name for
    operator.getitem and the like."""
    pk = getattr(target, "_overloadpacket", None)
    if pk is not None:
        return pk.__name__
    return getattr(target, "__name__", str(target))


def _overload(target):
    return getattr(target, "_overloadname", "") or ""


def _pair(v):
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v] * (2 if len(v) == 1 else 1)
    return [int(v), int(v)]


class _Ctx:
    """What an op mapping sees: the Lowering (``L``), the node and helpers."""

    def __init__(self, L, node):
        self.L, self.node = L, node


def _t(L, x):
    """``x`` as a T: a T stays, a Python number becomes a scalar constant."""
    if isinstance(x, T):
        return x
    if isinstance(x, bool):
        return L.const(np.bool_(x))
    if isinstance(x, int):
        return L.const(np.float32(x))
    if isinstance(x, float):
        return L.const(np.float32(x))
    raise Unsupported(f"operand {x!r} is not a tensor or number")


def _binary(kind, swap=False):
    def f(L, a, b, alpha=1, **kw):
        if kw.get("rounding_mode") is not None:
            raise Unsupported(f"division with rounding_mode={kw['rounding_mode']!r}")
        a, b = _t(L, a), _t(L, b)
        if alpha != 1:
            b = L.binary("mul", b, L.const(np.float32(alpha)))
        if swap:
            a, b = b, a
        return L.binary(kind, a, b)
    return f


def _unary(kind):
    return lambda L, x, *a, **kw: L.unary(kind, x)


def _conv(L, x, w, b=None, stride=1, padding=0, dilation=1, transposed=False,
          output_padding=0, groups=1):
    if transposed:
        raise Unsupported("transposed convolution")
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        else:
            raise Unsupported(f"convolution with padding={padding!r}")
    if x.rank != 4:
        raise Unsupported(f"convolution of a rank-{x.rank} input (only conv2d)")
    ph, pw = _pair(padding)
    return L.conv2d(x, w, b, _pair(stride), [ph, ph, pw, pw], _pair(dilation), groups)


def _conv2d(L, x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(L, x, w, b, stride, padding, dilation, False, 0, groups)


def _bn(L, x, w, b, mean, var, training, momentum, eps, *rest):
    if training:
        raise Unsupported("batch norm in training mode (call model.eval())")
    y = L.batch_norm(x, mean, var, w, b, eps)
    return (y, _NoValue("batch norm statistics"), _NoValue("batch norm statistics"))


def _bn_no_training(L, x, w, b, mean, var, momentum, eps):
    return _bn(L, x, w, b, mean, var, False, momentum, eps)


def _bn_legit(L, x, w, b, mean, var, training, momentum, eps):
    return _bn(L, x, w, b, mean, var, training, momentum, eps)


def _batch_norm(L, x, w, b, mean, var, training, momentum, eps, *rest):
    return _bn(L, x, w, b, mean, var, training, momentum, eps)[0]


def _max_pool(L, x, kernel, stride=None, padding=0, dilation=1, ceil_mode=False):
    k = _pair(kernel)
    s = _pair(stride) if stride else k
    ph, pw = _pair(padding)
    return L.pool2d("max", x, k, s, [ph, ph, pw, pw], ceil_mode, dilation=_pair(dilation))


def _max_pool_with_indices(L, *args, **kw):
    return (_max_pool(L, *args, **kw), _NoValue("max pool indices"))


def _avg_pool(L, x, kernel, stride=None, padding=0, ceil_mode=False,
              count_include_pad=True, divisor_override=None):
    k = _pair(kernel)
    s = _pair(stride) if stride else k
    ph, pw = _pair(padding)
    return L.pool2d("avg", x, k, s, [ph, ph, pw, pw], ceil_mode, count_include_pad,
                    divisor_override=divisor_override)


def _adaptive_avg(L, x, output_size):
    return L.adaptive_avg_pool2d(x, _pair(output_size))


def _dims(x, dim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.rank))
    if isinstance(dim, int):
        return [dim]
    return list(dim)


def _reduce(kind):
    def f(L, x, dim=None, keepdim=False, dtype=None, **kw):
        if isinstance(dim, bool):        # sum.default(x, dtype) spellings
            dim = None
        if dtype is not None:
            x = L.cast(x, _dtype_name(_torch(), dtype))
        return L.reduce(kind, x, _dims(x, dim), keepdim)
    return f


def _torch():
    import torch
    return torch


def _view(L, x, size, *rest):
    return L.reshape(x, list(size))


def _as_strided(L, x, size, stride, storage_offset=None, _in_stride=None):
    """as_strided that reads the elements in the order a reshape would (e.g.
    torch 1.13 re-striding a pooled mean to channels-last, size-1 dims
    only): a reshape. ``_in_stride`` is the input's stride as traced."""
    size, stride = [int(d) for d in size], [int(d) for d in stride]
    if storage_offset:
        raise Unsupported("as_strided with a storage offset")
    if _in_stride is None:
        raise Unsupported("as_strided of a tensor whose strides were not traced")
    n = int(np.prod(size))
    if n != int(np.prod(x.shape)) or n > (1 << 26):
        raise Unsupported(f"as_strided to {size} of a {x.shape} tensor")

    def offsets(shape, strides):
        off = np.zeros([1] * len(shape), np.int64)
        for k, (d, st) in enumerate(zip(shape, strides)):
            ax = [1] * len(shape)
            ax[k] = d
            off = off + (np.arange(d, dtype=np.int64) * st).reshape(ax)
        return np.broadcast_to(off, shape).reshape(-1)

    if not np.array_equal(offsets(size, stride), offsets(x.shape, _in_stride)):
        raise Unsupported("as_strided that reorders, skips or repeats elements")
    return L.reshape(x, size)


def _flatten(L, x, start=0, end=-1):
    if x.rank == 0:
        return L.reshape(x, [1])
    s, e = start % x.rank, end % x.rank
    shape = x.shape[:s] + [int(np.prod(x.shape[s:e + 1]))] + x.shape[e + 1:]
    return L.reshape(x, shape)


def _unsqueeze(L, x, dim):
    d = dim % (x.rank + 1)
    return L.reshape(x, x.shape[:d] + [1] + x.shape[d:])


def _squeeze(L, x, dim=None):
    if dim is None:
        return L.reshape(x, [d for d in x.shape if d != 1])
    dims = {d % max(x.rank, 1) for d in _dims(x, dim)}
    return L.reshape(x, [d for i, d in enumerate(x.shape) if not (i in dims and d == 1)])


def _permute(L, x, dims):
    return L.transpose(x, list(dims))


def _transpose(L, x, d0, d1):
    perm = list(range(x.rank))
    d0, d1 = d0 % x.rank, d1 % x.rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return L.transpose(x, perm)


def _t2(L, x):
    if x.rank < 2:
        return x
    return L.transpose(x, [1, 0])


def _identity(L, x, *a, **kw):
    return x


def _clone(L, x, *a, **kw):
    """clone / lift_fresh_copy: a constant gets memory of its own (an
    in-place write into the copy must not reach the original)."""
    if isinstance(x, T) and x.is_const:
        return T(x.shape, x.dtype, data=np.array(x.data, copy=True), name=x.name)
    return x


def _contiguous(L, x, *a, **kw):
    """A constant view that is not C-contiguous is copied, as torch does."""
    if isinstance(x, T) and x.is_const and not x.data.flags.c_contiguous:
        return _clone(L, x)
    return x


def _assertion(L, *a, **kw):
    """A runtime check torch inserts while tracing (torch 2.6+ export adds
    aten._assert_tensor_metadata after dtype conversions): the traced graph
    already has the shapes and dtypes it asserts, so nothing is computed."""
    return None


def _dropout(L, x, p=0.5, train=False, *a):
    if train:
        raise Unsupported("dropout in training mode (call model.eval())")
    return x


def _native_dropout(L, x, p, train):
    return (_dropout(L, x, p, train), _NoValue("dropout mask"))


def _to_copy(L, x, *args, dtype=None, **kw):
    for a in args:                     # to.dtype(x, dtype, ...) positional
        if isinstance(a, _torch().dtype):
            dtype = a
    if dtype is None:
        return _clone(L, x)
    return L.cast(x, _dtype_name(_torch(), dtype))


def _cat(L, xs, dim=0):
    xs = [_t(L, x) for x in xs]
    xs = [x for x in xs if not (x.rank == 1 and x.shape[0] == 0)]
    return L.concat(xs, dim)


def _slice(L, x, dim=0, start=None, end=None, step=1):
    n = x.shape[dim]
    start = 0 if start is None else start
    end = n if end is None else min(end, n)
    return L.slice(x, dim, start, end, step)


def _narrow(L, x, dim, start, length):
    return L.slice(x, dim, start, start + length)


def _select(L, x, dim, index):
    dim %= x.rank
    idx = index % x.shape[dim]
    s = L.slice(x, dim, idx, idx + 1)
    return L.reshape(s, x.shape[:dim] + x.shape[dim + 1:])


def _split(L, x, size, dim=0):
    n = x.shape[dim % x.rank]
    if isinstance(size, int):
        sizes = [min(size, n - i) for i in range(0, n, size)]
    else:
        sizes = list(size)
    return L.split(x, sizes, dim)


def _chunk(L, x, chunks, dim=0):
    n = x.shape[dim % x.rank]
    size = -(-n // chunks)
    return _split(L, x, size, dim)


def _unbind(L, x, dim=0):
    return [_select(L, x, dim, i) for i in range(x.shape[dim % x.rank])]


def _expand(L, x, size, *a, **kw):
    return L.expand(x, list(size))


def _addmm(L, bias, a, b, beta=1, alpha=1):
    return L.gemm(a, b, bias, alpha, beta)


def _mm(L, a, b):
    return L.matmul(a, b)


def _linear(L, x, w, b=None):
    return L.linear(x, w, b)


def _softmax(L, x, dim, half_to_float=False, dtype=None):
    if isinstance(half_to_float, _torch().dtype):
        dtype = half_to_float
    if dtype is not None:
        x = L.cast(x, _dtype_name(_torch(), dtype))
    return L.softmax(x, dim)


def _log_softmax(L, x, dim, half_to_float=False, dtype=None):
    if isinstance(half_to_float, _torch().dtype):
        dtype = half_to_float
    if dtype is not None:
        x = L.cast(x, _dtype_name(_torch(), dtype))
    return L.softmax(x, dim, log=True)


def _native_layer_norm(L, x, shape, w, b, eps):
    return (L.layer_norm(x, list(shape), w, b, eps), _NoValue("layer norm mean"),
            _NoValue("layer norm rstd"))


def _layer_norm(L, x, shape, w=None, b=None, eps=1e-5, *a):
    return L.layer_norm(x, list(shape), w, b, eps)


def _gelu(L, x, approximate="none"):
    return L.gelu(x, approximate == "tanh")


def _hardtanh(L, x, lo=-1.0, hi=1.0):
    return L.clamp(x, lo, hi)


def _clamp(L, x, lo=None, hi=None):
    if isinstance(lo, T) or isinstance(hi, T):
        raise Unsupported("clamp with tensor bounds")
    return L.clamp(x, lo, hi)


def _relu6(L, x):
    return L.clamp(x, 0.0, 6.0)


def _silu(L, x):
    return L.silu(x)


def _hardsigmoid(L, x):
    y = L.clamp(L.binary("add", x, L.const(np.float32(3.0))), 0.0, 6.0)
    return L.binary("mul", y, L.const(np.float32(1.0 / 6.0)))


def _hardswish(L, x):
    return L.binary("mul", x, _hardsigmoid(L, x))


def _scalar(v, what):
    """A number argument that tracing may have made a one-element constant."""
    if isinstance(v, T):
        if not v.is_const or v.data.size != 1:
            raise Unsupported(f"{what} is not a number")
        return v.data.reshape(-1)[0].item()
    return v


def _leaky_relu(L, x, slope=0.01):
    return L.leaky_relu(x, _scalar(slope, "leaky_relu's slope"))


def _elu(L, x, alpha=1.0, scale=1.0, input_scale=1.0):
    return L.elu(x, _scalar(alpha, "elu's alpha"), _scalar(scale, "elu's scale"),
                 _scalar(input_scale, "elu's input_scale"))


def _selu(L, x):
    return L.elu(x, 1.6732632423543772, 1.0507009873554805)


def _softplus(L, x, beta=1.0, threshold=20.0):
    return L.softplus(x, _scalar(beta, "softplus's beta"),
                      _scalar(threshold, "softplus's threshold"))


def _prelu(L, x, weight):
    return L.prelu(x, weight)


def _sdpa(L, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kw):
    if attn_mask is not None or is_causal:
        raise Unsupported("scaled_dot_product_attention with a mask")
    if dropout_p:
        raise Unsupported("scaled_dot_product_attention with dropout")
    s = scale if scale is not None else 1.0 / float(np.sqrt(q.shape[-1]))
    perm = list(range(k.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    scores = L.matmul(L.binary("mul", q, L.const(np.float32(s))), L.transpose(k, perm))
    return L.matmul(L.softmax(scores, -1), v)


def _sdpa_for_cpu(L, q, k, v, dropout_p=0.0, is_causal=False, attn_mask=None,
                  scale=None, **kw):
    return (_sdpa(L, q, k, v, attn_mask, dropout_p, is_causal, scale),
            _NoValue("attention log-sum-exp"))


def _baddbmm(L, x, a, b, beta=1, alpha=1):
    return L.gemm(a, b, x, alpha, beta) if a.rank == 2 else \
        _baddbmm3(L, x, a, b, beta, alpha)


def _baddbmm3(L, x, a, b, beta, alpha):
    y = L.matmul(a, b)
    if alpha != 1:
        y = L.binary("mul", y, L.const(np.float32(alpha)))
    if beta == 0:
        return y
    if beta != 1:
        x = L.binary("mul", x, L.const(np.float32(beta)))
    return L.binary("add", y, x)


def _rsub(L, a, b, alpha=1):
    a, b = _t(L, a), _t(L, b)
    if alpha != 1:
        a = L.binary("mul", a, L.const(np.float32(alpha)))
    return L.binary("sub", b, a)


def _getitem(L, x, i):
    if isinstance(x, (tuple, list)):
        return x[i]
    raise Unsupported("indexing a tensor")


def _compare(direction):
    return lambda L, a, b: L.compare(direction, _t(L, a), _t(L, b))


def _any_all(kind):
    def f(L, x, dim=None, keepdim=False):
        return L.any_all(kind, x, None if dim is None else _dims(x, dim), keepdim)
    return f


def _where(L, cond, a=None, b=None):
    if a is None or b is None:
        raise Unsupported("where(condition) (the indices of true elements)")
    return L.where(_t(L, cond), _t(L, a), _t(L, b))


def _bitwise_not(L, x):
    x = _t(L, x)
    if x.dtype != "i1":
        raise Unsupported("bitwise_not of an integer tensor")
    return L.logical_not(x)


def _bitwise(kind):
    def f(L, a, b):
        a, b = _t(L, a), _t(L, b)
        if a.dtype != "i1" or b.dtype != "i1":
            raise Unsupported(f"bitwise_{kind} of integer tensors")
        return L.logical(kind, a, b)
    return f


def _masked_fill(L, x, mask, value):
    return L.where(_t(L, mask), _t(L, value), x)


def _full_like(value):
    def f(L, x, fill_value=None, dtype=None, **kw):
        v = value if value is not None else _scalar(fill_value, "fill value")
        dt = _dtype_name(_torch(), dtype) if dtype is not None else None
        return L.full_like(x, v, L.float_type(dt or x.dtype))
    return f


def _constant_pad(L, x, pad, value=0):
    """F.pad / aten.constant_pad_nd: ``pad`` pairs from the last dim back."""
    if len(pad) % 2 or len(pad) // 2 > x.rank:
        raise Unsupported(f"padding {list(pad)} of a rank-{x.rank} tensor")
    pads = [(0, 0)] * x.rank
    for i in range(len(pad) // 2):
        pads[x.rank - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return L.pad(x, pads, value)


def _pad(L, x, pad, mode="constant", value=None):
    if mode != "constant":
        raise Unsupported(f"{mode} padding (only constant)")
    return _constant_pad(L, x, pad, 0 if value is None else value)


def _new_full(value):
    """x.new_zeros / new_ones / new_full / new_empty: a constant of the given
    size; only x's dtype is read."""
    def f(L, x, size, fill_value=None, dtype=None, **kw):
        v = value if value is not None else _scalar(fill_value, "new_full's value")
        dt = _dtype_name(_torch(), dtype) if dtype is not None else x.dtype
        np_t = np.float32 if dt in ("f16", "bf16", "f32") else \
            (np.bool_ if dt == "i1" else np.int32)
        return L.const(np.full([int(d) for d in size], v, dtype=np_t))
    return f


def _roll(L, x, shifts, dims=()):
    """torch.roll: a concat of two slices per rolled dim (no dims: the
    flattened tensor)."""
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not dims:
        shape = list(x.shape)
        return L.reshape(_roll(L, L.reshape(x, [int(np.prod(shape))]), shifts, [0]), shape)
    if len(shifts) != len(dims):
        raise Unsupported(f"roll with {len(shifts)} shifts for {len(dims)} dims")
    for sh, d in zip(shifts, dims):
        d %= x.rank
        n = x.shape[d]
        sh = int(sh) % n if n else 0
        if sh == 0:
            continue
        if x.is_const:
            x = L.const(np.roll(x.data, sh, axis=d))
            continue
        x = L.concat([L.slice(x, d, n - sh, n), L.slice(x, d, 0, n - sh)], d)
    return x


def _resize_size(x, output_size, scales):
    h, w = x.shape[2:]
    if output_size is not None:
        return [int(d) for d in output_size], (scales if scales else (None, None))
    if not scales:
        raise Unsupported("resize without an output size or scale factors")
    sh, sw = (float(v) for v in scales)
    return [int(math.floor(h * sh)), int(math.floor(w * sw))], (sh, sw)


def _scales_of(rest):
    """The scale factors of an upsample op's trailing arguments: .vec has a
    list (or None), .default scales_h and scales_w (each may be None)."""
    if not rest:
        return None
    if isinstance(rest[0], (list, tuple)):
        return rest[0]
    if len(rest) >= 2 and rest[0] is not None and rest[1] is not None:
        return rest[:2]
    return None


def _upsample_bilinear(L, x, output_size, align_corners, *rest, **kw):
    """upsample_bilinear2d: .vec (size, align_corners, scale_factors) and
    .default (size, align_corners, scales_h, scales_w)."""
    size, scales = _resize_size(x, output_size, _scales_of(rest))
    return L.resize2d(x, size, "linear", bool(align_corners), tuple(scales))


def _upsample_nearest(L, x, output_size, *rest, **kw):
    """upsample_nearest2d: .vec (size, scale_factors) and .default (size,
    scales_h, scales_w)."""
    size, scales = _resize_size(x, output_size, _scales_of(rest))
    return L.resize2d(x, size, "nearest", False, tuple(scales))


#: ATen op name (overload packet) -> mapping(L, *args, **kwargs).
OPS = {
    "convolution": _conv, "conv2d": _conv2d, "_convolution": _conv,
    "native_batch_norm": _bn, "_native_batch_norm_legit_no_training": _bn_no_training,
    "_native_batch_norm_legit": _bn_legit, "batch_norm": _batch_norm,
    "relu": _unary("relu"), "sigmoid": _unary("sigmoid"), "tanh": _unary("tanh"),
    "exp": _unary("exp"), "log": _unary("log"), "sqrt": _unary("sqrt"),
    "rsqrt": _unary("rsqrt"), "neg": _unary("neg"), "abs": _unary("abs"),
    "gelu": _gelu, "silu": _silu, "hardtanh": _hardtanh, "clamp": _clamp,
    "clamp_min": lambda L, x, lo: L.clamp(x, lo, None),
    "clamp_max": lambda L, x, hi: L.clamp(x, None, hi),
    "relu6": _relu6, "hardsigmoid": _hardsigmoid, "hardswish": _hardswish,
    "leaky_relu": _leaky_relu, "elu": _elu, "selu": _selu,
    "celu": lambda L, x, alpha=1.0: L.elu(x, _scalar(alpha, "celu's alpha"), 1.0,
                                          1.0 / _scalar(alpha, "celu's alpha")),
    "softplus": _softplus, "mish": lambda L, x: L.mish(x), "prelu": _prelu, "_prelu_kernel": _prelu,
    "add": _binary("add"), "sub": _binary("sub"), "mul": _binary("mul"),
    "div": _binary("div"), "rsub": _rsub, "maximum": _binary("max"),
    "minimum": _binary("min"), "pow": _binary("pow"),
    "max_pool2d_with_indices": _max_pool_with_indices, "max_pool2d": _max_pool,
    "avg_pool2d": _avg_pool, "_adaptive_avg_pool2d": _adaptive_avg,
    "adaptive_avg_pool2d": _adaptive_avg,
    "mean": _reduce("mean"), "sum": _reduce("sum"), "amax": _reduce("max"),
    "as_strided": _as_strided,
    "view": _view, "_unsafe_view": _view, "reshape": _view, "_reshape_alias": _view,
    "flatten": _flatten, "unsqueeze": _unsqueeze, "squeeze": _squeeze,
    "permute": _permute, "transpose": _transpose, "t": _t2,
    "expand": _expand,
    "clone": _clone, "contiguous": _contiguous, "alias": _identity,
    "detach": _identity, "lift_fresh_copy": _clone, "lift_fresh": _identity,
    "dropout": _dropout, "native_dropout": _native_dropout,
    "feature_dropout": _dropout,
    "_to_copy": _to_copy, "to": _to_copy, "type_as": None,
    "cat": _cat, "concat": _cat, "constant_pad_nd": _constant_pad, "pad": _pad,
    "slice": _slice, "narrow": _narrow, "select": _select,
    "split": _split, "split_with_sizes": _split, "chunk": _chunk, "unbind": _unbind,
    "addmm": _addmm, "mm": _mm, "bmm": _mm, "matmul": _mm, "linear": _linear,
    "_softmax": _softmax, "softmax": _softmax, "_log_softmax": _log_softmax,
    "log_softmax": _log_softmax,
    "native_layer_norm": _native_layer_norm, "layer_norm": _layer_norm,
    "scaled_dot_product_attention": _sdpa,
    "_scaled_dot_product_flash_attention_for_cpu": _sdpa_for_cpu,
    "baddbmm": _baddbmm,
    "eq": _compare("eq"), "ne": _compare("ne"), "lt": _compare("lt"),
    "le": _compare("le"), "gt": _compare("gt"), "ge": _compare("ge"),
    "logical_not": lambda L, x: L.logical_not(_t(L, x)),
    "bitwise_not": _bitwise_not, "bitwise_and": _bitwise("and"),
    "bitwise_or": _bitwise("or"), "bitwise_xor": _bitwise("xor"),
    "logical_and": lambda L, a, b: L.logical("and", _t(L, a), _t(L, b)),
    "logical_or": lambda L, a, b: L.logical("or", _t(L, a), _t(L, b)),
    "logical_xor": lambda L, a, b: L.logical("xor", _t(L, a), _t(L, b)),
    "any": _any_all("any"), "all": _any_all("all"),
    "isnan": lambda L, x: L.compare("ne", x, x),
    "isinf": lambda L, x: L.compare("eq", L.unary("abs", x), L.const(np.float32(np.inf))),
    "isfinite": lambda L, x: L.compare("lt", L.unary("abs", x), L.const(np.float32(np.inf))),
    "where": _where, "masked_fill": _masked_fill,
    "new_zeros": _new_full(0), "new_ones": _new_full(1), "new_empty": _new_full(0),
    "new_full": _new_full(None), "roll": _roll,
    "upsample_bilinear2d": _upsample_bilinear, "upsample_nearest2d": _upsample_nearest,
    "full_like": _full_like(None), "zeros_like": _full_like(0),
    "ones_like": _full_like(1), "empty_like": _full_like(0),
    "getitem": _getitem,
    "_assert_tensor_metadata": _assertion, "_assert_async": _assertion,
    "_assert_scalar": _assertion,
}
OPS = {k: v for k, v in OPS.items() if v is not None}

#: Ops kept as mappings even when every operand is a constant (folding them
#: in numpy keeps the weight's name, e.g. a transposed Linear weight).
_NO_TORCH_FOLD = {"t", "transpose", "permute", "view", "_unsafe_view", "reshape",
                  "_reshape_alias", "detach", "clone", "alias", "getitem",
                  "lift_fresh_copy", "lift_fresh", "slice", "select", "narrow",
                  "unbind", "split",
                  "split_with_sizes", "chunk", "unsqueeze", "squeeze",
                  "flatten", "contiguous", "expand", "_to_copy", "to",
                  "_assert_tensor_metadata", "_assert_async", "_assert_scalar"}

#: Ops that mutate their first argument (``relu_``): mapped as their
#: out-of-place form, the result replacing the argument for later nodes.
def _inplace_base(name):
    if name.endswith("_") and not name.startswith("_") and name[:-1] in OPS:
        return name[:-1]
    return None


# --- the importer -----------------------------------------------------------

#: ATen ops whose result may share memory with their first argument (views;
#: ops that return their input unchanged). An in-place op on one tensor of
#: such a group changes the others too, which a value graph cannot say.
_VIEW_OPS = frozenset((
    "view", "_unsafe_view", "reshape", "_reshape_alias", "flatten", "unflatten",
    "unsqueeze", "squeeze", "permute", "transpose", "t", "expand", "expand_as",
    "view_as", "slice", "narrow", "select", "split", "split_with_sizes", "chunk",
    "unbind", "as_strided", "alias", "detach", "contiguous", "to", "type_as",
    "diagonal", "movedim", "swapaxes", "swapdims", "unfold", "numpy_T", "T",
    "view_as_real", "view_as_complex", "lift_fresh", "getitem", "clone_view"))


def _is_inplace(name):
    """Whether ATen op ``name`` mutates its first argument (``relu_``)."""
    return name is not None and name.endswith("_") and not name.startswith("_")


def _storage_groups(graph):
    """{node: the nodes that may share its memory, itself included, in graph
    order} over the graph's view chains, and {node: its position}."""
    import torch
    root = {}
    for node in graph.nodes:
        name = _op_name(node.target) if node.op == "call_function" else None
        src = node.args[0] if node.args else None
        # An in-place op's result is its first argument.
        if (name in _VIEW_OPS or _is_inplace(name)) and isinstance(src, torch.fx.Node) and \
                src.name in root:
            root[node.name] = root[src.name]
        else:
            root[node.name] = node.name
    members = {}
    for node in graph.nodes:
        members.setdefault(root[node.name], []).append(node)
    order = {n: i for i, n in enumerate(graph.nodes)}
    return {n: members[root[n.name]] for n in graph.nodes}, order


def _aliased_later(node, target, groups, order):
    """The nodes made before ``node`` (an in-place op on ``target``), other
    than ``target``, that share ``target``'s memory and are used after
    ``node`` (``groups``, ``order``: _storage_groups)."""
    here = order[node]
    # Nodes made after the in-place op read the updated value already.
    return [other for other in groups[target]
            if other is not target and order[other] < here
            and any(order[u] > here for u in other.users)]


def _fold_in_place(L, node, args, kwargs, env, aliased):
    """An in-place op on a constant whose views (or base) are used later:
    run with torch on the constant's own numpy memory, so those views see
    the write as torch's do (a mask written into slices of torch.zeros).
    Refused unless every such view is a constant sharing that memory."""
    import torch
    target = args[0]
    views = [env.get(o.name) for o in aliased]
    if not (isinstance(target, T) and target.is_const and target.data.flags.writeable
            and all(isinstance(v, T) and v.is_const and
                    np.shares_memory(v.data, target.data) for v in views)):
        return None

    try:
        # A strided numpy view is a strided torch view of the same memory.
        own = torch.from_numpy(target.data)
        node.target(own, *_as_torch(args[1:]), **{k: _as_torch(v) for k, v in kwargs.items()})
    except Exception as e:  # noqa: BLE001 - named below
        raise Unsupported(f"folding it on constants failed: {_one_line(e)}")
    return T(target.shape, target.dtype, data=target.data, name=target.name)


#: Whether the stack traces of the graph being imported list the innermost
#: frame first (make_fx's recorded traces on torch 1.13) or last (the usual
#: traceback order, torch.export).
_INNERMOST_FIRST = [False]


def node_location(node):
    """'file.py:12' of the model's own code from an FX node's stack trace,
    else None."""
    st = node.meta.get("stack_trace") if hasattr(node, "meta") else None
    if not st:
        return None
    import re
    hits = re.findall(r'File "([^"]+)", line (\d+)', st)
    # The innermost frame of the model's own code: not torch's, not ours.
    own = [h for h in hits if "/torch/" not in h[0] and "/kgraph/" not in h[0]
           and "<" not in h[0]]
    if not own:
        own = [h for h in hits if "/kgraph/" not in h[0]]
    if not own:
        return None
    f, line = own[0] if _INNERMOST_FIRST[0] else own[-1]
    return f"{f}:{line}"


def node_label(node):
    """The node's name, with the nn.Module path when the tracer kept it."""
    stack = node.meta.get("nn_module_stack") if hasattr(node, "meta") else None
    if stack:
        try:
            path = list(stack.values())[-1][0]
            if path:
                return f"{path}/{node.name}"
        except (TypeError, IndexError, KeyError):
            pass
    return node.name


def import_graph(L, gm, consts, input_names=None):
    """Maps the ATen-level FX graph ``gm`` onto Lowering ``L``. ``consts``:
    {placeholder name: (state-dict name, tensor)}. Returns the list of
    unsupported nodes (dicts for UnsupportedModelError); empty on success."""
    import torch
    env = {}
    bad = []
    user_index = 0
    _INNERMOST_FIRST[0] = bool(getattr(gm, "_kgraph_innermost_first", False))
    aliases = {}

    def lookup(a):
        if isinstance(a, torch.fx.Node):
            v = env[a.name]
            return v
        if isinstance(a, (list, tuple)):
            return type(a)(lookup(x) for x in a)
        if isinstance(a, dict):
            return {k: lookup(v) for k, v in a.items()}
        if isinstance(a, torch.Tensor):
            return L.const(_to_numpy(a))
        return a

    def has(v, cls):
        if isinstance(v, cls):
            return True
        if isinstance(v, (list, tuple)):
            return any(has(x, cls) for x in v)
        if isinstance(v, dict):
            return any(has(x, cls) for x in v.values())
        return False

    groups, order = _storage_groups(gm.graph)
    for node in gm.graph.nodes:
        L.b.loc = (node_label(node), node_location(node))
        if node.op == "placeholder":
            if node.name in consts:
                sname, tensor = consts[node.name]
                env[node.name] = L.const(_to_numpy(tensor), name=sname)
                continue
            val = _traced_value(node)
            if val is None or not hasattr(val, "shape"):
                bad.append({"name": node.name, "op": "placeholder",
                            "reason": "input without a known shape", "location": None})
                env[node.name] = _Poison()
                continue
            name = input_names[user_index] if input_names and user_index < len(input_names) \
                else f"input{user_index}"
            user_index += 1
            env[node.name] = L.input(list(val.shape), _dtype_name(torch, val.dtype), name)
            continue
        if node.op == "get_attr":
            obj = _get_attr(gm, node.target)
            if type(obj).__name__ == "FakeTensor":
                bad.append({"name": node.name, "op": "get_attr", "location": None,
                            "reason": "a constant traced as a fake tensor"})
                env[node.name] = _Poison()
                continue
            if isinstance(obj, torch.Tensor):
                env[node.name] = L.const(_to_numpy(obj), name=str(node.target))
            else:
                env[node.name] = obj
            continue
        if node.op == "output":
            outs = _flatten_outputs(lookup(node.args[0]))
            for o in outs:
                if isinstance(o, _Poison):
                    continue
                if not isinstance(o, T):
                    bad.append({"name": "output", "op": "output",
                                "reason": f"output is not a tensor ({type(o).__name__})",
                                "location": None})
                    continue
                if o.is_const:
                    bad.append({"name": "output", "op": "output",
                                "reason": "output is a constant", "location": None})
                    continue
                if not bad:
                    L.output(o)
            continue
        if node.op != "call_function":
            bad.append({"name": node.name, "op": f"{node.op} {node.target}",
                        "reason": "not an ATen call", "location": node_location(node)})
            env[node.name] = _Poison()
            continue
        name = _op_name(node.target)
        try:
            args = lookup(node.args)
            kwargs = lookup(dict(node.kwargs))
        except KeyError:
            env[node.name] = _Poison()
            continue
        if has(args, _Poison) or has(kwargs, _Poison):
            # Downstream of an unsupported node: still name an op that has
            # no mapping at all, so one message lists every such node.
            if OPS.get(_inplace_base(name) or name) is None and \
                    node.target is not operator.getitem:
                bad.append({"name": node_label(node), "op": _full_name(node.target),
                            "reason": "no kgraph mapping", "location": node_location(node)})
            env[node.name] = _Poison()
            continue
        try:
            if node.target is not operator.getitem and \
                    (has(args, _NoValue) or has(kwargs, _NoValue)):
                nv = [a for a in _flatten_outputs(args) if isinstance(a, _NoValue)]
                raise Unsupported(f"uses the {nv[0].what}, which kgraph does not compute"
                                  if nv else "uses an output kgraph does not compute")
            base = _inplace_base(name)
            fn = OPS.get(base or name)
            if node.target is operator.getitem:
                fn = _getitem
            inplace = _is_inplace(name) and bool(node.args) and \
                isinstance(node.args[0], torch.fx.Node)
            if inplace:
                aliased = _aliased_later(node, node.args[0], groups, order)
                folded = _fold_in_place(L, node, args, kwargs, env, aliased) \
                    if aliased else None
                if folded is not None:
                    env[node.name] = env[node.args[0].name] = folded
                    continue
                if aliased:
                    raise Unsupported(
                        f"in place on {node.args[0].name}, which shares memory with "
                        f"{aliased[0].name} (a view of it or its base), used later: "
                        f"kgraph imports values, not aliases")
            tensors = [a for a in _flatten_outputs((args, kwargs)) if isinstance(a, T)]
            if (fn is None or name not in _NO_TORCH_FOLD) and \
                    all(t.is_const for t in tensors) and name != "getitem" and \
                    node.target is not operator.getitem and hasattr(node.target, "_schema"):
                env[node.name] = _fold_with_torch(L, node.target, args, kwargs)
                if inplace:
                    env[node.args[0].name] = env[node.name]
                continue
            if fn is None:
                raise Unsupported("no kgraph mapping")
            if fn is _as_strided:
                kwargs["_in_stride"] = _traced_stride(node.args[0])
            res = fn(L, *args, **kwargs)
            env[node.name] = res
            if base is not None and isinstance(node.args[0], torch.fx.Node):
                # In-place: later uses of the argument see the result.
                aliases[node.args[0].name] = node.name
                env[node.args[0].name] = res
        except Unsupported as e:
            bad.append({"name": node_label(node), "op": _full_name(node.target),
                        "reason": str(e), "location": node_location(node)})
            env[node.name] = _Poison()
    return bad


def _traced_value(node):
    """What the tracer recorded of a node's tensor (a fake tensor or its
    TensorMetadata; None if nothing)."""
    meta = getattr(node, "meta", None) or {}
    val = meta.get("val", None)
    return meta.get("tensor_meta", None) if val is None else val


def _traced_stride(node):
    """The stride of a traced node's tensor (None if not recorded)."""
    st = getattr(_traced_value(node), "stride", None)
    if callable(st):
        st = st()
    return None if st is None else [int(v) for v in st]


def _full_name(target):
    pk = getattr(target, "_overloadpacket", None)
    if pk is not None:
        ov = _overload(target)
        return f"aten.{pk.__name__}" + (f".{ov}" if ov else "")
    return getattr(target, "__name__", str(target))


def _get_attr(gm, target):
    obj = gm
    for part in str(target).split("."):
        obj = getattr(obj, part)
    return obj


def _flatten_outputs(v):
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            out.extend(_flatten_outputs(x))
        return out
    if isinstance(v, dict):
        return _flatten_outputs(list(v.values()))
    return [v]


def _to_numpy(t):
    import torch
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy().copy()


def _as_torch(a):
    """Constants (also inside lists) as torch tensors of their own memory."""
    import torch
    if isinstance(a, T):
        # (np.ascontiguousarray makes a 0-d array 1-d.)
        return torch.from_numpy(np.ascontiguousarray(a.data).reshape(a.data.shape))
    if isinstance(a, (list, tuple)):
        return type(a)(_as_torch(x) for x in a)
    return a


def _fold_with_torch(L, target, args, kwargs):
    """Evaluates an ATen op on constant operands with torch."""
    import torch

    try:
        r = target(*_as_torch(args), **{k: _as_torch(v) for k, v in kwargs.items()})
    except Exception as e:
        raise Unsupported(f"folding it on constants failed: {_one_line(e)}")

    def fwd(r):
        if isinstance(r, torch.Tensor):
            return L.const(_to_numpy(r))
        if isinstance(r, (list, tuple)):
            return type(r)(fwd(x) for x in r)
        return r

    return fwd(r)
