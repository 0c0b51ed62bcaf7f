"""The weights file: the safetensors layout, written and read with numpy.

8 bytes little-endian u64 ``N``, ``N`` bytes of UTF-8 JSON header, then the
data; the header maps each tensor name to ``{"dtype", "shape",
"data_offsets": [begin, end]}`` (bytes from the start of the data section),
plus ``"__metadata__": {"format": "kgraph"}``. Tensors are row-major,
little-endian and dense; each starts at a multiple of 16 bytes of the data
section (the padding between them belongs to no tensor).
"""

import json
import struct

import numpy as np

#: safetensors dtype names of the numpy dtypes kgraph parameters use.
SAFETENSORS_DTYPE = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
                     np.dtype(np.int32): "I32", np.dtype(np.int8): "I8",
                     np.dtype(np.bool_): "BOOL"}
_NUMPY_OF = {v: k for k, v in SAFETENSORS_DTYPE.items()}
ALIGN = 16


def write_safetensors(path, tensors):
    """Writes ``tensors`` (a dict name -> numpy array, in order) to ``path``;
    a bf16 tensor is given as ``(uint16 array of its bit patterns, "BF16")``.
    Returns the number of data bytes."""
    header = {}
    offset = 0
    chunks = []
    for name, arr in tensors.items():
        st = None
        if isinstance(arr, tuple):        # (uint16 bit patterns, "BF16")
            arr, st = arr
        arr = np.ascontiguousarray(arr)
        if st is None:
            if arr.dtype not in SAFETENSORS_DTYPE:
                raise ValueError(f"tensor '{name}': dtype {arr.dtype} has no "
                                 f"safetensors name here")
            st = SAFETENSORS_DTYPE[arr.dtype]
        data = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        pad = (-offset) % ALIGN
        if pad:
            chunks.append(b"\0" * pad)
            offset += pad
        header[name] = {"dtype": st,
                        "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "kgraph"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((-(8 + len(text))) % ALIGN)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)
    return offset


def f32_to_bf16_bits(a):
    """The bf16 bit patterns (uint16) of float array ``a``, rounded to
    nearest even (NaN stays a quiet NaN)."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(a, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), rounded).astype(np.uint16)


def read_safetensors(path):
    """The tensors of a safetensors file as a dict name -> numpy array
    (a BF16 tensor is returned as float32)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    base = 8 + n
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        b, e = spec["data_offsets"]
        raw = blob[base + b:base + e]
        if spec["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            out[name] = bits.view(np.float32).reshape(spec["shape"])
            continue
        dt = _NUMPY_OF[spec["dtype"]].newbyteorder("<")
        out[name] = np.frombuffer(raw, dtype=dt).reshape(spec["shape"])
    return out
