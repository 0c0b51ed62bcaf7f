"""The ONNX importer: an ONNX model file to kgraph IR.

Initializers and ``Constant`` nodes are constants (initializers keep their
names as parameter names). Nodes are mapped in graph order onto
:class:`~kgraph.importers.lowering.Lowering`; nodes computing on constants
only (shape arithmetic: Shape, Gather, Unsqueeze, Concat of shapes ...) are
folded with numpy. Inputs take their shapes from the model or, where the
model leaves a dim symbolic, from ``--input``.
"""

import numpy as np

from .lowering import T, Unsupported

# TensorProto element types.
_ONNX_DTYPES = {1: "f32", 10: "f16", 16: "bf16", 6: "i32", 7: "i32", 3: "i8",
                9: "i1", 11: "f32", 2: "i32", 5: "i32"}
_NP_OF = {"f32": np.float32, "f16": np.float16, "bf16": np.float32,
          "i32": np.int32, "i8": np.int8, "i1": np.bool_}


def load(path):
    """The ModelProto of ``path``; ModelSourceError-worthy problems raise
    ValueError with a one-line reason."""
    import warnings
    import onnx
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")    # protobuf's, on a corrupt file
            model = onnx.load(path)
    except Exception as e:
        raise ValueError(f"cannot read ONNX model {path}: {type(e).__name__}: "
                         f"{str(e).splitlines()[0] if str(e) else 'corrupt file'}")
    if not model.graph.node and not model.graph.output:
        raise ValueError(f"cannot read ONNX model {path}: the file holds no graph")
    return model


def _attrs(node):
    import onnx
    out = {}
    for a in node.attribute:
        out[a.name] = onnx.helper.get_attribute_value(a)
        if isinstance(out[a.name], bytes):
            out[a.name] = out[a.name].decode()
    return out


def _np(tensor_proto):
    from onnx import numpy_helper
    return numpy_helper.to_array(tensor_proto)


def input_specs(model):
    """[(name, shape with None for symbolic dims, dtype)] of the real inputs."""
    inits = {i.name for i in model.graph.initializer}
    out = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        out.append((vi.name, shape, _ONNX_DTYPES.get(tt.elem_type, None)))
    return out


def import_onnx(L, model, inputs=None):
    """Maps ``model`` onto Lowering ``L``. ``inputs``: optional [(shape,
    dtype)] overriding the model's input shapes in order. Returns the list of
    unsupported nodes (empty on success)."""
    env = {}
    bad = []
    for init in model.graph.initializer:
        env[init.name] = L.const(_np(init), name=init.name)
    specs = input_specs(model)
    for i, (name, shape, dtype) in enumerate(specs):
        if inputs and i < len(inputs):
            shape, dtype = inputs[i]
        if shape is None or any(d is None or d <= 0 for d in shape):
            bad.append({"name": name, "op": "input", "location": None,
                        "reason": f"symbolic shape {shape}: give it with --input"})
            env[name] = None
            continue
        if dtype is None:
            bad.append({"name": name, "op": "input", "location": None,
                        "reason": "unsupported element type"})
            env[name] = None
            continue
        env[name] = L.input(list(shape), dtype, _mlir_name(name))
    gelus, skipped = _find_erf_gelus(model, env)
    for idx, node in enumerate(model.graph.node):
        label = node.name or f"{node.op_type}_{idx}"
        if idx in skipped:
            continue
        if idx in gelus:
            x = env.get(gelus[idx])
            env[node.output[0]] = None if x is None else _guard(bad, label, "Gelu",
                                                                 lambda: L.gelu(x))
            continue
        L.b.loc = label
        ins = []
        poisoned = False
        for n in node.input:
            if n == "":
                ins.append(None)
            elif n not in env or env[n] is None:
                poisoned = True
            else:
                ins.append(env[n])
        if poisoned:
            if ONNX_OPS.get(node.op_type) is None:
                bad.append({"name": label, "op": node.op_type,
                            "reason": "no kgraph mapping", "location": None})
            for o in node.output:
                env[o] = None
            continue
        try:
            fn = ONNX_OPS.get(node.op_type)
            if node.domain not in ("", "ai.onnx"):
                raise Unsupported(f"operator of domain {node.domain!r}")
            if fn is None:
                raise Unsupported("no kgraph mapping")
            attrs = _attrs(node)
            attrs["_outputs"] = len(node.output)
            outs = fn(L, ins, attrs)
            if not isinstance(outs, (list, tuple)):
                outs = [outs]
            for o, v in zip(node.output, outs):
                env[o] = v
            for o in node.output[len(outs):]:
                env[o] = None
        except Unsupported as e:
            bad.append({"name": label, "op": node.op_type, "reason": str(e),
                        "location": None})
            for o in node.output:
                env[o] = None
    if not bad:
        for vo in model.graph.output:
            v = env.get(vo.name)
            if v is None:
                continue
            if v.is_const:
                bad.append({"name": vo.name, "op": "output", "location": None,
                            "reason": "output is a constant"})
                continue
            L.output(v)
    return bad


