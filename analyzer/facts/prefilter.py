"""Byte-level checks that decide, before any parse, what a file must be parsed for.

Most of burn's files hold no panic-family call, no enum and no backend operations: these checks
run on the raw bytes at memory speed, and only the files (or items) they point at are parsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Text a file must contain before it is worth parsing: every site is one of these macros, and the
# dtype catalog comes from enum definitions. Checked on raw bytes, it skips most of the tree.
PANIC_HINT = re.compile(rb"\b(?:panic|unimplemented|todo|unreachable)\s*!")
# The words a PANIC_HINT match holds: a substring test for them comes first (has_panic_hint), and
# the queries run only around them.
PANIC_WORDS = (b"panic", b"unimplemented", b"todo", b"unreachable")
ENUM_HINT = re.compile(rb"\benum\s")
# The files that define or implement backend operations (the coverage audit's rows) are found
# by the target profile's `ops_hint` (analyzer/profiles), which starts with the literal ops-trait
# suffix so that the regex engine finds it by a fast scan (a pattern that starts with
# `trait\s+\w+` is tried at every byte).
# A plain type alias (`pub type BoolDType = BoolStore;`), read without parsing: `pub type` is never
# an associated type of a trait impl (those take no visibility), and an unindented `type` is a
# module item. Alias-only files are thus never parsed (about 1 MB of burn).
PLAIN_ALIAS = re.compile(rb"(?m)^(?:[ \t]*pub(?:\([^)\n]*\))?[ \t]+|)type[ \t]+(\w+)[ \t]*=[ \t]*([\w:]+)[ \t]*;")


def plain_aliases(source: bytes) -> list[tuple[str, str]]:
    """(alias, last segment of the target) for every plain type alias of the file.

    A match starts at a line start and stays on its line, so the regex is tried once at the start
    of each line holding `type`, found by substring search: the same matches as `finditer` over
    the file (which tries `^` at every byte), a sixth of the cost on burn."""
    out = []
    at = source.find(b"type")
    while at >= 0:
        m = PLAIN_ALIAS.match(source, source.rfind(b"\n", 0, at) + 1)
        if m is not None:
            out.append((m.group(1).decode("utf-8", "replace"), m.group(2).decode("utf-8", "replace").split("::")[-1]))
        end_of_line = source.find(b"\n", at)
        if end_of_line < 0:
            break
        at = source.find(b"type", end_of_line)
    return out


def matches_at_a_word(pattern: re.Pattern, words: tuple[bytes, ...], source: bytes) -> bool:
    """`pattern.search(source) is not None` for a pattern whose every match starts with one of
    `words`: the regex is tried only where a word occurs, found by substring search at memory
    speed. PANIC_HINT and ENUM_HINT start with `\\b` and an alternation, with which the regex
    engine steps through every byte (~8 ns a byte); most files hold none of the words."""
    for w in words:
        at = source.find(w)
        while at >= 0:
            if pattern.match(source, at) is not None:  # `\\b` still sees the byte before `at`
                return True
            at = source.find(w, at + 1)
    return False


def finditer_at_a_word(pattern: re.Pattern, word: bytes, source: bytes, start: int = 0,
                      end: int | None = None) -> Iterator[re.Match]:
    """`pattern.finditer(source, start, end)` for a pattern whose every match starts with `word`:
    the regex is tried only where substring search finds the word (one starting with `\\b`
    steps through every byte slower), `\\b` still sees the byte before, and the search goes on
    past a match as finditer's does."""
    end = len(source) if end is None else end
    at = source.find(word, start, end)
    while at >= 0:
        m = pattern.match(source, at, end)
        if m is None:
            at = source.find(word, at + 1, end)
        else:
            yield m
            at = source.find(word, m.end(), end)


def has_panic_hint(source: bytes) -> bool:
    return matches_at_a_word(PANIC_HINT, PANIC_WORDS, source)


def has_enum_hint(source: bytes) -> bool:
    return matches_at_a_word(ENUM_HINT, (b"enum",), source)


# A type name written before a variant, a braced use list or a glob (`FuseArg::Input`,
# `Kind::{A, B}`, `Kind::*`): rustfmt writes paths without spaces. Strings and comments count
# too, which can only add a use. This regex is the definition; variant_uses computes the same
# from the separators, since a regex tried at every capital letter of every file is the largest
# cost the parent pays for the files it does not parse.
VARIANT_USE = re.compile(rb"([A-Z][A-Za-z0-9_]*)::(?=[A-Z{*])")
_IDENT_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
# Starts with a literal, which the regex engine finds by a fast scan; about a quarter of the `::`
# of a tree are followed by one of these.
_PATH_SEPARATOR = re.compile(rb"::[A-Z{*]")
_CAPITAL = re.compile(rb"[A-Z]")


def variant_uses(source: bytes) -> list[str]:
    """The type names the file writes before `::Variant` (sorted, each once): which crates
    name an enum's variants. Each `X::` followed by a capital, `{` or `*`: the identifier
    characters just before it, from their first capital letter on (what VARIANT_USE finds)."""
    if b"::" not in source:
        return []
    runs = set()
    for m in _PATH_SEPARATOR.finditer(source):
        at = m.start()
        window = source[at - 64 if at > 64 else 0:at]  # _run_before's first window, inlined
        run = window[len(window.rstrip(_IDENT_CHARS)):]
        runs.add(run if len(run) < len(window) or at <= 64 else _run_before(source, at))
    names = set()
    for run in runs:  # most runs repeat (`DType::F32`, `DType::I64`): the capital searched once each
        capital = _CAPITAL.search(run)
        if capital is not None:
            names.add(run[capital.start():].decode("utf-8", "replace"))
    return sorted(names)


def _run_before(source: bytes, at: int) -> bytes:
    """The identifier characters that end at `at`: read from a short window, widened while the
    run fills it. The runs before two separators never overlap, so a file costs linear time."""
    width = 64
    while True:
        lo = at - width if at > width else 0
        window = source[lo:at]
        run = window[len(window.rstrip(_IDENT_CHARS)):]
        if len(run) < len(window) or lo == 0:
            return run
        width *= 2


# A trait definition at the start of its line (`pub trait Recorder<B>`, `pub(crate) unsafe trait
# Kernel`): the word `trait` in a comment or a string is not at a line start after at most a
# visibility and `unsafe`, and rustfmt writes every item on a line of its own.
_TRAIT_DEF = re.compile(rb"[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:unsafe[ \t]+)?(?:auto[ \t]+)?"
                        rb"trait[ \t]+([A-Za-z_][A-Za-z0-9_]*)")


def trait_names(source: bytes) -> list[str]:
    """The names of the traits the file defines (sorted, each once): an impl of a trait no file of
    the tree defines implements another library's protocol. The regex is tried at the start of
    each line holding `trait`, found by substring search, as plain_aliases does."""
    out: set[str] = set()
    at = source.find(b"trait")
    while at >= 0:
        m = _TRAIT_DEF.match(source, source.rfind(b"\n", 0, at) + 1)
        if m is not None:
            out.add(m.group(1).decode("utf-8", "replace"))
        end_of_line = source.find(b"\n", at)
        if end_of_line < 0:
            break
        at = source.find(b"trait", end_of_line)
    return sorted(out)
