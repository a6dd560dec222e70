"""Which dtypes take which path through a function that dispatches on a dtype: a call inside an
arm is made for the arm's dtypes only, and a dtype an earlier match of the body returns for
never reaches what follows. Read from the source of the functions that hold a dtype panic (the
code facts name calls, not the arms they sit in), so a helper reached only from another dtype's
arm says nothing about this one, and a dtype returned early is not rejected by a later panic."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from tree_sitter import Node, Parser, QueryCursor

from analyzer.facts.syntax import LANGUAGE, query
from analyzer.features.coverage.model import base_variant, label, qualify

_REF = re.compile(r"\b(\w+)\s*::\s*(\w+)")
_BINDING = re.compile(r"[a-z_]\w*")


@dataclass(frozen=True)
class Filter:
    """The dtypes a path is taken for: those an arm names (or, for a catch-all, those its match's
    other arms do not name), less those an earlier match returned for."""

    names: frozenset[str] = frozenset()
    negated: bool = True  # a catch-all (or no arm at all: every dtype)
    gone: frozenset[str] = frozenset()
    # Every variant the match's arms name (labels), of which enum: the arm speaks of those
    # columns only (a match on an index tensor's int dtype says nothing of the float tensor
    # beside it), and of another enum's only where it names their variants.
    scope: frozenset[str] = frozenset()
    enum: str = ""
    # The arm rebinds the matched variable (`let data = TensorData::new(..)`) before the call:
    # what the call is given is another value, of a dtype the arm does not decide.
    rebound: bool = False

    def allows(self, dtype: str, in_scope: bool = True) -> bool:
        if _names(self.gone, dtype):
            return False
        if not in_scope:
            return True
        return not self.rebound and (_names(self.names, dtype) != self.negated)


EVERY = Filter()


def _names(names: frozenset[str], dtype: str) -> bool:
    """Whether a column is among variants named by their labels (`F32`, `Bool(U8)`): a match on
    `DType` and one on the tensor's own enum (`NdArrayTensor::U8`) speak of the same variants."""
    variant = label(dtype)
    return variant in names or base_variant(variant) in names


@dataclass
class FnPaths:
    """One function's calls by callee name, each with the filters of its call sites, and the
    dtypes returned early before a line."""

    calls: dict[str, list[Filter]] = field(default_factory=dict)
    returns: list[tuple[int, frozenset[str]]] = field(default_factory=list)  # (last line of the match, dtypes)
    macros: dict[int, list[Filter]] = field(default_factory=dict)  # macro invocations by line

    def gone_before(self, line: int) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for end, names in self.returns:
            if end < line:
                out |= names
        return out


def read_paths(source: bytes, first_line: int, enums: set[str]) -> FnPaths:
    """The paths of the function whose text is `source` (starting at `first_line` of its file);
    `enums` are the dtype enums whose variants arms name."""
    root = Parser(LANGUAGE).parse(source).root_node
    fn = next((n for n in root.children if n.type == "function_item"), None)
    out = FnPaths()
    if fn is None:
        return out
    # The query finds the calls, matches and lets (in C, not a walk of every node here).
    found = QueryCursor(query("coverage_paths.scm")).captures(fn)
    dtype_arms = {m.id: _dtype_arms(m, enums) for m in found.get("match", ())}
    body = fn.child_by_field_name("body")
    returned: list[tuple[int, frozenset[str]]] = []  # (end byte of the match, dtypes)
    if body is not None:
        for stmt in body.named_children:
            match = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
            if match is not None and match.type == "match_expression":
                names = _returning(dtype_arms.get(match.id))
                if names:
                    returned.append((match.end_byte, names))
                    out.returns.append((first_line + match.end_point[0], names))
    # Each call with the innermost dtype arm around it, and where that arm rebinds the matched
    # variable.
    filters: dict[int, Filter] = {}  # arm node id -> the dtypes it is taken for
    variables: dict[int, str] = {}  # arm node id -> the variable its match reads
    values: dict[int, int | None] = {}  # dtype match node id -> its scrutinee's node id
    for match in found.get("match", ()):
        arms = dtype_arms[match.id]
        if arms is None:
            continue
        value = match.child_by_field_name("value")
        values[match.id] = value.id if value is not None else None
        variable = _root_name(value)
        for a, f in arms:
            filters[a.id] = f
            variables[a.id] = variable
    lets = _lets_in_arms(found.get("let", ()), fn.id, variables)
    around: dict[int, int | None] = {}
    for kind in ("call", "macro"):
        for node in found.get(kind, ()):
            at = _arm_around(node, fn.id, filters, values, around)
            if at == _OUTSIDE:
                continue
            arm, rebinds = (filters[at], lets.get(at, ())) if at is not None else (EVERY, [])
            gone = frozenset().union(*(n for end, n in returned if end <= node.start_byte))
            here = Filter(arm.names, arm.negated, gone, arm.scope, arm.enum,
                          any(end <= node.start_byte for end in rebinds))
            if kind == "macro":
                out.macros.setdefault(first_line + node.start_point[0], []).append(here)
            else:
                name = _callee(node.child_by_field_name("function"))
                if name:
                    out.calls.setdefault(name, []).append(here)
    return out


_OUTSIDE = -1


