"""Version 2 plans: several functions, parameters from a weights file
(safetensors layout), byte offsets, CUDA graph capture/replay and the
per-kernel profile, against the fake libcuda. No GPU needed."""

import copy
import io
import json
import struct

import numpy as np
import pytest

import kgraph
from kgraph import (ArgumentCountError, DTypeError, LayoutError, PlanError,
                    WeightsError)
from kgraph.weights import WeightsFile, save

try:
    import torch
except ImportError:  # torch is optional for these tests
    torch = None

BIAS = np.array([10, 20, 30, 40, 50], dtype=np.float32)
X5 = np.array([1, 2, 3, 4, 5], dtype=np.float32)
X8 = np.arange(8, dtype=np.float32) * 3


def _buf(id, kind, shape, **kw):
    b = {"id": id, "kind": kind, "shape": list(shape), "dtype": "f32",
         "bytes": 4 * int(np.prod(shape))}
    b.update(kw)
    return b


def _arg(buffer, **kw):
    return dict({"kind": "buffer", "buffer": buffer}, **kw)


#: "main": out = bias - x (t = -x by fake_neg_f32, out = t + bias);
#: "shifted": out[i] = x[4 + i] + bias[i], i < 4 (a byte_offset of 16 on x).
V2_PLAN = {
    "format": "kgraph-launch-plan", "version": 2, "target": "sm_90a",
    "ptx": "prog.ptx", "weights": "model.safetensors",
    "functions": [
        {"name": "main",
         "buffers": [_buf(0, "parameter", [5], name="bias"),
                     _buf(1, "input", [5], index=0),
                     _buf(2, "intermediate", [5]),
                     _buf(3, "output", [5], index=0)],
         "kernels": [
             {"name": "fake_neg_f32", "grid": [1, 1, 1], "block": [32, 1, 1],
              "shared_bytes": 0,
              "args": [_arg(1), _arg(2), {"kind": "scalar", "type": "i64", "value": 5},
                       {"kind": "scalar", "type": "f32", "value": 1.0}],
              "ops": [{"op": "kgraph.neg", "loc": "model.py:3:7"}],
              "flops": 5, "bytes": 40, "compute": "simt"},
             {"name": "fake_add_f32", "grid": [3, 1, 1], "block": [32, 1, 1],
              "shared_bytes": 0,
              "args": [_arg(2), _arg(0), _arg(3),
                       {"kind": "scalar", "type": "i32", "value": 5}],
              "ops": [{"op": "kgraph.add", "loc": "model.py:4"},
                      {"op": "kgraph.relu"}],
              "flops": 10, "bytes": 60, "compute": "simt"}]},
        {"name": "shifted",
         "buffers": [_buf(0, "input", [8], index=0),
                     _buf(1, "parameter", [5], name="bias"),
                     _buf(2, "output", [4], index=0)],
         "kernels": [
             {"name": "fake_add_f32", "grid": [1, 1, 1], "block": [32, 1, 1],
              "shared_bytes": 0,
              "args": [_arg(0, byte_offset=16), _arg(1), _arg(2),
                       {"kind": "scalar", "type": "i32", "value": 4}]}]},
    ]}


@pytest.fixture
def v2(write_plan, tmp_path):
    """write(plan=V2_PLAN, tensors={"bias": BIAS}) -> plan path."""

    def write(plan=None, tensors=None, weights_name="model.safetensors"):
        if tensors is None:
            tensors = {"bias": BIAS}
        save(str(tmp_path / weights_name), tensors)
        return write_plan(copy.deepcopy(plan or V2_PLAN))

    return write


# --- the weights file ------------------------------------------------------------------


def _raw_safetensors(header: dict, data: bytes) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def test_reader_reads_a_hand_written_file(tmp_path):
    # Written byte by byte (not by kgraph.weights.save): the layout itself.
    a = np.array([[1, 2], [3, 4]], dtype="<f2").tobytes()
    b = np.array([7, -8, 9], dtype="<i4").tobytes()
    path = tmp_path / "w.safetensors"
    path.write_bytes(_raw_safetensors(
        {"b": {"dtype": "I32", "shape": [3], "data_offsets": [8, 20]},
         "a": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]},
         "__metadata__": {"format": "pt"}}, a + b))
    w = WeightsFile(str(path))
    assert w.tensors["a"].dtype == "f16" and w.tensors["a"].shape == (2, 2)
    assert w.tensors["b"].dtype == "i32" and w.tensors["b"].nbytes == 12
    assert w.metadata == {"format": "pt"}
    assert w.read("b") == b and w.read("a") == a


