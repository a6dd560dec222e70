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

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import TYPE_CHECKING
from collections.abc import Iterable

from analyzer.profiles import current
from analyzer.records.model import RecordLine

if TYPE_CHECKING:
    from analyzer.facts.model import FnFacts

HANDLED = "handled"
PANICS = "panics"
PARTIAL = "partial"
NA = "n/a"
UNKNOWN = "unknown"
STATUSES = (HANDLED, PANICS, PARTIAL, NA, UNKNOWN)

#: The dtype enum whose variants are written bare in cell keys (the target's, read at import).
PRIMARY_ENUM = current().dtypes.primary_enum
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
    # Operations view: how the dispatch reaches the function it is counted in (`via module_op!`,
    # `execute_with_dtype! [F64, F32] at src/ops/tensor.rs:61`), and why its cells are unknown.
    via: str = ""
    unknown: str = ""

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


@dataclass(frozen=True)
class Operation:
    """A backend operation: a method of an ops trait as one backend crate implements it."""

    crate: str
    name: str
    trait: str
    kind: str  # the tensor kind its trait takes (float, int, bool, quantized), "" for any
    path: str
    line: int
    url: str = ""


@dataclass
class Matrix:
    cells: dict[tuple[str, str, str], Cell]
    dtypes: list[str]  # every column, group after group
    groups: list[Group] = field(default_factory=list)
    dispatches: list[Dispatch] = field(default_factory=list)
    collapse: bool = False
    repo: str = ""
    sha: str = ""
    # The operations view (a revision analysed): every implemented operation is a row, even with
    # no cell; `helpers` are the dispatches no operation reaches. Empty in the matches view
    # (built from records alone), where an operation is a panic message's prefix.
    ops: dict[tuple[str, str], Operation] = field(default_factory=dict)
    helpers: list[Dispatch] = field(default_factory=list)
    unknown_reasons: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)  # cell key -> why
    focused: bool = False  # some operations were chosen (--op): the views put them side by side

    @property
    def by_operation(self) -> bool:
        return bool(self.ops)

    def crates(self) -> list[str]:
        return sorted({c for c, _, _ in self.cells} | {c for c, _ in self.ops})

    def operations(self, crate: str) -> list[str]:
        return sorted({o for c, o, _ in self.cells if c == crate} | {o for c, o in self.ops if c == crate})

    def operation(self, crate: str, name: str) -> Operation | None:
        return self.ops.get((crate, name))

    def get(self, crate: str, operation: str, dtype: str) -> Cell | None:
        return self.cells.get((crate, operation, dtype))

    @cached_property
    def _dispatch_index(self) -> dict[tuple[str, str | None], list[Dispatch]]:
        """Dispatches by (crate, operation) and by (crate, None): the sinks ask once per row, so a
        scan of every dispatch each time would be quadratic."""
        out: dict[tuple[str, str | None], list[Dispatch]] = {}
        for d in self.dispatches:
            out.setdefault((d.crate, d.operation), []).append(d)
            out.setdefault((d.crate, None), []).append(d)
        return out

    @cached_property
    def _cell_index(self) -> dict[tuple[str, str], list[Cell]]:
        """Cells by (crate, dtype), in the cells' order (a summary cell asks for one)."""
        out: dict[tuple[str, str], list[Cell]] = {}
        for cell in self.cells.values():
            out.setdefault((cell.crate, cell.dtype), []).append(cell)
        return out

    def dispatches_of(self, crate: str, operation: str | None = None) -> list[Dispatch]:
        return self._dispatch_index.get((crate, operation), [])

    def sites_of(self, crate: str, operation: str, enum: str) -> list:
        """The panicking arms behind an operation's row in one enum's column group."""
        return [s for d in self.dispatches_of(crate, operation) if d.enum == enum for s in d.sites]

    def groups_of(self, crate: str) -> list[Group]:
        """The column groups a backend has cells in (every column of such a group, so backends
        line up)."""
        # In the operations view a group where the backend has only n/a cells says nothing.
        used = {c.enum for c in self.cells.values() if c.crate == crate and c.status != NA}
        first = self.groups[0] if self.groups and any(c == crate for c, _ in self.ops) else None
        return [g for g in self.groups if g.enum in used or g is first]

    def operations_in(self, crate: str, group: Group) -> list[str]:
        """The rows of a backend's table of one group: the operations with a cell there (in the
        operations view, a cell other than n/a, but in the first group every operation)."""
        cols = set(group.dtypes)
        first = bool(self.ops) and group is self.groups[0]
        ops = {o for (c, o, d), cell in self.cells.items()
               if c == crate and d in cols and (first or cell.status != NA)}
        if self.ops and group is self.groups[0]:  # operations with no cell at all: the first group
            with_cells = {o for c, o, _ in self.cells if c == crate}
            ops |= {o for c, o in self.ops if c == crate and o not in with_cells}
        return sorted(ops)

    def only(self, crates: Iterable[str]) -> Matrix:
        """The matrix of some backends. Their enums keep every column the tree has, so a backend's
        table looks the same alone and among the others."""
        keep = set(crates)
        return self._subset(lambda crate, op: crate in keep, lambda d: d.crate in keep)

    def only_operations(self, pattern: str) -> Matrix:
        """The operations whose name matches `pattern`: a glob when it holds `*`, `?` or `[`,
        else a substring (case-insensitive). Helpers are kept when their function matches."""
        return self.only_operations_any([pattern])

    def only_operations_any(self, patterns: Iterable[str]) -> Matrix:
        """The operations whose name matches any of `patterns` (see only_operations)."""
        matchers = [name_matcher(p) for p in patterns]

        def match(name: str) -> bool:
            return any(m(name) for m in matchers)

        out = self._subset(lambda crate, op: match(op), lambda d: match(d.operation) or match(d.function))
        out.focused = True
        return out

    def _subset(self, keep_op, keep_dispatch) -> Matrix:
        cells = {k: c for k, c in self.cells.items() if keep_op(k[0], k[1])}
        ops = {k: o for k, o in self.ops.items() if keep_op(*k)}
        used = {c.enum for c in cells.values() if c.status != NA}
        groups = [g for g in self.groups if g.enum in used or (ops and g is self.groups[0])]
        return Matrix(cells, [d for g in groups for d in g.dtypes], groups,
                      [d for d in self.dispatches if keep_op(d.crate, d.operation)], self.collapse, self.repo,
                      self.sha, ops, [d for d in self.helpers if keep_dispatch(d)],
                      {k: v for k, v in self.unknown_reasons.items() if k in cells}, self.focused)

    def tally(self, crate: str, dtype: str) -> dict[str, list[str]]:
        """The backend's operations by their status on one dtype (a summary cell)."""
        out: dict[str, list[str]] = {s: [] for s in STATUSES}
        for cell in self._cell_index.get((crate, dtype), []):
            out[cell.status].append(cell.operation)
        return out

    def panic_found(self, crate: str, operation: str) -> bool:
        """Whether any cell of the operation panics or partly panics."""
        return (crate, operation) in self._panicking

    @cached_property
    def _panicking(self) -> set[tuple[str, str]]:
        return {(c.crate, c.operation) for c in self.cells.values() if c.status in (PANICS, PARTIAL)}

    def counts(self, crate: str | None = None) -> dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for c in self.cells.values():
            if crate is None or c.crate == crate:
                out[c.status] += 1
        return out


