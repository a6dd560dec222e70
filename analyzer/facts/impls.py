"""Which methods each `impl <..Ops> for Type` of a file defines, read from its bytes without a parse.

Extract needs this of every file, parsed or not: a trait's default method that panics is hit by
every backend whose impl of the trait leaves the method out, and most impl files hold no
panic-family call, so the parser never sees them. The item braces come from regions.braces (the
one lexer), so braces in strings and comments do not count; an impl inside a module or written
by a macro is not read.
"""

from __future__ import annotations

import bisect
import re
from functools import cache

from analyzer.facts import lexer, regions
from analyzer.facts.prefilter import finditer_at_a_word
from analyzer.profiles import Profile

# `impl<..> path::NameOps<..> for Type<..> where ..`, after the attributes and `;` items before it.
_NAME = rb"[A-Za-z_][A-Za-z0-9_]*"
_FN = re.compile(rb"\bfn\s+(" + _NAME + rb")")
_HIDERS = frozenset(b"\"'/")


# Keyed by the suffix, not cached bare: a process (a test session, a run that changes target) reads
# trees of several targets, and a pattern compiled for the first one must not serve the next.
@cache
def _ops_impl_hint(ops_suffix: str) -> re.Pattern[bytes]:
    """`NameOps<..> for`: starts with the literal suffix, which the regex engine finds by a fast
    scan; most files hold none."""
    suffix = re.escape(ops_suffix).encode()
    return re.compile(suffix + rb"\b\s*(?:<[^;{]*?>\s*)?for\b")


@cache
def _impl_header(ops_suffix: str) -> re.Pattern[bytes]:
    suffix = re.escape(ops_suffix).encode()
    return re.compile(rb"(?:unsafe\s+)?impl\b(?:\s*<.*?>)?\s*(?:" + _NAME + rb"\s*::\s*)*(" + _NAME + suffix
                      + rb")\b.*?\bfor\s+(?:" + _NAME + rb"\s*::\s*)*(" + _NAME + rb")", re.S)


def ops_impls(source: bytes, profile: Profile) -> list[tuple[str, str, list[str]]]:
    """(trait, type, method names) of each top-level impl of an ops trait in the file; [] when
    there is none or the file does not lex."""
    ops_suffix = profile.code.ops_trait_suffix
    if _ops_impl_hint(ops_suffix).search(source) is None:
        return []
    lexed = regions.braces(source)
    if lexed is None:
        return []
    header_rx = _impl_header(ops_suffix)
    suffix = ops_suffix.encode()
    first_mark = lexer._scanner(lexer.BRACES)  # a brace, or a byte that may open a literal or comment
    out: list[tuple[str, str, list[str]]] = []
    start = 0
    for open_at, end in zip(lexed.opens, lexed.ends):
        header_start, start = start, regions._past_semicolon(source, end)
        if source.find(suffix, header_start, open_at) < 0:  # the header names no ops trait
            continue
        header = source[header_start:open_at]
        at = regions.keyword_at(header, 0, len(header))
        m = header_rx.match(header, at)
        if m is None:
            continue
        close = end - 1
        lo = bisect.bisect_right(lexed.member_ends, open_at)
        hi = bisect.bisect_right(lexed.member_ends, close)
        bounds = [open_at + 1] + lexed.member_ends[lo:hi]
        cursor = lexer.CodeCursor(source)
        cursor.resume(open_at + 1)
        methods: list[str] = []
        try:
            for s, e in zip(bounds, [*bounds[1:], close]):
                # A member's signature runs to its body's `{`; what follows is its body, whose
                # nested items (a `fn` inside a method) are not the impl's. Most signatures hold
                # no quote, comment or slash: then the first brace is in code, and so is every
                # `fn` before it, with no lexing.
                first = first_mark.search(source, s, e)
                plain = first is None or source[first.start()] not in _HIDERS
                if plain:
                    brace = e if first is None else first.start()
                else:
                    brace = next(lexer.marks(source, lexer.BRACES, s, e), e)
                for f in finditer_at_a_word(_FN, b"fn", source, s, brace):
                    if plain or cursor.in_code(f.start()):
                        methods.append(f.group(1).decode("utf-8", "replace"))
                cursor.resume(e)
        except lexer.LexError:
            return []
        out.append((m.group(1).decode("utf-8", "replace"), m.group(2).decode("utf-8", "replace"), methods))
    return out
