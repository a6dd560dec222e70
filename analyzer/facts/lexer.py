"""The one Rust lexer of the facts stage: where the code of a file is, outside its literals and comments.

Every scan over raw bytes that counts delimiters or looks for a keyword (the item braces of a
plan, an enum item's body, a macro call's arguments, a repetition in a macro body) asks this
module for the marks it cares about, so they all agree on what hides a mark: a string (`"..."`,
`b"..."`, `c"..."`), a raw string (`r#"..."#`, `br"..."`, `cr##"..."##`), a char or byte literal
(`'{'`, `b'"'`, `'\\u{7B}'`; a lifetime or a label, `'a`, is code), a line comment (doc comments
included) and a block comment (nested, `/* /* */ */`).

`marks` jumps from one candidate byte to the next by regex, so a scan costs one Python step per
mark or quote or slash, not per byte; `CodeCursor` answers for a few offsets found by other means.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache


class LexError(ValueError):
    """A string, char or comment that does not end before the scan's end: the bytes are not Rust
    this lexer can read, and the caller falls back to something that does not need it."""


_STRING_REST = re.compile(rb'(?:[^"\\]|\\.)*"', re.S)
# `'x'`, `'\n'`, `'\u{7FFF}'`, `'é'` (UTF-8), `b'{'`; a lifetime or label (`'a`, `'outer:`) matches
# nothing here and its quote is passed over.
_CHAR = re.compile(rb"'(?:[^'\\\n]|[\xc0-\xf7][\x80-\xbf]{1,3}|\\(?:u\{[0-9A-Fa-f_]{1,8}\}|x[0-9A-Fa-f]{2}|[^\n]))'")
# Before a `"`: `r`, `br` or `cr` and the hashes of a raw string (`r#"..."#`), not an identifier's end.
_RAW_PREFIX = re.compile(rb"(?:^|[^\w])[bc]?r(#*)$")
_RAW_PREFIX_REACH = 260  # `r` plus up to 255 hashes, as rustc allows, and the byte before
_BLOCK_COMMENT = re.compile(rb"/\*|\*/")

BRACES = rb"[{}]"
DELIMITERS = rb"[()\[\]{}]"


_HIDERS = frozenset(b"\"'/")  # the first bytes of what may hide marks
_HIDER = re.compile(rb"""["'/]""")


@cache
def _scanner(pattern: bytes) -> re.Pattern[bytes]:
    # A class of single bytes merges with the hiders' into one class, which the regex engine
    # matches by a fast scan; an alternation it tries at every byte.
    if _CLASS.fullmatch(pattern):
        return re.compile(pattern[:-1] + rb"""\"'/]""")
    return re.compile(pattern + rb"""|["'/]""")


_CLASS = re.compile(rb"\[(?:[^\]\\]|\\.)+\]")


def _past(source: bytes | bytearray, at: int, start: int, end: int) -> int:
    """Just past the literal or comment that the quote or slash at `at` opens, or `at + 1` when it
    opens none (a lifetime's quote, a division). `start` bounds the look back for a raw string's
    prefix, `end` the look ahead."""
    c = source[at]
    if c == 0x22:  # "
        raw = None
        if at > start and source[at - 1] in b"r#":
            raw = _RAW_PREFIX.search(source, max(start, at - _RAW_PREFIX_REACH), at)
        if raw is not None:
            close = source.find(b'"' + raw.group(1), at + 1, end)
            if close < 0:
                raise LexError(f"raw string at byte {at} does not end")
            return close + 1 + len(raw.group(1))
        rest = _STRING_REST.match(source, at + 1, end)
        if rest is None:
            raise LexError(f"string at byte {at} does not end")
        return rest.end()
    if c == 0x27:  # '
        char = _CHAR.match(source, at, end)
        return at + 1 if char is None else char.end()
    after = source[at + 1:at + 2] if at + 1 < end else b""
    if after == b"/":  # a line comment, doc comments included
        newline = source.find(b"\n", at, end)
        return end if newline < 0 else newline
    if after == b"*":  # a block comment; they nest
        nesting, pos = 1, at + 2
        while nesting:
            mark = _BLOCK_COMMENT.search(source, pos, end)
            if mark is None:
                raise LexError(f"block comment at byte {at} does not end")
            nesting += 1 if source[mark.start()] == 0x2F else -1
            pos = mark.end()
        return pos
    return at + 1


