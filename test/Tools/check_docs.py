#!/usr/bin/env python3
"""The docs check (test/Docs/docs.test, in the README's test command): what
README.md and docs/*.md name must exist.

    check_docs.py REPO [--mlir-include DIR]

- Every repository path in backticks (`lib/...`, `scripts/x.py`, with an
  optional `:line` suffix) and every relative link target exists.
- Every C++/Python name in backticks that looks like code (`ns::name`,
  `Class::method`, `name()`, camelCase or CamelCase identifiers) is a word of
  the repository's sources, or of MLIR/LLVM's headers (upstream API), or in
  ALLOW below (names that are deliberately not code).
- Every bare source file name in backticks (`Fuse.cpp`, `KGraphAttrs.td`)
  is the name of a file of the repository, or one the sources generate.
- Op lists marked `<!-- ops: SET -->` (the next non-empty line or
  paragraph) name exactly the ops of SET, read from the sources:
  `elementwise` (kgraph::isElementwiseOp), `float-only` (ODS ops on float
  tensors only).
- File lists marked `<!-- users: NAME -->` (the next paragraph's backticked
  `.cpp` names) name exactly the .cpp files of lib/ and tools/ that call
  NAME; the file that defines it may be named or not.
- No quoted test counts ("26 of 26 tests", or a lit or pytest total such as
  "Total Discovered Tests: 75" in an output block): they go stale.

Prints `FILE:LINE: message` for each problem and exits 1 if there is one;
otherwise prints a one-line summary.
"""

import argparse
import glob
import os
import re
import sys

# Backticked names that are deliberately not code of this repository or of
# MLIR/LLVM (CUDA driver and runtime API, torch, ptxas report words, ...).
ALLOW = {
    "cudaFuncSetAttribute", "cudaGetDeviceProperties", "cuModuleLoadData",
    "cuLaunchKernel", "cuTensorMapEncodeTiled", "cuMemcpyHtoD",
    "cuMemcpyDtoH", "cuMemAlloc", "cuCtxSynchronize", "cuGraphLaunch",
    "setmaxnreg", "do_bench", "torch.compile", "CUtensorMapDataType",
    "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "PYTHONPATH", "KGRAPH_OPT",
    "LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "fastmath",
}

# The walkthrough's own example (adding-an-op-and-a-pass.md builds a
# softplus op and pass that are not part of kgraph) and placeholders.
ALLOW_PATTERNS = [re.compile(p) for p in (r"[Ss]oftplus", r"<\w+>", r"\.\.\.",
                                          r"^registerXPasses")]

TOP_DIRS = ("include/", "lib/", "test/", "tools/", "scripts/", "docs/",
            "python/", "bench/", "examples/", "cmake/", ".ci/")
SOURCE_EXTS = (".h", ".cpp", ".td", ".py", ".sh", ".cmake", ".txt", ".c",
               ".inc", ".mlir", ".test", ".json")
BACKTICK = re.compile(r"`([^`\n]+)`")
# A bare file name of a source kind (no directory): `Fuse.cpp`, `Passes.td`.
BARE_FILE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*\.(cpp|h|td|py|sh|mlir|test)$")
# Test counts of a whole suite, in prose or in an output block.
PROSE_COUNT = re.compile(r"\b\d[\d,]* of \d[\d,]* tests\b")
SUITE_COUNT = re.compile(r"Total Discovered Tests: *\d|Testing: \d+ tests|"
                         r"\b\d+ passed\b.* in \d")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_~][A-Za-z0-9_]*)*(\(\))?$")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def words_of(paths):
    words = set()
    for p in paths:
        try:
            with open(p, errors="replace") as f:
                words.update(WORD.findall(f.read()))
        except OSError:
            pass
    return words


def repo_sources(repo):
    out = []
    for top in ("include", "lib", "tools", "test", "python", "scripts",
                "bench", "cmake", "examples"):
        for root, dirs, files in os.walk(os.path.join(repo, top)):
            dirs[:] = [d for d in dirs if d not in ("__pycache__",)]
            out += [os.path.join(root, f) for f in files if f.endswith(SOURCE_EXTS)]
    out += [os.path.join(repo, "CMakeLists.txt")]
    return out


