"""Views and copies of data (issue 10, item 7): kgraph.reshape and contiguous
kgraph.slice are views of their input's buffer (no kernel; the launch plan
passes the root buffer at a "byte_offset"); a returned view, a strided slice,
kgraph.concat and a standalone kgraph.broadcast_to are copy kernels.

Shapes are not multiples of any tile or vector width, so every kernel runs its
ragged tails; the kernel counts pin which views got no kernel.
"""

import torch
import torch.nn.functional as F

from graph_case import GraphCase, Input


def t(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dt + ">"


# --- reshape ------------------------------------------------------------------


def bias_nchw_relu(x, b):
    return torch.relu(x + b.reshape(-1, 1, 1))


def bias_nchw_case(name, dt, fuse, kernels, tol):
    tx, tb, tv = t([3, 13, 7, 9], dt), t([13], dt), t([13, 1, 1], dt)
    return GraphCase(
        name,
        f"""func.func @main(%x: {tx}, %b: {tb}) -> {tx} {{
  %v = kgraph.reshape %b : {tb} to {tv}
  %s = kgraph.add %x, %v : {tx}, {tv}
  %r = kgraph.relu %s : {tx}
  return %r : {tx}
}}""",
        [Input("x", [3, 13, 7, 9], dt), Input("b", [13], dt)],
        bias_nchw_relu, kernels=kernels, tol=tol,
        flags=("--fuse",) if fuse else ())


def conv_bias_nchw(x, w, b):
    return torch.relu(F.conv2d(x, w, padding=1) + b.reshape(-1, 1, 1))


def flatten_matmul(x, w):
    # mean over H, W keeping the dims, flatten [N, C, 1, 1] -> [N, C], matmul.
    return x.mean(dim=(2, 3), keepdim=True).reshape(x.shape[0], -1) @ w


def reshape_output(x):
    return torch.tanh(x).reshape(-1)


def reshape_input_output(x):
    return x.reshape(5, 3, 14)


def mask_chain(x, y, a, b):
    m = (x > y).reshape(-1).reshape(3, 20)
    return torch.where(m, a, b)


def grouped_reshape(x, y):
    # A reshape of an elementwise group's result that also feeds the group's
    # consumer: the consumer reads the group's output buffer through a view.
    s = torch.sigmoid(x) * y
    return s.reshape(7, 10, 3) + 1.0, s


def slice_views(x, y):
    d = y[:, 4:8, :].reshape(-1)[8:16]
    return -x[2:5], torch.exp(d)


def chunk_views(x):
    a, b = torch.chunk(x, 2, dim=0)
    return torch.sigmoid(a) * b


def concat_rows(x, y, z):
    return torch.cat([-x, torch.exp(y), z], dim=0)


def concat_channels(x, y):
    a = torch.relu(x)
    return torch.sigmoid(torch.cat([a, y], dim=1)), a


CASES = [
    # The NCHW bias idiom: [C] -> [C, 1, 1] broadcast over [N, C, H, W].
    bias_nchw_case("views_bias_nchw_f32", "f32", True, 1, (1e-6, 1e-7)),
    bias_nchw_case("views_bias_nchw_unfused_f32", "f32", False, 2, (1e-6, 1e-7)),
    bias_nchw_case("views_bias_nchw_f16", "f16", True, 1, (2e-3, 1e-4)),
    # ... in the epilogue of a conv2d (NCHW, f16, fp32 accumulation over
    # K = 9 * 19 = 171, rounded to f16 once by the conv, once by the add).
    GraphCase(
        "views_conv_bias_nchw_f16",
        """func.func @main(%x: tensor<2x19x15x13xf16>, %w: tensor<21x19x3x3xf16>, %b: tensor<21xf16>) -> tensor<2x21x15x13xf16> {
  %c = kgraph.conv2d %x, %w padding = [1, 1, 1, 1] : tensor<2x19x15x13xf16>, tensor<21x19x3x3xf16> -> tensor<2x21x15x13xf16>
  %v = kgraph.reshape %b : tensor<21xf16> to tensor<21x1x1xf16>
  %s = kgraph.add %c, %v : tensor<2x21x15x13xf16>, tensor<21x1x1xf16>
  %r = kgraph.relu %s : tensor<2x21x15x13xf16>
  return %r : tensor<2x21x15x13xf16>
}""",
        [Input("x", [2, 19, 15, 13], "f16"),
         Input("w", [21, 19, 3, 3], "f16", lo=-0.15, hi=0.15),
         Input("b", [21], "f16", lo=-0.5, hi=0.5)],
        conv_bias_nchw, kernels=1, tol=(2.5e-3, 2e-3)),
    # Flatten after global average pooling, feeding a matmul: the reduce's
    # output buffer is the matmul's operand.
    GraphCase(
        "views_flatten_matmul_f32",
        """func.func @main(%x: tensor<5x37x3x3xf32>, %w: tensor<37x19xf32>) -> tensor<5x19xf32> {
  %p = kgraph.reduce mean %x axes = [2, 3] keep_dims : tensor<5x37x3x3xf32>
  %f = kgraph.reshape %p : tensor<5x37x1x1xf32> to tensor<5x37xf32>
  %m = kgraph.matmul %f, %w : tensor<5x37xf32>, tensor<37x19xf32> -> tensor<5x19xf32>
  return %m : tensor<5x19xf32>
}""",
        [Input("x", [5, 37, 3, 3], "f32"), Input("w", [37, 19], "f32")],
        flatten_matmul, kernels=2, tol=(1e-5, 1e-5)),
    # A returned reshape of a group result: the group writes the output
    # buffer through a view of it (no copy kernel).
    GraphCase(
        "views_reshape_output_f32",
        """func.func @main(%x: tensor<6x35xf32>) -> tensor<210xf32> {
  %t = kgraph.tanh %x : tensor<6x35xf32>
  %r = kgraph.reshape %t : tensor<6x35xf32> to tensor<210xf32>
  return %r : tensor<210xf32>
}""",
        [Input("x", [6, 35], "f32")], reshape_output, kernels=1,
        tol=(1e-6, 1e-7)),
    # A returned reshape of an input: a copy kernel (outputs never alias
    # inputs).
    GraphCase(
        "views_reshape_input_output_bf16",
        """func.func @main(%x: tensor<15x14xbf16>) -> tensor<5x3x14xbf16> {
  %r = kgraph.reshape %x : tensor<15x14xbf16> to tensor<5x3x14xbf16>
  return %r : tensor<5x3x14xbf16>
}""",
        [Input("x", [15, 14], "bf16")], reshape_input_output, kernels=1,
        tol=(0, 0)),
    # A chain of reshapes of an i1 mask between two kernels.
    GraphCase(
        "views_mask_chain_i1",
        """func.func @main(%x: tensor<4x15xf32>, %y: tensor<4x15xf32>, %a: tensor<3x20xf32>, %b: tensor<3x20xf32>) -> tensor<3x20xf32> {
  %m = kgraph.compare gt, %x, %y : tensor<4x15xf32>, tensor<4x15xf32>
  %f = kgraph.reshape %m : tensor<4x15xi1> to tensor<60xi1>
  %g = kgraph.reshape %f : tensor<60xi1> to tensor<3x20xi1>
  %r = kgraph.select %g, %a, %b : tensor<3x20xi1>, tensor<3x20xf32>, tensor<3x20xf32>
  return %r : tensor<3x20xf32>
}""",
        [Input("x", [4, 15], "f32"), Input("y", [4, 15], "f32"),
         Input("a", [3, 20], "f32"), Input("b", [3, 20], "f32")],
        mask_chain, kernels=2, tol=(0, 0)),
    # A reshape of a value produced inside a fused group that is also
    # returned: the view's base is the group's output buffer.
    GraphCase(
        "views_grouped_reshape_f32",
        """func.func @main(%x: tensor<10x21xf32>, %y: tensor<10x21xf32>) -> (tensor<7x10x3xf32>, tensor<10x21xf32>) {
  %g = kgraph.sigmoid %x : tensor<10x21xf32>
  %s = kgraph.mul %g, %y : tensor<10x21xf32>, tensor<10x21xf32>
  %v = kgraph.reshape %s : tensor<10x21xf32> to tensor<7x10x3xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %r = kgraph.add %v, %one : tensor<7x10x3xf32>, tensor<f32>
  return %r, %s : tensor<7x10x3xf32>, tensor<10x21xf32>
}""",
        [Input("x", [10, 21], "f32"), Input("y", [10, 21], "f32")],
        grouped_reshape, kernels=2, tol=(1e-6, 1e-7)),
    # Contiguous slices are views at byte offsets 240 and 32 + 16 (a slice
    # of a reshape of a slice).
    GraphCase(
        "views_slices_f32_f16",
        """func.func @main(%x: tensor<8x10x3xf32>, %y: tensor<1x8x4xf16>) -> (tensor<3x10x3xf32>, tensor<8xf16>) {
  %a = kgraph.slice %x offsets = [2, 0, 0] sizes = [3, 10, 3] strides = [1, 1, 1] : tensor<8x10x3xf32>
  %n = kgraph.neg %a : tensor<3x10x3xf32>
  %b = kgraph.slice %y offsets = [0, 4, 0] sizes = [1, 4, 4] strides = [1, 1, 1] : tensor<1x8x4xf16>
  %c = kgraph.reshape %b : tensor<1x4x4xf16> to tensor<16xf16>
  %d = kgraph.slice %c offsets = [8] sizes = [8] strides = [1] : tensor<16xf16>
  %e = kgraph.exp %d : tensor<8xf16>
  return %n, %e : tensor<3x10x3xf32>, tensor<8xf16>
}""",
        [Input("x", [8, 10, 3], "f32"), Input("y", [1, 8, 4], "f16")],
        slice_views, kernels=2, tol=(2e-3, 1e-6)),
    # torch.chunk along dim 0: both halves are views of the input (the second
    # 12 * 37 * 4 = 1776 bytes in), one fused kernel reads both.
    GraphCase(
        "views_chunk_f32",
        """func.func @main(%x: tensor<24x37xf32>) -> tensor<12x37xf32> {
  %a = kgraph.slice %x offsets = [0, 0] sizes = [12, 37] strides = [1, 1] : tensor<24x37xf32>
  %b = kgraph.slice %x offsets = [12, 0] sizes = [12, 37] strides = [1, 1] : tensor<24x37xf32>
  %s = kgraph.sigmoid %a : tensor<12x37xf32>
  %r = kgraph.mul %s, %b : tensor<12x37xf32>, tensor<12x37xf32>
  return %r : tensor<12x37xf32>
}""",
        [Input("x", [24, 37], "f32")], chunk_views, kernels=1,
        tol=(1e-6, 1e-7)),
    # Concat along dim 0 into the output: the producers of %a and %b write
    # their views of it (byte offsets 0, 6 * 36 * 4 = 864), the input %z is
    # copied into its view (2064): three kernels, no concat kernel.
    GraphCase(
        "views_concat_rows_f32",
        """func.func @main(%x: tensor<6x36xf32>, %y: tensor<8x36xf32>, %z: tensor<5x36xf32>) -> tensor<19x36xf32> {
  %a = kgraph.neg %x : tensor<6x36xf32>
  %b = kgraph.exp %y : tensor<8x36xf32>
  %c = kgraph.concat %a, %b, %z axis = 0 : tensor<6x36xf32>, tensor<8x36xf32>, tensor<5x36xf32>
  return %c : tensor<19x36xf32>
}""",
        [Input("x", [6, 36], "f32"), Input("y", [8, 36], "f32"),
         Input("z", [5, 36], "f32")],
        concat_rows, kernels=3, tol=(1e-6, 1e-7)),
    # NCHW channel concat at batch 1 into an intermediate; %a also returned,
    # so its concat view gets a copy kernel: relu, copy, copy of %y, sigmoid.
    GraphCase(
        "views_concat_channels_f16",
        """func.func @main(%x: tensor<1x8x5x7xf16>, %y: tensor<1x5x5x7xf16>) -> (tensor<1x13x5x7xf16>, tensor<1x8x5x7xf16>) {
  %a = kgraph.relu %x : tensor<1x8x5x7xf16>
  %c = kgraph.concat %a, %y axis = 1 : tensor<1x8x5x7xf16>, tensor<1x5x5x7xf16>
  %r = kgraph.sigmoid %c : tensor<1x13x5x7xf16>
  return %r, %a : tensor<1x13x5x7xf16>, tensor<1x8x5x7xf16>
}""",
        [Input("x", [1, 8, 5, 7], "f16"), Input("y", [1, 5, 5, 7], "f16")],
        concat_channels, kernels=4, tol=(2e-3, 1e-6)),
]
