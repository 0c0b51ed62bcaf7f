//===- KGraphAttrs.td - kgraph enums and attributes --------*- tablegen -*-===//
//
// Enums of the user-facing ops. Each prints as a bare keyword inside an op's
// custom form and as `#kgraph<name value>` in the generic form.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHATTRS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHATTRS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "mlir/IR/EnumAttr.td"

def KGraph_CompareDirection : I32EnumAttr<"CompareDirection",
    "comparison predicate of kgraph.compare", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_CompareDirectionAttr
    : EnumAttr<KGraph_Dialect, KGraph_CompareDirection, "compare_direction">;

def KGraph_Layout : I32EnumAttr<"Layout",
    "activation layout of conv2d and pool2d", [
      I32EnumAttrCase<"nchw", 0>, I32EnumAttrCase<"nhwc", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_LayoutAttr : EnumAttr<KGraph_Dialect, KGraph_Layout, "layout">;

def KGraph_PoolKind : I32EnumAttr<"PoolKind", "kind of kgraph.pool2d", [
      I32EnumAttrCase<"max", 0>, I32EnumAttrCase<"avg", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_PoolKindAttr : EnumAttr<KGraph_Dialect, KGraph_PoolKind, "pool_kind">;

def KGraph_ReduceKind : I32EnumAttr<"ReduceKind", "kind of kgraph.reduce", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"mean", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_ReduceKindAttr
    : EnumAttr<KGraph_Dialect, KGraph_ReduceKind, "reduce_kind">;

/// `tf32` lets an f32 matmul or conv2d run on tensor cores with tf32 inputs.
def KGraph_Precision : I32EnumAttr<"Precision",
    "arithmetic precision an f32 matmul or conv2d may use", [
      I32EnumAttrCase<"ieee", 0>, I32EnumAttrCase<"tf32", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_PrecisionAttr
    : EnumAttr<KGraph_Dialect, KGraph_Precision, "precision">;

/// The kernel family of a `kgraph.fused` group: which selection model picks
/// its configuration and which emitter lowers it. `copy` is reserved for
/// data-movement kernels (concat, standalone broadcasts and slices);
/// `transpose` is a lone kgraph.transpose that moves its innermost dim (a
/// tiled shared-memory kernel, TransposeEmitter.cpp); `window` is one
/// channels-last pool2d or depthwise/grouped conv2d with elementwise
/// producers and consumers (a direct kernel over channel vectors,
/// WindowEmitter.cpp).
def KGraph_GroupKind : I32EnumAttr<"GroupKind",
    "kernel family of a kgraph.fused group", [
      I32EnumAttrCase<"elementwise", 0>, I32EnumAttrCase<"gemm", 1>,
      I32EnumAttrCase<"reduce", 2>, I32EnumAttrCase<"stencil", 3>,
      I32EnumAttrCase<"copy", 4>, I32EnumAttrCase<"transpose", 5>,
      I32EnumAttrCase<"window", 6>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}
def KGraph_GroupKindAttr
    : EnumAttr<KGraph_Dialect, KGraph_GroupKind, "group_kind">;

//===----------------------------------------------------------------------===//
// Code generation decisions, recorded in the IR
//===----------------------------------------------------------------------===//

def KGraph_ElementwiseConfigAttr
    : KGraph_Attr<"ElementwiseConfig", "elementwise_config"> {
  let summary = "launch configuration of an elementwise kernel";
  let description = [{
    Written by `kgraph-tile` on a `kgraph.fused` group of elementwise ops
    (attribute name `kgraph.config`) and read by `kgraph-lower-to-gpu`. A
    configuration already present is respected, so tests and tuners can pin
    it. Each thread handles `vector_width` consecutive elements per step
    (16-byte accesses for the widest element type), `unroll` steps per loop
    trip; `grid_size` blocks of `block_size` threads stride over the tensor.

    Example:
    ```mlir
    #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 2, grid_size = 1056>
    ```
  }];
  let parameters = (ins "int64_t":$block_size, "int64_t":$vector_width,
                        "int64_t":$unroll, "int64_t":$grid_size);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

/// The instruction a matmul-like kernel computes its tile with.
def KGraph_MmaKind : I32EnumAttr<"MmaKind",
    "instruction family of a matmul kernel", [
      I32EnumAttrCase<"fma", 0>, I32EnumAttrCase<"mma_sync", 1>,
      I32EnumAttrCase<"wgmma", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}

/// How a matmul kernel moves its operand tiles into shared memory.
def KGraph_CopyKind : I32EnumAttr<"CopyKind",
    "operand copy mechanism of a matmul kernel", [
      I32EnumAttrCase<"cp_async", 0>, I32EnumAttrCase<"tma", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::kgraph";
}

def KGraph_CopyKindParameter : EnumParameter<KGraph_CopyKind> {
  let defaultValue = "::kgraph::CopyKind::cp_async";
}

def KGraph_MatmulConfigAttr
    : KGraph_Attr<"MatmulConfig", "matmul_config"> {
  let summary = "tiling, pipelining and instruction choice of a matmul kernel";
  let description = [{
    Written by `kgraph-tile` on a `kgraph.fused` group whose root is a
    `kgraph.matmul` or `kgraph.conv2d` (attribute name `kgraph.config`) and
    read by the lowering. A configuration already present is respected.

    - `tile_m`, `tile_n`, `tile_k`: the block tile; one block computes a
      `tile_m x tile_n` tile of the output, stepping through K by `tile_k`.
    - `warps_m`, `warps_n`: the warp grid; each warp computes a
      `tile_m / warps_m x tile_n / warps_n` tile. Threads per block are
      `32 * warps_m * warps_n`.
    - `stages`: operand tiles in flight in shared memory (1: load, barrier,
      compute; >= 2: asynchronous copies in a software pipeline).
    - `instruction`, `instruction_shape`: `fma` (SIMT, shape [1, 1, 1]),
      `mma_sync` (e.g. [16, 8, 16] for f16) or `wgmma` ([64, N, 16] for
      f16/bf16 on sm_90a); the shape must be one the SM target table lists
      for the operand type. For `wgmma`, 4 consecutive warps form a
      warpgroup and the warpgroups a `warps_m / 4 x warps_n` grid: each
      computes a `(tile_m / (warps_m / 4)) x (tile_n / warps_n)` tile, a
      multiple of the instruction shape (64-row slabs by N-wide
      instructions); its tiles are swizzled, so `smem_padding = 0`.
    - `load_width`: elements per global load of an operand (8 for 16-byte
      f16 copies; 1 when rows are not 16-byte aligned).
    - `smem_padding`: elements added to each shared-memory row so that
      `ldmatrix` and the copies are free of bank conflicts.
    - `group_m` (optional, default 1): block rasterization. With 1, blocks
      run along N first (grid x over N tiles, y over M tiles). With G > 1,
      the grid is one-dimensional and consecutive blocks walk a band of G
      M tiles column by column, so the blocks resident at one time share
      their A and B panels in L2 (for GEMMs whose operands do not fit in
      L2).
    - `copy` (optional, default `cp_async`): how operand tiles reach shared
      memory. `cp_async`: every thread copies 16-byte chunks (synchronous
      copies where the target lacks cp.async or a prologue converts the
      operand). `tma` (instruction = wgmma on a target with TMA, plain
      matrix operands without prologue, rows 16-byte aligned): one producer
      warpgroup more than the warp grid issues cp.async.bulk.tensor loads
      that complete on a full/empty mbarrier pair per stage; the consumer
      warpgroups only wait, multiply and release (see TmaPipeline.cpp). The
      kernel takes the operands' tensor maps as one extra argument (see
      docs/launch-plan.md).
    - `stream_k` (optional, default 0): with B > 0 (copy = tma only), a
      persistent grid of B blocks shares the output tiles (stream-K), as
      getStreamKSchedule says: rounds of whole tiles (block b takes tile
      i B + b in round i), then the tiles left over split in k into a head
      (one block) and pieces (taken in turn by the other blocks), so that
      blocks reading the same operand tiles read them at the same time. A
      split tile is finished by the last of its blocks to arrive: each
      writes its partial sums to the kernel's workspace
      (docs/launch-plan.md), and the last adds them up in a fixed order
      and runs the epilogue. For grids of few tiles with a long K, grids
      that leave a partial wave, and short main loops over many tiles
      (whole tiles per block: the next tile's loads under this one's
      epilogue); the model picks it where it estimates a 15% gain.

    Example:
    ```mlir
    #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2,
        warps_n = 2, stages = 4, instruction = mma_sync,
        instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>
    #kgraph.matmul_config<tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 4,
        warps_n = 2, stages = 4, instruction = wgmma,
        instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0>
    ```
  }];
  let parameters = (ins "int64_t":$tile_m, "int64_t":$tile_n, "int64_t":$tile_k,
                        "int64_t":$warps_m, "int64_t":$warps_n,
                        "int64_t":$stages,
                        EnumParameter<KGraph_MmaKind>:$instruction,
                        ArrayRefParameter<"int64_t">:$instruction_shape,
                        "int64_t":$load_width, "int64_t":$smem_padding,
                        DefaultValuedParameter<"int64_t", "1">:$group_m,
                        KGraph_CopyKindParameter:$copy,
                        DefaultValuedParameter<"int64_t", "0">:$stream_k);
  let assemblyFormat = [{
    `<` `tile_m` `=` $tile_m `,` `tile_n` `=` $tile_n `,` `tile_k` `=` $tile_k
    `,` `warps_m` `=` $warps_m `,` `warps_n` `=` $warps_n `,` `stages` `=` $stages
    `,` `instruction` `=` $instruction
    `,` `instruction_shape` `=` `[` $instruction_shape `]`
    `,` `load_width` `=` $load_width `,` `smem_padding` `=` $smem_padding
    `` custom<MatmulConfigTail>($group_m, $copy, $stream_k) `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads per block.
    int64_t getNumThreads() const { return 32 * getWarpsM() * getWarpsN(); }
    /// Threads per block as launched: the warp grid plus, with copy = tma,
    /// the producer warpgroup.
    /// Whether the grid is a persistent stream-K grid.
    bool isStreamK() const { return getStreamK() > 0; }
    int64_t getBlockThreads() const {
      return getNumThreads() + (getCopy() == ::kgraph::CopyKind::tma ? 128 : 0);
    }
    /// Warp tile extents.
    int64_t getWarpTileM() const { return getTileM() / getWarpsM(); }
    int64_t getWarpTileN() const { return getTileN() / getWarpsN(); }
  }];
}

def KGraph_ReduceConfigAttr : KGraph_Attr<"ReduceConfig", "reduce_config"> {
  let summary = "mapping of a reduction kernel onto the GPU";
  let description = [{
    Written by `kgraph-tile` on a reduction group (one `kgraph.reduce` with
    elementwise producers and consumers; attribute name `kgraph.config`) and
    read by the lowering. A configuration already present is respected after
    it is checked against the group's shape.

    Each output element is a *row*: the `R` input elements reduced into it.
    - `threads_per_row` (T, a power of two): the threads that reduce one row
      together. T > 1: the threads of a row stride over it, combine their
      partial results with warp shuffles and, when T > 32, through shared
      memory (a warp or a whole block per output, for long reductions).
      T = 1: each thread walks its rows alone (strided reductions, where
      neighbouring threads own neighbouring outputs, so loads coalesce).
    - `rows_per_block` (P): rows one block reduces at a time; a block has
      `T * P` threads (a multiple of 32, at most 1024).
    - `vector_width` (W): consecutive elements per load. T > 1: W consecutive
      reduced elements (the innermost input dimension must be reduced and
      its extent a multiple of W); T = 1: W consecutive outputs per thread
      (the innermost input dimension must be kept and its extent a multiple
      of W).
    - `grid_size`: blocks; they stride over the groups of `P` (T = 1:
      `P * W`) outputs.
    - `row_vectors` (C, optional, default 0): only for a *multi-reduction*
      group, one that needs its rows again after a reduction (several
      reductions over the same rows, or values over the whole rows computed
      from a reduction: softmax, layer norm). There W counts consecutive
      reduced elements for any T (the innermost input dimension must be
      reduced for W > 1), the T threads of a row hold its elements in
      vectors of W, and C > 0 keeps `C` such vectors per thread in
      registers: the row is read from global memory once (C * T * W must
      cover the row; at most 64 elements per thread). C = 0: every
      reduction re-reads the group's inputs over the row (from L2 while
      the rows in flight fit there), for rows too long for registers.

    Example (a block of 256 threads per row, 16-byte f32 loads):
    ```mlir
    #kgraph.reduce_config<threads_per_row = 256, rows_per_block = 1, vector_width = 4, grid_size = 8192>
    ```
    A softmax over rows of 4096 f32 held in registers (16 per thread):
    ```mlir
    #kgraph.reduce_config<threads_per_row = 256, rows_per_block = 1, vector_width = 4, grid_size = 4096, row_vectors = 4>
    ```
  }];
  let parameters = (ins "int64_t":$threads_per_row, "int64_t":$rows_per_block,
                        "int64_t":$vector_width, "int64_t":$grid_size,
                        DefaultValuedParameter<"int64_t", "0">:$row_vectors);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads per block.
    int64_t getBlockSize() const {
      return getThreadsPerRow() * getRowsPerBlock();
    }
  }];
}

def KGraph_StencilConfigAttr
    : KGraph_Attr<"StencilConfig", "stencil_config"> {
  let summary = "output tile and thread layout of a stencil kernel";
  let description = [{
    Written by `kgraph-tile` on a stencil group (`kgraph.conv2d` with stride 1
    and "same" padding, `kgraph.pool2d`, and elementwise ops on one spatial
    grid, channels <= 4; or one `kgraph.pool2d` of any stride) under the
    attribute name `kgraph.config`, and read by `kgraph-lower-to-gpu`. A
    configuration already present is validated against the target and kept.

    - `tile_h`, `tile_w`: the output tile one block computes (of one image
      `n`); the grid is `ceil(W / tile_w) x ceil(H / tile_h) x N`.
    - `block_x`, `block_y`: threads per block are `block_x * block_y`
      (a multiple of 32, at most 1024). Consecutive threads take consecutive
      `x`, so global loads and stores are coalesced.
    - `rows_per_thread`: consecutive output rows one thread computes per step
      (>= 1, divides `tile_h`); a stencil tap loaded from shared memory is
      reused by all of them.
    - `cols_per_thread`: consecutive output columns one thread computes per
      step (1, 2 or 4, divides `tile_w`; 1 when omitted). The thread's
      strip is `rows_per_thread x cols_per_thread`; shared-memory rows are
      read as aligned vectors of `cols_per_thread` floats, each reused by
      every column of the strip that needs it.

    Every intermediate is computed over the tile grown by the halo its
    consumers need and kept in shared memory, so the tile size is bounded by
    the target's shared memory per block (checked by `kgraph-tile`).

    Example:
    ```mlir
    #kgraph.stencil_config<tile_h = 64, tile_w = 32, block_x = 32, block_y = 8, rows_per_thread = 4>
    #kgraph.stencil_config<tile_h = 64, tile_w = 64, block_x = 16, block_y = 16, rows_per_thread = 4, cols_per_thread = 4>
    ```
  }];
  let parameters = (ins "int64_t":$tile_h, "int64_t":$tile_w,
                        "int64_t":$block_x, "int64_t":$block_y,
                        "int64_t":$rows_per_thread,
                        DefaultValuedParameter<"int64_t", "1">:$cols_per_thread);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads per block.
    int64_t getNumThreads() const { return getBlockX() * getBlockY(); }
  }];
}

def KGraph_TransposeConfigAttr
    : KGraph_Attr<"TransposeConfig", "transpose_config"> {
  let summary = "tile and thread layout of a tiled transpose kernel";
  let description = [{
    Written by `kgraph-tile` on a `transpose` group (one `kgraph.transpose`
    whose permutation moves the innermost dim; attribute name
    `kgraph.config`) and read by `kgraph-lower-to-gpu`. A configuration
    already present is checked against the group and kept.

    The permutation is first canonicalized: size-1 dims are dropped and dims
    that stay adjacent and in order are merged (NCHW -> NHWC of
    `64x256x56x56` is `[64, 256, 3136]` with permutation `[0, 2, 1]`). Let
    `a` be the input's innermost dim and `b` the input dim that becomes the
    output's innermost dim; every other dim is a batch dim. One block moves a
    `tile_out x tile_in` tile (`tile_out` elements along `b`, `tile_in`
    along `a`) through shared memory:
    - load: rows of `tile_in` consecutive input elements, `vector_width`
      (V) elements per global load, into a shared tile whose rows are padded
      by `smem_padding` elements (against bank conflicts);
    - barrier;
    - store: rows of `tile_out` consecutive output elements, V per global
      store, read column-wise from the shared tile.
    `block_size` threads walk each phase's vectors in turn; the grid is
    `tiles_a * tiles_b` blocks in x and `min(batch, 65535)` in z (z loops over
    the batch). Edge tiles are masked, so any shape is correct; V must divide
    both extents (16-byte accesses at most).

    Example (f32, 16-byte accesses):
    ```mlir
    #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 4, block_size = 256, smem_padding = 1>
    ```
  }];
  let parameters = (ins "int64_t":$tile_in, "int64_t":$tile_out,
                        "int64_t":$vector_width, "int64_t":$block_size,
                        "int64_t":$smem_padding);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def KGraph_WindowConfigAttr
    : KGraph_Attr<"WindowConfig", "window_config"> {
  let summary = "thread layout of a direct window kernel over channels";
  let description = [{
    Written by `kgraph-tile` on a `window` group (one channels-last
    `kgraph.pool2d`, or `kgraph.conv2d` with `groups > 1` and few input
    channels per group such as a depthwise convolution, with elementwise
    producers of its input and consumers of its result; attribute name
    `kgraph.config`) and read by `kgraph-lower-to-gpu`. A configuration
    already present is checked against the group and kept.

    Each thread owns `vector_width` (W) consecutive output channels for its
    whole life (a depthwise filter's taps stay in its registers) and walks
    output pixels; per pixel it reads every window tap of the input as one
    W-wide load (channels are innermost), so a warp's loads cover whole
    lines of the input.
    - `vector_width` (W): a power of two dividing the output channels, at
      most 16 bytes of every operand read or written W-wide.
    - `block_x`: threads along the channel vectors (`C_out / W` of them;
      `ceil(C_out / W / block_x)` blocks in grid y);
    - `block_y`: output pixels a block takes at a time; a block has
      `block_x * block_y` threads (a multiple of 32, at most 1024).
    - `grid_size`: blocks in grid x; they stride over the output strips
      `block_y` at a time.
    - `strip` (R, default 1, omitted when 1): consecutive output pixels of
      one row a thread computes together; the input columns their windows
      share are loaded once (a 3x3 stride-1 window: 3 * (R + 2) loads for R
      pixels instead of 9 * R). The `N * OH * ceil(OW / R)` strips are what
      the blocks stride over. R is at most 16 and OW; R > 1 needs
      every window tap unrolled (at most 64 taps).

    Example (64 f16 channels, 16-byte loads, 8 threads per pixel, 32 pixels
    per block):
    ```mlir
    #kgraph.window_config<vector_width = 8, block_x = 8, block_y = 32, grid_size = 8448>
    ```
  }];
  let parameters = (ins "int64_t":$vector_width, "int64_t":$block_x,
                        "int64_t":$block_y, "int64_t":$grid_size,
                        DefaultValuedParameter<"int64_t", "1">:$strip);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads per block.
    int64_t getNumThreads() const { return getBlockX() * getBlockY(); }
  }];
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHATTRS_TD
