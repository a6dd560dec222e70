"""The settings view of the operations matrix: for each non-dtype enum a backend operation's
`unsupported-mode` match dispatches on (an interpolation mode, a padding mode, a quantization
value), which variants the operation handles and which panic, with the same statuses as the
dtype cells. A match is counted for every operation that reaches it through the call graph.

A dtype match over a tuple of a setting and a dtype (`match (options.mode, x.dtype())`) feeds
both views (`tuple_matches`): each setting variant no arm pairs with a dtype panics for that
dtype (the dtype's cell is partial, naming it), and the setting's variants are settings of the
operations that reach the match (handled when an arm pairs them with a handled dtype)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from tree_sitter import Parser

from analyzer.decisions.categories import MODE
from analyzer.facts.syntax import LANGUAGE
from analyzer.features.coverage.callgraph import CallGraph
from analyzer.profiles import current
from analyzer.features.coverage.model import (
    HANDLED, PANICS, PARTIAL, Cell, Evidence, Group, Operation, Preempted, Site, fold, label, unique_sites,
)

QUANTIZED = "quantized"
# Each setting match: (its function's index in the call graph, crate, enum, each variant's
# (status, panicking site or None), the match's first site).
Matches = list[tuple[int, str, str, dict[str, tuple[str, Site | None]], Site]]


@dataclass
class Setting:
    crate: str
    operation: str
    enum: str
    variant: str
    status: str  # handled | panics | partial
    sites: list[Site] = field(default_factory=list)  # the panicking arms first


@dataclass
class TupleMatch:
    """A dtype match whose arms pair a setting enum's variants with dtypes: the setting variants
    each handled dtype (its label, `F32`, `Bool(U8)`) panics for, and every variant's status."""

    enum: str
    panics_for: dict[str, list[str]]  # dtype label -> the setting variants it panics for
    statuses: dict[str, tuple[str, Site]]  # variant -> (handled | panics, the match's record)


def tuple_matches(ex) -> dict[str, TupleMatch]:
    """The tuple matches of the dtype-dispatch records, by record id (each record of one match
    maps to the same TupleMatch)."""
    lines = {ln.record.id: ln for ln in ex.lines}
    catalog = ex.catalog
    by_match: dict[tuple, list] = {}
    for a in ex.audit:
        if a.id is None or a.id not in lines or a.decision.category != "dtype-dispatch" or not a.site.arms:
            continue
        if not any(r.enum in catalog.enums for arm in a.site.arms for r in arm.refs):
            continue
        key = (a.path, a.site.in_macro, a.site.function, tuple(arm.line for arm in a.site.arms))
        by_match.setdefault(key, []).append(a)
    out: dict[str, TupleMatch] = {}
    for entries in by_match.values():
        found = _tuple_match(entries, catalog, lines)
        if found is not None:
            out.update({a.id: found for a in entries})
    return out


def _tuple_match(entries, catalog, lines) -> TupleMatch | None:
    first = entries[0]
    arms = sorted(first.site.arms, key=lambda arm: arm.line)
    names = Counter(r.enum for arm in arms for r in arm.refs if r.enum and r.enum not in catalog.enums)
    if not names:
        return None
    enum = names.most_common(1)[0][0]
    if not all(any(r.enum == enum for r in arm.refs) or not any(r.enum not in catalog.enums for r in arm.refs)
               for arm in arms):
        return None  # arms naming other enums besides: not one setting beside the dtype
    named = {r.variant for arm in arms for r in arm.refs if r.enum == enum}
    definitions = [d for d in catalog.every.get(enum, []) if named <= {v for v, _ in d.variants}]
    if len(definitions) != 1 or definitions[0].crate == first.crate:
        return None  # unknown variants, or the backend's own state rather than a caller's setting
    variants = [v for v, _ in definitions[0].variants]
    # Each arm as (setting variants or None for any, dtype labels or None for any, panics).
    decided = []
    for arm in arms:
        if arm.guard:
            continue  # a guard may let the value through to a later arm
        settings = {r.variant for r in arm.refs if r.enum == enum} or None
        dtypes = {_dtype_label(r) for r in arm.refs if r.enum in catalog.enums} or None
        decided.append((settings, dtypes, arm.panics))
    site = _site(lines[first.id])
    handled_dtypes = [d for d in first.decision.handled]
    panics_for: dict[str, list[str]] = {}
    statuses: dict[str, tuple[str, Site]] = {v: (PANICS, site) for v in variants}
    for dtype in handled_dtypes:
        for v in variants:
            arm = next((x for x in decided if (x[0] is None or v in x[0])
                        and (x[1] is None or dtype in x[1] or dtype.split("(", 1)[0] in x[1])), None)
            if arm is None or arm[2]:
                panics_for.setdefault(dtype, []).append(v)
            else:
                statuses[v] = (HANDLED, site)
    return TupleMatch(enum, panics_for, statuses)


