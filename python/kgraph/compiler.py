"""``kgraph.compile``: import a model, compile it with kgraph-opt, load it.

    import kgraph, torch, torchvision
    model = torchvision.models.resnet50().eval()
    x = torch.randn(8, 224, 224, 3, device="cuda", dtype=torch.float16)
    prog = kgraph.compile(model, [torch.randn(8, 3, 224, 224)], dtype="f16", layout="nhwc")
    y = prog(x)                     # only the real inputs; weights are bound

On torch 2.x, importing kgraph registers the ``torch.compile`` backend
``"kgraph"`` (:func:`kgraph_backend`). See docs/importers.md.
"""

import hashlib
import json
import os
import shutil
import tempfile

from .errors import CompileError, ModelSourceError, NoGPUError
from .tools import find_tool, run_tool

#: SM targets kgraph-opt knows, newest last.
_TARGETS = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")


def current_target(device=0, libcuda=None):
    """The kgraph target of CUDA device ``device``, from the driver's compute
    capability (9.0 -> sm_90a; newer GPUs than kgraph knows: NoGPUError
    saying which target to pass instead)."""
    from .driver import get_driver
    from .errors import CudaError
    try:
        major, minor = get_driver(libcuda).compute_capability(device)
    except CudaError as e:
        raise NoGPUError(f"cannot read the compute capability of device "
                         f"{device}: {e}") from e
    cc = major * 10 + minor
    if cc == 90:
        return "sm_90a"
    name = f"sm_{cc}"
    if name in _TARGETS:
        return name
    known = [t for t in _TARGETS if int(t[3:5]) <= cc]
    if not known:
        raise NoGPUError(f"device {device} has compute capability {major}.{minor}, "
                         f"older than any kgraph target ({', '.join(_TARGETS)})")
    raise NoGPUError(f"device {device} has compute capability {major}.{minor}, "
                     f"which kgraph has no target for; pass target= one of "
                     f"{', '.join(_TARGETS)} (e.g. {known[-1]}) explicitly")


def _cache_root():
    root = os.environ.get("KGRAPH_CACHE_DIR")
    if root:
        return root
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kgraph")


def _example_specs(example_inputs):
    """(specs for the importer, dtype implied by float inputs, tensors to trace
    with) from tensors, arrays or shape specs."""
    specs, traced, dts = [], [], []
    names = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32",
             "int64": "i32", "int8": "i8"}
    for x in example_inputs:
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            dt = names.get(str(x.dtype).replace("torch.", ""))
            if dt is None:
                raise ModelSourceError(f"example input of dtype {x.dtype} is not supported")
            specs.append((list(x.shape), dt))
            traced.append(x)
            if dt in ("f16", "bf16"):
                dts.append(dt)
        else:
            specs.append(x)
            traced.append(None)
    return specs, (dts[0] if dts else None), traced


