"""Running a kgraph launch plan on an NVIDIA GPU.

:func:`load` reads a plan, its PTX and the header of its weights file (no GPU
needed yet); the returned :class:`Program` (one function of the plan) checks
its arguments against the plan *before* it touches the GPU, then loads the
PTX module into the device's primary context (shared with torch), uploads the
function's parameters once per device, allocates the intermediates and
launches the kernels in order. :meth:`Program.capture` records the launches
into a CUDA graph (:class:`CudaGraph`); :meth:`Program.profile` times each
kernel (:mod:`kgraph.profile`).

Torch tensors run on torch's current stream without synchronizing, like a
torch op. Numpy arrays are copied to freshly allocated device buffers, the
kernels run on the default stream, and the results are copied back.
"""

import collections
import ctypes
import sys
import threading

from . import driver as _driver
from .errors import (ArgumentCountError, DTypeError, KGraphError, LayoutError,
                     NoGPUError, PlanError, ShapeError)
from .dtypes import DTYPES
from .plan import FunctionPlan, KernelSpec, Plan, load_plan
from .weights import WeightsFile

#: Buffers must be aligned to this many bytes (the kernels use 16-byte
#: vector accesses; docs/launch-plan.md).
BUFFER_ALIGNMENT = 16
#: Alignment of each intermediate inside the one scratch allocation of a
#: call (what cudaMalloc gives a separate allocation).
SCRATCH_ALIGNMENT = 256

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
            if arg.kind in ("tensor_maps", "workspace"):
                try:
                    values.append(ctypes.c_uint64(map_addresses[i]))
                except (KeyError, TypeError):
                    what = ("tensor maps not built" if arg.kind == "tensor_maps"
                            else "workspace not allocated")
                    raise KGraphError(f"kernel '{kernel.name}' argument {i}: "
                                      f"{what}") from None
                continue
            if arg.kind == "buffer":
                try:
                    addr = addresses[arg.buffer]
                except KeyError:
                    raise KGraphError(f"kernel '{kernel.name}' argument {i}: no "
                                      f"address for buffer {arg.buffer}") from None
                # A view into the buffer starts byte_offset bytes in.
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
    from buffer id to device address (a "buffer" argument gets it plus its
    ``byte_offset``), and ``map_addresses``: argument index -> device address
    of that "tensor_maps" argument's encoded maps."""
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
#: Prepared launch sequences a Program keeps (one per set of buffer
#: addresses seen recently).
LAUNCH_CACHE_LIMIT = 16


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


class _Shared:
    """What the Programs of one loaded plan share: the PTX image, the loaded
    module's kernels per device, the weights file and the parameters
    uploaded to each device (kept for the Programs' lifetime)."""

    def __init__(self, plan: Plan, ptx: bytes, libcuda, weights):
        self.plan = plan
        self.ptx = ptx
        self.libcuda = libcuda
        self.weights = weights
        self.modules = {}     # ordinal -> CUmodule
        self.kernels = {}     # (ordinal, kernel name) -> CUfunction
        # (ordinal, tensor name) -> device address of a parameter;
        # (ordinal, "constant", function, buffer id) -> of a constant.
        self.parameters = {}
        # (ordinal, function, buffer id) -> device address of a derived
        # buffer (computed from the parameters by the function's once
        # kernels, kept like them).
        self.derived = {}
        # (ordinal, function, kernel index, arg index, buffer addresses) ->
        # device address of the encoded tensor maps (they embed the
        # addresses).
        self.tensor_maps = {}
        # (ordinal, function, kernel name, arg index) -> device address of a
        # stream-K kernel's workspace: zeroed once, left zeroed by every
        # launch, so launches of one program must not overlap in time.
        self.workspaces = {}
        # (ordinal, function, buffer addresses) -> the prepared launches
        # (they embed the addresses and the tensor maps above): a call
        # whose buffers sit where a recent call's did (torch's caching
        # allocator makes that the usual case) packs no parameters.
        self.launches = collections.OrderedDict()
        self.lock = threading.RLock()
        self._driver_used = None

    def release(self):
        """Free the parameters and cached tensor maps on every device (the
        module stays loaded; the primary context owns it)."""
        drv = self._driver_used
        with self.lock:
            ptrs = list(self.parameters.values()) + \
                list(self.derived.values()) + list(self.tensor_maps.values()) + \
                list(self.workspaces.values())
            self.parameters.clear()
            self.derived.clear()
            self.tensor_maps.clear()
            self.workspaces.clear()
            self.launches.clear()
        if drv is None:
            return
        for ptr in ptrs:
            try:
                drv.mem_free(ptr)
            except KGraphError:
                pass

    def __del__(self):
        try:
            self.release()
        except Exception:  # interpreter shutdown: the driver may be gone
            pass


