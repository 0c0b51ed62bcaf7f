//===- Passes.td - kgraph dialect transforms ---------------*- tablegen -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_TD
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KGraphFuse : Pass<"kgraph-fuse", "::mlir::func::FuncOp"> {
  let summary = "Group kernel ops into as few kgraph.fused kernels as pays";
  let description = [{
    Forms `kgraph.fused` groups of the kinds of docs/fusion.md, in this
    order: stencil chains (conv2d/pool2d of stride 1, same size, window at
    most 7x7, at most 4 channels, with elementwise ops on the same grid),
    GEMM groups (one matmul or non-stencil conv2d with its elementwise
    epilogue of the result's shape and, for matmul, up to two cast / scale
    prologue ops per operand), reduction groups (one reduce with elementwise
    producers and consumers), then maximal elementwise groups (any DAG of
    elementwise ops with broadcasting; a value also used outside becomes an
    extra result). No group may both feed and consume another group or op
    (checked on the graph of groups). A small elementwise cone (at most
    `max-recompute` ops) is cloned into a consumer group where that avoids a
    cycle or a round trip through memory (a shared prologue op, a shared
    reduce producer); a matmul, conv2d, pool2d or reduce is never cloned.
    One-op groups are not formed: kgraph-form-kernels wraps what is left.

    With `report=true` every group formed gets a remark listing its ops by
    name and location, and every kernel op left alone a remark saying why.

    Before:
    ```mlir
    %0 = kgraph.matmul %a, %b : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
    %1 = kgraph.add %0, %bias : tensor<64x128xf32>, tensor<128xf32>
    %2 = kgraph.relu %1 : tensor<64x128xf32>
    ```
    After:
    ```mlir
    %2 = kgraph.fused (%a, %b, %bias) : (...) -> tensor<64x128xf32> {
    ^bb0(%x: tensor<64x32xf16>, %y: tensor<32x128xf16>, %z: tensor<128xf32>):
      %0 = kgraph.matmul %x, %y : ...
      %1 = kgraph.add %0, %z : ...
      %r = kgraph.relu %1 : tensor<64x128xf32>
      kgraph.yield %r : tensor<64x128xf32>
    }
    ```
  }];
  let options = [
    Option<"maxRecompute", "max-recompute", "unsigned", /*default=*/"4",
           "Most elementwise ops cloned into one group to recompute a value "
           "(0: never recompute)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per group formed and per kernel op left alone">,
  ];
  let dependentDialects = ["::kgraph::KGraphDialect"];
}

