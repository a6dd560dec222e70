"""The dtype coverage matrix: for each backend (crate) and operation, which dtypes a dtype-dispatch
match handles and which panic. Built from records (their `analysis`) alone, so a fresh extraction
and a records.jsonl file give the same matrix.

Three levels:

- a **record** is one panicking arm: its `rejected` dtypes panic there, its `handled` dtypes are
  handled by the match's other arms;
- a **dispatch** is one match: the records of the same crate, operation, file, function,
  scrutinee, dtype enum and context. A dtype panics in the match when any of its panicking arms
  rejects it, else it is handled when an arm handles it;
- a **cell** is (crate, operation, dtype): the dispatches of the operation folded together. A dtype
  that one dispatch handles and another rejects is `partial` for the operation.

Dtypes are the dtype enum's variants with payload enums expanded (`Bool(U8)`); `collapse` folds them
to the base variant (`Bool`), where a variant with some sub-variants handled and some panicking is
`partial`. Variants of burn's `DType` are written bare (`F32`); variants of every other enum are
qualified (`FloatDType::F16`, `Kind::Half`), so an enum's columns never mix with another's: a tch
`Kind::Bool` is not a `DType::Bool`. An enum from outside the analyzed tree (tch's `Kind`) has the
variant `*` for "every variant no arm names".

Column order is each enum's variant order, recovered from the records (their dtype lists are in the
enum's order), not written into the tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from .record import RecordLine

HANDLED = "handled"
PANICS = "panics"
PARTIAL = "partial"
STATUSES = (HANDLED, PANICS, PARTIAL)

#: The dtype enum whose variants are written bare in cell keys (burn's `DType`).
PRIMARY_ENUM = "DType"
#: The variant standing for "every variant no arm names" of an enum outside the tree.
OTHER = "*"


@dataclass(frozen=True)
class Site:
    """A record behind a cell: one panicking arm, with the line and pinned link of its panic."""

    record_id: str
    path: str
    line: int
    function: str
    url: str
    pattern: str = ""
    message: str = ""


@dataclass(frozen=True)
class Evidence:
    """One dispatch's say on one (expanded) dtype of a cell: `status` (handled or panics) in the
    match whose panicking arm is `site`."""

    dtype: str
    status: str
    site: Site


@dataclass
class Cell:
    crate: str
    operation: str
    dtype: str  # the column: `F32`, `Bool(U8)` (or `Bool` when collapsed), `Kind::Half`, `Kind::*`
    status: str  # handled | panics | partial
    sites: list[Site] = field(default_factory=list)  # panicking arms first
    enum: str = ""
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.crate, self.operation, self.dtype)

    @property
    def parts(self) -> dict[str, str]:
        """Status of each expanded dtype folded into this cell (`Bool(U32)`: panics)."""
        out: dict[str, str] = {}
        for e in self.evidence:
            out[e.dtype] = _fold([out[e.dtype], e.status]) if e.dtype in out else e.status
        return out


@dataclass
class Dispatch:
    """One dtype-dispatch match: its panicking arms (records) and each dtype's status in it."""

    crate: str
    operation: str
    function: str
    path: str
    enum: str
    scrutinee: str
    context: str
    statuses: dict[str, str]  # expanded dtype -> handled | panics, in column order
    partial: list[str]  # base variants with some sub-variants handled and some panicking
    sites: list[Site]  # its records, by line
    rejected_by: dict[str, list[str]] = field(default_factory=dict)  # record id -> dtypes its arm rejects

    @property
    def line(self) -> int:
        return self.sites[0].line

    @property
    def handled(self) -> list[str]:
        return [d for d, s in self.statuses.items() if s == HANDLED]

    @property
    def panics(self) -> list[str]:
        return [d for d, s in self.statuses.items() if s == PANICS]


@dataclass
class Group:
    """The columns of one dtype enum, in its variant order."""

    enum: str
    dtypes: list[str]


