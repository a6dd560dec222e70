"""What changed between two sets of records: the core of `burn-errors diff`.

Records are matched by id (see ids.py for what an id is made of):

- `added`   an id only in head;
- `removed` an id only in base;
- `changed` the same id whose content differs: the message, the category, the arm pattern or the
  rejected dtypes (the file and line may differ too);
- `moved`   the same id with the same content where only the file or the line differ;
- `unchanged` everything else (counted, not listed).

Matching is by id alone, so `added` and `removed` are exactly the records that an
`extract --previous` run would send to annotation as new or drop. What keeps an id and what gives
a new one is said in ids.py: an edited message or a new arm that handles a dtype keeps it (the
site is `changed`); a rewritten explicit arm pattern or scrutinee, or a function moved to another
impl, gives a new one (one site `removed`, one `added`).

Coverage cells that flipped (a dtype of an operation that was handled and now panics, or the
reverse, or that appeared or disappeared) come from analyzer.coverage.

The two sides come either from two revisions of one git repository, analysed from git objects
with one shared per-file cache (so the second revision parses only the files that differ), or from
two records.jsonl files.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from . import coverage
from .errors import UserError
from .record import RecordLine

# The content fields compared for `changed`, in the order they are reported.
CONTENT_FIELDS = ("message", "category", "pattern", "rejected")


@dataclass
class Side:
    """One side of a diff: where its records came from."""

    label: str  # what the user passed: a revision or a file path
    source: str  # "git" | "records"
    repo: str | None  # owner/name
    sha: str | None  # full SHA (the records' analyzedSha in records mode, when they agree)
    records: int
    cache_hits: int | None = None  # git mode with the cache: blobs whose facts were cached
    cache_misses: int | None = None  # blobs read and parsed for this side
    files_scanned: int | None = None
    seconds: float | None = None


@dataclass
class Change:
    """A record present on both sides (the same id)."""

    base: RecordLine
    head: RecordLine
    fields: list[str]  # which of CONTENT_FIELDS differ, plus "file" / "line"

    @property
    def id(self) -> str:
        return self.head.record.id


@dataclass(frozen=True)
class Flip:
    crate: str
    operation: str
    dtype: str
    base: str | None  # handled | panics | partial | None (cell absent)
    head: str | None

    @property
    def worse(self) -> bool:
        """True when head panics for a dtype that base did not panic for."""
        rank = {"partial": 1, "panics": 2}  # handled, or no cell: 0
        return rank.get(self.head or "", 0) > rank.get(self.base or "", 0)


@dataclass
class DiffResult:
    base: Side
    head: Side
    added: list[RecordLine]
    removed: list[RecordLine]
    changed: list[Change]
    moved: list[Change]
    unchanged: int
    flipped: list[Flip]
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def repo(self) -> str | None:
        return self.head.repo or self.base.repo

    def counts(self) -> dict[str, int]:
        return {"added": len(self.added), "removed": len(self.removed), "changed": len(self.changed),
                "moved": len(self.moved), "unchanged": self.unchanged, "flipped": len(self.flipped)}

    def failed(self, fail_on: Iterable[str]) -> list[str]:
        """The kinds in `fail_on` that this diff meets (empty: the check passes)."""
        kinds = set(fail_on)
        if "any" in kinds:
            kinds |= {"added", "changed", "removed"}
        return [k for k in ("added", "changed", "removed") if k in kinds and getattr(self, k)]


# -------------------------------------------------------------------------------------------
# Comparing records


def _content(line: RecordLine) -> dict[str, object]:
    return {"message": line.record.errorMessage, "category": line.analysis.category,
            "pattern": line.analysis.pattern, "rejected": sorted(line.analysis.rejected)}


def _differences(base: RecordLine, head: RecordLine) -> list[str]:
    b, h = _content(base), _content(head)
    out = [f for f in CONTENT_FIELDS if b[f] != h[f]]
    if base.record.filePath != head.record.filePath:
        out.append("file")
    if base.record.lineNumber != head.record.lineNumber:
        out.append("line")
    return out


def compare(base_lines: list[RecordLine], head_lines: list[RecordLine], base: Side, head: Side) -> DiffResult:
    base_by_id = _index(base_lines, base.label)
    head_by_id = _index(head_lines, head.label)
    changed: list[Change] = []
    moved: list[Change] = []
    unchanged = 0
    for rid in base_by_id.keys() & head_by_id.keys():
        b, h = base_by_id[rid], head_by_id[rid]
        fields = _differences(b, h)
        if any(f in CONTENT_FIELDS for f in fields):
            changed.append(Change(b, h, fields))
        elif fields:
            moved.append(Change(b, h, fields))
        else:
            unchanged += 1
    removed = [base_by_id[i] for i in base_by_id.keys() - head_by_id.keys()]
    added = [head_by_id[i] for i in head_by_id.keys() - base_by_id.keys()]

    base_matrix, head_matrix = coverage.build(base_lines), coverage.build(head_lines)
    # Flipped cells per backend and operation with their dtypes in the enum's declaration order,
    # as coverage's columns (head's columns, then any only base has), not alphabetically.
    column = {d: i for i, d in enumerate(dict.fromkeys(head_matrix.dtypes + base_matrix.dtypes))}
    flips = sorted((Flip(*key, b, h) for key, b, h in coverage.flipped(base_matrix, head_matrix)),
                   key=lambda f: (f.crate, f.operation, column.get(f.dtype, len(column)), f.dtype))
    return DiffResult(base=base, head=head, added=_sorted(added), removed=_sorted(removed),
                      changed=sorted(changed, key=lambda c: _loc(c.head)),
                      moved=sorted(moved, key=lambda c: _loc(c.head)), unchanged=unchanged, flipped=flips)


def _loc(line: RecordLine) -> tuple[str, int, int]:
    return (line.record.filePath, line.record.lineNumber, line.analysis.column)


def _sorted(lines: list[RecordLine]) -> list[RecordLine]:
    return sorted(lines, key=_loc)


def _index(lines: list[RecordLine], label: str) -> dict[str, RecordLine]:
    out: dict[str, RecordLine] = {}
    for line in lines:
        rid = line.record.id
        if rid in out:
            raise UserError(f"{label} holds id {rid} twice; records must have unique ids (check the "
                            f"file with `burn-errors validate`)")
        out[rid] = line
    return out


# -------------------------------------------------------------------------------------------
# Where the two sides come from


def records_mode(base: str, head: str) -> bool:
    """Two existing files: compare records files. One file and one non-file is a mistake."""
    b, h = Path(base).is_file(), Path(head).is_file()
    if b != h:
        which, other = (base, head) if b else (head, base)
        raise UserError(f"{which} is a file but {other} is not; give two records.jsonl files, or two "
                        f"revisions of --repo")
    return b


def _records_side(path: str, lines: list[RecordLine]) -> Side:
    repos = {ln.record.repo for ln in lines}
    shas = {ln.record.analyzedSha for ln in lines}
    return Side(label=path, source="records", repo=repos.pop() if len(repos) == 1 else None,
                sha=shas.pop() if len(shas) == 1 else None, records=len(lines))


def diff_records(base_path: str, head_path: str) -> DiffResult:
    from .sinks import jsonl

    t0 = time.perf_counter()
    base_lines, head_lines = jsonl.read(base_path), jsonl.read(head_path)
    result = compare(base_lines, head_lines, _records_side(base_path, base_lines),
                     _records_side(head_path, head_lines))
    result.timings = {"total": round(time.perf_counter() - t0, 3)}
    return result


def diff_revisions(git_repo, base_rev: str, head_rev: str, cache=None, jobs: int | None = None,
                   progress: Callable[[str, str], None] | None = None) -> DiffResult:
    """Analyse two revisions of one repository from git objects, sharing one cache: the second
    revision reads and parses only the blobs the first did not have."""
    from .extract import extract, utc_now

    t0 = time.perf_counter()
    shas = {"base": git_repo.resolve(base_rev), "head": git_repo.resolve(head_rev)}
    now = utc_now()
    sides: dict[str, Side] = {}
    lines: dict[str, list[RecordLine]] = {}
    for which, rev in (("base", base_rev), ("head", head_rev)):
        hits0 = cache.hits if cache is not None else 0
        misses0 = cache.misses if cache is not None else 0
        say = (lambda text, w=which: progress(w, text)) if progress else None
        ex = extract(git_repo, shas[which], cache=cache, now=now, jobs=jobs, progress=say)
        lines[which] = ex.lines
        # The cache counts for the whole run; this side's share is the difference.
        sides[which] = Side(label=rev, source="git", repo=git_repo.name, sha=shas[which], records=len(ex.lines),
                            cache_hits=(cache.hits - hits0) if cache is not None else 0,
                            cache_misses=(cache.misses - misses0) if cache is not None else ex.cache_misses,
                            files_scanned=ex.files_scanned, seconds=ex.timings.get("total"))
    result = compare(lines["base"], lines["head"], sides["base"], sides["head"])
    result.timings = {"base": sides["base"].seconds or 0.0, "head": sides["head"].seconds or 0.0,
                      "total": round(time.perf_counter() - t0, 3)}
    return result
