"""The matches view of the coverage matrix, built from records alone (a fresh extraction and a
records.jsonl file give the same one): records -> dispatches (one per match) -> cells, rows
named by the records' operation (a panic message's prefix, else the function)."""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from analyzer.features.coverage.preempted import mark_preempted
from analyzer.features.coverage.model import (
    HANDLED, OTHER, PANICS, primary_enum, Cell, Dispatch, Evidence, Group, Matrix, Site, base_variant, fold, qualify,
    unique_sites,
)
from analyzer.records.model import RecordLine


def build(lines: Iterable[RecordLine], collapse: bool = False) -> Matrix:
    """The matrix of every dtype-dispatch record (other records, and records read without
    analysis, which carry no dtypes, are ignored)."""
    lines = [ln for ln in lines if ln.analysis is not None and ln.analysis.category == "dtype-dispatch"]
    groups = _groups(lines, collapse)
    column_of = {d: g.enum for g in groups for d in g.dtypes}
    order = {d: i for i, d in enumerate(d for g in groups for d in _expanded_order(lines, g.enum))}

    # Records -> dispatches (one per match).
    by_match: dict[tuple, list[RecordLine]] = {}
    for ln in lines:
        a, r = ln.facts, ln.record
        match_key = (a.crate, a.operation, r.filePath, a.itemPath or a.function, a.impl, a.inMacro, a.scrutinee,
                     a.enum or primary_enum(), a.context == "if-let-else")
        by_match.setdefault(match_key, []).append(ln)
    of_crate: dict[str, list[RecordLine]] = {}  # one pass, not a pass over the records per crate
    for ln in lines:
        of_crate.setdefault(ln.facts.crate, []).append(ln)
    known = {(crate, g.enum): _expanded_order(crate_lines, g.enum) for crate, crate_lines in of_crate.items()
             for g in groups}
    dispatches = [_dispatch(group, order, known) for group in by_match.values()]
    dispatches.sort(key=lambda d: (d.crate, d.operation, d.path, d.line))

    # Dispatches -> cells.
    evidence: dict[tuple[str, str, str], list[Evidence]] = {}
    for d in dispatches:
        for dtype, status in d.statuses.items():
            column = base_variant(dtype) if collapse else dtype
            site = d.sites[0] if status == HANDLED else next(s for s in d.sites if dtype in d.rejected_by[s.record_id])
            evidence.setdefault((d.crate, d.operation, column), []).append(Evidence(dtype, status, site))
    cells: dict[tuple[str, str, str], Cell] = {}
    column_index = {d: i for i, d in enumerate(column_of)}
    for key in sorted(evidence, key=lambda k: (k[0], k[1], column_index.get(k[2], len(column_index)), k[2])):
        ev = evidence[key]
        panicking = [e.site for e in ev if e.status == PANICS]
        sites = unique_sites(panicking + [e.site for e in ev])
        cells[key] = Cell(*key, status=fold([e.status for e in ev]), sites=sites,
                          enum=column_of.get(key[2], ""), evidence=ev)
    mark_preempted(cells.values(), lines)
    first = lines[0].record if lines else None
    return Matrix(cells, [d for g in groups for d in g.dtypes], groups, dispatches, collapse,
                  first.repo if first else "", first.analyzedSha if first else "")