def name_matcher(pattern: str):
    """`conv` matches names holding it; `conv*d`, `float_?`, `[bq]_*` are globs over the name."""
    import fnmatch

    p = pattern.lower()
    if any(ch in p for ch in "*?["):
        return lambda name: fnmatch.fnmatchcase(name.lower(), p)
    return lambda name: p in name.lower()


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
        match_key = (a.crate, a.operation, r.filePath, a.itemPath or a.function, a.impl, a.inMacro, a.scrutinee,
                     a.enum or PRIMARY_ENUM, a.context == "if-let-else")
        by_match.setdefault(match_key, []).append(ln)
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
    for ds in rejected_by.values():
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


# ---------------------------------------------------------------------------------------------
# The operations view: rows are the methods of the backend ops traits each crate implements.

# Method names every type has (std traits): a call of one says nothing about which helper runs.
_GENERIC_CALLS = frozenset(("new", "from", "into", "clone", "default", "fmt", "eq", "hash", "try_from",
                            "try_into", "to_string", "as_ref", "unwrap", "expect", "map", "iter", "len", "max", "min",
                            "sum", "abs", "get", "insert", "push", "contains", "is_empty", "to_vec"))
# An arm pattern whose variant is a macro metavariable: `Enum::$dtype(x)`, or `$dtype` alone.
_METAVARIABLE_VARIANT = re.compile(r"(?:^|::)\s*\$(?!crate\b)(\w+)")
_UNREADABLE = ("?",)


@cache
def dtype_kind(dtype: str) -> str:
    """float, int, bool, quantized, or "" (no known kind) for a column key (`F32`, `Kind::Half`)."""
    variant = label(dtype).split("(", 1)[0]
    for kind, rx in _dtype_kind_patterns():
        if rx.fullmatch(variant):
            return kind
    return ""


