"""What changed between two sets of records: the core of `burn-errors diff`.

Records are matched by lineage (analyzer/lineage/), as `extract --previous` matches them: by
id, then (for revisions) by following the base line through git history, then by crate, function
and message, by file or crate and message, and by a similar source window. So a site keeps its
identity across an impl losing its generics, an enum renamed in its arm, a rewritten scrutinee or a
renamed file:

- `added`   a head record no base record continues;
- `removed` a base record no head record continues;
- `changed` a matched pair whose content differs (record.content_changes, the same definition that
  sends a record back to annotation with `extract --previous`; the file and line may differ too);
- `moved`   a matched pair with the same content where only the file or the line differ;
- `unchanged` everything else (counted, not listed).

A site is never both removed and added: lineage matches one-to-one. A matched pair is reported
under the base record's id (the id `extract --previous` would keep).

Coverage cells that flipped are cells `coverage` shows at both revisions whose status differs
(handled, panics, partial, n/a, unknown, blank, `not implemented`, `cannot hold`): for two
revisions, the operations matrix `coverage --repo` builds (analyzer/pipeline/coverage.py, served
from the results cache when `coverage` or an earlier diff kept it); for two records files, the
matrix `coverage --records` builds (analyzer/features/coverage/matches.py). A cell of an operation
or a column only one side has is not a flip: its sites are added or removed.

The two sides come either from two revisions of one git repository, analysed from git objects
with one shared per-file cache (so the second revision parses only the files that differ), or from
two records.jsonl files.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from analyzer.features.coverage.matches import build as build_matrix
from analyzer.features.coverage.model import NA, Matrix
from analyzer.core.errors import UserError
from analyzer.lineage.link import link
from analyzer.pipeline.extract import records_at
from analyzer.records.model import CONTENT_FIELDS, RecordLine, content_changes


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
    # Git mode: the files of this revision that could not be read whole, {path, reason, whole}
    # (Extraction.unread): a site in them may be missing from `records`.
    unread: list[dict] = field(default_factory=list)


@dataclass
class Change:
    """A site present on both sides (a base record and the head record that continues it)."""

    base: RecordLine
    head: RecordLine
    fields: list[str]  # which of CONTENT_FIELDS differ, plus "file" / "line"
    lineage: str = "id"  # how the two were matched (lineage.TIERS)

    @property
    def id(self) -> str:
        return self.base.record.id


@dataclass(frozen=True)
class Flip:
    """A coverage cell shown at both revisions whose status differs: handled, panics, partial,
    n/a, unknown, blank (no dtype panic found), or the reason a cell panics (`not implemented`,
    `cannot hold`)."""

    crate: str
    operation: str
    dtype: str
    base: str
    head: str

    @property
    def worse(self) -> bool:
        """True when head panics, or partly panics, more than base did."""
        return rank(self.head) > rank(self.base)


BLANK = "blank"
_RANK = {"partial": 1, "panics": 2, "not implemented": 2, "cannot hold": 2}  # others: 0


_CALM = {"handled", "n/a", "unknown", BLANK}


def rank(status: str) -> int:
    """How much a shown cell panics: 2 (panics, for any reason), 1 (partial: any other reason is a
    partial cell's, such as the schemes it handles), 0 (handled, n/a, unknown, blank)."""
    return _RANK.get(status, 0 if status in _CALM else 1)


@dataclass(frozen=True)
class Contradiction:
    """A backend's claim (its `dtype_usage`) that its cells contradict: an advertised dtype some
    operations panic on (`operations` = its panicsIn), or a dtype it does not advertise that some
    operations handle (its handledIn), as the claims view of `coverage` lists it."""

    crate: str
    dtype: str
    advertised: bool
    where: str
    operations: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str, bool]:
        return (self.crate, self.dtype, self.advertised)


