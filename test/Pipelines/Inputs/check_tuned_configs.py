"""check_tuned_configs.py LISTING TILED RANK: whether every group's config
in the --emit=tiled IR TILED is candidate RANK of the --list-configs JSON
LISTING (groups in order); prints one line saying so or what differs."""

import json
import re
import sys

listing = json.load(open(sys.argv[1]))
tiled = re.findall(r"kgraph\.config = (#kgraph\.\w+<[^>]*>)", open(sys.argv[2]).read())
rank = int(sys.argv[3])
want = [g["candidates"][min(rank, len(g["candidates"]) - 1)]["config"] for g in listing]
if tiled == want:
    print(f"{len(want)} groups: every config is candidate {rank}")
else:
    for i, (got, exp) in enumerate(zip(tiled, want)):
        if got != exp:
            print(f"group {i}: {got} is not candidate {rank} {exp}")
    if len(tiled) != len(want):
        print(f"{len(tiled)} configs for {len(want)} groups")