class Program:
    """One function of a loaded launch plan, callable on torch tensors or
    numpy arrays.

    ``program(*inputs)`` takes the function's real inputs (not its
    parameters, which come from the plan's weights file) and returns the
    output (or a tuple of outputs when the function has several), of the same
    kind as the inputs: torch tensors on the inputs' device, or numpy arrays.
    ``program.run(inputs, outputs)`` writes into preallocated outputs instead.
    ``program.function(name)`` is another function of the same plan (same
    PTX module and parameters); ``program.capture(*inputs)`` records a CUDA
    graph; ``program.profile(*inputs)`` times every kernel.
    """

    def __init__(self, plan: Plan, ptx: bytes, device: int = None,
                 libcuda: str = None, function: str = None, weights=None,
                 _shared: _Shared = None):
        self.plan = plan
        #: The function this Program runs (a FunctionPlan).
        self.spec = plan.function_plan(function)
        self.ptx = ptx
        self.device = device
        self._libcuda = libcuda
        if _shared is None:
            if weights is None:
                weights = _open_weights(plan)
            _shared = _Shared(plan, ptx, libcuda, weights)
        self._shared = _shared
        self._lock = _shared.lock

    # Public description of the signature.
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def inputs(self):
        return self.spec.inputs

    @property
    def outputs(self):
        return self.spec.outputs

    @property
    def parameters(self):
        return self.spec.parameters

    @property
    def function_names(self):
        """The names of every function of the plan, in plan order."""
        return self.plan.function_names

    def function(self, name: str) -> "Program":
        """The plan's function ``name`` as a Program sharing this one's PTX
        module, weights and uploaded parameters."""
        self.plan.function_plan(name)  # a clear PlanError for a wrong name
        return Program(self.plan, self.ptx, device=self.device,
                       libcuda=self._libcuda, function=name,
                       _shared=self._shared)

    def __repr__(self):
        ins = ", ".join(b.describe() for b in self.spec.inputs)
        outs = ", ".join(b.describe() for b in self.spec.outputs)
        params = (f", {len(self.spec.parameters)} parameter(s)"
                  if self.spec.parameters else "")
        once = (f" (+{len(self.spec.once_kernels)} once at load)"
                if self.spec.once_kernels else "")
        return (f"<kgraph.Program @{self.spec.name}({ins}) -> ({outs}), "
                f"{len(self.spec.kernels)} kernel(s){once}{params}, "
                f"{self.plan.target}>")

    # --- GPU state ---------------------------------------------------------------

    def release(self):
        """Free the parameters uploaded for the plan (every function and
        device) and the cached tensor maps now instead of when the last
        Program of the plan goes away; later calls upload them again."""
        self._shared.release()

    def _driver(self):
        drv = _driver.get_driver(self._libcuda)
        self._shared._driver_used = drv
        return drv

    def _kernels_on(self, drv, ordinal: int, kernels=None):
        """Make ``ordinal`` current and return the CUfunctions of this
        function's kernels (``kernels``, default the per-call ones; the
        module is loaded once per device)."""
        drv.set_device(ordinal)
        shared = self._shared
        with self._lock:
            module = shared.modules.get(ordinal)
            if module is None:
                module = drv.load_module(self.ptx, what=self.plan.ptx_path)
                shared.modules[ordinal] = module
            fns = []
            for k in (self.spec.kernels if kernels is None else kernels):
                fn = shared.kernels.get((ordinal, k.name))
                if fn is None:
                    fn = drv.get_function(module, k.name)
                    # Raise the dynamic limit for every kernel that uses
                    # dynamic shared memory: the default (48 KiB minus the
                    # kernel's static shared memory) can be too small even
                    # at exactly 48 KiB.
                    if k.shared_bytes > 0:
                        drv.set_max_dynamic_smem(fn, k.shared_bytes)
                    shared.kernels[(ordinal, k.name)] = fn
                fns.append(fn)
        return fns

    def _parameter_addresses(self, drv, ordinal: int):
        """Buffer id -> device address of this function's parameters,
        constants and derived buffers on ``ordinal``: parameters uploaded
        from the weights file (constants from the plan) the first time a
        tensor is needed on that device, derived buffers computed from them
        then by the once kernels; all kept."""
        if not (self.spec.parameters or self.spec.derived
                or self.spec.constants):
            return {}
        shared = self._shared
        out = {}
        uploaded = False
        with self._lock:
            for spec in self.spec.parameters + self.spec.constants:
                constant = spec.kind == "constant"
                key = ((ordinal, "constant", self.spec.name, spec.id) if constant
                       else (ordinal, spec.name))
                ptr = shared.parameters.get(key)
                if ptr is None:
                    data = spec.data if constant else shared.weights.read(spec.name)
                    ptr = drv.mem_alloc(spec.bytes)
                    try:
                        buf = ctypes.create_string_buffer(data, len(data))
                        drv.memcpy_htod(ptr, ctypes.addressof(buf), len(data))
                    except KGraphError:
                        drv.mem_free(ptr)
                        raise
                    shared.parameters[key] = ptr
                    uploaded = True
                out[spec.id] = ptr
            if uploaded:
                # A pageable copy may still be in flight when cuMemcpyHtoD
                # returns; kernels on other streams must see the data.
                drv.synchronize(None)
            if self.spec.derived:
                self._derive(drv, ordinal, out)
        return out

    def _derive(self, drv, ordinal: int, addresses):
        """Adds the derived buffers' addresses to ``addresses`` (which holds
        the parameters'), running the once kernels on ``ordinal`` the first
        time: on the null stream, finished before any call's launch."""
        shared = self._shared
        keys = [(ordinal, self.spec.name, b.id) for b in self.spec.derived]
        if all(k in shared.derived for k in keys):
            for b, k in zip(self.spec.derived, keys):
                addresses[b.id] = shared.derived[k]
            return
        made, maps = [], []
        try:
            for b in self.spec.derived:
                ptr = drv.mem_alloc(max(b.bytes, 1))
                made.append(ptr)
                addresses[b.id] = ptr
            self._launch(drv, self._pack_launches(
                drv, ordinal, None, addresses, maps,
                kernels=self.spec.once_kernels), None)
            drv.synchronize(None)
        except BaseException:
            for b in self.spec.derived:
                addresses.pop(b.id, None)
            for ptr in made + maps:
                try:
                    drv.mem_free(ptr)
                except KGraphError:
                    pass
            raise
        for ptr in maps:
            drv.mem_free(ptr)
        for k, ptr in zip(keys, made):
            shared.derived[k] = ptr

    def prepare(self, device: int = None):
        """Initialize CUDA, load the module and upload the parameters now
        (otherwise done on first use). Raises NoGPUError without a GPU."""
        drv = self._driver()
        if device is None:
            device = self.device if self.device is not None else 0
        self._kernels_on(drv, device)
        self._parameter_addresses(drv, device)

    def _tensor_map_addresses(self, drv, ordinal, stream, k_i, kernel,
                              addresses, owned=None):
        """Device addresses of ``kernel``'s "tensor_maps" arguments, encoded
        (cuTensorMapEncodeTiled, or cuTensorMapEncodeIm2col for im2col maps)
        and copied to the device once per set of buffer addresses; the kernel reads them from global memory. With
        ``owned`` (a list), fresh maps are made and their allocations
        appended to it instead of cached (a CUDA graph keeps its own)."""
        out = {}
        shared = self._shared
        for a_i, arg in enumerate(kernel.args):
            if arg.kind != "tensor_maps":
                continue
            key = (ordinal, self.spec.name, k_i, a_i,
                   tuple(addresses[m.buffer] for m in arg.maps))
            ptr = None
            if owned is None:
                with self._lock:
                    ptr = shared.tensor_maps.get(key)
            if ptr is None:
                data = encode_tensor_maps(drv, arg, addresses)
                if owned is None:
                    with self._lock:
                        if len(shared.tensor_maps) >= TENSOR_MAP_CACHE_LIMIT:
                            # Launches queued earlier may still read them.
                            drv.synchronize(stream)
                            for old in shared.tensor_maps.values():
                                drv.mem_free(old)
                            shared.tensor_maps.clear()
                            shared.launches.clear()
                ptr = drv.mem_alloc(len(data))
                if owned is not None:
                    owned.append(ptr)
                buf = ctypes.create_string_buffer(data, len(data))
                drv.memcpy_htod(ptr, ctypes.addressof(buf), len(data))
                if owned is None:
                    with self._lock:
                        shared.tensor_maps[key] = ptr
            out[a_i] = ptr
        return out

    def _workspace_addresses(self, drv, ordinal, kernel):
        """Device addresses of ``kernel``'s "workspace" arguments by index:
        allocated and zeroed on first use, then kept (the kernel leaves its
        workspace zeroed)."""
        out = {}
        for a_i, arg in enumerate(kernel.args):
            if arg.kind != "workspace":
                continue
            key = (ordinal, self.spec.name, kernel.name, a_i)
            with self._lock:
                ptr = self._shared.workspaces.get(key)
                if ptr is None:
                    ptr = drv.mem_alloc(arg.bytes)
                    drv.memset_d8(ptr, 0, arg.bytes)
                    drv.synchronize(None)
                    self._shared.workspaces[key] = ptr
            out[a_i] = ptr
        return out

    def _prepare_launches(self, drv, ordinal, stream, addresses, owned=None):
        """[(kernel, CUfunction, KernelParams)] of every launch, in order:
        everything a launch needs that touches the device (module, tensor
        maps) is done here, so the launches themselves can be captured.
        Without ``owned`` the result is cached per buffer addresses."""
        key = None
        if owned is None:
            key = (ordinal, self.spec.name, tuple(sorted(addresses.items())))
            with self._lock:
                hit = self._shared.launches.get(key)
                if hit is not None:
                    self._shared.launches.move_to_end(key)
                    return hit
        launches = self._pack_launches(drv, ordinal, stream, addresses, owned)
        if key is not None:
            with self._lock:
                cache = self._shared.launches
                cache[key] = launches
                while len(cache) > LAUNCH_CACHE_LIMIT:
                    cache.popitem(last=False)
        return launches

    def _pack_launches(self, drv, ordinal, stream, addresses, owned,
                       kernels=None):
        """The launches of ``kernels`` (default the per-call ones). Tensor
        maps are cached by kernel index unless ``owned`` collects them, as
        it must for any other kernel list."""
        kernels = self.spec.kernels if kernels is None else kernels
        fns = self._kernels_on(drv, ordinal, kernels)
        launches = []
        for k_i, (k, fn) in enumerate(zip(kernels, fns)):
            map_addresses = self._tensor_map_addresses(
                drv, ordinal, stream, k_i, k, addresses, owned)
            map_addresses.update(self._workspace_addresses(drv, ordinal, k))
            launches.append((k, fn, pack_kernel_params(k, addresses,
                                                       map_addresses)))
        return launches

    @staticmethod
    def _launch(drv, launches, stream):
        for k, fn, params in launches:
            drv.launch(fn, k.grid, k.block, k.shared_bytes, stream,
                       params.array, name=k.name)

    def _launch_all(self, drv, ordinal, stream, addresses):
        self._launch(drv, self._prepare_launches(drv, ordinal, stream,
                                                 addresses), stream)

    # --- calling -------------------------------------------------------------------

    def _check_counts(self, inputs, outputs=None):
        n_in = len(self.spec.inputs)
        if len(inputs) != n_in:
            params = (f"; its {len(self.spec.parameters)} parameter(s) come "
                      f"from the weights file" if self.spec.parameters else "")
            raise ArgumentCountError(
                f"'{self.spec.name}' takes {n_in} input(s) "
                f"({', '.join(b.describe() for b in self.spec.inputs)}), "
                f"got {len(inputs)}{params}")
        if outputs is not None and len(outputs) != len(self.spec.outputs):
            raise ArgumentCountError(
                f"'{self.spec.name}' has {len(self.spec.outputs)} "
                f"output(s), got {len(outputs)} preallocated")

    def _check_inputs(self, inputs):
        self._check_counts(inputs)
        for i, (spec, x) in enumerate(zip(self.spec.inputs, inputs)):
            _check_array(spec, x, "input", i, self.spec)

    def __call__(self, *inputs):
        self._check_inputs(inputs)
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
        for i, (spec, x) in enumerate(zip(self.spec.inputs, inputs)):
            _check_array(spec, x, "input", i, self.spec)
        for i, (spec, x) in enumerate(zip(self.spec.outputs, outputs)):
            _check_array(spec, x, "output", i, self.spec)
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

    def _execute_torch(self, device, dev_inputs, dev_outputs, body=None):
        """Launch (or ``body(drv, ordinal, stream, addresses)``) on torch's
        current stream of ``device``, intermediates from torch's allocator."""
        import torch
        drv = self._driver()
        addresses = self._parameter_addresses(drv, device.index)
        for spec, t in zip(self.spec.inputs, dev_inputs):
            addresses[spec.id] = t.data_ptr()
        for spec, t in zip(self.spec.outputs, dev_outputs):
            addresses[spec.id] = t.data_ptr()
        # Intermediates come from torch's caching allocator, all in one
        # allocation (aligned slices): stream-ordered, so dropping it after
        # the enqueue is safe on this stream.
        scratch = None
        offsets, total = self._scratch_layout()
        if total:
            scratch = torch.empty(total, dtype=torch.uint8, device=device)
            base = scratch.data_ptr()
            for spec, off in zip(self.spec.intermediates, offsets):
                addresses[spec.id] = base + off
        stream = torch.cuda.current_stream(device).cuda_stream
        if body is None:
            self._launch_all(drv, device.index, stream, addresses)
            result = None
        else:
            result = body(drv, device.index, stream, addresses)
        del scratch
        return result

    def _scratch_layout(self):
        """(byte offset of each intermediate, total bytes) in one scratch
        allocation; every offset a multiple of SCRATCH_ALIGNMENT."""
        layout = getattr(self, "_scratch", None)
        if layout is None:
            offsets, total = [], 0
            for spec in self.spec.intermediates:
                offsets.append(total)
                size = max(spec.bytes, 1)
                total += (size + SCRATCH_ALIGNMENT - 1) // SCRATCH_ALIGNMENT * SCRATCH_ALIGNMENT
            layout = self._scratch = (offsets, total)
        return layout

    def _call_torch(self, inputs, body=None):
        import torch
        device = self._torch_device(inputs)
        dev_inputs = [self._to_device_input(x, device) for x in inputs]
        outs = [torch.empty(s.shape, dtype=torch_dtype(s.dtype), device=device)
                for s in self.spec.outputs]
        result = self._execute_torch(device, dev_inputs, outs, body)
        if body is not None:
            return result
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

    def _ordinal(self):
        return self.device if self.device is not None else 0

    def _execute_numpy(self, inputs, outputs, copy_outputs_in: bool,
                       body=None):
        """Run on the null stream in fresh device buffers; ``body(drv,
        ordinal, stream, addresses)`` replaces the one launch sequence."""
        import numpy as np
        drv = self._driver()
        ordinal = self._ordinal()
        drv.set_device(ordinal)
        addresses = self._parameter_addresses(drv, ordinal)
        allocated = []
        try:
            for spec in self.spec.buffers:
                if spec.kind in ("parameter", "derived", "constant"):
                    continue
                ptr = drv.mem_alloc(spec.bytes)
                allocated.append(ptr)
                addresses[spec.id] = ptr
            for spec, x in zip(self.spec.inputs, inputs):
                x = np.ascontiguousarray(x)
                drv.memcpy_htod(addresses[spec.id], x.ctypes.data, spec.bytes)
            if copy_outputs_in:
                for spec, o in zip(self.spec.outputs, outputs):
                    drv.memcpy_htod(addresses[spec.id], o.ctypes.data, spec.bytes)
            result = None
            if body is None:
                self._launch_all(drv, ordinal, None, addresses)
            else:
                result = body(drv, ordinal, None, addresses)
            drv.synchronize(None)
            for spec, o in zip(self.spec.outputs, outputs):
                drv.memcpy_dtoh(o.ctypes.data, addresses[spec.id], spec.bytes)
            return result
        finally:
            for ptr in allocated:
                try:
                    drv.mem_free(ptr)
                except KGraphError:
                    pass  # keep the original error; the context may be broken

    def _call_numpy(self, inputs, body=None):
        import numpy as np
        outs = [np.empty(s.shape, dtype=numpy_dtype(s.dtype))
                for s in self.spec.outputs]
        result = self._execute_numpy(inputs, outs, copy_outputs_in=False,
                                     body=body)
        return result if body is not None else outs

    def _run_numpy(self, inputs, outputs):
        self._execute_numpy(inputs, outputs, copy_outputs_in=True)

    # --- CUDA graphs -----------------------------------------------------------------------

    def capture(self, *inputs, outputs=None, static_inputs: bool = False):
        """Record this function's launches into a CUDA graph once; returns a
        :class:`CudaGraph` that replays them on fixed device buffers.

        The graph owns device buffers for the inputs, outputs and
        intermediates (parameters are the Program's); ``inputs`` (torch
        tensors or numpy arrays, as for a call) are copied into its input
        buffers. With ``static_inputs=True`` the inputs must be CUDA tensors
        (contiguous, 16-byte aligned) and are themselves the graph's input
        buffers: write new data into them and call ``graph.replay()``.
        ``outputs`` (CUDA tensors) are used as the output buffers instead of
        fresh ones. See docs/runtime.md, "CUDA graphs".
        """
        self._check_inputs(inputs)
        if outputs is not None:
            outputs = list(outputs)
            self._check_counts(inputs, outputs)
            for i, (spec, o) in enumerate(zip(self.spec.outputs, outputs)):
                _check_array(spec, o, "output", i, self.spec)
                _check_output_layout(o, "output", i)
                if not (_is_torch_tensor(o) and o.is_cuda):
                    raise LayoutError(f"output {i}: a CUDA graph writes into "
                                      f"CUDA tensors, got "
                                      f"{'a CPU tensor' if _is_torch_tensor(o) else type(o).__name__}")
        if static_inputs:
            for i, x in enumerate(inputs):
                if not (_is_torch_tensor(x) and x.is_cuda):
                    raise LayoutError(f"input {i}: static_inputs needs CUDA "
                                      f"tensors, got "
                                      f"{'a CPU tensor' if _is_torch_tensor(x) else type(x).__name__}")
                _check_output_layout(x, "input", i)
        torch_mode = any(_is_torch_tensor(x) for x in inputs) or \
            outputs is not None
        return CudaGraph(self, inputs, outputs, static_inputs, torch_mode)

    # --- profile ------------------------------------------------------------------------------

    def profile(self, *inputs, repeat: int = 20, warmup: int = 2,
                print: bool = True, file=None, peaks=None):
        """Time every kernel with CUDA events over ``repeat`` runs (after
        ``warmup`` untimed ones) and return a :class:`kgraph.profile.Profile`
        (one row per kernel: its ops and their source locations, median time,
        share of the total, achieved TFLOP/s and GB/s from the plan's
        ``flops``/``bytes``, and the fraction of the device's roofline).
        Prints the table unless ``print`` is False (to ``file``, default
        stdout). ``peaks`` (a :class:`kgraph.profile.DevicePeaks`) overrides
        the device table."""
        from . import profile as _profile
        if repeat < 1 or warmup < 0:
            raise ValueError(f"profile needs repeat >= 1 and warmup >= 0, got "
                             f"repeat={repeat}, warmup={warmup}")
        self._check_inputs(inputs)

        def body(drv, ordinal, stream, addresses):
            launches = self._prepare_launches(drv, ordinal, stream, addresses)
            for _ in range(warmup):
                self._launch(drv, launches, stream)
            n = len(launches)
            events = []
            try:
                for _ in range(repeat):
                    evs = []
                    for _ in range(n + 1):
                        evs.append(drv.event_create())
                    events.append(evs)
                for evs in events:
                    for (k, fn, params), ev in zip(launches, evs):
                        drv.event_record(ev, stream)
                        drv.launch(fn, k.grid, k.block, k.shared_bytes, stream,
                                   params.array, name=k.name)
                    drv.event_record(evs[n], stream)
                drv.event_synchronize(events[-1][n])
                times = [[drv.event_elapsed_ms(evs[i], evs[i + 1]) * 1e3
                          for evs in events] for i in range(n)]
            finally:
                for evs in events:
                    for ev in evs:
                        try:
                            drv.event_destroy(ev)
                        except KGraphError:
                            pass
            name = drv.device_name(ordinal)
            try:
                cc = drv.compute_capability(ordinal)
            except KGraphError:
                cc = None
            return times, name, cc

        if any(_is_torch_tensor(x) for x in inputs):
            times, name, cc = self._call_torch(inputs, body=body)
        else:
            times, name, cc = self._call_numpy(inputs, body=body)
        dev_peaks = peaks if peaks is not None else \
            _profile.lookup_device_peaks(name, cc)
        result = _profile.Profile.from_times(
            self.spec, times, device=name, peaks=dev_peaks, repeat=repeat)
        if print:
            import builtins
            builtins.print(result.table(), file=file if file is not None
                           else sys.stdout)
        return result