def test_save_round_trip_all_numpy_dtypes(tmp_path):
    tensors = {"f32": np.arange(6, dtype=np.float32).reshape(2, 3),
               "f16": np.ones(3, np.float16), "i8": np.array([-1, 2], np.int8),
               "i32": np.array(7, np.int32), "i1": np.array([True, False]),
               "empty": np.zeros((0, 4), np.float32)}
    path = str(tmp_path / "w.safetensors")
    save(path, tensors)
    w = WeightsFile(path)
    for name, arr in tensors.items():
        t = w.tensors[name]
        assert t.shape == arr.shape and t.dtype == (name if name != "empty" else "f32")
        assert w.read(name) == arr.tobytes()
    # The header is padded to keep the data 8-byte aligned, each tensor at a
    # multiple of 16 bytes in it.
    assert w.data_start % 8 == 0
    assert all((t.begin - w.data_start) % 16 == 0 for t in w.tensors.values())


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_save_bf16_from_torch(tmp_path):
    t = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    path = str(tmp_path / "w.safetensors")
    save(path, {"w": t})
    w = WeightsFile(path)
    assert w.tensors["w"].dtype == "bf16"
    assert w.read("w") == t.view(torch.int16).numpy().tobytes()


@pytest.mark.parametrize("content,message", [
    (b"\1\0", "too short for a weights file"),
    (struct.pack("<Q", 1 << 40) + b"{}", "header size 1099511627776 does not fit"),
    (struct.pack("<Q", 3) + b"{x}", "header is not valid JSON"),
    (_raw_safetensors({"w": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}},
                      b"\0" * 8), "tensor 'w': dtype 'F64' is not one kgraph knows"),
    (_raw_safetensors({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}},
                      b"\0" * 8), "tensor 'w': data_offsets [0, 16] are not [begin, end] "
                                  "inside the 8 data bytes"),
    (_raw_safetensors({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}},
                      b"\0" * 8), "tensor 'w': holds 8 bytes but F32 [3] needs 12"),
    (_raw_safetensors({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}},
                      b""), "tensor 'w': shape [-1] is not a list of non-negative"),
])
def test_malformed_weights_file(tmp_path, content, message):
    path = tmp_path / "w.safetensors"
    path.write_bytes(content)
    with pytest.raises(WeightsError, match="weights file .*w.safetensors: ") as e:
        WeightsFile(str(path))
    assert message in str(e.value)


# --- parsing version 2 plans -------------------------------------------------------------


def test_v2_plan_parses(v2):
    plan = kgraph.load_plan(v2())
    assert plan.version == 2 and plan.function_names == ("main", "shifted")
    assert plan.weights_path.endswith("/model.safetensors")
    main = plan.function_plan("main")
    assert [b.id for b in main.inputs] == [1] and main.inputs[0].index == 0
    assert [(b.id, b.name) for b in main.parameters] == [(0, "bias")]
    k = main.kernels[1]
    assert [o.describe() for o in k.ops] == ["add (model.py:4)", "relu"]
    assert (k.flops, k.bytes, k.compute) == (10, 60, "simt")
    shifted = plan.function_plan("shifted")
    assert shifted.kernels[0].args[0].byte_offset == 16
    assert shifted.kernels[0].args[1].byte_offset == 0
    assert shifted.kernels[0].ops == () and shifted.kernels[0].flops is None
    # The first function is the plan's default view.
    assert plan.function == "main" and plan.kernels == main.kernels


def test_v1_plan_is_one_function(plan_dict, write_plan):
    plan = kgraph.load_plan(write_plan(plan_dict))
    assert plan.version == 1 and plan.function_names == ("main",)
    assert plan.weights_path is None and plan.function_plan().parameters == ()
    prog = kgraph.load(write_plan(plan_dict))
    assert prog.function_names == ("main",) and prog.name == "main"


def _set(d, path, value):
    *parents, last = path
    for p in parents:
        d = d[p]
    if value is _DEL:
        del d[last]
    else:
        d[last] = value


_DEL = object()
F0, F1 = ("functions", 0), ("functions", 1)

