"""The dtype coverage model: for each backend (crate) and operation, which dtypes a dtype-dispatch
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

from dataclasses import dataclass, field, replace
from functools import cached_property
from collections.abc import Iterable

from analyzer.profiles import current

HANDLED = "handled"
PANICS = "panics"
PARTIAL = "partial"
NA = "n/a"
UNKNOWN = "unknown"
STATUSES = (HANDLED, PANICS, PARTIAL, NA, UNKNOWN)
NOT_IMPLEMENTED = "not implemented"
CANNOT_HOLD = "cannot hold"


def primary_enum() -> str:
    """The dtype enum whose variants are written bare in cell keys (the target's `DType`)."""
    return current().dtypes.primary_enum

#: The dtype enum whose variants are written bare in cell keys (burn's `DType`).
#: The variant standing for "every variant no arm names" of an enum outside the tree.
OTHER = "*"


@dataclass(frozen=True, slots=True)
class Site:
    """A record behind a cell: one panicking arm, with the line and pinned link of its panic."""

    record_id: str
    path: str
    line: int
    function: str
    url: str
    pattern: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class Evidence:
    """One dispatch's say on one (expanded) dtype of a cell: `status` (handled or panics) in the
    match whose panicking arm is `site`."""

    dtype: str
    status: str
    site: Site


@dataclass(frozen=True, slots=True)
class Preempted:
    """An earlier refusal that fires first on every path to a cell's panics."""

    why: str
    site: Site | None = None


@dataclass(slots=True)
class Cell:
    crate: str
    operation: str
    dtype: str  # the column: `F32`, `Bool(U8)` (or `Bool` when collapsed), `Kind::Half`, `Kind::*`
    status: str  # handled | panics | partial
    sites: list[Site] = field(default_factory=list)  # panicking arms first
    enum: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    # Why the cell panics when no dispatch of the operation says so: `not implemented` (the
    # operation's whole body is a panic), `cannot hold` (the backend cannot create a tensor of
    # the dtype at all); why a cell is partial (which payload variants go which way, which schemes).
    reason: str = ""
    # Each payload variant's status when the cell was decided along its paths (else folded from
    # the evidence).
    decided: dict[str, str] = field(default_factory=dict)
    # A panicking cell whose every panic is preempted (its records' `analysis.reach`): the
    # earlier refusals a user meets first, each (why, its record's site, or None where there is
    # no earlier refusal).
    preempted: list[Preempted] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.crate, self.operation, self.dtype)

    @property
    def parts(self) -> dict[str, str]:
        """Status of each expanded dtype folded into this cell (`Bool(U32)`: panics)."""
        if self.decided:
            return dict(self.decided)
        out: dict[str, str] = {}
        for e in self.evidence:
            out[e.dtype] = fold([out[e.dtype], e.status]) if e.dtype in out else e.status
        return out


@dataclass(slots=True)
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
    invoked_at: int = 0  # the line of the macro invocation the dispatch is counted at (0: not a macro's)

    @property
    def line(self) -> int:
        return self.sites[0].line

    @property
    def handled(self) -> list[str]:
        return [d for d, s in self.statuses.items() if s == HANDLED]

    @property
    def panics(self) -> list[str]:
        return [d for d, s in self.statuses.items() if s == PANICS]


@dataclass(slots=True)
class Group:
    """The columns of one dtype enum, in its variant order."""

    enum: str
    dtypes: list[str]


@dataclass(frozen=True, slots=True)
class Operation:
    """A backend operation: a method of an ops trait as one backend crate implements it."""

    crate: str
    name: str
    trait: str
    kind: str  # the tensor kind its trait takes (float, int, bool, quantized), "" for any
    path: str
    line: int
    url: str = ""


@dataclass(slots=True)
class Limit:
    """A dtype a backend cannot hold: its creation operations (`float_from_data`, `int_empty`)
    panic on it and none of them, nor a cast, handles it."""

    crate: str
    dtype: str
    rejected_by: list[tuple[str, Site]]  # (creation operation, the panicking arm)