class CudaGraph:
    """A Program's launches captured once into a CUDA graph, replayed on
    fixed device buffers (made by :meth:`Program.capture`).

    ``graph(*inputs)`` copies ``inputs`` into the graph's input buffers,
    replays and returns the outputs: for torch, the graph's own output tensors
    (the same tensors every call, overwritten by the next replay: clone them
    to keep a result) or CPU copies when the inputs were CPU tensors; for
    numpy, fresh arrays. ``graph.replay()`` replays on whatever the input
    buffers (``graph.inputs``) hold. Torch graphs replay on torch's current
    stream without synchronizing; numpy graphs on the null stream, waiting for
    the result. ``graph.close()`` (or leaving a ``with`` block) frees the
    graph and its buffers.
    """

    def __init__(self, program, inputs, outputs, static_inputs, torch_mode):
        self.program = program
        spec = program.spec
        self._torch = torch_mode
        self._static_inputs = static_inputs
        self._closed = False
        self._exec = self._graph = self._stream = None
        self._owned = []          # device allocations freed by close()
        self._keep = []           # torch tensors the graph's launches use
        self._cpu_results = False
        drv = program._driver()
        self._drv = drv
        addresses = {}
        try:
            if torch_mode:
                import torch
                device = program._torch_device(
                    list(inputs) + list(outputs or []))
                self._device = device
                ordinal = device.index
                drv.set_device(ordinal)
                self._cpu_results = all(
                    not (_is_torch_tensor(x) and x.is_cuda) for x in inputs)
                if static_inputs:
                    ins = list(inputs)
                else:
                    ins = []
                    for s, x in zip(spec.inputs, inputs):
                        t = torch.empty(s.shape, dtype=torch_dtype(s.dtype),
                                        device=device)
                        t.copy_(x if _is_torch_tensor(x)
                                else torch.from_numpy(x))
                        ins.append(t)
                outs = list(outputs) if outputs is not None else [
                    torch.empty(s.shape, dtype=torch_dtype(s.dtype),
                                device=device) for s in spec.outputs]
                self.inputs, self.outputs = ins, outs
                for s, t in zip(spec.inputs, ins):
                    addresses[s.id] = t.data_ptr()
                for s, t in zip(spec.outputs, outs):
                    addresses[s.id] = t.data_ptr()
                for s in spec.intermediates:
                    t = torch.empty(max(s.bytes, 1), dtype=torch.uint8,
                                    device=device)
                    self._keep.append(t)
                    addresses[s.id] = t.data_ptr()
                # The copies above run on torch's stream; capture records
                # nothing of them, replays are ordered after them.
            else:
                import numpy as np
                ordinal = program._ordinal()
                self._device = ordinal
                drv.set_device(ordinal)
                self.inputs = self.outputs = None
                for s in spec.buffers:
                    if s.kind in ("parameter", "derived", "constant"):
                        continue
                    ptr = drv.mem_alloc(s.bytes)
                    self._owned.append(ptr)
                    addresses[s.id] = ptr
                for s, x in zip(spec.inputs, inputs):
                    x = np.ascontiguousarray(x)
                    drv.memcpy_htod(addresses[s.id], x.ctypes.data, s.bytes)
            self._addresses = addresses
            addresses.update(program._parameter_addresses(drv, ordinal))
            stream = drv.stream_create()
            self._stream = stream
            launches = program._prepare_launches(drv, ordinal, stream,
                                                 addresses, owned=self._owned)
            # Tensor maps and inputs were copied with synchronous calls on the
            # null stream; finish them before the graph can run.
            drv.synchronize(None)
            drv.begin_capture(stream)
            try:
                Program._launch(drv, launches, stream)
            finally:
                graph = drv.end_capture(stream)
                self._graph = graph
            self._exec = drv.graph_instantiate(graph)
            #: Kernels the graph launches per replay.
            self.num_kernels = len(launches)
        except BaseException:
            self.close()
            raise

    def _replay_stream(self):
        if self._torch:
            import torch
            return torch.cuda.current_stream(self._device).cuda_stream
        return None

    def replay(self):
        """Launch the captured kernels once on the current buffers."""
        if self._closed:
            raise KGraphError("the CUDA graph was closed")
        drv = self._drv
        drv.set_device(self._device.index if self._torch else self._device)
        drv.graph_launch(self._exec, self._replay_stream())
        if not self._torch:
            drv.synchronize(None)

    def __call__(self, *inputs):
        if self._closed:
            raise KGraphError("the CUDA graph was closed")
        prog = self.program
        prog._check_inputs(inputs)
        spec = prog.spec
        if self._torch:
            import torch
            for buf, x in zip(self.inputs, inputs):
                if x is buf:
                    continue
                buf.copy_(x if _is_torch_tensor(x) else torch.from_numpy(x))
            self.replay()
            outs = self.outputs
            if all(not (_is_torch_tensor(x) and x.is_cuda) for x in inputs):
                outs = [o.cpu() for o in outs]
        else:
            import numpy as np
            if any(_is_torch_tensor(x) for x in inputs):
                raise DTypeError("this CUDA graph was captured on numpy arrays: "
                                 "pass numpy arrays")
            drv = self._drv
            drv.set_device(self._device)
            for s, x in zip(spec.inputs, inputs):
                x = np.ascontiguousarray(x)
                drv.memcpy_htod(self._addresses[s.id], x.ctypes.data, s.bytes)
            drv.synchronize(None)
            self.replay()
            outs = []
            for s in spec.outputs:
                o = np.empty(s.shape, dtype=numpy_dtype(s.dtype))
                drv.memcpy_dtoh(o.ctypes.data, self._addresses[s.id], s.bytes)
                outs.append(o)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def close(self):
        """Free the graph, its stream and its device buffers (idempotent)."""
        if self._closed:
            return
        self._closed = True
        drv = self._drv
        for fn, h in ((drv.graph_exec_destroy, self._exec),
                      (drv.graph_destroy, self._graph)):
            if h is not None:
                try:
                    fn(h)
                except KGraphError:
                    pass
        if self._stream is not None:
            try:
                # Replays on torch's stream may still read the buffers.
                drv.synchronize(self._replay_stream() if self._torch else None)
                drv.stream_destroy(self._stream)
            except KGraphError:
                pass
        for ptr in self._owned:
            try:
                drv.mem_free(ptr)
            except KGraphError:
                pass
        self._owned = []
        self._keep = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the driver may be gone
            pass

    def __repr__(self):
        state = "closed" if self._closed else f"{self.num_kernels} kernel(s)"
        return f"<kgraph.CudaGraph of '{self.program.name}', {state}>"


