"""The kgraph.matmul GPU test and benchmark cases (used by build-gpu-cases.py).

Each case is one ``func.func @main(%a, %b)`` returning one ``kgraph.matmul``.
Manifest entries (section "matmul" for the tests, "matmul_bench" for
bench/bench_matmul.py) carry, besides the fields every case has (name, op,
attrs, inputs with shapes/dtypes/value domains, output, mlir/ptx/plan):

- ``dims``: ``{"batch": B or null, "m": M, "n": N, "k": K}`` (logical sizes:
  A is [B,]MxK and B is [B,]KxN before the transposes);
- ``combo``: the type combination, e.g. ``f16_f32`` (inputs f16, output f32)
  or ``f32_tf32`` (f32 with ``precision = tf32``): test/GPU/matmul_ref.py
  derives the tolerance from it;
- ``check``: ``"matmul"`` (float: error bound per element and relative norm,
  both scaled with K; i8 -> i32: exact).

Shapes are written M x N x K (batched: B x M x N x K), as in
../shared/docs/h200-anchors.md.
"""

from case_common import GemmLikeCase, check_unique_names, ttype

#: Type combinations: combo -> (operand dtype, result dtype, precision attr).
COMBOS = {
    "f16_f32": ("f16", "f32", None),
    "f16_f16": ("f16", "f16", None),
    "bf16_f32": ("bf16", "f32", None),
    "bf16_bf16": ("bf16", "bf16", None),
    "f32_f32": ("f32", "f32", None),        # precision ieee (the default)
    "f32_tf32": ("f32", "f32", "tf32"),
    "i8_i32": ("i8", "i32", None),
}

#: (M, N, K) of every combination: a tile multiple, tiny and awkward ones,
#: K not a multiple of 8 (5, 17, 255, 300), odd M and N, GEMV-like ones, and
#: the two odd anchor shapes that are cheap enough for a float64 reference.
SHAPES = [
    (128, 128, 64),
    (1, 1, 1),
    (7, 13, 5),
    (33, 65, 17),
    (100, 200, 300),
    (127, 129, 255),
    (1, 1000, 256),
    (1000, 1, 17),
    (3136, 64, 576),
    (256, 1000, 2048),
]
#: Batched (B, M, N, K) of every combination.
BATCHED = [(3, 65, 33, 17), (8, 128, 128, 128)]
#: Transposed operands: (combos, shapes) getting transpose_a, transpose_b and
#: both (the plain layout is in SHAPES already).
TRANSPOSED = [
    (("f16_f32",), [(33, 65, 17), (127, 129, 255), (128, 128, 64)]),
    (("f16_f16", "bf16_f32", "bf16_bf16", "f32_f32", "f32_tf32", "i8_i32"),
     [(33, 65, 17)]),
]
#: Batched and transposed.
BATCHED_TRANSPOSED = [("f16_f32", (3, 65, 33, 17)), ("f32_tf32", (3, 65, 33, 17))]
LAYOUTS = [(True, False), (False, True), (True, True)]

#: wgmma (sm_90a) with pinned configurations, so that the correctness tests
#: reach it for shapes the model gives mma.sync: tag -> (tile_m, tile_n,
#: warps_m, warps_n, stages, instruction N), tile_k 64. Warpgroups are 4
#: warps along M, each (tile_m / (warps_m / 4)) x (tile_n / warps_n).
WGMMA_CONFIGS = {
    "wg2x1_n128": (128, 128, 8, 1, 4, 128),     # two 64-row warpgroups
    "wg1x2_n128": (128, 256, 4, 2, 4, 128),     # the 4096^3 default: 2 slabs
    "wg2x2_n64": (128, 128, 8, 2, 2, 64),       # 2 stages: wait_group 0
    "wg1x1_n64": (64, 64, 4, 1, 3, 64),
    "wg1x1_n96": (128, 96, 4, 1, 3, 96),        # N % 64 != 0: B^T only
    # Tiles sized to the SM count (the model's one-wave grids):
    "wg1x1_n112": (128, 112, 4, 1, 7, 112),     # 7 stages; B^T only
    "wg3slab_n128": (192, 128, 4, 1, 5, 128),   # three 64-row slabs
    "wg3slab_1x2_n64": (192, 128, 4, 2, 5, 64), # two warpgroups of 192x64
}
#: Tags whose kernels load with TMA (copy = tma; the strides of A, B and
#: the result must be multiples of 16 bytes).
WGMMA_TMA_TAGS = {"wg1x1_n112_tma": "wg1x1_n112",
                  "wg3slab_n128_tma": "wg3slab_n128",
                  "wg3slab_1x2_n64_tma": "wg3slab_1x2_n64"}
