"""Weights files: the safetensors layout (docs/runtime.md, "Parameters").

A file is an 8-byte little-endian u64 ``N``, ``N`` bytes of UTF-8 JSON
header, then the data. The header maps each tensor name to
``{"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}`` (byte
offsets into the data section; row-major, little-endian, dense) and may hold
a ``"__metadata__"`` object of strings.

This reader needs only the standard library (numpy or torch are not
required to load parameters); :func:`save` writes numpy arrays or torch
tensors in the same layout.
"""

import json
import math
import os
import struct
from dataclasses import dataclass
from typing import Dict, Tuple

from .dtypes import DTYPES
from .errors import WeightsError

#: safetensors dtype names of the plan dtypes (and back).
SAFETENSORS_DTYPES = {"f32": "F32", "f16": "F16", "bf16": "BF16",
                      "i32": "I32", "i8": "I8", "i1": "BOOL"}
PLAN_DTYPES = {v: k for k, v in SAFETENSORS_DTYPES.items()}

#: A header larger than this is not a weights file (safetensors' own limit).
MAX_HEADER_BYTES = 100 * 1024 * 1024


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of a weights file: ``dtype`` the plan dtype (``f16``),
    ``begin``/``end`` absolute byte offsets in the file."""

    name: str
    dtype: str
    shape: Tuple[int, ...]
    begin: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.begin

    def describe(self) -> str:
        return f"{self.dtype}{list(self.shape)}"


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class WeightsFile:
    """The header of a weights file, checked; the data is read on demand.

    Raises :class:`WeightsError` naming the file and the offending tensor.
    """

    def __init__(self, path: str):
        self.path = os.fspath(path)
        self.tensors: Dict[str, TensorInfo] = {}
        self.metadata: Dict[str, str] = {}
        try:
            size = os.path.getsize(self.path)
            with open(self.path, "rb") as f:
                head = f.read(8)
                if len(head) < 8:
                    self._fail(f"is {size} bytes: too short for a weights "
                               f"file (safetensors layout)")
                (n,) = struct.unpack("<Q", head)
                if n > MAX_HEADER_BYTES or 8 + n > size:
                    self._fail(f"header size {n} does not fit the file's "
                               f"{size} bytes: not a weights file "
                               f"(safetensors layout)")
                header = f.read(n)
        except OSError as e:
            raise WeightsError(f"cannot read weights file {self.path}: "
                               f"{e.strerror}") from e
        try:
            data = json.loads(header.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            self._fail(f"header is not valid JSON: {e}")
        if not isinstance(data, dict):
            self._fail("header is not a JSON object")
        self.data_start = 8 + n
        data_bytes = size - self.data_start
        for name, entry in data.items():
            if name == "__metadata__":
                if isinstance(entry, dict):
                    self.metadata = dict(entry)
                continue
            self.tensors[name] = self._tensor(name, entry, data_bytes)

    def _fail(self, msg: str):
        raise WeightsError(f"weights file {self.path}: {msg}")

    def _tensor(self, name, entry, data_bytes) -> TensorInfo:
        where = f"tensor '{name}'"
        if not isinstance(entry, dict):
            self._fail(f"{where}: expected an object, got "
                       f"{type(entry).__name__}")
        dtype = entry.get("dtype")
        if dtype not in PLAN_DTYPES:
            self._fail(f"{where}: dtype {dtype!r} is not one kgraph knows "
                       f"({', '.join(PLAN_DTYPES)})")
        shape = entry.get("shape")
        if not isinstance(shape, list) or \
                not all(_is_int(d) and d >= 0 for d in shape):
            self._fail(f"{where}: shape {shape!r} is not a list of "
                       f"non-negative integers")
        offsets = entry.get("data_offsets")
        if not (isinstance(offsets, list) and len(offsets) == 2 and
                all(_is_int(o) for o in offsets) and
                0 <= offsets[0] <= offsets[1] <= data_bytes):
            self._fail(f"{where}: data_offsets {offsets!r} are not [begin, "
                       f"end] inside the {data_bytes} data bytes")
        plan_dtype = PLAN_DTYPES[dtype]
        want = math.prod(shape) * DTYPES[plan_dtype].bytes
        if offsets[1] - offsets[0] != want:
            self._fail(f"{where}: holds {offsets[1] - offsets[0]} bytes but "
                       f"{dtype} {shape} needs {want}")
        return TensorInfo(name, plan_dtype, tuple(shape),
                          self.data_start + offsets[0],
                          self.data_start + offsets[1])

    def check(self, spec, function: str) -> TensorInfo:
        """The tensor of parameter buffer ``spec`` (a plan BufferSpec) of
        ``function``, checked against it: dtype, shape and bytes."""
        what = f"parameter '{spec.name}' of '{function}'"
        t = self.tensors.get(spec.name)
        if t is None:
            raise WeightsError(f"{what}: no tensor '{spec.name}' in weights "
                               f"file {self.path} ({len(self.tensors)} "
                               f"tensors)")
        if t.dtype != spec.dtype:
            raise WeightsError(f"{what}: the plan needs dtype {spec.dtype} but "
                               f"weights file {self.path} holds "
                               f"{SAFETENSORS_DTYPES[t.dtype]} ({t.dtype})")
        if t.shape != spec.shape:
            raise WeightsError(f"{what}: the plan needs shape "
                               f"{list(spec.shape)} but weights file "
                               f"{self.path} holds {list(t.shape)}")
        if t.nbytes != spec.bytes:
            raise WeightsError(f"{what}: the plan needs {spec.bytes} bytes but "
                               f"weights file {self.path} holds {t.nbytes}")
        return t

    def read(self, name: str) -> bytes:
        """The raw (little-endian, row-major) bytes of tensor ``name``."""
        t = self.tensors[name]
        try:
            with open(self.path, "rb") as f:
                f.seek(t.begin)
                data = f.read(t.nbytes)
        except OSError as e:
            raise WeightsError(f"cannot read weights file {self.path}: "
                               f"{e.strerror}") from e
        if len(data) != t.nbytes:
            raise WeightsError(f"weights file {self.path}: tensor '{name}' is "
                               f"cut short ({len(data)} of {t.nbytes} bytes)")
        return data


def _tensor_bytes(name, value):
    """(safetensors dtype, shape, little-endian bytes) of a numpy array or
    torch tensor."""
    mod = type(value).__module__.split(".")[0]
    if mod == "torch":
        import torch
        plan = next((k for k, d in DTYPES.items()
                     if getattr(torch, d.torch) == value.dtype), None)
        if plan is None:
            raise WeightsError(f"tensor '{name}': torch dtype {value.dtype} "
                               f"has no weights-file dtype")
        t = value.detach().cpu().contiguous()
        if plan == "bf16":  # numpy has no bfloat16: move its bits as int16
            t = t.view(torch.int16)
        arr = t.numpy()
    else:
        import numpy as np
        arr = np.asarray(value)
        plan = next((k for k, d in DTYPES.items()
                     if d.numpy and np.dtype(d.numpy) == arr.dtype), None)
        if plan is None:
            raise WeightsError(f"tensor '{name}': numpy dtype {arr.dtype} has "
                               f"no weights-file dtype")
    arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
    import numpy as np
    return (SAFETENSORS_DTYPES[plan], list(arr.shape),
            np.ascontiguousarray(arr).tobytes())


def save(path, tensors, metadata=None):
    """Write ``tensors`` (name -> numpy array or torch tensor) to ``path`` in
    the safetensors layout, in the given order, each aligned to 16 bytes
    within the data section (the header is padded with spaces to keep the
    data section 8-byte aligned, as safetensors does)."""
    header = {}
    chunks = []
    offset = 0
    for name, value in tensors.items():
        dtype, shape, data = _tensor_bytes(name, value)
        pad = -offset % 16
        if pad:
            chunks.append(b"\0" * pad)
            offset += pad
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = dict(metadata or {"format": "kgraph"})
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)
