"""Which revisions a history analyses: the release tags in version order between two bounds, or
the revisions given, each commit once."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analyzer.source.repository import GitRepository

# A release tag: an optional prefix, then dotted numbers, then nothing (v0.13.0, 1.2). A tag with
# anything after the numbers (-pre.1, -rc1, -alpha, -book) is not a release.
_RELEASE = re.compile(r"^([^\d]*?)(\d+(?:\.\d+)*)$")
_VERSIONISH = re.compile(r"^[^\d]*?(\d+(?:\.\d+)*)")


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


def release_tags(git_repo: GitRepository, pattern: str = "v*") -> list[Tag]:
    """The release tags matching `pattern` (a glob on the tag name), oldest version first. Tags
    naming the same commit as an earlier one are kept: each is a release of its own."""
    tags = []
    for name, sha in git_repo.tags():
        version = version_of(name)
        if version is None or not fnmatch.fnmatchcase(name, pattern):
            continue
        tags.append(Tag(name, sha, version))
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
        planned = [Planned(r, git_repo.try_resolve(r), is_tag=git_repo.is_tag(r)) for r in revs]
        return Plan(_unique(planned))
    to_label = to_rev or "HEAD"
    to_sha = git_repo.resolve(to_label)
    from_sha = git_repo.resolve(from_rev) if from_rev else None
    tags = release_tags(git_repo, pattern)
    times = git_repo.commit_times([t.sha for t in tags] + [to_sha] + ([from_sha] if from_sha else []))
    lower = _bound(git_repo, from_rev, from_sha, times) if from_rev and from_sha else None
    upper = _bound(git_repo, to_label, to_sha, times)
    chosen: list[Planned] = []
    if from_rev and from_sha:  # the start itself, release or not (a release is not listed twice)
        chosen.append(Planned(from_rev, from_sha, is_tag=git_repo.is_tag(from_rev)))
    for t in tags:
        if (lower is None or lower.allows(t, times, after=True)) and upper.allows(t, times, after=False):
            chosen.append(Planned(t.name, t.sha, is_tag=True))
    chosen.append(Planned(to_label, to_sha, is_tag=git_repo.is_tag(to_label)))
    return Plan(_unique(chosen), trim_empty_start=from_rev is None)


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
    if m and git_repo.is_tag(rev):
        return _Bound(version=_version_key(tuple(int(x) for x in m.group(1).split("."))))
    return _Bound(sha=sha, ancestors=git_repo.tag_names(merged_into=sha),
                  descendants=git_repo.tag_names(containing=sha))


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

