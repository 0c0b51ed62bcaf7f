"""Program argument checking, kernel parameter packing, the driver binding
(against a fake libcuda) and the no-GPU error. No GPU needed."""

import ctypes
import json
import struct

import numpy as np
import pytest

import kgraph
from kgraph import (ArgumentCountError, CudaError, DTypeError, LayoutError,
                    NoGPUError, ShapeError)

try:
    import torch
except ImportError:  # torch is optional for these tests
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


@pytest.fixture
def prog(plan_dict, write_plan):
    return kgraph.load(write_plan(plan_dict))


def f32(*v):
    return np.array(v, dtype=np.float32)


A = f32(1, 2, 3, 4, 5)
B = f32(10, 20, 30, 40, 50)

# --- argument checking: raised before any GPU is touched ---------------------------


def test_wrong_number_of_inputs(prog):
    with pytest.raises(ArgumentCountError,
                       match=r"'main' takes 2 input\(s\) \(f32\[5\], f32\[5\]\), got 1"):
        prog(A)
    with pytest.raises(ArgumentCountError, match="got 3"):
        prog(A, B, B)


def test_wrong_number_of_outputs(prog):
    with pytest.raises(ArgumentCountError, match=r"has 1 output\(s\), got 2 preallocated"):
        prog.run([A, B], [A.copy(), A.copy()])


def test_wrong_shape(prog):
    with pytest.raises(ShapeError, match=r"input 1 of 'main': expected shape \[5\], got \[1, 5\]"):
        prog(A, B.reshape(1, 5))
    with pytest.raises(ShapeError, match=r"output 0 of 'main': expected shape \[5\], got \[6\]"):
        prog.run([A, B], [np.zeros(6, np.float32)])


def test_wrong_dtype_numpy(prog):
    with pytest.raises(DTypeError, match=r"input 0 of 'main': expected dtype f32 "
                                         r"\(numpy.float32\), got numpy.float64"):
        prog(A.astype(np.float64), B)


def test_not_an_array(prog):
    with pytest.raises(DTypeError, match="expected a torch.Tensor or numpy.ndarray, got list"):
        prog([1, 2, 3, 4, 5], B)


def test_numpy_for_bf16(plan_dict, write_plan):
    for b in plan_dict["buffers"]:
        b["dtype"], b["bytes"] = "bf16", 10
    prog = kgraph.load(write_plan(plan_dict))
    with pytest.raises(DTypeError, match=r"input 0 of 'main': is bf16, which numpy "
                                         r"cannot hold \(no bfloat16\): pass a torch tensor"):
        prog(A.astype(np.float16), B.astype(np.float16))


def test_non_contiguous_numpy_output(prog):
    out = np.zeros(10, np.float32)[::2]
    with pytest.raises(LayoutError, match="output 0: preallocated output is not C-contiguous"):
        prog.run([A, B], [out])


def test_read_only_numpy_output(prog):
    out = np.zeros(5, np.float32)
    out.flags.writeable = False
    with pytest.raises(LayoutError, match="read-only"):
        prog.run([A, B], [out])


@needs_torch
def test_wrong_dtype_torch(prog):
    a, b = torch.from_numpy(A), torch.from_numpy(B)
    with pytest.raises(DTypeError, match=r"input 1 of 'main': expected dtype f32 "
                                         r"\(torch.float32\), got torch.bfloat16"):
        prog(a, b.bfloat16())


@needs_torch
def test_wrong_shape_torch(prog):
    with pytest.raises(ShapeError, match=r"expected shape \[5\], got \[5, 1\]"):
        prog(torch.zeros(5, 1), torch.zeros(5))


@needs_torch
def test_non_contiguous_torch_output(prog):
    out = torch.zeros(10)[::2]
    with pytest.raises(LayoutError, match=r"output 0: preallocated output is not "
                                          r"contiguous \(stride \[2\]\)"):
        prog.run([torch.zeros(5), torch.zeros(5)], [out])


@needs_torch
def test_torch_dtype_names():
    assert [kgraph.torch_dtype(n) for n in ("f32", "f16", "bf16", "i8", "i32", "i1")] == [
        torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.int32, torch.bool]


def test_numpy_dtype_names():
    assert [kgraph.numpy_dtype(n) for n in ("f32", "f16", "i8", "i32", "i1")] == [
        np.float32, np.float16, np.int8, np.int32, np.bool_]
    with pytest.raises(DTypeError, match="numpy has no bf16 dtype"):
        kgraph.numpy_dtype("bf16")