@dataclass
class Matrix:
    cells: dict[tuple[str, str, str], Cell]
    dtypes: list[str]  # every column, group after group
    groups: list[Group] = field(default_factory=list)
    dispatches: list[Dispatch] = field(default_factory=list)
    collapse: bool = False
    repo: str = ""
    sha: str = ""

    def crates(self) -> list[str]:
        return sorted({c for c, _, _ in self.cells})

    def operations(self, crate: str) -> list[str]:
        return sorted({o for c, o, _ in self.cells if c == crate})

    def get(self, crate: str, operation: str, dtype: str) -> Cell | None:
        return self.cells.get((crate, operation, dtype))

    def dispatches_of(self, crate: str, operation: str | None = None) -> list[Dispatch]:
        return [d for d in self.dispatches if d.crate == crate and (operation is None or d.operation == operation)]

    def sites_of(self, crate: str, operation: str, enum: str) -> list:
        """The panicking arms behind an operation's row in one enum's column group."""
        return [s for d in self.dispatches_of(crate, operation) if d.enum == enum for s in d.sites]

    def groups_of(self, crate: str) -> list[Group]:
        """The column groups a backend has cells in (every column of such a group, so backends
        line up)."""
        used = {c.enum for c in self.cells.values() if c.crate == crate}
        return [g for g in self.groups if g.enum in used]

    def operations_in(self, crate: str, group: Group) -> list[str]:
        cols = set(group.dtypes)
        return sorted({o for c, o, d in self.cells if c == crate and d in cols})

    def only(self, crates: Iterable[str]) -> "Matrix":
        """The matrix of some backends. Their enums keep every column the tree has, so a backend's
        table looks the same alone and among the others."""
        keep = set(crates)
        cells = {k: c for k, c in self.cells.items() if k[0] in keep}
        used = {c.enum for c in cells.values()}
        groups = [g for g in self.groups if g.enum in used]
        return Matrix(cells, [d for g in groups for d in g.dtypes], groups,
                      [d for d in self.dispatches if d.crate in keep], self.collapse, self.repo, self.sha)

    def tally(self, crate: str, dtype: str) -> dict[str, list[str]]:
        """The backend's operations by their status on one dtype (a summary cell)."""
        out: dict[str, list[str]] = {s: [] for s in STATUSES}
        for (c, o, d), cell in self.cells.items():
            if c == crate and d == dtype:
                out[cell.status].append(o)
        return out

    def counts(self, crate: str | None = None) -> dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for c in self.cells.values():
            if crate is None or c.crate == crate:
                out[c.status] += 1
        return out


def label(dtype: str) -> str:
    """A column's header inside its group: `Kind::Half` -> `Half`, `Kind::*` -> `other`."""
    variant = dtype.split("::", 1)[1] if "::" in dtype.split("(", 1)[0] else dtype
    return "other" if variant == OTHER else variant


def short_path(path: str, crate: str) -> str:
    """A file's path inside its crate: `crates/burn-flex/src/ops/module.rs` -> `src/ops/module.rs`."""
    head, sep, tail = path.partition(f"{crate}/")
    if sep and (not head or head.endswith("/")):
        return tail
    return path


def qualify(enum: str | None, variant: str) -> str:
    return variant if not enum or enum == PRIMARY_ENUM else f"{enum}::{variant}"


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
        key = (a.crate, a.operation, r.filePath, a.itemPath or a.function, a.impl, a.inMacro, a.scrutinee,
               a.enum or PRIMARY_ENUM, a.context == "if-let-else")
        by_match.setdefault(key, []).append(ln)
    known = {(crate, g.enum): _expanded_order([ln for ln in lines if ln.facts.crate == crate], g.enum)
             for crate in {ln.facts.crate for ln in lines} for g in groups}
    dispatches = [_dispatch(group, order, known) for group in by_match.values()]
    dispatches.sort(key=lambda d: (d.crate, d.operation, d.path, d.line))

    # Dispatches -> cells.
    evidence: dict[tuple[str, str, str], list[Evidence]] = {}
    for d in dispatches:
        for dtype, status in d.statuses.items():
            column = _base(dtype) if collapse else dtype
            site = d.sites[0] if status == HANDLED else next(s for s in d.sites if dtype in d.rejected_by[s.record_id])
            evidence.setdefault((d.crate, d.operation, column), []).append(Evidence(dtype, status, site))
    cells: dict[tuple[str, str, str], Cell] = {}
    column_index = {d: i for i, d in enumerate(column_of)}
    for key in sorted(evidence, key=lambda k: (k[0], k[1], column_index.get(k[2], len(column_index)), k[2])):
        ev = evidence[key]
        panicking = [e.site for e in ev if e.status == PANICS]
        sites = _unique(panicking + [e.site for e in ev])
        cells[key] = Cell(*key, status=_fold([e.status for e in ev]), sites=sites,
                          enum=column_of.get(key[2], ""), evidence=ev)
    first = lines[0].record if lines else None
    return Matrix(cells, [d for g in groups for d in g.dtypes], groups, dispatches, collapse,
                  first.repo if first else "", first.analyzedSha if first else "")


