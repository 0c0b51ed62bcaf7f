"""Importers: PyTorch modules, ONNX files and JSON graphs to kgraph IR.

    from kgraph.importers import import_model
    r = import_model("torchvision.models:resnet50", inputs=["8x3x224x224:f32"],
                     dtype="f16", layout="nhwc", output="resnet50.mlir")
    print(r.summary())        # ops, parameters, bytes; r.mlir, r.weights

The same as ``python3 -m kgraph.import`` (docs/importers.md). ``source`` is
``package.module:callable`` (called with no arguments, it returns an
``nn.Module``), an ``nn.Module`` object, a ``.onnx`` file (or a loaded
``onnx.ModelProto``), or a ``.json`` graph (run through ``kgraph-translate
--import-graph-json``).
"""

import importlib
import os
import re

from ..errors import ModelSourceError, UnsupportedModelError
from .builder import Builder  # noqa: F401  (re-exported for tools)
from .lowering import Lowering, Unsupported  # noqa: F401
from .safetensors import read_safetensors, write_safetensors

DTYPES = ("f32", "f16", "bf16")
LAYOUTS = ("nchw", "nhwc")
INPUT_DTYPES = ("f32", "f16", "bf16", "i32", "i8")
_SPEC = re.compile(r"^([0-9]+(?:x[0-9]+)*)(?::([a-z0-9]+))?$")


def parse_input_spec(spec):
    """``"8x3x224x224:f32"`` -> ([8, 3, 224, 224], "f32"); the dtype defaults
    to f32. ModelSourceError for anything else."""
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[1], str):
        return [int(d) for d in spec[0]], spec[1]
    m = _SPEC.match(str(spec).strip())
    if not m:
        raise ModelSourceError(f"bad input shape {spec!r}: expected SHAPE:DTYPE with "
                               f"dims joined by 'x', e.g. 8x3x224x224:f32")
    dims = [int(d) for d in m.group(1).split("x")]
    dt = m.group(2) or "f32"
    if dt not in INPUT_DTYPES:
        raise ModelSourceError(f"bad input shape {spec!r}: dtype {dt!r} is not one of "
                               f"{', '.join(INPUT_DTYPES)}")
    if any(d <= 0 for d in dims):
        raise ModelSourceError(f"bad input shape {spec!r}: dims must be positive")
    return dims, dt


class ImportResult:
    """What an import wrote: ``mlir`` and ``weights`` (None without
    parameters) paths, op counts, the inputs' and outputs' (shape, dtype),
    the number of parameters and their values and bytes, the IR ``text``,
    and ``tracer`` (how a PyTorch model was traced)."""

    def __init__(self, mlir, weights, ops, inputs, outputs, params, values,
                 param_bytes, text, tracer=None):
        self.mlir, self.weights, self.ops = mlir, weights, ops
        self.inputs, self.outputs = inputs, outputs
        self.params, self.values, self.param_bytes = params, values, param_bytes
        self.text, self.tracer = text, tracer
        self.builder = None
        self.notes = ""               # what kgraph-translate said (defaults taken)

    @property
    def op_count(self):
        return sum(self.ops.values())

    def summary(self):
        ops = ", ".join(f"{n} {k}" for k, n in sorted(self.ops.items(), key=lambda kv: -kv[1]))
        ins = ", ".join(_fmt(s, d) for s, d in self.inputs)
        outs = ", ".join(_fmt(s, d) for s, d in self.outputs)
        lines = [f"wrote {self.mlir}: {self.op_count} ops ({ops})",
                 f"  inputs: {ins or 'none'}; outputs: {outs or 'none'}"]
        if self.weights and not self.values:
            lines.append(f"  weights {self.weights}: {self.params} parameters")
        elif self.weights:
            lines.append(f"  weights {self.weights}: {self.params} parameters, "
                         f"{self.values} values, {self.param_bytes} bytes "
                         f"({self.param_bytes / 1e6:.1f} MB)")
        else:
            lines.append("  no parameters")
        if self.tracer:
            lines.append(f"  traced with {self.tracer}")
        if self.notes:
            lines += [f"  {n}" for n in self.notes.splitlines()]
        return "\n".join(lines)


def _fmt(shape, dtype):
    return "x".join(str(d) for d in shape) + f":{dtype}" if shape else f"scalar:{dtype}"


def _default_output(source):
    if isinstance(source, str):
        base = os.path.basename(source.split(":")[-1]) if ":" in source and \
            not os.path.exists(source) else os.path.splitext(os.path.basename(source))[0]
        return f"{base or 'model'}.mlir"
    return "model.mlir"