def contradictions(matrix: Matrix) -> dict[tuple[str, str, bool], Contradiction]:
    out: dict[tuple[str, str, bool], Contradiction] = {}
    for claim in matrix.claims:
        ops = claim.panics_in if claim.advertised else claim.handled_in if claim.advertised is False else []
        if ops:
            c = Contradiction(claim.crate, claim.dtype, bool(claim.advertised), claim.where, tuple(ops))
            out[c.key] = c
    return out


def claim_changes(base: Matrix, head: Matrix) -> tuple[list[Contradiction], list[Contradiction]]:
    """(new at head, fixed at head): contradictions one side has and the other has not (the same
    backend, dtype and kind; its operations may differ)."""
    before, after = contradictions(base), contradictions(head)
    return ([c for k, c in sorted(after.items()) if k not in before],
            [c for k, c in sorted(before.items()) if k not in after])


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
    # Claim contradictions new at head and fixed there (revisions only: records files hold no
    # claims).
    new_contradictions: list[Contradiction] = field(default_factory=list)
    fixed_contradictions: list[Contradiction] = field(default_factory=list)
    # With dependencies (`diff --with-dependencies`): per dependency, its revision on each side
    # and its own counts; the lists above then hold every repository's sites.
    dependencies: list[dict] = field(default_factory=list)
    # Base sites in files the head revision could not read whole: neither removed nor kept, for
    # nobody knows (listed with the unread files, never counted as removed).
    unverified: list[RecordLine] = field(default_factory=list)
    # Head files not read whole that the base revision left unread for the same reason, in a crate
    # where no file changed between the two: what they hide is what the base hid (_standing_unread).
    standing_unread: list[dict] = field(default_factory=list)

    @property
    def unread(self) -> list[dict]:
        """The head revision's files not read whole, but for those standing unchanged since the
        base: sites may hide in them, so the diff is never quiet and fails any --fail-on check
        while there is one."""
        standing = {(e["path"], e["reason"]) for e in self.standing_unread}
        return [e for e in self.head.unread if (e["path"], e["reason"]) not in standing]

    @property
    def repo(self) -> str | None:
        return self.head.repo or self.base.repo

    @property
    def now_reachable(self) -> list[Change]:
        """Changed sites an earlier refusal preempted at base that a user reaches at head: news, as
        an added site is (the refusal is new to users)."""
        return [c for c in self.changed if "reach" in c.fields and c.base.facts.reach == "preempted"
                and c.head.facts.reach == "reachable"]

    def counts(self) -> dict[str, int]:
        return {"added": len(self.added), "removed": len(self.removed), "changed": len(self.changed),
                "moved": len(self.moved), "unchanged": self.unchanged, "flipped": len(self.flipped)}

    @property
    def quiet(self) -> bool:
        """Nothing for a reader: no site added, removed or changed, no cell flipped, no claim
        contradiction new or fixed (moves alone are quiet)."""
        return not (self.added or self.removed or self.changed or self.flipped or self.new_contradictions
                    or self.fixed_contradictions or self.unread)

    def failed(self, fail_on: Iterable[str]) -> list[str]:
        """The kinds in `fail_on` that this diff meets (empty: the check passes), then `unread`
        when any check is asked for and a head file was not read whole: what it hides is unknown,
        so no check can pass."""
        kinds = set(fail_on)
        if "any" in kinds:
            kinds |= {"added", "changed", "removed"}
        met: list[str] = [k for k in ("added", "changed", "removed") if k in kinds and getattr(self, k)]
        if self.unread and kinds & {"added", "changed", "removed"}:
            met.append("unread")
        return met


# -------------------------------------------------------------------------------------------
# Comparing records


def _differences(base: RecordLine, head: RecordLine) -> list[str]:
    out = content_changes(base, head)
    if base.record.filePath != head.record.filePath:
        out.append("file")
    if base.record.lineNumber != head.record.lineNumber:
        out.append("line")
    return out


