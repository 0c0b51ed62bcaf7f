#!/usr/bin/env python3
"""Data-parallel ResNet-50 and the N-body step across the GPUs of a host.

    torchrun --nproc_per_node=<GPUs> bench/bench_distributed.py --plans .gpu-extra/dist
    python3 bench/bench_distributed.py --plans .gpu-extra/dist     # one GPU, no torchrun

The plans come from bench/build_distributed_plans.py (run where kgraph-opt
is). One launch measures every world size p of --worlds (default: 1, 2, 4,
... up to the launched world, and the world itself): ranks 0..p-1 form a
process group, the others wait, so T1 and Tp come from the same processes
and GPUs; efficiency = T1 / (p * Tp) (strong scaling: the same work at
every p).

- resnet50: kgraph.distributed.DataParallel over ResNet-50 (f16 NHWC, the
  plan's per-call batch b) on a global batch of --global-batch images
  (default 2 * b * world) held by rank 0: "dp" times ``dp(x)`` (scatter,
  the calls, gather to rank 0), "local" each rank's own shard alone
  (``dp.run_local``, no communication). Checked: ``dp(x)`` against the
  same plan run on rank 0 call by call, and a ragged batch (4 rows short).
- nbody: the all-pairs N-body step (f32, eps as built) with the N bodies
  split into p blocks of N/p: each step all-gathers the positions
  (NCCL ``all_gather_into_tensor``, asynchronous), computes the local
  block against itself while the gather is in flight, then against the
  other ranks' bodies, and integrates (kick-drift). "serial" waits for
  the gather first. Checked: the first step's accelerations of 1024 bodies
  spread over all blocks against float64.

Prints two short tables on rank 0; --json (or $OUT) gets every number.
Exit 1 if a check fails.
"""

import argparse
import json
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "scripts"))

import benchlib  # noqa: E402


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _single_process_env():
    """The variables torchrun would set, for a run without it (world 1)."""
    if os.environ.get("RANK") is None:
        os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1",
                          LOCAL_WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(_free_port()))


def _parse_worlds(text, world):
    if text:
        ps = sorted({int(p) for p in text.split(",")})
        bad = [p for p in ps if not 1 <= p <= world]
        if bad:
            sys.exit(f"error: --worlds {bad} outside 1..{world} (the launched world)")
        return ps
    ps, p = [], 1
    while p < world:
        ps.append(p)
        p *= 2
    return ps + [world]


class Ctx:
    """The launched world: rank, device, a gloo group for host-side
    barriers, and a process group per measured world size."""

    def __init__(self, torch, dist, worlds):
        self.torch, self.dist = torch, dist
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.local_rank = int(os.environ.get("LOCAL_RANK", self.rank))
        self.device = torch.device("cuda", self.local_rank)
        self.host = dist.new_group(backend="gloo")
        self.groups = {}
        for p in worlds:  # every rank creates every group, in one order
            g = None if p == self.world else dist.new_group(list(range(p)))
            self.groups[p] = g

    def sync(self, p):
        """Every rank of world p has finished its GPU work (an all-reduce
        of one element on the group, then a device synchronize)."""
        t = self.torch.ones(1, device=self.device)
        self.dist.all_reduce(t, group=self.groups[p])
        self.torch.cuda.synchronize(self.device)

    def max_over(self, p, value):
        t = self.torch.tensor([value], dtype=self.torch.float64, device=self.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX, group=self.groups[p])
        return float(t.item())

    def barrier(self):
        self.dist.barrier(group=self.host)


def rel_l2(torch, got, ref):
    got, ref = got.double(), ref.double()
    return float((got - ref).norm() / ref.norm().clamp_min(1e-300))


# --- ResNet-50 through DataParallel ----------------------------------------------------