def _dispatch(records: list[RecordLine], order: dict[str, int], known: dict[tuple[str, str], list[str]]) -> Dispatch:
    records = sorted(records, key=lambda ln: (ln.record.lineNumber, ln.facts.column))
    a0 = records[0].facts
    enum = a0.enum or primary_enum()
    handled: set[str] = set()
    rejected_by: dict[str, list[str]] = {}
    sites = []
    for ln in records:
        a, r = ln.facts, ln.record
        sites.append(Site(r.id, r.filePath, r.lineNumber, a.function, r.githubUrl, a.pattern, r.errorMessage))
        rejected_by[r.id] = [qualify(enum, v) for v in a.rejected]
        handled |= {qualify(enum, v) for v in a.handled}
    # A catch-all arm on an enum from outside the tree rejects `*`: every variant no arm names. The
    # variants other matches of the same crate name are known, so they get cells of their own (only
    # the same crate's: two crates' enums of one name need not be the same enum).
    other = qualify(enum, OTHER)
    named = handled | {d for ds in rejected_by.values() for d in ds}
    for ds in rejected_by.values():
        if other in ds:
            ds += [k for k in known.get((a0.crate, enum), []) if k not in named and k not in ds]
    # Within one match a dtype that any arm rejects panics, whatever another arm covers.
    rejected = {d for ds in rejected_by.values() for d in ds}
    statuses = {d: (PANICS if d in rejected else HANDLED) for d in handled | rejected}
    statuses = dict(sorted(statuses.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
    # A variant whose payload sub-variants go both ways (Bool(U8) handled, Bool(U32) panics).
    partial = [base for base in dict.fromkeys(base_variant(d) for d in statuses if "(" in d)
               if len({s for d, s in statuses.items() if base_variant(d) == base}) > 1]
    return Dispatch(a0.crate, a0.operation, a0.function, records[0].record.filePath, enum, a0.scrutinee,
                    a0.context, statuses, partial, sites, rejected_by)


def _groups(lines: list[RecordLine], collapse: bool) -> list[Group]:
    enums = {ln.facts.enum or primary_enum() for ln in lines}
    out = []
    for enum in sorted(enums, key=lambda e: (e != primary_enum(), e)):
        dtypes = _expanded_order(lines, enum)
        if collapse:
            dtypes = list(dict.fromkeys(base_variant(d) for d in dtypes))
        out.append(Group(enum, dtypes))
    return out


def _expanded_order(lines: list[RecordLine], enum: str) -> list[str]:
    """The enum's variants (payloads expanded) in its declaration order, merged from the records'
    dtype lists, each of which is in that order; `*` last. An enum from outside the tree has no
    known order (the records list its variants alphabetically): alphabetical."""
    seqs: list[list[str]] = []
    for ln in lines:
        a = ln.facts
        if (a.enum or primary_enum()) == enum:
            seqs += [[qualify(enum, v) for v in a.handled], [qualify(enum, v) for v in a.rejected]]
    other = qualify(enum, OTHER)
    return _merge_orders(seqs, last=other, alphabetical=any(other in s for s in seqs))


def _merge_orders(seqs: list[list[str]], last: str, alphabetical: bool = False) -> list[str]:
    """One order consistent with every sequence (a topological sort, ties by first appearance or
    alphabetically); should the sequences disagree, the earliest remaining item breaks the cycle."""
    first: dict[str, int] = {}
    after: dict[str, set[str]] = {}
    before_count: dict[str, int] = {}
    for seq in seqs:
        for x in seq:
            first.setdefault(x, len(first))
            after.setdefault(x, set())
            before_count.setdefault(x, 0)
        for a, b in zip(seq, seq[1:]):
            if b not in after[a]:
                after[a].add(b)
                before_count[b] += 1
    def key(k: str) -> tuple[bool, str, int]:
        return (k == last, k if alphabetical else "", first[k])

    # Kahn's sort with heaps (the least ready item, else the least remaining one), n log n: a
    # scan of every remaining item per step was quadratic in the variants records can name.
    ready = [(key(x), x) for x in first if before_count[x] == 0]
    everything = [(key(x), x) for x in first]
    heapq.heapify(ready)
    heapq.heapify(everything)
    out: list[str] = []
    done: set[str] = set()
    while len(out) < len(first):
        pick = ready if ready else everything
        x = heapq.heappop(pick)[1]
        if x in done:
            continue
        out.append(x)
        done.add(x)
        for y in after[x]:
            before_count[y] -= 1
            if before_count[y] == 0 and y not in done:
                heapq.heappush(ready, (key(y), y))
    return out
