"""Small PyTorch modules, one or a few ops each, shared by the CPU importer
tests (python/tests/test_importers.py: import, evaluate the kgraph ops with
the numpy reference against torch eager, compile with kgraph-opt) and the
GPU tests (test/GPU/test_models.py: compile and run on the GPU against
torch eager).

``CASES``: name -> (factory, input shapes, layouts to import in). A factory
returns an ``nn.Module``; inputs are float32 tensors of the given shapes.
``DATA_MOVEMENT``: the cases whose compiled form needs code generation for
kgraph.reshape / transpose / slice / concat / broadcast_to (issue 10's
data-movement work); see DATA_MOVEMENT_CODEGEN in test_importers.py.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Lambda(nn.Module):
    def __init__(self, fn, *params):
        super().__init__()
        self.fn = fn
        self.ps = nn.ParameterList([nn.Parameter(p) for p in params])

    def forward(self, *xs):
        return self.fn(*xs, *self.ps)


def _seq(*mods):
    return lambda: nn.Sequential(*mods)


def _conv_bn_relu():
    bn = nn.BatchNorm2d(8)
    with torch.no_grad():
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), bn, nn.ReLU())


def _bn_alone():
    bn = nn.BatchNorm2d(3)
    with torch.no_grad():
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    return nn.Sequential(bn, nn.ReLU())


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 1, stride=2)

    def forward(self, x):
        y = F.relu(self.bn(self.c1(x)))
        return F.relu(self.c2(y + x))


class Head(nn.Module):
    """Global pool, flatten, classifier: the end of a CNN."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 16, 3, stride=2, padding=1)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(F.relu(self.conv(x))), 1))