def bench_resnet50(ctx, args, folder, entry):
    import kgraph
    from kgraph.distributed import DataParallel
    torch = ctx.torch
    b = entry["batch"]
    prog = kgraph.load(os.path.join(folder, entry["plan"]), device=ctx.local_rank)
    prog.prepare(ctx.local_rank)  # one module load and weight upload per GPU
    batch = args.global_batch or 2 * b * ctx.world
    shape = entry["input"][1:]
    x = ref = None
    if ctx.rank == 0:
        gen = torch.Generator(device=ctx.device).manual_seed(0)
        x = torch.randn([batch] + shape, generator=gen, device=ctx.device).half()
        # The reference: the same plan on rank 0, call by call.
        ref = torch.cat([prog(_padded(torch, x[i:i + b], b))[:min(b, batch - i)]
                         for i in range(0, batch, b)])
    rows = []
    for p, group in ctx.groups.items():
        row = {"world": p, "batch": batch, "per_call": b}
        if ctx.rank < p:
            dp = DataParallel(prog, group=group)
            plan = dp.shards(batch)
            row.update(calls=plan.calls, padding=plan.padding)
            y = dp(x) if ctx.rank == 0 else dp()
            ragged = dp(x[:batch - 4]) if ctx.rank == 0 else dp()
            if ctx.rank == 0:
                row["rel_l2"] = rel_l2(torch, y, ref)
                row["bitwise"] = bool(torch.equal(y, ref))
                row["ragged_rel_l2"] = rel_l2(torch, ragged, ref[:batch - 4])
                row["ok"] = (row["rel_l2"] <= 1e-3 and row["ragged_rel_l2"] <= 1e-3
                             and tuple(ragged.shape) == (batch - 4, ref.shape[1]))
            ctx.sync(p)
            t0 = time.perf_counter()
            for _ in range(args.iters):
                dp(x) if ctx.rank == 0 else dp()
            ctx.sync(p)
            row["dp_s"] = (time.perf_counter() - t0) / args.iters
            # Each rank's own rows, no communication: the compute alone.
            n = plan.real_rows(ctx.rank)
            gen = torch.Generator(device=ctx.device).manual_seed(ctx.rank + 1)
            mine = torch.randn([max(n, 1)] + shape, generator=gen,
                               device=ctx.device).half()
            dp.run_local(mine)
            ctx.sync(p)
            t0 = time.perf_counter()
            for _ in range(args.iters):
                if n:
                    dp.run_local(mine)
            torch.cuda.synchronize(ctx.device)
            row["local_s"] = ctx.max_over(p, (time.perf_counter() - t0) / args.iters)
            dp.close()
        ctx.barrier()
        rows.append(row)
    _efficiency(rows, "dp_s")
    _efficiency(rows, "local_s")
    return rows


def _padded(torch, x, b):
    if x.shape[0] == b:
        return x
    return torch.cat([x, x.new_zeros((b - x.shape[0],) + tuple(x.shape[1:]))])


def _efficiency(rows, key):
    t1 = next((r[key] for r in rows if r["world"] == 1 and key in r), None)
    for r in rows:
        if t1 is not None and key in r:
            r[key.replace("_s", "_eff")] = t1 / (r["world"] * r[key])


# --- N-body across GPUs ---------------------------------------------------------------


def nbody_reference(torch, pos, mass, rows, eps, chunk=128):
    """float64 accelerations of bodies ``rows`` from all bodies."""
    p = pos.double()
    m = mass.double()
    out = []
    for i in range(0, len(rows), chunk):
        t = p[rows[i:i + chunk]]
        d = p[None, :, :] - t[:, None, :]
        inv = ((d * d).sum(-1) + eps) ** -1.5
        out.append(torch.einsum("rc,rcx->rx", inv * m[None, :], d))
    return torch.cat(out)


class NBodyRank:
    """This rank's block of an N-body run on world p: its positions,
    velocities and masses, the masses of everyone else's bodies (in the
    rotated order of ``sources``), and the two plans."""

    def __init__(self, ctx, folder, plans, n, p, eps, dt):
        import kgraph
        torch = ctx.torch
        self.ctx, self.n, self.p, self.eps, self.dt = ctx, n, p, eps, dt
        self.group = ctx.groups[p]
        r, loc = ctx.rank, n // p
        self.loc = loc
        gen = torch.Generator().manual_seed(0)
        pos = torch.rand(n, 3, generator=gen) * 2 - 1
        mass = (torch.rand(n, generator=gen) + 0.5) / n
        self.pos0, self.mass0 = pos, mass
        dev = ctx.device
        self.x = pos[r * loc:(r + 1) * loc].contiguous().to(dev)
        self.v = torch.zeros_like(self.x)
        self.m = mass[r * loc:(r + 1) * loc].contiguous().to(dev)
        self.m_rest = torch.cat([mass[(r + 1) * loc:], mass[:r * loc]]).to(dev)
        self.all = torch.empty(n, 3, device=dev)
        self.a = torch.empty_like(self.x)
        self.a_rest = torch.empty_like(self.x)
        self.local = kgraph.load(os.path.join(folder, plans["local"]), device=ctx.local_rank)
        self.local.prepare(ctx.local_rank)
        self.remote = None
        if p > 1:
            self.remote = kgraph.load(os.path.join(folder, plans["remote"]),
                                      device=ctx.local_rank)
            self.remote.prepare(ctx.local_rank)

    def sources(self):
        """The other ranks' positions, rank+1 first (so one plan serves
        every rank): the gathered positions rotated, a copy of (N - N/p) x 3
        floats."""
        r, loc = self.ctx.rank, self.loc
        return self.ctx.torch.cat([self.all[(r + 1) * loc:], self.all[:r * loc]])

    def accelerations(self, overlap=True):
        from kgraph.distributed import all_gather_into_tensor
        work = all_gather_into_tensor(self.all, self.x, group=self.group,
                                      async_op=True)
        if not overlap:
            work.wait()
        # The local block runs on torch's stream while NCCL gathers on its own.
        self.local.run([self.x, self.x, self.m], [self.a])
        if overlap:
            work.wait()  # the stream waits for the gather, the host does not
        if self.remote is not None:
            self.remote.run([self.x, self.sources(), self.m_rest], [self.a_rest])
            self.a += self.a_rest
        return self.a

    def step(self, overlap=True):
        a = self.accelerations(overlap)
        self.v.add_(a, alpha=self.dt)
        self.x.add_(self.v, alpha=self.dt)