BAD_V2 = [
    (("functions",), [], "functions: the plan has no function"),
    (("functions",), {}, "functions: expected a list, got dict"),
    (F0 + ("name",), _DEL, "functions[0]: missing field 'name'"),
    (F1 + ("name",), "main", "functions[1].name: duplicate function 'main'"),
    (F0 + ("buffers", 0, "name"), _DEL, "functions[0].buffers[0]: missing field 'name'"),
    (F0 + ("buffers", 0, "name"), "", "functions[0].buffers[0].name: expected a non-empty string"),
    (F0 + ("buffers", 2, "kind"), "parameter",
     "functions[0].buffers[2]: missing field 'name'"),
    (F0 + ("buffers", 1, "index"), 1,
     "functions[0].buffers: input indices must be 0..0 each exactly once, got [1]"),
    (F0 + ("kernels",), [], "functions[0].kernels: the plan has no kernel"),
    (F1 + ("kernels", 0, "args", 0, "byte_offset"), 8,
     "functions[1].kernels[0].args[0].byte_offset: 8 is not a multiple of 16"),
    (F1 + ("kernels", 0, "args", 0, "byte_offset"), 32,
     "functions[1].kernels[0].args[0].byte_offset: 32 is not inside buffer 0 of 32 bytes"),
    (F1 + ("kernels", 0, "args", 0, "byte_offset"), -16,
     "functions[1].kernels[0].args[0].byte_offset: expected an integer >= 0"),
    (F0 + ("kernels", 0, "compute"), "fp64",
     "functions[0].kernels[0].compute: 'fp64' is not one of"),
    (F0 + ("kernels", 0, "flops"), -1,
     "functions[0].kernels[0].flops: expected an integer >= 0"),
    (F0 + ("kernels", 0, "ops", 0, "op"), 3,
     "functions[0].kernels[0].ops[0].op: expected a non-empty string, got 3"),
    (F0 + ("kernels", 0, "ops", 0, "loc"), 12,
     "functions[0].kernels[0].ops[0].loc: expected a string, got 12"),
    (("weights",), _DEL, "weights: function 'main' has parameter buffers but the plan "
                         "names no weights file"),
    (("weights",), "missing.safetensors", "weights: weights file "),
]


@pytest.mark.parametrize("path,value,message", BAD_V2,
                         ids=[".".join(map(str, b[0])) + f"={b[1]!r}"[:20] for b in BAD_V2])
def test_invalid_v2_plan(v2, path, value, message):
    plan = copy.deepcopy(V2_PLAN)
    _set(plan, path, value)
    plan_path = v2(plan)
    with pytest.raises(PlanError) as e:
        kgraph.load(plan_path)
    assert message in str(e.value)
    assert str(e.value).startswith(plan_path)


def test_missing_weights_file_named(v2, tmp_path):
    plan = copy.deepcopy(V2_PLAN)
    plan["weights"] = "sub/none.safetensors"
    with pytest.raises(PlanError, match=r"weights: weights file .*/sub/none.safetensors "
                                        r"not found"):
        kgraph.load(v2(plan))


# --- parameters checked against the weights file at load ----------------------------------


@pytest.mark.parametrize("tensors,message", [
    ({"other": BIAS}, "parameter 'bias' of 'main': no tensor 'bias' in weights file "),
    ({"bias": BIAS.astype(np.float16)},
     "parameter 'bias' of 'main': the plan needs dtype f32 but weights file "
     ".*model.safetensors holds F16 \\(f16\\)"),
    ({"bias": BIAS.reshape(1, 5)},
     "parameter 'bias' of 'main': the plan needs shape \\[5\\] but weights file "
     ".*holds \\[1, 5\\]"),
    ({"bias": np.zeros(6, np.float32)},
     "parameter 'bias' of 'main': the plan needs shape \\[5\\] but .*holds \\[6\\]"),
])
def test_parameter_mismatch(v2, tensors, message):
    with pytest.raises(WeightsError, match=message):
        kgraph.load(v2(tensors=tensors))


def test_parameter_error_is_a_plan_error(v2):
    with pytest.raises(PlanError):
        kgraph.load(v2(tensors={}))


# --- running functions with parameters -----------------------------------------------------


def test_call_takes_only_real_inputs(fake_cuda, v2):
    prog = kgraph.load(v2())
    assert prog.name == "main" and len(prog.inputs) == 1
    assert "1 parameter(s)" in repr(prog)
    with pytest.raises(ArgumentCountError,
                       match=r"'main' takes 1 input\(s\) \(f32\[5\]\), got 2; its 1 "
                             r"parameter\(s\) come from the weights file"):
        prog(X5, BIAS)
    np.testing.assert_array_equal(prog(X5), BIAS - X5)