def _dtype_label(ref) -> str:
    """`DType::F32` -> F32; `DType::Bool(BoolStore::U8)` -> Bool(U8)."""
    return f"{ref.variant}({ref.sub[0].variant})" if ref.sub and len(ref.sub) == 1 else ref.variant


def setting_tables(settings: list[Setting]) -> list[tuple[str, list[str], dict[tuple[str, str], dict[str, Setting]]]]:
    """The settings by enum: (enum, its variants in order, (operation, crate) -> variant -> setting),
    operations in name order."""
    out: dict[str, tuple[list[str], dict[tuple[str, str], dict[str, Setting]]]] = {}
    for st in settings:
        variants, rows = out.setdefault(st.enum, ([], {}))
        if st.variant not in variants:
            variants.append(st.variant)
        rows.setdefault((st.operation, st.crate), {})[st.variant] = st
    return [(enum, variants, dict(sorted(rows.items()))) for enum, (variants, rows) in sorted(out.items())]


def build_settings(ex, graph: CallGraph, read_files=None, tuples: dict[str, TupleMatch] | None = None,
                   matches: Matches | None = None) -> list[Setting]:
    """Every (crate, operation, enum, variant) an operation's mode match (or a tuple match of a
    setting and a dtype, `tuples`) decides, sorted; with `read_files(paths) -> {path: bytes}`,
    only for the enums a caller passes (argument_enums)."""
    settings = _all_settings(ex, graph, tuples or {}, matches)
    if read_files is None or not settings:
        return settings
    passed = argument_enums(ex.code, ex.catalog, {st.enum for st in settings}, read_files)
    return [st for st in settings if st.enum in passed]


def argument_enums(code, catalog, enums: set[str], read_files) -> set[str]:
    """Those of `enums` a caller passes to a backend operation: named in the parameter types of an
    ops-trait method (`mode: PadMode`), or in the fields of a struct so named (`options:
    InterpolateOptions`), looked for in the files that define the enums. An enum defined outside
    the tree (cubecl's QuantValue, inside its QuantScheme) cannot be followed so and is kept. A
    match on another enum (an interpreter's over its own operation enum) is no setting."""
    word = current().backend_word
    trait_files: dict[str, set[str]] = {}
    for path, _, facts in code:
        names = {t.name for t in facts.traits if word.search(t.header)}
        if names:
            trait_files[path] = names
    if not trait_files:
        return set(enums)
    struct_files = sorted({d.path for e in enums for d in catalog.every.get(e, [])} - set(trait_files))
    texts = read_files(sorted(trait_files) + struct_files)
    named: set[str] = set()
    for path, traits in trait_files.items():
        named |= _parameter_types(texts.get(path, b""), traits)
    out = (named & enums) | {e for e in enums if not catalog.every.get(e)}
    rest = enums - out
    for path in [*trait_files, *struct_files]:
        if not rest:
            break
        for m in _STRUCT.finditer(texts.get(path, b"")):
            if m.group(1).decode("utf-8", "replace") in named:
                out |= rest & {t.decode("utf-8", "replace") for t in _TYPE_NAME.findall(m.group(2))}
    return out


# `struct Name<..> { fields }`: an option struct's fields, read without a parse (its body holds
# no braces: fields are types).
_STRUCT = re.compile(rb"\bstruct\s+(\w+)[^{;]*\{([^{}]*)\}")
_TYPE_NAME = re.compile(rb"\b[A-Z]\w*")


def _parameter_types(source: bytes, traits: set[str]) -> set[str]:
    """The type names written in the parameters of the methods of `traits` in a file."""
    out: set[str] = set()
    if not source:
        return out
    root = Parser(LANGUAGE).parse(source).root_node
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "trait_item":
            name = n.child_by_field_name("name")
            body = n.child_by_field_name("body")
            if name is None or name.text is None or name.text.decode("utf-8", "replace") not in traits or body is None:
                continue
            for item in body.named_children:
                params = item.child_by_field_name("parameters") if item.type in (
                    "function_signature_item", "function_item") else None
                if params is not None and params.text is not None:
                    out |= {t.decode("utf-8", "replace") for t in _TYPE_NAME.findall(params.text)}
            continue
        stack.extend(n.named_children)
    return out


