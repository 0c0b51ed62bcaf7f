"""Elementwise graphs that kgraph-fuse turns into one kernel (issue 5): the
issue's 5-op chain with a broadcast row (benchmarked at 64M elements), odd
sizes, f16, multi-use DAGs and several results."""

import torch

from graph_case import GraphCase, Input


def gelu_chain(x, y, z):
    # gelu(x * 1.5 + 0.25) * y + z, z broadcast as a row.
    return torch.nn.functional.gelu(x * 1.5 + 0.25) * y + z


def _chain_mlir(rows, cols, dt):
    t = f"tensor<{rows}x{cols}x{dt}>"
    return f"""func.func @main(%x: {t}, %y: {t}, %z: tensor<{cols}x{dt}>) -> {t} {{
  %c0 = arith.constant dense<1.5> : tensor<{dt}>
  %c1 = arith.constant dense<0.25> : tensor<{dt}>
  %0 = kgraph.mul %x, %c0 : {t}, tensor<{dt}>
  %1 = kgraph.add %0, %c1 : {t}, tensor<{dt}>
  %2 = kgraph.gelu %1 : {t}
  %3 = kgraph.mul %2, %y : {t}, {t}
  %4 = kgraph.add %3, %z : {t}, tensor<{cols}x{dt}>
  return %4 : {t}
}}"""


def _chain_case(name, rows, cols, dt, tol, bench=False, memcheck=True):
    return GraphCase(
        name, _chain_mlir(rows, cols, dt),
        [Input("x", [rows, cols], dt), Input("y", [rows, cols], dt),
         Input("z", [cols], dt)],
        gelu_chain, kernels=1, tol=tol, bench=bench, memcheck=memcheck)


def dag_two_results(x, y):
    # a = tanh(x) is used three times and is itself a result.
    a = torch.tanh(x)
    b = a + y
    return torch.sigmoid(a * b), a


def _two_results_case(n, dt, tol):
    t = f"tensor<{n}x{dt}>"
    return GraphCase(
        f"ew_dag_two_results_{dt}_{n}",
        f"""func.func @main(%x: {t}, %y: {t}) -> ({t}, {t}) {{
  %a = kgraph.tanh %x : {t}
  %b = kgraph.add %a, %y : {t}, {t}
  %c = kgraph.mul %a, %b : {t}, {t}
  %d = kgraph.sigmoid %c : {t}
  return %d, %a : {t}, {t}
}}""",
        [Input("x", [n], dt, lo=-3, hi=3), Input("y", [n], dt)],
        dag_two_results, kernels=1, tol=tol)


def dag_diamond(x, y):
    # Two branches of x meeting again, with a column broadcast.
    e = torch.exp(-x * x)
    s = torch.sqrt(torch.abs(x) + 1.0)
    return (e * s - y).clamp(-0.5, 0.5)


def dag_select(x, t):
    # compare / select on a shared value, a per-row threshold.
    m = torch.maximum(x, -x)
    return torch.where(m > t, m, torch.zeros_like(m)), m * 2.0


def cast_saturate(x, y):
    # kgraph.cast to i32: toward zero, saturating, NaN -> 0 (the kernels
    # call llvm.nvvm.f2i.rz, PTX's cvt.rzi.s32.f32, for it).
    def to_i32(v):
        v = torch.nan_to_num(torch.trunc(v), nan=0.0)
        return v.clamp(-2.0 ** 31, 2.0 ** 31 - 1).to(torch.int32)
    # The products are rounded to f32 as the kernel rounds them.
    def f32(v):
        return v.to(torch.float32).to(torch.float64)
    return (to_i32(f32(x * 4e9)), to_i32(f32(x * 7.5)), to_i32(torch.sqrt(x)),
            to_i32(y / 0.0))


