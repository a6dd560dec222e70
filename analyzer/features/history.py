"""The history of the records across revisions: the core of `burn-errors history`.

It extracts at each revision in turn (by default the repository's release tags in version order,
then `--to`), links the records of each pair of neighbouring revisions, and follows every site
from the revision it was first seen at to the one where it disappeared:

- a **lineage** is one site over time: first seen at, each revision where its content changed
  (the fields `analysis.contentHash` is made of: message, category, macro, scrutinee, arm pattern,
  handled and rejected dtypes), each revision where it moved to another file, and the revision
  where it disappeared, with what the disappearance looks like:
  - `fixed`: a dtype it rejected is handled by the same operation at that revision
    (`dtype-handled`), or its function is still in its file and still matches on the same
    expression, without the panicking arm (`arm-removed`);
  - `removed-from-tree`: its file (`file-gone`) or its function (`function-gone`) is gone;
  - `rewritten`: the function is still there but no longer matches on that expression
    (`match-gone`): the site went away with the code around it, not evidently as a fix.
- a **cell flip** is a (backend, operation, dtype) coverage cell (analyzer/features/coverage, columns
  folded as `coverage` shows them) whose status differs between neighbouring revisions: `fixed`
  (now handled, or its panicking arms were fixed and the operation has no panicking arm left),
  `improved` (panics -> partial), `regressed` (handled -> partial or panics, partial -> panics),
  `new` (no cell before), `gone` (no cell after, otherwise).

Which record of one revision continues which record of the previous one is decided in one place,
`_link` (the lineage seam). Memory stays bounded: only the previous revision's record lines and
coverage matrix are alive at a time, and each lineage keeps small `State` summaries, not records.
Every revision reads its files through the shared per-blob cache, so each one parses only the
blobs the revisions before it did not have; a revision analysed before is one results-cache row.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from analyzer.features.coverage import model as coverage
from analyzer.features.coverage.matches import build as build_matrix
from analyzer.pipeline import results_cache
from analyzer.core.errors import UserError

if TYPE_CHECKING:  # pydantic is imported when records are built
    from analyzer.records.model import RecordLine
    from analyzer.source.repository import GitRepository

# How a lineage ended.
FIXED = "fixed"
REMOVED_FROM_TREE = "removed-from-tree"
REWRITTEN = "rewritten"
REMOVAL_KINDS = (FIXED, REMOVED_FROM_TREE, REWRITTEN)

EVENT_KINDS = ("added", "changed", "moved", "removed")

# What a coverage cell did between two neighbouring revisions.
FLIP_KINDS = ("fixed", "improved", "regressed", "new", "gone")
_RANK = {coverage.HANDLED: 0, coverage.PARTIAL: 1, coverage.PANICS: 2}

# A release tag: an optional prefix, then dotted numbers, then nothing (v0.13.0, 1.2). A tag with
# anything after the numbers (-pre.1, -rc1, -alpha, -book) is not a release.
_RELEASE = re.compile(r"^([^\d]*?)(\d+(?:\.\d+)*)$")
_VERSIONISH = re.compile(r"^[^\d]*?(\d+(?:\.\d+)*)")

# Results-cache rows (analyzer/results_cache.py: keyed by the code that made them; the cache's
# tag holds the tool version and the rules hash): one revision's records, and the links between
# the records of two commits.
_RESULT_KIND = "history"
_LINKS_KIND = "history-links"


# ---------------------------------------------------------------------------------------------
# Which revisions


@dataclass(frozen=True)
class Tag:
    name: str
    sha: str  # the commit the tag points at
    version: tuple[int, ...]


@dataclass(frozen=True)
class Planned:
    """A revision to analyse: what to call it and its commit (None: it does not resolve)."""

    label: str
    sha: str | None
    is_tag: bool = False


@dataclass(frozen=True)
class Skipped:
    label: str
    reason: str


@dataclass
class Plan:
    revisions: list[Planned]
    # Whether revisions before the first one with a record are left out (no --from, no --revs).
    trim_empty_start: bool = False


def version_of(name: str) -> tuple[int, ...] | None:
    """The version of a release tag (`v0.10.0` -> (0, 10, 0)); None for anything else, such as a
    pre-release (`v0.21.0-pre.1`), a release candidate or a book tag (`v0.14.0-book`)."""
    m = _RELEASE.match(name)
    return tuple(int(x) for x in m.group(2).split(".")) if m else None


def _version_key(version: tuple[int, ...]) -> tuple[int, ...]:
    """v0.13 and v0.13.0 are the same release: compare with trailing zeros dropped."""
    v = list(version)
    while len(v) > 1 and v[-1] == 0:
        v.pop()
    return tuple(v)


def _git(git_repo: GitRepository, *args: str) -> str:
    proc = subprocess.run(["git", f"--git-dir={git_repo.git_dir}", *args], capture_output=True, check=False)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, args, proc.stdout, proc.stderr)
    return proc.stdout.decode("utf-8", "replace")


def release_tags(git_repo: GitRepository, pattern: str = "v*") -> list[Tag]:
    """The release tags matching `pattern` (a glob on the tag name), oldest version first. Tags
    naming the same commit as an earlier one are kept: each is a release of its own."""
    out = _git(git_repo, "for-each-ref", "--format=%(refname:strip=2)%00%(objectname)%00%(*objectname)",
               "refs/tags")
    tags = []
    for row in out.splitlines():
        name, obj, peeled = (row.split("\0") + ["", ""])[:3]
        version = version_of(name)
        if version is None or not fnmatch.fnmatchcase(name, pattern):
            continue
        tags.append(Tag(name, peeled or obj, version))
    return sorted(tags, key=lambda t: (_version_key(t.version), t.name))


def plan(git_repo: GitRepository, *, from_rev: str | None = None, to_rev: str | None = None,
         revs: Iterable[str] = (), pattern: str = "v*") -> Plan:
    """The revisions a history run analyses, in order.

    `revs`: exactly those, in the order given; one that does not resolve is planned with no SHA
    (reported and skipped when its turn comes). Otherwise `from_rev` (when given), the release
    tags matching `pattern` between `from_rev` and `to_rev` in version order, then `to_rev`
    (default HEAD). A bound that is a version tag (a release or not) bounds by version. Any other
    revision bounds by ancestry, and by commit date for a tag on another branch (release branches
    put patch releases outside the main branch's ancestry). A commit already in the list is not
    analysed twice."""
    revs = list(revs)
    if revs:
        planned = [Planned(r, git_repo.try_resolve(r), is_tag=_is_tag(git_repo, r)) for r in revs]
        return Plan(_unique(planned))
    to_label = to_rev or "HEAD"
    to_sha = git_repo.resolve(to_label)
    from_sha = git_repo.resolve(from_rev) if from_rev else None
    tags = release_tags(git_repo, pattern)
    times = _commit_times(git_repo, [t.sha for t in tags] + [to_sha] + ([from_sha] if from_sha else []))
    lower = _bound(git_repo, from_rev, from_sha, times) if from_rev and from_sha else None
    upper = _bound(git_repo, to_label, to_sha, times)
    chosen: list[Planned] = []
    if from_rev and from_sha:  # the start itself, release or not (a release is not listed twice)
        chosen.append(Planned(from_rev, from_sha, is_tag=_is_tag(git_repo, from_rev)))
    for t in tags:
        if (lower is None or lower.allows(t, times, after=True)) and upper.allows(t, times, after=False):
            chosen.append(Planned(t.name, t.sha, is_tag=True))
    chosen.append(Planned(to_label, to_sha, is_tag=_is_tag(git_repo, to_label)))
    return Plan(_unique(chosen), trim_empty_start=from_rev is None)


def _is_tag(git_repo: GitRepository, rev: str) -> bool:
    try:
        _git(git_repo, "rev-parse", "--verify", "--quiet", f"refs/tags/{rev}")
        return True
    except subprocess.CalledProcessError:
        return False


@dataclass(frozen=True)
class _Bound:
    """One end of the range: a version, or a commit with the tags on either side of it."""

    version: tuple[int, ...] | None = None
    sha: str = ""
    ancestors: frozenset[str] = frozenset()  # tags whose commit is an ancestor of the bound
    descendants: frozenset[str] = frozenset()  # tags whose commit has the bound as an ancestor

    def allows(self, tag: Tag, times: dict[str, int], after: bool) -> bool:
        """Whether `tag` is on the right side: at or after a lower bound, at or before an upper one."""
        if self.version is not None:
            key = _version_key(tag.version)
            return key >= self.version if after else key <= self.version
        if tag.sha == self.sha:
            return True
        if tag.name in (self.descendants if after else self.ancestors):
            return True
        if tag.name in (self.ancestors if after else self.descendants):
            return False
        mine, theirs = times.get(tag.sha, 0), times.get(self.sha, 0)  # another branch: by date
        return mine >= theirs if after else mine <= theirs


def _bound(git_repo: GitRepository, rev: str, sha: str, times: dict[str, int]) -> _Bound:
    m = _VERSIONISH.match(rev)
    if m and _is_tag(git_repo, rev):
        return _Bound(version=_version_key(tuple(int(x) for x in m.group(1).split("."))))

    def tags(*args: str) -> frozenset[str]:
        return frozenset(_git(git_repo, "for-each-ref", "--format=%(refname:strip=2)", *args, "refs/tags").split())
    return _Bound(sha=sha, ancestors=tags("--merged", sha), descendants=tags("--contains", sha))


def _commit_times(git_repo: GitRepository, shas: list[str]) -> dict[str, int]:
    """Committer time (seconds) of each commit, with one `git log --no-walk`."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    out = _git(git_repo, "log", "--no-walk=unsorted", "--format=%H %ct", *wanted)
    times = {}
    for row in out.splitlines():
        sha, _, ct = row.partition(" ")
        if ct.isdigit():
            times[sha] = int(ct)
    return times


def _commit_dates(git_repo: GitRepository, shas: list[str]) -> dict[str, str]:
    """Committer date (ISO 8601) of each commit, with one `git log --no-walk`."""
    if not shas:
        return {}
    out = _git(git_repo, "log", "--no-walk=unsorted", "--format=%H %cI", *dict.fromkeys(shas))
    return dict(row.split(" ", 1) for row in out.splitlines() if " " in row)


def _unique(planned: list[Planned]) -> list[Planned]:
    seen: set[str] = set()
    out = []
    for p in planned:
        if p.sha is not None and p.sha in seen:
            continue
        if p.sha is not None:
            seen.add(p.sha)
        out.append(p)
    return out


# ---------------------------------------------------------------------------------------------
# What is kept of each record and revision


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

    @classmethod
    def of(cls, line: RecordLine) -> State:
        r, a = line.record, line.analysis
        assert a is not None  # records of an extraction always carry their analysis
        return cls(r.id, r.errorMessage, a.category, a.macro, a.crate, a.function, a.inMacro, a.operation,
                   r.filePath, r.lineNumber, r.githubUrl, a.scrutinee, a.pattern, a.enum, tuple(a.handled),
                   tuple(a.rejected))

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
    before: str | None  # handled | panics | partial | None (no cell)
    after: str | None
    kind: str  # FLIP_KINDS


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
        """The lineages whose record, at the flip's revision, panics for the flip's cell (the
        arms behind a regression)."""
        found = []
        for lineage in self._by_operation.get((flip.crate, flip.operation), []):
            state = lineage.state_at(flip.revision)
            if state is None or state.crate != flip.crate or state.operation != flip.operation:
                continue
            enum = state.enum or coverage.PRIMARY_ENUM
            if any(coverage.qualify(enum, v.split("(", 1)[0]) == flip.dtype for v in state.rejected):
                found.append(lineage)
        return found

    @cached_property
    def _by_operation(self) -> dict[tuple[str, str], list[Lineage]]:
        out: dict[tuple[str, str], list[Lineage]] = {}
        for lineage in self.lineages:
            for key in dict.fromkeys((e.state.crate, e.state.operation) for e in lineage.events):
                out.setdefault(key, []).append(lineage)
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
    return any(f.revision > fixed.revision and f.after in (coverage.PANICS, coverage.PARTIAL) for f in flips)


# ---------------------------------------------------------------------------------------------
# The lineage seam


@dataclass(frozen=True, slots=True)
class Link:
    base: RecordLine
    head: RecordLine
    how: str  # how the two were matched: "id" today; the lineage's tier name once it is plugged in


def _link(base_lines: list[RecordLine], head_lines: list[RecordLine], *, git_repo: GitRepository | None = None,
          base_sha: str = "", head_sha: str = "", cache=None) -> list[Link]:
    """The lineage seam: which record of the head revision continues which record of the base
    revision, one to one. Nothing else in the history matches records; everything reads the
    links this returns.

    A record continues the base record that `extract --previous` and `diff` would match it to
    (analyzer/lineage.py: the same id, its line followed through git history, the same crate,
    function and message, the same file and message, a similar window): pairs
    (index into base_lines, index into head_lines, how they were matched). The pairs of two
    commits are kept in the results cache, so a rerun does not match again (following lines
    through git history costs a `git diff` per pair of revisions)."""
    key = results_cache.key(_LINKS_KIND, git_repo.name if git_repo else "", base_sha, head_sha)
    pairs = _cached_pairs(cache, key, len(base_lines), len(head_lines)) if base_sha and head_sha else None
    if pairs is None:
        from analyzer.lineage.link import link

        found = link(base_lines, head_lines, repo=git_repo, sha=head_sha or None)
        pairs = [(k.previous, k.current, k.tier) for k in found.links]
        if cache is not None and base_sha and head_sha:
            cache.put_result(key, {"sizes": [len(base_lines), len(head_lines)], "pairs": pairs})
    return [Link(base_lines[p], head_lines[c], how) for p, c, how in pairs]


def _cached_pairs(cache, key: str, n_base: int, n_head: int) -> list[tuple[int, int, str]] | None:
    hit = cache.get_result(key) if cache is not None else None
    if not hit or hit.get("sizes") != [n_base, n_head]:
        return None  # not there, or made from other records
    try:
        pairs = [(int(p), int(c), str(how)) for p, c, how in hit["pairs"]]
    except (KeyError, TypeError, ValueError):
        return None
    if any(not (0 <= p < n_base and 0 <= c < n_head) for p, c, _ in pairs):
        return None
    return pairs


# ---------------------------------------------------------------------------------------------
# Running it


@dataclass
class _Analysed:
    lines: list[RecordLine]
    files_scanned: int
    parsed: int
    cached: bool


def records_at(git_repo: GitRepository, sha: str, cache=None, jobs: int | None = None,
               progress: Callable[[str], None] | None = None) -> _Analysed:
    """The records of one revision: one results-cache row when this revision was analysed
    before with the same rules, else an extraction that parses only blobs the cache lacks."""
    from analyzer.records.model import RecordLine

    key = results_cache.key(_RESULT_KIND, git_repo.name, sha)
    hit = cache.get_result(key) if cache is not None else None
    if hit is not None:
        try:
            lines = [RecordLine.model_validate_json(raw) for raw in hit["records"]]
            return _Analysed(lines, int(hit["filesScanned"]), 0, True)
        except (KeyError, TypeError, ValueError):
            pass  # a row of another shape: analyse again and overwrite it
    from analyzer.pipeline.extract import extract

    ex = extract(git_repo, sha, cache=cache, jobs=jobs, progress=progress)
    if cache is not None:
        cache.put_result(key, {"records": [ln.to_json_line() for ln in ex.lines], "filesScanned": ex.files_scanned})
    return _Analysed(ex.lines, ex.files_scanned, ex.cache_misses, False)


class _Builder:
    """Folds revisions in one at a time; keeps only the previous revision's records and matrix."""

    def __init__(self, git_repo: GitRepository, trim_empty_start: bool, dates: dict[str, str], cache=None):
        self.git_repo = git_repo
        self.dates = dates
        self.cache = cache
        self._prev_sha = ""
        self.trim = trim_empty_start
        self.revisions: list[Revision] = []
        self.lineages: list[Lineage] = []
        self.flips: list[Flip] = []
        self.left_out: list[str] = []
        self._keys: set[str] = set()
        self._open: dict[str, Lineage] = {}  # record id at the previous revision -> its lineage
        self._prev_lines: list[RecordLine] = []
        self._prev_matrix: coverage.Matrix | None = None

    def add(self, planned: Planned, analysed: _Analysed, seconds: float) -> Revision | None:
        lines = analysed.lines
        if self.trim and not self.revisions and not lines:
            self.left_out.append(planned.label)
            return None
        assert planned.sha is not None
        index = len(self.revisions)
        counts: dict[str, int] = {}
        backends: dict[str, dict[str, int]] = {}
        for ln in lines:
            assert ln.analysis is not None  # records of an extraction always carry their analysis
            cat, crate = ln.analysis.category, ln.analysis.crate
            counts[cat] = counts.get(cat, 0) + 1
            backends.setdefault(crate, {}).setdefault(cat, 0)
            backends[crate][cat] += 1
        date = self.dates.get(planned.sha) or self.git_repo.commit_date(planned.sha)
        revision = Revision(index, planned.label, planned.sha, date,
                            planned.is_tag, len(lines), counts, dict(sorted(backends.items())),
                            analysed.files_scanned, analysed.parsed, analysed.cached, round(seconds, 3))
        self.revisions.append(revision)
        matrix = build_matrix(lines, collapse=True)
        if index == 0:
            opened = {ln.record.id: self._start(ln, 0) for ln in lines}
        else:
            opened = self._follow(index, planned.sha, lines, matrix)
        self._open = opened
        self._prev_lines, self._prev_matrix, self._prev_sha = lines, matrix, planned.sha
        return revision

    def _start(self, line: RecordLine, index: int) -> Lineage:
        state = State.of(line)
        key = state.id
        n = 2
        while key in self._keys:  # an id that disappeared and came back starts a lineage of its own
            key = f"{state.id}.{n}"
            n += 1
        self._keys.add(key)
        lineage = Lineage(key, index, state, [Event(index, "added", state, key=key)], last=index)
        self.lineages.append(lineage)
        return lineage

    def _follow(self, index: int, sha: str, lines: list[RecordLine], matrix: coverage.Matrix) -> dict[str, Lineage]:
        from analyzer.records.model import content_changes  # pydantic is loaded once records exist

        links = _link(self._prev_lines, lines, git_repo=self.git_repo, base_sha=self._prev_sha, head_sha=sha,
                      cache=self.cache)
        opened: dict[str, Lineage] = {}
        continued: set[str] = set()
        for link in links:
            lineage = self._open[link.base.record.id]
            before, after = lineage.state, State.of(link.head)
            # The one definition of a content change, as extract --previous and diff apply it.
            fields = tuple(content_changes(link.base, link.head))
            if fields:
                lineage.events.append(Event(index, "changed", after, before, fields, link.how, key=lineage.key))
            elif after.file != before.file:
                lineage.events.append(Event(index, "moved", after, before, (), link.how, key=lineage.key))
            lineage.state, lineage.last = after, index
            opened[after.id] = lineage
            continued.add(link.base.record.id)
        gone = [lin for rid, lin in self._open.items() if rid not in continued]
        removals = _classify_removals(self.git_repo, sha, [lin.state for lin in gone], matrix)
        for lineage in gone:
            lineage.removed, lineage.removal = index, removals[lineage.state.id]
            lineage.events.append(Event(index, "removed", lineage.state, removal=lineage.removal, key=lineage.key))
        linked_heads = {link.head.record.id for link in links}
        for ln in lines:
            if ln.record.id not in linked_heads:
                opened[ln.record.id] = self._start(ln, index)
        assert self._prev_matrix is not None
        fixed_sites = {lin.state.id for lin in gone if lin.removal and lin.removal.kind == FIXED}
        self.flips += _flips(index, self._prev_matrix, matrix, fixed_sites)
        return opened

    def result(self, skipped: list[Skipped], seconds: float) -> History:
        return History(self.git_repo.name, self.revisions, skipped, self.lineages, self.flips, self.left_out,
                       round(seconds, 3))


def _flips(index: int, base: coverage.Matrix, head: coverage.Matrix, fixed_sites: set[str]) -> list[Flip]:
    """The cells whose status differs between two neighbouring revisions, each with its kind."""
    out = []
    for (crate, op, dtype), b, h in coverage.flipped(base, head):
        cell = head.get(crate, op, dtype) or base.get(crate, op, dtype)
        enum = cell.enum if cell is not None else ""
        if b is None:
            kind = "new"
        elif h is None:
            # The cell left the matrix: fixed when the arms that panicked for it were fixed (a
            # match with no panicking arm left gives no cell), else gone with its code.
            old = base.get(crate, op, dtype)
            panicking = {e.site.record_id for e in (old.evidence if old else []) if e.status == coverage.PANICS}
            kind = "fixed" if b != coverage.HANDLED and panicking and panicking <= fixed_sites else "gone"
        elif _RANK[h] < _RANK[b]:
            kind = "fixed" if h == coverage.HANDLED else "improved"
        else:
            kind = "regressed"
        out.append(Flip(index, crate, op, dtype, enum, b, h, kind))
    return out


def _classify_removals(git_repo: GitRepository, sha: str, gone: list[State],
                       matrix: coverage.Matrix) -> dict[str, Removal]:
    """What each disappearance looks like at `sha` (see the module's docstring)."""
    out: dict[str, Removal] = {}
    rest = []
    for st in gone:
        handled = _now_handled(st, matrix)
        if handled:
            out[st.id] = Removal(FIXED, "dtype-handled", handled)
        else:
            rest.append(st)
    if not rest:
        return out
    texts = _files_at(git_repo, sha, sorted({st.file for st in rest}))
    squeezed: dict[str, str] = {}
    for st in rest:
        text = texts.get(st.file)
        if text is None:
            out[st.id] = Removal(REMOVED_FROM_TREE, "file-gone")
            continue
        if not _item_present(st, text):
            out[st.id] = Removal(REMOVED_FROM_TREE, "function-gone")
            continue
        if st.file not in squeezed:
            squeezed[st.file] = _squeeze(text)
        if st.scrutinee and _squeeze(st.scrutinee) in squeezed[st.file]:
            out[st.id] = Removal(FIXED, "arm-removed")
        else:
            out[st.id] = Removal(REWRITTEN, "match-gone")
    return out


def _files_at(git_repo: GitRepository, sha: str, paths: list[str]) -> dict[str, str]:
    """The text of each of `paths` that exists at `sha` (a missing one is left out), with one
    `git cat-file --batch` asked for `sha:path` names: no listing of the whole tree."""
    asked = [p for p in paths if "\n" not in p]
    if not asked:
        return {}
    proc = subprocess.run(["git", f"--git-dir={git_repo.git_dir}", "cat-file", "--batch"],
                          input="".join(f"{sha}:{p}\n" for p in asked).encode("utf-8", "surrogateescape"),
                          capture_output=True, check=False)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, ["cat-file"], proc.stdout, proc.stderr)
    out: dict[str, str] = {}
    data, pos = proc.stdout, 0
    for path in asked:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) < 3 or not header[2].isdigit():
            continue  # "<name> missing" (or ambiguous): no such path at sha, no contents follow
        size = int(header[2])
        if header[1] == b"blob":  # not a folder of that name
            out[path] = data[pos:pos + size].decode("utf-8", "replace")
        pos += size + 1
    return out