def marks(source: bytes | bytearray, pattern: bytes, start: int = 0, end: int | None = None) -> Iterator[int]:
    """The offset of every match of `pattern` in source[start:end] that lies in code, in order.
    `pattern` must not match a quote or a slash. Raises LexError at a literal or comment left
    open before `end`; the marks before it are yielded first."""
    end = len(source) if end is None else end
    skip = start  # the end of the last literal or comment: matches before it are inside it
    for m in _scanner(pattern).finditer(source, start, end):
        at = m.start()
        if at < skip:
            continue
        if source[at] in _HIDERS:
            skip = _past(source, at, start, end)
        else:
            yield at


# One token of a scan for braces: a brace, or a whole plain string, line comment or char literal
# (most of what hides a brace), or else the single byte that may open a literal or comment, which
# _past reads. Every alternative starts with a literal byte, so the regex engine skips to the next
# of those bytes by a scan of its own.
_BRACE_TOKEN = re.compile(rb"""\{|\}|"(?:[^"\\]|\\.)*"|//[^\n]*|""" + _CHAR.pattern + rb"""|"|'|/""", re.S)


def code_braces(source: bytes | bytearray) -> list[int]:
    """`list(marks(source, BRACES))`, with one Python step per brace or literal or comment and
    no call for the plain ones. Raises LexError as marks does (with no marks yielded first)."""
    out: list[int] = []
    search = _BRACE_TOKEN.search
    n = len(source)
    pos = 0
    while (m := search(source, pos)) is not None:
        at = m.start()
        c = source[at]
        if c == 0x7B or c == 0x7D:  # { }
            out.append(at)
            pos = at + 1
        elif c == 0x27:  # a char literal, or a lifetime's quote
            pos = m.end()
        elif c == 0x22:  # a string; a raw one, or one left open, is _past's to read
            end = m.end()
            plain = end - at > 1 and (at == 0 or source[at - 1] not in b"r#")
            pos = end if plain else _past(source, at, 0, n)
        else:  # a line comment, or a slash that may open a block comment
            end = m.end()
            pos = end if end - at > 1 or source[at + 1:at + 2] != b"*" else _past(source, at, 0, n)
    return out


class CodeCursor:
    """Whether offsets, asked in increasing order, lie in code, lexing each byte of the file once:
    for a few candidates found by a fast search (`enum Name`), where lexing every candidate byte
    by byte would cost more than the search."""

    def __init__(self, source: bytes):
        self.source = source
        self.pos = 0  # lexed up to here
        self.skip = 0  # the end of the last literal or comment

    def in_code(self, at: int) -> bool:
        """Whether `at` lies outside every literal and comment. Raises LexError at a literal or
        comment before `at` that does not end."""
        src, n = self.source, len(self.source)
        for m in _HIDER.finditer(src, self.pos, at):
            if m.start() >= self.skip:
                self.skip = _past(src, m.start(), 0, n)
        self.pos = max(self.pos, at)
        return at >= self.skip

    def resume(self, at: int) -> None:
        """Go on from `at`, an offset in code that the caller lexed up to by other means."""
        self.pos = self.skip = at


_PAIRS = {0x7B: 0x7D, 0x28: 0x29, 0x5B: 0x5D}  # { } ( ) [ ]


def matching_close(source: bytes | bytearray, open_at: int, end: int | None = None) -> int:
    """Index of the delimiter closing the `{`, `(` or `[` at open_at (any kind of delimiter
    nested inside counts), or -1 when it does not close before `end` or the bytes do not lex."""
    depth = 0
    try:
        for at in marks(source, DELIMITERS, open_at, end):
            if source[at] in _PAIRS:
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return at if source[at] == _PAIRS[source[open_at]] else -1
    except LexError:
        return -1
    return -1


def code_size(source: bytes) -> int:
    """How many bytes of `source` lie in code, outside its literals and comments (what a parse
    spends its time on: a comment or a string is one token whatever its length). A file that does
    not lex counts whole."""
    hidden = 0
    skip = 0
    n = len(source)
    try:
        for m in _HIDER.finditer(source):
            at = m.start()
            if at < skip:
                continue
            skip = _past(source, at, 0, n)
            if skip - at > 1:
                hidden += skip - at
    except LexError:
        return n
    return n - hidden
