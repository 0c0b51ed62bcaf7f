"""kgraph: run graphs compiled by kgraph-opt on an NVIDIA GPU.

    import kgraph
    prog = kgraph.load("out.plan.json")   # written beside out.ptx by kgraph-opt
    y = prog(a, b)                         # torch tensors or numpy arrays
    prog.run([a, b], [y])                  # into preallocated outputs
    other = prog.function("main_b8")       # another function of the plan
    g = prog.capture(a, b); y = g(a, b)    # a CUDA graph, replayed
    prog.profile(a, b)                     # per-kernel times and roofline

    prog = kgraph.compile(model, [x])      # import + kgraph-opt + load
    dp = kgraph.distributed.DataParallel("out.plan.json")   # under torchrun

See docs/runtime.md and docs/importers.md.
"""

import sys as _sys

#: The kgraph version: CMakeLists.txt's project version (the installed CMake
#: package's KGRAPH_VERSION), recorded in tuning databases.
__version__ = "0.1.0"

from .dtypes import DTYPES, DType
from .errors import (ArgumentCountError, CompileError, CudaError, DTypeError,
                     KGraphError, LayoutError, ModelSourceError, NoGPUError,
                     PlanError, ShapeError, UnsupportedModelError,
                     WeightsError)
from .plan import (DTYPE_SIZES, PLAN_FORMAT, SUPPORTED_VERSIONS, ArgSpec,
                   BufferSpec, FunctionPlan, KernelSpec, OpSpec, Plan,
                   load_plan, parse_plan)
from .profile import DevicePeaks, KernelProfile, Profile
from .runtime import (CudaGraph, KernelParams, Program, load, numpy_dtype,
                      pack_kernel_params, torch_dtype)
from .weights import WeightsFile

from .compiler import (BoundProgram, compile, current_target,  # noqa: E402
                       kgraph_backend, register_torch_backend)
from .tools import find_tool  # noqa: E402
from . import distributed  # noqa: E402  (data-parallel runs; torch imported on use)


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
    "__version__", "BoundProgram", "CompileError", "ModelSourceError", "UnsupportedModelError",
    "compile", "current_target", "distributed", "find_tool", "import_model", "kgraph_backend",
    "register_torch_backend",
    "ArgSpec", "ArgumentCountError", "BufferSpec", "CudaError", "CudaGraph",
    "DTYPES", "DTYPE_SIZES", "DType", "DTypeError", "DevicePeaks",
    "FunctionPlan", "KGraphError", "KernelParams", "KernelProfile",
    "KernelSpec", "LayoutError", "NoGPUError", "OpSpec", "PLAN_FORMAT", "Plan",
    "PlanError", "Profile", "Program", "SUPPORTED_VERSIONS", "ShapeError",
    "WeightsError", "WeightsFile", "load", "load_plan", "numpy_dtype",
    "pack_kernel_params", "parse_plan", "torch_dtype",
]