def load_callable(source):
    """The nn.Module that ``package.module:callable`` returns, in eval mode."""
    mod_name, _, attr = source.partition(":")
    if not mod_name or not attr:
        raise ModelSourceError(f"bad model source {source!r}: expected "
                               f"package.module:callable, a .onnx or a .json file")
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        raise ModelSourceError(f"bad model source {source!r}: no module named "
                               f"{e.name!r}") from None
    except Exception as e:
        raise ModelSourceError(f"bad model source {source!r}: importing {mod_name} "
                               f"failed: {type(e).__name__}: {e}") from None
    obj = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ModelSourceError(f"bad model source {source!r}: module {mod_name} "
                                   f"has no {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ModelSourceError(f"bad model source {source!r}: {attr} is not callable")
    try:
        model = obj()
    except Exception as e:
        raise ModelSourceError(f"bad model source {source!r}: calling {attr}() "
                               f"failed: {type(e).__name__}: {e}") from None
    return _check_module(model, source).eval()


def _check_module(model, source):
    """``model`` if it is an nn.Module. A module passed in directly keeps its
    mode (a training-mode batch norm or dropout is then reported)."""
    import torch
    if not isinstance(model, torch.nn.Module):
        raise ModelSourceError(f"bad model source {source!r}: it returned an object "
                               f"of type {type(model).__name__}, not a torch.nn.Module")
    return model


def _kind(source):
    if isinstance(source, str):
        low = source.lower()
        if low.endswith(".onnx"):
            return "onnx"
        if low.endswith(".json"):
            return "json"
        return "callable"
    mod = type(source).__module__ or ""
    if mod.startswith("onnx"):
        return "onnx-proto"
    return "module"


def import_model(source, inputs=None, dtype=None, layout=None, output=None,
                 weights=None, tracer="auto", input_names=None, examples=None):
    """Imports ``source`` into ``output`` (default: ``<name>.mlir`` in the
    current folder) and its parameters into ``weights`` (default: beside it,
    ``<stem>.safetensors``). ``inputs``: shape specs (``"8x3x224x224:f32"``
    or ``(shape, dtype)``), one per real input; PyTorch sources need them,
    ONNX takes them from the model where its shapes are static. ``dtype``:
    f32, f16 or bf16 (None keeps the model's); ``layout``: nchw (default) or
    nhwc. ``examples``: torch tensors to trace a PyTorch model with (default:
    random ones of the ``inputs`` shapes). Returns an :class:`ImportResult`;
    raises ModelSourceError or UnsupportedModelError (nothing is written
    then)."""
    if dtype is not None and dtype not in DTYPES:
        raise ModelSourceError(f"bad dtype {dtype!r}: expected one of {', '.join(DTYPES)}")
    if layout is not None and layout not in LAYOUTS:
        raise ModelSourceError(f"bad layout {layout!r}: expected nchw or nhwc")
    specs = [parse_input_spec(s) for s in (inputs or [])]
    kind = _kind(source)
    output = output or _default_output(source)
    if kind == "json":
        return _import_json(source, specs, dtype, layout, output)
    if dtype is None:
        floats = [d for _, d in specs if d in DTYPES and d != "f32"]
        dtype = floats[0] if floats else None
    L = Lowering(dtype=dtype, layout=layout or "nchw")
    tracer_used = None
    label = source if isinstance(source, str) else type(source).__name__
    if kind in ("onnx", "onnx-proto"):
        from . import onnx_frontend
        if kind == "onnx":
            if not os.path.isfile(source):
                raise ModelSourceError(f"cannot read ONNX model {source}: no such file")
            try:
                import onnx  # noqa: F401
            except ImportError:
                raise ModelSourceError("importing .onnx files needs the onnx package "
                                       "(Debian: python3-onnx)") from None
            try:
                model = onnx_frontend.load(source)
            except ValueError as e:
                raise ModelSourceError(str(e)) from None
        else:
            model = source
        bad = onnx_frontend.import_onnx(L, model, specs or None)
    else:
        from . import torch_frontend
        model = load_callable(source) if kind == "callable" else _check_module(source, label)
        if not specs:
            raise ModelSourceError("a PyTorch model needs its input shapes: pass "
                                   "--input SHAPE:DTYPE (e.g. 1x3x224x224:f32) per input")
        example = [_example(s, d, examples[i] if examples and i < len(examples) else None)
                   for i, (s, d) in enumerate(specs)]
        try:
            gm, consts, tracer_used = torch_frontend.trace(model, example, tracer)
        except ModelSourceError:
            raise
        except Exception as e:
            raise UnsupportedModelError(
                [{"name": type(model).__name__, "op": "trace",
                  "reason": f"tracing failed: {torch_frontend._one_line(e)}",
                  "location": None}], label) from None
        names = input_names or [f"input{i}" for i in range(len(specs))]
        bad = torch_frontend.import_graph(L, gm, consts, names)
    if not bad and not L.b.results:
        bad = [{"name": "output", "op": "output", "reason": "the model computes no output",
                "location": None}]
    if bad:
        raise UnsupportedModelError(bad, label)
    return _write(L, output, weights, tracer_used)


def _example(shape, dtype, given=None):
    """A tensor to trace with: ``given`` (float ones as float32, so the f32
    model traces; the IR takes ``dtype``) or a random one."""
    import torch
    if given is not None and isinstance(given, torch.Tensor):
        return given.detach().float() if given.is_floating_point() else given.detach()
    if dtype in DTYPES:
        return torch.randn(*shape)
    return torch.zeros(*shape, dtype=torch.int64)


def _write(L, output, weights, tracer):
    b = L.b
    out_dir = os.path.dirname(os.path.abspath(output))
    os.makedirs(out_dir, exist_ok=True)
    text_func = b.function_text()   # drops unused parameters first
    params = b.params()
    wpath = None
    if params:
        wpath = weights or os.path.splitext(output)[0] + ".safetensors"
        rel = os.path.relpath(os.path.abspath(wpath), out_dir)
    header = ("// Imported by kgraph.import (python/kgraph/importers); parameters "
              "are the arguments marked kgraph.param.\n")
    attr = f' attributes {{kgraph.weights = "{rel}"}}' if params else ""
    text = f"{header}module{attr} {{\n{text_func}\n}}\n"
    if params:
        write_safetensors(wpath, b.weights())
    with open(output, "w") as f:
        f.write(text)
    values = sum(int(a.data.size) for a in params)
    nbytes = sum(int(a.data.size) * (2 if a.value.dtype in ("f16", "bf16") else
                                     1 if a.value.dtype in ("i8", "i1") else 4) for a in params)
    ins = [(a.value.shape, a.value.dtype) for a in b.inputs()]
    outs = [(v.shape, v.dtype) for v in b.results]
    r = ImportResult(output, wpath, b.op_counts(), ins, outs, len(params), values,
                     nbytes, text, tracer)
    r.builder = b     # for kgraph.importers.reference.evaluate
    return r


def _import_json(source, specs, dtype, layout, output):
    from ..tools import run_tool
    if specs or dtype or layout:
        raise ModelSourceError("--input, --dtype and --layout do not apply to a .json "
                               "graph: the graph gives its own shapes, dtype and layout")
    if not os.path.isfile(source):
        raise ModelSourceError(f"cannot read JSON graph {source}: no such file")
    _, notes = run_tool("kgraph-translate", ["--import-graph-json", source, "-o", output],
                        with_stderr=True)
    with open(output) as f:
        text = f.read()
    ops = {}
    for m in re.finditer(r"=\s*kgraph\.(\w+)", text):
        ops[m.group(1)] = ops.get(m.group(1), 0) + 1
    wm = re.search(r'kgraph\.weights\s*=\s*"([^"]*)"', text)
    wpath = os.path.join(os.path.dirname(output), wm.group(1)) if wm else None
    ins, outs, params = _signature(text)
    r = ImportResult(output, wpath, ops, ins, outs, params, 0, 0, text)
    r.notes = notes.strip()
    return r


def _tensor_type(t):
    m = re.match(r"tensor<((?:\d+x)*)(\w+)>", t.strip())
    if not m:
        return None
    dims = [int(d) for d in m.group(1).split("x") if d]
    return dims, m.group(2)


def _signature(text):
    """(inputs, outputs, parameter count) of the first func.func in ``text``."""
    m = re.search(r"func\.func @[\w.$-]+\((.*?)\)\s*->\s*(\(.*?\)|tensor<[^>]*>)", text, re.S)
    if not m:
        return [], [], 0
    ins, params = [], 0
    for a in re.finditer(r"%\w+\s*:\s*(tensor<[^>]*>)(\s*\{[^}]*\})?", m.group(1)):
        if a.group(2) and "kgraph.param" in a.group(2):
            params += 1
        else:
            ins.append(_tensor_type(a.group(1)))
    outs = [_tensor_type(t) for t in re.findall(r"tensor<[^>]*>", m.group(2))]
    return [i for i in ins if i], [o for o in outs if o], params


__all__ = ["ImportResult", "import_model", "parse_input_spec", "load_callable",
           "read_safetensors", "write_safetensors", "DTYPES", "LAYOUTS"]
