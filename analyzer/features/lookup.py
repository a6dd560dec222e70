"""Lookup: which record a runtime panic comes from.

The input is the message a user saw (`conv3d: unsupported dtype I8`) or the whole panic as Rust
prints it, with the location:

    thread 'main' panicked at crates/burn-flex/src/ops/module.rs:257:22:      (Rust 1.73 and later)
    conv3d: unsupported dtype I8
    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

    thread 'main' panicked at 'conv3d: unsupported dtype I8', src/ops/module.rs:257:22   (before 1.73)

A record matches when its `analysis.messageRegex` matches the whole message (`re.fullmatch`,
DOTALL). The regex is never run: it is read back into the literal segments between its
placeholders and matched in linear time (`message_matcher`); one of any other shape is skipped. Matches are ranked:

1. a record at the panic's file first (nearest line first) when the input gives a location. The
   location may be a path inside the repository, an absolute path in a clone
   (`/home/me/burn/crates/...`), or a crates.io path (`.../burn-flex-0.19.0/src/ops/module.rs`:
   crate `burn-flex`, path `src/ops/module.rs` inside it);
2. then the most literal characters (the message's text outside its placeholders): the record
   that explains more of the message is the better guess;
3. then file and line, so the order is stable.

A record whose message is only a placeholder (`panic!("{msg}")`) matches any text and says
nothing; it is shown only when it sits at the panic's file.

When no record matches, `closest` names the nearest: the records at the panic's file, then those
whose message shares the most words with it; a crates.io path also names the release the panic
came from, whose records are the ones to look in.
"""

from __future__ import annotations

import heapq
import re
from analyzer.core.toml import tomllib
from collections import Counter
from dataclasses import dataclass, field

from typing import TYPE_CHECKING, Any

from analyzer.facts.messages import MESSAGE_TAIL

if TYPE_CHECKING:  # types only: a lookup served from the cache never loads the schema (pydantic)
    from analyzer.profiles import Profile
    from analyzer.records.model import RecordLine

# What Rust (or a panic hook) prints after the message: the backtrace note, the backtrace itself,
# a browser console's stack (console_error_panic_hook).
# Cargo's section lines around a build script's output (`--- stderr`) end it too.
_TRAILERS = ("note: run with `RUST_BACKTRACE=", "note: Some details are omitted", "stack backtrace:", "Stack:",
             "--- stderr", "--- stdout")
_PANICKED = "panicked at "
# `PATH:LINE:COL` or `PATH:LINE`, then the end, or `:` and possibly the message on the same line
# (a logger that joins lines). The path is the shortest prefix followed by `:digits`, so a
# Windows drive (`C:\`) stays in it; each try stops at the first non-digit, so the match is linear.
_LOCATION = re.compile(r"(?P<path>[^:\s'][^\n]*?):(?P<line>[0-9]+)(?::(?P<column>[0-9]+))?"
                       r"(?:(?P<colon>:)[ \t]*(?P<rest>[^\n]*))?")
_CRATES_IO = re.compile(r"^(?P<crate>[A-Za-z0-9_-]+?)-(?P<version>\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)$")
# An assertion's values, new form (Rust 1.73 and later) and old.
_ASSERT_NEW = re.compile(r"assertion `left (?P<op>==|!=) right` failed")
_ASSERT_OLD = "assertion failed: `(left "


@dataclass(frozen=True)
class Panic:
    """A panic as the user gave it: the message, and the location when the panic line says it."""

    message: str
    path: str | None = None
    line: int | None = None
    column: int | None = None


def parse_panic(text: str) -> Panic:
    """Read the message (and location) out of what the user pasted. A one-line paste whose line
    breaks are spelled `\\n` (a panic pasted inside double quotes in a shell) is read with them
    as line breaks when that gives a location or Rust's trailer."""
    panic = _parse_panic(text)
    if "\\n" in text and "\n" not in text.strip("\r\n"):
        unescaped = text.replace("\\r\\n", "\n").replace("\\n", "\n")
        again = _parse_panic(unescaped)
        if again.path is not None or _trailer_at(unescaped.split("\n"), after_header=False) is not None:
            return again
    return panic


