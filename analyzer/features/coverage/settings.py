"""The settings view of the operations matrix: for each non-dtype enum a backend operation's
`unsupported-mode` match dispatches on (an interpolation mode, a padding mode, a quantization
value), which variants the operation handles and which panic, with the same statuses as the
dtype cells. A match is counted for every operation that reaches it through the call graph."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from analyzer.decisions.categories import MODE
from analyzer.features.coverage.callgraph import CallGraph
from analyzer.features.coverage.model import (
    HANDLED, NA, PANICS, PARTIAL, Cell, Evidence, Group, Operation, Site, fold, label, unique_sites,
)

QUANTIZED = "quantized"


@dataclass
class Setting:
    crate: str
    operation: str
    enum: str
    variant: str
    status: str  # handled | panics | partial
    sites: list[Site] = field(default_factory=list)  # the panicking arms first


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


def build_settings(ex, graph: CallGraph) -> list[Setting]:
    """Every (crate, operation, enum, variant) an operation's mode match decides, sorted."""
    lines = {ln.record.id: ln for ln in ex.lines}
    matches: dict[tuple, list] = {}
    for a in ex.audit:
        if a.id is None or a.id not in lines or a.decision.category != MODE or not a.site.arms:
            continue
        key = (a.path, a.site.in_macro, a.site.function, tuple(arm.line for arm in a.site.arms))
        matches.setdefault(key, []).append(a)
    evidence: dict[tuple[str, str, str, str], list[tuple[str, Site]]] = {}
    reached: dict[int, list[str]] = {}
    for entries in matches.values():
        decided = _decide(entries, ex.catalog, lines)
        if decided is None:
            continue
        enum, statuses, handled_site = decided
        first = entries[0]
        at = graph.enclosing_fn(first.path, first.site.function, first.site.line) if first.site.function else None
        if at is None:
            continue
        if at not in reached:
            reached[at] = graph.operations_reaching(at)
        for op in dict.fromkeys(reached[at]):
            for variant, (status, site) in statuses.items():
                evidence.setdefault((first.crate, op, enum, variant), []).append((status, site or handled_site))
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
    return Site(r.id, r.filePath, r.lineNumber, a.function, r.githubUrl, a.pattern, r.errorMessage)


def apply_schemes(cells: dict[tuple[str, str, str], Cell], settings: list[Setting],
                  ops: dict[tuple[str, str], Operation], groups: list[Group], kind_of) -> None:
    """A quantized operation whose scheme matches (its settings) reject some variants: its
    quantized dtype is partial, naming the variants handled and rejected, unless a dtype match
    already panics on it."""
    by_op: dict[tuple[str, str], list[Setting]] = {}
    for st in settings:
        by_op.setdefault((st.crate, st.operation), []).append(st)
    for (crate, op), sts in by_op.items():
        operation = ops.get((crate, op))
        if operation is None or operation.kind != QUANTIZED or not any(st.status != HANDLED for st in sts):
            continue
        reason = ". ".join(_scheme_reason(enum, [st for st in sts if st.enum == enum])
                           for enum in dict.fromkeys(st.enum for st in sts))
        sites = unique_sites([s for st in sts if st.status != HANDLED for s in st.sites])
        for g in groups:
            for col in g.dtypes:
                if kind_of(col) != QUANTIZED:
                    continue
                cell = cells.get((crate, op, col))
                if cell is None:
                    cells[(crate, op, col)] = Cell(crate, op, col, PARTIAL, sites, g.enum,
                                                   [Evidence(col, PARTIAL, sites[0])], reason=reason)
                elif cell.status == HANDLED:
                    cell.status, cell.reason = PARTIAL, reason
                    cell.sites = unique_sites(sites + cell.sites)
                    cell.decided = {k: PARTIAL for k in cell.parts}
                elif cell.status == NA:
                    continue


def _scheme_reason(enum: str, sts: list[Setting]) -> str:
    """`schemes by QuantValue: Q8F, Q8S handled; Q4F panics`."""
    ways: dict[str, list[str]] = {}
    for st in sts:
        ways.setdefault(st.status, []).append(label(st.variant))
    return f"schemes by {enum}: " + "; ".join(f"{', '.join(vs)} {status}" for status, vs in ways.items())