def compare(base_lines: list[RecordLine], head_lines: list[RecordLine], base: Side, head: Side,
            git_repo=None, matrices: tuple[Matrix, Matrix] | None = None) -> DiffResult:
    """Match the two sides by lineage (with `git_repo`, following lines through its history from
    each base record's analyzedSha to head.sha) and sort the pairs into changed, moved and
    unchanged; the rest is removed or added. Cells flip between `matrices` (base, head), by
    default the records' own."""
    _check_unique(base_lines, base.label)
    _check_unique(head_lines, head.label)
    # A base site in a file head could not read whole can be neither followed nor said removed:
    # it is left out of the matching (where it would take another site's place) as unverified.
    standing = _standing_unread(base, head, git_repo)
    kept = {(e["path"], e["reason"]) for e in standing}
    unread_paths = {e["path"] for e in head.unread if (e["path"], e["reason"]) not in kept}
    unverified = [x for x in base_lines if x.record.filePath in unread_paths]
    if unverified:
        base_lines = [x for x in base_lines if x.record.filePath not in unread_paths]
    from analyzer.profiles import current
    from analyzer.profiles.run import Run
    run = Run(current())
    lineage = link(base_lines, head_lines, run=run, repo=git_repo, sha=head.sha,
                   records_at=records_at(git_repo, run) if git_repo is not None else None)
    changed: list[Change] = []
    moved: list[Change] = []
    unchanged = 0
    for k in lineage.links:
        b, h = base_lines[k.previous], head_lines[k.current]
        fields = _differences(b, h)
        if any(f in CONTENT_FIELDS for f in fields):
            changed.append(Change(b, h, fields, k.tier))
        elif fields:
            moved.append(Change(b, h, fields, k.tier))
        else:
            unchanged += 1
    removed = [base_lines[i] for i in lineage.lost]
    added = [head_lines[i] for i in lineage.new]

    if matrices is None:  # records: the matrix `coverage --records` shows, on both sides
        matrices = (build_matrix(base_lines, collapse=True), build_matrix(head_lines, collapse=True))
    new, fixed = claim_changes(*matrices)
    return DiffResult(base=base, head=head, added=_sorted(added), removed=_sorted(removed),
                      changed=sorted(changed, key=lambda c: _loc(c.head)),
                      moved=sorted(moved, key=lambda c: _loc(c.head)), unchanged=unchanged,
                      flipped=flips(*matrices), new_contradictions=new, fixed_contradictions=fixed,
                      unverified=_sorted(unverified), standing_unread=standing)


def _standing_unread(base: Side, head: Side, git_repo) -> list[dict]:
    """The head's unread files that hide nothing new: the base lists the same file for the same
    reason, and no file of its crate (the deepest folder above it with a Cargo.toml; the whole
    tree when there is none) changed between the two commits, so neither the file nor a build
    script or input of its crate that writes what it includes did. Without the repository (a diff
    of records files) or a commit of each side, none: every unread file fails the check."""
    if git_repo is None or base.sha is None or head.sha is None or not head.unread or not base.unread:
        return []
    at_base = {(e["path"], e["reason"]) for e in base.unread}
    candidates = [e for e in head.unread if (e["path"], e["reason"]) in at_base]
    if not candidates:
        return []
    changed = {p for _, old, new in git_repo.changed_files(base.sha, head.sha) for p in (old, new)}
    roots = {posixpath.dirname(b.path) for b in git_repo.tree(head.sha) if posixpath.basename(b.path) == "Cargo.toml"}
    out = []
    for e in candidates:
        folder = posixpath.dirname(e["path"])
        while folder and folder not in roots:
            folder = posixpath.dirname(folder)
        if not any(not folder or p.startswith(folder + "/") for p in changed):
            out.append(e)
    return out


