"""Parser of MLIR's generic operation form (`--mlir-print-op-generic`), as
kgraph-opt prints it: one operation per line, regions opened by `({` at the
end of a line, separated by `}, {` and closed by `})` followed by the rest
of the operation (attributes and its function type).

Only the structure is parsed: operand and result names, block arguments,
regions, and the raw text of the properties `<{...}>`, attributes `{...}`
and types. Attribute values are read on demand by `Op.attr`.
"""
import re

from .types import parse_type, scan_top, split_top

_HEAD = re.compile(r'\s*(?:(%[\w$.\-]+(?::\d+)?(?:\s*,\s*%[\w$.\-]+(?::\d+)?)*)\s*=\s*)?"([\w.$]+)"\(([^()]*)\)')
_BLOCK = re.compile(r'\s*\^([\w$.\-]+)\s*(?:\((.*)\))?\s*:\s*$')
_ARG = re.compile(r'(%[\w$.\-]+)\s*:\s*')


class ParseError(Exception):
    pass


class Block:
    __slots__ = ("label", "args", "arg_types", "ops")

    def __init__(self, label, args, arg_types):
        self.label, self.args, self.arg_types, self.ops = label, args, arg_types, []


class Op:
    """One operation: `name`, `results` (value names: `%x`, or `%x#i` for
    `%x:N`), `operands`, `regions` (lists of Blocks), `props` and `attrs`
    (raw text), `operand_types` and `result_types` (parsed types), `line`
    (1-based, for messages)."""

    __slots__ = ("name", "results", "operands", "regions", "props", "attrs",
                 "operand_types", "result_types", "line", "cache", "handler", "gen")

    def __init__(self, name, results, operands, line):
        self.name, self.results, self.operands, self.line = name, results, operands, line
        self.regions = []
        self.props = self.attrs = ""
        self.operand_types = self.result_types = ()
        self.cache = {}
        self.handler = None
        self.gen = False

    def attr(self, key, default=None):
        """The raw text of attribute or property `key` (None when absent)."""
        c = self.cache.get(("attr", key))
        if c is None:
            c = _find_attr(self.props, key)
            if c is None:
                c = _find_attr(self.attrs, key)
            self.cache[("attr", key)] = c if c is not None else False
        return default if c is False or c is None else c

    def has(self, key):
        return self.attr(key) is not None

    def int_attr(self, key, default=None):
        v = self.attr(key)
        if v is None:
            if default is None:
                raise ParseError(f"line {self.line}: {self.name} has no attribute {key}")
            return default
        return parse_int(v)

    def array_attr(self, key):
        """`array<i64: 1, 2>` or `[1, 2]` as a list of ints."""
        v = self.attr(key)
        if v is None:
            raise ParseError(f"line {self.line}: {self.name} has no attribute {key}")
        return parse_int_list(v)

    def __repr__(self):
        return f"<{self.name} at line {self.line}>"


def parse_int(text):
    t = text.strip()
    m = re.match(r'^(true|false)\b', t)
    if m:
        return 1 if m.group(1) == "true" else 0
    m = re.match(r'^(-?(?:0x[0-9a-fA-F]+|\d+))', t)
    if not m:
        raise ParseError(f"not an integer attribute: {text!r}")
    return int(m.group(1), 0)


def parse_int_list(text):
    t = text.strip()
    m = re.match(r'^array<\w+(?::\s*(.*))?>$', t)
    if m:
        body = m.group(1) or ""
    elif t.startswith("[") and t.endswith("]"):
        body = t[1:-1]
    else:
        raise ParseError(f"not an integer array attribute: {text!r}")
    return [parse_int(x.split(":")[0]) for x in body.split(",") if x.strip()]


def _find_attr(text, key):
    """The value text of `key = value` at the top level of a dictionary's
    text (`<{...}>` or `{...}`), or None."""
    if not text or key not in text:
        return None
    body = text
    if body.startswith("<{"):
        body = body[2:-2]
    elif body.startswith("{"):
        body = body[1:-1]
    for item in split_top(body, ","):
        k, eq, v = item.partition("=")
        if k.strip().strip('"') == key:
            return v.strip() if eq else "unit"
    return None


def _scan_rest(rest, line_no):
    """Splits what follows an operation's operand list into properties,
    attributes and the function type (on the line that holds them)."""
    props = attrs = ""
    i, n = 0, len(rest)
    while i < n:
        c = rest[i]
        if c.isspace():
            i += 1
        elif rest.startswith("<{", i):
            j = _match(rest, i)
            props = rest[i:j]
            i = j
        elif c == "{":
            j = _match(rest, i)
            attrs = rest[i:j]
            i = j
        elif c == ":":
            return props, attrs, rest[i + 1:].strip()
        elif c == "[":   # successors (unused: structured control flow only)
            i = _match(rest, i)
        else:
            raise ParseError(f"line {line_no}: cannot parse {rest[i:i + 60]!r}")
    raise ParseError(f"line {line_no}: no function type in {rest[:80]!r}")


