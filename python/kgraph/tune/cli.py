"""The command line of kgraph.tune."""

import argparse
import sys

from ..errors import KGraphError


def _gpus(text):
    try:
        gpus = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--gpus {text!r}: a comma list of "
                                         f"CUDA ordinals, e.g. 0,1") from None
    if not gpus or any(g < 0 for g in gpus) or len(set(gpus)) != len(gpus):
        raise argparse.ArgumentTypeError(f"--gpus {text!r}: distinct "
                                         f"non-negative CUDA ordinals")
    return gpus


def _budget(text):
    from . import parse_budget
    try:
        return parse_budget(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _measure_args(p):
    p.add_argument("--gpus", type=_gpus, help="CUDA ordinals to spread the "
                   "kernels over, one worker process each (default: 0, in "
                   "this process)")
    p.add_argument("--budget", type=_budget, help="seconds (90, 10m) or trials "
                   "(200t), split over the kernels by their share of the "
                   "graph's estimated time")
    p.add_argument("--reps", type=int, default=40, help="timed samples per "
                   "candidate (default 40)")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds "
                   "the samples are spread over (default 5)")
    p.add_argument("--min-gain", type=float, default=0.02, help="the smallest "
                   "relative gain that replaces the default (default 0.02)")
    p.add_argument("--flush-mb", type=float, help="L2 flush buffer in MiB "
                   "(default: twice the device's L2)")
    p.add_argument("--hang-timeout", type=float, default=120.0,
                   help="seconds without progress after which a GPU's worker "
                   "is killed and the candidate it ran is left out (default "
                   "120)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (a line per kernel instead)")
    p.add_argument("--explain", action="store_true",
                   help="also record the hardware signals (occupancy, L2 "
                   "hit rate, DRAM and tensor-pipe throughput) of each "
                   "kernel's default and winner with Nsight Compute")
    p.add_argument("--ncu", metavar="PATH", help="the Nsight Compute CLI for "
                   "--explain (implies it; default: ncu on PATH, in "
                   "/usr/local/cuda/bin or /opt/nvidia/nsight-compute)")
    p.add_argument("--explain-timeout", type=float, metavar="S",
                   help="seconds one Nsight Compute run may take before it "
                   "is killed (default 120)")


def parser():
    ap = argparse.ArgumentParser(
        prog="kgraph-tune", description="Measured tuning of kgraph kernels "
        "(docs/tuning.md).")
    from .. import __version__
    ap.add_argument("--version", action="version",
                    version=f"kgraph-tune {__version__}")
    sub = ap.add_subparsers(dest="verb", required=True)

    p = sub.add_parser("prepare", help="work units of graphs' kernels (no GPU)")
    p.add_argument("graphs", nargs="+", metavar="graph",
                   help="kgraph MLIR files (a kernel several share is "
                   "measured once)")
    p.add_argument("--target", required=True)
    p.add_argument("--top", type=int, default=8,
                   help="candidates per kernel from the model (default 8)")
    p.add_argument("-o", "--output", required=True, help="work folder")
    p.add_argument("--db", help="a database whose records (other GPUs, "
                   "nearest shapes) become first candidates")
    p.add_argument("--no-fuse", action="store_true",
                   help="compile without --fuse")
    p.add_argument("-j", "--jobs", type=int, help="parallel compiles "
                   "(default: every core)")

    p = sub.add_parser("measure", help="time prepared work units on a GPU")
    p.add_argument("folder")
    p.add_argument("--db", help="database to add the records to (default "
                   "FOLDER/tuning.db.json)")
    _measure_args(p)

    p = sub.add_parser("run", help="prepare and measure on one machine")
    p.add_argument("graph")
    p.add_argument("--target", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--top", type=int, default=8)
    p.add_argument("-o", "--output", help="keep the work units here")
    p.add_argument("--no-fuse", action="store_true")
    p.add_argument("-j", "--jobs", type=int)
    _measure_args(p)
    p.set_defaults(budget=("seconds", 600))

    p = sub.add_parser("merge", help="join tuning databases")
    p.add_argument("inputs", nargs="+")
    p.add_argument("-o", "--output", required=True)

    p = sub.add_parser("ab", help="compare two compiled plans of one graph")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--function", help="the plan function (default: the first)")
    p.add_argument("--flush-mb", type=float)

    p = sub.add_parser("report", help="the model's picks against the "
                       "measurements")
    p.add_argument("db")
    p.add_argument("--png", help="write the estimate-against-measured plot")
    p.add_argument("--gpu", help="only this GPU's records")
    p.add_argument("--target", help="only this target's records")

    p = sub.add_parser("replay", help="the current model's picks for graphs, "
                       "looked up in the measurements")
    p.add_argument("db")
    p.add_argument("graphs", nargs="+", metavar="graph")
    p.add_argument("--target", required=True)
    p.add_argument("--gpu", help="only this GPU's records")
    p.add_argument("--no-fuse", action="store_true")
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    from . import ab, measure, merge, prepare, replay, report, run
    from .db import TuningDBError
    try:
        if args.verb == "prepare":
            prepare(args.graphs, args.target, args.output, top=args.top,
                    fuse=not args.no_fuse, db=args.db, jobs=args.jobs)
        elif args.verb in ("measure", "run"):
            kw = dict(gpus=args.gpus, budget=args.budget, reps=args.reps,
                      rounds=args.rounds, min_gain=args.min_gain,
                      flush_mb=args.flush_mb, progress=not args.no_progress,
                      hang_timeout=args.hang_timeout, explain=args.explain,
                      ncu=args.ncu, explain_timeout=args.explain_timeout)
            if args.verb == "measure":
                measure(args.folder, db=args.db, **kw)
            else:
                run(args.graph, args.target, args.db, top=args.top,
                    out=args.output, fuse=not args.no_fuse, jobs=args.jobs, **kw)
        elif args.verb == "merge":
            db, added, warnings = merge(args.inputs, args.output)
            for w in warnings:
                print(f"warning: {w}", file=sys.stderr)
            print(f"{args.output}: {len(db.records)} record(s) from "
                  f"{len(args.inputs)} file(s) ({added} distinct)")
        elif args.verb == "ab":
            ab(args.a, args.b, rounds=args.rounds, reps=args.reps,
               device=args.device, function=args.function,
               flush_mb=args.flush_mb)
        elif args.verb == "report":
            report(args.db, png=args.png, gpu=args.gpu, target=args.target)
        elif args.verb == "replay":
            replay(args.db, args.graphs, args.target, gpu=args.gpu,
                   fuse=not args.no_fuse)
    except (KGraphError, TuningDBError, ValueError, OSError) as e:
        print(f"kgraph-tune {args.verb}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"kgraph-tune {args.verb}: interrupted", file=sys.stderr)
        return 130
    return 0
