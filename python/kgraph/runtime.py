"""Running a kgraph launch plan on an NVIDIA GPU.

:func:`load` reads a plan and its PTX (no GPU needed yet); the returned
:class:`Program` checks its arguments against the plan *before* it touches the
GPU, then loads the PTX module into the device's primary context (shared with
torch), allocates the intermediates and launches the kernels in order.

Torch tensors run on torch's current stream without synchronizing, like a
torch op. Numpy arrays are copied to freshly allocated device buffers, the
kernels run on the default stream, and the results are copied back.
"""

import ctypes
import sys
import threading

from . import driver as _driver
from .errors import (ArgumentCountError, DTypeError, KGraphError, LayoutError,
                     NoGPUError, PlanError, ShapeError)
from .dtypes import DTYPES
from .plan import KernelSpec, Plan, load_plan

#: Buffers must be aligned to this many bytes (the kernels use 16-byte
#: vector accesses; docs/launch-plan.md).
BUFFER_ALIGNMENT = 16

_NUMPY_DTYPES = {name: d.numpy for name, d in DTYPES.items() if d.numpy}
_TORCH_DTYPES = {name: d.torch for name, d in DTYPES.items()}


def _torch():
    """The torch module if it is already imported (never imports it)."""
    return sys.modules.get("torch")


def _is_torch_tensor(x) -> bool:
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def _is_numpy_array(x) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


def torch_dtype(name: str):
    """The torch dtype of plan dtype ``name``."""
    import torch
    return getattr(torch, _TORCH_DTYPES[name])


def numpy_dtype(name: str):
    """The numpy dtype of plan dtype ``name``; DTypeError for bf16."""
    import numpy as np
    if name not in _NUMPY_DTYPES:
        raise DTypeError(f"numpy has no {name} dtype: pass torch tensors for "
                         f"{name} buffers")
    return np.dtype(_NUMPY_DTYPES[name])


# --- kernel parameters ---------------------------------------------------------

_SCALAR_CTYPES = {"i32": ctypes.c_int32, "i64": ctypes.c_int64,
                  "f32": ctypes.c_float}


class KernelParams:
    """The ``kernelParams`` array of one launch: a ``void*`` per parameter,
    each pointing at the parameter's value (a u64 device address for a buffer,
    the scalar by value otherwise), as cuLaunchKernel wants it."""

    def __init__(self, kernel: KernelSpec, addresses, map_addresses=None):
        values = []
        for i, arg in enumerate(kernel.args):
            if arg.kind == "tensor_maps":
                try:
                    values.append(ctypes.c_uint64(map_addresses[i]))
                except (KeyError, TypeError):
                    raise KGraphError(f"kernel '{kernel.name}' argument {i}: "
                                      f"tensor maps not built") from None
                continue
            if arg.kind == "buffer":
                try:
                    addr = addresses[arg.buffer]
                except KeyError:
                    raise KGraphError(f"kernel '{kernel.name}' argument {i}: no "
                                      f"address for buffer {arg.buffer}") from None
                values.append(ctypes.c_uint64(addr + arg.byte_offset))
            else:
                ctype = _SCALAR_CTYPES[arg.type]
                value = float(arg.value) if arg.type == "f32" else int(arg.value)
                if arg.type == "i64" and value >= 1 << 63:
                    value -= 1 << 64  # the plan may spell an i64 as unsigned
                if arg.type == "i32" and value >= 1 << 31:
                    value -= 1 << 32
                values.append(ctype(value))
        self.values = values
        self.array = (ctypes.c_void_p * max(len(values), 1))(
            *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])

    def raw_bytes(self) -> bytes:
        """The parameter values, concatenated in order (for inspection)."""
        return b"".join(bytes(v) for v in self.values)


def pack_kernel_params(kernel: KernelSpec, addresses,
                       map_addresses=None) -> KernelParams:
    """Build the launch parameters of ``kernel`` given ``addresses``: a mapping
    from buffer id to device address, and ``map_addresses``: argument index
    -> device address of that "tensor_maps" argument's encoded maps."""
    return KernelParams(kernel, addresses, map_addresses)


def encode_tensor_maps(drv, arg, addresses) -> bytes:
    """The CUtensorMaps of a "tensor_maps" argument over the buffers at
    ``addresses`` (buffer id -> device address), concatenated, 128 bytes
    each."""
    return b"".join(drv.encode_tensor_map(m, addresses[m.buffer] +
                                          m.byte_offset)
                    for m in arg.maps)


#: Encoded tensor-map buffers a Program keeps per device before it drops
#: them all (after synchronizing the device's work that may read them).
TENSOR_MAP_CACHE_LIMIT = 256