def _guard(bad, label, op, fn):
    try:
        return fn()
    except Unsupported as e:
        bad.append({"name": label, "op": op, "reason": str(e), "location": None})
        return None


def _find_erf_gelus(model, env):
    """The exact GELU as exported before opset 20,
    ``Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)`` (either operand order,
    or the 0.5 applied to x first): {index of the last Mul: name of x} and
    the indices of the Erf, Add and inner Mul, which it replaces (only where
    nothing else uses their results)."""
    nodes = list(model.graph.node)
    producer = {o: i for i, n in enumerate(nodes) for o in n.output}
    uses = {}
    for i, n in enumerate(nodes):
        for x in n.input:
            uses.setdefault(x, []).append(i)
    for o in model.graph.output:
        uses.setdefault(o.name, []).append(-1)

    def const(name, value):
        if name in env and env[name] is not None and env[name].is_const:
            d = np.asarray(env[name].data, dtype=np.float64)
            return d.size == 1 and abs(float(d.reshape(-1)[0]) - value) < 1e-5 * max(1, value)
        i = producer.get(name)
        if i is not None and nodes[i].op_type == "Constant":
            a = _attrs(nodes[i])
            if "value" in a:
                d = _np(a["value"]).astype(np.float64)
                return d.size == 1 and abs(float(d.reshape(-1)[0]) - value) < 1e-5 * max(1, value)
        return False

    def other(n, name):
        ins = list(n.input)
        if len(ins) != 2 or name not in ins:
            return None
        return ins[1] if ins[0] == name else ins[0]

    def only_use(name):
        u = uses.get(name, [])
        return u[0] if len(u) == 1 else None

    gelus, skipped = {}, set()
    for i, n in enumerate(nodes):
        if n.op_type != "Erf":
            continue
        d = producer.get(n.input[0])
        if d is None or nodes[d].op_type != "Div" or not const(nodes[d].input[1], 2 ** 0.5):
            continue
        x = nodes[d].input[0]
        a = only_use(n.output[0])
        if a is None or a < 0 or nodes[a].op_type != "Add" or \
                not const(other(nodes[a], n.output[0]) or "", 1.0):
            continue
        m1 = only_use(nodes[a].output[0])
        if m1 is None or m1 < 0 or nodes[m1].op_type != "Mul":
            continue
        o = other(nodes[m1], nodes[a].output[0])
        if o == x:
            m2 = only_use(nodes[m1].output[0])
            if m2 is None or m2 < 0 or nodes[m2].op_type != "Mul" or \
                    not const(other(nodes[m2], nodes[m1].output[0]) or "", 0.5):
                continue
            gelus[m2] = x
            skipped.update({i, a, m1})
        else:
            h = producer.get(o)
            if h is None or nodes[h].op_type != "Mul" or other(nodes[h], x) is None or \
                    not const(other(nodes[h], x), 0.5):
                continue
            gelus[m1] = x
            skipped.update({i, a})
    return gelus, skipped


def _mlir_name(name):
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def _const_ints(t, what):
    if t is None:
        return None
    if not t.is_const:
        raise Unsupported(f"{what} is computed at run time, not a constant")
    return [int(x) for x in np.asarray(t.data).reshape(-1)]


