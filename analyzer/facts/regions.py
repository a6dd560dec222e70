"""Which bytes of a file the parser must read: the items that hold a word the facts need.

A site's facts (its match, its function, the impl, module and test attributes around it) and an
enum's facts lie inside one top-level item. So a file is parsed not whole but as the run of its
items that hold such a word (`panic`, `todo`, `enum`, ...), and an `impl`, `mod` or `trait` holding
one is cut down further to its header, the members of its body that hold one, and its closing
brace. Tree-sitter parses exactly those byte ranges (`Parser.included_ranges`) in the file's own
coordinates, so offsets, rows and columns are the file's and nothing is shifted back.

The items are found by a brace lexer over the raw bytes: braces count unless they sit in a string,
a raw string, a char literal or a comment. It never guesses: a file it cannot lex (an unterminated
string or comment, unbalanced braces) gives no plan, and the caller parses the file whole. The
caller also parses whole when the ranges do not parse cleanly or their items do not lie where the
plan put them (parse.py checks both): the plan can only ever save work, never change a fact.

On burn, this reads 1.1 MB of the 4.6 MB of files that hold a panic-family call (bench/floor.py).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

# What a brace can hide in: a string, a char literal, a comment (`/` starts both kinds).
_LEXEME = re.compile(rb"""[{}"'/]""")
_STRING_REST = re.compile(rb'(?:[^"\\]|\\.)*"', re.S)
# `'x'`, `'\n'`, `'\u{7FFF}'`, `'é'` (UTF-8), `b'{'`; a lifetime or label (`'a`, `'outer:`) matches
# nothing here and its quote is passed over.
_CHAR = re.compile(rb"'(?:[^'\\\n]|[\xc0-\xf7][\x80-\xbf]{1,3}|\\(?:u\{[0-9A-Fa-f_]{1,8}\}|x[0-9A-Fa-f]{2}|[^\n]))'")
# Before a `"`: `r`, `br` or `cr` and the hashes of a raw string (`r#"..."#`), not an identifier's end.
_RAW_PREFIX = re.compile(rb"(?:^|[^\w])[bc]?r(#*)$")
_RAW_PREFIX_REACH = 260  # `r` plus up to 255 hashes, as rustc allows, and the byte before
_BLOCK_COMMENT = re.compile(rb"/\*|\*/")


@dataclass
class Braces:
    """Offsets of the brace pairs that delimit items: each `{` that opens a top-level pair, just
    past each `}` that closes one, and just past each `}` that closes a pair directly inside one
    (the members of an impl, module or trait body)."""

    opens: list[int]
    ends: list[int]
    member_ends: list[int]


# One loop with every lexeme's case inline (noqa: C901): it runs over each byte of every file the
# prefilter keeps, and a function call per string or comment would be paid on all of them.
def braces(source: bytes) -> Braces | None:  # noqa: C901
    """The item braces of a file, or None when it does not lex (then nothing is planned)."""
    opens: list[int] = []
    ends: list[int] = []
    member_ends: list[int] = []
    depth = 0
    skip = 0  # the end of the last string, char or comment: lexemes before it are inside it
    for m in _LEXEME.finditer(source):
        at = m.start()
        if at < skip:
            continue
        c = source[at]
        if c == 0x7B:  # {
            if depth == 0:
                opens.append(at)
            depth += 1
        elif c == 0x7D:  # }
            depth -= 1
            if depth == 0:
                ends.append(at + 1)
            elif depth == 1:
                member_ends.append(at + 1)
            elif depth < 0:
                return None
        elif c == 0x22:  # "
            raw = None
            if at and source[at - 1] in b"r#":
                raw = _RAW_PREFIX.search(source, max(0, at - _RAW_PREFIX_REACH), at)
            if raw is not None:
                close = source.find(b'"' + raw.group(1), at + 1)
                if close < 0:
                    return None
                skip = close + 1 + len(raw.group(1))
            else:
                rest = _STRING_REST.match(source, at + 1)
                if rest is None:
                    return None
                skip = rest.end()
        elif c == 0x27:  # '
            char = _CHAR.match(source, at)
            if char is not None:
                skip = char.end()
        elif source[at + 1:at + 2] == b"/":  # a line comment, doc comments included
            newline = source.find(b"\n", at)
            skip = len(source) if newline < 0 else newline
        elif source[at + 1:at + 2] == b"*":  # a block comment; they nest
            nesting, pos = 1, at + 2
            while nesting:
                mark = _BLOCK_COMMENT.search(source, pos)
                if mark is None:
                    return None
                nesting += 1 if source[mark.start()] == 0x2F else -1
                pos = mark.end()
            skip = pos
    return Braces(opens, ends, member_ends) if depth == 0 else None


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
# An item whose body holds items: an impl, a module, a trait (with visibility, `unsafe`).
_CONTAINER = re.compile(rb"(?:pub(?:\s*\([^)]*\))?\s+)?(?:unsafe\s+)?(?:impl|mod|trait)\b")


def _is_container(header: bytes) -> bool:
    """Whether the text before an item's `{` names an impl, module or trait. A wrong answer costs
    nothing but a fallback: parse.py checks the item is one before it trusts the cut."""
    at = 0
    while (m := _HEADER_NOISE.match(header, at)) is not None and m.end() > at:
        at = m.end()
    return _CONTAINER.match(header, at) is not None


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
        if open_at < end and _is_container(source[start:open_at]):
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
