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
from dataclasses import dataclass, field

from analyzer.facts.messages import MESSAGE_TAIL
from analyzer.records.model import RecordLine

# What Rust prints after the message.
_TRAILER = re.compile(r"\r?\n(?:note: run with `RUST_BACKTRACE=|note: Some details are omitted|stack backtrace:)")
_CRATES_IO = re.compile(r"^(?P<crate>[A-Za-z0-9_-]+?)-(?P<version>\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)$")
_HEAD = "thread '"
_PANICKED = "' panicked at "


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
    if panic.path is None and "\\n" in text and "\n" not in text.strip("\r\n"):
        unescaped = text.replace("\\r\\n", "\n").replace("\\n", "\n")
        again = _parse_panic(unescaped)
        if again.path is not None or _TRAILER.search(unescaped):
            return again
    return panic


def _parse_panic(text: str) -> Panic:
    """The message (and location) of `text` as Rust prints a panic.

    Rust 1.73 and later print `thread 'main' panicked at src/x.rs:12:5:` and the message on the
    next lines; earlier versions `thread 'main' panicked at 'message', src/x.rs:12:5`, the message
    possibly spanning lines. Read line by line with `str` methods, one pass over the text, so a
    pasted header of any length is read in linear time."""
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    for i, line in enumerate(lines):  # Rust >= 1.73
        rest = _after_header(line)
        stripped = rest.rstrip(" \t\r") if rest is not None else ""
        loc = _location(stripped[:-1]) if stripped.endswith(":") else None
        if loc is None:
            continue
        body = text[offsets[i] + len(line) + 1:] if i + 1 < len(lines) else ""
        t = _TRAILER.search("\n" + body)
        message = body[:t.start() - 1] if t and t.start() > 0 else ("" if t else body)
        return Panic(message.rstrip("\n"), _norm(loc[0]), loc[1], loc[2])
    for i, line in enumerate(lines):  # Rust < 1.73: the last line that ends in `', PATH:LINE:COL`
        rest = _after_header(line)
        if rest is None or not rest.startswith("'"):
            continue
        for j in range(len(lines) - 1, i - 1, -1):
            tail = lines[j].rstrip(" \t\r") if j > i else rest.rstrip(" \t\r")
            start = 0 if j > i else 1
            cut = tail.rfind("', ", start)
            loc = _location(tail[cut + 3:]) if cut >= 0 else None
            if loc is None:
                continue
            if j == i:
                message = rest[1:cut]
            else:
                head = rest[1:]
                message = "\n".join([head, *lines[i + 1:j], tail[:cut]])
            return Panic(message, _norm(loc[0]), loc[1], loc[2])
        break
    t = _TRAILER.search(text)
    return Panic((text[:t.start()] if t else text).strip("\n"))


def _after_header(line: str) -> str | None:
    """What follows `thread '<name>' panicked at ` on a panic's first line, else None."""
    if not line.startswith(_HEAD):
        return None
    at = line.find(_PANICKED, len(_HEAD))
    return None if at < 0 else line[at + len(_PANICKED):]


def _location(text: str) -> tuple[str, int, int] | None:
    """`PATH:LINE:COL` as (path, line, column), else None."""
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or not parts[0] or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    if not parts[1].isascii() or not parts[2].isascii():
        return None
    return parts[0], int(parts[1]), int(parts[2])


def _norm(path: str) -> str:
    return path.strip().replace("\\", "/")


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


def release_of(path: str) -> tuple[str, str] | None:
    """(crate, version) when `path` is inside a crates.io crate folder (`.../burn-cubecl-0.18.0/src/...`)."""
    for part in path.split("/")[:-1]:
        m = _CRATES_IO.match(part)
        if m:
            return m["crate"], m["version"]
    return None


def at_location(line: RecordLine, path: str) -> bool:
    """Is the record in the file the panic names? (see the module doc for the path forms)"""
    rec = line.record.filePath
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


@dataclass
class Lookup:
    panic: Panic
    matches: list[Match]
    placeholder_only: int  # records that match only because their message is all placeholder
    bad_regex: list[str]  # ids of records whose messageRegex is not of the shape extract writes
    closest: list[Near] = field(default_factory=list)  # when nothing matches: the nearest records
    release: tuple[str, str] | None = None  # (crate, version) a crates.io path in the panic names


# How many near records a lookup without a match suggests, and how alike a message must be.
CLOSEST = 3
MIN_SIMILARITY = 0.25
_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def closest(panic: Panic, lines: list[RecordLine], limit: int = CLOSEST) -> list[Near]:
    """The records nearest a message none matches: those at the panic's file first (nearest line
    first), then those whose message shares the most words with it. One pass over the records,
    each record's words looked up in the panic's, so the time is linear in the records and the panic."""
    wanted = _words(panic.message)
    near: list[Near] = []
    for ln in lines:
        here = panic.path is not None and at_location(ln, panic.path)
        segments = literal_segments(ln.facts.messageRegex)
        words = _words(" ".join(segments)) if segments is not None else set()
        # Counted from the record's side: a long pasted text costs once, not once per record.
        common = sum(1 for w in words if w in wanted)
        union = len(wanted) + len(words) - common
        similarity = common / union if union else 0.0
        if here or similarity >= MIN_SIMILARITY:
            distance = abs(ln.record.lineNumber - panic.line) if here and panic.line is not None else None
            near.append(Near(ln, here, distance, similarity))
    return heapq.nsmallest(limit, near, key=lambda n: (not n.at_location, n.distance or 0, -n.similarity,
                                                       n.line.record.filePath, n.line.record.lineNumber))


def lookup(panic: Panic, lines: list[RecordLine]) -> Lookup:
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
        here = panic.path is not None and at_location(ln, panic.path)
        literal = literal_length(ln.facts.messageRegex)
        if literal == 0 and not here:
            placeholder_only += 1
            continue
        distance = abs(ln.record.lineNumber - panic.line) if here and panic.line is not None else None
        matches.append(Match(ln, literal, here, distance))
    matches.sort(key=lambda m: (not m.at_location, m.distance if m.distance is not None else 0, -m.literal,
                                m.line.record.filePath, m.line.record.lineNumber))
    near = [] if matches else closest(panic, lines)
    return Lookup(panic, matches, placeholder_only, bad, near, release_of(panic.path) if panic.path else None)