def bench_nbody(ctx, args, folder, entry):
    torch = ctx.torch
    eps = entry["eps"]
    rows = []
    for n in [int(s) for s in args.nbody_n.split(",")]:
        sizes = entry["sizes"].get(str(n))
        if sizes is None:
            sys.exit(f"error: {folder}/dist.json has no N-body plans for N={n}: build "
                     f"them with bench/build_distributed_plans.py ... --nbody {n}")
        size_rows = []
        for p in ctx.groups:
            row = {"n": n, "world": p, "steps": args.steps}
            if str(p) not in sizes:
                row["error"] = f"no plans for p={p} (N divisible by p? built for it?)"
            elif ctx.rank < p:
                body = NBodyRank(ctx, folder, sizes[str(p)], n, p, eps, args.dt)
                a = body.accelerations()
                gathered = torch.empty(n, 3, device=ctx.device)
                from kgraph.distributed import all_gather_into_tensor
                all_gather_into_tensor(gathered, a, group=body.group)
                if ctx.rank == 0:
                    pick = torch.linspace(0, n - 1, 1024).long()
                    pick = torch.unique(torch.cat([pick, torch.arange(p) * (n // p)]))
                    ref = nbody_reference(torch, body.pos0.to(ctx.device),
                                          body.mass0.to(ctx.device),
                                          pick.to(ctx.device), eps)
                    row["rel_l2"] = rel_l2(torch, gathered[pick.to(ctx.device)], ref)
                    row["ok"] = row["rel_l2"] <= args.tol
                for overlap, key in ((True, "step_s"), (False, "serial_s")):
                    if key == "serial_s" and args.no_serial:
                        continue
                    body.step(overlap)  # warm-up
                    ctx.sync(p)
                    t0 = time.perf_counter()
                    for _ in range(args.steps):
                        body.step(overlap)
                    ctx.sync(p)
                    row[key] = (time.perf_counter() - t0) / args.steps
                finite = bool(torch.isfinite(body.x).all())
                row["finite"] = ctx.max_over(p, 0.0 if finite else 1.0) == 0.0
                if ctx.rank == 0:
                    row["ok"] = row["ok"] and row["finite"]
                    row["ginteractions_s"] = n * n / row["step_s"] / 1e9
                del body
            ctx.barrier()
            size_rows.append(row)
        _efficiency(size_rows, "step_s")
        _efficiency(size_rows, "serial_s")
        rows += size_rows
    return rows


# --- main --------------------------------------------------------------------------


def _fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def print_tables(device, resnet, nbody):
    if resnet:
        r0 = resnet[0]
        print(f"\nResNet-50 f16 NHWC through kgraph.distributed.DataParallel: "
              f"{r0['batch']} images, {r0['per_call']} per call ({device})")
        print(f"{'GPUs':>4} {'calls':>5} {'dp img/s':>9} {'eff':>5} "
              f"{'local img/s':>11} {'eff':>5}  check")
        for r in resnet:
            ips = r["batch"] / r["dp_s"] if "dp_s" in r else None
            lps = r["batch"] / r["local_s"] if "local_s" in r else None
            check = ("PASS" if r.get("ok") else "FAIL") + (
                " (bitwise)" if r.get("bitwise") else
                f" (rel {r['rel_l2']:.1e})" if "rel_l2" in r else "")
            print(f"{r['world']:>4} {r.get('calls', '-'):>5} {_fmt(ips, '9.0f')} "
                  f"{_fmt(r.get('dp_eff'), '5.2f')} {_fmt(lps, '11.0f')} "
                  f"{_fmt(r.get('local_eff'), '5.2f')}  {check}")
    if nbody:
        print(f"\nN-body f32 step, positions all-gathered (NCCL) while the local "
              f"block runs ({device})")
        print(f"{'N':>7} {'GPUs':>4} {'ms/step':>8} {'eff':>5} {'serial ms':>9} "
              f"{'eff':>5} {'Ginter/s':>8}  check")
        for r in nbody:
            if "error" in r:
                print(f"{r['n']:>7} {r['world']:>4}  {r['error']}")
                continue
            step = r["step_s"] * 1e3
            serial = r["serial_s"] * 1e3 if "serial_s" in r else None
            check = ("PASS" if r.get("ok") else "FAIL") + f" (rel {r['rel_l2']:.1e})"
            print(f"{r['n']:>7} {r['world']:>4} {step:8.2f} "
                  f"{_fmt(r.get('step_eff'), '5.2f')} {_fmt(serial, '9.2f')} "
                  f"{_fmt(r.get('serial_eff'), '5.2f')} "
                  f"{r['ginteractions_s']:8.1f}  {check}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plans", default=os.path.join(REPO, ".gpu-extra", "dist"),
                    help="the folder bench/build_distributed_plans.py wrote")
    ap.add_argument("--only", default="resnet50,nbody")
    ap.add_argument("--worlds", default=None,
                    help="comma-separated world sizes (default 1, 2, 4, ... and "
                         "the launched world)")
    ap.add_argument("--global-batch", type=int, default=None,
                    help="ResNet-50 images per dp(x) (default 2 * b * world)")
    ap.add_argument("--iters", type=int, default=3, help="timed dp(x) calls")
    ap.add_argument("--nbody-n", default="262144,65536",
                    help="comma-separated body counts (of those built)")
    ap.add_argument("--steps", type=int, default=5, help="timed N-body steps")
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--tol", type=float, default=1e-3,
                    help="N-body relative L2 error bound against float64")
    ap.add_argument("--no-serial", action="store_true",
                    help="leave out the N-body step without overlap")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    only = set(args.only.split(","))

    manifest_path = os.path.join(args.plans, "dist.json")
    if not os.path.isfile(manifest_path):
        sys.exit(f"error: no {manifest_path}: build the plans where kgraph-opt is "
                 f"with bench/build_distributed_plans.py build/bin/kgraph-opt "
                 f"{args.plans}")
    with open(manifest_path) as f:
        manifest = json.load(f)
    for part in only:
        if part not in manifest:
            sys.exit(f"error: {manifest_path} has no {part} plans: build them with "
                     f"bench/build_distributed_plans.py ... --only {part}")

    import torch
    import torch.distributed as dist
    benchlib.require_gpu(torch)
    _single_process_env()
    local_rank = int(os.environ["LOCAL_RANK"])
    if local_rank >= torch.cuda.device_count():
        sys.exit(f"error: LOCAL_RANK {local_rank} but {torch.cuda.device_count()} "
                 f"GPU(s): --nproc_per_node at most {torch.cuda.device_count()}")
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    worlds = _parse_worlds(args.worlds, dist.get_world_size())
    ctx = Ctx(torch, dist, worlds)
    device = f"{torch.cuda.get_device_name(ctx.device)} x{ctx.world}"
    if ctx.rank == 0:
        import case_digest
        built = (manifest.get("built_from") or {}).get("digest")
        stale = "" if built == case_digest.digest() else (
            f"; WARNING: plans built from sources {built}, this tree's are "
            f"{case_digest.digest()}")
        print(f"{device}, torch {torch.__version__}, NCCL, target "
              f"{manifest.get('target')}, world sizes {worlds}{stale}", flush=True)
    resnet = bench_resnet50(ctx, args, args.plans, manifest["resnet50"]) \
        if "resnet50" in only else []
    nbody = bench_nbody(ctx, args, args.plans, manifest["nbody"]) \
        if "nbody" in only else []
    failed = False
    if ctx.rank == 0:
        print_tables(device, resnet, nbody)
        failed = any(not r.get("ok") for r in resnet + nbody if "error" not in r)
        benchlib.write_json({"device": device, "torch": torch.__version__,
                             "target": manifest.get("target"), "worlds": worlds,
                             "resnet50": resnet, "nbody": nbody},
                            args.json, "bench_distributed.json")
    ctx.barrier()
    dist.destroy_process_group()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
