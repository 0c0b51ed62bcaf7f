"""im2col tensor maps of "tensor_maps" arguments (docs/launch-plan.md): their
validation when a plan loads, and their encoding by cuTensorMapEncodeIm2col
through the fake driver."""

import copy
import ctypes

import numpy as np
import pytest

import kgraph
import kgraph.driver
from kgraph import CudaError, PlanError
from kgraph.plan import TensorMapSpec, im2col_corner_range

#: An NHWC f16 input of a conv2d (N=2, H=5, W=7, C=64).
NHWC = {"id": 4, "kind": "intermediate", "shape": [2, 5, 7, 64], "dtype": "f16",
        "bytes": 2 * 5 * 7 * 64 * 2}

#: The im2col map of a 3x3, pad 1, stride 2 conv2d over NHWC: corners
#: [-pad, -pad] and [(OW-1)*sW + 1 - W - pad, (OH-1)*sH + 1 - H - pad].
IM2COL = {"buffer": 4, "dtype": "f16", "mode": "im2col", "dims": [64, 7, 5, 2],
          "strides": [128, 896, 4480], "lower_corner": [-1, -1],
          "upper_corner": [-1, -1], "channels_per_pixel": 64,
          "pixels_per_column": 128, "element_strides": [1, 2, 2, 1],
          "swizzle": "128B", "interleave": "none", "l2_promotion": "256B",
          "oob_fill": "zero"}

#: A tiled map beside it (tiled maps keep their format).
TILED = {"buffer": 0, "dtype": "f32", "dims": [5], "strides": [], "box": [4],
         "element_strides": [1], "swizzle": "none", "interleave": "none",
         "l2_promotion": "none", "oob_fill": "zero"}


def _plan(plan_dict, im2col=None, name=None):
    """plan_dict whose second kernel takes a "tensor_maps" argument of a
    tiled map over buffer 0 and an im2col map (IM2COL, or `im2col`) over
    buffer 4."""
    plan_dict["buffers"].append(copy.deepcopy(NHWC))
    plan_dict["kernels"][1]["args"] = [{"kind": "tensor_maps", "maps": [
        copy.deepcopy(TILED), copy.deepcopy(im2col or IM2COL)]}]
    if name:
        plan_dict["kernels"][1]["name"] = name
    return plan_dict


def _maps(write_plan, plan):
    return kgraph.load(write_plan(plan)).plan.kernels[1].args[0].maps


def test_valid_im2col_map(plan_dict, write_plan):
    tiled, m = _maps(write_plan, _plan(plan_dict))
    assert (m.mode, m.buffer, m.dtype, m.dims, m.strides) == (
        "im2col", 4, "f16", (64, 7, 5, 2), (128, 896, 4480))
    assert (m.lower_corner, m.upper_corner) == ((-1, -1), (-1, -1))
    assert (m.channels_per_pixel, m.pixels_per_column) == (64, 128)
    assert m.element_strides == (1, 2, 2, 1) and m.box == ()
    assert (m.swizzle, m.interleave, m.l2_promotion, m.oob_fill, m.byte_offset) == (
        "128B", "none", "256B", "zero", 0)
    # The tiled map beside it: no mode key means "tiled", no im2col fields.
    assert (tiled.mode, tiled.box, tiled.lower_corner, tiled.channels_per_pixel) == (
        "tiled", (4,), (), 0)


def test_explicit_tiled_mode(plan_dict, write_plan):
    plan = _plan(plan_dict)
    plan["kernels"][1]["args"][0]["maps"][0]["mode"] = "tiled"
    tiled, _ = _maps(write_plan, plan)
    assert tiled.mode == "tiled" and tiled.box == (4,)


@pytest.mark.parametrize("rank,lo,hi", [(3, -32768, 32767), (4, -128, 127),
                                        (5, -16, 15)])
def test_corner_range_by_rank(plan_dict, write_plan, rank, lo, hi):
    """The corners' range shrinks with the spatial rank (16 bits shared by
    rank - 2 offsets); both ends are accepted."""
    assert im2col_corner_range(rank) == (lo, hi)
    # A [C, spatial..., N] tensor of 64 channels inside buffer 4's 8960 B.
    dims = [64] + [1] * (rank - 2) + [2]
    m = dict(IM2COL, dims=dims, strides=[128] * (rank - 2) + [128],
             element_strides=[1] * rank, lower_corner=[lo] * (rank - 2),
             upper_corner=[hi] * (rank - 2))
    _, got = _maps(write_plan, _plan(plan_dict, m))
    assert got.lower_corner == (lo,) * (rank - 2)
    assert got.upper_corner == (hi,) * (rank - 2)


