"""kgraph: run graphs compiled by kgraph-opt on an NVIDIA GPU.

    import kgraph
    prog = kgraph.load("out.plan.json")   # written beside out.ptx by kgraph-opt
    y = prog(a, b)                         # torch tensors or numpy arrays
    prog.run([a, b], [y])                  # into preallocated outputs
    other = prog.function("main_b8")       # another function of the plan
    g = prog.capture(a, b); y = g(a, b)    # a CUDA graph, replayed
    prog.profile(a, b)                     # per-kernel times and roofline

See docs/runtime.md.
"""

from .dtypes import DTYPES, DType
from .errors import (ArgumentCountError, CudaError, DTypeError, KGraphError,
                     LayoutError, NoGPUError, PlanError, ShapeError,
                     WeightsError)
from .plan import (DTYPE_SIZES, PLAN_FORMAT, SUPPORTED_VERSIONS, ArgSpec,
                   BufferSpec, FunctionPlan, KernelSpec, OpSpec, Plan,
                   load_plan, parse_plan)
from .profile import DevicePeaks, KernelProfile, Profile
from .runtime import (CudaGraph, KernelParams, Program, load, numpy_dtype,
                      pack_kernel_params, torch_dtype)
from .weights import WeightsFile

__all__ = [
    "ArgSpec", "ArgumentCountError", "BufferSpec", "CudaError", "CudaGraph",
    "DTYPES", "DTYPE_SIZES", "DType", "DTypeError", "DevicePeaks",
    "FunctionPlan", "KGraphError", "KernelParams", "KernelProfile",
    "KernelSpec", "LayoutError", "NoGPUError", "OpSpec", "PLAN_FORMAT", "Plan",
    "PlanError", "Profile", "Program", "SUPPORTED_VERSIONS", "ShapeError",
    "WeightsError", "WeightsFile", "load", "load_plan", "numpy_dtype",
    "pack_kernel_params", "parse_plan", "torch_dtype",
]