def _open_weights(plan: Plan):
    """The plan's weights file, every parameter of every function checked
    against it (dtype, shape, bytes); None when no function has any."""
    if not any(f.parameters for f in plan.functions):
        return None
    weights = WeightsFile(plan.weights_path)
    for f in plan.functions:
        for p in f.parameters:
            weights.check(p, f.name)
    return weights


def load(plan_path, device: int = None, libcuda: str = None,
         function: str = None) -> Program:
    """Load the launch plan at ``plan_path`` (and the PTX and weights file it
    names) and return its function ``function`` (the first one when None) as
    a :class:`Program`; ``program.function(name)`` gives the others.

    ``device`` is the CUDA ordinal used for numpy arrays and host tensors
    (default: torch's current device, else 0); CUDA tensors always run on their
    own device. ``libcuda`` overrides the driver library (default
    ``$KGRAPH_LIBCUDA`` or libcuda.so.1). No GPU is touched until the first
    call or :meth:`Program.prepare`, except that a bundle (a plan with a
    variant per target, ``kgraph-opt --tile=sm_80,sm_90a``) asks the driver
    for the device's compute capability to pick its variant
    (:meth:`kgraph.Plan.select_variant`). Every parameter is checked against
    the weights file here (a :class:`kgraph.WeightsError` names the tensor).
    """
    plan = load_plan(plan_path)
    if plan.variants:
        ordinal = device
        if ordinal is None:
            torch = _torch()
            ordinal = (torch.cuda.current_device()
                       if torch is not None and torch.cuda.is_available() else 0)
        major, minor = _driver.get_driver(libcuda).compute_capability(ordinal)
        plan = plan.select_variant(major, minor)
    plan.function_plan(function)  # a clear PlanError for a wrong name
    try:
        with open(plan.ptx_path, "rb") as f:
            ptx = f.read()
    except OSError as e:
        raise PlanError(f"{plan.path}: cannot read PTX file {plan.ptx_path}: "
                        f"{e.strerror}") from e
    return Program(plan, ptx, device=device, libcuda=libcuda,
                   function=function)