# --- kernel parameter packing ---------------------------------------------------------


def test_pack_buffer_and_scalar_params(prog):
    addrs = {0: 0x7F0000001000, 1: 0x7F0000002000, 2: 0x7F00DEAD0000, 3: 0x10}
    neg, add = prog.plan.kernels
    p = kgraph.pack_kernel_params(neg, addrs)
    assert p.raw_bytes() == struct.pack("<QQqf", 0x7F0000001000, 0x7F00DEAD0000, 5, 1.0)
    p = kgraph.pack_kernel_params(add, addrs)
    assert p.raw_bytes() == struct.pack("<QQQi", 0x7F00DEAD0000, 0x7F0000002000, 0x10, 5)
    # kernelParams[i] points at the i-th value, as cuLaunchKernel reads it.
    assert len(p.array) == 4
    for i, v in enumerate(p.values):
        assert p.array[i] == ctypes.addressof(v)
    assert ctypes.c_uint64.from_address(p.array[2]).value == 0x10
    assert ctypes.c_int32.from_address(p.array[3]).value == 5


def test_pack_one_u64_per_buffer(prog):
    k = prog.plan.kernels[1]
    p = kgraph.pack_kernel_params(k, {1: 2**64 - 16, 2: 0, 3: 16})
    assert len(p.raw_bytes()) == 8 * 3 + 4
    assert struct.unpack_from("<Q", p.raw_bytes(), 8)[0] == 2**64 - 16


def test_pack_view_byte_offset(plan_dict, write_plan):
    """A buffer argument with a "byte_offset" (a view) is the buffer's
    address plus the offset."""
    plan_dict["kernels"][1]["args"][1]["byte_offset"] = 16
    k = kgraph.load(write_plan(plan_dict)).plan.kernels[1]
    p = kgraph.pack_kernel_params(k, {1: 0x7F0000002000, 2: 0x100, 3: 0x200})
    assert p.raw_bytes() == struct.pack("<QQQi", 0x100, 0x7F0000002010, 0x200, 5)


def test_pack_missing_address(prog):
    with pytest.raises(kgraph.KGraphError, match="kernel 'fake_add_f32' argument 1: "
                                                 "no address for buffer 1"):
        kgraph.pack_kernel_params(prog.plan.kernels[1], {2: 1, 3: 2})


def test_pack_negative_and_unsigned_scalars(plan_dict):
    args = plan_dict["kernels"][0]["args"]
    args[2]["value"] = -7
    args[3]["value"] = -2.5
    plan = kgraph.parse_plan(plan_dict, check_ptx=False)
    p = kgraph.pack_kernel_params(plan.kernels[0], {0: 1, 2: 2})
    assert p.raw_bytes()[16:] == struct.pack("<qf", -7, -2.5)

# --- no GPU -----------------------------------------------------------------------------


def _has_libcuda():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.mark.skipif(_has_libcuda(), reason="this machine has libcuda.so.1")
def test_no_libcuda(prog, monkeypatch):
    monkeypatch.delenv("KGRAPH_LIBCUDA", raising=False)
    with pytest.raises(NoGPUError, match=r"^no CUDA GPU available: cannot load libcuda.so.1"):
        prog(A, B)
    with pytest.raises(NoGPUError, match="no CUDA GPU available"):
        prog.prepare()


def test_no_libcuda_explicit_name(plan_dict, write_plan):
    prog = kgraph.load(write_plan(plan_dict), libcuda="libkgraph-no-such-cuda.so")
    with pytest.raises(NoGPUError, match="no CUDA GPU available: cannot load "
                                         "libkgraph-no-such-cuda.so"):
        prog(A, B)

# --- the driver binding, against the fake libcuda ------------------------------------------


