"""The compiler's configuration space, for the variant benchmarks.

The variant scripts (bench/gemm_variants/build.py,
scripts/build-bench-variants.sh through bench/elementwise_variants.py) take
their configurations from ``kgraph-opt --list-configs``: every configuration
they pin is one the compiler listed as a legal candidate, in the compiler's
own attribute text, and pinning replaces the configuration that kgraph-tile
chose (rank 1) in the tiled IR with that text. Nothing here spells the
attribute grammar; ``fields`` only reads a listed attribute's parameters so
a script can select candidates by value.
"""

import json
import re
import subprocess

# `name = value` parameters of a printed config attribute; a value is a
# bracketed list or runs up to the next comma or the closing '>'.
_FIELD = re.compile(r"(\w+)\s*=\s*(\[[^\]]*\]|[^,>]+)")


class ConfigSpaceError(RuntimeError):
    pass


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise ConfigSpaceError(f"{' '.join(cmd)} failed:\n{r.stderr.strip()}")
    return r.stdout


def list_configs(opt, graph, target, n=100000, fuse=False):
    """The groups of `graph` with up to `n` candidates each, best first
    (kgraph-opt --list-configs JSON)."""
    cmd = [opt, f"--tile={target}", f"--list-configs={n}", graph]
    if fuse:
        cmd.insert(1, "--fuse")
    return json.loads(_run(cmd))


def fields(config):
    """The parameters of a listed config attribute's text, as a dict of
    int, str or list-of-int values."""
    body = config[config.index("<") + 1: config.rindex(">")]
    out = {}
    for key, value in _FIELD.findall(body):
        value = value.strip()
        if value.startswith("["):
            out[key] = [int(v) for v in value[1:-1].split(",") if v.strip()]
        else:
            try:
                out[key] = int(value)
            except ValueError:
                out[key] = value
    return out


def pick(candidates, **want):
    """The best-ranked candidate whose fields have the values in `want`
    (None: no legal candidate matches)."""
    for c in candidates:
        f = fields(c["config"])
        if all(f.get(k) == v for k, v in want.items()):
            return c
    return None


def tiled_ir(opt, graph, target, fuse=False):
    """`graph` after kgraph-tile (--emit=tiled): every group carries the
    configuration the compiler chose."""
    cmd = [opt, f"--tile={target}", "--emit=tiled", graph, "-o", "-"]
    if fuse:
        cmd.insert(1, "--fuse")
    return _run(cmd)


def pin(tiled, groups, choices):
    """`tiled` (tiled_ir of a graph whose list_configs is `groups`) with the
    configuration of group i replaced by choices[i] (a candidate's config
    text); groups not in `choices` keep the compiler's choice."""
    out, pos = [], 0
    for i, group in enumerate(groups):
        chosen = group["candidates"][0]["config"]
        at = tiled.find("kgraph.config = ", pos)
        if at < 0:
            raise ConfigSpaceError(f"group {i} has no kgraph.config in the tiled IR")
        at += len("kgraph.config = ")
        if not tiled.startswith(chosen, at):
            raise ConfigSpaceError(
                f"group {i}: the tiled IR's config is not the listed rank 1 ({chosen})")
        out.append(tiled[pos:at])
        out.append(choices.get(i, chosen))
        pos = at + len(chosen)
    out.append(tiled[pos:])
    return "".join(out)


def compile_pinned(opt, pinned_mlir, target, ptx):
    """Compiles a pinned tiled graph to `ptx` (and its .plan.json); raises
    with kgraph-opt's diagnostic if the compiler rejects it."""
    _run([opt, f"--tile={target}", pinned_mlir, "-o", ptx])
