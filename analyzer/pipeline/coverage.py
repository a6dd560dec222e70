"""The coverage audit of one revision, as `coverage --repo`, `diff` and the results cache share it:
`tree_matrix` builds the operations matrix of an extraction (with the claims view), and
`kept_matrix` / `keep_matrix` serve and keep that matrix whole in the results cache
(analyzer/pipeline/results_cache.py), so a repeated audit of one revision with the same rules and
options neither extracts nor builds; every format renders from the matrix served. The rendered
document itself is kept too, per format and filters (`kept_document` / `keep_document`), so a
repeated run of one command neither decodes the matrix nor renders.

A kept row is never trusted blindly: it is validated against the matrix's own dataclasses
(pydantic), must be of the repository and commit asked for, and every link in it must point at
that commit's files on the target's host (a row must never put in a page what the builders would not write). A row
that fails is dropped with a warning (`kept_matrix` words it, for `coverage` and `diff` alike) and
the matrix is built again. A kept document is checked with a few linear scans of its text instead
(`document_fault`), the same at keeping and at serving: its digest, the revision its opening
names, and every link in it.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import typing
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING

from analyzer.pipeline import results_cache

if TYPE_CHECKING:
    from analyzer.features.coverage.model import Matrix
    from analyzer.profiles import Profile

_KIND = "coverage"
_DOCUMENT_KIND = "coverage-document"


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
def _kept():
    """A dataclass with every field of Matrix (read from Matrix itself, so a field added later is
    kept without anyone listing it), and its pydantic adapter."""
    import pydantic

    from analyzer.features.coverage import model

    hints = typing.get_type_hints(model.Matrix, vars(model))
    overrides = _overrides()
    kept = dataclasses.make_dataclass("KeptMatrix", [(f.name, overrides.get(f.name, hints[f.name]))
                                                     for f in dataclasses.fields(model.Matrix)])
    return kept, pydantic.TypeAdapter(kept)


def _adapter():
    return _kept()[1]


def _text(matrix: Matrix) -> bytes:
    """The matrix as one JSON text (pydantic writes and reads it in its own compiled code, which
    a walk over the matrix's objects in Python would take many times longer to). The matrix's own
    objects are written as they are: validating them into a copy first only to write that copy
    made the same text. What serves the row validates it (_decode)."""
    values = {f.name: getattr(matrix, f.name) for f in dataclasses.fields(matrix)}
    values.update(cells=list(matrix.cells.values()), ops=list(matrix.ops.values()),
                  unknown_reasons=[(*k, v) for k, v in matrix.unknown_reasons.items()],
                  unimplemented=[(*k, s) for k, s in matrix.unimplemented.items()])
    kept, adapter = _kept()
    return adapter.dump_json(kept(**values))


def _decode(text: bytes) -> Matrix:
    from analyzer.features.coverage.model import Matrix

    # Validating builds one tree of objects and frees none; the collector, woken every few
    # hundred allocations, would walk that growing tree again and again for cycles it cannot find.
    enabled = gc.isenabled()
    gc.disable()
    try:
        kept = _adapter().validate_json(text)
    finally:
        if enabled:
            gc.enable()
    values = {f.name: getattr(kept, f.name) for f in dataclasses.fields(kept)}
    values.update(cells={c.key: c for c in kept.cells}, ops={(o.crate, o.name): o for o in kept.ops},
                  unknown_reasons={(c, o, d): v for c, o, d, v in kept.unknown_reasons},
                  unimplemented={(c, o): s for c, o, s in kept.unimplemented})
    return Matrix(**values)


def _links_pinned(matrix: Matrix, prefix: str) -> bool:
    """Every link of the matrix is an https link to the commit's files (`prefix`), or empty."""
    from analyzer.core.safe import https_url

    sites = [s for c in matrix.cells.values() for s in (*c.sites, *(e.site for e in c.evidence),
                                                         *(p.site for p in c.preempted if p.site is not None))]
    sites += [s for d in (*matrix.dispatches, *matrix.helpers) for s in d.sites]
    sites += list(matrix.unimplemented.values())
    sites += [s for lim in matrix.limits for _, s in lim.rejected_by]
    sites += [s for st in matrix.settings for s in st.sites]
    urls = {s.url for s in sites} | {o.url for o in matrix.ops.values()}
    return all(not url or (https_url(url) == url and url.startswith(prefix)) for url in urls)


def kept_matrix(cache, key: str, repo: str, sha: str, profile: Profile,
                warn: Callable[[str], None] | None = None) -> tuple[Matrix | None, str | None]:
    """(the matrix kept under `key`, None) on a hit; (None, why) for a row that does not pass the
    checks (dropped, so the next run makes it again, and said through `warn`: the caller builds
    the matrix again); (None, None) when there is none."""
    text = cache.get_raw_result(key) if cache is not None else None
    if text is None:
        return None, None
    import pydantic

    try:
        matrix = _decode(text)
    except (pydantic.ValidationError, TypeError, ValueError, KeyError, AttributeError, RecursionError):
        why = "it does not hold a coverage matrix"
    else:
        if matrix.repo != repo or matrix.sha != sha:
            why = f"it is of another revision than {repo}@{sha[:12]}"
        elif not _links_pinned(matrix, profile.blob_prefix(repo, sha)):
            why = f"it links outside {repo}@{sha[:12]}"
        else:
            return matrix, None
    cache.drop_result(key)
    _say_not_used(warn, repo, sha, why)
    return None, why


def _say_not_used(warn: Callable[[str], None] | None, repo: str, sha: str, why: str) -> None:
    """The one warning for a kept row (matrix or document) that is dropped and made again."""
    if warn is not None:
        from analyzer.core.safe import terminal_text
        warn(terminal_text(f"warning: the results cache's coverage of {repo}@{sha[:12]} was not used: {why}; "
                           "it was built again", one_line=True))


def keep_matrix(cache, key: str, matrix: Matrix) -> None:
    if cache is not None:
        # The row is the text itself (not a JSON string holding it): nothing to escape at keeping
        # nor to unescape at serving, and what serves it validates the same bytes. It is
        # compressed and written while the caller renders.
        cache.put_raw_result_soon(key, _text(matrix))


def build_and_keep(cache, key: str, ex, git_repo, collapse: bool = True) -> Matrix:
    """The operations matrix of extraction `ex` (made with `code=True`) of `git_repo`, kept under
    `key` for the next audit of that commit: what `coverage --repo` and `diff` do on a miss.
    `ex.code` is emptied once the matrix is built."""
    matrix = tree_matrix(ex, lambda paths: _read_files(ex, git_repo, paths), collapse=collapse)
    # Nothing after the matrix reads the code facts, the larger part of an extraction, nor the
    # files' bytes: released before the matrix is encoded and its document rendered.
    ex.code = []
    ex.sources = {}
    keep_matrix(cache, key, matrix)
    return matrix


def _read_files(ex, git_repo, paths) -> dict[str, bytes]:
    """`git_repo.read_files(ex.sha, paths)`, served from the bytes the extraction kept
    (`Extraction.sources`) where it has them: git is asked only for the others."""
    paths = [p for p in paths if "\n" not in p]  # as read_files asks (a `sha:path` request is a line)
    rest = [p for p in paths if p not in ex.sources]
    got = git_repo.read_files(ex.sha, rest) if rest else {}
    return {p: ex.sources[p] if p in ex.sources else got[p] for p in paths if p in ex.sources or p in got}


def document_key(target: str, repo_name: str, sha: str, collapse: bool, fmt: str,
                 backends: tuple[str, ...], op_patterns: tuple[str, ...], full: bool = False) -> str:
    """The row of one rendered document: the matrix's key parts and every option that changes
    the text (the format, `--full`, and the filters as given: their order is the order shown)."""
    return results_cache.key(_DOCUMENT_KIND, target, repo_name, sha, int(collapse), fmt, int(full),
                             json.dumps([list(backends), list(op_patterns)]))


# Every format names the repository and the commit (short or full) before its first row.
_HEAD = 4096


def document_fault(data: bytes | Sequence[bytes], openers: tuple[bytes, ...] | None, repo: str, sha: str,
                   profile: Profile) -> str | None:
    """Why `data` (UTF-8: the bytes, or the pieces they are kept in) may not be served as a
    document of `repo` at `sha` whose format opens links with `openers` (its sink's link syntax;
    None: not said), or None: it must name that revision in its opening, and every absolute
    link in it must be https to that commit's files on `profile`'s host, or a place in the page
    (so a link without `//`, `javascript:`, is caught as well). Each check is one scan of the
    bytes in C (bytes.count, bytes.find); in valid UTF-8 an encoded needle is found exactly
    where the text holds it."""
    if openers is None:
        return "its format does not say where it opens links"
    pieces = [data] if isinstance(data, bytes) else [p for p in data if p]
    # The opening's first _HEAD characters (at most 4 bytes each; a character cut at the end
    # lies past them).
    head = str(_opening(pieces, 4 * _HEAD), "utf-8", "ignore")[:_HEAD]
    if repo not in head or sha[:12] not in head:
        return f"it is of another revision than {repo}@{sha[:12]}"
    prefix = profile.blob_prefix(repo, sha).encode()
    outside = f"it links outside {repo}@{sha[:12]}"
    if _count(pieces, b"://") != _count(pieces, prefix):
        return outside
    if all(_count(pieces, opener) == _count(pieces, opener + prefix) for opener in openers):
        # Every opener opens a link to the commit's files (an opener cannot overlap itself, so
        # each is counted). Else the scan below says which does not.
        return None
    whole = pieces[0] if len(pieces) == 1 else b"".join(pieces)
    for opener in openers:
        # After the opener: the commit's files, a place in the page, or (a quoted value) nothing.
        allowed = (prefix, b"#", b'"') if opener.endswith(b'"') else (prefix, b"#")
        at = whole.find(opener)
        while at >= 0:
            at += len(opener)
            if not whole.startswith(allowed, at):
                return outside
            at = whole.find(opener, at)
    return None


def _opening(pieces: list[bytes], size: int) -> bytes:
    """The first `size` bytes of the pieces joined."""
    out = b""
    for piece in pieces:
        if len(out) >= size:
            break
        out += piece[:size - len(out)]
    return out


def _count(pieces: list[bytes], needle: bytes) -> int:
    """`needle`'s count in the pieces joined, without joining them: the counts within each piece
    and across each seam (the needle's length less one byte either side of it). Exact for a needle
    that cannot overlap itself when no piece but the last is shorter than it; else counted in the
    joined bytes."""
    m = len(needle) - 1
    if len(pieces) == 1 or m == 0:
        return sum(p.count(needle) for p in pieces)
    if any(needle[:k] == needle[-k:] for k in range(1, m + 1)) or any(len(p) <= m for p in pieces[:-1]):
        return b"".join(pieces).count(needle)
    seams = sum((a[-m:] + b[:m]).count(needle) for a, b in zip(pieces, pieces[1:]))
    return seams + sum(p.count(needle) for p in pieces)


def _facts(text: bytes | Sequence[bytes]) -> dict:
    """What a kept document's row holds beside it, so a row cut short or damaged is a miss."""
    import zlib
    pieces = (text,) if isinstance(text, bytes) else text
    crc = 0
    for piece in pieces:
        crc = zlib.crc32(piece, crc)
    return {"length": sum(map(len, pieces)), "crc32": crc}


def kept_document(cache, key: str, links: tuple[bytes, ...] | None, repo: str, sha: str, profile: Profile,
                  warn: Callable[[str], None] | None = None) -> tuple[dict | None, str | None]:
    """({"data", "operations", "backends"}, None) for the document kept under `key`, `data` its
    UTF-8 bytes in pieces (a list of bytes, as the cache inflates them: joined, they would be
    copied once more); (None, why) for a row that does not pass the checks (dropped, so this run
    makes it again, and said through `warn` as `kept_matrix` says it); (None, None) when there is
    none."""
    pieces = cache.get_raw_pieces(key) if cache is not None else None
    if pieces is None:
        return None, None
    # The row: one line of JSON (the counts the closing line says, the document's length and
    # checksum), then the document's bytes. What it is of is in the key, and checked in the text.
    line, body = _first_line(pieces)
    try:
        row = json.loads(line) if line is not None else None
    except (ValueError, RecursionError):
        row = None
    if not isinstance(row, dict) or not _whole(row, body) or not _utf8(body):
        why = "it does not hold a whole coverage document"
    else:
        fault = document_fault(body, links, repo, sha, profile)
        if fault is None:
            return {"data": body, "operations": row["operations"], "backends": row["backends"]}, None
        why = fault
    cache.drop_result(key)
    _say_not_used(warn, repo, sha, why)
    return None, why


def _first_line(pieces: list[bytes]) -> tuple[bytes | None, list[bytes]]:
    """(the bytes before the first newline, the pieces after it, none empty); (None, []) without one."""
    for i, piece in enumerate(pieces):
        cut = piece.find(b"\n")
        if cut >= 0:
            line = b"".join([*pieces[:i], piece[:cut]])
            return line, [p for p in (piece[cut + 1:], *pieces[i + 1:]) if p]
    return None, []


def _utf8(body: Sequence[bytes]) -> bool:
    """Whether the pieces joined are UTF-8 (ASCII, as a document almost always is, is told at once)."""
    if all(piece.isascii() for piece in body):
        return True
    try:
        str(b"".join(body), "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _whole(row: dict, body: Sequence[bytes]) -> bool:
    return ({k: row.get(k) for k in ("length", "crc32")} == _facts(body)
            and isinstance(row.get("operations"), int) and isinstance(row.get("backends"), int))


def keep_document(cache, key: str, links: tuple[bytes, ...] | None, text: str, repo: str, sha: str, profile: Profile,
                  operations: int, backends: int) -> None:
    """Keep a rendered document for the next identical run, when it passes the checks a served
    one must (one that would not is not kept, rather than warned about at every run)."""
    if cache is None:
        return
    body = text.encode("utf-8")
    if document_fault(body, links, repo, sha, profile) is not None:
        return
    line = json.dumps({"operations": operations, "backends": backends, **_facts(body)})
    cache.put_raw_result_soon(key, line.encode() + b"\n" + body)