class Attention(nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.mha = nn.MultiheadAttention(32, 4, batch_first=batch_first)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


class SqueezeExcite(nn.Module):
    """EfficientNet's squeeze-and-excitation: a global pool kept 4-D feeds
    1x1 convolutions whose sigmoid scales the channels."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(8, 4, 1)
        self.fc2 = nn.Conv2d(4, 8, 1)

    def forward(self, x):
        y = F.silu(self.conv(x))
        s = torch.sigmoid(self.fc2(F.silu(self.fc1(self.pool(y)))))
        return y * s


def _w(*shape):
    return torch.randn(*shape) * 0.5


CASES = {
    # convolution, batch norm, pooling
    "conv2d": (_seq(nn.Conv2d(3, 8, 3, padding=1)), [(2, 3, 8, 8)], ("nchw", "nhwc")),
    "conv2d_stride_groups": (_seq(nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2)),
                             [(1, 4, 9, 9)], ("nchw", "nhwc")),
    "conv_bn_relu": (_conv_bn_relu, [(2, 3, 8, 8)], ("nchw", "nhwc")),
    "batch_norm_alone": (_bn_alone, [(2, 3, 4, 4)], ("nchw", "nhwc")),
    "residual": (Residual, [(1, 8, 8, 8)], ("nchw", "nhwc")),
    "max_pool": (_seq(nn.MaxPool2d(3, 2, 1)), [(1, 4, 9, 9)], ("nchw", "nhwc")),
    "avg_pool": (_seq(nn.AvgPool2d(2)), [(1, 4, 8, 8)], ("nchw", "nhwc")),
    # ceil_mode's extra window (SqueezeNet, GoogLeNet), and one it drops
    # because it would start in the trailing padding
    "max_pool_ceil": (_seq(nn.MaxPool2d(3, 2, ceil_mode=True)), [(1, 4, 10, 9)],
                      ("nchw", "nhwc")),
    "max_pool_ceil_drop": (_seq(nn.MaxPool2d(2, 2, 1, ceil_mode=True)), [(1, 3, 5, 6)],
                           ("nchw", "nhwc")),
    # count_include_pad (PyTorch's default; Inception-v3), with ceil_mode's
    # window clipped to the padded input, and divisor_override
    "avg_pool_pad": (_seq(nn.AvgPool2d(3, 1, 1)), [(2, 4, 7, 6)], ("nchw", "nhwc")),
    "avg_pool_pad_ceil": (_seq(nn.AvgPool2d(3, 2, 1, ceil_mode=True)), [(1, 4, 8, 9)],
                          ("nchw", "nhwc")),
    "avg_pool_ceil_exclude": (_seq(nn.AvgPool2d((2, 3), 2, (1, 0), ceil_mode=True,
                                                count_include_pad=False)),
                              [(1, 4, 8, 8)], ("nchw", "nhwc")),
    # F.pad (aten.constant_pad_nd): spatial padding with a value, a crop
    "pad_constant": (lambda: Lambda(lambda x: torch.nn.functional.pad(x, (1, 2, 0, 1), value=0.5)),
                     [(1, 3, 5, 6)], ("nchw", "nhwc")),
    "pad_crop": (lambda: Lambda(lambda x: torch.nn.functional.pad(x, (-1, 2, 1, 0)) * 2),
                 [(2, 5, 6)], ("nchw",)),
    # adaptive average pool to a size that does not divide the input's
    # (windows of different sizes, overlapping)
    "adaptive_avg_uneven": (_seq(nn.AdaptiveAvgPool2d((3, 4))), [(2, 5, 7, 10)],
                            ("nchw", "nhwc")),
    # torch.roll (Swin's shifted windows) on an activation, and a mask built
    # from new_zeros
    "roll_shift": (lambda: Lambda(lambda x: torch.roll(x * 2, (2, -1), (1, 2))
                                  + x.new_ones((5, 6)) * 0.5 + torch.roll(x, 3)),
                   [(2, 5, 6)], ("nchw",)),
    # F.interpolate: bilinear (both corner rules, sizes and scale factors,
    # a non-integer one) and nearest (segmentation heads, FPNs)
    "interpolate": (lambda: Lambda(
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)[..., :5, :7]
        + F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=True)
        + F.interpolate(x, size=(5, 7), mode="nearest")
        + F.interpolate(x, scale_factor=1.5, mode="bilinear")[..., :5, :7]
        + F.interpolate(x, scale_factor=(2, 3), mode="nearest")[..., :5, :7]),
        [(2, 3, 4, 6)], ("nchw", "nhwc")),
    "avg_pool_divisor": (_seq(nn.AvgPool2d(2, divisor_override=3)), [(1, 4, 6, 6)],
                         ("nchw", "nhwc")),
    "head": (Head, [(2, 4, 8, 8)], ("nchw", "nhwc")),
    "squeeze_excite": (SqueezeExcite, [(2, 8, 6, 6)], ("nchw", "nhwc")),
    # GEMM
    "linear": (_seq(nn.Linear(16, 8)), [(4, 16)], ("nchw",)),
    "linear_3d": (_seq(nn.Linear(16, 8)), [(2, 4, 16)], ("nchw",)),
    "matmul": (lambda: Lambda(lambda a, b: a @ b), [(4, 8), (8, 6)], ("nchw",)),
    "bmm": (lambda: Lambda(lambda a, b: torch.bmm(a, b)), [(2, 4, 8), (2, 8, 6)], ("nchw",)),
    # torch.export's form of a Linear on a 3-D input: a bmm with the weight
    # expanded over the batch
    "bmm_shared_weight": (lambda: Lambda(lambda x, w: torch.bmm(x, w.t().expand(3, 16, 8))
                                         + 1.0, _w(8, 16)), [(3, 5, 16)], ("nchw",)),
    "linear_3d_relu_residual": (lambda: Lambda(lambda x, w, b: F.relu(F.linear(x, w, b)) + x,
                                               _w(16, 16), _w(16)), [(2, 5, 16)], ("nchw",)),
    "mlp_gelu": (_seq(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 8)), [(4, 16)], ("nchw",)),
    # elementwise
    # activations built from compare / select / exp / log (slopes, alphas,
    # softplus far past its threshold and far below zero)
    "activations_piecewise": (lambda: Lambda(
        lambda x: F.leaky_relu(x, 0.2) + F.elu(x, 0.7) + F.selu(x) + F.celu(x, 1.3)
        + F.softplus(x * 30) / 30 + F.softplus(x, beta=2.0) + F.mish(x)
        + F.hardswish(x) + F.hardsigmoid(x)), [(4, 33)], ("nchw",)),
    # torch's threshold (ONNX's Softplus has none)
    "softplus_threshold": (lambda: Lambda(lambda x: F.softplus(x, beta=2.0, threshold=1.0)),
                           [(4, 33)], ("nchw",)),
    "prelu": (_seq(nn.PReLU(6, init=0.1)), [(2, 6, 5, 5)], ("nchw", "nhwc")),
    "activations": (lambda: Lambda(lambda x: torch.sigmoid(x) + torch.tanh(x) + F.silu(x)
                                   + F.hardtanh(x, -0.5, 0.5) + torch.clamp(x, min=-0.2)
                                   + F.relu6(x) + F.gelu(x, approximate="tanh")),
                    [(4, 8)], ("nchw",)),
    "arith_scalar": (lambda: Lambda(lambda x: (x * 2.0 + 1.0 - 0.5) / 4.0), [(4, 8)],
                     ("nchw",)),
    "arith_tensor": (lambda: Lambda(lambda a, b, w: (a + b) * w - a / (b.abs() + 1.0),
                                    _w(8)), [(4, 8), (4, 8)], ("nchw",)),
    "channel_bias_nchw": (lambda: Lambda(lambda x, b: F.relu(x + b.view(1, 4, 1, 1)),
                                         _w(4)), [(2, 4, 3, 3)], ("nchw", "nhwc")),
    "cast": (lambda: Lambda(lambda x: (x.half() * 2).float()), [(4, 8)], ("nchw",)),
    "dropout": (_seq(nn.Dropout(0.3), nn.ReLU()), [(4, 8)], ("nchw",)),
    # comparisons, booleans, where (torch 2.x's softmax keeps a "row all -inf"
    # test: where(~any(~(x == -inf)), 0, softmax(x)))
    "safe_softmax": (lambda: Lambda(lambda x: torch.where(
        torch.logical_not(torch.any(torch.logical_not(x == float("-inf")), -1, True)),
        torch.full_like(x, 0), torch.softmax(x, -1))), [(3, 4, 8)], ("nchw",)),
    "compare_where": (lambda: Lambda(lambda x, y: (torch.where(
        torch.all((x > y) | (x < 0.5 * y), 1, keepdim=True), x, y * 2)
        .masked_fill(x.eq(0.25) ^ (y >= 1), -3.0) + torch.zeros_like(x)
        + torch.ones_like(y) + (~torch.any(x.ne(x), 0)).float())), [(4, 8), (4, 8)],
        ("nchw",)),
    "bool_arith": (lambda: Lambda(lambda x: torch.where(torch.isnan(x), torch.zeros_like(x), x)
                                  + torch.isinf(x).float() + torch.isfinite(x).float()
                                  + (x > 0).sum(1, keepdim=True).float()
                                  + torch.amax(x > 1, 1, keepdim=True).float()),
                   [(4, 8)], ("nchw",)),
    "mask_nhwc": (lambda: Lambda(lambda x, t: torch.where(
        (x > t.view(1, 3, 1, 1)) & (x != 0), x, x * 0.1), _w(3)), [(2, 3, 4, 5)],
        ("nchw", "nhwc")),
    # reductions, normalization
    "mean_sum_amax": (lambda: Lambda(lambda x: x.mean(1) + x.sum(1) + x.amax(1)),
                      [(4, 8)], ("nchw",)),
    "softmax": (_seq(nn.Softmax(-1)), [(4, 8)], ("nchw",)),
    "layer_norm": (_seq(nn.LayerNorm(8)), [(2, 4, 8)], ("nchw",)),
    # data movement
    "flatten_view": (lambda: Lambda(lambda x: x.view(2, -1).reshape(2, 4, -1)),
                     [(2, 3, 4, 2)], ("nchw", "nhwc")),
    "permute": (lambda: Lambda(lambda x: x.permute(0, 2, 1).contiguous() + 1.0),
                [(2, 3, 4)], ("nchw",)),
    "transpose_nhwc": (lambda: Lambda(lambda x: x.transpose(1, 3) * 2.0),
                       [(1, 3, 4, 5)], ("nchw", "nhwc")),
    "cat": (lambda: Lambda(lambda a, b: torch.cat([a, b * 2.0], 1)), [(2, 3, 4), (2, 5, 4)],
            ("nchw",)),
    "cat_channels": (lambda: Lambda(lambda a, b: torch.cat([a, b], 1) + 1.0),
                     [(1, 2, 3, 3), (1, 4, 3, 3)], ("nchw", "nhwc")),
    "slice_narrow": (lambda: Lambda(lambda x: x[:, 1:5] + x.narrow(1, 2, 4)), [(3, 8)],
                     ("nchw",)),
    "chunk_split": (lambda: Lambda(lambda x: x.chunk(2, -1)[0] * x.split(4, -1)[1]),
                    [(3, 8)], ("nchw",)),
    "attention_batch_first": (lambda: Attention(True), [(2, 5, 32)], ("nchw",)),
    "attention_seq_first": (lambda: Attention(False), [(5, 2, 32)], ("nchw",)),
}

#: Cases whose compilation needs data-movement code generation.
DATA_MOVEMENT = {
    "flatten_view", "permute", "transpose_nhwc", "cat", "cat_channels", "slice_narrow",
    "chunk_split", "attention_batch_first", "attention_seq_first", "linear_3d",
}


def make(name, seed=0):
    """(module in eval mode, float32 example inputs) of case ``name``."""
    torch.manual_seed(seed)
    factory, shapes, _ = CASES[name]
    model = factory().eval()
    inputs = [torch.randn(*s) for s in shapes]
    return model, inputs