def KGraphPadConvChannels
    : Pass<"kgraph-pad-conv-channels", "::mlir::func::FuncOp"> {
  let summary = "Pad the few input channels of a channels-last conv2d with zeros to one vector";
  let description = [{
    An implicit-GEMM `kgraph.conv2d` (layout `nhwc`, one group, not a
    stencil or window op) whose input channels fill fewer than `bytes` bytes
    per pixel (an RGB image's 3 f16 channels are 6 bytes) gathers its im2col
    operand one element per load. This pass pads the channels with zeros to
    exactly `bytes` bytes (8 f16 channels at 16 bytes): the input and the
    filter each become a `kgraph.concat` with a splat zero along the channel
    axis, and every tap of the conv loads one vector. The result is the same
    (the zero channels add 0 * 0); the conv does `bytes / (C * element
    bytes)` times the multiply-adds and the padded input is written once by
    a copy kernel. `bytes = 0` leaves every conv alone; otherwise it must be
    4, 8 or 16 and a multiple of the element size.

    Before (`bytes = 16`):
    ```mlir
    %0 = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] padding = [3, 3, 3, 3]
        : tensor<8x224x224x3xf16>, tensor<64x7x7x3xf16> -> tensor<8x112x112x64xf16>
    ```
    After:
    ```mlir
    %zx = arith.constant dense<0.0> : tensor<8x224x224x5xf16>
    %xp = kgraph.concat %x, %zx axis = 3 : tensor<8x224x224x3xf16>, tensor<8x224x224x5xf16>
    %zw = arith.constant dense<0.0> : tensor<64x7x7x5xf16>
    %wp = kgraph.concat %w, %zw axis = 3 : tensor<64x7x7x3xf16>, tensor<64x7x7x5xf16>
    %0 = kgraph.conv2d %xp, %wp layout = nhwc strides = [2, 2] padding = [3, 3, 3, 3]
        : tensor<8x224x224x8xf16>, tensor<64x7x7x8xf16> -> tensor<8x112x112x64xf16>
    ```
  }];
  let options = [
    Option<"bytes", "bytes", "unsigned", /*default=*/"16",
           "bytes of one pixel's padded channels (0: off; 4, 8 or 16)">,
  ];
  let dependentDialects = ["::kgraph::KGraphDialect",
                           "::mlir::arith::ArithDialect"];
}

def KGraphSpaceToDepthConvs
    : Pass<"kgraph-space-to-depth-convs", "::mlir::func::FuncOp"> {
  let summary = "Rewrite a strided few-channel nhwc conv2d as a stride-1 conv over its space-to-depth input";
  let description = [{
    An implicit-GEMM `kgraph.conv2d` (layout `nhwc`, one group, dilation 1,
    not in a group) with a stride above 1 whose input channels fill less
    than 16 bytes per pixel (an RGB stem) gathers its im2col operand a few
    bytes per load. This pass rewrites it as a stride-1 conv over the
    space-to-depth rearrangement of its input: each `sh x sw` block of
    pixels becomes one pixel of `sh * sw * C` channels, zero-padded to a
    multiple of 16 bytes (before the rearrangement when that gives no more
    channels: the transpose then moves whole vectors), and the filter alike.
    The padding before becomes whole blocks by shifting the filter by zero
    taps (`-pad mod s` of them) rather than copying x with zero rows; taps
    past the filter's end are zero, a last partial block of x gets zero
    rows, rows the conv never reads are sliced off. Every tap then loads
    whole vectors, and with 16-byte pixels Hopper's TMA im2col mode can
    gather it. The rearrangement is data movement (`kgraph.concat` with
    splat zeros, `kgraph.reshape`, `kgraph.transpose`, `kgraph.slice`): copy
    kernels, the filter's small.

    Convs whose rearranged GEMM would do more than 4 times the multiply-adds
    (a 1x1 strided conv) are left alone. The result equals the conv's for
    finite inputs; an inf or NaN input element also meets the zero filter
    taps of outputs whose windows end just before it, so those become NaN
    rather than finite. `kgraph-compile` runs it by default
    (`space-to-depth-convs=false`, `kgraph-opt --space-to-depth-convs=false`
    leaves such convs as written): measured on the H200, ResNet-50's stem
    (256x224x224x3 f16, bias, relu) took 0.62 ms this way against 1.32 ms
    as written, and the whole model 7.26 ms against 7.93 ms.

    Before (the ResNet stem):
    ```mlir
    %0 = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] padding = [3, 3, 3, 3]
        : tensor<8x224x224x3xf16>, tensor<64x7x7x3xf16> -> tensor<8x112x112x64xf16>
    ```
    After (the filter's rearrangement and the zero constants not shown):
    the channels padded to 4 (on the split view, right before the transpose:
    `kgraph-fuse` makes the two one copy kernel), 2 x 2 blocks of 16
    channels, a 4 x 4 filter (one zero tap before the 7, none after) and
    padding 2 before, 1 after:
    ```mlir
    %xs = kgraph.reshape %x : tensor<8x224x224x3xf16> to tensor<8x112x2x112x2x3xf16>
    %xc = kgraph.concat %xs, %zx axis = 5 : tensor<8x112x2x112x2x3xf16>, tensor<8x112x2x112x2x1xf16>
    %xt = kgraph.transpose %xc, permutation = [0, 1, 3, 2, 4, 5] : tensor<8x112x2x112x2x4xf16>
    %xr = kgraph.reshape %xt : tensor<8x112x112x2x2x4xf16> to tensor<8x112x112x16xf16>
    %0 = kgraph.conv2d %xr, %wr layout = nhwc padding = [2, 1, 2, 1]
        : tensor<8x112x112x16xf16>, tensor<64x4x4x16xf16> -> tensor<8x112x112x64xf16>
    ```
  }];
  let dependentDialects = ["::kgraph::KGraphDialect",
                           "::mlir::arith::ArithDialect"];
}

def KGraphWinogradConvs
    : Pass<"kgraph-winograd-convs", "::mlir::func::FuncOp"> {
  let summary = "Rewrite a 3x3 stride-1 conv2d computed on FMA as Winograd F(4x4, 3x3)";
  let description = [{
    A `kgraph.conv2d` with a 3x3 filter, stride 1, dilation 1 and one group
    whose GEMM runs on FMA (its element type has no tensor-core operand
    kind at its precision: f32 without `precision = tf32`), not in a group,
    with at least `min-channels` input channels and filters and at least
    `min-macs` multiply-adds (N * OH * OW * F * C * 9), becomes the
    Winograd F(4x4, 3x3) form (Lavin & Gray): `kgraph.winograd_filter` (the
    filter's 6x6 transform per channel pair; it depends on parameters only,
    so `kgraph-lower-to-gpu{hoist-parameter-kernels}` runs it once at
    load), `kgraph.winograd_input` (each 6x6 input tile, one per 4x4 output
    tile, transformed), one `kgraph.matmul` of 36 batched GEMMs over the
    channels, and `kgraph.winograd_output` (each tile's 36 points back into
    4x4 output pixels), which `kgraph-fuse` fuses with the conv's epilogue.
    A 4x4 output tile then takes 36 multiply-adds per channel pair instead
    of 144 (fewer where the last tiles overhang the image).

    The transforms round in the element type: results differ from the
    direct conv's by a few units in the last place more (the transforms'
    coefficients reach 8 and 1/24), and an inf or NaN input pixel reaches
    every output of the tiles that read it. `kgraph-compile` runs it unless
    `winograd-convs` is off (`kgraph-opt --winograd-convs=false`).

    The defaults are measured (bench/RESULTS.md, session 23, H100): for
    the ResNet-50 layers (64 to 512 channels; 2^29.8 multiply-adds at
    batch 8) at batch 64 and 8 the Winograd form takes 0.34-0.98x the
    direct conv's time, while at batch 1 (2^26.8) it wins only at 128
    channels and takes up to 1.9x the direct time at 512.

    Before:
    ```mlir
    %0 = kgraph.conv2d %x, %w padding = [1, 1, 1, 1]
        : tensor<8x64x28x28xf32>, tensor<64x64x3x3xf32> -> tensor<8x64x28x28xf32>
    ```
    After (7 x 7 tiles per image, 392 in all):
    ```mlir
    %u = kgraph.winograd_filter %w : tensor<64x64x3x3xf32> -> tensor<36x64x64xf32>
    %v = kgraph.winograd_input %x padding = [1, 1, 1, 1] : tensor<8x64x28x28xf32> -> tensor<36x64x392xf32>
    %m = kgraph.matmul %u, %v : tensor<36x64x64xf32>, tensor<36x64x392xf32> -> tensor<36x64x392xf32>
    %0 = kgraph.winograd_output %m : tensor<36x64x392xf32> -> tensor<8x64x28x28xf32>
    ```
  }];
  let options = [
    Option<"minChannels", "min-channels", "int64_t", /*default=*/"64",
           "least input channels and filters of a conv rewritten">,
    Option<"minMacs", "min-macs", "int64_t", /*default=*/"int64_t(1) << 29",
           "least multiply-adds (N * OH * OW * F * C * 9) of a conv rewritten">,
  ];
  let dependentDialects = ["::kgraph::KGraphDialect"];
}

def KGraphSplitKConvs
    : Pass<"kgraph-split-k-convs", "::mlir::func::FuncOp"> {
  let summary = "Split the K of a deep conv2d over few pixels across more blocks (split-K)";
  let description = [{
    An implicit-GEMM `kgraph.conv2d` (one group, dilation 1, not in a
    group) whose GEMM has few output tiles and a long K, such as the last
    stages of a CNN at batch 1 (49 pixels, K = 3 * 3 * 512), keeps a few
    blocks walking K alone while most SMs idle. This pass splits its input
    channels into S slices: the conv becomes one conv of S groups, group s
    applying every filter to slice s, whose S * F output channels are
    partial sums in the accumulator type (f32 for f16, bf16 and f32; i32
    for i8), and a `kgraph.reduce sum` over the S partials (then a
    `kgraph.cast` to the conv's result type) replaces the conv. The GEMM has
    S times the blocks, each over K / S; `kgraph-fuse` fuses the conv's
    consumers (bias, residual, relu) into the sum's kernel. The grouped
    conv's filter is the filter's channel slices stacked along F (a
    reshape, a transpose, a reshape: a copy kernel that runs with the
    model, about the filter's size in traffic).

    The GEMM model decides, per conv, on `target`: the split (2, 4, ... 32)
    whose estimate (the grouped GEMM, the partials' round trip through
    memory, the filter's copy and two more kernels' launches; with
    `hoisted-filters`, a filter computed from parameters alone costs
    nothing per call and one kernel more is launched) is the lowest, taken only when it is at least `min-gain` (1.25) times below
    the conv's own estimate. A grid of blocks alone on their SMs is
    estimated at no less than 800 clocks per main-loop iteration (measured
    on the H200 for ResNet-50's batch-1 layers, where the model's
    throughput terms alone were 2.3-2.6x low). A slice keeps at least 256 of K and its channels fill whole
    16-byte vectors; large problems (a batch-256 ResNet-50) are never split.
    The partial sums are added in a fixed order, so results are
    reproducible; they differ from the unsplit conv's by rounding only.
    `report` emits a remark per conv split, and per conv whose best split
    is estimated faster by less than `min-gain`, with the estimates.
    `kgraph-compile` runs it by default (`split-k-convs=false`,
    `kgraph-opt --split-k-convs=false` leaves convs as written;
    `split-k-min-gain=`, `kgraph-opt --split-k-min-gain=` sets `min-gain`).

    Before (a ResNet-50 batch-1 last-stage conv):
    ```mlir
    %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1]
        : tensor<1x7x7x512xf16>, tensor<512x3x3x512xf16> -> tensor<1x7x7x512xf16>
    ```
    After (sm_90a: 16 slices of 32 channels):
    ```mlir
    %w1 = kgraph.reshape %w : tensor<512x3x3x512xf16> to tensor<512x3x3x16x32xf16>
    %w2 = kgraph.transpose %w1, permutation = [3, 0, 1, 2, 4] : tensor<512x3x3x16x32xf16>
    %w3 = kgraph.reshape %w2 : tensor<16x512x3x3x32xf16> to tensor<8192x3x3x32xf16>
    %p = kgraph.conv2d %x, %w3 layout = nhwc padding = [1, 1, 1, 1] groups = 16
        : tensor<1x7x7x512xf16>, tensor<8192x3x3x32xf16> -> tensor<1x7x7x8192xf32>
    %p1 = kgraph.reshape %p : tensor<1x7x7x8192xf32> to tensor<1x7x7x16x512xf32>
    %s = kgraph.reduce sum %p1 axes = [3] : tensor<1x7x7x16x512xf32>
    %0 = kgraph.cast %s : tensor<1x7x7x512xf32> to tensor<1x7x7x512xf16>
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"sm_80\"",
           "SM target from the table whose model decides">,
    Option<"minGain", "min-gain", "double", /*default=*/"1.25",
           "Split only where the model's estimate drops at least this "
           "factor (at least 1)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per conv2d split, and per conv2d whose best split "
           "is estimated faster by less than min-gain, with the estimates">,
    Option<"hoistedFilters", "hoisted-filters", "bool", /*default=*/"true",
           "The filter copy of a conv2d whose filter comes from parameters "
           "alone runs once at load (kgraph-lower-to-gpu{"
           "hoist-parameter-kernels}), not in the per-call estimate">,
  ];
  let dependentDialects = ["::kgraph::KGraphDialect"];
}

def KGraphFormKernels : Pass<"kgraph-form-kernels", "::mlir::func::FuncOp"> {
  let summary = "Wrap every compute op that is not yet in a group into its own kgraph.fused";
  let description = [{
    Kernel formation without fusion: every kgraph compute op outside a
    `kgraph.fused` region becomes a one-op `kgraph.fused` group, so that
    tiling and lowering only ever deal with groups (one group = one kernel).
    Ops already grouped (by `kgraph-fuse`) are left alone. Constant operands
    are cloned into the group rather than passed in.

    Before:
    ```mlir
    %0 = kgraph.add %a, %b : tensor<8xf32>, tensor<8xf32>
    ```
    After:
    ```mlir
    %0 = kgraph.fused (%a, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: tensor<8xf32>, %y: tensor<8xf32>):
      %1 = kgraph.add %x, %y : tensor<8xf32>, tensor<8xf32>
      kgraph.yield %1 : tensor<8xf32>
    }
    ```
  }];
  let dependentDialects = ["::kgraph::KGraphDialect"];
}

def KGraphTile : Pass<"kgraph-tile", "::mlir::ModuleOp"> {
  let summary = "Choose the launch configuration of every kernel group for an SM target";
  let description = [{
    Validates `target` against the SM target table, records it on the module
    as `kgraph.target`, and writes a configuration attribute (`kgraph.config`)
    on every `kgraph.fused` group that has none yet. A configuration already
    present is kept, so tests, users and tuners can pin one.

    Elementwise groups get `#kgraph.elementwise_config`: 16-byte vectors for
    the widest element type the group touches, 256-thread blocks, one vector
    per thread while the grid stays within 64 waves of resident blocks over
    the target's SM count, and a grid-stride loop past that.

    Groups whose body is one `kgraph.matmul` get `#kgraph.matmul_config`:
    block tile, warp grid, pipeline stages, instruction and its shape, load
    width and shared-memory padding, chosen by the resource, occupancy and
    cost model of `MatmulTiling.h` (candidates that exceed the target's
    shared memory, registers or threads are discarded; the rest are ranked
    by estimated time). A pinned `#kgraph.matmul_config` is checked against
    the target: the instruction shape must be one the SM table offers for
    the operand type, and shared memory and threads must fit. With
    `report=true` every matmul group gets a remark with the model's
    estimate (shared memory, registers, blocks per SM, waves, cycles).

    Stencil groups (stride-1 "same" conv2d with <= 4 channels, pool2d and
    elementwise ops on one image grid) and lone pool2d ops get
    `#kgraph.stencil_config`: the output tile per block, the thread block
    and the rows per thread, chosen by the halo and shared-memory model of
    `StencilTiling.h`; a pinned one is checked against the target's shared
    memory. `report=true` remarks the plan (shared memory, grid, global
    bytes per pixel, halo overhead).

    With `tuning-db=<file>`, a group without a pinned configuration takes
    the measured winner of the database record whose problem signature,
    target (and `tuning-gpu`, when given) match, when that configuration
    still verifies for the group and belongs to this compiler's version of
    the family's configuration space; else that of the record of the
    nearest shape of the same structure (a near record) that verifies;
    else the model's choice. A record that is skipped gets a remark saying
    why; an unreadable, corrupt or foreign file is an error, a malformed
    record a warning (docs/tuning.md).

    Before:
    ```mlir
    %0 = kgraph.fused (%a, %b) : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32> {...}
    ```
    After (`--kgraph-tile=target=sm_80`):
    ```mlir
    module attributes {kgraph.target = "sm_80"} {
      %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.elementwise_config<
          block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} ...
    }
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"sm_80\"",
           "SM target from the table (sm_70 ... sm_90a)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per matmul group with the cost model's estimate">,
    Option<"tuningDb", "tuning-db", "std::string", /*default=*/"\"\"",
           "Tuning database (python3 -m kgraph.tune) whose records choose "
           "the configurations they match">,
    Option<"tuningGpu", "tuning-gpu", "std::string", /*default=*/"\"\"",
           "Apply only the records measured on this GPU (its driver name, "
           "e.g. 'NVIDIA H200'); default: any GPU of the target">,
    Option<"tuningReport", "tuning-report", "bool", /*default=*/"false",
           "Emit a remark per group saying whether a tuning record, a near "
           "record, a pinned attribute or the model chose its configuration">,
  ];
  let dependentDialects = ["::kgraph::KGraphDialect"];
}

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_TD