def _parse_panic(text: str) -> Panic:
    """The message (and location) of `text` as Rust prints a panic.

    The panic's line is the first that holds `panicked at ` followed by a location, whatever
    comes before it on the line: `thread 'main' `, a thread id (`thread 'main' (12345) `), a
    logger's prefix (`ERROR burn_import::logger: PANIC => `), cargo's indentation of a build
    script's output, or nothing (a browser console). Rust 1.73 and later print `panicked at
    src/x.rs:12:5:` and the message on the next lines; earlier versions `panicked at 'message',
    src/x.rs:12:5`, the message possibly spanning lines. The message's lines lose the indentation
    the panic's line has; the trailer (the backtrace note, the backtrace) and an assertion's
    `left:`/`right:` values are cut. One pass over the lines, `str` methods and anchored
    matches, so a paste of any length is read in linear time."""
    lines = text.replace("\r\n", "\n").split("\n")
    for i, line in enumerate(lines):
        at = line.find(_PANICKED)
        if at < 0:
            continue
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        rest = line[at + len(_PANICKED):]
        if rest.startswith("'"):
            old = _old_style(lines, i, rest, indent)
            if old is not None:
                return old
            continue
        m = _LOCATION.fullmatch(rest.rstrip(" \t"))
        if m is None:
            continue
        if m["colon"]:
            body = ([m["rest"]] if m["rest"] else []) + _dedent(lines[i + 1:], indent)
        elif i + 1 < len(lines) and lines[i + 1].strip():
            body = _dedent(lines[i + 1:], indent)  # `FILE:LINE` with the message below
        else:
            continue
        cut = _trailer_at(body)
        message = "\n".join(body[:cut]).strip("\n")
        return Panic(_assertion(message), _norm(m["path"]), int(m["line"]),
                     int(m["column"]) if m["column"] else None)
    cut = _trailer_at(lines, after_header=False)
    return Panic(_assertion("\n".join(lines[:cut]).strip("\n")))


def _old_style(lines: list[str], i: int, rest: str, indent: str) -> Panic | None:
    """`panicked at 'message', PATH:LINE:COL` (Rust before 1.73): the message runs to the last
    `', LOCATION` before the trailer, on this line or a later one."""
    body = [rest[1:], *_dedent(lines[i + 1:], indent)]
    end = _trailer_at(body)
    end = len(body) if end is None else end
    for j in range(end - 1, -1, -1):
        tail = body[j].rstrip(" \t")
        cut = tail.rfind("', ")
        m = _LOCATION.fullmatch(tail[cut + 3:]) if cut >= 0 else None
        if m is None or m["rest"]:
            continue
        message = "\n".join([*body[:j], tail[:cut]])
        return Panic(_assertion(message), _norm(m["path"]), int(m["line"]),
                     int(m["column"]) if m["column"] else None)
    return None


def _dedent(lines: list[str], indent: str) -> list[str]:
    """The lines after a panic's line without the indentation it had (cargo indents a build
    script's output)."""
    if not indent:
        return lines
    return [ln[len(indent):] if ln.startswith(indent) else ln for ln in lines]


def _trailer_at(lines: list[str], after_header: bool = True) -> int | None:
    """The index of the first line of what follows the message, else None: Rust's trailer, or
    after a panic's line the same panic printed again (a logger's line, then the default hook's)."""
    for i, line in enumerate(lines):
        if line.lstrip(" \t").startswith(_TRAILERS) or (after_header and _PANICKED in line):
            return i
    return None


