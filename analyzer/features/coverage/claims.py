"""The claims view: what each backend's own `dtype_usage` (or `supports_dtype`) says it supports,
read from its source, set against the cells. A claim is per dtype column: `advertised` true (the
general usage set), false (empty, or storage only), or null when the answer is not a match on the
dtype the audit can read (it depends on the device at run time, on a guard or a nested match, or
is not a match at all). `panicsIn` are the operations whose cell panics on an advertised dtype
(the contradictions a user meets), `stubsIn` those whose whole implementation is a stub (not
implemented, the trait's default often: reported apart, they are no claim about the dtype);
`handledIn` those that handle a dtype the backend does not advertise."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node, Parser

from analyzer.facts.model import FnFacts
from analyzer.facts.syntax import LANGUAGE
from analyzer.profiles import current
from analyzer.features.coverage.model import HANDLED, NOT_IMPLEMENTED, PANICS, Matrix, base_variant, primary_enum

_ALTERNATIVE = re.compile(r"^(?:\w+::)*(\w+)\s*(?:\((.*)\))?$", re.S)


@dataclass
class Claim:
    crate: str
    dtype: str
    advertised: bool | None
    where: str  # path:line of the arm (or of the function when no arm decides)
    reading: str  # match | device | guard or nested match | not a match
    panics_in: list[str] = field(default_factory=list)
    handled_in: list[str] = field(default_factory=list)
    stubs_in: list[str] = field(default_factory=list)


def build_claims(matrix: Matrix, code, read_files) -> list[Claim]:
    """`code`: (path, crate, facts) of the extraction; `read_files(paths)` -> {path: bytes}."""
    found = _claims_methods(code, {c for c, _ in matrix.ops})
    if not found or not matrix.groups:
        return []
    texts = read_files(sorted({p for p, _ in found.values()}))
    out: list[Claim] = []
    columns = matrix.groups[0].dtypes
    subs: dict[str, set[str]] = {}  # a column's payload variants the cells know (Bool(U32))
    for cell in matrix.cells.values():
        for e in cell.evidence:
            if "(" in e.dtype:
                subs.setdefault(base_variant(e.dtype), set()).add(e.dtype)
    ops_of: dict[str, list[str]] = {}  # each crate's operations in name order, sorted once
    for crate, op in sorted(matrix.ops):
        ops_of.setdefault(crate, []).append(op)
    for crate, (path, f) in sorted(found.items()):
        lines = texts.get(path, b"").split(b"\n")[f.line - 1:f.end_line]
        reading, arms = _read(b"\n".join(lines))
        ops = ops_of.get(crate, [])
        if reading == "delegates":
            continue  # a wrapper's answer is its inner backend's: it claims nothing of its own
        for col in columns:
            if reading == "device":
                out += _device_claims(matrix, ops, crate, col, arms, path, f.line)
                continue
            decided = _column_arms(col, arms, subs.get(col, set())) if reading == "match" else []
            values = {adv for _, adv, _ in decided}
            if len(values) > 1:  # sub-variants differ (Bool(Native) usable, Bool(U32) not): one row each
                for d, adv, ln in decided:
                    out.append(_claim(matrix, ops, crate, col, d, adv, f"{path}:{f.line + ln}", "match"))
            elif decided:
                adv, ln = decided[0][1], decided[0][2]
                out.append(_claim(matrix, ops, crate, col, col, adv, f"{path}:{f.line + ln}",
                                  "match" if adv is not None else "guard or nested match"))
            else:
                out.append(_claim(matrix, ops, crate, col, col, None, f"{path}:{f.line}", reading))
    return out


def _claims_methods(code, backends: set[str]) -> dict[str, tuple[str, FnFacts]]:
    """Each backend's claims method: crate -> (path, function); the profile's first name is
    preferred where a backend defines several."""
    names = current().code.claims_methods
    found: dict[str, tuple[str, FnFacts]] = {}
    for path, crate, facts in code:
        if crate in backends:
            for f in facts.functions:
                if f.name in names and (crate not in found or f.name == names[0]):
                    found[crate] = (path, f)
    return found


def _device_claims(matrix: Matrix, ops: list[str], crate: str, col: str, arms: list, path: str,
                   line: int) -> list[Claim]:
    """A column of an answer that asks the device: the dtypes answered before the device is asked
    (`if let DType::X = dtype { return false; }`) are static, the rest depends on the device."""
    early = [(d, adv, ln) for d, adv, ln in arms if d == col or base_variant(d) == col]
    out = [_claim(matrix, ops, crate, col, d, adv, f"{path}:{line + ln}", "match") for d, adv, ln in early]
    if not any(d == col for d, _, _ in early):
        out.append(_claim(matrix, ops, crate, col, col, None, f"{path}:{line}", "device"))
    return out


def _column_arms(col: str, arms: list, subs: set[str]) -> list:
    """The arms that decide a column: those naming it or its payload variants, and the catch-all
    when some of them (or the column itself) no arm names."""
    decided = [(d, adv, ln) for d, adv, ln in arms if d == col or base_variant(d) == col]
    named = {d for d, _, _ in decided}
    if col not in named and (not subs or not subs <= named):
        decided += [(col, adv, ln) for d, adv, ln in arms if d == "_"][:1]
    return decided


def _claim(matrix: Matrix, ops: list[str], crate: str, col: str, dtype: str, advertised: bool | None, where: str,
           reading: str) -> Claim:
    """`ops`: the crate's operations in name order."""
    panics, handled, stubs = [], [], []
    for op in ops:
        cell = matrix.get(crate, op, col)
        if cell is None:
            continue
        status = cell.parts.get(dtype, cell.status) if dtype != col else cell.status
        if status == PANICS and cell.reason == NOT_IMPLEMENTED:
            stubs.append(op)
        elif status == PANICS:
            panics.append(op)
        elif status == HANDLED:
            handled.append(op)
    return Claim(crate, dtype, advertised, where, reading, panics if advertised is not False else [],
                 handled if advertised is False else [], stubs if advertised is not False else [])