CASES = [
    # The case: 64M f32 elements (8192 x 8192), one kernel. f32
    # tolerance: a few ulps of values up to ~2.7 (erf is within 2 ulps), where
    # gelu(.) * y + z can cancel to ~0.
    _chain_case("ew_gelu_chain_f32_8192x8192", 8192, 8192, "f32",
                tol=(1e-5, 4e-6), bench=True, memcheck=False),
    _chain_case("ew_gelu_chain_f32_37x1001", 37, 1001, "f32",
                tol=(1e-5, 4e-6)),
    _chain_case("ew_gelu_chain_f16_33x4097", 33, 4097, "f16",
                tol=(2e-2, 2e-2)),
    _chain_case("ew_gelu_chain_f16_4096x4096", 4096, 4096, "f16",
                tol=(2e-2, 2e-2), bench=True, memcheck=False),
    _two_results_case(1003, "f32", tol=(1e-5, 1e-6)),
    # f32 -> i32 casts of values past the i32 range (both signs), fractions,
    # NaN (sqrt of negatives) and infinities (division by zero).
    GraphCase(
        "ew_cast_f32_i32_saturate_1003",
        """func.func @main(%x: tensor<1003xf32>, %y: tensor<1003xf32>) -> (tensor<1003xi32>, tensor<1003xi32>, tensor<1003xi32>, tensor<1003xi32>) {
  %big = arith.constant dense<4.0e9> : tensor<f32>
  %frac = arith.constant dense<7.5> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %a = kgraph.mul %x, %big : tensor<1003xf32>, tensor<f32>
  %ai = kgraph.cast %a : tensor<1003xf32> to tensor<1003xi32>
  %b = kgraph.mul %x, %frac : tensor<1003xf32>, tensor<f32>
  %bi = kgraph.cast %b : tensor<1003xf32> to tensor<1003xi32>
  %c = kgraph.sqrt %x : tensor<1003xf32>
  %ci = kgraph.cast %c : tensor<1003xf32> to tensor<1003xi32>
  %d = kgraph.div %y, %zero : tensor<1003xf32>, tensor<f32>
  %di = kgraph.cast %d : tensor<1003xf32> to tensor<1003xi32>
  return %ai, %bi, %ci, %di : tensor<1003xi32>, tensor<1003xi32>, tensor<1003xi32>, tensor<1003xi32>
}""",
        [Input("x", [1003], "f32"), Input("y", [1003], "f32")],
        cast_saturate, tol=(0, 0)),
    _two_results_case(999, "f16", tol=(1e-2, 1e-2)),
    GraphCase(
        "ew_dag_diamond_f32_65x129",
        """func.func @main(%x: tensor<65x129xf32>, %y: tensor<65x1xf32>) -> tensor<65x129xf32> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %n = kgraph.neg %x : tensor<65x129xf32>
  %q = kgraph.mul %n, %x : tensor<65x129xf32>, tensor<65x129xf32>
  %e = kgraph.exp %q : tensor<65x129xf32>
  %a = kgraph.abs %x : tensor<65x129xf32>
  %a1 = kgraph.add %a, %one : tensor<65x129xf32>, tensor<f32>
  %s = kgraph.sqrt %a1 : tensor<65x129xf32>
  %p = kgraph.mul %e, %s : tensor<65x129xf32>, tensor<65x129xf32>
  %d = kgraph.sub %p, %y : tensor<65x129xf32>, tensor<65x1xf32>
  %r = kgraph.clamp %d {max = 5.000000e-01 : f64, min = -5.000000e-01 : f64} : tensor<65x129xf32>
  return %r : tensor<65x129xf32>
}""",
        [Input("x", [65, 129], "f32"), Input("y", [65, 1], "f32")],
        dag_diamond, kernels=1, tol=(1e-5, 1e-6)),
    GraphCase(
        "ew_dag_select_f32_31x257",
        """func.func @main(%x: tensor<31x257xf32>, %t: tensor<31x1xf32>) -> (tensor<31x257xf32>, tensor<31x257xf32>) {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %n = kgraph.neg %x : tensor<31x257xf32>
  %m = kgraph.max %x, %n : tensor<31x257xf32>, tensor<31x257xf32>
  %c = kgraph.compare gt, %m, %t : tensor<31x257xf32>, tensor<31x1xf32>
  %r = kgraph.select %c, %m, %zero : tensor<31x257xi1>, tensor<31x257xf32>, tensor<f32>
  %d = kgraph.mul %m, %two : tensor<31x257xf32>, tensor<f32>
  return %r, %d : tensor<31x257xf32>, tensor<31x257xf32>
}""",
        [Input("x", [31, 257], "f32"), Input("t", [31, 1], "f32", lo=0, hi=1)],
        dag_select, kernels=1, tol=(0, 0)),
]
