"""Writes a tuning database for test/Pipelines/tuning-db.test from the
--list-configs JSON of a graph: make_tuning_db.py LISTING OUT MODE...

Each MODE adds records for every group of the listing:
  exact:N       the group's candidate N (0 = the default) as the winner
  gpu:NAME      the same records' GPU (default "NVIDIA H200")
  near          the records keyed to another shape (every dimension + 1)
  space         a configuration-space version this compiler does not have
  stale         an emitter version this compiler does not have (one below
                its own, or above where its own is 0)
  bad-emitter   one more record, an emitter version of -1 (malformed)
  bad-config    a winner that is not an attribute
  wrong-kind    a winner of another kernel family
  unfit         a winner of the right family that cannot verify for the
                group (a GEMM of 8 stages of k-tiles of 256: too much
                shared memory)
  malformed     a record without a signature
"""

import json
import re
import sys

listing = json.load(open(sys.argv[1]))
records, gpu, rank = [], "NVIDIA H200", 1
modes = sys.argv[3:]
for m in modes:
    if m.startswith("gpu:"):
        gpu = m[4:]
    if m.startswith("exact:"):
        rank = int(m[6:])
for g in listing:
    cands = g["candidates"]
    rec = dict(signature=g["signature"], structure=g["structure"], shape=g["shape"],
               kind=g["kind"], target="sm_90a", gpu=gpu, space=g["space"],
               emitter=g["emitter"],
               best=cands[min(rank, len(cands) - 1)]["config"],
               default=cands[0]["config"], speedup=1.5, problem=g["problem"],
               measured_at="2026-12-02T00:00:00Z")
    if "near" in modes:
        rec["signature"] = "00000000" + g["signature"][8:]
        rec["shape"] = [d + 1 for d in g["shape"]]
    if "space" in modes:
        rec["space"] = g["space"] + 100
    if "stale" in modes:
        rec["emitter"] = g["emitter"] - 1 if g["emitter"] else 1
    if "bad-config" in modes:
        rec["best"] = "#kgraph.matmul_config<tile_m = "
    if "unfit" in modes:
        rec["best"] = re.sub(r"stages = \d+", "stages = 8",
                             re.sub(r"tile_k = \d+", "tile_k = 256", rec["best"]))
    if "wrong-kind" in modes:
        rec["best"] = ("#kgraph.elementwise_config<block_size = 256, vector_width = 4, "
                       "unroll = 1, grid_size = 1>" if g["kind"] != "elementwise" else
                       "#kgraph.reduce_config<threads_per_row = 128, rows_per_block = 2, "
                       "vector_width = 1, grid_size = 19>")
    records.append(rec)
if "malformed" in modes:
    records.append({"structure": "x"})
if "bad-emitter" in modes:
    records.append(dict(records[0], emitter=-1))
json.dump({"kgraph_tuning_db": 1, "records": records}, open(sys.argv[2], "w"))