# --- argument checking ---------------------------------------------------------


def _dtype_name_of(x) -> str:
    if _is_torch_tensor(x):
        return str(x.dtype)
    return f"numpy.{x.dtype}"


def _check_array(spec, x, role: str, i: int, plan: Plan):
    """Check one input/output against its buffer spec (no GPU involved)."""
    what = f"{role} {i} of '{plan.function}'"
    if not (_is_torch_tensor(x) or _is_numpy_array(x)):
        raise DTypeError(f"{what}: expected a torch.Tensor or numpy.ndarray, "
                         f"got {type(x).__name__}")
    if _is_torch_tensor(x):
        want = torch_dtype(spec.dtype)
        if x.dtype != want:
            raise DTypeError(f"{what}: expected dtype {spec.dtype} ({want}), "
                             f"got {x.dtype}")
    else:
        if spec.dtype not in _NUMPY_DTYPES:
            raise DTypeError(f"{what}: is {spec.dtype}, which numpy cannot "
                             f"hold (no bfloat16): pass a torch tensor")
        want = numpy_dtype(spec.dtype)
        if x.dtype != want:
            raise DTypeError(f"{what}: expected dtype {spec.dtype} "
                             f"(numpy.{want}), got numpy.{x.dtype}")
    if tuple(x.shape) != spec.shape:
        raise ShapeError(f"{what}: expected shape {list(spec.shape)}, got "
                         f"{list(x.shape)}")


def _check_output_layout(x, role: str, i: int):
    if _is_torch_tensor(x):
        if not x.is_contiguous():
            raise LayoutError(f"{role} {i}: preallocated output is not "
                              f"contiguous (stride {list(x.stride())})")
        if x.is_cuda and x.data_ptr() % BUFFER_ALIGNMENT:
            raise LayoutError(f"{role} {i}: preallocated output is not "
                              f"{BUFFER_ALIGNMENT}-byte aligned (address "
                              f"{x.data_ptr():#x})")
    else:
        if not x.flags.c_contiguous:
            raise LayoutError(f"{role} {i}: preallocated output is not "
                              f"C-contiguous")
        if not x.flags.writeable:
            raise LayoutError(f"{role} {i}: preallocated output is read-only")


# --- the program ----------------------------------------------------------------


