"""Shared fixtures of the runtime's CPU-only unit tests."""

import copy
import ctypes
import json
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import kgraph  # noqa: E402
import kgraph.driver  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

#: A PTX stand-in naming the kernels the fake driver knows.
FAKE_PTX = """//
.version 8.0
.target sm_90a
.address_size 64
.visible .entry fake_neg_f32(.param .u64 x, .param .u64 y, .param .u64 n, .param .f32 s)
{ ret; }
.visible .entry fake_add_f32(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{ ret; }
.visible .entry fake_nop(.param .u64 p)
{ ret; }
.visible .entry fake_rejected(.param .u64 p)
{ ret; }
"""

#: out0 = b - a, through an intermediate: t = -a (fake_neg_f32), out0 = t + b.
BASE_PLAN = {
    "format": "kgraph-launch-plan",
    "version": 1,
    "target": "sm_90a",
    "ptx": "prog.ptx",
    "function": "main",
    "buffers": [
        {"id": 0, "kind": "input", "index": 0, "shape": [5], "dtype": "f32", "bytes": 20},
        {"id": 1, "kind": "input", "index": 1, "shape": [5], "dtype": "f32", "bytes": 20},
        {"id": 2, "kind": "intermediate", "shape": [5], "dtype": "f32", "bytes": 20},
        {"id": 3, "kind": "output", "index": 0, "shape": [5], "dtype": "f32", "bytes": 20},
    ],
    "kernels": [
        {"name": "fake_neg_f32", "grid": [1, 1, 1], "block": [128, 1, 1], "shared_bytes": 0,
         "args": [{"kind": "buffer", "buffer": 0}, {"kind": "buffer", "buffer": 2},
                  {"kind": "scalar", "type": "i64", "value": 5},
                  {"kind": "scalar", "type": "f32", "value": 1.0}]},
        {"name": "fake_add_f32", "grid": [2, 1, 1], "block": [64, 2, 1], "shared_bytes": 0,
         "args": [{"kind": "buffer", "buffer": 2}, {"kind": "buffer", "buffer": 1},
                  {"kind": "buffer", "buffer": 3},
                  {"kind": "scalar", "type": "i32", "value": 5}]},
    ],
}


@pytest.fixture
def fake_ptx():
    """FAKE_PTX, for tests that write plans of their own beside it."""
    return FAKE_PTX


@pytest.fixture
def plan_dict():
    """A fresh, mutable copy of the valid base plan."""
    return copy.deepcopy(BASE_PLAN)


@pytest.fixture
def write_plan(tmp_path):
    """write_plan(dict, ptx=FAKE_PTX) -> path of the plan file (PTX beside)."""

    def write(data, ptx=FAKE_PTX, name="prog.plan.json"):
        if ptx is not None:
            (tmp_path / "prog.ptx").write_text(ptx)
        path = tmp_path / name
        path.write_text(json.dumps(data))
        return str(path)

    return write


@pytest.fixture(autouse=True)
def fresh_drivers():
    """No cached driver leaks from one test into the next."""
    kgraph.driver._drivers.clear()
    yield
    kgraph.driver._drivers.clear()


def _compiler():
    for cc in ("clang-22", "clang", "cc", "gcc"):
        path = shutil.which(cc)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def fake_libcuda_path(tmp_path_factory):
    """Builds python/tests/fake_libcuda.c into a shared library."""
    cc = _compiler()
    if cc is None:
        pytest.skip("no C compiler to build the fake libcuda")
    out = tmp_path_factory.mktemp("fakecuda") / "libfakecuda.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(out),
                    os.path.join(HERE, "fake_libcuda.c")], check=True)
    return str(out)


@pytest.fixture
def fake_cuda(fake_libcuda_path, monkeypatch):
    """The fake driver, selected through KGRAPH_LIBCUDA; returns its handle."""
    monkeypatch.setenv("KGRAPH_LIBCUDA", fake_libcuda_path)
    monkeypatch.delenv("FAKE_CUDA_INIT_RC", raising=False)
    monkeypatch.delenv("FAKE_CUDA_DEVICES", raising=False)
    monkeypatch.delenv("FAKE_CUDA_CC", raising=False)
    lib = ctypes.CDLL(fake_libcuda_path)
    lib.fake_launch.restype = ctypes.c_char_p
    lib.fake_map.restype = ctypes.c_char_p
    lib.fake_smem_limit.argtypes = [ctypes.c_char_p]
    lib.fake_reset()
    return lib
