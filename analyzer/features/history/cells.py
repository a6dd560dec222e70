"""What a history keeps of one revision's coverage: the cells `coverage` shows there with their
status (diff.shown, the definition `diff` flips by), the column order, each column's enum, and the
records behind each panicking cell. The whole matrix (dispatches, evidence, claims, settings) is
dropped once this is taken from it, so a history holds one small table per revision in flight.

A revision's table is built from the operations matrix `coverage --repo` shows
(analyzer/pipeline/coverage.py: served from the results cache when `coverage` or `diff` kept it,
else built from an extraction with the code facts, claims left out, and not kept), and is kept in
the results cache itself, so a repeated history neither extracts nor builds a matrix."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analyzer.features.coverage import model as coverage
from analyzer.features.diff import rank, shown
from analyzer.pipeline import results_cache

if TYPE_CHECKING:
    from analyzer.features.coverage.model import Matrix
    from analyzer.source.repository import GitRepository

Key = tuple[str, str, str]
# Results-cache rows (keyed by the code that made them; the cache's tag holds the tool version and
# the rules hash): one revision's shown cells.
_KIND = "history-cells"


@dataclass(frozen=True, slots=True)
class Cells:
    shown: dict[Key, str]  # every cell coverage shows -> its status (or a panicking cell's reason)
    dtypes: tuple[str, ...]  # the columns, in coverage's order
    enums: dict[str, str]  # column -> its enum
    sites: dict[Key, tuple[str, ...]]  # each cell that panics or partly panics -> the record ids behind it

    @classmethod
    def of(cls, matrix: Matrix) -> Cells:
        cells = shown(matrix)
        sites: dict[Key, tuple[str, ...]] = {}
        for key, status in cells.items():
            cell = matrix.cells.get(key) if rank(status) else None
            if cell is not None:
                ids = [e.site.record_id for e in cell.evidence if e.status == coverage.PANICS]
                sites[key] = tuple(dict.fromkeys(ids or [s.record_id for s in cell.sites[:1]]))
        return cls(cells, tuple(matrix.dtypes), {d: g.enum for g in matrix.groups for d in g.dtypes}, sites)

    def enum_of(self, dtype: str) -> str:
        return self.enums.get(dtype, "")

    def row(self) -> dict:
        """Nested by backend and operation, so the row's decoder reads each name once per row
        (JSON object keys are shared) rather than once per cell."""
        return {"shown": _nested(self.shown), "dtypes": list(self.dtypes), "enums": self.enums,
                "sites": _nested({k: list(ids) for k, ids in self.sites.items()})}

    @classmethod
    def from_row(cls, row: dict) -> Cells:
        """The table kept in a results-cache row; ValueError for a row of another shape."""
        statuses: dict[str, str] = {}  # one object per distinct status, not one per cell
        try:
            cells = {k: statuses.setdefault(s, s) for k, s in _flat(row["shown"], str)}
            sites = {k: tuple(ids) for k, ids in _flat(row["sites"], list)}
            enums = {str(k): str(v) for k, v in row["enums"].items()}
            dtypes = tuple(str(d) for d in row["dtypes"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ValueError("not a table of shown cells") from e
        if not all(isinstance(i, str) for ids in sites.values() for i in ids):
            raise ValueError("not a table of shown cells")
        return cls(cells, dtypes, enums, sites)


def _nested(flat: Mapping[Key, object]) -> dict[str, dict[str, dict[str, object]]]:
    out: dict[str, dict[str, dict[str, object]]] = {}
    for (crate, op, dtype), value in flat.items():
        out.setdefault(crate, {}).setdefault(op, {})[dtype] = value
    return out


def _flat(nested: dict, kind: type):
    """(crate, operation, dtype), value for each value of type `kind` in a `_nested` mapping;
    TypeError for anything else."""
    for crate, ops in nested.items():
        for op, cells in ops.items():
            for dtype, value in cells.items():
                if not isinstance(value, kind):
                    raise TypeError(f"a cell value of type {type(value).__name__}")
                yield (crate, op, dtype), value


def key(git_repo: GitRepository, sha: str) -> str:
    from analyzer.profiles import current

    return results_cache.key(_KIND, current().name, git_repo.name, sha)


def kept(cache, row_key: str) -> Cells | None:
    row = cache.get_result(row_key) if cache is not None else None
    if row is None:
        return None
    try:
        return Cells.from_row(row)
    except ValueError:
        return None  # a row of another shape: built again and overwritten


def kept_matrix(git_repo: GitRepository, sha: str, cache,
                warn: Callable[[str], None] | None = None) -> Matrix | None:
    """The operations matrix of `sha` that `coverage` or `diff` kept in the results cache, or None
    (a row that fails its checks is dropped and said through `warn`, as coverage says it)."""
    from analyzer.pipeline import coverage as audit
    from analyzer.profiles import current

    matrix_key = audit.matrix_key(current().name, git_repo.name, sha, collapse=True)
    return audit.kept_matrix(cache, matrix_key, git_repo.name, sha, current(), warn=warn)[0]


def built(git_repo: GitRepository, ex) -> Cells:
    """The table of `ex` (an extraction made with `code=True`): its operations matrix built
    without the claims view (no shown cell depends on it) and dropped once the table is taken.
    The matrix is not kept: encoding it whole costs about as much memory again as building it."""
    from analyzer.pipeline import coverage as audit

    return Cells.of(audit.tree_matrix(ex, lambda paths: git_repo.read_files(ex.sha, paths), claims=False))


def keep(cache, row_key: str, cells: Cells) -> Cells:
    if cache is not None:
        cache.put_result(row_key, cells.row())
    return cells