def _dtype_kind_patterns():
    return current().dtype_kind_patterns


def trait_kind(trait: str) -> str:
    return next((kind for prefix, kind in current().code.ops_trait_kinds if trait.startswith(prefix)), "")


def ops_traits(code) -> dict[str, str]:
    """Backend ops traits defined in the tree: name -> the crate that defines it."""
    word = current().backend_word
    out: dict[str, str] = {}
    for _, crate, facts in code:
        for t in facts.traits:
            if word.search(t.header):
                out.setdefault(t.name, crate)
    return out


@dataclass
class _Fn:
    path: str
    crate: str
    facts: FnFacts


def build_operations(ex, collapse: bool = False) -> Matrix:
    """The operations matrix of an extraction: every backend operation (a method of a backend
    ops trait a crate implements) with the dispatches its implementation reaches through calls by
    name within its crate (helpers reached from several operations count for each), repetition
    macros resolved per invocation, and n/a where a dtype is of another tensor kind than the
    operation's trait takes."""
    from analyzer.records.model import github_url

    audit_by_id = {a.id: a for a in ex.audit if a.id is not None}
    checks = same_dtype_checks([a for a in ex.audit if a.id is not None and a.decision.category == "dtype-dispatch"])
    base = build([ln for ln in ex.lines if ln.record.id not in checks], collapse)
    traits = ops_traits(ex.code)

    # Operations: each crate's impls of the ops traits another crate defines.
    ops: dict[tuple[str, str], Operation] = {}
    for path, crate, facts in ex.code:
        for impl in facts.impls:
            if traits.get(impl.trait, crate) == crate:
                continue
            for name, line in impl.methods:
                ops.setdefault((crate, name), Operation(crate, name, impl.trait, trait_kind(impl.trait), path, line,
                                                        github_url(ex.repo, ex.sha, path, line, line)))

    if not ops:
        # A tree with no backend ops trait implemented: the matches view (rows by panic message).
        return base

    # The call graph by name, per crate: functions, who calls a name, macro definitions.
    fns: list[_Fn] = []
    callers: dict[tuple[str, str], list[int]] = {}
    fns_in: dict[str, list[int]] = {}
    macro_defs: dict[tuple[str, str], list] = {}
    invocations: dict[tuple[str, str], list] = {}  # (crate, macro) -> (function, invocation)
    for path, crate, facts in ex.code:
        for f in facts.functions:
            i = len(fns)
            fns.append(_Fn(path, crate, f))
            fns_in.setdefault(path, []).append(i)
            for inv in f.macros:
                invocations.setdefault((crate, inv.name), []).append((i, inv))
            for name in f.calls:
                if name not in _GENERIC_CALLS:
                    callers.setdefault((crate, name), []).append(i)
        for m in facts.macro_defs:
            macro_defs.setdefault((crate, m.name), []).append(m)
    is_op = [f.facts.trait in traits and (f.crate, f.facts.name) in ops for f in fns]

    def operations_reaching(start: int) -> list[str]:
        """The operations whose implementation reaches function `start` (breadth first over
        callers by name, each function once)."""
        seen = {start}
        queue = [start]
        found = []
        for i in queue:  # the list grows as it is read: a FIFO queue
            f = fns[i]
            if is_op[i]:
                found.append(f.facts.name)
            for j in callers.get((f.crate, f.facts.name), ()):
                if j not in seen:
                    seen.add(j)
                    queue.append(j)
        return found

    # Macros whose bodies reach a macro (itself included), per crate.
    invoked_by: dict[tuple[str, str], set[str]] = {}
    for (crate, name), defs in macro_defs.items():
        for d in defs:
            for inv in d.macros:
                invoked_by.setdefault((crate, inv.name), set()).add(name)

    def reaching_macros(crate: str, target: str) -> set[str]:
        seen = {target}
        queue = [target]
        for name in queue:
            for caller in invoked_by.get((crate, name), ()):
                if caller not in seen:
                    seen.add(caller)
                    queue.append(caller)
        return seen

    def default_lists(crate: str, macro: str, target: str, reach: set[str], memo: dict) -> set[tuple]:
        """The dtype lists a list-less invocation of `macro` passes on to `target`."""
        key = macro
        if key in memo:
            return memo[key]
        memo[key] = set()  # a cycle adds nothing
        out: set[tuple] = set()
        for d in macro_defs.get((crate, macro), []):
            for inv in d.macros:
                if inv.name == target:
                    if inv.unreadable:
                        out.add(_UNREADABLE)
                    elif inv.dtypes is not None:
                        out.add(tuple(inv.dtypes))
                    elif macro != target:
                        out |= default_lists(crate, target, target, reach, memo)
                elif inv.name in reach and inv.name != macro:
                    out |= default_lists(crate, inv.name, target, reach, memo)
        memo[key] = out
        return out

    def enclosing_fn(path: str, function: str, line: int) -> int | None:
        best = None
        for i in fns_in.get(path, ()):
            f = fns[i].facts
            innermost = best is None or f.line >= fns[best].facts.line
            if f.name == function and f.line <= line <= f.end_line and innermost:
                best = i
        return best

    # Dispatches -> (function, dispatch) instances.
    instances: list[tuple[int, Dispatch]] = []
    helpers: list[Dispatch] = []
    for d in base.dispatches:
        entry = audit_by_id.get(d.sites[0].record_id)
        site = entry.site if entry is not None else None
        in_macro = site.in_macro if site is not None else ""
        if in_macro.startswith("macro_rules! "):
            macro = in_macro.removeprefix("macro_rules! ")
            metavars = {m for arm in site.arms for m in _METAVARIABLE_VARIANT.findall(arm.pattern)} if site else set()
            reach = reaching_macros(d.crate, macro)
            memo: dict = {}
            placed = False
            for name in sorted(reach):
                for i, inv in invocations.get((d.crate, name), ()):
                    f = fns[i]
                    where = f"{short_path(f.path, f.crate)}:{inv.line}"
                    if not metavars:
                        inst = _instance(d, f"via {inv.name}! at {where}")
                    else:
                        if inv.name == macro:
                            lists = ({_UNREADABLE} if inv.unreadable else
                                     {tuple(inv.dtypes)} if inv.dtypes is not None else
                                     default_lists(d.crate, macro, macro, reach, memo))
                        else:
                            lists = default_lists(d.crate, inv.name, macro, reach, memo)
                        inst = _resolved(d, macro, inv.name, where, lists)
                    instances.append((i, inst))
                    placed = True
            if not placed:
                helpers.append(_instance(d, f"{macro}! is invoked in no function"))
            continue
        at = enclosing_fn(d.path, d.function, d.line) if d.function else None
        if at is None:
            helpers.append(d)
        else:
            instances.append((at, d))

    # Instances -> evidence per (crate, operation, column).
    evidence: dict[tuple[str, str, str], list[Evidence]] = {}
    reasons: dict[tuple[str, str, str], list[str]] = {}
    dispatches: list[Dispatch] = []
    reached_cache: dict[int, list[str]] = {}
    for at, d in instances:
        if at not in reached_cache:
            reached_cache[at] = operations_reaching(at)
        names = reached_cache[at]
        if not names:
            helpers.append(d)
            continue
        # A dispatch that handles dtypes of one kind only dispatches on a tensor of that kind (an
        # int index tensor inside a float op): what it says about other kinds is not about the
        # operation's own tensor.
        kinds = {dtype_kind(k) for k, st in d.statuses.items() if st == HANDLED} - {""}
        kind = kinds.pop() if len(kinds) == 1 else ""
        for op in dict.fromkeys(names):
            dispatches.append(_retarget(d, op))
            for dtype, status in d.statuses.items():
                if kind and dtype_kind(dtype) not in (kind, ""):
                    continue
                column = _base(dtype) if collapse else dtype
                if status == PANICS:
                    site = next((s for s in d.sites if dtype in d.rejected_by.get(s.record_id, ())), d.sites[0])
                else:
                    site = d.sites[0]
                evidence.setdefault((d.crate, op, column), []).append(Evidence(dtype, status, site))
                if status == UNKNOWN:
                    reasons.setdefault((d.crate, op, column), []).append(d.unknown)

    # A backend's columns: the first enum's, and those of the enums its own dispatches name.
    enums_of: dict[str, set[str]] = {}
    for d in base.dispatches:
        enums_of.setdefault(d.crate, set()).add(d.enum)
    cells: dict[tuple[str, str, str], Cell] = {}
    for (crate, op), operation in sorted(ops.items()):
        for n, g in enumerate(base.groups):
            if n and g.enum not in enums_of.get(crate, ()):
                continue
            for col in g.dtypes:
                key = (crate, op, col)
                kind = dtype_kind(col)
                ev = evidence.get(key)
                if operation.kind and kind and kind != operation.kind:
                    cells[key] = Cell(crate, op, col, NA, [], g.enum, ev or [])
                elif ev:
                    panicking = [e.site for e in ev if e.status == PANICS]
                    cells[key] = Cell(crate, op, col, _fold_known([e.status for e in ev]),
                                      _unique(panicking + [e.site for e in ev]), g.enum, ev)
    dispatches.sort(key=lambda d: (d.crate, d.operation, d.path, d.line))
    helpers.sort(key=lambda d: (d.crate, d.function, d.path, d.line))
    return Matrix(cells, base.dtypes, base.groups, dispatches, collapse, base.repo or ex.repo, base.sha or ex.sha,
                  ops, _unique_dispatches(helpers), {k: list(dict.fromkeys(v)) for k, v in reasons.items()})