def decided_matches(ex, graph: CallGraph,
                    tuples: dict[str, TupleMatch]) -> Matches:
    """Every setting match an operation's call paths may reach: (its function's index in `graph`,
    its crate, enum, each variant's (status, panicking site or None), the match's first site)."""
    lines = {ln.record.id: ln for ln in ex.lines}
    matches: dict[tuple, list] = {}
    for a in ex.audit:
        if a.id is None or a.id not in lines or a.decision.category != MODE or not a.site.arms:
            continue
        key = (a.path, a.site.in_macro, a.site.function, tuple(arm.line for arm in a.site.arms))
        matches.setdefault(key, []).append(a)
    by_tuple: dict[int, tuple] = {}  # one entry per tuple match (its records share it)
    for a in ex.audit:
        found = tuples.get(a.id) if a.id is not None else None
        if found is not None and id(found) not in by_tuple:
            by_tuple[id(found)] = ([a], (found.enum, found.statuses, next(iter(found.statuses.values()))[1]))
    out: Matches = []
    for entries, decided in [*((e, _decide(e, ex.catalog, lines)) for e in matches.values()), *by_tuple.values()]:
        if decided is None:
            continue
        enum, statuses, handled_site = decided
        first = entries[0]
        at = graph.enclosing_fn(first.path, first.site.function, first.site.line) if first.site.function else None
        if at is not None:
            out.append((at, first.crate, enum, statuses, handled_site))
    return out


def _all_settings(ex, graph: CallGraph, tuples: dict[str, TupleMatch], matches: Matches | None = None) -> list[Setting]:
    evidence: dict[tuple[str, str, str, str], list[tuple[str, Site]]] = {}
    reached: dict[int, list[str]] = {}
    for at, crate, enum, statuses, handled_site in (decided_matches(ex, graph, tuples) if matches is None else matches):
        if at not in reached:
            reached[at] = graph.operations_reaching(at)
        for op in dict.fromkeys(reached[at]):
            for variant, (status, site) in statuses.items():
                evidence.setdefault((crate, op, enum, variant), []).append((status, site or handled_site))
    out = []
    for (crate, op, enum, variant), ev in sorted(evidence.items(), key=lambda kv: kv[0][:3]):
        panicking = [s for st, s in ev if st == PANICS]
        out.append(Setting(crate, op, enum, variant, fold([st for st, _ in ev]),
                           unique_sites(panicking + [s for _, s in ev])))
    return out