def test_im2col_byte_offset(plan_dict, write_plan):
    """A view: as for tiled maps, the extent counts from the offset."""
    fresh = copy.deepcopy(plan_dict)
    m = dict(IM2COL, dims=[64, 7, 5, 1], byte_offset=4480)
    _, got = _maps(write_plan, _plan(plan_dict, m))
    assert got.byte_offset == 4480
    m["dims"] = [64, 7, 5, 2]
    with pytest.raises(PlanError, match=r"maps\[1\]: spans 8960 bytes from byte "
                                        r"4480 but buffer 4 has 8960"):
        _maps(write_plan, _plan(fresh, m))


_MW = "kernels[1].args[0].maps[1]"
_DEL = object()

# (field, new value, expected message fragment) on IM2COL.
BAD_IM2COL = [
    ("box", [64, 8, 4, 1], f"{_MW}.box: an im2col map has no box"),
    ("mode", "im2col_w", f"{_MW}.mode: 'im2col_w' is not one of ['tiled', 'im2col']"),
    ("mode", None, f"{_MW}.mode: None is not one of ['tiled', 'im2col']"),
    ("dims", [64, 7], f"{_MW}.dims: rank 2 is not in [3, 5] for an im2col map"),
    ("dims", [64, 7, 5, 2, 1, 1], f"{_MW}.dims: rank 6 is not in [3, 5] for an im2col map"),
    ("dims", [64, 7, 5, 3], f"{_MW}: spans 13440 bytes but buffer 4 has 8960"),
    ("strides", [128, 896], f"{_MW}.strides: needs 3 strides (dims 1..), got 2"),
    ("strides", [120, 896, 4480], f"{_MW}.strides[0]: 120 is not a multiple of 16"),
    ("lower_corner", _DEL, f"{_MW}: missing field 'lower_corner'"),
    ("upper_corner", -1, f"{_MW}.upper_corner: expected a list, got int"),
    ("lower_corner", [-1], f"{_MW}.lower_corner: needs 2 entries (rank - 2, "
                           f"innermost first), got 1"),
    ("upper_corner", [-1, -1, -1], f"{_MW}.upper_corner: needs 2 entries"),
    ("lower_corner", [-129, -1], f"{_MW}.lower_corner[0]: -129 is not an integer in "
                                 f"[-128, 127] (rank 4)"),
    ("upper_corner", [-1, 128], f"{_MW}.upper_corner[1]: 128 is not an integer in "
                                f"[-128, 127] (rank 4)"),
    ("lower_corner", [-1.0, -1], f"{_MW}.lower_corner[0]: -1.0 is not an integer"),
    ("lower_corner", [True, -1], f"{_MW}.lower_corner[0]: True is not an integer"),
    ("channels_per_pixel", _DEL, f"{_MW}: missing field 'channels_per_pixel'"),
    ("channels_per_pixel", 0, f"{_MW}.channels_per_pixel: expected an integer >= 1, got 0"),
    ("channels_per_pixel", 4, f"{_MW}.channels_per_pixel: 4 channels are 8 bytes, not a "
                              f"multiple of 16"),
    ("channels_per_pixel", 264, f"{_MW}.channels_per_pixel: 264 is more than 256"),
    ("pixels_per_column", _DEL, f"{_MW}: missing field 'pixels_per_column'"),
    ("pixels_per_column", 0, f"{_MW}.pixels_per_column: expected an integer >= 1, got 0"),
    ("pixels_per_column", 1025, f"{_MW}.pixels_per_column: 1025 is more than 1024"),
    ("element_strides", [1, 2, 2], f"{_MW}.element_strides: needs 4 entries, got 3"),
    ("element_strides", [1, 9, 2, 1], f"{_MW}.element_strides[1]: 9 is more than 8"),
    ("element_strides", [1, 0, 2, 1], f"{_MW}.element_strides[1]: 0 is not an integer >= 1"),
    ("dtype", "bf16", f"{_MW}.dtype: is bf16 but buffer 4 holds f16"),
    ("swizzle", "16B", f"{_MW}.swizzle: '16B' is not one of"),
]


