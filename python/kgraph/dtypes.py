"""The element types of launch plans: one row per plan ``dtype``.

The same table as the compiler's (``include/kgraph/Target/ElementTypes.h``):
``test/Target/element-types.test`` compares every row with the JSON of
``kgraph-opt --print-element-types``, so a type added to one side only fails
the tests. The runtime, the plan checker and the CUDA binding take their
dtype names, element sizes, host types and tensor-map enums from here.
"""

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class DType:
    """One plan dtype.

    ``bytes``: bytes per element in a buffer (i1 is stored one byte per
    element). ``torch`` / ``numpy``: the host dtype names (``torch.<name>``,
    ``numpy.<name>``; numpy None where numpy has no such type). ``tensor_map``:
    cuda.h's CUtensorMapDataType of a TMA tensor map over such a buffer, None
    where plans may not name one.
    """
    name: str
    bytes: int
    torch: str
    numpy: Optional[str]
    tensor_map: Optional[int]


#: Every plan dtype, in the compiler table's order.
DTYPES = {d.name: d for d in (
    DType("f32", 4, "float32", "float32", 7),    # CU_TENSOR_MAP_DATA_TYPE_FLOAT32
    DType("f16", 2, "float16", "float16", 6),    # ..._FLOAT16
    DType("bf16", 2, "bfloat16", None, 9),       # ..._BFLOAT16
    DType("i8", 1, "int8", "int8", None),
    DType("i32", 4, "int32", "int32", None),
    DType("i1", 1, "bool", "bool", None),
)}