def test_cuinit_fails(fake_cuda, prog, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_INIT_RC", "100")
    with pytest.raises(NoGPUError, match=r"^no CUDA GPU available: cuInit failed: "
                                         r"CUDA_ERROR_NO_DEVICE \(100\)"):
        prog(A, B)


def test_zero_devices(fake_cuda, prog, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_DEVICES", "0")
    with pytest.raises(NoGPUError, match="cuDeviceGetCount returned 0 devices"):
        prog(A, B)


def test_device_out_of_range(fake_cuda, plan_dict, write_plan):
    prog = kgraph.load(write_plan(plan_dict), device=3)
    with pytest.raises(NoGPUError, match="device 3 requested but only 1 present"):
        prog(A, B)


def test_run_end_to_end_numpy(fake_cuda, prog):
    out = prog(A, B)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_array_equal(out, B - A)
    assert fake_cuda.fake_live_allocs() == 0  # inputs, intermediate, output freed
    assert fake_cuda.fake_num_launches() == 2
    neg = fake_cuda.fake_launch(0).decode()
    add = fake_cuda.fake_launch(1).decode()
    assert neg.startswith("fake_neg_f32 grid=1,1,1 block=128,1,1 smem=0 stream=0 ")
    assert neg.endswith(",5,1")
    assert add.startswith("fake_add_f32 grid=2,1,1 block=64,2,1 smem=0 stream=0 ")
    # The intermediate written by the first kernel is read by the second.
    assert neg.split("args=")[1].split(",")[1] == add.split("args=")[1].split(",")[0]


def test_launches_cached_per_addresses(fake_cuda, prog):
    """A call whose buffers sit at a recent call's addresses reuses its
    packed launches; new addresses pack new ones; results stay right."""
    import kgraph.runtime as rt
    calls = []
    orig = rt.Program._pack_launches

    def counting(self, *a, **kw):
        calls.append(1)
        return orig(self, *a, **kw)
    rt.Program._pack_launches = counting
    try:
        for _ in range(3):
            np.testing.assert_array_equal(prog(A, B), B - A)
        packed = len(calls)
        assert 1 <= packed <= 3 and len(prog._shared.launches) == packed
        # Launches always see the addresses of their own call.
        n = fake_cuda.fake_num_launches()
        for i in range(0, n, 2):
            neg = fake_cuda.fake_launch(i).decode().split("args=")[1].split(",")
            add = fake_cuda.fake_launch(i + 1).decode().split("args=")[1].split(",")
            assert neg[1] == add[0]
    finally:
        rt.Program._pack_launches = orig


def test_module_loaded_once(fake_cuda, prog):
    before = fake_cuda.fake_modules_loaded()
    prog(A, B)
    prog(A, B)
    assert fake_cuda.fake_modules_loaded() == before + 1


def test_non_contiguous_input_is_copied(fake_cuda, prog):
    a = np.arange(10, dtype=np.float32)[::2]
    np.testing.assert_array_equal(prog(a, B), B - a)


def test_run_preallocated_numpy(fake_cuda, prog):
    out = np.full(5, np.nan, np.float32)
    assert prog.run([A, B], [out]) is None
    np.testing.assert_array_equal(out, B - A)


def test_run_keeps_unwritten_output_elements(fake_cuda, plan_dict, write_plan):
    # The add writes only 3 of 5 elements: run() must leave the rest as given
    # (that is what lets the GPU tests detect unwritten elements by poisoning).
    plan_dict["kernels"][1]["args"][3]["value"] = 3
    prog = kgraph.load(write_plan(plan_dict))
    out = np.full(5, np.nan, np.float32)
    prog.run([A, B], [out])
    np.testing.assert_array_equal(out[:3], (B - A)[:3])
    assert np.isnan(out[3:]).all()


def test_large_shared_memory_raises_limit(fake_cuda, plan_dict, write_plan):
    plan_dict["kernels"][1]["shared_bytes"] = 100 * 1024
    prog = kgraph.load(write_plan(plan_dict))
    np.testing.assert_array_equal(prog(A, B), B - A)
    assert fake_cuda.fake_smem_limit(b"fake_add_f32") == 100 * 1024
    assert fake_cuda.fake_smem_limit(b"fake_neg_f32") == 48 * 1024
    assert "smem=102400" in fake_cuda.fake_launch(1).decode()


def test_any_dynamic_shared_memory_sets_limit(fake_cuda, plan_dict, write_plan):
    # Kernels carry a little static shared memory beside the dynamic part, so
    # the default limit (48 KiB minus static) can be too small at 48 KiB: the
    # runtime sets the limit for every kernel that uses dynamic memory.
    plan_dict["kernels"][1]["shared_bytes"] = 4096
    prog = kgraph.load(write_plan(plan_dict))
    np.testing.assert_array_equal(prog(A, B), B - A)
    assert fake_cuda.fake_smem_limit(b"fake_add_f32") == 4096
    assert fake_cuda.fake_smem_limit(b"fake_neg_f32") == 48 * 1024


def test_unknown_kernel_name(fake_cuda, plan_dict, write_plan):
    plan_dict["kernels"][1]["name"] = "not_in_ptx"
    prog = kgraph.load(write_plan(plan_dict))
    with pytest.raises(CudaError, match=r"cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND "
                                        r"\(500\): .*kernel 'not_in_ptx'") as e:
        prog(A, B)
    assert e.value.code == 500 and e.value.name == "CUDA_ERROR_NOT_FOUND"


def test_invalid_ptx(fake_cuda, plan_dict, write_plan):
    prog = kgraph.load(write_plan(plan_dict, ptx="garbage"))
    with pytest.raises(CudaError, match=r"cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX "
                                        r"\(218\): .*while loading .*prog.ptx"):
        prog.prepare()


def test_launch_failure_frees_memory(fake_cuda, plan_dict, write_plan):
    # The fake driver refuses to launch fake_rejected (it is in the PTX).
    plan_dict["kernels"][1]["name"] = "fake_rejected"
    plan_dict["kernels"][1]["args"] = [{"kind": "buffer", "buffer": 3}]
    prog = kgraph.load(write_plan(plan_dict))
    with pytest.raises(CudaError, match=r"cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE "
                                        r"\(1\): .*kernel 'fake_rejected'"):
        prog(A, B)
    assert fake_cuda.fake_live_allocs() == 0


def test_kernel_writing_nothing(fake_cuda, plan_dict, write_plan):
    plan_dict["kernels"][1]["name"] = "fake_nop"
    plan_dict["kernels"][1]["args"] = [{"kind": "buffer", "buffer": 3}]
    prog = kgraph.load(write_plan(plan_dict))
    out = np.full(5, 7.0, np.float32)
    prog.run([A, B], [out])
    np.testing.assert_array_equal(out, np.full(5, 7.0, np.float32))
    assert "fake_nop grid=2,1,1" in fake_cuda.fake_launch(1).decode()


def test_device_name(fake_cuda):
    drv = kgraph.driver.get_driver()
    assert drv.device_name(0) == "Fake GPU 0"
    assert drv.device_count == 1


@needs_torch
def test_torch_cpu_without_cuda(fake_cuda, prog):
    if torch.cuda.is_available():
        pytest.skip("torch has CUDA here")
    with pytest.raises(NoGPUError, match="torch.cuda.is_available"):
        prog(torch.from_numpy(A), torch.from_numpy(B))


# --- tensor maps (copy = tma kernels) ------------------------------------------------

TMA_ARG = {"kind": "tensor_maps", "maps": [
    {"buffer": 0, "dtype": "f32", "dims": [5], "strides": [], "box": [4],
     "element_strides": [1], "swizzle": "none", "interleave": "none",
     "l2_promotion": "none", "oob_fill": "zero"},
    {"buffer": 4, "dtype": "f16", "dims": [8, 5, 2], "strides": [16, 80],
     "box": [8, 4, 1], "element_strides": [1, 1, 1], "swizzle": "128B",
     "interleave": "none", "l2_promotion": "256B", "oob_fill": "zero"}]}
#: The f16 buffer the second map reads (a map stays inside its buffer).
TMA_BUFFER = {"id": 4, "kind": "intermediate", "shape": [2, 5, 8], "dtype": "f16",
              "bytes": 160}


def test_tensor_maps_encoded_and_passed(fake_cuda, plan_dict, write_plan):
    plan_dict["kernels"][1]["name"] = "fake_nop"
    plan_dict["kernels"][1]["args"] = [TMA_ARG]
    plan_dict["buffers"].append(TMA_BUFFER)
    prog = kgraph.load(write_plan(plan_dict))
    prog.run([A, B], [np.zeros(5, np.float32)])
    # cuTensorMapEncodeTiled saw exactly the plan's values and cuda.h's enums
    # (f32 7, f16 6; swizzle 128B 3; L2 256B 3; OOB fill none = zeros 0).
    assert fake_cuda.fake_num_maps() == 2
    m0, m1 = (fake_cuda.fake_map(i).decode() for i in range(2))
    a0 = int(m0.split("addr=")[1].split()[0], 16)
    a1 = int(m1.split("addr=")[1].split()[0], 16)
    assert m0 == (f"dtype=7 rank=1 addr={a0:#x} dims=5 strides= box=4 "
                  f"estrides=1 interleave=0 swizzle=0 l2=0 oob=0")
    assert m1 == (f"dtype=6 rank=3 addr={a1:#x} dims=8,5,2 strides=16,80 "
                  f"box=8,4,1 estrides=1,1,1 interleave=0 swizzle=3 l2=3 oob=0")
    # The kernel got one u64: the device address of both 128-byte maps, the
    # fake driver's maps start with the buffer address, then the dims.
    args = fake_cuda.fake_launch(1).decode().split("args=")[1]
    maps = int(args, 16)
    words = (ctypes.c_uint64 * 32).from_address(maps)
    assert list(words[0:2]) == [a0, 5]
    assert list(words[16:20]) == [a1, 8, 5, 2]
    # A second run with the same buffer addresses reuses the encoded maps
    # only if the addresses repeat; either way each map is encoded for them.
    assert fake_cuda.fake_live_allocs() == 1  # the cached maps buffer


def test_tensor_map_of_a_view(fake_cuda, plan_dict, write_plan):
    """A map with a "byte_offset" is encoded over the buffer's address plus
    the offset."""
    arg = json.loads(json.dumps(TMA_ARG))
    arg["maps"][1]["dims"] = [8, 4, 2]
    arg["maps"][1]["byte_offset"] = 16
    plan_dict["kernels"][1]["name"] = "fake_nop"
    plan_dict["kernels"][1]["args"] = [arg]
    plan_dict["buffers"].append(TMA_BUFFER)
    prog = kgraph.load(write_plan(plan_dict))
    prog.run([A, B], [np.zeros(5, np.float32)])
    m0, m1 = (fake_cuda.fake_map(i).decode() for i in range(2))
    a0 = int(m0.split("addr=")[1].split()[0], 16)
    a1 = int(m1.split("addr=")[1].split()[0], 16)
    # The fake driver's buffers are 256-byte aligned: the view of buffer 4
    # starts 16 bytes into it, the map of buffer 0 at its start.
    assert (a0 % 256, a1 % 256) == (0, 16)
    words = (ctypes.c_uint64 * 32).from_address(
        int(fake_cuda.fake_launch(1).decode().split("args=")[1], 16))
    assert words[16] == a1


def test_tensor_map_params_need_maps(plan_dict, write_plan):
    plan_dict["kernels"][1]["args"] = [TMA_ARG]
    plan_dict["buffers"].append(TMA_BUFFER)
    plan = kgraph.load(write_plan(plan_dict)).plan
    with pytest.raises(kgraph.KGraphError, match="tensor maps not built"):
        kgraph.runtime.pack_kernel_params(plan.kernels[1], {0: 16, 1: 32})
    params = kgraph.runtime.pack_kernel_params(plan.kernels[1], {},
                                               {0: 0x1234})
    assert params.raw_bytes() == struct.pack("<Q", 0x1234)


# --- workspaces (stream-K kernels) ---------------------------------------------------

def test_workspace_zeroed_once_and_kept(fake_cuda, plan_dict, write_plan):
    """A "workspace" argument is allocated and zeroed on the first run, then
    the same address is passed to every later launch (the kernel leaves it
    zeroed); it is freed with the program."""
    plan_dict["kernels"][1]["name"] = "fake_nop"
    plan_dict["kernels"][1]["args"] = [{"kind": "workspace", "bytes": 4096}]
    prog = kgraph.load(write_plan(plan_dict))
    prog.run([A, B], [np.zeros(5, np.float32)])
    first = int(fake_cuda.fake_launch(1).decode().split("args=")[1], 16)
    assert fake_cuda.fake_live_allocs() == 1  # the workspace
    assert bytes((ctypes.c_ubyte * 4096).from_address(first)) == bytes(4096)
    prog.run([A, B], [np.zeros(5, np.float32)])
    again = int(fake_cuda.fake_launch(3).decode().split("args=")[1], 16)
    assert again == first
    assert fake_cuda.fake_live_allocs() == 1
    prog.release()
    assert fake_cuda.fake_live_allocs() == 0


def test_workspace_params_need_address(plan_dict, write_plan):
    plan_dict["kernels"][1]["args"] = [{"kind": "workspace", "bytes": 64}]
    plan = kgraph.load(write_plan(plan_dict)).plan
    with pytest.raises(kgraph.KGraphError, match="workspace not allocated"):
        kgraph.runtime.pack_kernel_params(plan.kernels[1], {})
    params = kgraph.runtime.pack_kernel_params(plan.kernels[1], {}, {0: 0x4000})
    assert params.raw_bytes() == struct.pack("<Q", 0x4000)