def looks_like_code(name):
    """camelCase, CamelCase with two humps, ns::name or name()."""
    if not CODE_NAME.match(name):
        return False
    if "::" in name or name.endswith("()"):
        return True
    if name.isupper() or "_" in name.strip("_") and name.lower() == name:
        return False   # CONSTANTS and snake_case words (flags, fields)
    return bool(re.search(r"[a-z][A-Z]", name)) or \
        bool(re.match(r"^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*$", name))


def file_mentions(paths):
    """File names the sources write (generated files: `NVPTXOnlyTargets.cpp`)."""
    names = set()
    for p in paths:
        try:
            with open(p, errors="replace") as f:
                names.update(m.group(0) for m in re.finditer(
                    r"[A-Za-z_][A-Za-z0-9_.-]*\.(?:cpp|h|td|py|sh|mlir|test)\b", f.read()))
        except OSError:
            pass
    return names


def repo_file_names(repo):
    names = set()
    for root, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"
                   and not os.path.exists(os.path.join(root, d, "CMakeCache.txt"))]
        names.update(files)
    return names


def users_of(repo, name):
    """(users, definers): basenames of the .cpp files of lib/ and tools/ that
    call `name`, and of those that define it at the top level."""
    call = re.compile(r"\b" + re.escape(name) + r"\s*\(")
    define = re.compile(r"(?m)^[A-Za-z_].*\b" + re.escape(name) + r"\s*\(")
    users, definers = set(), set()
    for top in ("lib", "tools"):
        for root, _, files in os.walk(os.path.join(repo, top)):
            for f in files:
                if not f.endswith(".cpp"):
                    continue
                text = open(os.path.join(root, f), errors="replace").read()
                if define.search(text):
                    definers.add(f)
                elif call.search(text):
                    users.add(f)
    return users, definers


def paragraph_after(lines, n):
    """The next non-empty line or paragraph after line n (1-based)."""
    para = []
    for nxt in lines[n:]:
        if not nxt.strip():
            if para:
                break
            continue
        para.append(nxt)
    return para


def elementwise_ops(repo):
    text = open(os.path.join(repo, "lib/Dialect/KGraph/IR/KGraphClassify.cpp")).read()
    body = text[text.index("isElementwiseOp"):]
    body = body[: body.index("};")]
    return set(re.findall(r'"kgraph\.([a-z_0-9]+)"', body))


def float_only_ops(repo):
    """ODS ops whose operands are float tensors only."""
    ops = set()
    for td in glob.glob(os.path.join(repo, "include/kgraph/Dialect/KGraph/IR/*.td")):
        text = open(td).read()
        for m in re.finditer(r'def \w+\s*:\s*KGraph_(\w+)<"([a-z_0-9]+)"([^>]*)>', text):
            base, name, rest = m.groups()
            if base == "UnaryFloatOp" or (base == "BinaryOp" and "FloatTensor" in rest):
                ops.add(name)
    return ops


