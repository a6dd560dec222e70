"""Token trees read as Rust: a macro call's arguments or a macro_rules body, which tree-sitter
leaves unparsed, turned into a function body on the file's own rows for a shadow parse."""

from __future__ import annotations

import re

from analyzer.facts import lexer
from analyzer.facts.syntax import _blanked

# Prefix that turns a token tree into a function body for the shadow parse. It has no newline,
# so every row in the shadow is the row of the original file.
_SHADOW_PREFIX = b"fn __m()"
# `$x`, `$crate`, `$(...)` in macro_rules and `#x`, `#(...)` in quote! become `_x`, `_(...)`:
# same length, still Rust tree-sitter can read.
_METAVAR = re.compile(rb"[$#](?=[A-Za-z_(])")


def _shadow(source: bytes, start: int, end: int) -> tuple[bytes, int]:
    """One token tree as Rust a parser reads: behind `fn __m()`, on the file's own row and column
    (the lines before it kept as bare newlines), its delimiters turned into a block, repetitions
    unrolled once and metavariables turned into identifiers (same lengths). Returns the shadow
    and the offset to subtract from a shadow byte to get the file's byte."""
    mid = bytearray(source[start:end])
    _unwrap_repetitions(mid)
    mid = bytearray(_LONE_INTERPOLATION.sub(_blanked, bytes(mid)))
    mid = bytearray(_METAVAR.sub(b"_", bytes(mid)))
    mid[0:1] = b"{"
    mid[-1:] = b"}"
    line_start = source.rfind(b"\n", 0, start) + 1
    rows = source.count(b"\n", 0, line_start)
    lead = _SHADOW_PREFIX + b"\n" * rows + b" " * (start - line_start)
    return lead + bytes(mid), len(lead) - start


# An interpolation alone on its line (`#ad_tag_arm`, `$($arms)*` after unwrapping) stands for
# whole arms or statements; left in, it would break the parse of the arms around it.
_LONE_INTERPOLATION = re.compile(rb"(?m)^[ \t]*[$#][A-Za-z_][A-Za-z0-9_]*[ \t]*,?[ \t]*$")


def _unwrap_repetitions(buf: bytearray) -> None:
    """Blank the wrapper of every `$( ... ) sep? op` / `#( ... ) sep? op` repetition in place,
    keeping its content once: `$( A::$v => x, )*` reads as the arm `A::$v => x,`."""
    i = 0
    n = len(buf)
    while i < n - 1:
        if buf[i] in b"$#" and buf[i + 1] == ord("("):
            close = lexer.matching_close(buf, i + 1)
            if close < 0:
                i += 1
                continue
            j = close + 1
            # Optional separator token (`,` `;` `|` ...) then the repetition operator.
            k = j
            while k < n and buf[k] in b" \t":
                k += 1
            if k < n and buf[k] in b"*+?":
                op_end = k + 1
            elif k + 1 < n and buf[k] in b",;|&" and buf[k + 1] in b"*+?":
                op_end = k + 2
            else:
                i += 1
                continue
            buf[i:i + 2] = b"  "
            for p in range(close, op_end):
                if buf[p] != 10:
                    buf[p] = 32
            i += 2
            continue
        i += 1