def _now_handled(st: State, matrix: coverage.Matrix) -> tuple[str, ...]:
    """The dtypes this (gone) dtype-dispatch record rejected that its operation handles now."""
    if st.category != "dtype-dispatch":
        return ()
    enum = st.enum or coverage.PRIMARY_ENUM
    out = []
    for v in st.rejected:
        dtype = coverage.qualify(enum, v.split("(", 1)[0])
        cell = matrix.get(st.crate, st.operation, dtype)
        if v != coverage.OTHER and cell is not None and cell.status == coverage.HANDLED and dtype not in out:
            out.append(dtype)
    return tuple(out)


def _item_present(st: State, text: str) -> bool:
    """Whether the function (or macro_rules!) the site was in is still defined in the file."""
    if st.function:
        return re.search(rf"\bfn\s+{re.escape(st.function)}\b", text) is not None
    name = st.in_macro.removeprefix("macro_rules!").strip()
    if name:
        return re.search(rf"\bmacro_rules!\s*{re.escape(name)}\b", text) is not None
    return True  # a site outside any item: the file is all there is to check


def _squeeze(text: str) -> str:
    return "".join(text.split())


def build_history(git_repo: GitRepository, the_plan: Plan, *, cache=None, jobs: int | None = None,
                  on_start: Callable[[int, int, Planned], None] | None = None,
                  on_status: Callable[[str], None] | None = None,
                  on_done: Callable[[Revision | None, Planned, _Analysed], None] | None = None,
                  on_skip: Callable[[Skipped], None] | None = None,
                  debug: bool = False) -> History:
    """Analyse every planned revision in turn and fold it into the history. A revision that
    does not resolve or cannot be analysed is reported through `on_skip` and left out; with no
    revision left, a UserError."""
    t0 = time.perf_counter()
    shas = [p.sha for p in the_plan.revisions if p.sha is not None]
    builder = _Builder(git_repo, the_plan.trim_empty_start, _commit_dates(git_repo, shas), cache)
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
                analysed = records_at(git_repo, planned.sha, cache=cache, jobs=jobs, progress=on_status)
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
