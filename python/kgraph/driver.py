"""A thin ctypes binding of the CUDA driver API (libcuda.so.1).

Only what the runtime needs: init, primary contexts (shared with torch),
modules, launches, memory, streams, CUDA graphs (stream capture) and events. Every call's CUresult
is checked; a failure raises :class:`CudaError` with the cuGetErrorName text.
"""

import ctypes
import os
import threading

from .dtypes import DTYPES
from .errors import CudaError, KGraphError, NoGPUError

CUDA_SUCCESS = 0
#: CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
#: Dynamic shared memory a kernel may use without opting in.
DEFAULT_DYNAMIC_SMEM_LIMIT = 48 * 1024

DEFAULT_LIBCUDA = "libcuda.so.1"

#: cuStreamCreate flag: no implicit synchronization with the null stream.
CU_STREAM_NON_BLOCKING = 1
#: cuStreamBeginCapture mode: only this thread's unsafe calls are refused
#: while it captures (other threads may keep using CUDA).
CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
#: cuDeviceGetAttribute: compute capability major / minor.
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38

#: Bytes of a CUtensorMap (cuda.h: 64-byte aligned, 16 x u64).
TENSOR_MAP_BYTES = 128
#: cuda.h enums of cuTensorMapEncodeTiled / Im2col, by the plan's names.
TENSOR_MAP_DTYPE = {name: d.tensor_map for name, d in DTYPES.items()
                    if d.tensor_map is not None}  # CU_TENSOR_MAP_DATA_TYPE_*
TENSOR_MAP_INTERLEAVE = {"none": 0}                  # ..._INTERLEAVE_NONE
TENSOR_MAP_SWIZZLE = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
TENSOR_MAP_L2_PROMOTION = {"none": 0, "64B": 1, "128B": 2, "256B": 3}
#: CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: out-of-bounds elements read as zero.
TENSOR_MAP_OOB_FILL = {"zero": 0}

_c = ctypes
_P = _c.c_void_p
_PP = _c.POINTER(_c.c_void_p)

# name -> (symbol in libcuda, argtypes)
_SIGNATURES = {
    "cuInit": ("cuInit", [_c.c_uint]),
    "cuGetErrorName": ("cuGetErrorName", [_c.c_int, _c.POINTER(_c.c_char_p)]),
    "cuGetErrorString": ("cuGetErrorString", [_c.c_int, _c.POINTER(_c.c_char_p)]),
    "cuDeviceGetCount": ("cuDeviceGetCount", [_c.POINTER(_c.c_int)]),
    "cuDeviceGet": ("cuDeviceGet", [_c.POINTER(_c.c_int), _c.c_int]),
    "cuDeviceGetName": ("cuDeviceGetName", [_c.c_char_p, _c.c_int, _c.c_int]),
    "cuDeviceGetAttribute": ("cuDeviceGetAttribute",
                             [_c.POINTER(_c.c_int), _c.c_int, _c.c_int]),
    "cuDevicePrimaryCtxRetain": ("cuDevicePrimaryCtxRetain", [_PP, _c.c_int]),
    "cuCtxSetCurrent": ("cuCtxSetCurrent", [_P]),
    "cuModuleLoadData": ("cuModuleLoadData", [_PP, _c.c_char_p]),
    "cuModuleGetFunction": ("cuModuleGetFunction", [_PP, _P, _c.c_char_p]),
    "cuFuncSetAttribute": ("cuFuncSetAttribute", [_P, _c.c_int, _c.c_int]),
    "cuLaunchKernel": ("cuLaunchKernel", [
        _P, _c.c_uint, _c.c_uint, _c.c_uint, _c.c_uint, _c.c_uint, _c.c_uint,
        _c.c_uint, _P, _PP, _PP]),
    "cuMemAlloc": ("cuMemAlloc_v2", [_c.POINTER(_c.c_uint64), _c.c_size_t]),
    "cuMemFree": ("cuMemFree_v2", [_c.c_uint64]),
    "cuMemcpyHtoD": ("cuMemcpyHtoD_v2", [_c.c_uint64, _P, _c.c_size_t]),
    "cuMemcpyDtoH": ("cuMemcpyDtoH_v2", [_P, _c.c_uint64, _c.c_size_t]),
    "cuMemsetD8": ("cuMemsetD8_v2", [_c.c_uint64, _c.c_ubyte, _c.c_size_t]),
    "cuStreamSynchronize": ("cuStreamSynchronize", [_P]),
    "cuStreamCreate": ("cuStreamCreate", [_PP, _c.c_uint]),
    "cuStreamDestroy": ("cuStreamDestroy_v2", [_P]),
    "cuStreamBeginCapture": ("cuStreamBeginCapture_v2", [_P, _c.c_int]),
    "cuStreamEndCapture": ("cuStreamEndCapture", [_P, _PP]),
    "cuGraphInstantiateWithFlags": ("cuGraphInstantiateWithFlags",
                                    [_PP, _P, _c.c_ulonglong]),
    "cuGraphLaunch": ("cuGraphLaunch", [_P, _P]),
    "cuGraphExecDestroy": ("cuGraphExecDestroy", [_P]),
    "cuGraphDestroy": ("cuGraphDestroy", [_P]),
    "cuEventCreate": ("cuEventCreate", [_PP, _c.c_uint]),
    "cuEventRecord": ("cuEventRecord", [_P, _P]),
    "cuEventSynchronize": ("cuEventSynchronize", [_P]),
    "cuEventElapsedTime": ("cuEventElapsedTime",
                           [_c.POINTER(_c.c_float), _P, _P]),
    "cuEventDestroy": ("cuEventDestroy_v2", [_P]),
    "cuTensorMapEncodeTiled": ("cuTensorMapEncodeTiled", [
        _P, _c.c_int, _c.c_uint32, _P, _c.POINTER(_c.c_uint64),
        _c.POINTER(_c.c_uint64), _c.POINTER(_c.c_uint32),
        _c.POINTER(_c.c_uint32), _c.c_int, _c.c_int, _c.c_int, _c.c_int]),
    # (map, dtype, rank, address, dims, strides, lower corner, upper corner,
    #  channelsPerPixel, pixelsPerColumn, element strides, interleave,
    #  swizzle, L2 promotion, OOB fill)
    "cuTensorMapEncodeIm2col": ("cuTensorMapEncodeIm2col", [
        _P, _c.c_int, _c.c_uint32, _P, _c.POINTER(_c.c_uint64),
        _c.POINTER(_c.c_uint64), _c.POINTER(_c.c_int), _c.POINTER(_c.c_int),
        _c.c_uint32, _c.c_uint32, _c.POINTER(_c.c_uint32), _c.c_int,
        _c.c_int, _c.c_int, _c.c_int]),
}


