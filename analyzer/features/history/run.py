"""Running a history: each planned revision analysed in turn (or served from the results cache)
and folded into the history."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from analyzer.core.errors import UserError
from analyzer.features.history.follow import Builder
from analyzer.features.history.model import Analysed, History, Revision, Skipped
from analyzer.features.history.revisions import Plan, Planned
from analyzer.pipeline import results_cache

if TYPE_CHECKING:
    from analyzer.source.repository import GitRepository

# Results-cache rows (analyzer/pipeline/results_cache.py: keyed by the code that made them; the
# cache's tag holds the tool version and the rules hash): one revision's records.
_RESULT_KIND = "history"


def records_at(git_repo: GitRepository, sha: str, cache=None, jobs: int | None = None,
               progress: Callable[[str], None] | None = None) -> Analysed:
    """The records of one revision: one results-cache row when this revision was analysed
    before with the same rules, else an extraction that parses only blobs the cache lacks."""
    from analyzer.records.model import RecordLine

    key = results_cache.key(_RESULT_KIND, git_repo.name, sha)
    hit = cache.get_result(key) if cache is not None else None
    if hit is not None:
        try:
            lines = [RecordLine.model_validate_json(raw) for raw in hit["records"]]
            return Analysed(lines, int(hit["filesScanned"]), 0, True)
        except (KeyError, TypeError, ValueError):
            pass  # a row of another shape: analyse again and overwrite it
    from analyzer.pipeline.extract import extract
    from analyzer.profiles import current
    from analyzer.profiles.run import Run

    ex = extract(git_repo, sha, Run(current()), cache=cache, jobs=jobs, progress=progress)
    _keep_records(cache, git_repo, sha, ex)
    return Analysed(ex.lines, ex.files_scanned, ex.cache_misses, False)


def revision_at(git_repo: GitRepository, sha: str, cache=None, jobs: int | None = None,
                progress: Callable[[str], None] | None = None,
                warn: Callable[[str], None] | None = None) -> Analysed:
    """The records of one revision and the cells coverage shows there (history/cells.py): each
    one results-cache row when kept, else from one extraction (with the code facts when the
    operations matrix has to be built), parsing only the blobs the cache lacks. A kept matrix
    that fails its checks is said through `warn` and the cells are built again."""
    from analyzer.features.history import cells as shown_cells

    cells_key = shown_cells.key(git_repo, sha)
    table = shown_cells.kept(cache, cells_key)
    matrix = shown_cells.kept_matrix(git_repo, sha, cache, warn=warn) if table is None else None
    if table is None and matrix is not None:
        table = shown_cells.keep(cache, cells_key, shown_cells.Cells.of(matrix))
    if table is not None:
        analysed = records_at(git_repo, sha, cache=cache, jobs=jobs, progress=progress)
        analysed.cells = table
        return analysed
    from analyzer.pipeline.extract import extract
    from analyzer.profiles import current
    from analyzer.profiles.run import Run

    ex = extract(git_repo, sha, Run(current()), cache=cache, jobs=jobs, progress=progress, code=True)
    _keep_records(cache, git_repo, sha, ex)
    table = shown_cells.keep(cache, cells_key, shown_cells.built(git_repo, ex))
    return Analysed(ex.lines, ex.files_scanned, ex.cache_misses, False, cells=table)


def _keep_records(cache, git_repo: GitRepository, sha: str, ex) -> None:
    if cache is not None:
        cache.put_result(results_cache.key(_RESULT_KIND, git_repo.name, sha),
                         {"records": [ln.to_json_line() for ln in ex.lines], "filesScanned": ex.files_scanned})


def build_history(git_repo: GitRepository, the_plan: Plan, *, cache=None, jobs: int | None = None,
                  on_start: Callable[[int, int, Planned], None] | None = None,
                  on_status: Callable[[str], None] | None = None,
                  on_done: Callable[[Revision | None, Planned, Analysed], None] | None = None,
                  on_skip: Callable[[Skipped], None] | None = None,
                  debug: bool = False, extend: Callable[[str, Analysed], Analysed] | None = None,
                  repos: dict | None = None, warn: Callable[[str], None] | None = None) -> History:
    """Analyse every planned revision in turn and fold it into the history. A revision that
    does not resolve or cannot be analysed is reported through `on_skip` and left out; with no
    revision left, a UserError. `extend` adds to a revision's records (its dependencies' at the
    revisions it pins) before they are folded in; `repos` are those dependencies' repositories by
    name, where their removals are classified. `warn` says a results-cache row that was not used."""
    t0 = time.perf_counter()
    shas = [p.sha for p in the_plan.revisions if p.sha is not None]
    builder = Builder(git_repo, the_plan.trim_empty_start, git_repo.commit_dates(shas), cache, repos)
    skipped: list[Skipped] = []
    total = len(the_plan.revisions)
    for i, planned in enumerate(the_plan.revisions):
        if on_start:
            on_start(i, total, planned)
        if planned.sha is None:
            skip = Skipped(planned.label, f"unknown revision '{planned.label}'")
        else:
            t1 = time.perf_counter()
            try:
                analysed = revision_at(git_repo, planned.sha, cache=cache, jobs=jobs, progress=on_status, warn=warn)
                if extend is not None:
                    cells = analysed.cells  # this repository's; a dependency's come from its records
                    analysed = extend(planned.sha, analysed)
                    analysed.cells = cells
            except (UserError, subprocess.CalledProcessError, OSError, UnicodeDecodeError) as e:
                if debug:
                    raise
                skip = Skipped(planned.label, _reason(e))
            else:
                revision = builder.add(planned, analysed, time.perf_counter() - t1)
                if on_done:
                    on_done(revision, planned, analysed)
                continue
        skipped.append(skip)
        if on_skip:
            on_skip(skip)
    history = builder.result(skipped, time.perf_counter() - t0)
    if not history.revisions:
        tried = ", ".join(p.label for p in the_plan.revisions[:5]) + (" ..." if total > 5 else "")
        why = "none of them could be analysed" if skipped else "none of them has a record"
        raise UserError(f"no usable revision for a history ({tried or 'none planned'}): {why}; give "
                        f"revisions that exist with --revs, or other --from/--to/--tags")
    return history


def _reason(error: BaseException) -> str:
    if isinstance(error, subprocess.CalledProcessError):
        err = error.stderr.decode("utf-8", "replace") if isinstance(error.stderr, bytes) else str(error.stderr or "")
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        return f"git failed: {lines[-1] if lines else error.returncode}"
    return " ".join(str(error).split()) or type(error).__name__
