"""What a history keeps of one revision's coverage: the cells `coverage` shows there with their
status (diff.shown, the definition `diff` flips by), the column order, each column's enum, and the
records behind each panicking cell. The whole matrix (dispatches, evidence, claims, settings) is
dropped once this is taken from it, so a history holds one small table per revision in flight.

A revision's table is built from the operations matrix `coverage --repo` shows
(analyzer/pipeline/coverage.py: served from the results cache when `coverage`, `diff` or an
earlier history kept it, else built from an extraction with the code facts, then kept), and is
kept in the results cache itself, so a repeated history neither extracts nor decodes a matrix."""

from __future__ import annotations

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
        return {"shown": [[*k, s] for k, s in self.shown.items()], "dtypes": list(self.dtypes),
                "enums": self.enums, "sites": [[*k, list(ids)] for k, ids in self.sites.items()]}

    @classmethod
    def from_row(cls, row: dict) -> Cells:
        """The table kept in a results-cache row; ValueError for a row of another shape."""
        try:
            cells = {(str(c), str(o), str(d)): str(s) for c, o, d, s in row["shown"]}
            sites = {(str(c), str(o), str(d)): tuple(str(i) for i in ids) for c, o, d, ids in row["sites"]}
            enums = {str(k): str(v) for k, v in row["enums"].items()}
            dtypes = tuple(str(d) for d in row["dtypes"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ValueError("not a table of shown cells") from e
        return cls(cells, dtypes, enums, sites)


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


def kept_matrix(git_repo: GitRepository, sha: str, cache) -> tuple[Matrix | None, str]:
    """(the operations matrix of `sha` kept in the results cache or None, the key it is kept under)."""
    from analyzer.pipeline import coverage as audit
    from analyzer.profiles import current

    matrix_key = audit.matrix_key(current().name, git_repo.name, sha, collapse=True)
    return audit.kept_matrix(cache, matrix_key, git_repo.name, sha)[0], matrix_key


def build_matrix(git_repo: GitRepository, sha: str, cache, ex, matrix_key: str) -> Matrix:
    """The operations matrix of `ex` (an extraction of `sha` made with `code=True`), kept for
    `coverage`, `diff` and the next history."""
    from analyzer.pipeline import coverage as audit

    matrix = audit.tree_matrix(ex, lambda paths: git_repo.read_files(sha, paths))
    audit.keep_matrix(cache, matrix_key, matrix)
    return matrix


def keep(cache, row_key: str, cells: Cells) -> Cells:
    if cache is not None:
        cache.put_result(row_key, cells.row())
    return cells