def _arm_dtypes(arm) -> set[str]:
    """The variants an arm names (`Enum::F32(x)`: F32), and its metavariables (`Enum::$dtype(x)`:
    `$dtype`)."""
    out = {r.variant for r in arm.refs}
    out |= {"$" + m for m in _METAVARIABLE_VARIANT.findall(arm.pattern)}
    return out


def same_dtype_checks(entries) -> set[str]:
    """Record ids of matches nested in an arm of another dtype match that handles the same dtypes
    (`NdArrayTensor::F32(x) => match bias { NdArrayTensor::F32(b) => .., _ => panic!(..) }`): the
    inner panic fires when a second tensor's dtype differs from the first's, not because a dtype
    is unsupported, so it says nothing about the operation's dtype support."""
    by_place: dict[tuple, list] = {}
    for a in entries:
        by_place.setdefault((a.path, a.site.in_macro, a.site.function), []).append(a)
    out: set[str] = set()
    for group in by_place.values():
        if len(group) < 2:
            continue
        for inner in group:
            handled = set().union(*(_arm_dtypes(arm) for arm in inner.site.arms if not arm.panics
                                    and not arm.catch_all)) if inner.site.arms else set()
            if not handled:
                continue
            for outer in group:
                arms = sorted(outer.site.arms, key=lambda arm: arm.line)
                if outer is inner or len(arms) < 2 or not (arms[0].line < inner.site.line < arms[-1].line):
                    continue
                around = [arm for arm in arms if arm.line <= inner.site.line][-1]
                if not around.panics and handled <= _arm_dtypes(around):
                    out.add(inner.id)
                    break
    return out