def _assertion(message: str) -> str:
    """An assertion's message as the record spells it: ``assertion `left == right` failed: m``,
    without the `left:`/`right:` lines Rust prints after it (which hold the values); the old
    form (``assertion failed: `(left == right)` ``, the values, then `: m`) read into the new."""
    m = _ASSERT_NEW.match(message)
    if m:
        cut = message.rfind("\n  left: ")
        if cut >= 0 and "\n right: " in message[cut:]:
            return message[:cut]
        return message
    if message.startswith(_ASSERT_OLD):
        op = message[len(_ASSERT_OLD):len(_ASSERT_OLD) + 2]
        if op in ("==", "!=") and message.startswith(" right)`", len(_ASSERT_OLD) + 2):
            head = f"assertion `left {op} right` failed"
            right = message.find("\n right: `")
            if right < 0:
                return message
            tail = message.find("`: ", right + 10)
            return head + (": " + message[tail + 3:] if tail >= 0 else "")
    return message


def _norm(path: str) -> str:
    return path.strip().replace("\\", "/")


class _Fields:
    """Attribute access to a JSON object's members."""

    __slots__ = ("_data",)

    def __init__(self, data: dict):
        self._data = data

    def __getattr__(self, name: str) -> Any:
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def pinned_url(self) -> str:
        # ErrorRecord.pinned_url of a line the record stage wrote (the cache's own): its link as is.
        return self._data["githubUrl"]


class KeptLine:
    """A records line the results cache kept, as lookup reads it: `record` and `facts` with the
    attributes of RecordLine's, and `model_dump` its JSON as kept. The cache's lines were written
    by the record stage and are checked as they are served (analyzer/pipeline/results_cache.py),
    so they are not validated again: a served lookup never loads the schema (pydantic)."""

    __slots__ = ("_value", "record", "facts")

    def __init__(self, value: dict):
        self._value = value
        self.record = _Fields(value["record"])
        self.facts = _Fields(value["analysis"])

    def model_dump(self, mode: str = "json") -> dict:
        return self._value


def kept_lines(text: str) -> list[RecordLine] | None:
    """The lines of a served records.jsonl text as KeptLine, or None when one has no analysis
    (then the caller reads them through the schema)."""
    import json

    out: list[Any] = []
    for raw in text.splitlines():
        value = json.loads(raw)
        if not isinstance(value.get("analysis"), dict) or not isinstance(value.get("record"), dict):
            return None
        out.append(KeptLine(value))
    return out


_META = ".^$*+?{}[]\\|()"


# What the standard library may print after a message (`.expect` on a Result: `: <the error>`;
# assert_eq!: the values on the lines below), as extract writes it before the regex's `$`, and
# the text such a tail starts with.
_TAILS = {tail: tail[3:-4] for tail in MESSAGE_TAIL.values()}


def _tail(regex: str) -> tuple[str, str | None]:
    """The regex without an optional tail extract writes (MESSAGE_TAIL), and the text the tail
    starts with (None when there is none)."""
    for tail, start in _TAILS.items():
        if regex.endswith(tail + "$"):
            return regex[:-len(tail) - 1] + "$", start.replace("\\n", "\n")
    return regex, None


def literal_segments(regex: str) -> list[str] | None:
    """The literal texts between the placeholders of a messageRegex of the shape `extract` writes
    (`^`, text with regex metacharacters backslash-escaped, `.*?` for each placeholder, an
    optional tail of what the standard library prints after the message, `$`); None for any
    other regex. A records file is anyone's to write, so lookup never runs its regexes: it reads
    them back into literal segments and matches those (`message_matcher`)."""
    regex = _tail(regex)[0]
    if len(regex) < 2 or not regex.startswith("^") or not regex.endswith("$"):
        return None
    body, i = regex[1:-1], 0
    segments: list[str] = []
    current: list[str] = []
    while i < len(body):
        ch = body[i]
        if body.startswith(".*?", i):
            segments.append("".join(current))
            current = []
            i += 3
        elif ch == "\\":
            # A backslash before any other character than a letter, digit or `_` is that character
            # (older writers escaped spaces too); `\d`, `\w`, `\1` and the like are not text.
            if i + 1 >= len(body) or body[i + 1].isalnum() or body[i + 1] == "_":
                return None
            current.append(body[i + 1])
            i += 2
        elif ch in _META:
            return None
        else:
            current.append(ch)
            i += 1
    segments.append("".join(current))
    return segments


