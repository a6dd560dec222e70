"""Following sites and coverage cells from one revision to the next: `Builder` folds the revisions
in one at a time, linking each revision's records to the previous one's through one seam
(`_link`), telling what each disappearance looks like, and which cells flipped.

Memory stays bounded: only the previous revision's record lines and table of shown cells are alive
at a time, and each lineage keeps small `State` summaries, not records."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analyzer.features.coverage import model as coverage
from analyzer.features.coverage.matches import build as build_matrix
from analyzer.features.diff import BLANK, flips_shown, rank
from analyzer.features.history.cells import Cells
from analyzer.features.history.model import (
    FIXED, REMOVED_FROM_TREE, REWRITTEN, Analysed, Event, Flip, History, Lineage, Removal, Revision, Skipped, State,
)
from analyzer.features.history.revisions import Planned
from analyzer.lineage.link import link as link_records
from analyzer.pipeline import results_cache
from analyzer.records.model import RecordLine, content_changes

if TYPE_CHECKING:
    from analyzer.source.repository import GitRepository

# Results-cache rows (analyzer/pipeline/results_cache.py: keyed by the code that made them; the
# cache's tag holds the tool version and the rules hash): the links between the records of two commits.
_LINKS_KIND = "history-links"


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
    (analyzer/lineage/link.py: the same id, its line followed through git history, the same crate,
    function and message, the same file and message, a similar window): pairs
    (index into base_lines, index into head_lines, how they were matched). The pairs of two
    commits are kept in the results cache, so a rerun does not match again (following lines
    through git history costs a `git diff` per pair of revisions)."""
    key = results_cache.key(_LINKS_KIND, git_repo.name if git_repo else "", base_sha, head_sha)
    pairs = _cached_pairs(cache, key, len(base_lines), len(head_lines)) if base_sha and head_sha else None
    if pairs is None:
        from analyzer.profiles import current
        from analyzer.profiles.run import Run
        found = link_records(base_lines, head_lines, run=Run(current()), repo=git_repo, sha=head_sha or None)
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


class Builder:
    """Folds revisions in one at a time; keeps only the previous revision's records and matrix."""

    def __init__(self, git_repo: GitRepository, trim_empty_start: bool, dates: dict[str, str], cache=None,
                 repos: dict | None = None):
        self.git_repo = git_repo
        # Dependencies' repositories by name (filled as they are opened), and the commit each
        # revision pins of them: a dependency's removals are judged in its own tree.
        self.repos = repos if repos is not None else {}
        self._deps: dict[str, str] = {}
        self._prev_deps: dict[str, str] = {}
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
        # The previous revision's shown cells per repository ("": this one; a dependency's by name).
        self._prev_cells: dict[str, Cells] = {}

    def add(self, planned: Planned, analysed: Analysed, seconds: float) -> Revision | None:
        lines = analysed.lines
        if self.trim and not self.revisions and not lines:
            self.left_out.append(planned.label)
            return None
        assert planned.sha is not None
        index = len(self.revisions)
        self._prev_deps, self._deps = self._deps, {d["repo"]: d["sha"] for d in analysed.dependencies}
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
                            analysed.files_scanned, analysed.parsed, analysed.cached, round(seconds, 3),
                            analysed.dependencies)
        self.revisions.append(revision)
        # Removals are judged by the records' own operations (the matrix `coverage --records`
        # builds); cells flip between the tables coverage shows.
        matrix = build_matrix(lines, collapse=True)
        cells = _tables(lines, analysed)
        if index == 0:
            opened = {ln.record.id: self._start(ln, 0) for ln in lines}
        else:
            opened = self._follow(index, planned.sha, lines, matrix)
            self.flips += _flips(index, self._prev_cells, cells)
        self._open = opened
        self._prev_lines, self._prev_cells, self._prev_sha = lines, cells, planned.sha
        return revision

    def _removals(self, sha: str, gone: list[State], matrix: coverage.Matrix) -> dict[str, Removal]:
        """Each removal classified in its own repository's tree: a dependency's at the commits
        the two revisions pin (one no longer pinned is judged in the repository's own tree)."""
        by_repo: dict[str, list[State]] = {}
        for st in gone:
            dep = st.repo if st.repo in self.repos and st.repo in self._deps else ""
            by_repo.setdefault(dep, []).append(st)
        out: dict[str, Removal] = {}
        for dep, states in by_repo.items():
            if dep:
                base = self._prev_deps.get(dep, "")
                out |= _classify_removals(self.repos[dep], self._deps[dep], states, matrix, base)
            else:
                out |= _classify_removals(self.git_repo, sha, states, matrix, self._prev_sha)
        return out

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
        removals = self._removals(sha, [lin.state for lin in gone], matrix)
        for lineage in gone:
            lineage.removed, lineage.removal = index, removals[lineage.state.id]
            lineage.events.append(Event(index, "removed", lineage.state, removal=lineage.removal, key=lineage.key))
        linked_heads = {link.head.record.id for link in links}
        for ln in lines:
            if ln.record.id not in linked_heads:
                opened[ln.record.id] = self._start(ln, index)
        return opened

    def result(self, skipped: list[Skipped], seconds: float) -> History:
        return History(self.git_repo.name, self.revisions, skipped, self.lineages, self.flips, self.left_out,
                       round(seconds, 3))