def _fold_known(statuses: list[str]) -> str:
    """The cell of several dispatches: the known ones folded (handled, panics or partial); a
    cell only unknown dispatches speak for, or handled by the known ones while an unknown one
    might panic, is unknown. Never panics by default."""
    known = [s for s in statuses if s != UNKNOWN]
    if not known:
        return UNKNOWN
    folded = _fold(known)
    return UNKNOWN if folded == HANDLED and len(known) < len(statuses) else folded


def _instance(d: Dispatch, via: str) -> Dispatch:
    return Dispatch(d.crate, d.operation, d.function, d.path, d.enum, d.scrutinee, d.context, dict(d.statuses),
                    list(d.partial), d.sites, d.rejected_by, via)


def _retarget(d: Dispatch, operation: str) -> Dispatch:
    out = _instance(d, d.via)
    out.operation = operation
    out.unknown = d.unknown
    return out


def _resolved(d: Dispatch, macro: str, invoked: str, where: str, lists: set[tuple]) -> Dispatch:
    """A repetition macro's dispatch as one invocation makes it: the listed dtypes handled, the
    others as the catch-all says; unknown when the list cannot be read or is not one list."""
    if len(lists) != 1 or _UNREADABLE in lists:
        why = (f"{invoked}! at {where} passes a dtype list the audit cannot read" if _UNREADABLE in lists else
               f"{invoked}! at {where} reaches {macro}! with {len(lists)} different dtype lists" if lists else
               f"{invoked}! at {where} reaches {macro}! with no dtype list the audit can find")
        out = _instance(d, f"via {invoked}! at {where}")
        out.statuses = {k: UNKNOWN for k in d.statuses}
        out.unknown = why
        return out
    (names,) = lists
    listed = set(names)
    out = _instance(d, f"via {invoked}! [{', '.join(names)}] at {where}")
    out.statuses = {k: (HANDLED if label(k).split("(", 1)[0] in listed else s) for k, s in d.statuses.items()}
    out.rejected_by = {rid: [k for k in ks if label(k).split("(", 1)[0] not in listed]
                       for rid, ks in d.rejected_by.items()}
    return out


def _unique_dispatches(ds: list[Dispatch]) -> list[Dispatch]:
    out, seen = [], set()
    for d in ds:
        key = (d.crate, d.path, d.line, d.via)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
