"""Runs every variant bench/gemm_variants/build.py compiled (or those whose
name matches the optional second argument, a regex): float64 check on
fresh random inputs with NaN-poisoned outputs, and for perf* cases TFLOP/s
against cuBLAS (torch.matmul) in the same run."""
import json, os, sys, torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import kgraph
d = os.path.abspath(sys.argv[1])
man = json.load(open(os.path.join(d, "mm.json")))
if len(sys.argv) > 2:  # optional regex: only the matching variants
    import re
    man = [c for c in man if re.search(sys.argv[2], c["name"])]
dt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
for c in man:
    prog = kgraph.load(os.path.join(d, c["name"] + ".plan.json"))
    A = torch.randn(c["A"], device="cuda").to(dt[c["ti"]])
    B = torch.randn(c["Bs"], device="cuda").to(dt[c["ti"]])
    C = torch.full(c["C"], float("nan"), device="cuda", dtype=dt[c["to"]])
    prog.run([A, B], [C])
    torch.cuda.synchronize()
    a = A.double(); b = B.double()
    if c["ta"]: a = a.transpose(-1, -2)
    if c["tb"]: b = b.transpose(-1, -2)
    ref = a @ b
    err = ((C.double() - ref).norm() / ref.norm()).item()
    nan = torch.isnan(C).sum().item()
    line = f"{c['name']:16s} M={c['M']} N={c['N']} K={c['K']} ta={c['ta']} tb={c['tb']} {c['ti']}->{c['to']} relerr={err:.2e} nan={nan}"
    if c["name"].startswith("perf"):
        from triton.testing import do_bench
        ms = do_bench(lambda: prog.run([A, B], [C]), warmup=25, rep=200, return_mode="median")
        At = A.transpose(-1, -2) if c["ta"] else A
        Bt = B.transpose(-1, -2) if c["tb"] else B
        ms_ref = do_bench(lambda: torch.matmul(At, Bt), warmup=25, rep=200, return_mode="median")
        fl = 2 * c["M"] * c["N"] * c["K"]
        line += f"  kgraph {fl/ms/1e9:.0f} TFLOP/s  cuBLAS {fl/ms_ref/1e9:.0f} TFLOP/s  ratio {ms_ref/ms:.2f}"
    print(line, flush=True)
