"""kgraph: run graphs compiled by kgraph-opt on an NVIDIA GPU.

    import kgraph
    prog = kgraph.load("out.plan.json")   # written beside out.ptx by kgraph-opt
    y = prog(a, b)                         # torch tensors or numpy arrays
    prog.run([a, b], [y])                  # into preallocated outputs

    prog = kgraph.compile(model, [x])      # import + kgraph-opt + load

See docs/runtime.md and docs/importers.md.
"""

import sys as _sys

from .dtypes import DTYPES, DType
from .errors import (ArgumentCountError, CompileError, CudaError, DTypeError,
                     KGraphError, LayoutError, ModelSourceError, NoGPUError,
                     PlanError, ShapeError, UnsupportedModelError)
from .plan import (DTYPE_SIZES, PLAN_FORMAT, SUPPORTED_VERSIONS, ArgSpec,
                   BufferSpec, KernelSpec, Plan, load_plan, parse_plan)
from .runtime import (KernelParams, Program, load, numpy_dtype,
                      pack_kernel_params, torch_dtype)

from .compiler import (BoundProgram, compile, current_target,  # noqa: E402
                       kgraph_backend, register_torch_backend)
from .tools import find_tool  # noqa: E402


def import_model(*args, **kwargs):
    """Import a model to kgraph IR and a weights file; see
    :func:`kgraph.importers.import_model` (``python3 -m kgraph.import``)."""
    from .importers import import_model as _import_model
    return _import_model(*args, **kwargs)


# torch.compile(model, backend="kgraph") where torch (2.x) is already loaded;
# kgraph itself never imports torch at import time.
if "torch" in _sys.modules:
    register_torch_backend()

__all__ = [
    "BoundProgram", "CompileError", "ModelSourceError", "UnsupportedModelError",
    "compile", "current_target", "find_tool", "import_model", "kgraph_backend",
    "register_torch_backend",
    "ArgSpec", "ArgumentCountError", "BufferSpec", "CudaError", "DTYPES",
    "DTYPE_SIZES", "DType", "DTypeError", "KGraphError", "KernelParams",
    "KernelSpec", "LayoutError", "NoGPUError", "PLAN_FORMAT", "Plan", "PlanError", "Program",
    "SUPPORTED_VERSIONS", "ShapeError", "load", "load_plan", "numpy_dtype",
    "pack_kernel_params", "parse_plan", "torch_dtype",
]