def _arm_around(node: Node, fn: int, arms: Collection[int], values: dict[int, int | None],
                memo: dict[int, int | None]) -> int | None:
    """The innermost dtype arm around a node (None: outside any), or _OUTSIDE when the node sits
    in a dtype match outside its scrutinee and arms (in an ERROR node of its block): no path is
    read there. `memo` holds the answer of every node walked through (node id -> answer), shared
    by the calls of one function: each node between them and the function is walked once, however
    many calls lie below it (a walk per call would be quadratic in the nesting)."""
    chain: list[tuple[Node, Node]] = []  # (node, its parent) up to the first answered node
    at = node
    while at.id not in memo:
        up = at.parent
        if up is None or up.id == fn:
            memo[at.id] = None
            break
        chain.append((at, up))
        at = up
    answer = memo[at.id]
    for child, up in reversed(chain):
        if answer != _OUTSIDE:
            if _off_path(child, up, arms, values):
                answer = _OUTSIDE
            elif up.id in arms:
                answer = up.id
        memo[child.id] = answer
    return memo[node.id]


def _off_path(child: Node, up: Node, arms: Collection[int], values: dict[int, int | None]) -> bool:
    """Whether `child` of a dtype match (or of its block) is neither its scrutinee nor one of its
    arms (through the block)."""
    if up.id in values:
        return child.id != values[up.id] and child.type != "match_block"
    if up.type == "match_block":
        match = up.parent
        return match is not None and match.id in values and child.id not in arms
    return False


def _lets_in_arms(lets: Iterable[Node], fn: int, variables: dict[int, str]) -> dict[int, list[int]]:
    """Arm node id -> the ends of the `let NAME = ..` declarations inside it (closures aside)
    that rebind NAME, the variable its match reads."""
    out: dict[int, list[int]] = {}
    for let in lets:
        written = _text(let.child_by_field_name("pattern")).strip()
        up = let.parent
        while up is not None and up.id != fn and up.type != "closure_expression":
            name = variables.get(up.id)
            if name and written in (name, f"mut {name}"):
                out.setdefault(up.id, []).append(let.end_byte)
            up = up.parent
    return out


def _root_name(value: Node | None) -> str:
    """The variable a scrutinee reads: `data` of `data.dtype`, `tensor` of `tensor.dtype()`."""
    while value is not None and value.type in ("field_expression", "call_expression", "reference_expression",
                                               "parenthesized_expression"):
        value = (value.child_by_field_name("value") or value.child_by_field_name("function")
                 or (value.named_children[0] if value.named_children else None))
    return _text(value) if value is not None and value.type in ("identifier", "self") else ""


def _dtype_arms(match: Node, enums: set[str]) -> list[tuple[Node, Filter]] | None:
    """The arms of a match on a dtype (one whose arms name a dtype enum's variants), each with the
    dtypes it is taken for; None for any other match."""
    block = match.child_by_field_name("body")
    arms = [a for a in (block.named_children if block is not None else []) if a.type == "match_arm"]
    patterns = [_text(a.child_by_field_name("pattern")) for a in arms]
    dtypes = [_pattern_dtypes(p, enums) for p in patterns]
    named = [frozenset(label(d) for d in ds) for ds in dtypes]
    if not any(named):
        return None
    every = frozenset().union(*named)
    enum = Counter(enum_of(d) for ds in dtypes for d in ds).most_common(1)[0][0]
    out = []
    for a, pattern, names in zip(arms, patterns, named):
        written = pattern.strip()
        catch_all = written == "_" or bool(_BINDING.fullmatch(written))
        out.append((a, Filter(every if catch_all else names, catch_all, scope=every, enum=enum)))
    return out


def enum_of(dtype: str) -> str:
    """The enum of a column key: `FloatDType` of `FloatDType::F16`, "" (the primary) of `F16`."""
    head = dtype.split("(", 1)[0]
    return head.split("::", 1)[0] if "::" in head else ""


def _returning(arms: list[tuple[Node, Filter]] | None) -> frozenset[str]:
    """The dtypes whose arm of a dtype match (`arms`: its `_dtype_arms`) returns from the function."""
    out: set[str] = set()
    for a, f in arms or []:
        if not f.negated and _returns(a.child_by_field_name("value")):
            out |= f.names
    return frozenset(out)


def _returns(node: Node | None) -> bool:
    """Whether the expression always returns: it is a `return`, or a block whose last
    expression is one."""
    while node is not None:
        if node.type == "return_expression":
            return True
        if node.type != "block" or not node.named_children:
            return False
        last = node.named_children[-1]
        node = last.named_children[0] if last.type == "expression_statement" and last.named_children else last
    return False


def _pattern_dtypes(pattern: str, enums: set[str]) -> list[str]:
    """`DType::F32 | DType::Bool(BoolStore::U8)` -> F32, Bool(U8); `FloatDType::F16` ->
    FloatDType::F16 (variants of other enums qualified, as the cells' columns are)."""
    out = []
    for m in _REF.finditer(pattern):
        enum, variant = m.group(1), m.group(2)
        if enum not in enums:
            continue
        rest = pattern[m.end():].lstrip()
        inner = rest[1:rest.find(")")] if rest.startswith("(") and ")" in rest else ""
        subs = [s.group(2) for s in _REF.finditer(inner) if s.group(1) not in enums]
        out += [qualify(enum, f"{variant}({s})") for s in subs] if subs else [qualify(enum, variant)]
    return out


def _callee(node: Node | None) -> str:
    """The name a call is matched by: `helper(..)`, `module::helper(..)`, `x.helper(..)`."""
    if node is None:
        return ""
    if node.type == "identifier":
        return _text(node)
    if node.type == "scoped_identifier":
        return _text(node.child_by_field_name("name"))
    if node.type == "field_expression":
        return _text(node.child_by_field_name("field"))
    if node.type == "generic_function":
        return _callee(node.child_by_field_name("function"))
    return ""


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""