def message_matcher(regex: str):
    """A function text -> bool equal to `re.fullmatch(regex, text, re.S)` for a regex of the
    tool's shape, in time linear in the text: the first segment must start the text, the last end
    it, and each one between is found, leftmost, after the previous (leftmost placement is optimal
    when everything between segments is a wildcard). With a tail, the last segment may instead
    stand anywhere after those, followed by the tail's start. None when the regex is of another
    shape."""
    segments = literal_segments(regex)
    if segments is None:
        return None
    tail = _tail(regex)[1]
    if len(segments) == 1:
        only = segments[0]
        if tail is None:
            return lambda text: text == only
        return lambda text: text == only or text.startswith(only + tail)
    first, middle, last = segments[0], segments[1:-1], segments[-1]

    def matches(text: str) -> bool:
        if len(text) < len(first) + len(last) or not text.startswith(first):
            return False
        pos = len(first)
        end = len(text) - len(last) if tail is None else len(text)
        for seg in middle:
            found = text.find(seg, pos, end)
            if found < 0:
                return False
            pos = found + len(seg)
        if text.endswith(last) and len(text) - len(last) >= pos:
            return True
        return tail is not None and text.find(last + tail, pos) >= 0
    return matches


def literal_length(regex: str) -> int:
    """Characters a full match of `regex` spells out literally: the message outside its
    placeholders (0 for a regex not of the tool's shape)."""
    return sum(len(s) for s in literal_segments(regex) or [])


@dataclass(frozen=True)
class Origin:
    """The release a panic's path names: a registry checkout's crate folder
    (`.../burn-ndarray-0.19.0/src/ops/base.rs`: package burn-ndarray, version 0.19.0, the
    profile's release tag for it) or a git checkout's commit folder
    (`.../git/checkouts/burn-<hash>/<short sha>/crates/...`)."""

    kind: str  # "registry" or "git"
    profile: str  # the target profile whose repository published the code
    repo: str  # that repository, owner/name
    rev: str  # registry: the release tag; git: the commit as the path spells it
    inner: str  # registry: the path inside the crate; git: the path inside the repository
    package: str = ""  # registry: the crate's package name
    version: str = ""  # registry: its version

    def describe(self) -> str:
        if self.kind == "registry":
            return f"{self.repo} {self.rev} (a registry checkout of {self.package} {self.version})"
        return f"{self.repo} commit {self.rev} (a git checkout)"

    def to_json(self) -> dict:
        return {"kind": self.kind, "target": self.profile, "repo": self.repo, "rev": self.rev,
                "package": self.package or None, "version": self.version or None}


_HEX = re.compile(r"[0-9a-f]{7,40}")
_CHECKOUT = re.compile(r"^(?P<name>.+)-[0-9a-f]{16}$")


def origin_of(path: str, targets: list[Profile]) -> Origin | None:
    """The first of `origins_of`: the release as the first profile that publishes it names it."""
    found = origins_of(path, targets)
    return found[0] if found else None


