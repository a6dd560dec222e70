"""What a panic prints: Rust string literals decoded as rustc does, format strings split into
literal text and placeholders, and the regex that matches the runtime message."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Prefix the standard library puts in front of the message of each macro.
MACRO_PREFIX = {"panic": "", "unimplemented": "not implemented", "todo": "not yet implemented",
                "unreachable": "internal error: entered unreachable code",
                "assert": "", "assert_eq": "assertion `left == right` failed",
                "assert_ne": "assertion `left != right` failed", "expect": ""}
# What the standard library prints after the message: `.expect(m)` on a Result prints `m: <the
# error>` (on an Option, `m` alone); a failed assert_eq!/assert_ne! prints the two values on the
# lines below (`  left: 1`). A regex for the runtime message accepts them.
MESSAGE_TAIL = {"expect": "(?:: .*)?", "assert_eq": "(?:\n.*)?", "assert_ne": "(?:\n.*)?"}
EMPTY_MESSAGE = {"panic": "explicit panic", "unimplemented": "not implemented",
                 "todo": "not yet implemented",
                 "unreachable": "internal error: entered unreachable code"}

_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "0": "\0", "'": "'", '"': '"'}
_RAW = re.compile(r'^(?:b|c)?r(#*)"(.*)"\1$', re.S)
_COOKED = re.compile(r'^(?:b|c)?"(.*)"$', re.S)


class LiteralError(ValueError):
    """The text is not a Rust string literal rustc would accept."""


_HEX = frozenset("0123456789abcdefABCDEF")


def _hex_escape(body: str, i: int, byte_literal: bool) -> str:
    """The character of the `\\xNN` escape at `body[i]` (above 0x7F only in a byte literal)."""
    digits = body[i + 2:i + 4]
    if len(digits) != 2 or not all(c in _HEX for c in digits):
        raise LiteralError("bad \\x escape")
    value = int(digits, 16)
    if value > 0x7F and not byte_literal:
        raise LiteralError("\\x escape above 0x7F")
    return chr(value)


def _unicode_escape(body: str, i: int) -> tuple[str, int]:
    """The character of the `\\u{...}` escape at `body[i]`, and where the text goes on after it."""
    close = body.find("}", i)
    if body[i + 2:i + 3] != "{" or close < 0:
        raise LiteralError("bad \\u escape")
    digits = body[i + 3:close].replace("_", "")
    if not 1 <= len(digits) <= 6 or not all(c in _HEX for c in digits):
        raise LiteralError("bad \\u escape")
    value = int(digits, 16)
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        raise LiteralError("\\u escape is not a scalar value")
    return chr(value), close + 1


def decode_string_literal(text: str) -> str:
    """Decode a Rust string literal (`"..."`, `r#"..."#`, `b"..."`, `c"..."`) to its value.

    Follows the Rust reference: simple escapes, `\\x` (at most 0x7F in str literals), `\\u{...}`
    (1-6 hex digits, `_` allowed, no surrogates), and `\\` before a newline skips the newline and
    all following whitespace (space, tab, line feed, carriage return). A bare CR-LF inside a
    literal is read as LF, as rustc normalises line endings first.
    """
    m = _RAW.match(text)
    if m:
        return m.group(2).replace("\r\n", "\n")
    m = _COOKED.match(text)
    if not m:
        raise LiteralError(f"not a string literal: {text[:40]!r}")
    body = m.group(1).replace("\r\n", "\n")
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            raise LiteralError("dangling backslash")
        nxt = body[i + 1]
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
        elif nxt == "\n":
            i += 2
            while i < n and body[i] in " \t\n\r":
                i += 1
        elif nxt == "x":
            out.append(_hex_escape(body, i, text.startswith("b")))
            i += 4
        elif nxt == "u":
            ch, i = _unicode_escape(body, i)
            out.append(ch)
        else:
            raise LiteralError(f"unknown escape \\{nxt}")
    return "".join(out)


_META = re.compile(r"([.^$*+?{}\[\]\\|()])")


def _escape(text: str) -> str:
    """Escape only regex metacharacters, so the pattern reads the same in Python, JavaScript
    and PCRE (re.escape also escapes spaces and `-`, which some engines reject)."""
    return _META.sub(r"\\\1", text)


@dataclass(frozen=True)
class Segment:
    """A piece of a format string: literal text, or a placeholder as written (`{:?}`)."""

    text: str
    placeholder: bool


def split_format(fmt: str) -> list[Segment]:
    """Split a format string into literal text and `{...}` placeholders; `{{`/`}}` print braces."""
    segs: list[Segment] = []
    buf: list[str] = []
    i, n = 0, len(fmt)
    while i < n:
        ch = fmt[i]
        if ch == "{" and fmt.startswith("{{", i):
            buf.append("{")
            i += 2
        elif ch == "}" and fmt.startswith("}}", i):
            buf.append("}")
            i += 2
        elif ch == "{":
            close = fmt.find("}", i)
            if close < 0:  # not a valid format string; keep the rest as text
                buf.append(fmt[i:])
                break
            if buf:
                segs.append(Segment("".join(buf), False))
                buf = []
            segs.append(Segment(fmt[i:close + 1], True))
            i = close + 1
        else:
            buf.append(ch)
            i += 1
    if buf:
        segs.append(Segment("".join(buf), False))
    return segs


@dataclass(frozen=True)
class PanicMessage:
    """The message a site prints, as the record's `errorMessage` holds it, and its parts."""

    text: str
    segments: tuple[Segment, ...]

    @property
    def regex(self) -> str:
        """A regex (full match, DOTALL) for the runtime message: placeholders match any text."""
        parts = [".*?" if s.placeholder else _escape(s.text) for s in self.segments]
        return "^" + "".join(parts) + "$"

    def runtime_regex(self, macro: str) -> str:
        """`regex` with what the standard library prints after the message of `macro`'s call
        (MESSAGE_TAIL) allowed as an optional tail."""
        return self.regex[:-1] + MESSAGE_TAIL.get(macro, "") + "$"

    @property
    def literal_length(self) -> int:
        return sum(len(s.text) for s in self.segments if not s.placeholder)


def build_message(macro: str, format_string: str | None, args_text: str | None = None) -> PanicMessage:
    """The message of `macro!(format_string, ...)`; `format_string` None means no arguments.

    `args_text` is the source of a first argument that is not a string literal (2018-style
    `panic!(msg)`): the message is then that value, shown as the placeholder `{msg}`.
    """
    if format_string is None and args_text is None:
        text = EMPTY_MESSAGE[macro]
        return PanicMessage(text, (Segment(text, False),))
    if format_string is None:
        segs = [Segment("{" + (args_text or "") + "}", True)]
    else:
        segs = split_format(format_string)
    prefix = MACRO_PREFIX[macro]
    if prefix:
        segs = [Segment(prefix + ": ", False), *segs]
    # Merge neighbouring literal segments so `segments` is canonical.
    merged: list[Segment] = []
    for s in segs:
        if merged and not s.placeholder and not merged[-1].placeholder:
            merged[-1] = Segment(merged[-1].text + s.text, False)
        else:
            merged.append(s)
    # Literal braces show as printed (`{{` prints `{`); placeholders stay as written.
    text = "".join(s.text for s in merged)
    return PanicMessage(text, tuple(merged))