@dataclass(slots=True)
class _Backend:
    """One backend's entry in Matrix's index by crate."""

    operations: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=lambda: {s: 0 for s in STATUSES})
    enums: set[str] = field(default_factory=set)  # the enums it has a cell other than n/a in
    has_ops: bool = False  # an operation of the operations view


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
    # Operations whose whole body is a panic (`unimplemented!()`): (crate, operation) -> the site.
    unimplemented: dict[tuple[str, str], Site] = field(default_factory=dict)
    limits: list[Limit] = field(default_factory=list)  # the dtypes each backend cannot hold
    # The settings view: each non-dtype enum variant an operation's mode matches decide
    # (analyzer/features/coverage/settings.py Setting).
    settings: list = field(default_factory=list)
    claims: list = field(default_factory=list)  # each backend's dtype_usage read (claims.py Claim)
    # `runtimes` when the rows are a target's runtimes (runtimes.py), else the view by_operation says.
    view: str = ""
    # A dependency's runtime limits beside the backends that run on it (runtimes.py RuntimeLimit).
    runtime_limits: list = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)  # the --op patterns that chose the operations

    @property
    def by_operation(self) -> bool:
        return bool(self.ops)

    def crates(self) -> list[str]:
        return sorted(self._by_crate)

    def operations(self, crate: str) -> list[str]:
        entry = self._by_crate.get(crate)
        return sorted(entry.operations) if entry is not None else []

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
    def _by_crate(self) -> dict[str, _Backend]:
        """What the sinks ask of each backend (its operations, its cells by status, its enums),
        gathered in one pass over the cells: a pass per backend per question would walk every
        cell again for each."""
        out: dict[str, _Backend] = {}
        for (crate, op, _), cell in self.cells.items():  # a cell's key holds its crate (Cell.key)
            entry = out.get(crate)
            if entry is None:
                entry = out[crate] = _Backend()
            entry.operations.add(op)
            entry.counts[cell.status] += 1
            if cell.status != NA:
                entry.enums.add(cell.enum)
        for crate, op in self.ops:
            entry = out.get(crate)
            if entry is None:
                entry = out[crate] = _Backend()
            entry.operations.add(op)
            entry.has_ops = True
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
        entry = self._by_crate.get(crate)
        if entry is None:
            return []
        first = self.groups[0] if self.groups and entry.has_ops else None
        return [g for g in self.groups if g.enum in entry.enums or g is first]

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
        patterns = list(patterns)
        matchers = [name_matcher(p) for p in patterns]

        def match(name: str) -> bool:
            return any(m(name) for m in matchers)

        out = self._subset(lambda crate, op: match(op), lambda d: match(d.operation) or match(d.function))
        out.focused = True
        out.patterns = list(patterns)
        return out

    def _subset(self, keep_op, keep_dispatch) -> Matrix:
        cells = {k: c for k, c in self.cells.items() if keep_op(k[0], k[1])}
        ops = {k: o for k, o in self.ops.items() if keep_op(*k)}
        used = {c.enum for c in cells.values() if c.status != NA}
        groups = [g for g in self.groups if g.enum in used or (ops and g is self.groups[0])]
        out = Matrix(cells, [d for g in groups for d in g.dtypes], groups,
                      [d for d in self.dispatches if keep_op(d.crate, d.operation)], self.collapse, self.repo,
                      self.sha, ops, [d for d in self.helpers if keep_dispatch(d)],
                      {k: v for k, v in self.unknown_reasons.items() if k in cells}, self.focused,
                      {k: s for k, s in self.unimplemented.items() if keep_op(*k)},
                      [lim for lim in self.limits if any(keep_op(lim.crate, op) for op, _ in lim.rejected_by)
                       or any(k[0] == lim.crate for k in cells)],
                      [st for st in self.settings if keep_op(st.crate, st.operation)],
                      [replace(cl, panics_in=[o for o in cl.panics_in if keep_op(cl.crate, o)],
                               handled_in=[o for o in cl.handled_in if keep_op(cl.crate, o)],
                               stubs_in=[o for o in cl.stubs_in if keep_op(cl.crate, o)])
                       for cl in self.claims if any(keep_op(cl.crate, op) for c, op in self.ops if c == cl.crate)])
        out.view = self.view
        kept = {k[0] for k in cells} | {c for c, _ in ops}
        out.runtime_limits = [lim for lim in self.runtime_limits if lim.crate in kept or keep_op(lim.crate, "")]
        return out

    def limits_of(self, crate: str) -> list[Limit]:
        return [lim for lim in self.limits if lim.crate == crate]

    def limit(self, crate: str, dtype: str) -> Limit | None:
        return next((lim for lim in self.limits if lim.crate == crate and lim.dtype == dtype), None)

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
        """The cells of one backend (or of all) by status."""
        out = {s: 0 for s in STATUSES}
        for name, entry in self._by_crate.items():
            if crate is None or name == crate:
                for status, n in entry.counts.items():
                    out[status] += n
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
    return variant if not enum or enum == primary_enum() else f"{enum}::{variant}"


def fold(statuses: list[str]) -> str:
    """One status for several: the status they share, else partial."""
    distinct = set(statuses)
    return distinct.pop() if len(distinct) == 1 else PARTIAL


def base_variant(dtype: str) -> str:
    """A column's variant without its payload: `Bool(U8)` -> `Bool`."""
    return dtype.split("(", 1)[0]


def unique_sites(sites: list[Site]) -> list[Site]:
    """The sites in order, each record once."""
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