#: (config tag, combo, batch, (M, N, K), transpose_a, transpose_b).
WGMMA_CASES = [
    (tag, "f16_f32", None, mnk, ta, tb)
    for tag, layouts in (("wg2x1_n128", [(False, False), (True, True)]),
                         ("wg1x2_n128", [(False, False), (False, True)]),
                         ("wg2x2_n64", [(True, False), (False, True)]),
                         ("wg1x1_n64", [(True, False), (True, True)]),
                         ("wg1x1_n96", [(False, True), (True, True)]),
                         ("wg1x1_n112", [(False, True), (True, True)]),
                         ("wg3slab_n128", [(False, False), (False, True)]),
                         ("wg3slab_1x2_n64", [(True, False), (False, True)]))
    for ta, tb in layouts
    for mnk in [(128, 128, 64), (33, 65, 17), (127, 129, 255),
                (256, 1000, 2048)]
] + [
    ("wg2x1_n128", "f16_f16", None, (127, 129, 255), False, False),
    ("wg1x2_n128", "bf16_f32", None, (127, 129, 255), False, False),
    ("wg1x1_n96", "bf16_bf16", None, (127, 129, 255), True, True),
    ("wg2x2_n64", "bf16_bf16", None, (100, 200, 300), False, True),
    ("wg1x1_n64", "f16_f32", 3, (65, 33, 17), True, True),
    ("wg1x1_n112_tma", "f16_f32", None, (600, 392, 3000), False, True),
    ("wg1x1_n112_tma", "f16_f16", None, (200, 520, 136), False, True),
    ("wg3slab_n128_tma", "f16_f16", None, (200, 136, 520), False, False),
    ("wg3slab_n128_tma", "bf16_f32", None, (600, 392, 3000), False, True),
    ("wg3slab_1x2_n64_tma", "bf16_bf16", None, (600, 392, 3000), False, True),
    ("wg2x1_n128", "bf16_bf16", 8, (128, 128, 128), False, False),
]
#: Stream-K grids (TMA copies, 128x128 tiles, persistent blocks over the
#: tiles' iterations): (combo, (M, N, K), transpose_b, stream_k). Ragged M,
#: N and K; blocks that split tiles (several partials per tile, a tile
#: finished by a block that did not start it) and blocks of whole tiles.
STREAM_K_CASES = [
    # (getStreamKSchedule: rounds of whole tiles, then the rest split in k)
    ("f16_f32", (200, 136, 520), False, 5),      # 4 tiles x 9: whole, a block idle
    ("f16_f32", (200, 136, 520), False, 2),      # two whole tiles per block
    ("f16_f16", (256, 1000, 2048), False, 12),   # a round, 4 tiles: head + 2 pieces
    ("bf16_bf16", (256, 1000, 2048), True, 8),   # two whole tiles per block
    ("f16_f32", (130, 72, 4104), False, 7),      # 2 tiles x 65: head + 2 pieces
    ("f16_f32", (600, 392, 3000), False, 7),     # 2 rounds; 1 pool block, 6 pieces
    ("bf16_bf16", (264, 136, 6000), True, 9),    # 6 tiles split, 2 pieces a pool block
]


def stream_k_config(blocks):
    return ("#kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, "
            "warps_m = 4, warps_n = 1, stages = 4, instruction = wgmma, "
            "instruction_shape = [64, 128, 16], load_width = 8, "
            f"smem_padding = 0, copy = tma, stream_k = {blocks}>")