def _pads(attrs, x, kernel, strides, dilations=(1, 1)):
    """kgraph [top, bottom, left, right] from ONNX pads / auto_pad."""
    auto = attrs.get("auto_pad", "NOTSET")
    if auto in ("NOTSET", "VALID"):
        p = list(attrs.get("pads", [0, 0, 0, 0])) if auto == "NOTSET" else [0, 0, 0, 0]
        if len(p) != 4:
            raise Unsupported(f"pads {p} (only 2-D)")
        return [p[0], p[2], p[1], p[3]]
    out = []
    for i, d in enumerate(x.shape[2:]):
        o = -(-d // strides[i])
        total = max(0, (o - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - d)
        lo = total // 2 if auto == "SAME_UPPER" else total - total // 2
        out += [lo, total - lo]
    return out


def _conv(L, ins, a):
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    if w.is_const and w.data.ndim != 4:
        raise Unsupported(f"{w.data.ndim - 2}-D convolution (only 2-D)")
    k = list(a.get("kernel_shape", w.shape[2:]))
    s = list(a.get("strides", [1, 1]))
    d = list(a.get("dilations", [1, 1]))
    return L.conv2d(x, w, b, s, _pads(a, x, k, s, d), d, a.get("group", 1))


def _bn(L, ins, a):
    x, scale, bias, mean, var = ins[:5]
    if a.get("training_mode", 0):
        raise Unsupported("batch norm in training mode")
    return L.batch_norm(x, mean, var, scale, bias, a.get("epsilon", 1e-5))


def _gemm(L, ins, a):
    c = ins[2] if len(ins) > 2 else None
    return L.gemm(ins[0], ins[1], c, a.get("alpha", 1.0), a.get("beta", 1.0),
                  bool(a.get("transA", 0)), bool(a.get("transB", 0)))


def _pool(kind):
    def f(L, ins, a):
        x = ins[0]
        k = list(a["kernel_shape"])
        if len(k) != 2:
            raise Unsupported(f"{len(k)}-D pooling (only 2-D)")
        s = list(a.get("strides", [1, 1]))
        if a.get("storage_order", 0):
            raise Unsupported("pooling with storage_order=1")
        return L.pool2d(kind, x, k, s, _pads(a, x, k, s), bool(a.get("ceil_mode", 0)),
                        bool(a.get("count_include_pad", 0)) if kind == "avg" else False,
                        dilation=list(a.get("dilations", [1, 1])))
    return f


def _global_avg(L, ins, a):
    x = ins[0]
    return L.reduce("mean", x, list(range(2, x.rank)), keep_dims=True)


def _flatten(L, ins, a):
    x = ins[0]
    axis = a.get("axis", 1) % (x.rank + 1) if x.rank else 0
    return L.reshape(x, [int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))])


def _reshape(L, ins, a):
    x = ins[0]
    shape = _const_ints(ins[1], "Reshape's shape")
    out = []
    for i, d in enumerate(shape):
        if d == 0 and not a.get("allowzero", 0):
            out.append(x.shape[i])
        else:
            out.append(d)
    return L.reshape(x, out)


def _transpose(L, ins, a):
    x = ins[0]
    perm = a.get("perm", list(range(x.rank))[::-1])
    return L.transpose(x, list(perm))


def _concat(L, ins, a):
    return L.concat([x for x in ins if x is not None], a["axis"])


def _slice(L, ins, a):
    x = ins[0]
    starts = _const_ints(ins[1], "Slice's starts")
    ends = _const_ints(ins[2], "Slice's ends")
    axes = _const_ints(ins[3], "Slice's axes") if len(ins) > 3 and ins[3] is not None \
        else list(range(len(starts)))
    steps = _const_ints(ins[4], "Slice's steps") if len(ins) > 4 and ins[4] is not None \
        else [1] * len(starts)
    for s, e, ax, st in zip(starts, ends, axes, steps):
        n = x.shape[ax]
        if st < 0 and x.is_const:
            # A reversed constant (torch's export of F.pad reverses its pads
            # list): ONNX clamps starts to [0, n-1] and ends to [-1, n-1].
            s = min(max(s + n if s < 0 else s, 0), n - 1)
            e = min(max(e + n if e < 0 else e, -1), n - 1)
            idx = [slice(None)] * x.rank
            idx[ax] = slice(s, None if e < 0 else e, st)
            x = L.const(np.ascontiguousarray(x.data[tuple(idx)]))
            continue
        e = min(e, n) if e >= 0 else e
        if st < 0:
            raise Unsupported("Slice with a negative step")
        x = L.slice(x, ax, s, e, st)
    return x