def origins_of(path: str, targets: list[Profile]) -> list[Origin]:
    """The releases `path` may name, most likely first. A git checkout of one of `targets`'
    repositories (the checkout folder is the repository's name and a hash) names one commit. A
    registry crate folder names a package and a version: the release tag of each of `targets`
    (the command's target first) whose `packages` own the package. Two own one when a package
    moved between repositories (burn-import, burn's until burn-onnx took it over): which
    repository holds the package at that tag decides (the caller checks).
    Empty for any other path (a local clone's, a path inside the repository, a crate no
    target publishes): that names only the file."""
    parts = path.split("/")
    for i in range(1, len(parts) - 3):
        if parts[i] == "checkouts" and parts[i - 1] == "git" and _HEX.fullmatch(parts[i + 2]):
            m = _CHECKOUT.match(parts[i + 1])
            name = m["name"] if m else parts[i + 1]
            for profile in targets:
                if profile.repository.name.rsplit("/", 1)[-1] == name:
                    return [Origin("git", profile.name, profile.repository.name, parts[i + 2],
                                   "/".join(parts[i + 3:]))]
    for i, part in enumerate(parts[:-1]):
        m = _CRATES_IO.match(part)
        if not m:
            continue
        owners = [p for p in targets if p.packages.owns(m["crate"])]
        if not owners:
            continue
        inner = "/".join(parts[i + 1:])
        return [Origin("registry", p.name, p.repository.name, p.packages.release_tag.format(version=m["version"]),
                       inner, m["crate"], m["version"]) for p in owners]
    return []


def release_of(path: str) -> tuple[str, str] | None:
    """(crate, version) when `path` is inside a crates.io crate folder (`.../burn-cubecl-0.18.0/src/...`)."""
    for part in path.split("/")[:-1]:
        m = _CRATES_IO.match(part)
        if m:
            return m["crate"], m["version"]
    return None


def package_folders(manifests: dict[str, bytes]) -> dict[str, str]:
    """{package name: its folder} from the Cargo.toml files of a tree (path -> bytes): what maps
    a registry crate folder back to the repository's path. A manifest that is no TOML or names
    no package (a virtual workspace's) is left out; of two manifests naming one package, the
    shallower wins (a vendored copy lies deeper)."""
    out: dict[str, str] = {}
    for path in sorted(manifests, key=lambda p: (p.count("/"), p)):
        try:
            package = tomllib.loads(manifests[path].decode("utf-8")).get("package")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        name = package.get("name") if isinstance(package, dict) else None
        if isinstance(name, str) and name not in out:
            out[name] = path.rsplit("/", 1)[0] if "/" in path else ""
    return out


def repository_path(origin: Origin | None, folders: dict[str, str] | None) -> str | None:
    """The repository path of the panic's file when its origin says it: a git checkout's path
    inside it, or a registry crate's path under the folder its package has at the release."""
    if origin is None:
        return None
    if origin.kind == "git":
        return origin.inner
    if folders is None or origin.package not in folders:
        return None
    folder = folders[origin.package]
    return f"{folder}/{origin.inner}" if folder else origin.inner


def at_location(line: RecordLine, path: str, repo_path: str | None = None, repo: str | None = None) -> bool:
    """Is the record in the file the panic names? With the file's repository path known (and
    its repository), that path exactly; else by the path's forms (see the module doc)."""
    rec = line.record.filePath
    if repo is not None and line.record.repo != repo:
        return False
    if repo_path is not None:
        return rec == repo_path
    if path == rec or path.endswith("/" + rec) or rec.endswith("/" + path.lstrip("./")):
        return True
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        m = _CRATES_IO.match(part)
        if m and m["crate"] == line.facts.crate:
            inner = "/".join(parts[i + 1:])
            if rec.endswith("/" + inner):
                return True
    return False


_OPEN, _CLOSE = "([{", ")]}"
# How far below the macro's line a call may still reach: a call longer than the source window
# ends where the window does.
_CALL_LINES = 40