_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _match(text, i):
    """Index past the bracket group starting at text[i] (`<{` counts as one
    opening; strings and `->` are skipped)."""
    for j, c, depth in scan_top(text, i):
        if c in ")]}>" and depth == 0:
            return j + 1
    raise ParseError(f"unbalanced brackets in {text[:80]!r}")


def _function_type(text, line_no):
    """(operand types, result types) of `(a, b) -> (c)` or `(a) -> c`."""
    text = text.strip()
    if not text.startswith("("):
        raise ParseError(f"line {line_no}: bad function type {text[:80]!r}")
    j = _match(text, 0)
    ins = [parse_type(t) for t in split_top(text[1:j - 1], ",") if t.strip()]
    rest = text[j:].strip()
    if not rest.startswith("->"):
        raise ParseError(f"line {line_no}: bad function type {text[:80]!r}")
    rest = rest[2:].strip()
    if rest.startswith("("):
        k = _match(rest, 0)
        outs = [parse_type(t) for t in split_top(rest[1:k - 1], ",") if t.strip()]
    else:
        outs = [parse_type(rest)]
    return tuple(ins), tuple(outs)


def _result_names(text):
    names = []
    if not text:
        return names
    for part in text.split(","):
        part = part.strip()
        name, _, count = part.partition(":")
        if count:
            names += [f"{name}#{k}" for k in range(int(count))]
        else:
            names.append(name)
    return names


def parse_module(text):
    """The top-level operations of `text` (a module in generic form)."""
    lines = text.splitlines()
    ops, i = _parse_ops(lines, 0, top=True)
    return ops


def _parse_ops(lines, i, top=False):
    """Ops from lines[i] up to (not including) the line closing the region;
    returns (list of Blocks, index of the closing line)."""
    blocks = [Block(None, [], [])]
    n = len(lines)
    while i < n:
        raw = lines[i]
        s = raw.strip()
        if not s or s.startswith("//") or s.startswith("#") or s.startswith("{-#"):
            if s.startswith("{-#"):   # dialect resources: the end of the module
                break
            i += 1
            continue
        if s.startswith("}"):
            if top:
                raise ParseError(f"line {i + 1}: unexpected {s[:20]!r}")
            return blocks, i
        if s.startswith("^"):
            m = _BLOCK.match(s)
            if not m:
                raise ParseError(f"line {i + 1}: bad block header {s[:80]!r}")
            args, types = [], []
            for item in split_top(m.group(2) or "", ","):
                am = _ARG.match(item.strip())
                if not am:
                    raise ParseError(f"line {i + 1}: bad block argument {item!r}")
                args.append(am.group(1))
                types.append(parse_type(item.strip()[am.end():]))
            if blocks[-1].ops or blocks[-1].label is not None or blocks[-1].args:
                blocks.append(Block(m.group(1), args, types))
            else:
                blocks[-1] = Block(m.group(1), args, types)
            i += 1
            continue
        m = _HEAD.match(raw)
        if not m:
            raise ParseError(f"line {i + 1}: cannot parse {s[:100]!r}")
        op = Op(m.group(2), _result_names(m.group(1)),
                [o.strip() for o in m.group(3).split(",") if o.strip()], i + 1)
        rest = raw[m.end():].strip()
        # Properties come before the regions.
        if rest.startswith("<{"):
            j = _match(rest, 0)
            op.props = rest[:j]
            rest = rest[j:].strip()
        if rest.startswith("[") :
            rest = rest[_match(rest, 0):].strip()
        if rest == "({":
            i += 1
            while True:
                blocks_r, i = _parse_ops(lines, i)
                op.regions.append(blocks_r)
                closing = lines[i].strip()
                if closing.startswith("}, {"):
                    tail = closing[4:].strip()
                    if tail:
                        raise ParseError(f"line {i + 1}: unexpected {tail!r}")
                    i += 1
                    continue
                if not closing.startswith("})"):
                    raise ParseError(f"line {i + 1}: expected '}})', got {closing[:40]!r}")
                rest = closing[2:].strip()
                break
        elif rest.startswith("({"):
            raise ParseError(f"line {i + 1}: regions must start on their own line")
        props, attrs, ftype = _scan_rest(rest, i + 1)
        op.props = op.props or props
        op.attrs = attrs
        op.operand_types, op.result_types = _function_type(ftype, i + 1)
        if len(op.result_types) != len(op.results):
            raise ParseError(f"line {i + 1}: {op.name}: {len(op.results)} results named, "
                             f"{len(op.result_types)} typed")
        blocks[-1].ops.append(op)
        i += 1
    if not top:
        raise ParseError("unterminated region")
    return blocks, i


def walk(ops):
    """Every op of `ops` and of their regions, depth first."""
    for op in ops:
        yield op
        for region in op.regions:
            for block in region:
                yield from walk(block.ops)


def find_kernels(module_blocks):
    """{kernel name: gpu.func Op} of every gpu.module in the module."""
    out = {}
    for block in module_blocks:
        for op in walk(block.ops):
            if op.name == "gpu.func":
                name = op.attr("sym_name")
                if name is None:
                    raise ParseError(f"line {op.line}: gpu.func without sym_name")
                out[name.strip('"')] = op
    return out
