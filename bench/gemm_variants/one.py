"""Runs one 4096^3 f16 variant three times (for ncu)."""
import os, sys, torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import kgraph
d, name = os.path.abspath(sys.argv[1]), sys.argv[2]
prog = kgraph.load(os.path.join(d, name + ".plan.json"))
A = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
B = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
C = torch.empty(4096, 4096, device="cuda", dtype=torch.float32)
for _ in range(3):
    prog.run([A, B], [C])
torch.cuda.synchronize()