def call_lines(line: RecordLine) -> tuple[int, int]:
    """The first and last line of the record's call (`panic!(` to its closing bracket), read from
    its source window: Rust reports the macro's position, but a location inside a multi-line
    call (its format arguments' line, by some hooks) is the same call. Strings and chars are
    skipped; a call the window does not close ends at the window's last line. Linear in the window."""
    r = line.record
    rows = r.sourceCode.split("\n")
    first = r.lineNumber - r.sourceCodeStart
    if not 0 <= first < len(rows):
        return r.lineNumber, r.lineNumber
    depth, i, j = 0, first, max(0, line.facts.column - 1)
    in_str = False
    while i < len(rows) and i - first <= _CALL_LINES:
        row = rows[i]
        while j < len(row):
            ch = row[j]
            if in_str:
                if ch == "\\":
                    j += 1
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == "'" and j + 2 < len(row) and (row[j + 2] == "'" or row[j + 1] == "\\"):
                close = row.find("'", j + 2)
                j = close if close > 0 else j
            elif ch == "/" and row.startswith("//", j):
                break
            elif ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                depth -= 1
                if depth <= 0:
                    return r.lineNumber, r.sourceCodeStart + i
            j += 1
        i, j = i + 1, 0
    return r.lineNumber, r.sourceCodeStart + min(i, len(rows)) - 1


def line_distance(line: RecordLine, at: int) -> int:
    """Lines between the panic's line and the record's call: 0 inside it."""
    start, end = call_lines(line)
    return 0 if start <= at <= end else min(abs(at - start), abs(at - end))


@dataclass
class Match:
    line: RecordLine
    literal: int
    at_location: bool
    distance: int | None  # lines between the panic's line and the record's, when at its file

    def to_json(self, rank: int) -> dict:
        return {"rank": rank, "literalChars": self.literal, "atPanicLocation": self.at_location,
                "lineDistance": self.distance, **self.line.model_dump(mode="json")}


@dataclass
class Near:
    """A record that does not match the message but comes close: at the panic's file, or sharing
    words with it (`similarity`, the Jaccard index of the two messages' words)."""

    line: RecordLine
    at_location: bool
    distance: int | None
    similarity: float

    def to_json(self, rank: int) -> dict:
        return {"rank": rank, "similarity": round(self.similarity, 3), "atPanicLocation": self.at_location,
                "lineDistance": self.distance, **self.line.model_dump(mode="json")}


@dataclass(frozen=True)
class Place:
    """Where the panic's file is, as far as the paste and its release tell: the release its path
    names, and the file's path in that repository when the release maps it."""

    origin: Origin | None = None
    repo_path: str | None = None

    def here(self, line: RecordLine, panic: Panic) -> bool:
        return panic.path is not None and at_location(line, panic.path, self.repo_path,
                                                      self.origin.repo if self.origin else None)


@dataclass
class Lookup:
    panic: Panic
    matches: list[Match]
    placeholder_only: int  # records that match only because their message is all placeholder
    bad_regex: list[str]  # ids of records whose messageRegex is not of the shape extract writes
    closest: list[Near] = field(default_factory=list)  # when nothing matches: the nearest records
    release: tuple[str, str] | None = None  # (crate, version) a crates.io path in the panic names
    place: Place = field(default_factory=Place)
    # When no match is at the panic's location and the best message is many records': the crates
    # they are in, with how many each, most first.
    shared: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class Source:
    """Which records a lookup read: a records file, or a repository at a revision."""

    repo: str  # owner/name ("" for a records file holding none)
    sha: str  # the commit the records are of ("" when a records file holds several or none)
    rev: str = ""  # the revision as asked (a tag, a commit, the pin)
    records_file: str = ""
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        if self.records_file:
            at = f" ({self.repo} at {self.sha[:12]})" if self.repo and self.sha else ""
            return f"the records in {self.records_file}{at}"
        rev = f"{self.rev} ({self.sha[:12]})" if self.rev and not self.sha.startswith(self.rev) else self.sha[:12]
        return f"the records of {self.repo} at {rev}"

    def to_json(self) -> dict:
        return {"repo": self.repo or None, "sha": self.sha or None, "rev": self.rev or None,
                "recordsFile": self.records_file or None}