def _softmax(log):
    def f(L, ins, a):
        x = ins[0]
        axis = a.get("axis", -1)
        return L.softmax(x, axis, log=log)
    return f


def _layer_norm(L, ins, a):
    x = ins[0]
    axis = a.get("axis", -1) % x.rank
    if a.get("stash_type", 1) != 1:
        raise Unsupported("LayerNormalization with stash_type other than float")
    w = ins[1] if len(ins) > 1 else None
    b = ins[2] if len(ins) > 2 else None
    return L.layer_norm(x, x.shape[axis:], w, b, a.get("epsilon", 1e-5))


def _cast(L, ins, a):
    to = _ONNX_DTYPES.get(a["to"])
    if to is None:
        raise Unsupported(f"Cast to element type {a['to']}")
    return L.cast(ins[0], to)


def _constant(L, ins, a):
    if "value" in a:
        return L.const(_np(a["value"]))
    for key in ("value_float", "value_int"):
        if key in a:
            return L.const(np.asarray(a[key]))
    for key in ("value_floats", "value_ints"):
        if key in a:
            return L.const(np.asarray(list(a[key])))
    raise Unsupported(f"Constant with {sorted(a)}")


def _binary(kind):
    return lambda L, ins, a: L.binary(kind, ins[0], ins[1])


def _unary(kind):
    return lambda L, ins, a: L.unary(kind, ins[0])


def _compare(direction):
    return lambda L, ins, a: L.compare(direction, ins[0], ins[1])


def _logical(kind):
    return lambda L, ins, a: L.logical(kind, ins[0], ins[1])


def _gelu(L, ins, a):
    return L.gelu(ins[0], a.get("approximate", "none") == "tanh")


def _clip(L, ins, a):
    lo = ins[1] if len(ins) > 1 else None
    hi = ins[2] if len(ins) > 2 else None
    lo = float(lo.data) if isinstance(lo, T) and lo.is_const else a.get("min")
    hi = float(hi.data) if isinstance(hi, T) and hi.is_const else a.get("max")
    return L.clamp(ins[0], lo, hi)


def _reduce(kind):
    def f(L, ins, a):
        x = ins[0]
        axes = a.get("axes")
        if axes is None and len(ins) > 1 and ins[1] is not None:
            axes = _const_ints(ins[1], "the reduction axes")
        if axes is None:
            axes = list(range(x.rank))
        return L.reduce(kind, x, axes, bool(a.get("keepdims", 1)))
    return f


def _shape(L, ins, a):
    return L.const(np.asarray(ins[0].shape, dtype=np.int64))


def _const_only(fn, what):
    def f(L, ins, a):
        if not all(t is None or t.is_const for t in ins):
            raise Unsupported(f"{what} of a computed tensor")
        return L.const(fn([None if t is None else t.data for t in ins], a))
    return f


def _unsqueeze(L, ins, a):
    x = ins[0]
    axes = a.get("axes") or _const_ints(ins[1], "Unsqueeze's axes")
    shape = list(x.shape)
    for ax in sorted(d % (x.rank + len(axes)) for d in axes):
        shape.insert(ax, 1)
    return L.reshape(x, shape)


def _squeeze(L, ins, a):
    x = ins[0]
    axes = a.get("axes") or (_const_ints(ins[1], "Squeeze's axes") if len(ins) > 1 else None)
    if axes is None:
        return L.reshape(x, [d for d in x.shape if d != 1])
    axes = {d % x.rank for d in axes}
    return L.reshape(x, [d for i, d in enumerate(x.shape) if i not in axes])