#: Memcheck subset of the wgmma cases: the small shapes of two configs.
MEMCHECK_WGMMA = {(33, 65, 17), (65, 33, 17)}
MEMCHECK_WGMMA_TAGS = {"wg2x1_n128", "wg1x1_n64", "wg3slab_n128"}


def load_width(*extents, elem_bytes=2):
    """The widest load (at most 16 bytes) dividing every contiguous extent,
    as the tiling model picks it."""
    width = 16 // elem_bytes
    while width > 1 and any(e % width for e in extents):
        width //= 2
    return width


def wgmma_config(tag, lw):
    tm, tn, wm, wn, stages, inst_n = WGMMA_CONFIGS[WGMMA_TMA_TAGS.get(tag, tag)]
    copy = ", copy = tma" if tag in WGMMA_TMA_TAGS else ""
    return (f"#kgraph.matmul_config<tile_m = {tm}, tile_n = {tn}, "
            f"tile_k = 64, warps_m = {wm}, warps_n = {wn}, stages = {stages}, "
            f"instruction = wgmma, instruction_shape = [64, {inst_n}, 16], "
            f"load_width = {lw}, smem_padding = 0{copy}>")


#: Value domains: floats uniform in [-1, 1]; i8 integers in [-8, 8], so every
#: i32 result is exact (|sum| <= 64 K) and so is its float64 reference.
FLOAT_DOMAIN = {"dist": "uniform", "low": -1.0, "high": 1.0}
INT8_DOMAIN = {"dist": "int", "low": -8, "high": 8}

#: Shapes of the benchmark (bench/bench_matmul.py): squares and the odd
#: anchor shapes, for each of its combos (output dtype = input dtype, as
#: torch.matmul computes it).
BENCH_SQUARES = [1024, 2048, 4096, 8192]
BENCH_ODD = [(16384, 1024, 4096), (8192, 3072, 768), (256, 1000, 2048),
             (3136, 64, 576)]
BENCH_COMBOS = {"f32": "f32_f32", "tf32": "f32_tf32", "f16": "f16_f16",
                "bf16": "bf16_bf16"}

#: Memcheck subset (compute-sanitizer is slow on big GEMMs): these small
#: shapes for every combination, the transposed ones of f16_f32 in every
#: layout and of the other combinations with both operands transposed.
MEMCHECK_SHAPES = {(7, 13, 5), (33, 65, 17)}
MEMCHECK_BATCHED = {(3, 65, 33, 17)}
MEMCHECK_ALL_LAYOUTS = {"f16_f32"}


class MatmulCase(GemmLikeCase):
    """One kgraph.matmul case (see GemmLikeCase)."""

    op = "matmul"

    def __init__(self, combo, m, n, k, batch=None, transpose_a=False,
                 transpose_b=False, explicit_ieee=False, bench=False,
                 bench_name=None):
        if combo not in COMBOS:
            raise ValueError(f"unknown matmul combo {combo!r}")
        in_dt, out_dt, precision = COMBOS[combo]
        self.combo = combo
        self.dims = {"batch": batch, "m": m, "n": n, "k": k}
        self.transpose_a = transpose_a
        self.transpose_b = transpose_b
        self.precision = precision or ("ieee" if explicit_ieee else None)
        self.bench = bench
        self.bench_kind = None
        self.memcheck = False
        lead = [batch] if batch is not None else []
        a_shape = lead + ([k, m] if transpose_a else [m, k])
        b_shape = lead + ([n, k] if transpose_b else [k, n])
        dom = INT8_DOMAIN if in_dt == "i8" else FLOAT_DOMAIN
        self.inputs = [
            {"name": "a", "shape": a_shape, "dtype": in_dt, "domain": dict(dom)},
            {"name": "b", "shape": b_shape, "dtype": in_dt, "domain": dict(dom)},
        ]
        self.output = {"shape": lead + [m, n], "dtype": out_dt}
        self.attrs = {"transpose_a": transpose_a, "transpose_b": transpose_b,
                      "precision": self.precision or "ieee"}
        if bench_name:
            self.name = bench_name
        else:
            shape = "x".join(str(d) for d in lead + [m, n, k])
            lay = {(False, False): "", (True, False): "_ta",
                   (False, True): "_tb", (True, True): "_tatb"}[
                       (transpose_a, transpose_b)]
            ieee = "_ieee" if explicit_ieee else ""
            prefix = "matmul_batched_" if batch is not None else "matmul_"
            self.name = f"{prefix}{combo}{ieee}_{shape}{lay}"

    def body(self):
        a, b = self.inputs
        prec = f" precision = {self.precision}" if self.precision else ""
        flags = [f for f, on in (("transpose_a", self.transpose_a),
                                 ("transpose_b", self.transpose_b)) if on]
        attr = f" {{{', '.join(flags)}}}" if flags else ""
        return (f"%r = kgraph.matmul %a, %b{prec}{attr} : "
                f"{ttype(a['shape'], a['dtype'])}, "
                f"{ttype(b['shape'], b['dtype'])} -> "
                f"{ttype(self.output['shape'], self.output['dtype'])}")


