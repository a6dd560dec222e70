"""What every coverage format folds, decided from the matrix alone:

- a backend **delegates** when no dtype dispatch of its own rejects a dtype its operations take:
  its only panicking cells are stubs (`not implemented`) or dtypes it cannot hold, so a wrapper
  (autodiff, fusion, a router) that hands each operation to the backend it wraps gets one line,
  not a table of blank cells;
- the **columns** a format shows: an enum group no shown backend has cells in is left out, and a
  variant whose label another group also uses (`BoolDType::U8` beside `DType`'s `U8`) keeps its
  enum in lists that mix the groups;
- the **gaps** of an operation side by side: dtypes where one backend panics and another does
  not, comparing like with like: a dtype a backend cannot hold, does not take, or says through its
  own `dtype_usage` it does not support takes no side.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.core.wording import plural

from analyzer.features.coverage.model import (
    CANNOT_HOLD, HANDLED, NA, NOT_IMPLEMENTED, PANICS, PARTIAL, UNKNOWN, Group, Matrix, Site, base_variant, label,
)

STUB_REASONS = (NOT_IMPLEMENTED, CANNOT_HOLD)


@dataclass
class Folded:
    """A delegating backend's one line: its size, its cell counts and its own panics."""

    crate: str
    operations: int
    counts: dict[str, int]
    stubs: list[tuple[str, Site]] = field(default_factory=list)  # (operation, its not-implemented site)
    cannot_hold: list[str] = field(default_factory=list)  # dtypes

    def summary(self) -> str:
        panics = self.counts[PANICS] + self.counts[PARTIAL]
        return (f"{plural(self.operations, 'operation')}, delegates to the backend it wraps "
                f"(no dtype dispatch of its own); cells: {self.counts[HANDLED]} handled, {panics} panic")


def delegating(matrix: Matrix) -> dict[str, Folded]:
    """The delegating backends of an operations view, each folded (one pass over the cells). A
    choice of operations (--op) folds nothing: a few operations say nothing of the backend, and
    they are shown side by side."""
    if not matrix.by_operation or matrix.focused:
        return {}
    own: set[str] = set()
    for cell in matrix.cells.values():
        if cell.status in (PANICS, PARTIAL, UNKNOWN) and cell.reason not in STUB_REASONS:
            own.add(cell.crate)
    out = {}
    for crate in matrix.crates():
        if crate in own:
            continue
        stubs = sorted((op, site) for (c, op), site in matrix.unimplemented.items() if c == crate)
        out[crate] = Folded(crate, len(matrix.operations(crate)), matrix.counts(crate), stubs,
                            [lim.dtype for lim in matrix.limits_of(crate)])
    return out


def nothing_to_show(matrix: Matrix) -> str:
    """What an empty matrix says: no operation matches the patterns that chose them, or no site."""
    if matrix.focused:
        return f"No operation matches --op {' --op '.join(matrix.patterns)}." if matrix.patterns else \
            "No operation matches the chosen operations."
    return "No dtype-dispatch sites: nothing to show."


def stub_line(f: Folded, text, where) -> str:
    """A folded backend's line: its summary, `; not implemented: a (where), b; cannot hold X.`, the
    prose through the format's `text` escape, each stub through `where(operation, site)`."""
    out = text(f.summary())
    if f.stubs:
        out += "; not implemented: " + ", ".join(where(op, site) for op, site in f.stubs)
    if f.cannot_hold:
        out += "; cannot hold " + text(", ".join(label(d) for d in f.cannot_hold))
    return out + "."


def shown_groups(matrix: Matrix, crates: list[str]) -> list[Group]:
    """The enum groups some of `crates` has a table in."""
    used = {g.enum for crate in crates for g in matrix.groups_of(crate)}
    return [g for g in matrix.groups if g.enum in used]


def column_label(dtype: str, groups: list[Group]) -> str:
    """A column's label in a list that mixes groups: the bare label, or `Enum::Variant` when
    another group has a column of that label."""
    mine = label(dtype)
    clashes = sum(1 for g in groups for d in g.dtypes if label(d) == mine)
    return dtype if clashes > 1 and "::" in dtype.split("(", 1)[0] else mine


SIDES = {PANICS: "panics", PARTIAL: "partly panics", HANDLED: "does not"}


def side(matrix: Matrix, crate: str, op: str, dtype: str, unadvertised: set[tuple[str, str]]) -> str | None:
    """A cell's side in a comparison: panics, partial, or handled (a blank cell of the operations
    view, no panic found, counts as handled); None when it takes none: n/a, unknown, a dtype the
    backend cannot hold or says it does not support (its `dtype_usage`), or a blank of the matches
    view (no dispatch there)."""
    cell = matrix.get(crate, op, dtype)
    if (crate, dtype) in unadvertised:
        return None
    if cell is None:
        return HANDLED if matrix.by_operation else None
    if cell.status in (NA, UNKNOWN) or cell.reason == CANNOT_HOLD:
        return None
    return cell.status


def unadvertised(matrix: Matrix) -> set[tuple[str, str]]:
    """(backend, column) pairs the backend's own claims say it does not support: every claim on
    the column (its payload variants', `Bool(Native)`, too) says no."""
    said: dict[tuple[str, str], set] = {}
    for cl in matrix.claims:
        said.setdefault((cl.crate, base_variant(cl.dtype)), set()).add(cl.advertised)
    return {key for key, answers in said.items() if answers == {False}}


def gaps(matrix: Matrix, op: str, crates: list[str], group: Group,
         unclaimed: set[tuple[str, str]] | None = None) -> dict[str, dict[str, list[str]]]:
    """The dtypes the backends differ on for one operation: dtype -> side -> the backends there."""
    skip = unadvertised(matrix) if unclaimed is None else unclaimed
    out = {}
    for dtype in group.dtypes:
        sides: dict[str, list[str]] = {}
        for crate in crates:
            s = side(matrix, crate, op, dtype, skip)
            if s is not None:
                sides.setdefault(s, []).append(crate)
        if len(sides) > 1:
            out[dtype] = {s: sides[s] for s in SIDES if s in sides}
    return out


def gap_text(differ: dict[str, dict[str, list[str]]]) -> str:
    """`F16: burn-x panics, burn-y does not; BF16: ...` (one clause per dtype)."""
    return "; ".join(f"{label(d)}: " + ", ".join(f"{', '.join(crates)} {SIDES[s]}" for s, crates in sides.items())
                     for d, sides in differ.items())