def shown(matrix: Matrix) -> dict[tuple[str, str, str], str]:
    """Every cell `coverage` shows for the matrix, blank ones too, with its status (a panicking
    cell's reason when it has one): per backend its column groups, per group its rows (as
    Matrix.groups_of and Matrix.operations_in choose them), every column of the group. One pass
    over the cells, then one over what is shown."""
    groups = matrix.groups
    first = groups[0] if groups else None
    group_of = {d: g for g in groups for d in g.dtypes}
    used: dict[str, set[str]] = {}
    rows: dict[tuple[str, str], set[str]] = {}
    with_cells: set[tuple[str, str]] = set()
    for (crate, op, dtype), cell in matrix.cells.items():
        with_cells.add((crate, op))
        if cell.status != NA:
            used.setdefault(crate, set()).add(cell.enum)
        g = group_of.get(dtype)
        if g is not None and ((matrix.ops and g is first) or cell.status != NA):
            rows.setdefault((crate, g.enum), set()).add(op)
    if first is not None:  # operations with no cell at all are rows of the first group
        for crate, op in matrix.ops:
            if (crate, op) not in with_cells:
                rows.setdefault((crate, first.enum), set()).add(op)
    with_ops = {crate for crate, _ in matrix.ops}
    out: dict[tuple[str, str, str], str] = {}
    for crate in matrix.crates():
        for g in groups:
            if g.enum not in used.get(crate, ()) and not (g is first and crate in with_ops):
                continue
            for op in rows.get((crate, g.enum), ()):
                for dtype in g.dtypes:
                    got = matrix.cells.get((crate, op, dtype))
                    out[(crate, op, dtype)] = BLANK if got is None else (got.reason or got.status)
    return out


def flips(base: Matrix, head: Matrix) -> list[Flip]:
    """The cells shown at both revisions whose status differs, per backend and operation with
    their dtypes in coverage's column order (head's columns, then any only base has)."""
    return flips_shown(shown(base), shown(head), head.dtypes + base.dtypes)


def flips_shown(before: dict[tuple[str, str, str], str], after: dict[tuple[str, str, str], str],
                columns: Iterable[str]) -> list[Flip]:
    """The flips between two revisions' shown cells (`shown`), dtypes in the order of `columns`."""
    column = {d: i for i, d in enumerate(dict.fromkeys(columns))}
    out = [Flip(*key, before[key], status) for key, status in after.items()
           if key in before and before[key] != status]
    return sorted(out, key=lambda f: (f.crate, f.operation, column.get(f.dtype, len(column)), f.dtype))


def _loc(line: RecordLine) -> tuple[str, int, int]:
    return (line.record.filePath, line.record.lineNumber, line.facts.column)


def _sorted(lines: list[RecordLine]) -> list[RecordLine]:
    return sorted(lines, key=_loc)


def _check_unique(lines: list[RecordLine], label: str) -> None:
    from analyzer.records.reader import refuse_shared_ids
    refuse_shared_ids(lines, label)


# -------------------------------------------------------------------------------------------
# Where the two sides come from


def records_mode(base: str, head: str) -> bool:
    """Two existing records files or folders: compare records. One of each is a mistake."""
    b, h = _is_records(base), _is_records(head)
    if b != h:
        which, other = (base, head) if b else (head, base)
        raise UserError(f"{which} is a records file but {other} is not; give two records files (or "
                        f"folders of envelopes), or two revisions of --repo")
    return b


def _is_records(arg: str) -> bool:
    """A file, or a folder holding records files (a folder named like a revision is not one)."""
    from analyzer.records.reader import RECORD_FILE_SUFFIXES

    p = Path(arg)
    try:
        if p.is_dir():
            return any(f.suffix in RECORD_FILE_SUFFIXES for f in p.iterdir())
        return p.is_file()
    except OSError:  # a name too long to look up is a revision, or nothing
        return False


def _records_side(path: str, lines: list[RecordLine]) -> Side:
    repos = {ln.record.repo for ln in lines}
    shas = {ln.record.analyzedSha for ln in lines}
    side = Side(label=path, source="records", repo=repos.pop() if len(repos) == 1 else None,
                sha=shas.pop() if len(shas) == 1 else None, records=len(lines))
    side.unread = _unread_beside(path, side.sha, len(lines))
    return side