class Program:
    """A loaded launch plan, callable on torch tensors or numpy arrays.

    ``program(*inputs)`` returns the output (or a tuple of outputs when the
    function has several), of the same kind as the inputs: torch tensors on the
    inputs' device, or numpy arrays. ``program.run(inputs, outputs)`` writes
    into preallocated outputs instead.
    """

    def __init__(self, plan: Plan, ptx: bytes, device: int = None,
                 libcuda: str = None):
        self.plan = plan
        self.ptx = ptx
        self.device = device
        self._libcuda = libcuda
        self._functions = {}  # device ordinal -> [CUfunction per kernel]
        # (ordinal, kernel index, arg index, buffer addresses) -> device
        # address of the encoded tensor maps (they embed the addresses).
        self._tensor_maps = {}
        self._lock = threading.Lock()

    # Public description of the signature.
    @property
    def inputs(self):
        return self.plan.inputs

    @property
    def outputs(self):
        return self.plan.outputs

    def __repr__(self):
        ins = ", ".join(b.describe() for b in self.plan.inputs)
        outs = ", ".join(b.describe() for b in self.plan.outputs)
        return (f"<kgraph.Program @{self.plan.function}({ins}) -> ({outs}), "
                f"{len(self.plan.kernels)} kernel(s), {self.plan.target}>")

    # --- GPU state ---------------------------------------------------------------

    def _driver(self):
        return _driver.get_driver(self._libcuda)

    def _kernels_on(self, drv, ordinal: int):
        """Make ``ordinal`` current and return its CUfunctions (loaded once)."""
        drv.set_device(ordinal)
        with self._lock:
            fns = self._functions.get(ordinal)
            if fns is None:
                module = drv.load_module(self.ptx, what=self.plan.ptx_path)
                fns = []
                for k in self.plan.kernels:
                    fn = drv.get_function(module, k.name)
                    # Raise the dynamic limit for every kernel that uses
                    # dynamic shared memory: the default (48 KiB minus the
                    # kernel's static shared memory) can be too small even
                    # at exactly 48 KiB.
                    if k.shared_bytes > 0:
                        drv.set_max_dynamic_smem(fn, k.shared_bytes)
                    fns.append(fn)
                self._functions[ordinal] = fns
        return fns

    def prepare(self, device: int = None):
        """Initialize CUDA and load the module now (otherwise done on first
        use). Raises NoGPUError without a GPU."""
        drv = self._driver()
        if device is None:
            device = self.device if self.device is not None else 0
        self._kernels_on(drv, device)

    def _tensor_map_addresses(self, drv, ordinal, stream, k_i, kernel,
                              addresses):
        """Device addresses of ``kernel``'s "tensor_maps" arguments, encoded
        (cuTensorMapEncodeTiled) and copied to the device once per set of
        buffer addresses; the kernel reads them from global memory."""
        out = {}
        for a_i, arg in enumerate(kernel.args):
            if arg.kind != "tensor_maps":
                continue
            key = (ordinal, k_i, a_i,
                   tuple(addresses[m.buffer] for m in arg.maps))
            with self._lock:
                ptr = self._tensor_maps.get(key)
            if ptr is None:
                data = encode_tensor_maps(drv, arg, addresses)
                with self._lock:
                    if len(self._tensor_maps) >= TENSOR_MAP_CACHE_LIMIT:
                        # Launches queued earlier may still read them.
                        drv.synchronize(stream)
                        for old in self._tensor_maps.values():
                            drv.mem_free(old)
                        self._tensor_maps.clear()
                ptr = drv.mem_alloc(len(data))
                buf = ctypes.create_string_buffer(data, len(data))
                drv.memcpy_htod(ptr, ctypes.addressof(buf), len(data))
                with self._lock:
                    self._tensor_maps[key] = ptr
            out[a_i] = ptr
        return out

    def _launch_all(self, drv, ordinal, stream, addresses):
        fns = self._kernels_on(drv, ordinal)
        for k_i, (k, fn) in enumerate(zip(self.plan.kernels, fns)):
            map_addresses = self._tensor_map_addresses(
                drv, ordinal, stream, k_i, k, addresses)
            params = pack_kernel_params(k, addresses, map_addresses)
            drv.launch(fn, k.grid, k.block, k.shared_bytes, stream,
                       params.array, name=k.name)

    # --- calling -------------------------------------------------------------------

    def _check_counts(self, inputs, outputs=None):
        n_in = len(self.plan.inputs)
        if len(inputs) != n_in:
            raise ArgumentCountError(
                f"'{self.plan.function}' takes {n_in} input(s) "
                f"({', '.join(b.describe() for b in self.plan.inputs)}), "
                f"got {len(inputs)}")
        if outputs is not None and len(outputs) != len(self.plan.outputs):
            raise ArgumentCountError(
                f"'{self.plan.function}' has {len(self.plan.outputs)} "
                f"output(s), got {len(outputs)} preallocated")

    def __call__(self, *inputs):
        self._check_counts(inputs)
        for i, (spec, x) in enumerate(zip(self.plan.inputs, inputs)):
            _check_array(spec, x, "input", i, self.plan)
        if any(_is_torch_tensor(x) for x in inputs):
            outs = self._call_torch(inputs)
        else:
            outs = self._call_numpy(inputs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def run(self, inputs, outputs):
        """Run on ``inputs``, writing into the preallocated ``outputs`` (same
        shapes and dtypes as the plan's outputs, contiguous)."""
        inputs, outputs = list(inputs), list(outputs)
        self._check_counts(inputs, outputs)
        for i, (spec, x) in enumerate(zip(self.plan.inputs, inputs)):
            _check_array(spec, x, "input", i, self.plan)
        for i, (spec, x) in enumerate(zip(self.plan.outputs, outputs)):
            _check_array(spec, x, "output", i, self.plan)
            _check_output_layout(x, "output", i)
        if any(_is_torch_tensor(x) for x in inputs + outputs):
            self._run_torch(inputs, outputs)
        else:
            self._run_numpy(inputs, outputs)

    # --- torch path -------------------------------------------------------------------

    def _torch_device(self, tensors):
        import torch
        devices = {t.device for t in tensors if _is_torch_tensor(t) and t.is_cuda}
        if len(devices) > 1:
            raise LayoutError(f"tensors are on different devices: "
                              f"{sorted(str(d) for d in devices)}")
        if devices:
            return devices.pop()
        # Only CPU tensors / numpy arrays: stage them through a GPU.
        self._driver()  # a clear NoGPUError if there is no GPU at all
        if not torch.cuda.is_available():
            raise NoGPUError("no CUDA GPU available: torch.cuda.is_available() "
                             "is False")
        ordinal = self.device if self.device is not None \
            else torch.cuda.current_device()
        return torch.device("cuda", ordinal)

    def _to_device_input(self, x, device):
        import torch
        if not _is_torch_tensor(x):
            x = torch.from_numpy(x)
        x = x.to(device, non_blocking=False).contiguous()
        if x.data_ptr() % BUFFER_ALIGNMENT:
            x = x.clone()  # a fresh allocation is aligned
        return x

    def _execute_torch(self, device, dev_inputs, dev_outputs):
        import torch
        drv = self._driver()
        addresses = {}
        for spec, t in zip(self.plan.inputs, dev_inputs):
            addresses[spec.id] = t.data_ptr()
        for spec, t in zip(self.plan.outputs, dev_outputs):
            addresses[spec.id] = t.data_ptr()
        # Intermediates come from torch's caching allocator: stream-ordered, so
        # dropping them after the enqueue is safe on this stream.
        scratch = []
        for spec in self.plan.intermediates:
            t = torch.empty(max(spec.bytes, 1), dtype=torch.uint8, device=device)
            scratch.append(t)
            addresses[spec.id] = t.data_ptr()
        stream = torch.cuda.current_stream(device).cuda_stream
        self._launch_all(drv, device.index, stream, addresses)
        del scratch

    def _call_torch(self, inputs):
        import torch
        device = self._torch_device(inputs)
        dev_inputs = [self._to_device_input(x, device) for x in inputs]
        outs = [torch.empty(s.shape, dtype=torch_dtype(s.dtype), device=device)
                for s in self.plan.outputs]
        self._execute_torch(device, dev_inputs, outs)
        all_cpu = all(not (_is_torch_tensor(x) and x.is_cuda) for x in inputs)
        if all_cpu:
            outs = [o.cpu() for o in outs]
        return outs

    def _run_torch(self, inputs, outputs):
        import numpy as np
        device = self._torch_device(list(inputs) + list(outputs))
        dev_inputs = [self._to_device_input(x, device) for x in inputs]
        dev_outputs = []
        for o in outputs:
            if _is_torch_tensor(o) and o.device == device:
                dev_outputs.append(o)
            else:  # host output: run into a device copy (keeps its contents)
                dev_outputs.append(self._to_device_input(o, device))
        self._execute_torch(device, dev_inputs, dev_outputs)
        for o, d in zip(outputs, dev_outputs):
            if d is o:
                continue
            if _is_torch_tensor(o):
                o.copy_(d)
            else:
                np.copyto(o, d.cpu().numpy())

    # --- numpy path ----------------------------------------------------------------------

    def _execute_numpy(self, inputs, outputs, copy_outputs_in: bool):
        import numpy as np
        drv = self._driver()
        ordinal = self.device if self.device is not None else 0
        drv.set_device(ordinal)
        allocated = []
        try:
            addresses = {}
            for spec in self.plan.buffers:
                ptr = drv.mem_alloc(spec.bytes)
                allocated.append(ptr)
                addresses[spec.id] = ptr
            for spec, x in zip(self.plan.inputs, inputs):
                x = np.ascontiguousarray(x)
                drv.memcpy_htod(addresses[spec.id], x.ctypes.data, spec.bytes)
            if copy_outputs_in:
                for spec, o in zip(self.plan.outputs, outputs):
                    drv.memcpy_htod(addresses[spec.id], o.ctypes.data, spec.bytes)
            self._launch_all(drv, ordinal, None, addresses)
            drv.synchronize(None)
            for spec, o in zip(self.plan.outputs, outputs):
                drv.memcpy_dtoh(o.ctypes.data, addresses[spec.id], spec.bytes)
        finally:
            for ptr in allocated:
                try:
                    drv.mem_free(ptr)
                except KGraphError:
                    pass  # keep the original error; the context may be broken

    def _call_numpy(self, inputs):
        import numpy as np
        outs = [np.empty(s.shape, dtype=numpy_dtype(s.dtype))
                for s in self.plan.outputs]
        self._execute_numpy(inputs, outs, copy_outputs_in=False)
        return outs

    def _run_numpy(self, inputs, outputs):
        self._execute_numpy(inputs, outputs, copy_outputs_in=True)


def load(plan_path, device: int = None, libcuda: str = None) -> Program:
    """Load the launch plan at ``plan_path`` (and the PTX it names).

    ``device`` is the CUDA ordinal used for numpy arrays and host tensors
    (default: torch's current device, else 0); CUDA tensors always run on their
    own device. ``libcuda`` overrides the driver library (default
    ``$KGRAPH_LIBCUDA`` or libcuda.so.1). No GPU is touched until the first
    call or :meth:`Program.prepare`.
    """
    plan = load_plan(plan_path)
    try:
        with open(plan.ptx_path, "rb") as f:
            ptx = f.read()
    except OSError as e:
        raise PlanError(f"{plan.path}: cannot read PTX file {plan.ptx_path}: "
                        f"{e.strerror}") from e
    return Program(plan, ptx, device=device, libcuda=libcuda)
