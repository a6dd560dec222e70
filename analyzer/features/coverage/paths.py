"""Which dtypes take which path through a function that dispatches on a dtype: a call inside an
arm is made for the arm's dtypes only, and a dtype an earlier match of the body returns for
never reaches what follows. Read from the source of the functions that hold a dtype panic (the
code facts name calls, not the arms they sit in), so a helper reached only from another dtype's
arm says nothing about this one, and a dtype returned early is not rejected by a later panic."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from tree_sitter import Node, Parser

from analyzer.facts.syntax import LANGUAGE
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
    body = fn.child_by_field_name("body")
    returned: list[tuple[int, frozenset[str]]] = []  # (end byte of the match, dtypes)
    if body is not None:
        for stmt in body.named_children:
            match = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
            if match is not None and match.type == "match_expression":
                names = _returning(match, enums)
                if names:
                    returned.append((match.end_byte, names))
                    out.returns.append((first_line + match.end_point[0], names))
    # Each call with the innermost dtype arm around it, and where that arm rebinds the matched
    # variable.
    stack: list[tuple[Node, Filter, tuple[int, ...]]] = [(fn, EVERY, ())]
    while stack:
        node, arm, lets = stack.pop()
        if node.type in ("call_expression", "macro_invocation"):
            gone = frozenset().union(*(n for end, n in returned if end <= node.start_byte))
            here = Filter(arm.names, arm.negated, arm.gone | gone, arm.scope, arm.enum,
                          any(end <= node.start_byte for end in lets))
            if node.type == "macro_invocation":
                out.macros.setdefault(first_line + node.start_point[0], []).append(here)
            else:
                name = _callee(node.child_by_field_name("function"))
                if name:
                    out.calls.setdefault(name, []).append(here)
        if node.type == "match_expression":
            arms = _dtype_arms(node, enums)
            if arms is not None:
                value = node.child_by_field_name("value")
                if value is not None:
                    stack.append((value, arm, lets))
                variable = _root_name(value)
                for a, f in arms:
                    inner = Filter(f.names, f.negated, arm.gone, f.scope, f.enum)
                    stack.append((a, inner, tuple(n.end_byte for n in _lets_of(a, variable)) if variable else ()))
                continue
        stack.extend((c, arm, lets) for c in reversed(node.children))
    return out


def _root_name(value: Node | None) -> str:
    """The variable a scrutinee reads: `data` of `data.dtype`, `tensor` of `tensor.dtype()`."""
    while value is not None and value.type in ("field_expression", "call_expression", "reference_expression",
                                               "parenthesized_expression"):
        value = (value.child_by_field_name("value") or value.child_by_field_name("function")
                 or (value.named_children[0] if value.named_children else None))
    return _text(value) if value is not None and value.type in ("identifier", "self") else ""


def _lets_of(arm: Node, name: str) -> list[Node]:
    """The `let NAME = ..` declarations inside an arm (closures aside)."""
    out, stack = [], [arm]
    while stack:
        n = stack.pop()
        if n.type == "closure_expression":
            continue
        if n.type == "let_declaration" and _text(n.child_by_field_name("pattern")).strip() in (name, f"mut {name}"):
            out.append(n)
        stack.extend(n.children)
    return out


def _dtype_arms(match: Node, enums: set[str]) -> list[tuple[Node, Filter]] | None:
    """The arms of a match on a dtype (one whose arms name a dtype enum's variants), each with the
    dtypes it is taken for; None for any other match."""
    block = match.child_by_field_name("body")
    arms = [a for a in (block.named_children if block is not None else []) if a.type == "match_arm"]
    named: list[frozenset[str]] = []
    for a in arms:
        pattern = a.child_by_field_name("pattern")
        named.append(frozenset(label(d) for d in _pattern_dtypes(_text(pattern), enums)))
    if not any(named):
        return None
    every = frozenset().union(*named)
    enum = Counter(enum_of(d) for a in arms
                   for d in _pattern_dtypes(_text(a.child_by_field_name("pattern")), enums)).most_common(1)[0][0]
    out = []
    for a, names in zip(arms, named):
        written = _text(a.child_by_field_name("pattern")).strip()
        catch_all = written == "_" or bool(_BINDING.fullmatch(written))
        out.append((a, Filter(every if catch_all else names, catch_all, scope=every, enum=enum)))
    return out


def enum_of(dtype: str) -> str:
    """The enum of a column key: `FloatDType` of `FloatDType::F16`, "" (the primary) of `F16`."""
    head = dtype.split("(", 1)[0]
    return head.split("::", 1)[0] if "::" in head else ""


def _returning(match: Node, enums: set[str]) -> frozenset[str]:
    """The dtypes whose arm of a dtype match returns from the function."""
    arms = _dtype_arms(match, enums)
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
