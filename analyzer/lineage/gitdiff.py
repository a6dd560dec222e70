"""Following a line through git: `git diff -M --unified=0` parsed into where each file went and
its hunks, narrowed to the files that hold earlier records, with files renamed in the commits
between followed too; and where one line of an earlier file is at the new revision."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analyzer.source.repository import GitRepository

# A rewritten stretch of lines larger than this on the new side is not followed.
HISTORY_MAX_HUNK = 40


@dataclass
class FileChange:
    new_path: str | None  # None: deleted
    hunks: list[tuple[int, int, int, int]] = field(default_factory=list)  # (a, b, c, d) of @@ -a,b +c,d @@


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_diff(text: str) -> dict[str, FileChange]:
    """The files `git diff -M --unified=0` reports, by old path: where each went and its hunks.
    A file not listed is at the same path with the same lines. A hunk's changed lines are passed
    over by its counts (`-a,b +c,d`: b removed, d added), never read as headers: a removed line
    that reads `-- x` is `--- x` in the diff."""
    out: dict[str, FileChange] = {}
    old_path: str | None = None
    current: FileChange | None = None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        if raw.startswith("diff --git "):
            old_path, current = None, None
        elif raw.startswith("--- "):
            old_path = _diff_path(raw[4:], "a/")
        elif raw.startswith("+++ ") and old_path is not None:
            current = FileChange(_diff_path(raw[4:], "b/"))
            out[old_path] = current
        elif raw.startswith("rename from "):
            old_path = raw[len("rename from "):]
        elif raw.startswith("rename to ") and old_path is not None:
            current = FileChange(raw[len("rename to "):])
            out[old_path] = current  # a pure rename has no ---/+++ lines
        elif raw.startswith("@@") and current is not None:
            m = _HUNK.match(raw)
            if m:
                a, b, c, d = m.groups()
                removed, added = int(b) if b is not None else 1, int(d) if d is not None else 1
                current.hunks.append((int(a), removed, int(c), added))
                i = _past_lines(lines, i, removed)
                i = _past_lines(lines, i, added)
    return out


def _past_lines(lines: list[str], i: int, count: int) -> int:
    """Past `count` changed lines and the `\\ No newline at end of file` that may follow them."""
    i += count
    return i + 1 if i < len(lines) and lines[i].startswith("\\") else i


# Past this many files to diff, the narrowed diff's command line is not worth building: the whole
# tree's diff is read instead (the same answer).
_NARROW_MAX_FILES = 2000


def file_changes(repo: GitRepository, old: str, new: str, paths: set[str]) -> dict[str, FileChange]:
    """What parse_diff of the tree's whole `git diff -M` says of the files `paths` at `old` (those
    that hold earlier records), without diffing the contents of every other file: the changed
    files are listed first (renames found across the whole tree), then only those among `paths`
    are diffed, each renamed one with the path it went to. If the narrowed diff pairs renames
    otherwise than the listing, the whole diff decides."""
    listed = [(status, a, b) for status, a, b in repo.changed_files(old, new, "*.rs") if a in paths]
    renames = {a: b for status, a, b in listed if status == "R"}
    to_diff = sorted({p for _, a, b in listed for p in (a, b)})
    if not to_diff:
        return {}
    if len(to_diff) > _NARROW_MAX_FILES:
        return parse_diff(repo.diff_text(old, new, "*.rs"))
    changes = parse_diff(repo.diff_text(old, new, *(f":(literal){p}" for p in to_diff)))
    if {a: c.new_path for a, c in changes.items() if c.new_path not in (a, None)} != renames:
        return parse_diff(repo.diff_text(old, new, "*.rs"))
    return changes


def renamed_on_the_way(repo: GitRepository, old: str, new: str, changes: dict[str, FileChange],
                       present: set[str]) -> dict[str, FileChange]:
    """Files the range's diff reports deleted that git saw renamed in the commits between (a file
    moved to another crate, then rewritten, is a deletion and an addition to the whole range's
    diff): each followed through its renames to a file in `present` at `new`, and diffed there."""
    gone = sorted(path for path, c in changes.items() if c.new_path is None)
    if not gone:
        return {}
    by_name: dict[str, list[str]] = {path: [path] for path in gone}  # name now -> files named so
    for a, b in repo.renames_between(old, new, "*.rs"):
        if a in by_name:
            by_name.setdefault(b, []).extend(by_name.pop(a))
    out: dict[str, FileChange] = {}
    for now, paths in by_name.items():
        for path in paths:
            if now != path and now in present:
                found = parse_diff(repo.diff_text(f"{old}:{path}", f"{new}:{now}")).get(path)
                out[path] = found if found is not None else FileChange(now)
    return out


def _diff_path(text: str, prefix: str) -> str | None:
    text = text.rstrip("\t")
    if text == "/dev/null":
        return None
    if text.startswith('"'):  # git quotes unusual paths
        text = text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode(
            "latin-1").decode("utf-8", "replace")
    return text.removeprefix(prefix)


def follow_line(change: FileChange | None, path: str, line: int) -> tuple[str, int, int] | None:
    """Where line `line` of `path` is at the new revision: (path, line, line) when the line itself
    is unchanged; (path, first, last) of the lines that replaced it when it was rewritten; None
    when its file was deleted or its stretch removed (or too long to follow)."""
    if change is None:
        return path, line, line
    if change.new_path is None:
        return None
    delta = 0
    for a, b, c, d in change.hunks:
        old_first = a if b > 0 else a + 1
        if line < old_first:
            break
        if line < old_first + b:  # the line itself was rewritten
            if d == 0 or d > HISTORY_MAX_HUNK:
                return None
            return change.new_path, c, c + d - 1
        delta += d - b
    return change.new_path, line + delta, line + delta


def rewritten(change: FileChange | None, line: int) -> bool:
    if change is None:
        return False
    return any((a if b > 0 else a + 1) <= line < (a if b > 0 else a + 1) + b for a, b, _, _ in change.hunks)