def _tables(lines: list[RecordLine], analysed: Analysed) -> dict[str, Cells]:
    """The cells coverage shows at one revision per repository: this repository's from its tree
    (analysed.cells), a dependency's from its records, as `diff --with-dependencies` compares them."""
    deps = {d["repo"] for d in analysed.dependencies}
    by_repo: dict[str, list[RecordLine]] = {}
    for ln in lines:
        by_repo.setdefault(ln.record.repo if ln.record.repo in deps else "", []).append(ln)
    out = {repo: Cells.of(build_matrix(got, collapse=True)) for repo, got in by_repo.items() if repo}
    own = analysed.cells
    out[""] = own if isinstance(own, Cells) else Cells.of(build_matrix(by_repo.get("", []), collapse=True))
    return out


def _flips(index: int, base: dict[str, Cells], head: dict[str, Cells]) -> list[Flip]:
    """The cells coverage shows at both revisions whose status differs (diff's definition), each
    with its kind; a repository only one revision has flips nothing (its sites are added or
    removed)."""
    out = []
    for repo, after in head.items():
        before = base.get(repo)
        if before is None:
            continue
        for f in flips_shown(before.shown, after.shown, after.dtypes + before.dtypes):
            key = (f.crate, f.operation, f.dtype)
            out.append(Flip(index, *key, after.enum_of(f.dtype) or before.enum_of(f.dtype), f.base, f.head,
                            flip_kind(f.base, f.head), after.sites.get(key, ())))
    return out


def flip_kind(before: str, after: str) -> str:
    """fixed (it no longer panics: handled, or no dtype panic found), improved (it panics less,
    still partly), regressed (it panics more), changed (anything else: a reason, handled <->
    blank, a cell turning n/a or unknown)."""
    if rank(after) > rank(before):
        return "regressed"
    if rank(after) < rank(before):
        if after in (coverage.HANDLED, BLANK):
            return "fixed"
        if rank(after) == 1:
            return "improved"
    return "changed"


def _classify_removals(git_repo: GitRepository, sha: str, gone: list[State],
                       matrix: coverage.Matrix, base_sha: str = "") -> dict[str, Removal]:
    """What each disappearance looks like at `sha` (see the package's docstring). A file missing
    at `sha` that git saw renamed since `base_sha` is read at its new path: a site fixed in a
    renamed file is fixed there, not gone with its file."""
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
    texts = {path: data.decode("utf-8", "replace")
             for path, data in git_repo.read_files(sha, sorted({st.file for st in rest})).items()}
    moved = _renamed_to(git_repo, base_sha, sha, sorted({st.file for st in rest} - set(texts)))
    renamed = git_repo.read_files(sha, sorted(set(moved.values()))) if moved else {}
    texts.update((old, renamed[new].decode("utf-8", "replace")) for old, new in moved.items() if new in renamed)
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


def _renamed_to(git_repo: GitRepository, base_sha: str, sha: str, paths: list[str]) -> dict[str, str]:
    """Where git's rename detection took each of `paths` between the two revisions (a chain of
    renames followed to its end); empty without a base revision or a path to follow."""
    if not base_sha or not paths:
        return {}
    step: dict[str, str] = {}
    for old, new in git_repo.renames_between(base_sha, sha, "*.rs"):  # records are of Rust files only
        step[old] = new
    out = {}
    for path in paths:
        seen, at = {path}, path
        while at in step and step[at] not in seen:
            at = step[at]
            seen.add(at)
        if at != path:
            out[path] = at
    return out


def _now_handled(st: State, matrix: coverage.Matrix) -> tuple[str, ...]:
    """The dtypes this (gone) dtype-dispatch record rejected that its operation handles now."""
    if st.category != "dtype-dispatch":
        return ()
    enum = st.enum or coverage.primary_enum()
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
        if re.search(rf"\bfn\s+{re.escape(st.function)}\b", text) is not None:
            return True
        # A function a macro_rules! generates is named by an invocation, never written `fn name`:
        # the macro's definition stands for it.
        if not st.in_macro.startswith("macro_rules!"):
            return False
    name = st.in_macro.removeprefix("macro_rules!").strip()
    if name:
        return re.search(rf"\bmacro_rules!\s*{re.escape(name)}\b", text) is not None
    return True  # a site outside any item: the file is all there is to check


def _squeeze(text: str) -> str:
    return "".join(text.split())