def compile(model, example_inputs, target=None, fuse=True, dtype=None, layout=None,
            cache_dir=None, device=None, extra_flags=(), verbose=False, tracer="auto",
            tuning_db=None):
    """Imports ``model`` (an ``nn.Module``, ``"package.module:callable"``, a
    ``.onnx`` / ``.json`` path), compiles it with kgraph-opt for ``target``
    (None: the current GPU's SM, through the driver) and loads the plan.

    ``example_inputs``: torch tensors (their shapes and dtypes; float inputs
    of f16/bf16 imply that ``dtype``) or shape specs like ``"8x3x224x224:f32"``.
    ``layout="nhwc"``: the program's 4-D inputs and outputs are NHWC.
    ``cache_dir``: where the IR, weights, PTX and plan go (default: a folder
    per model under ``$KGRAPH_CACHE_DIR`` or ``~/.cache/kgraph``, keyed by
    the IR, the target and the flags; an existing compile is reused).
    ``tuning_db``: a tuning database (``python3 -m kgraph.tune``, docs/
    tuning.md) whose records choose the configurations they match.
    Returns a :class:`kgraph.Program` taking only the real inputs; its
    ``import_result`` and ``plan_path`` say what was built, and with a
    ``tuning_db`` its ``tuning`` counts the groups whose configuration a
    record, a near record or the model chose."""
    from .importers import import_model
    from .runtime import load
    specs, implied, tensors = _example_specs(example_inputs)
    dtype = dtype or implied
    if target is None:
        target = current_target(device or 0)
    opt = find_tool("kgraph-opt")
    work = tempfile.mkdtemp(prefix="kgraph-import-")
    try:
        src = model
        if isinstance(model, str) and model.lower().endswith((".onnx", ".json")):
            src = os.path.abspath(model)
        r = import_model(src, inputs=specs if not (isinstance(src, str) and
                                                   src.lower().endswith(".json")) else None,
                         dtype=dtype if not _is_json(src) else None,
                         layout=layout if not _is_json(src) else None,
                         output=os.path.join(work, "model.mlir"),
                         examples=tensors if any(t is not None for t in tensors) else None,
                         tracer=tracer)
        flags = (["--fuse"] if fuse else []) + [f"--tile={target}"] + list(extra_flags)
        if tuning_db is not None:
            if not os.path.isfile(tuning_db):
                raise CompileError(f"tuning database {tuning_db}: no such file")
            flags += [f"--tuning-db={os.path.abspath(tuning_db)}", "--tuning-report"]
        key = hashlib.sha256()
        key.update(r.text.encode())
        key.update(" ".join(flags).encode())
        if tuning_db is not None:
            with open(tuning_db, "rb") as f:
                key.update(f.read())
        key.update(str(os.stat(opt).st_mtime_ns).encode())
        if r.weights:
            with open(r.weights, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 24), b""):
                    key.update(chunk)
        folder = cache_dir or os.path.join(_cache_root(), key.hexdigest()[:24])
        os.makedirs(folder, exist_ok=True)
        mlir = os.path.join(folder, "model.mlir")
        plan = os.path.join(folder, "model.plan.json")
        ptx = os.path.join(folder, "model.ptx")
        stamp = os.path.join(folder, "key")
        fresh = not (os.path.isfile(plan) and os.path.isfile(stamp) and
                     open(stamp).read() == key.hexdigest())
        shutil.copyfile(r.mlir, mlir)
        if r.weights:
            shutil.copyfile(r.weights, os.path.join(folder, os.path.basename(r.weights)))
        tuning_path = os.path.join(folder, "tuning.json")
        if fresh:
            _, err = run_tool("kgraph-opt", flags + [mlir, "-o", ptx], with_stderr=True)
            if tuning_db is not None:
                with open(tuning_path, "w") as f:
                    json.dump(tuning_summary(err), f)
            with open(stamp, "w") as f:
                f.write(key.hexdigest())
        r.mlir = mlir
        r.weights = os.path.join(folder, os.path.basename(r.weights)) if r.weights else None
        if verbose:
            print(r.summary())
            print(f"compiled with kgraph-opt {' '.join(flags)} into {folder}"
                  + ("" if fresh else " (cached)"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    prog = load(plan, device=device)
    prog = bind_parameters(prog, mlir, r.weights)
    prog.import_result = r
    prog.plan_path = plan
    prog.tuning = None
    if tuning_db is not None and os.path.isfile(tuning_path):
        with open(tuning_path) as f:
            prog.tuning = json.load(f)
        if verbose:
            print("tuning: " + ", ".join(f"{v} {k}" for k, v in prog.tuning.items()))
    return prog


def tuning_summary(stderr):
    """How many groups' configurations a tuning record, a near record, the
    model or a pinned attribute chose, and how many records were skipped,
    from kgraph-opt's --tuning-report remarks."""
    counts = {"record": 0, "near record": 0, "model": 0, "pinned": 0, "skipped": 0}
    for line in stderr.splitlines():
        if "remark: configuration from tuning record" in line:
            counts["record"] += 1
        elif "remark: configuration from the near record" in line:
            counts["near record"] += 1
        elif "remark: configuration from the model" in line:
            counts["model"] += 1
        elif "remark: configuration pinned" in line:
            counts["pinned"] += 1
        elif "remark: tuning record" in line and " skipped: " in line:
            counts["skipped"] += 1
    return counts


def _is_json(src):
    return isinstance(src, str) and src.lower().endswith(".json")


def bind_parameters(prog, mlir_path, weights_path):
    """``prog`` itself when its plan loads the parameters (plan version 2);
    for a plan that lists them as inputs (version 1), a
    :class:`BoundProgram` that supplies them from ``weights_path``."""
    plan = getattr(prog, "plan", None)
    buffers = getattr(plan, "buffers", ()) if plan is not None else ()
    if not weights_path or any(getattr(b, "kind", "") == "parameter" for b in buffers):
        return prog
    return BoundProgram(prog, mlir_path, weights_path)


class BoundProgram:
    """A Program whose parameter arguments come from the weights file, so
    that it is called with the real inputs only. For plans that list the
    parameters as ordinary inputs (version 1)."""

    def __init__(self, prog, mlir_path, weights_path):
        import re
        from .importers.safetensors import read_safetensors
        self._prog = prog
        with open(mlir_path) as f:
            text = f.read()
        m = re.search(r"func\.func @\w+\((.*?)\)\s*->", text, re.S)
        args = re.findall(r"%arg\d+: tensor<[^>]*>( \{kgraph\.param = \"([^\"]*)\"\})?",
                          m.group(1)) if m else []
        self._slots = [name or None for _, name in args]
        self._weights = read_safetensors(weights_path)
        self._on_device = {}

    def __getattr__(self, name):
        return getattr(self._prog, name)

    def _params_like(self, x):
        if hasattr(x, "device") and hasattr(x, "is_cuda"):
            import torch
            key = str(x.device)
            if key not in self._on_device:
                dts = {s.index: s.dtype for s in self._prog.plan.inputs}
                self._on_device[key] = {}
                for i, name in enumerate(self._slots):
                    if name is None:
                        continue
                    from .runtime import torch_dtype
                    t = torch.from_numpy(self._weights[name].copy())
                    self._on_device[key][name] = t.to(device=x.device, dtype=torch_dtype(dts[i]))
            return self._on_device[key]
        return self._weights

    def _full(self, inputs):
        real = [s for s in self._slots if s is None]
        if len(inputs) != len(real):
            from .errors import ArgumentCountError
            raise ArgumentCountError(f"expected {len(real)} input(s), got {len(inputs)}")
        params = self._params_like(inputs[0]) if inputs else self._weights
        it = iter(inputs)
        return [next(it) if s is None else params[s] for s in self._slots]

    def __call__(self, *inputs):
        return self._prog(*self._full(inputs))

    def run(self, inputs, outputs):
        return self._prog.run(self._full(list(inputs)), outputs)

    def __repr__(self):
        return f"BoundProgram({self._prog!r})"


def kgraph_backend(gm, example_inputs):
    """The ``torch.compile`` backend: compiles the FX graph ``gm`` with
    :func:`compile` for the current GPU and returns a callable with ``gm``'s
    calling convention. A graph kgraph cannot import raises an error naming
    every unsupported node (torch.compile reports it as a backend failure)."""
    import torch
    out_node = [n for n in gm.graph.nodes if n.op == "output"][0]
    tuple_out = isinstance(out_node.args[0], (tuple, list))
    dev = next((x.device for x in example_inputs if isinstance(x, torch.Tensor)), None)
    device = dev.index if dev is not None and dev.type == "cuda" else None
    if dev is not None and dev.type != "cuda":
        raise CompileError("torch.compile(backend='kgraph') runs on CUDA tensors; the "
                           f"example inputs are on {dev}")
    # The graph is torch-level; make_fx takes it to ATen with the example
    # inputs (torch.export of a dynamo graph adds nothing here).
    # Traced with fresh tensors of the example inputs' shapes and dtypes
    # (dynamo's may be fake tensors); the values are supplied at each call.
    examples = [(torch.randn(tuple(x.shape), device=x.device) if x.is_floating_point() else
                 torch.zeros(tuple(x.shape), dtype=x.dtype, device=x.device)).to(x.dtype)
                for x in example_inputs]
    prog = compile(gm, examples, device=device, tracer="make_fx")

    def run(*args):
        outs = prog(*args)
        if not isinstance(outs, (tuple, list)):
            outs = (outs,)
        return tuple(outs) if tuple_out else outs[0]

    return run


def register_torch_backend():
    """Registers ``"kgraph"`` with torch.compile where torch has dynamo;
    returns whether it did."""
    try:
        import torch
        from torch._dynamo import register_backend
    except Exception:
        return False
    try:
        from torch._dynamo.backends.registry import list_backends
        if "kgraph" in list_backends(exclude_tags=()):
            return True
    except Exception:
        pass
    try:
        register_backend(name="kgraph")(kgraph_backend)
    except Exception:
        return False
    return hasattr(torch, "compile")
