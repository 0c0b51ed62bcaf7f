"""Writes a safetensors file of zero-filled tensors for the weights tests.

usage: write_safetensors.py OUT NAME:DTYPE:SHAPE...   (SHAPE like 8x3x3x3)
The layout is the one docs/graph-json.md and the launch plan's loader read:
an 8-byte little-endian header size, the JSON header, then the data.
"""
import json
import struct
import sys

SIZES = {"F32": 4, "F16": 2, "BF16": 2, "I32": 4, "I8": 1, "BOOL": 1}


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    header, offset = {"__metadata__": {"format": "kgraph"}}, 0
    for spec in specs:
        name, dtype, shape = spec.split(":")
        dims = [int(d) for d in shape.split("x")] if shape else []
        count = 1
        for d in dims:
            count *= d
        size = count * SIZES[dtype]
        header[name] = {"dtype": dtype, "shape": dims, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bytes(offset))


if __name__ == "__main__":
    main()