def _dispatch(records: list[RecordLine], order: dict[str, int], known: dict[tuple[str, str], list[str]]) -> Dispatch:
    records = sorted(records, key=lambda ln: (ln.record.lineNumber, ln.facts.column))
    a0 = records[0].facts
    enum = a0.enum or PRIMARY_ENUM
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
    for rid, ds in rejected_by.items():
        if other in ds:
            ds += [k for k in known.get((a0.crate, enum), []) if k not in named and k not in ds]
    # Within one match a dtype that any arm rejects panics, whatever another arm covers.
    rejected = {d for ds in rejected_by.values() for d in ds}
    statuses = {d: (PANICS if d in rejected else HANDLED) for d in handled | rejected}
    statuses = dict(sorted(statuses.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
    # A variant whose payload sub-variants go both ways (Bool(U8) handled, Bool(U32) panics).
    partial = [base for base in dict.fromkeys(_base(d) for d in statuses if "(" in d)
               if len({s for d, s in statuses.items() if _base(d) == base}) > 1]
    return Dispatch(a0.crate, a0.operation, a0.function, records[0].record.filePath, enum, a0.scrutinee,
                    a0.context, statuses, partial, sites, rejected_by)


def _groups(lines: list[RecordLine], collapse: bool) -> list[Group]:
    enums = {ln.facts.enum or PRIMARY_ENUM for ln in lines}
    out = []
    for enum in sorted(enums, key=lambda e: (e != PRIMARY_ENUM, e)):
        dtypes = _expanded_order(lines, enum)
        if collapse:
            dtypes = list(dict.fromkeys(_base(d) for d in dtypes))
        out.append(Group(enum, dtypes))
    return out


def _expanded_order(lines: list[RecordLine], enum: str) -> list[str]:
    """The enum's variants (payloads expanded) in its declaration order, merged from the records'
    dtype lists, each of which is in that order; `*` last. An enum from outside the tree has no
    known order (the records list its variants alphabetically): alphabetical."""
    seqs: list[list[str]] = []
    for ln in lines:
        a = ln.facts
        if (a.enum or PRIMARY_ENUM) == enum:
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
    out: list[str] = []
    remaining = set(first)
    while remaining:
        ready = [x for x in remaining if before_count[x] == 0] or list(remaining)
        x = min(ready, key=lambda k: (k == last, k if alphabetical else "", first[k]))
        out.append(x)
        remaining.discard(x)
        for y in after[x]:
            before_count[y] -= 1
    return out


def _fold(statuses: list[str]) -> str:
    distinct = set(statuses)
    return distinct.pop() if len(distinct) == 1 else PARTIAL


def _base(dtype: str) -> str:
    return dtype.split("(", 1)[0]


def _unique(sites: list[Site]) -> list[Site]:
    out, ids = [], set()
    for s in sites:
        if s.record_id not in ids:
            ids.add(s.record_id)
            out.append(s)
    return out


def flipped(base: Matrix, head: Matrix) -> list[tuple[tuple[str, str, str], str | None, str | None]]:
    """Cells whose status differs between two matrices: (key, base status, head status); a cell
    missing on one side has status None there."""
    out = []
    for key in sorted(set(base.cells) | set(head.cells)):
        b = base.cells.get(key)
        h = head.cells.get(key)
        bs, hs = (b.status if b else None), (h.status if h else None)
        if bs != hs:
            out.append((key, bs, hs))
    return out