def _split(L, ins, a):
    x = ins[0]
    axis = a.get("axis", 0) % x.rank
    split = a.get("split") or (_const_ints(ins[1], "Split's sizes") if len(ins) > 1 and
                               ins[1] is not None else None)
    if split is None:
        # Equal parts, one per output (opset 18's num_outputs: ceil-sized
        # parts, the last smaller).
        n, dim = a.get("num_outputs", a["_outputs"]), x.shape[axis]
        if "num_outputs" not in a and dim % n:
            raise Unsupported(f"Split of {dim} into {n} equal parts")
        size = -(-dim // n)
        split = [min(size, dim - i * size) for i in range(n)]
        if min(split) <= 0:
            raise Unsupported(f"Split of {dim} into {n} parts")
    return L.split(x, list(split), axis)


def _gather(L, ins, a):
    x, idx = ins
    if x.is_const and idx.is_const:
        return L.const(np.take(x.data, idx.data, axis=a.get("axis", 0)))
    if idx.is_const and idx.data.ndim == 0:
        axis = a.get("axis", 0) % x.rank
        i = int(idx.data) % x.shape[axis]
        s = L.slice(x, axis, i, i + 1)
        return L.reshape(s, x.shape[:axis] + x.shape[axis + 1:])
    raise Unsupported("Gather of a computed tensor with tensor indices")


def _pad(L, ins, a):
    x = ins[0]
    mode = a.get("mode", "constant")
    if mode != "constant":
        raise Unsupported(f"Pad mode {mode} (only constant)")
    pads = a.get("pads") or _const_ints(ins[1], "Pad's pads")
    value = a.get("value", 0.0)
    if len(ins) > 2 and ins[2] is not None:
        if not ins[2].is_const:
            raise Unsupported("Pad's constant_value is computed at run time, not a constant")
        value = np.asarray(ins[2].data).reshape(-1)[0].item() if ins[2].data.size else 0.0
    axes = list(range(x.rank))
    if len(ins) > 3 and ins[3] is not None:
        axes = [v % x.rank for v in _const_ints(ins[3], "Pad's axes")]
    if len(pads) != 2 * len(axes):
        raise Unsupported(f"Pad with {len(pads)} pads for {len(axes)} axes")
    per_axis = [(0, 0)] * x.rank
    for i, ax in enumerate(axes):
        per_axis[ax] = (pads[i], pads[i + len(axes)])
    if not any(lo or hi for lo, hi in per_axis):
        return x
    return L.pad(x, per_axis, value)


def _hard_sigmoid(L, x, alpha, beta):
    y = L.binary("add", L.binary("mul", x, L.const(np.float32(alpha))), L.const(np.float32(beta)))
    return L.clamp(y, 0.0, 1.0)


def _resize(L, ins, a):
    """Resize of the two spatial dims as torch exports F.interpolate:
    linear with half_pixel / pytorch_half_pixel / align_corners, nearest
    with asymmetric coordinates and floor."""
    x = ins[0]
    if x.rank != 4:
        raise Unsupported(f"Resize of a rank-{x.rank} tensor (only 4-D)")
    mode, ctm = a.get("mode", "nearest"), a.get("coordinate_transformation_mode", "half_pixel")
    nearest = a.get("nearest_mode", "round_prefer_floor")
    if a.get("antialias", 0):
        raise Unsupported("Resize with antialias")
    scales = sizes = None
    if len(ins) > 3 and ins[3] is not None and ins[3].shape != [0]:
        sizes = _const_ints(ins[3], "Resize's sizes")
    elif len(ins) > 2 and ins[2] is not None and ins[2].shape != [0]:
        if not ins[2].is_const:
            raise Unsupported("Resize's scales are computed at run time, not constants")
        scales = [float(v) for v in np.asarray(ins[2].data).reshape(-1)]
    if (sizes or scales) is None or len(sizes or scales) != 4:
        raise Unsupported("Resize without 4 scales or sizes")
    if sizes is not None:
        if sizes[:2] != x.shape[:2]:
            raise Unsupported("Resize of the batch or channel dim")
        out, sc = sizes[2:], (None, None)
    else:
        if scales[:2] != [1.0, 1.0]:
            raise Unsupported("Resize of the batch or channel dim")
        out = [int(np.floor(d * f)) for d, f in zip(x.shape[2:], scales[2:])]
        sc = tuple(scales[2:])
    if mode == "linear" and ctm in ("half_pixel", "pytorch_half_pixel", "align_corners"):
        if ctm == "pytorch_half_pixel" and min(out) == 1:
            raise Unsupported("Resize to size 1 with pytorch_half_pixel")
        return L.resize2d(x, out, "linear", ctm == "align_corners", sc)
    if mode == "nearest" and ctm == "asymmetric" and nearest == "floor":
        return L.resize2d(x, out, "nearest", False, sc)
    raise Unsupported(f"Resize mode {mode} with coordinate_transformation_mode {ctm}"
                      + (f" and nearest_mode {nearest}" if mode == "nearest" else ""))


ONNX_OPS = {
    "Pad": _pad,
    "Conv": _conv, "Gemm": _gemm, "MatMul": lambda L, ins, a: L.matmul(ins[0], ins[1]),
    "BatchNormalization": _bn,
    "Relu": _unary("relu"), "Sigmoid": _unary("sigmoid"), "Tanh": _unary("tanh"),
    "Exp": _unary("exp"), "Log": _unary("log"), "Sqrt": _unary("sqrt"),
    "Neg": _unary("neg"), "Abs": _unary("abs"), "Gelu": _gelu, "Clip": _clip,
    "Add": _binary("add"), "Sub": _binary("sub"), "Mul": _binary("mul"),
    "Div": _binary("div"), "Max": _binary("max"), "Min": _binary("min"),
    "Pow": _binary("pow"),
    "LeakyRelu": lambda L, ins, a: L.leaky_relu(ins[0], a.get("alpha", 0.01)),
    "Elu": lambda L, ins, a: L.elu(ins[0], a.get("alpha", 1.0)),
    "Selu": lambda L, ins, a: L.elu(ins[0], a.get("alpha", 1.67326319217681884765625),
                                    a.get("gamma", 1.05070102214813232421875)),
    "Celu": lambda L, ins, a: L.elu(ins[0], a.get("alpha", 1.0), 1.0, 1.0 / a.get("alpha", 1.0)),
    "Softplus": lambda L, ins, a: L.softplus(ins[0]),
    "Mish": lambda L, ins, a: L.mish(ins[0]),
    "HardSigmoid": lambda L, ins, a: _hard_sigmoid(L, ins[0], a.get("alpha", 0.2),
                                                   a.get("beta", 0.5)),
    "HardSwish": lambda L, ins, a: L.binary("mul", ins[0],
                                            _hard_sigmoid(L, ins[0], 1.0 / 6.0, 0.5)),
    # ONNX broadcasts PRelu's slope as it is (numpy rules), unlike torch.
    "PRelu": lambda L, ins, a: L.prelu(ins[0], ins[1], channel_axis=None),
    "Resize": _resize,
    "MaxPool": _pool("max"), "AveragePool": _pool("avg"),
    "GlobalAveragePool": _global_avg, "Flatten": _flatten, "Reshape": _reshape,
    "Transpose": _transpose, "Concat": _concat, "Slice": _slice,
    "Softmax": _softmax(False), "LogSoftmax": _softmax(True),
    "LayerNormalization": _layer_norm, "Cast": _cast,
    "Identity": lambda L, ins, a: ins[0], "Dropout": lambda L, ins, a: ins[0],
    "Constant": _constant,
    "ReduceMean": _reduce("mean"), "ReduceSum": _reduce("sum"), "ReduceMax": _reduce("max"),
    "Shape": _shape, "Gather": _gather, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze,
    "Split": _split,
    "Range": _const_only(lambda d, a: np.arange(d[0], d[1], d[2]), "Range"),
    "ConstantOfShape": _const_only(
        lambda d, a: np.full([int(x) for x in d[0]],
                             _np(a["value"]).reshape(-1)[0] if "value" in a else 0.0,
                             dtype=_np(a["value"]).dtype if "value" in a else np.float32),
        "ConstantOfShape"),
    "Equal": _compare("eq"), "Less": _compare("lt"), "LessOrEqual": _compare("le"),
    "Greater": _compare("gt"), "GreaterOrEqual": _compare("ge"),
    "Not": lambda L, ins, a: L.logical_not(ins[0]),
    "And": _logical("and"), "Or": _logical("or"), "Xor": _logical("xor"),
    "Where": lambda L, ins, a: L.where(ins[0], ins[1], ins[2]),
    "Expand": lambda L, ins, a: L.expand(ins[0], list(np.broadcast_shapes(
        tuple(ins[0].shape), tuple(_const_ints(ins[1], "Expand's shape"))))),
}