@pytest.mark.parametrize("key,value,message", BAD_IM2COL,
                         ids=[f"{b[0]}={b[1]!r}"[:32] if b[1] is not _DEL else
                              f"{b[0]}=missing" for b in BAD_IM2COL])
def test_invalid_im2col_map(plan_dict, write_plan, key, value, message):
    m = copy.deepcopy(IM2COL)
    if value is _DEL:
        del m[key]
    else:
        m[key] = value
    plan_path = write_plan(_plan(plan_dict, m))
    with pytest.raises(PlanError) as e:
        kgraph.load(plan_path)
    assert message in str(e.value)
    assert str(e.value).startswith(plan_path)


@pytest.mark.parametrize("rank,bad,message", [
    (3, 32768, "32768 is not an integer in [-32768, 32767] (rank 3)"),
    (5, 16, "16 is not an integer in [-16, 15] (rank 5)"),
    (5, -17, "-17 is not an integer in [-16, 15] (rank 5)"),
])
def test_corner_out_of_range_for_rank(plan_dict, write_plan, rank, bad, message):
    m = dict(IM2COL, dims=[64] + [1] * (rank - 2) + [2], strides=[128] * (rank - 1),
             element_strides=[1] * rank, lower_corner=[0] * (rank - 2),
             upper_corner=[0] * (rank - 3) + [bad])
    with pytest.raises(PlanError) as e:
        _maps(write_plan, _plan(plan_dict, m))
    assert f"{_MW}.upper_corner[{rank - 3}]: {message}" in str(e.value)


def test_tiled_map_still_needs_its_box(plan_dict, write_plan):
    """A tiled map (no mode) keeps today's rules: a box is required."""
    plan = _plan(plan_dict)
    del plan["kernels"][1]["args"][0]["maps"][0]["box"]
    with pytest.raises(PlanError, match=r"maps\[0\]: missing field 'box'"):
        _maps(write_plan, plan)


# --- encoding through the fake driver ----------------------------------------------

def test_im2col_map_encoded_and_passed(fake_cuda, plan_dict, write_plan):
    prog = kgraph.load(write_plan(_plan(plan_dict, name="fake_nop")))
    prog.run([np.ones(5, np.float32), np.ones(5, np.float32)],
             [np.zeros(5, np.float32)])
    # The tiled map went to cuTensorMapEncodeTiled, the im2col one to
    # cuTensorMapEncodeIm2col with the plan's values and cuda.h's enums
    # (f16 6; swizzle 128B 3; L2 256B 3; OOB fill none = zeros 0).
    assert fake_cuda.fake_num_maps() == 2
    m0, m1 = (fake_cuda.fake_map(i).decode() for i in range(2))
    assert m0.startswith("dtype=7 rank=1 ") and " box=4 " in m0
    a1 = int(m1.split("addr=")[1].split()[0], 16)
    assert m1 == (f"im2col dtype=6 rank=4 addr={a1:#x} dims=64,7,5,2 "
                  f"strides=128,896,4480 lower=-1,-1 upper=-1,-1 channels=64 "
                  f"pixels=128 estrides=1,2,2,1 interleave=0 swizzle=3 l2=3 oob=0")
    # The kernel's one u64 is the address of both 128-byte maps; the fake's
    # second map starts with buffer 4's address, then its dims.
    args = fake_cuda.fake_launch(1).decode().split("args=")[1]
    words = (ctypes.c_uint64 * 32).from_address(int(args, 16))
    assert list(words[16:21]) == [a1, 64, 7, 5, 2]


def test_im2col_encode_failure_names_the_map(fake_cuda):
    """A map the driver rejects (the fake refuses rank 2, which a plan
    cannot hold) fails with a CudaError naming the map."""
    drv = kgraph.driver.get_driver()
    spec = TensorMapSpec(4, "f16", (64, 7), (128,), (), (1, 1), "none", "none",
                         "none", "zero", mode="im2col", lower_corner=(),
                         upper_corner=(), channels_per_pixel=64,
                         pixels_per_column=32)
    with pytest.raises(CudaError) as e:
        drv.encode_tensor_map(spec, 0x10000)
    assert e.value.call == "cuTensorMapEncodeIm2col"
    assert ("im2col tensor map of buffer 4: dims [64, 7], corners [] to [], "
            "64 channels x 32 pixels") in str(e.value)
    assert fake_cuda.fake_num_maps() == 0