def _unread_beside(path: str, sha: str | None, records: int) -> list[dict]:
    """The files not read whole that the manifest.json written beside a records file lists
    (`extract` writes both), when it is the manifest of those records (the same commit, or for a
    file with no record to name one, the same count): records alone cannot say that a file was
    skipped, and the diff must not be quiet about it."""
    import json

    manifest = Path(path).parent / "manifest.json"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8")) if Path(path).is_file() and manifest.is_file() else None
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(data, dict) or (data.get("sha") != sha if sha is not None else data.get("records") != records):
        return []
    out = []
    for key, whole in (("skipped", True), ("partlyRead", False)):
        entries = data.get(key)
        for e in entries if isinstance(entries, list) else []:
            if isinstance(e, dict) and isinstance(e.get("path"), str) and isinstance(e.get("reason"), str):
                out.append({"path": e["path"], "reason": e["reason"], "whole": whole})
    return sorted(out, key=lambda e: e["path"])


def diff_records(base_path: str, head_path: str, git_repo=None) -> DiffResult:
    """Compare two records files; with `git_repo` (holding the head records' commit), base lines
    are followed through its history too."""
    from analyzer.records import reader

    t0 = time.perf_counter()
    base_lines, head_lines = reader.read(base_path), reader.read(head_path)
    result = compare(base_lines, head_lines, _records_side(base_path, base_lines),
                     _records_side(head_path, head_lines), git_repo=git_repo)
    result.timings = {"total": round(time.perf_counter() - t0, 3)}
    return result


def diff_revisions(git_repo, base_rev: str, head_rev: str, cache=None, jobs: int | None = None,
                   progress: Callable[[str, str], None] | None = None,
                   warn: Callable[[str], None] | None = None) -> DiffResult:
    """Analyse two revisions of one repository from git objects, sharing one cache: the second
    revision reads and parses only the blobs the first did not have. Cells flip between the two
    operations matrices `coverage --repo` shows (a kept one that fails its checks is said through
    `warn`, as coverage says it, and built again)."""
    from analyzer.pipeline import coverage as audit
    from analyzer.pipeline.extract import extract
    from analyzer.profiles import current
    from analyzer.profiles.run import Run
    from analyzer.core.timestamps import utc_now

    t0 = time.perf_counter()
    shas = {"base": git_repo.resolve(base_rev), "head": git_repo.resolve(head_rev)}
    now = utc_now()
    sides: dict[str, Side] = {}
    lines: dict[str, list[RecordLine]] = {}
    matrices: dict[str, Matrix] = {}
    for which, rev in (("base", base_rev), ("head", head_rev)):
        say = (lambda text, w=which: progress(w, text)) if progress else None
        key = audit.matrix_key(current().name, git_repo.name, shas[which], collapse=True)
        matrix, _ = audit.kept_matrix(cache, key, git_repo.name, shas[which], current(), warn=warn)
        ex = extract(git_repo, shas[which], Run(current()), cache=cache, now=now, jobs=jobs, progress=say,
                     code=matrix is None,
                     sources=matrix is None)
        if matrix is None:
            matrix = audit.build_and_keep(cache, key, ex, git_repo)
        lines[which], matrices[which] = ex.lines, matrix
        # Per distinct blob, whichever facets this side needed (the site facts, and the coverage
        # audit's code facts when its matrix was not kept).
        sides[which] = Side(label=rev, source="git", repo=git_repo.name, sha=shas[which], records=len(ex.lines),
                            cache_hits=ex.cache_hits, cache_misses=ex.cache_misses,
                            files_scanned=ex.files_scanned, seconds=ex.timings.get("total"), unread=ex.unread())
    result = compare(lines["base"], lines["head"], sides["base"], sides["head"], git_repo=git_repo,
                     matrices=(matrices["base"], matrices["head"]))
    result.timings = {"base": sides["base"].seconds or 0.0, "head": sides["head"].seconds or 0.0,
                      "total": round(time.perf_counter() - t0, 3)}
    return result