def all_ops(repo):
    """Every op name the ODS defines (the vocabulary of op lists)."""
    ops = set()
    for td in glob.glob(os.path.join(repo, "include/kgraph/Dialect/KGraph/IR/*.td")):
        ops.update(re.findall(r'def \w+\s*:\s*KGraph_\w+<"([a-z_0-9]+)"', open(td).read()))
    return ops


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo")
    ap.add_argument("--mlir-include", default="/usr/lib/llvm-22/include")
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    docs = [os.path.join(repo, "README.md")] + sorted(glob.glob(os.path.join(repo, "docs", "*.md")))
    code_words = words_of(repo_sources(repo))
    file_names = repo_file_names(repo)
    generated_names = file_mentions(repo_sources(repo))
    upstream = []
    for sub in ("mlir", "llvm/ADT", "llvm/Support"):
        for root, _, files in os.walk(os.path.join(args.mlir_include, sub)):
            upstream += [os.path.join(root, f) for f in files if f.endswith((".h", ".td", ".inc"))]
    upstream_words = words_of(upstream)
    op_sets = {"elementwise": elementwise_ops(repo), "float-only": float_only_ops(repo)}
    vocabulary = all_ops(repo)

    problems, checked = [], {"paths": 0, "names": 0, "op lists": 0, "file lists": 0}
    for doc in docs:
        rel = os.path.relpath(doc, repo)
        lines = open(doc).read().split("\n")
        in_code = False
        for n, line in enumerate(lines, 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            if PROSE_COUNT.search(line) or SUITE_COUNT.search(line):
                problems.append(f"{rel}:{n}: a quoted test count goes stale; say what the tests check instead")
            if in_code:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                path = target.split("#")[0]
                checked["paths"] += 1
                if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(doc), path))):
                    problems.append(f"{rel}:{n}: link target '{target}' does not exist")
            for tok in BACKTICK.findall(line):
                tok = tok.strip()
                path = re.sub(r":[0-9]+(-[0-9]+)?$", "", tok)
                if any(p.search(tok) for p in ALLOW_PATTERNS):
                    continue
                if path.startswith(TOP_DIRS) and " " not in path:
                    checked["paths"] += 1
                    hits = glob.glob(os.path.join(repo, path)) if any(c in path for c in "*?[") \
                        else [p for p in [os.path.join(repo, path)] if os.path.exists(p)]
                    # build outputs and generated files are not in the tree
                    if not hits and not path.startswith(("build", "install")):
                        problems.append(f"{rel}:{n}: path '{path}' does not exist")
                    continue
                if BARE_FILE.match(tok):
                    checked["paths"] += 1
                    # a file of the tree, or one the build generates (named in the sources)
                    if tok not in file_names and tok not in generated_names:
                        problems.append(f"{rel}:{n}: file '{tok}' does not exist")
                    continue
                if looks_like_code(tok) and tok not in ALLOW:
                    checked["names"] += 1
                    last = re.sub(r"\(\)$", "", tok).split("::")[-1]
                    if last not in code_words and last not in upstream_words:
                        problems.append(f"{rel}:{n}: '{tok}' names no function, class or value of the sources")
            # A marker is a line of its own (one quoted in backticks is prose).
            marker = line.strip() if line.strip().startswith("<!--") else ""
            m = re.search(r"<!-- users: ([A-Za-z_][A-Za-z0-9_]*) -->", marker)
            if m:
                name = m.group(1)
                checked["file lists"] += 1
                users, definers = users_of(repo, name)
                listed = {os.path.basename(t.strip()) for t in
                          BACKTICK.findall(" ".join(paragraph_after(lines, n)))
                          if t.strip().endswith(".cpp")}
                missing = sorted(users - listed)
                extra = sorted(listed - users - definers)
                if not users and not definers:
                    problems.append(f"{rel}:{n}: no .cpp file of lib/ or tools/ calls '{name}'")
                elif missing or extra:
                    problems.append(f"{rel}:{n}: the files that call {name} differ from the sources"
                                    + (f"; missing {', '.join(missing)}" if missing else "")
                                    + (f"; not callers: {', '.join(extra)}" if extra else ""))
            m = re.search(r"<!-- ops: ([a-z-]+) -->", marker)
            if m:
                kind = m.group(1)
                checked["op lists"] += 1
                if kind not in op_sets:
                    problems.append(f"{rel}:{n}: unknown op list '{kind}' (known: {', '.join(op_sets)})")
                    continue
                para = paragraph_after(lines, n)
                listed = set(re.findall(r"\b[a-z][a-z_0-9]*\b", " ".join(para))) & \
                    (op_sets[kind] | vocabulary)
                want = op_sets[kind]
                if listed != want:
                    missing = sorted(want - listed)
                    extra = sorted(listed - want)
                    problems.append(f"{rel}:{n}: the {kind} op list differs from the sources"
                                    + (f"; missing {', '.join(missing)}" if missing else "")
                                    + (f"; not {kind}: {', '.join(extra)}" if extra else ""))
    for p in problems:
        print(p)
    if problems:
        print(f"docs check: {len(problems)} problems")
        return 1
    print(f"docs check: {len(docs)} files, {checked['paths']} paths and links, "
          f"{checked['names']} code names, {checked['op lists']} op lists, "
          f"{checked['file lists']} file lists: all exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