def all_cases():
    """The correctness cases (manifest section "matmul")."""
    cases = []
    for combo in COMBOS:
        for m, n, k in SHAPES:
            c = MatmulCase(combo, m, n, k)
            c.memcheck = (m, n, k) in MEMCHECK_SHAPES
            cases.append(c)
        for bmnk in BATCHED:
            c = MatmulCase(combo, *bmnk[1:], batch=bmnk[0])
            c.memcheck = bmnk in MEMCHECK_BATCHED
            cases.append(c)
    for combos, shapes in TRANSPOSED:
        for combo in combos:
            for m, n, k in shapes:
                for ta, tb in LAYOUTS:
                    c = MatmulCase(combo, m, n, k, transpose_a=ta, transpose_b=tb)
                    c.memcheck = (m, n, k) in MEMCHECK_SHAPES and (
                        combo in MEMCHECK_ALL_LAYOUTS or (ta and tb))
                    cases.append(c)
    for combo, (b, m, n, k) in BATCHED_TRANSPOSED:
        c = MatmulCase(combo, m, n, k, batch=b, transpose_a=True,
                       transpose_b=True)
        c.memcheck = True
        cases.append(c)
    for tag, combo, batch, (m, n, k), ta, tb in WGMMA_CASES:
        c = MatmulCase(combo, m, n, k, batch=batch, transpose_a=ta,
                       transpose_b=tb)
        c.name = c.name.replace("matmul_", f"matmul_wgmma_{tag}_", 1)
        c.pinned_config = wgmma_config(
            tag, load_width(m if ta else k, k if tb else n))
        c.memcheck = (m, n, k) in MEMCHECK_WGMMA and tag in MEMCHECK_WGMMA_TAGS
        cases.append(c)
    for combo, (m, n, k), tb, blocks in STREAM_K_CASES:
        c = MatmulCase(combo, m, n, k, transpose_b=tb)
        c.name = c.name.replace("matmul_", f"matmul_streamk{blocks}_", 1)
        c.pinned_config = stream_k_config(blocks)
        c.memcheck = m * n * k < 2 ** 25
        cases.append(c)
    # precision = ieee written out (the default, spelled explicitly).
    c = MatmulCase("f32_f32", 33, 65, 17, explicit_ieee=True)
    cases.append(c)
    check_unique_names(cases, "matmul")
    return cases


def bench_shapes():
    return [(s, s, s) for s in BENCH_SQUARES] + list(BENCH_ODD)


def bench_name(kind, m, n, k):
    return f"bench_matmul_{kind}_{m}x{n}x{k}"


def bench_cases():
    """The benchmark kernels (manifest section "matmul_bench"): for each
    bench type (f32, tf32, f16, bf16) and shape, A [M,K] x B [K,N]."""
    cases = []
    for kind, combo in BENCH_COMBOS.items():
        for m, n, k in bench_shapes():
            c = MatmulCase(combo, m, n, k, bench=True,
                           bench_name=bench_name(kind, m, n, k))
            c.bench_kind = kind
            cases.append(c)
    return cases

