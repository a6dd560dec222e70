"""Which bytes of a file the parser must read: the items that hold a word the facts need.

A site's facts (its match, its function, the impl, module and test attributes around it) and an
enum's facts lie inside one top-level item. So a file is parsed not whole but as the run of its
items that hold such a word (`panic`, `todo`, `enum`, ...), and an `impl`, `mod` or `trait` holding
one is cut down further to its header, the members of its body that hold one, and its closing
brace. Tree-sitter parses exactly those byte ranges (`Parser.included_ranges`) in the file's own
coordinates, so offsets, rows and columns are the file's and nothing is shifted back.

The items are found by the braces that lexer.py finds in code: braces count unless they sit in a
string, a raw string, a char literal or a comment. It never guesses: a file it cannot lex (an
unterminated string or comment, unbalanced braces) gives no plan, and the caller parses the file whole. The
caller also parses whole when the ranges do not parse cleanly or their items do not lie where the
plan put them (parse.py checks both): the plan can only ever save work, never change a fact.

On burn, this reads 1.1 MB of the 4.6 MB of files that hold a panic-family call (bench/floor.py).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from analyzer.facts import lexer


@dataclass
class Braces:
    """Offsets of the brace pairs that delimit items: each `{` that opens a top-level pair, just
    past each `}` that closes one, and just past each `}` that closes a pair directly inside one
    (the members of an impl, module or trait body); and every brace in code, in order
    (lexer.code_braces), which the skeleton (skeleton.py) walks."""

    opens: list[int]
    ends: list[int]
    member_ends: list[int]
    marks: list[int]


# The last file's braces: a parsed file is lexed for its plan, its skeleton and its ops impls
# (impls.py) otherwise. Kept by identity, and only for bytes, which cannot change.
_last: tuple[bytes, Braces | None] | None = None


def braces(source: bytes) -> Braces | None:
    """The item braces of a file, or None when it does not lex (then nothing is planned). The
    same object for the same bytes object asked twice in a row: callers must not change it."""
    global _last
    if _last is not None and _last[0] is source:
        return _last[1]
    lexed = _braces(source)
    if type(source) is bytes:
        _last = (source, lexed)
    return lexed


def _braces(source: bytes) -> Braces | None:
    opens: list[int] = []
    ends: list[int] = []
    member_ends: list[int] = []
    depth = 0
    try:
        marks = lexer.code_braces(source)
    except lexer.LexError:
        return None
    for at in marks:
        if source[at] == 0x7B:  # {
            if depth == 0:
                opens.append(at)
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                ends.append(at + 1)
            elif depth == 1:
                member_ends.append(at + 1)
            elif depth < 0:
                return None
    return Braces(opens, ends, member_ends, marks) if depth == 0 else None


@dataclass
class Plan:
    """Byte ranges to parse, in order, none touching another; and the containers cut down to
    their header, some members and their closing brace, as (header start, `{` offset, `}` offset)."""

    ranges: list[tuple[int, int]]
    containers: list[tuple[int, int, int]]

    @property
    def size(self) -> int:
        return sum(end - start for start, end in self.ranges)


# What may stand before a container's keyword: white space, comments, attributes, and items that
# end in `;` with no string in them (`use a::b;`, `mod c;`, `type D = E;`).
_HEADER_NOISE = re.compile(
    rb'\s+|//[^\n]*|/\*.*?\*/|#!?\[(?:[^\[\]"]|"(?:[^"\\]|\\.)*"|\[[^\[\]]*\])*\]|[^;"/#{}]+;', re.S)
# A run of it, read by one match: nothing follows the repetition, so the engine never goes back
# into it, and each step takes what one match of _HEADER_NOISE takes (none matches empty).
_HEADER_NOISE_RUN = re.compile(rb"(?:" + _HEADER_NOISE.pattern + rb")*", re.S)
# An item whose body holds items: an impl, a module, a trait (with visibility, `unsafe`).
_CONTAINER = re.compile(rb"(?:pub(?:\s*\([^)]*\))?\s+)?(?:unsafe\s+)?(?:impl|mod|trait)\b")


def keyword_at(source: bytes, start: int, end: int) -> int:
    """Where the item whose header is source[start:end] starts: past the white space, comments,
    attributes and `;` items before its keyword."""
    m = _HEADER_NOISE_RUN.match(source, start, end)
    return start if m is None else m.end()


def _is_container(source: bytes, start: int, end: int) -> bool:
    """Whether the header source[start:end] (the text before an item's `{`) names an impl, module
    or trait. A wrong answer costs nothing but a fallback: parse.py checks the item is one before
    it trusts the cut."""
    return _CONTAINER.match(source, keyword_at(source, start, end), end) is not None


_SPACE_THEN_SEMICOLON = re.compile(rb"[ \t\r\n]*;")


def _past_semicolon(source: bytes, end: int) -> int:
    """`end`, or just past a `;` that follows it (`use a::{b, c};`, `const X: S = S { .. };`)."""
    m = _SPACE_THEN_SEMICOLON.match(source, end)
    return m.end() if m is not None else end


def _holding(bounds: list[int], hits: list[int]) -> list[tuple[int, int]]:
    """The pieces [bounds[i], bounds[i+1]) holding a hit; both lists sorted."""
    out = []
    k = 0
    for start, end in zip(bounds, bounds[1:]):
        while k < len(hits) and hits[k] < start:
            k += 1
        if k < len(hits) and hits[k] < end:
            out.append((start, end))
    return out


def _add(ranges: list[tuple[int, int]], start: int, end: int) -> None:
    if ranges and ranges[-1][1] == start:
        ranges[-1] = (ranges[-1][0], end)
    else:
        ranges.append((start, end))


def plan(source: bytes, hits: list[int]) -> Plan | None:
    """The ranges that hold the offsets `hits` (sorted), whole items each, or None when the file
    does not lex. A piece runs from the end of one top-level item to the end of the next (so it
    holds the item's attributes and doc comments, and any `;`-ended items before it)."""
    lexed = braces(source)
    if lexed is None or not hits:
        return None
    n = len(source)
    bounds = [0] + [_past_semicolon(source, e) for e in lexed.ends]
    if bounds[-1] != n:
        bounds.append(n)
    ranges: list[tuple[int, int]] = []
    containers: list[tuple[int, int, int]] = []
    for start, end in _holding(bounds, hits):
        i = bisect.bisect_left(lexed.opens, start)
        open_at = lexed.opens[i] if i < len(lexed.opens) else n
        if open_at < end and _is_container(source, start, open_at):
            close = lexed.ends[bisect.bisect_right(lexed.ends, open_at)] - 1
            lo = bisect.bisect_right(lexed.member_ends, open_at)
            hi = bisect.bisect_right(lexed.member_ends, close)
            members = [open_at + 1] + [_past_semicolon(source, e) for e in lexed.member_ends[lo:hi]]
            if members[-1] != close:
                members.append(close)
            containers.append((start, open_at, close))
            _add(ranges, start, open_at + 1)
            for s, e in _holding(members, hits):
                _add(ranges, s, e)
            _add(ranges, close, end)
            continue
        _add(ranges, start, end)
    return Plan(ranges, containers)