def test_parameters_uploaded_once_per_device_and_shared(fake_cuda, v2, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_DEVICES", "2")
    live = fake_cuda.fake_live_allocs()
    prog = kgraph.load(v2())
    np.testing.assert_array_equal(prog(X5), BIAS - X5)
    assert fake_cuda.fake_live_allocs() == live + 1  # the parameter stays
    np.testing.assert_array_equal(prog(X5 * 2), BIAS - X5 * 2)
    shifted = prog.function("shifted")
    assert shifted.name == "shifted" and prog.function_names == ("main", "shifted")
    np.testing.assert_array_equal(shifted(X8), X8[4:] + BIAS[:4])
    assert fake_cuda.fake_live_allocs() == live + 1  # same tensor, same device
    on1 = kgraph.load(v2(), device=1)
    np.testing.assert_array_equal(on1(X5), BIAS - X5)
    assert fake_cuda.fake_live_allocs() == live + 2
    on1.release()
    prog.release()
    assert fake_cuda.fake_live_allocs() == live
    # Released parameters come back on the next call.
    np.testing.assert_array_equal(prog(X5), BIAS - X5)
    prog.release()


def test_byte_offset_added_to_the_address(fake_cuda, v2):
    shifted = kgraph.load(v2(), function="shifted")
    shifted(X8)
    args = fake_cuda.fake_launch(0).decode().split("args=")[1].split(",")
    # The parameter is the kernel's second argument; the input x is the
    # first, 16 bytes into its buffer (a fresh allocation, 256-aligned here).
    assert int(args[0], 16) % 256 == 16
    shifted.release()


def test_unknown_function(v2):
    with pytest.raises(PlanError, match=r"no function 'nope' in the plan \(functions: "
                                        r"main, shifted\)"):
        kgraph.load(v2(), function="nope")
    with pytest.raises(PlanError, match="no function 'nope'"):
        kgraph.load(v2()).function("nope")


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_cpu_inputs_checked_without_gpu(v2):
    prog = kgraph.load(v2())
    with pytest.raises(DTypeError, match=r"input 0 of 'main': expected dtype f32"):
        prog(torch.zeros(5, dtype=torch.float16))


# --- CUDA graphs ---------------------------------------------------------------------------


def test_capture_and_replay_numpy(fake_cuda, v2):
    prog = kgraph.load(v2())
    live, launches = fake_cuda.fake_live_allocs(), fake_cuda.fake_num_launches()
    graph = prog.capture(X5)
    # Captured, not run: no kernel ran, the graph holds two launches.
    assert fake_cuda.fake_num_launches() == launches
    assert graph.num_kernels == 2 and "2 kernel(s)" in repr(graph)
    np.testing.assert_array_equal(graph(X5), BIAS - X5)
    np.testing.assert_array_equal(graph(X5 * 3), BIAS - X5 * 3)
    assert fake_cuda.fake_graph_launches() == 2
    logged = [fake_cuda.fake_launch(i).decode()
              for i in range(launches, fake_cuda.fake_num_launches())]
    assert [l.split()[0] for l in logged] == ["graph:fake_neg_f32", "graph:fake_add_f32"] * 2
    # The same buffers every replay.
    assert logged[0].split("args=")[1] == logged[2].split("args=")[1]
    with pytest.raises(ArgumentCountError):
        graph(X5, X5)
    graph.close()
    graph.close()  # idempotent
    assert fake_cuda.fake_live_streams() == 0 and fake_cuda.fake_live_graphs() == 0
    # The graph's input, intermediate and output buffers are freed; the
    # parameter stays with the Program.
    assert fake_cuda.fake_live_allocs() == live + 1
    with pytest.raises(kgraph.KGraphError, match="closed"):
        graph(X5)
    prog.release()


def test_capture_with_byte_offset_and_context_manager(fake_cuda, v2):
    prog = kgraph.load(v2(), function="shifted")
    with prog.capture(X8) as graph:
        np.testing.assert_array_equal(graph(X8 + 1), X8[4:] + 1 + BIAS[:4])
    assert fake_cuda.fake_live_graphs() == 0
    prog.release()


def test_capture_checks_inputs(v2):
    prog = kgraph.load(v2())
    with pytest.raises(ArgumentCountError):
        prog.capture()
    with pytest.raises(LayoutError, match="input 0: static_inputs needs CUDA tensors, "
                                          "got ndarray"):
        prog.capture(X5, static_inputs=True)


def test_capture_failure_cleans_up(fake_cuda, v2):
    plan = copy.deepcopy(V2_PLAN)
    plan["functions"][0]["kernels"][1]["name"] = "fake_rejected"
    plan["functions"][0]["kernels"][1]["args"] = [_arg(3)]
    prog = kgraph.load(v2(plan))
    with pytest.raises(kgraph.CudaError, match="cuLaunchKernel"):
        prog.capture(X5)
    assert fake_cuda.fake_live_streams() == 0 and fake_cuda.fake_live_graphs() == 0
    prog.release()


# --- profile ---------------------------------------------------------------------------------


def test_profile_table(fake_cuda, v2, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_NAME", "NVIDIA H200")
    prog = kgraph.load(v2())
    launches = fake_cuda.fake_num_launches()
    out = io.StringIO()
    prof = prog.profile(X5, repeat=3, warmup=1, file=out)
    # 1 warm-up and 3 timed runs of both kernels.
    assert fake_cuda.fake_num_launches() - launches == 8
    assert fake_cuda.fake_live_events() == 0
    # The fake clock advances 1 + grid-size microseconds per kernel.
    neg, add = prof.kernels
    assert neg.name == "fake_neg_f32" and neg.time_us == pytest.approx(2.0)
    assert add.time_us == pytest.approx(4.0) and len(add.times_us) == 3
    assert prof.total_us == pytest.approx(6.0)
    assert neg.share == pytest.approx(1 / 3) and add.share == pytest.approx(2 / 3)
    assert neg.ops == (("kgraph.neg", "model.py:3:7"),)
    assert add.tflops == pytest.approx(10 / 4e-6 / 1e12)
    assert add.gbps == pytest.approx(60 / 4e-6 / 1e9)
    # H200 peaks: 67 TFLOP/s fp32, 4.8 TB/s: memory-bound, 60 B / 4.8e12 B/s.
    assert prof.peaks.name == "H200 SXM"
    assert add.roofline == pytest.approx((60 / 4.8e12) / 4e-6)
    text = out.getvalue()
    assert text == prof.table() + "\n"
    lines = text.splitlines()
    assert lines[0] == ("kgraph profile of 'main' on NVIDIA H200 (median of 3 runs; "
                        "roofline: H200 SXM peaks)")
    assert lines[1].split() == ["kernel", "time", "us", "share", "TFLOP/s", "GB/s",
                                "roofline", "ops"]
    assert lines[2].split()[:3] == ["fake_neg_f32", "2.00", "33.3%"]
    assert lines[3].endswith("add (model.py:4), relu")
    assert lines[4].split()[:3] == ["total", "6.00", "100.0%"]
    row = prof.rows()[1]
    assert row["kernel"] == "fake_add_f32" and row["ops"][1] == {"op": "kgraph.relu",
                                                                "loc": ""}
    prog.release()


def test_profile_unknown_device_and_no_counts(fake_cuda, v2):
    prog = kgraph.load(v2(), function="shifted")
    prof = prog.profile(X8, repeat=2, print=False)
    (k,) = prof.kernels
    assert prof.peaks is None and k.roofline is None and k.tflops is None
    assert "no peak numbers for this device" in prof.table()
    assert prof.table().splitlines()[2].split()[-4:] == ["-", "-", "-", "(copy)"]
    custom = kgraph.DevicePeaks("mine", {"simt": 1.0}, 1.0)
    prof = kgraph.load(v2()).profile(X5, repeat=1, print=False, peaks=custom)
    assert prof.kernels[0].roofline == pytest.approx(max(5 / 1e12, 40 / 1e9) / 2e-6)
    with pytest.raises(ValueError, match="repeat >= 1"):
        prog.profile(X8, repeat=0)
    prog.release()


def test_peak_table_lookup():
    from kgraph.profile import lookup_device_peaks
    assert lookup_device_peaks("NVIDIA H200", (9, 0)).dram_gbps == 4800.0
    assert lookup_device_peaks("NVIDIA H200", (8, 0)) is None
    assert lookup_device_peaks("NVIDIA A100-SXM4-80GB").tflops["tensor_f16"] == 312.0
    assert lookup_device_peaks("Fake GPU 0") is None
