"""The process ``measure --explain`` runs under Nsight Compute
(``kgraph.tune.explain``): loads candidates of one work unit exactly as
measure does (the unit's seeded inputs, the cubin on a GPU of the target's
compute capability, else or if the driver refuses it the PTX), launches
every candidate's plan once as a warm-up and once more: the launches ncu
profiles (its ``--launch-skip`` and ``--launch-count`` select the second
round).

    python3 -m kgraph.tune._explain UNIT_FOLDER NAME... [--device N]
                                    [--libcuda PATH]

Writes nothing on stdout (ncu prints its CSV there); a failure is one line
on stderr and exit code 1.
"""

import argparse
import json
import os
import sys

from ..errors import KGraphError


def run(folder, names, ordinal=0, libcuda=None):
    """Loads candidates ``names`` of the unit in ``folder`` on device
    ``ordinal`` and runs each plan twice (warm-up, then the profiled
    round), in the order given."""
    import numpy as np
    from ..driver import get_driver
    from .measure import (_load_program, _seed, free_buffers, resident,
                          upload_random_inputs, uses_cubin)
    with open(os.path.join(folder, "unit.json")) as f:
        unit = json.load(f)
    by_name = {c["name"]: c for c in unit["candidates"]}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise KGraphError(f"{folder}: no candidate {', '.join(unknown)}")
    drv = get_driver(libcuda)
    drv.set_device(ordinal)
    use_cubin = uses_cubin(drv, ordinal, unit)
    programs = [_load_program(folder, by_name[n], ordinal, use_cubin)
                for n in names]
    rng = np.random.default_rng(_seed(unit["signature"]))
    inputs = upload_random_inputs(drv, programs[0].spec.inputs, rng)
    residents = []
    try:
        for n, prog in zip(names, programs):
            residents.append(resident(drv, ordinal, folder, by_name[n], prog,
                                      inputs, use_cubin))
        for _ in range(2):  # the warm-up, then the round ncu profiles
            for r in residents:
                r.run()
                drv.synchronize(None)
    finally:
        for r in residents:
            r.free()
        free_buffers(drv, inputs)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m kgraph.tune._explain",
                                 description="run candidates of a work unit "
                                 "for Nsight Compute (measure --explain)")
    ap.add_argument("folder", help="the work unit's folder")
    ap.add_argument("names", nargs="+", help="candidates (c00, ...)")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--libcuda")
    args = ap.parse_args(argv)
    try:
        run(args.folder, args.names, args.device, args.libcuda)
    except (KGraphError, OSError, ValueError, KeyError) as e:
        print(f"kgraph.tune._explain: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
