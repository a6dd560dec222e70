"""Lookup: which record a runtime panic comes from.

The input is the message a user saw (`conv3d: unsupported dtype I8`) or the whole panic as Rust
prints it, with the location:

    thread 'main' panicked at crates/burn-flex/src/ops/module.rs:257:22:      (Rust 1.73 and later)
    conv3d: unsupported dtype I8
    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

    thread 'main' panicked at 'conv3d: unsupported dtype I8', src/ops/module.rs:257:22   (before 1.73)

A record matches when its `analysis.messageRegex` matches the whole message (`re.fullmatch`,
DOTALL). Matches are ranked:

1. a record at the panic's file first (nearest line first) when the input gives a location. The
   location may be a path inside the repository, an absolute path in a clone
   (`/home/me/burn/crates/...`), or a crates.io path (`.../burn-flex-0.19.0/src/ops/module.rs`:
   crate `burn-flex`, path `src/ops/module.rs` inside it);
2. then the most literal characters (the message's text outside its placeholders): the record
   that explains more of the message is the better guess;
3. then file and line, so the order is stable.

A record whose message is only a placeholder (`panic!("{msg}")`) matches any text and says
nothing; it is shown only when it sits at the panic's file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .record import RecordLine

# Rust >= 1.73: `thread 'main' panicked at src/x.rs:12:5:` then the message on the next lines.
_NEW_HEADER = re.compile(r"^thread '(?P<thread>.*?)' panicked at (?P<path>.+?):(?P<line>\d+):(?P<col>\d+):[ \t]*\r?$",
                         re.M)
# Rust < 1.73: `thread 'main' panicked at 'message', src/x.rs:12:5`.
_OLD_HEADER = re.compile(r"^thread '(?P<thread>.*?)' panicked at '(?P<message>.*)', (?P<path>[^\n]+?):(?P<line>\d+):"
                         r"(?P<col>\d+)[ \t]*\r?$", re.M | re.S)
# What Rust prints after the message.
_TRAILER = re.compile(r"\r?\n(?:note: run with `RUST_BACKTRACE=|note: Some details are omitted|stack backtrace:)")
_CRATES_IO = re.compile(r"^(?P<crate>[A-Za-z0-9_-]+?)-(?P<version>\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)$")


@dataclass(frozen=True)
class Panic:
    """A panic as the user gave it: the message, and the location when the panic line says it."""

    message: str
    path: str | None = None
    line: int | None = None
    column: int | None = None


def parse_panic(text: str) -> Panic:
    """Read the message (and location) out of what the user pasted."""
    text = text.replace("\r\n", "\n")
    m = _NEW_HEADER.search(text)
    if m:
        rest = text[m.end():]
        rest = rest[1:] if rest.startswith("\n") else rest
        t = _TRAILER.search(rest)
        message = rest[:t.start()] if t else rest
        return Panic(message.rstrip("\n"), _norm(m["path"]), int(m["line"]), int(m["col"]))
    m = _OLD_HEADER.search(text)
    if m:
        return Panic(m["message"], _norm(m["path"]), int(m["line"]), int(m["col"]))
    t = _TRAILER.search(text)
    return Panic((text[:t.start()] if t else text).strip("\n"))


def _norm(path: str) -> str:
    return path.strip().replace("\\", "/")


def literal_length(regex: str) -> int:
    """Characters a full match of `regex` spells out literally: the message outside its
    placeholders. Counts escaped and plain characters; anchors and `.*?` count nothing."""
    n, i = 0, 0
    body = regex[1:] if regex.startswith("^") else regex
    body = body[:-1] if body.endswith("$") and not body.endswith("\\$") else body
    while i < len(body):
        if body.startswith(".*?", i):
            i += 3
        elif body[i] == "\\" and i + 1 < len(body):
            n += 1
            i += 2
        else:
            n += 1
            i += 1
    return n


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
class Lookup:
    panic: Panic
    matches: list[Match]
    placeholder_only: int  # records that match only because their message is all placeholder
    bad_regex: list[str]  # ids of records whose messageRegex does not compile


def lookup(panic: Panic, lines: list[RecordLine]) -> Lookup:
    """Records whose messageRegex matches the panic's message, best first (see the module doc).
    Spaces around a pasted message are forgiven: a record matches the text as given or trimmed."""
    texts = list(dict.fromkeys([panic.message, panic.message.strip()]))
    matches: list[Match] = []
    placeholder_only = 0
    bad: list[str] = []
    for ln in lines:
        try:
            rx = re.compile(ln.facts.messageRegex, re.S)
        except re.error:
            bad.append(ln.record.id)
            continue
        if not any(rx.fullmatch(t) for t in texts):
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
    return Lookup(panic, matches, placeholder_only, bad)
