"""The runtimes view of the coverage matrix (a target whose profile has `[runtimes]`, cubecl):
rows are the runtimes and compiler dialects the profile names (a row is the code under its path
regex: `cubecl-wgpu`, the C++ compiler's Metal dialect and its shared code), columns the element
types of the profile's element enums, then its features. Built from records alone, through the
matches view, so each row's table lists its dispatches by operation; `runtime_cells` folds a row
into one cell per column.

- An element-type cell is what the row's dtype-dispatch matches on that enum say of it
  (handled, panics, partial), as in the matches view, but for the matches about a feature (an
  mma helper refusing int elements): those are the feature's cell alone.
- A feature cell panics when a record of the row's code (of any category) is about the feature:
  its file, function, arm pattern or message matches the feature's regex. No record says a
  feature is handled, so a feature cell is never `handled`: panics, or blank.

From a repository built on such a target (burn on cubecl), `runtime_limits` gives, per backend
crate the profile's `runtimes.backends` names, the panicking cells of the runtimes it runs on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from analyzer.decisions.categories import DTYPE
from analyzer.features.coverage.matches import build
from analyzer.features.coverage.model import (
    PANICS, PARTIAL, Cell, Dispatch, Evidence, Group, Matrix, Site, fold, primary_enum, unique_sites,
)
from analyzer.profiles import Profile, current
from analyzer.records.model import RecordLine

VIEW = "runtimes"
FEATURE = "feature"  # the enum name of the feature columns: `feature::atomics`


@dataclass(frozen=True)
class RuntimeCell:
    """One runtime row folded over its operations: the column's status and the sites behind it."""

    runtime: str
    dtype: str
    enum: str
    status: str
    sites: tuple[Site, ...]


@dataclass(frozen=True)
class RuntimeLimit:
    """A runtime's panicking cell, shown beside a backend crate that runs on that runtime."""

    crate: str  # the backend crate of the analysed repository
    repo: str  # the dependency's repository
    runtime: str
    dtype: str
    status: str  # panics | partial
    sites: tuple[Site, ...]


def rows_of(path: str, profile: Profile | None = None) -> list[str]:
    """The runtime rows whose code holds `path` (shared code belongs to several)."""
    return [name for name, rx in (profile or current()).runtime_rows if rx.search(path)]


def build_runtimes(lines: Iterable[RecordLine], collapse: bool = False) -> Matrix:
    """The runtimes matrix of a target's records (see the module's docstring)."""
    profile = current()
    enums = set(profile.runtimes.enums)
    placed = [(row, ln) for ln in lines if ln.analysis is not None for row in rows_of(ln.record.filePath, profile)]
    # A dispatch about a feature (an mma helper refusing int elements) is that feature's limit,
    # met by a user who reaches the feature: it is the feature's cell, not a limit of the element
    # type on the whole runtime.
    dispatching = [_in_row(ln, row) for row, ln in placed
                   if ln.facts.category == DTYPE and (ln.facts.enum or primary_enum()) in enums
                   and not _about_a_feature(ln, profile)]
    matrix = build(dispatching, collapse)
    features = _feature_cells(placed, profile, matrix.dispatches)
    if features:
        names = [f"{FEATURE}::{name}" for name, _ in profile.runtime_features]
        used = {c.dtype for c in features.values()}
        matrix.groups.append(Group(FEATURE, [n for n in names if n in used]))
        matrix.dtypes = [d for g in matrix.groups for d in g.dtypes]
        matrix.cells.update(features)
        matrix.dispatches.sort(key=lambda d: (d.crate, d.operation, d.path, d.line))
    if placed and not matrix.repo:
        first = placed[0][1].record
        matrix.repo, matrix.sha = first.repo, first.analyzedSha
    matrix.view = VIEW
    return matrix


def _feature_text(ln: RecordLine) -> str:
    r, a = ln.record, ln.facts
    return "\n".join((r.filePath, a.function, a.pattern, r.errorMessage))


def _about_a_feature(ln: RecordLine, profile: Profile) -> bool:
    text = _feature_text(ln)
    return any(rx.search(text) for _, rx in profile.runtime_features)


def _in_row(ln: RecordLine, row: str) -> RecordLine:
    """The record as the row's: its crate is the row, so each row is a backend of the view."""
    assert ln.analysis is not None
    return ln.model_copy(update={"analysis": ln.analysis.model_copy(update={"crate": row})})


def _feature_cells(placed: list[tuple[str, RecordLine]], profile: Profile,
                   dispatches: list[Dispatch]) -> dict[tuple[str, str, str], Cell]:
    """The feature cells, and (appended to `dispatches`) each record behind one as a match of its
    row that panics on the features it is about, so the views link its source line."""
    cells: dict[tuple[str, str, str], Cell] = {}
    for row, ln in placed:
        r, a = ln.record, ln.facts
        text = _feature_text(ln)
        site = Site(r.id, r.filePath, r.lineNumber, a.function, r.githubUrl, a.pattern, r.errorMessage)
        about = [f"{FEATURE}::{name}" for name, rx in profile.runtime_features if rx.search(text)]
        for column in about:
            key = (row, a.operation or a.function, column)
            cell = cells.setdefault(key, Cell(*key, status=PANICS, enum=FEATURE))
            cell.sites.append(site)
            cell.evidence.append(Evidence(column, PANICS, site))
        if about:
            dispatches.append(Dispatch(row, a.operation or a.function, a.function, r.filePath, FEATURE, a.scrutinee,
                                       a.context, {c: PANICS for c in about}, [], [site], {r.id: about}))
    return cells


def runtime_cells(matrix: Matrix) -> list[RuntimeCell]:
    """Each row's cells folded over its operations, per column (in column order): the status they
    share, else partial; panicking sites first."""
    by_key: dict[tuple[str, str], list[Cell]] = {}
    for cell in matrix.cells.values():
        by_key.setdefault((cell.crate, cell.dtype), []).append(cell)
    position = {d: i for i, d in enumerate(matrix.dtypes)}
    out = []
    for (runtime, dtype), cells in sorted(by_key.items(), key=lambda kv: (kv[0][0], position.get(kv[0][1], 0))):
        sites = unique_sites([s for c in cells if c.status != "handled" for s in c.sites]
                             + [s for c in cells for s in c.sites])
        out.append(RuntimeCell(runtime, dtype, cells[0].enum, fold([c.status for c in cells]), tuple(sites)))
    return out


def runtime_limits(crates: Iterable[str], backends: tuple[tuple[str, str], ...], repo: str,
                   cells: list[RuntimeCell]) -> list[RuntimeLimit]:
    """The panicking runtime cells of a dependency, for each of `crates` that runs on them
    (`backends`: a crate, a regex over the dependency's row names)."""
    import re

    out = []
    for crate in crates:
        rx = next((re.compile(r) for c, r in backends if c == crate), None)
        if rx is None:
            continue
        out += [RuntimeLimit(crate, repo, c.runtime, c.dtype, c.status, c.sites) for c in cells
                if c.status in (PANICS, PARTIAL) and rx.search(c.runtime)]
    return out
