#!/usr/bin/python3
"""Checks kgraph-opt --list-configs against the compiler itself.

    check_list_configs.py KGRAPH_OPT GRAPH.mlir N TARGET...

For every target: the JSON has one entry per group with its kind and at most
N distinct candidates; rank 1 is the configuration kgraph-tile chooses
(--emit=tiled); and every listed candidate, pinned on its group, passes
kgraph-tile and kgraph-lower-to-gpu (the one legality check holds for listed
configurations too). Prints one line per target; exits 1 on a mismatch.
"""
import json
import re
import subprocess
import sys
import tempfile

FUSED = re.compile(r"kgraph\.fused (?:([a-z]+) )?\(.*?\{kgraph\.config = (#kgraph\.[a-z_]+<.*?>)\}")


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def tiled_configs(opt, graph, target):
    out = run([opt, "--fuse", f"--tile={target}", "--emit=tiled", graph])
    if out.returncode != 0:
        sys.exit(f"--emit=tiled failed for {target}:\n{out.stderr}")
    return [(m.group(1), m.group(2)) for m in FUSED.finditer(out.stdout)]


def main():
    opt, graph, n, targets = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    failures = 0
    for target in targets:
        out = run([opt, "--fuse", f"--tile={target}", f"--list-configs={n}", graph])
        if out.returncode != 0:
            sys.exit(f"--list-configs failed for {target}:\n{out.stderr}")
        groups = json.loads(out.stdout)
        tiled = tiled_configs(opt, graph, target)
        if len(groups) != len(tiled):
            print(f"{target}: {len(groups)} listed groups, {len(tiled)} tiled")
            failures += 1
            continue
        pinned_ok = 0
        for group, (kind, chosen) in zip(groups, tiled):
            configs = [c["config"] for c in group["candidates"]]
            if group["kind"] != kind:
                print(f"{target} {group['group']}: kind {group['kind']} != {kind}")
                failures += 1
            if not configs or len(configs) > n or len(set(configs)) != len(configs):
                print(f"{target} {group['group']}: bad candidate list {configs}")
                failures += 1
                continue
            if configs[0] != chosen:
                print(f"{target} {group['group']}: rank 1 {configs[0]} != chosen {chosen}")
                failures += 1
            # Pin every candidate on this group (the others keep the
            # default) and lower.
            for config in configs:
                text = run([opt, "--fuse", f"--tile={target}", "--emit=tiled", graph]).stdout
                matches = list(FUSED.finditer(text))
                m = matches[groups.index(group)]
                text = text[:m.start(2)] + config + text[m.end(2):]
                with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
                    f.write(text)
                    f.flush()
                    low = run([opt, f.name, f"--kgraph-tile=target={target}",
                               "--kgraph-lower-to-gpu"])
                if low.returncode != 0:
                    print(f"{target} {group['group']}: pinned {config} fails:\n{low.stderr}")
                    failures += 1
                else:
                    pinned_ok += 1
        print(f"{target}: {len(groups)} groups, rank 1 = chosen, {pinned_ok} pinned candidates lower")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
