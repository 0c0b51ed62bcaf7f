"""kgraph: run graphs compiled by kgraph-opt on an NVIDIA GPU.

    import kgraph
    prog = kgraph.load("out.plan.json")   # written beside out.ptx by kgraph-opt
    y = prog(a, b)                         # torch tensors or numpy arrays
    prog.run([a, b], [y])                  # into preallocated outputs

See docs/runtime.md.
"""

from .dtypes import DTYPES, DType
from .errors import (ArgumentCountError, CudaError, DTypeError, KGraphError,
                     LayoutError, NoGPUError, PlanError, ShapeError)
from .plan import (DTYPE_SIZES, PLAN_FORMAT, SUPPORTED_VERSIONS, ArgSpec,
                   BufferSpec, KernelSpec, Plan, load_plan, parse_plan)
from .runtime import (KernelParams, Program, load, numpy_dtype,
                      pack_kernel_params, torch_dtype)

__all__ = [
    "ArgSpec", "ArgumentCountError", "BufferSpec", "CudaError", "DTYPES",
    "DTYPE_SIZES", "DType", "DTypeError", "KGraphError", "KernelParams",
    "KernelSpec", "LayoutError", "NoGPUError", "PLAN_FORMAT", "Plan", "PlanError", "Program",
    "SUPPORTED_VERSIONS", "ShapeError", "load", "load_plan", "numpy_dtype",
    "pack_kernel_params", "parse_plan", "torch_dtype",
]