def _decide(entries, catalog, lines) -> tuple[str, dict[str, tuple[str, Site | None]], Site] | None:
    """One match's enum (the one its arms name most, dtype enums aside) and each variant's status
    in it, with the panicking arm's record for a rejected one."""
    arms = entries[0].site.arms
    names = Counter(r.enum for arm in arms for r in arm.refs if r.enum and r.enum not in catalog.enums)
    if not names:
        return None
    enum = names.most_common(1)[0][0]
    definitions = catalog.every.get(enum, [])
    if any(d.crate == entries[0].crate for d in definitions):
        return None  # the backend's own state (an autodiff requirement), not a setting a caller picks
    record_at = {a.site.line: _site(lines[a.id]) for a in entries}
    # An arm's panic is the record whose line falls in the arm (arms in line order).
    ordered = sorted(arms, key=lambda arm: arm.line)
    sites = [s for _, s in sorted(record_at.items())]

    def panic_site(arm) -> Site | None:
        nxt = next((o.line for o in ordered if o.line > arm.line), None)
        return next((s for s in sites if s.line >= arm.line and (nxt is None or s.line < nxt)), None)

    statuses: dict[str, tuple[str, Site | None]] = {}
    catch_all = None
    for arm in ordered:
        if arm.catch_all:
            catch_all = catch_all or arm
            continue
        for r in arm.refs:
            if r.enum != enum:
                continue
            if arm.panics:
                statuses[r.variant] = (PANICS, panic_site(arm))
            elif r.variant not in statuses:
                statuses[r.variant] = (HANDLED, None)
    if catch_all is not None and len(definitions) == 1:
        rest = (PANICS, panic_site(catch_all)) if catch_all.panics else (HANDLED, None)
        for variant, _ in definitions[0].variants:
            statuses.setdefault(variant, rest)
    if definitions and len(definitions) == 1:
        order = {v: i for i, (v, _) in enumerate(definitions[0].variants)}
        statuses = dict(sorted(statuses.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
    return enum, statuses, sites[0]


def _site(ln) -> Site:
    r, a = ln.record, ln.facts
    return Site(r.id, r.filePath, r.lineNumber, a.function, r.pinned_url, a.pattern, r.errorMessage)


def apply_schemes(cells: dict[tuple[str, str, str], Cell], settings: list[Setting],
                  ops: dict[tuple[str, str], Operation], groups: list[Group], kind_of,
                  never: dict[tuple[str, str, str], list[tuple[str, Site]]] | None = None) -> None:
    """A quantized operation whose scheme matches (its settings) reject some variants: its
    quantized dtype is partial, naming the variants handled and rejected, unless a dtype match
    already panics on it. A variant the backend never creates (`never`, created.py), refused by
    an operation on an existing tensor, is no panic a user meets: named apart, and an operation
    refusing only such variants is handled, preempted by the creations that refuse them."""
    from analyzer.features.coverage.created import creates

    never = never or {}
    by_op: dict[tuple[str, str], list[Setting]] = {}
    for st in settings:
        by_op.setdefault((st.crate, st.operation), []).append(st)
    for (crate, op), sts in by_op.items():
        operation = ops.get((crate, op))
        if operation is None or operation.kind != QUANTIZED or not any(st.status != HANDLED for st in sts):
            continue
        made = creates(operation, QUANTIZED)
        unmet = {id(st): never[key] for st in sts if st.status != HANDLED and not made
                 and (key := (crate, st.enum, st.variant)) in never}
        reason = ". ".join(_scheme_reason(enum, [st for st in sts if st.enum == enum], unmet)
                           for enum in dict.fromkeys(st.enum for st in sts))
        met = [st for st in sts if st.status != HANDLED and id(st) not in unmet]
        preempted = [] if met else _refusals(unmet)
        sites = unique_sites([s for st in met for s in st.sites]) or [next(s for st in sts for s in st.sites)]
        for g in groups:
            for col in g.dtypes:
                if kind_of(col) == QUANTIZED:
                    _put_scheme(cells, (crate, op, col), g.enum, bool(met), reason, sites, preempted)


def _refusals(unmet: dict[int, list[tuple[str, Site]]]) -> list[Preempted]:
    """The creations' refusals of never-created variants, each record once."""
    from analyzer.features.coverage.created import NEVER_CREATED

    out: dict[str, Preempted] = {}
    for refused in unmet.values():
        for _, site in refused:
            out.setdefault(site.record_id, Preempted(NEVER_CREATED, site))
    return list(out.values())


def _put_scheme(cells: dict[tuple[str, str, str], Cell], key: tuple[str, str, str], enum: str, met: bool,
                reason: str, sites: list[Site], preempted: list[Preempted]) -> None:
    """One quantized cell of an operation whose scheme matches refuse variants: partial where a
    user meets a refusal (`met`), else handled with the refusals that preempt them."""
    cell = cells.get(key)
    if cell is None:
        status = PARTIAL if met else HANDLED
        cells[key] = Cell(*key, status, sites, enum, [Evidence(key[2], status, sites[0])], reason=reason,
                          preempted=preempted)
    elif cell.status == HANDLED and met:
        cell.status, cell.reason = PARTIAL, reason
        cell.sites = unique_sites(sites + cell.sites)
        cell.decided = {k: PARTIAL for k in cell.parts}
    elif cell.status == HANDLED:
        cell.reason = f"{cell.reason}; {reason}" if cell.reason else reason
        cell.preempted = preempted


def _scheme_reason(enum: str, sts: list[Setting], unmet: dict[int, list[tuple[str, Site]]] | None = None) -> str:
    """`schemes by QuantValue: Q8F, Q8S handled; Q4F panics`; a variant never created:
    `BlockTensor never created (refused by quantize, q_from_data)`."""
    from analyzer.features.coverage.created import NEVER_CREATED

    unmet = unmet or {}
    ways: dict[str, list[str]] = {}
    refusing: list[str] = []
    for st in sts:
        if id(st) in unmet:
            ways.setdefault(NEVER_CREATED, []).append(label(st.variant))
            refusing += [op for op, _ in unmet[id(st)] if op not in refusing]
        else:
            ways.setdefault(st.status, []).append(label(st.variant))
    by = f" (refused by {', '.join(refusing)})" if refusing else ""
    return f"schemes by {enum}: " + "; ".join(f"{', '.join(vs)} {status}{by if status == NEVER_CREATED else ''}"
                                             for status, vs in ways.items())
