"""What a history holds, as the sinks render it: per revision its counts, per site its lineage of
states and events and how it ended, per coverage cell its flips."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from analyzer.features.diff import rank

if TYPE_CHECKING:  # pydantic is imported when records are built
    from analyzer.records.model import RecordLine

# How a lineage ended.
FIXED = "fixed"
REMOVED_FROM_TREE = "removed-from-tree"
REWRITTEN = "rewritten"
REMOVAL_KINDS = (FIXED, REMOVED_FROM_TREE, REWRITTEN)

EVENT_KINDS = ("added", "changed", "moved", "removed")

# What a coverage cell did between two neighbouring revisions: it panics less and no longer at all
# (fixed), it panics less but still partly (improved), it panics more (regressed), or its status
# changed otherwise (a reason, handled <-> blank, a cell turning n/a or unknown).
FLIP_KINDS = ("fixed", "improved", "regressed", "changed")


@dataclass(frozen=True)
class Skipped:
    """A planned revision left out, and why."""

    label: str
    reason: str


@dataclass(frozen=True, slots=True)
class State:
    """What a lineage remembers of its record at one revision (a few fields, not the record)."""

    id: str
    message: str
    category: str
    macro: str
    crate: str
    function: str
    in_macro: str
    operation: str
    file: str
    line: int
    url: str
    scrutinee: str
    pattern: str
    enum: str | None
    handled: tuple[str, ...]
    rejected: tuple[str, ...]
    repo: str = ""  # the record's repository (a dependency's, with --with-dependencies)
    # Whether a user reaches it (records/model.py reach_content: `reachable`, `preempted: forward`).
    reach: str = ""

    @classmethod
    def of(cls, line: RecordLine) -> State:
        from analyzer.records.model import reach_content

        r, a = line.record, line.analysis
        assert a is not None  # records of an extraction always carry their analysis
        return cls(r.id, r.errorMessage, a.category, a.macro, a.crate, a.function, a.inMacro, a.operation,
                   r.filePath, r.lineNumber, r.githubUrl, a.scrutinee, a.pattern, a.enum, tuple(a.handled),
                   tuple(a.rejected), r.repo, reach_content(a.reach, a.preemptedBy))

    def field(self, name: str) -> object:
        return list(getattr(self, name)) if name in ("handled", "rejected") else getattr(self, name)


@dataclass(frozen=True, slots=True)
class Removal:
    kind: str  # fixed | removed-from-tree | rewritten
    reason: str  # dtype-handled | arm-removed | file-gone | function-gone | match-gone
    dtypes: tuple[str, ...] = ()  # for dtype-handled: the rejected dtypes now handled


@dataclass(frozen=True, slots=True)
class Event:
    revision: int  # index into History.revisions
    kind: str  # added | changed | moved | removed
    state: State  # the record at that revision (for removed: its last state)
    before: State | None = None  # changed / moved: the state at the previous revision
    fields: tuple[str, ...] = ()  # changed: the record.CONTENT_FIELDS that differ
    link: str = ""  # changed / moved: how the two records were matched
    removal: Removal | None = None
    key: str = ""  # the lineage's key


@dataclass(slots=True)
class Lineage:
    key: str  # the id the site had when first seen (made unique if an id comes back)
    first: int  # revision index
    state: State  # the latest state
    events: list[Event] = field(default_factory=list)
    last: int = 0  # the last revision it was seen at
    removed: int | None = None  # revision index where it disappeared
    removal: Removal | None = None

    @property
    def ids(self) -> list[str]:
        return list(dict.fromkeys(e.state.id for e in self.events))

    def state_at(self, index: int) -> State | None:
        """Its record at a revision; None where it was not in the tree."""
        if index < self.first or (self.removed is not None and index >= self.removed):
            return None
        state = None
        for e in self.events:
            if e.revision > index:
                break
            state = e.state
        return state


def describe(removal: Removal) -> str:
    """A few words on what a disappearance looks like, for the reports."""
    if removal.reason == "dtype-handled":
        return f"{', '.join(removal.dtypes)} handled now"
    return {"arm-removed": "panicking arm removed, the match remains",
            "file-gone": "its file was removed",
            "function-gone": "its function was removed",
            "match-gone": "its match was rewritten"}.get(removal.reason, removal.reason)


@dataclass(frozen=True, slots=True)
class Flip:
    revision: int
    crate: str
    operation: str
    dtype: str
    enum: str
    before: str  # the status coverage shows (diff.shown): handled, panics, partial, n/a, unknown, blank, a reason
    after: str
    kind: str  # FLIP_KINDS
    sites: tuple[str, ...] = ()  # the record ids behind the cell at this revision, when it panics there


@dataclass
class Revision:
    index: int
    label: str
    sha: str
    date: str
    is_tag: bool
    records: int
    counts: dict[str, int]  # per category
    backends: dict[str, dict[str, int]]  # crate -> category -> records
    files_scanned: int
    parsed: int  # blobs read and parsed afresh (the rest came from the cache)
    cached: bool  # served whole from the results cache
    seconds: float
    dependencies: list[dict] = field(default_factory=list)  # Analysed.dependencies


@dataclass
class History:
    repo: str
    revisions: list[Revision]
    skipped: list[Skipped]
    lineages: list[Lineage]
    flips: list[Flip]
    left_out: list[str] = field(default_factory=list)  # leading revisions with no record
    seconds: float = 0.0

    def label(self, index: int | None) -> str | None:
        return None if index is None else self.revisions[index].label

    def events_at(self, index: int) -> dict[str, list[Event]]:
        """The events of one revision by kind (added, changed, moved, removed), by backend then
        file and line. The first revision has none: what it holds was there before it."""
        return self._events.get(index) or {k: [] for k in EVENT_KINDS}

    @cached_property
    def _events(self) -> dict[int, dict[str, list[Event]]]:
        out: dict[int, dict[str, list[Event]]] = {}
        for lineage in self.lineages:
            for e in lineage.events:
                if e.revision > 0:
                    out.setdefault(e.revision, {k: [] for k in EVENT_KINDS})[e.kind].append(e)
        for kinds in out.values():
            for events in kinds.values():
                events.sort(key=lambda e: (e.state.crate, e.state.file, e.state.line))
        return out

    def flips_at(self, index: int) -> list[Flip]:
        return self._flips.get(index, [])

    @cached_property
    def _flips(self) -> dict[int, list[Flip]]:
        out: dict[int, list[Flip]] = {}
        for f in self.flips:
            out.setdefault(f.revision, []).append(f)
        return out

    def sites_of(self, flip: Flip) -> list[Lineage]:
        """The lineages whose record, at the flip's revision, is behind the flip's cell there (the
        arms behind a regression)."""
        found = []
        for rid in flip.sites:
            for lineage in self._by_id.get(rid, []):
                state = lineage.state_at(flip.revision)
                if state is not None and state.id == rid and lineage not in found:
                    found.append(lineage)
        return found

    @cached_property
    def _by_id(self) -> dict[str, list[Lineage]]:
        out: dict[str, list[Lineage]] = {}
        for lineage in self.lineages:
            for rid in lineage.ids:
                out.setdefault(rid, []).append(lineage)
        return out

    def regressions(self) -> list[Flip]:
        return [f for f in self.flips if f.kind == "regressed"]

    def cells(self) -> list[dict]:
        """Every cell that flipped at least once: each of its changes, the revision where it
        turned handled (unless it panicked again later) and the ones where it regressed."""
        by_key: dict[tuple[str, str, str], list[Flip]] = {}
        for f in self.flips:
            by_key.setdefault((f.crate, f.operation, f.dtype), []).append(f)
        out = []
        for (crate, op, dtype), flips in sorted(by_key.items()):
            fixed = [f for f in flips if f.kind == "fixed"]
            out.append({"crate": crate, "operation": op, "dtype": dtype, "enum": flips[0].enum,
                        "flips": flips,
                        "fixedIn": self.label(fixed[-1].revision) if fixed and not _panics_after(flips, fixed[-1])
                        else None,
                        "regressedIn": [self.label(f.revision) for f in flips if f.kind == "regressed"]})
        return out

    def summary(self) -> dict[str, int]:
        removed = [ln for ln in self.lineages if ln.removal is not None]
        return {
            "revisions": len(self.revisions), "skipped": len(self.skipped), "lineages": len(self.lineages),
            "open": sum(1 for ln in self.lineages if ln.removed is None),
            **{k: sum(1 for ln in removed if ln.removal and ln.removal.kind == k) for k in REMOVAL_KINDS},
            "changes": sum(1 for ln in self.lineages for e in ln.events if e.kind == "changed"),
            "cellsFixed": sum(1 for f in self.flips if f.kind == "fixed"),
            "regressions": sum(1 for f in self.flips if f.kind == "regressed"),
        }


def _panics_after(flips: list[Flip], fixed: Flip) -> bool:
    return any(f.revision > fixed.revision and rank(f.after) > 0 for f in flips)


@dataclass
class Analysed:
    """The records of one revision, and how they were had: files scanned, blobs parsed afresh,
    whether the results cache served them whole."""

    lines: list[RecordLine]
    files_scanned: int
    parsed: int
    cached: bool
    # With dependencies: each one's repository, commit and how the revision's Cargo.lock pins it.
    dependencies: list[dict] = field(default_factory=list)
    # The cells coverage shows at the revision (history/cells.py Cells); None: built from the
    # records (a dependency's, as `diff --with-dependencies` compares them).
    cells: object = None