def _read(source: bytes) -> tuple[str, list[tuple[str, bool | None, int]]]:
    """How the function answers, and for a match on its dtype parameter each arm's dtypes:
    (dtype, advertised, line offset in the function)."""
    root = Parser(LANGUAGE).parse(source).root_node
    fn = next((n for n in root.children if n.type == "function_item"), None)
    if fn is None:
        return "not a match", []
    plist = fn.child_by_field_name("parameters")
    params = [p for p in plist.named_children if p.type == "parameter"] if plist is not None else []
    names = [_text(p.child_by_field_name("pattern")) for p in params]
    body = _text(fn.child_by_field_name("body"))
    device = next((n for n, p in zip(names, params) if "Device" in _text(p.child_by_field_name("type"))), "")
    if re.search(r"::\s*(?:" + "|".join(map(re.escape, current().code.claims_methods)) + r")\s*\(", body):
        return "delegates", []
    dtype = next((n for n, p in zip(names, params)
                  if _text(p.child_by_field_name("type")).endswith(primary_enum())), "")
    if device and not device.startswith("_") and re.search(rf"\b{re.escape(device)}\b", body):
        return "device", _early_returns(fn, dtype)
    match = _first_match_on(fn, dtype)
    if match is None:
        return "not a match", []
    arms = []
    block = match.child_by_field_name("body")
    for arm in block.named_children if block is not None else []:
        if arm.type != "match_arm":
            continue
        pattern = arm.child_by_field_name("pattern")
        value = _text(arm.child_by_field_name("value"))
        guarded = pattern is not None and pattern.child_by_field_name("condition") is not None
        advertised = None if guarded or "match " in value else _usage(value)
        pat = _text(pattern.named_children[0] if guarded and pattern is not None and pattern.named_children
                    else pattern)
        for d in _dtypes(pat):
            arms.append((d, advertised, arm.start_point[0]))
    return "match", arms


def _early_returns(fn: Node, dtype: str) -> list[tuple[str, bool | None, int]]:
    """`if let DType::X = dtype { return <usage>; }` statements of the body: (dtype, advertised,
    line offset) of each."""
    body = fn.child_by_field_name("body")
    out: list[tuple[str, bool | None, int]] = []
    for stmt in body.named_children if body is not None and dtype else []:
        node = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else stmt
        cond = node.child_by_field_name("condition") if node.type == "if_expression" else None
        if cond is None or cond.type != "let_condition" or _text(cond.child_by_field_name("value")) != dtype:
            continue
        block = node.child_by_field_name("consequence")
        last = block.named_children[-1] if block is not None and block.named_children else None
        last = last.named_children[0] if last is not None and last.type == "expression_statement" and \
            last.named_children else last
        if last is None or last.type != "return_expression" or node.child_by_field_name("alternative") is not None:
            continue
        value = _text(last.named_children[0]) if last.named_children else ""
        for d in _dtypes(_text(cond.child_by_field_name("pattern"))):
            if d != "_":
                out.append((d, _usage(value), node.start_point[0]))
    return out


def _first_match_on(node: Node, name: str) -> Node | None:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "match_expression" and name and _text(n.child_by_field_name("value")) == name:
            return n
        stack.extend(reversed(n.children))
    return None


def _usage(value: str) -> bool | None:
    if value.strip() in ("true", "false"):  # supports_dtype's answer
        return value.strip() == "true"
    if "empty()" in value:
        return False
    if "general()" in value or ("Storage" in value and "Arithmetic" in value):
        return True
    if "Storage" in value:
        return False  # storage only: not the general usage supports_dtype asks for
    return None


def _dtypes(pattern: str) -> list[str]:
    """`DType::F64 | DType::F32` -> F64, F32; `DType::Bool(BoolStore::Native)` -> Bool(Native);
    `DType::Bool(_)` or `DType::QFloat(scheme)` -> Bool, QFloat; `_` -> _."""
    out = []
    for alt in _top_level(pattern, "|"):
        alt = alt.strip()
        if alt == "_" or re.fullmatch(r"[a-z_]\w*", alt):
            out.append("_")
            continue
        m = _ALTERNATIVE.match(alt)
        if not m:
            continue
        name, inner = m.group(1), m.group(2)
        subs = [s.strip().split("::")[-1] for s in _top_level(inner, "|")] if inner else []
        if subs and all(s[:1].isupper() for s in subs):
            out += [f"{name}({s})" for s in subs]
        else:
            out.append(name)
    return out


def _top_level(text: str, sep: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""