@dataclass
class Elsewhere:
    """A record of another release that matches a message none at the paste's release does."""

    rev: str
    sha: str
    match: Match
    same_site: RecordLine | None  # the record with the match's id at the paste's release, if any

    def to_json(self) -> dict:
        site = self.same_site
        return {"rev": self.rev, "sha": self.sha, "match": self.match.to_json(1),
                "atPasteRelease": (None if site is None else {
                    "errorMessage": site.record.errorMessage, "filePath": site.record.filePath,
                    "lineNumber": site.record.lineNumber})}


# How many near records a lookup without a match suggests, and how alike a message must be.
CLOSEST = 3
MIN_SIMILARITY = 0.25
_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def closest(panic: Panic, lines: list[RecordLine], limit: int = CLOSEST, place: Place = Place()) -> list[Near]:
    """The records nearest a message none matches: those at the panic's file first (nearest line
    first), then those whose message shares the most words with it. One pass over the records,
    each record's words looked up in the panic's, so the time is linear in the records and the panic."""
    wanted = _words(panic.message)
    near: list[Near] = []
    for ln in lines:
        here = place.here(ln, panic)
        segments = literal_segments(ln.facts.messageRegex)
        words = _words(" ".join(segments)) if segments is not None else set()
        # Counted from the record's side: a long pasted text costs once, not once per record.
        common = sum(1 for w in words if w in wanted)
        union = len(wanted) + len(words) - common
        similarity = common / union if union else 0.0
        if here or similarity >= MIN_SIMILARITY:
            distance = line_distance(ln, panic.line) if here and panic.line is not None else None
            near.append(Near(ln, here, distance, similarity))
    return heapq.nsmallest(limit, near, key=lambda n: (not n.at_location, n.distance or 0, -n.similarity,
                                                       n.line.record.filePath, n.line.record.lineNumber))


# A message at least this many records share is said to be shared, with the crates it is in.
SHARED = 5


def lookup(panic: Panic, lines: list[RecordLine], place: Place = Place()) -> Lookup:
    """Records whose messageRegex matches the panic's message, best first (see the module doc).
    Spaces around a pasted message are forgiven: a record matches the text as given or trimmed."""
    texts = list(dict.fromkeys([panic.message, panic.message.strip()]))
    matches: list[Match] = []
    placeholder_only = 0
    bad: list[str] = []
    for ln in lines:
        matcher = message_matcher(ln.facts.messageRegex)
        if matcher is None:
            bad.append(ln.record.id)
            continue
        if not any(matcher(t) for t in texts):
            continue
        here = place.here(ln, panic)
        literal = literal_length(ln.facts.messageRegex)
        if literal == 0 and not here:
            placeholder_only += 1
            continue
        distance = line_distance(ln, panic.line) if here and panic.line is not None else None
        matches.append(Match(ln, literal, here, distance))
    matches.sort(key=lambda m: (not m.at_location, m.distance if m.distance is not None else 0, -m.literal,
                                m.line.record.filePath, m.line.record.lineNumber))
    near = [] if matches else closest(panic, lines, place=place)
    release = release_of(panic.path) if panic.path else None
    return Lookup(panic, matches, placeholder_only, bad, near, release, place, shared_by(matches))


def shared_by(matches: list[Match]) -> list[tuple[str, int]]:
    """The crates of the records that share the best match's message, with how many each, when
    the location does not pick one of them and at least SHARED do (`not implemented`)."""
    if not matches or (matches[0].at_location and matches[0].distance == 0):
        return []
    best = matches[0].line.record.errorMessage
    same = [m.line.facts.crate for m in matches if m.line.record.errorMessage == best]
    return Counter(same).most_common() if len(same) >= SHARED else []


@dataclass(frozen=True)
class Answer:
    """A lookup as its sinks write it: the result, the matches shown (`--limit`), which records
    were read, and a matching record of another release when none at the paste's matches."""

    result: Lookup
    shown: list[Match]
    source: Source | None = None
    elsewhere: Elsewhere | None = None