def diff_shas(git_repo, base_sha: str | None, head_sha: str | None, cache=None, jobs: int | None = None,
              labels: tuple[str, str] = ("base", "head")) -> DiffResult:
    """Two commits of one repository, either of which may be absent (a dependency one side
    does not pin): an absent side holds no records, so every site of the other is added or
    removed. Records are matched within this repository only."""
    from analyzer.pipeline.extract import extract
    from analyzer.core.timestamps import utc_now
    from analyzer.profiles import current
    from analyzer.profiles.run import Run

    t0 = time.perf_counter()
    now = utc_now()
    sides: dict[str, Side] = {}
    lines: dict[str, list[RecordLine]] = {}
    for which, sha, label in (("base", base_sha, labels[0]), ("head", head_sha, labels[1])):
        if sha is None:
            lines[which] = []
            sides[which] = Side(label=label, source="git", repo=git_repo.name, sha=None, records=0,
                                cache_hits=0, cache_misses=0, files_scanned=0, seconds=0.0)
            continue
        hits0, misses0 = (cache.hits, cache.misses) if cache is not None else (0, 0)
        ex = extract(git_repo, sha, Run(current()), cache=cache, now=now, jobs=jobs)
        lines[which] = ex.lines
        sides[which] = Side(label=label, source="git", repo=git_repo.name, sha=sha, records=len(ex.lines),
                            cache_hits=(cache.hits - hits0) if cache is not None else 0,
                            cache_misses=(cache.misses - misses0) if cache is not None else ex.cache_misses,
                            files_scanned=ex.files_scanned, seconds=ex.timings.get("total"),
                            unread=ex.unread())
    result = compare(lines["base"], lines["head"], sides["base"], sides["head"],
                     git_repo=git_repo if head_sha is not None else None)
    result.timings = {"total": round(time.perf_counter() - t0, 3)}
    return result


def _repo_loc(line: RecordLine) -> tuple[str, str, int, int]:
    return (line.record.repo, *_loc(line))


def merged(main: DiffResult, parts: list[tuple[DiffResult, dict]]) -> DiffResult:
    """The repository's diff with each dependency's (matched separately, so a site of one
    repository never continues another's): sites by repository, then file and line; `parts`
    pairs each dependency's diff with what the result says of it (its pins)."""
    results = [main, *(r for r, _ in parts)]
    # A dependency's unread files are named with their repository (`owner/name:path`).
    head = replace(main.head, unread=main.head.unread + [{**e, "path": f"{r.head.repo}:{e['path']}"}
                                                          for r, _ in parts for e in r.head.unread])
    out = DiffResult(
        base=main.base, head=head,
        added=sorted((x for r in results for x in r.added), key=_repo_loc),
        removed=sorted((x for r in results for x in r.removed), key=_repo_loc),
        changed=sorted((c for r in results for c in r.changed), key=lambda c: _repo_loc(c.head)),
        moved=sorted((c for r in results for c in r.moved), key=lambda c: _repo_loc(c.head)),
        unchanged=sum(r.unchanged for r in results),
        flipped=[f for r in results for f in r.flipped],
        new_contradictions=[c for r in results for c in r.new_contradictions],
        fixed_contradictions=[c for r in results for c in r.fixed_contradictions],
        unverified=sorted((x for r in results for x in r.unverified), key=_repo_loc),
        standing_unread=main.standing_unread + [{**e, "path": f"{r.head.repo}:{e['path']}"}
                                                for r, _ in parts for e in r.standing_unread],
        timings=dict(main.timings),
        dependencies=[{**about, "summary": r.counts()} for r, about in parts])
    out.timings["total"] = round(sum(r.timings.get("total", 0.0) for r in results), 3)
    return out