class Driver:
    """The loaded driver library, initialized (cuInit) and with device count > 0.

    Construct it through :func:`get_driver`, which caches one instance per
    library name. Raises :class:`NoGPUError` when the library is missing or no
    device can be used.
    """

    def __init__(self, libname: str = DEFAULT_LIBCUDA):
        self.libname = libname
        try:
            lib = ctypes.CDLL(libname)
        except OSError as e:
            raise NoGPUError(f"no CUDA GPU available: cannot load {libname} "
                             f"(is an NVIDIA driver installed?): {e}") from e
        self._lib = lib
        self._fns = {}
        for name, (symbol, argtypes) in _SIGNATURES.items():
            try:
                fn = getattr(lib, symbol)
            except AttributeError as e:
                raise NoGPUError(f"no CUDA GPU available: {libname} has no "
                                 f"symbol {symbol}") from e
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int
            self._fns[name] = fn
        rc = self._fns["cuInit"](0)
        if rc != CUDA_SUCCESS:
            raise NoGPUError(f"no CUDA GPU available: cuInit failed: "
                             f"{self.error_name(rc)} ({rc})")
        count = ctypes.c_int(0)
        self.check("cuDeviceGetCount", ctypes.byref(count))
        if count.value <= 0:
            raise NoGPUError("no CUDA GPU available: cuDeviceGetCount "
                             "returned 0 devices")
        self.device_count = count.value
        self._contexts = {}
        self._lock = threading.Lock()

    def error_name(self, rc: int) -> str:
        name = ctypes.c_char_p()
        if self._fns["cuGetErrorName"](rc, ctypes.byref(name)) != CUDA_SUCCESS \
                or not name.value:
            return "CUDA_ERROR_UNKNOWN_CODE"
        return name.value.decode()

    def error_string(self, rc: int) -> str:
        text = ctypes.c_char_p()
        if self._fns["cuGetErrorString"](rc, ctypes.byref(text)) != CUDA_SUCCESS \
                or not text.value:
            return ""
        return text.value.decode()

    def check(self, name: str, *args, detail: str = ""):
        """Call driver function ``name``; raise CudaError unless it succeeds."""
        rc = self._fns[name](*args)
        if rc != CUDA_SUCCESS:
            self._raise(name, rc, detail)

    def _raise(self, name: str, rc: int, detail: str = ""):
        extra = self.error_string(rc)
        if detail:
            extra = f"{extra}; {detail}" if extra else detail
        raise CudaError(name, rc, self.error_name(rc), extra)

    # --- contexts -------------------------------------------------------------

    def set_device(self, ordinal: int):
        """Make ``ordinal``'s primary context current (the one torch uses)."""
        if not 0 <= ordinal < self.device_count:
            raise NoGPUError(f"no CUDA GPU available: device {ordinal} requested "
                             f"but only {self.device_count} present")
        with self._lock:
            ctx = self._contexts.get(ordinal)
            if ctx is None:
                dev = ctypes.c_int()
                self.check("cuDeviceGet", ctypes.byref(dev), ordinal)
                ctx = ctypes.c_void_p()
                self.check("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
                self._contexts[ordinal] = ctx
        self.check("cuCtxSetCurrent", ctx)

    def device_name(self, ordinal: int) -> str:
        dev = ctypes.c_int()
        self.check("cuDeviceGet", ctypes.byref(dev), ordinal)
        buf = ctypes.create_string_buffer(256)
        self.check("cuDeviceGetName", buf, 256, dev)
        return buf.value.decode()

    def compute_capability(self, ordinal: int):
        """(major, minor) of device ``ordinal``."""
        dev = ctypes.c_int()
        self.check("cuDeviceGet", ctypes.byref(dev), ordinal)
        out = []
        for attr in (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                     CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR):
            v = ctypes.c_int()
            self.check("cuDeviceGetAttribute", ctypes.byref(v), attr, dev)
            out.append(v.value)
        return tuple(out)

    def l2_cache_bytes(self, ordinal: int):
        """The L2 cache size of device ``ordinal`` in bytes, None if the
        driver does not say."""
        dev = ctypes.c_int()
        v = ctypes.c_int()
        try:
            self.check("cuDeviceGet", ctypes.byref(dev), ordinal)
            self.check("cuDeviceGetAttribute", ctypes.byref(v),
                       CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev)
        except KGraphError:
            return None
        return v.value or None

    # --- modules and launches -------------------------------------------------

    def load_module(self, image: bytes, what: str = "PTX module"):
        """Load a NUL-terminated PTX image into the current context."""
        if not image.endswith(b"\0"):
            image += b"\0"
        module = ctypes.c_void_p()
        self.check("cuModuleLoadData", ctypes.byref(module), image,
                   detail=f"while loading {what}")
        return module

    def get_function(self, module, name: str):
        fn = ctypes.c_void_p()
        self.check("cuModuleGetFunction", ctypes.byref(fn), module,
                   name.encode(), detail=f"kernel '{name}'")
        return fn

    def set_max_dynamic_smem(self, function, nbytes: int):
        self.check("cuFuncSetAttribute", function,
                   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes)

    def launch(self, function, grid, block, shared_bytes, stream, params,
               name: str = ""):
        """Launch with ``params``: a ctypes ``void*`` array, one per parameter."""
        rc = self._fns["cuLaunchKernel"](function, grid[0], grid[1], grid[2],
                                         block[0], block[1], block[2], shared_bytes,
                                         stream, params, None)
        if rc != CUDA_SUCCESS:  # the message is built only on failure
            self._raise("cuLaunchKernel", rc, f"kernel '{name}'" if name else "")

    def synchronize(self, stream):
        self.check("cuStreamSynchronize", stream)

    # --- streams, CUDA graphs and events --------------------------------------

    def stream_create(self):
        """A new non-blocking stream of the current context."""
        stream = ctypes.c_void_p()
        self.check("cuStreamCreate", ctypes.byref(stream),
                   CU_STREAM_NON_BLOCKING)
        return stream

    def stream_destroy(self, stream):
        self.check("cuStreamDestroy", stream)

    def begin_capture(self, stream):
        """Start recording the work queued on ``stream`` (not the null
        stream) into a CUDA graph instead of running it."""
        self.check("cuStreamBeginCapture", stream,
                   CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)

    def end_capture(self, stream):
        """Stop recording on ``stream``; returns the captured CUgraph."""
        graph = ctypes.c_void_p()
        self.check("cuStreamEndCapture", stream, ctypes.byref(graph))
        return graph

    def graph_instantiate(self, graph):
        """The executable CUgraphExec of ``graph``."""
        exec_ = ctypes.c_void_p()
        self.check("cuGraphInstantiateWithFlags", ctypes.byref(exec_), graph, 0)
        return exec_

    def graph_launch(self, exec_, stream):
        self.check("cuGraphLaunch", exec_, stream)

    def graph_exec_destroy(self, exec_):
        self.check("cuGraphExecDestroy", exec_)

    def graph_destroy(self, graph):
        self.check("cuGraphDestroy", graph)

    def event_create(self):
        event = ctypes.c_void_p()
        self.check("cuEventCreate", ctypes.byref(event), 0)  # CU_EVENT_DEFAULT
        return event

    def event_record(self, event, stream):
        self.check("cuEventRecord", event, stream)

    def event_synchronize(self, event):
        self.check("cuEventSynchronize", event)

    def event_elapsed_ms(self, start, end) -> float:
        ms = ctypes.c_float()
        self.check("cuEventElapsedTime", ctypes.byref(ms), start, end)
        return ms.value

    def event_destroy(self, event):
        self.check("cuEventDestroy", event)

    # --- memory ---------------------------------------------------------------

    def mem_alloc(self, nbytes: int) -> int:
        ptr = ctypes.c_uint64()
        # cuMemAlloc rejects 0 bytes; a zero-size buffer still needs an address.
        self.check("cuMemAlloc", ctypes.byref(ptr), max(nbytes, 1))
        return ptr.value

    def mem_free(self, ptr: int):
        self.check("cuMemFree", ptr)

    def memcpy_htod(self, dst: int, src_host_ptr: int, nbytes: int):
        if nbytes:
            self.check("cuMemcpyHtoD", dst, src_host_ptr, nbytes)

    def memcpy_dtoh(self, dst_host_ptr: int, src: int, nbytes: int):
        if nbytes:
            self.check("cuMemcpyDtoH", dst_host_ptr, src, nbytes)

    def memset_d8(self, dst: int, value: int, nbytes: int):
        if nbytes:
            self.check("cuMemsetD8", dst, value, nbytes)

    def encode_tensor_map(self, spec, address: int) -> bytes:
        """The 128-byte CUtensorMap of ``spec`` (a plan TensorMapSpec) over
        the device buffer at ``address``: by cuTensorMapEncodeTiled, or by
        cuTensorMapEncodeIm2col for an im2col map."""
        rank = len(spec.dims)
        out = (_c.c_uint64 * (TENSOR_MAP_BYTES // 8))()
        dims = (_c.c_uint64 * rank)(*spec.dims)
        strides = (_c.c_uint64 * max(rank - 1, 1))(*spec.strides)
        estrides = (_c.c_uint32 * rank)(*spec.element_strides)
        enums = (TENSOR_MAP_INTERLEAVE[spec.interleave],
                 TENSOR_MAP_SWIZZLE[spec.swizzle],
                 TENSOR_MAP_L2_PROMOTION[spec.l2_promotion],
                 TENSOR_MAP_OOB_FILL[spec.oob_fill])
        if spec.mode == "im2col":
            corners = max(rank - 2, 1)
            lower = (_c.c_int * corners)(*spec.lower_corner)
            upper = (_c.c_int * corners)(*spec.upper_corner)
            self.check("cuTensorMapEncodeIm2col", out,
                       TENSOR_MAP_DTYPE[spec.dtype], rank, _c.c_void_p(address),
                       dims, strides, lower, upper, spec.channels_per_pixel,
                       spec.pixels_per_column, estrides, *enums,
                       detail=f" (im2col tensor map of buffer {spec.buffer}: "
                              f"dims {list(spec.dims)}, corners "
                              f"{list(spec.lower_corner)} to "
                              f"{list(spec.upper_corner)}, "
                              f"{spec.channels_per_pixel} channels x "
                              f"{spec.pixels_per_column} pixels)")
            return bytes(out)
        box = (_c.c_uint32 * rank)(*spec.box)
        self.check("cuTensorMapEncodeTiled", out, TENSOR_MAP_DTYPE[spec.dtype],
                   rank, _c.c_void_p(address), dims, strides, box, estrides,
                   *enums,
                   detail=f" (tensor map of buffer {spec.buffer}: dims "
                          f"{list(spec.dims)}, box {list(spec.box)})")
        return bytes(out)


_drivers = {}
_drivers_lock = threading.Lock()


def get_driver(libname: str = None) -> Driver:
    """The process-wide :class:`Driver` for ``libname`` (default: the
    ``KGRAPH_LIBCUDA`` environment variable, else libcuda.so.1)."""
    libname = libname or os.environ.get("KGRAPH_LIBCUDA") or DEFAULT_LIBCUDA
    with _drivers_lock:
        drv = _drivers.get(libname)
        if drv is None:
            drv = Driver(libname)
            _drivers[libname] = drv
        return drv
