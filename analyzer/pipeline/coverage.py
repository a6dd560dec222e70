"""The coverage audit of one revision, as `coverage --repo`, `diff` and the results cache share it:
`tree_matrix` builds the operations matrix of an extraction (with the claims view), and
`kept_matrix` / `keep_matrix` serve and keep that matrix whole in the results cache
(analyzer/pipeline/results_cache.py), so a repeated audit of one revision with the same rules and
options neither extracts nor builds; every format renders from the matrix served.

A kept row is never trusted blindly: it is validated against the matrix's own dataclasses
(pydantic), must be of the repository and commit asked for, and every link in it must point at
that commit on GitHub (a row must never put in a page what the builders would not write). A row
that fails is dropped with a warning (`kept_matrix` words it, for `coverage` and `diff` alike) and
the matrix is built again.
"""

from __future__ import annotations

import dataclasses
import gc
import typing
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from analyzer.pipeline import results_cache

if TYPE_CHECKING:
    from analyzer.features.coverage.model import Matrix

_KIND = "coverage"


def tree_matrix(ex, read_files, collapse: bool = True, claims: bool = True) -> Matrix:
    """The operations matrix `coverage --repo` shows for an extraction made with `code=True`;
    `read_files(paths)` -> {path: bytes} at the extraction's commit (the claims view reads the
    backends' `dtype_usage`). Without `claims`, the cells alone (what `diff.shown` reads)."""
    from analyzer.features.coverage.claims import build_claims
    from analyzer.features.coverage.operations import build_operations

    matrix = build_operations(ex, collapse=collapse, read_files=read_files)
    if claims:
        matrix.claims = build_claims(matrix, ex.code, read_files)
    matrix.repo = matrix.repo or ex.repo
    matrix.sha = matrix.sha or ex.sha
    return matrix


def matrix_key(target: str, repo_name: str, sha: str, collapse: bool) -> str:
    """The row of one audit: the target profile, repository and commit, and the one option that
    changes the model (`--expand`); the cache's tag holds the tool version and the rules hash."""
    return results_cache.key(_KIND, target, repo_name, sha, int(collapse))


# Matrix fields kept in another shape than their own: maps keyed by tuples become lists (the
# key is in each value, or added to it), and the untyped lists get their element types.
def _overrides() -> dict[str, object]:
    from analyzer.features.coverage.claims import Claim
    from analyzer.features.coverage.model import Cell, Operation, Site
    from analyzer.features.coverage.settings import Setting

    return {"cells": list[Cell], "ops": list[Operation], "unknown_reasons": list[tuple[str, str, str, list[str]]],
            "unimplemented": list[tuple[str, str, Site]], "settings": list[Setting], "claims": list[Claim]}


@cache
def _adapter():
    """A pydantic adapter of a dataclass with every field of Matrix (read from Matrix itself, so
    a field added later is kept without anyone listing it)."""
    import pydantic

    from analyzer.features.coverage import model

    hints = typing.get_type_hints(model.Matrix, vars(model))
    overrides = _overrides()
    kept = dataclasses.make_dataclass("KeptMatrix", [(f.name, overrides.get(f.name, hints[f.name]))
                                                     for f in dataclasses.fields(model.Matrix)])
    return pydantic.TypeAdapter(kept)


def _encode(matrix: Matrix) -> dict:
    """The row: the matrix as one JSON text (pydantic writes and reads it in its own compiled
    code, which a walk over the matrix's objects in Python would take many times longer to)."""
    values = {f.name: getattr(matrix, f.name) for f in dataclasses.fields(matrix)}
    values.update(cells=list(matrix.cells.values()), ops=list(matrix.ops.values()),
                  unknown_reasons=[(*k, v) for k, v in matrix.unknown_reasons.items()],
                  unimplemented=[(*k, s) for k, s in matrix.unimplemented.items()])
    adapter = _adapter()
    return {"matrix": adapter.dump_json(adapter.validate_python(values, from_attributes=True)).decode()}


def _decode(row: dict) -> Matrix:
    from analyzer.features.coverage.model import Matrix

    # Validating builds one tree of objects and frees none; the collector, woken every few
    # hundred allocations, would walk that growing tree again and again for cycles it cannot find.
    enabled = gc.isenabled()
    gc.disable()
    try:
        kept = _adapter().validate_json(row["matrix"])
    finally:
        if enabled:
            gc.enable()
    values = {f.name: getattr(kept, f.name) for f in dataclasses.fields(kept)}
    values.update(cells={c.key: c for c in kept.cells}, ops={(o.crate, o.name): o for o in kept.ops},
                  unknown_reasons={(c, o, d): v for c, o, d, v in kept.unknown_reasons},
                  unimplemented={(c, o): s for c, o, s in kept.unimplemented})
    return Matrix(**values)


def _links_pinned(matrix: Matrix, repo: str, sha: str) -> bool:
    """Every link of the matrix is an https link to the commit's files on GitHub (or empty)."""
    from analyzer.core.safe import https_url

    prefix = f"https://github.com/{repo}/blob/{sha}/"
    sites = [s for c in matrix.cells.values() for s in (*c.sites, *(e.site for e in c.evidence))]
    sites += [s for d in (*matrix.dispatches, *matrix.helpers) for s in d.sites]
    sites += list(matrix.unimplemented.values())
    sites += [s for lim in matrix.limits for _, s in lim.rejected_by]
    sites += [s for st in matrix.settings for s in st.sites]
    urls = {s.url for s in sites} | {o.url for o in matrix.ops.values()}
    return all(not url or (https_url(url) == url and url.startswith(prefix)) for url in urls)


def kept_matrix(cache, key: str, repo: str, sha: str,
                warn: Callable[[str], None] | None = None) -> tuple[Matrix | None, str | None]:
    """(the matrix kept under `key`, None) on a hit; (None, why) for a row that does not pass the
    checks (dropped, so the next run makes it again, and said through `warn`: the caller builds
    the matrix again); (None, None) when there is none."""
    row = cache.get_result(key) if cache is not None else None
    if row is None:
        return None, None
    import pydantic

    try:
        matrix = _decode(row)
    except (pydantic.ValidationError, TypeError, ValueError, KeyError, AttributeError, RecursionError):
        why = "it does not hold a coverage matrix"
    else:
        if matrix.repo != repo or matrix.sha != sha:
            why = f"it is of another revision than {repo}@{sha[:12]}"
        elif not _links_pinned(matrix, repo, sha):
            why = f"it links outside {repo}@{sha[:12]}"
        else:
            return matrix, None
    cache.drop_result(key)
    if warn is not None:
        from analyzer.core.safe import terminal_text
        warn(terminal_text(f"warning: the results cache's coverage of {repo}@{sha[:12]} was not used: {why}; "
                           "it was built again", one_line=True))
    return None, why


def keep_matrix(cache, key: str, matrix: Matrix) -> None:
    if cache is not None:
        cache.put_result(key, _encode(matrix))


def build_and_keep(cache, key: str, ex, git_repo, collapse: bool = True) -> Matrix:
    """The operations matrix of extraction `ex` (made with `code=True`) of `git_repo`, kept under
    `key` for the next audit of that commit: what `coverage --repo` and `diff` do on a miss."""
    matrix = tree_matrix(ex, lambda paths: git_repo.read_files(ex.sha, paths), collapse=collapse)
    keep_matrix(cache, key, matrix)
    return matrix
