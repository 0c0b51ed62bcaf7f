"""Checks python/kgraph's dtype table against the compiler's.

Usage: check_element_types.py TABLE.json PYTHON_DIR

TABLE.json is `kgraph-opt --print-element-types`; PYTHON_DIR holds the
kgraph package. Every plan dtype must appear on both sides, in the same
order, with the same element size, host (torch/numpy) types and tensor-map
enum; where torch or numpy is installed, their types must exist and have
that element size. Prints one line per mismatch and exits 1 on any.
"""

import json
import sys


def main():
    table_path, python_dir = sys.argv[1:3]
    sys.path.insert(0, python_dir)
    from kgraph.dtypes import DTYPES

    with open(table_path) as f:
        table = json.load(f)["element_types"]
    errors = []
    cxx_names = [row["name"] for row in table]
    if cxx_names != list(DTYPES):
        errors.append(f"dtype names differ: compiler {cxx_names}, "
                      f"python {list(DTYPES)}")
    for row in table:
        d = DTYPES.get(row["name"])
        if d is None:
            continue
        for field, cxx, py in (("bytes", row["bytes"], d.bytes),
                               ("torch", row["torch"], d.torch),
                               ("numpy", row["numpy"], d.numpy),
                               ("tensor_map", row["tensor_map_data_type"],
                                d.tensor_map)):
            if cxx != py:
                errors.append(f"{d.name}.{field}: compiler {cxx!r}, "
                              f"python {py!r}")

    try:
        import numpy as np
    except ImportError:
        np = None
    try:
        import torch
    except ImportError:
        torch = None
    for d in DTYPES.values():
        if np is not None and d.numpy is not None:
            size = np.dtype(d.numpy).itemsize
            if size != d.bytes:
                errors.append(f"{d.name}: numpy.{d.numpy} has {size} bytes, "
                              f"the table {d.bytes}")
        if torch is not None:
            t = getattr(torch, d.torch, None)
            if not isinstance(t, torch.dtype):
                errors.append(f"{d.name}: torch has no dtype {d.torch}")
            else:
                size = torch.empty((), dtype=t).element_size()
                if size != d.bytes:
                    errors.append(f"{d.name}: torch.{d.torch} has {size} "
                                  f"bytes, the table {d.bytes}")
    for e in errors:
        print(e)
    if errors:
        sys.exit(1)
    print(f"{len(DTYPES)} dtypes agree")


if __name__ == "__main__":
    main()
