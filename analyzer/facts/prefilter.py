"""Byte-level checks that decide, before any parse, what a file must be parsed for.

Most of burn's files hold no panic-family call, no enum and no backend operations: these checks
run on the raw bytes at memory speed, and only the files (or items) they point at are parsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

# Text a file must contain before it is worth parsing: every site is one of the panic-family
# macros or a call that refuses in words (CALL_HINT), and the dtype catalog comes from enum
# definitions. Checked on raw bytes, it skips most of the tree.
PANIC_HINT = re.compile(rb"\b(?:panic|unimplemented|todo|unreachable)\s*!")
# The words a PANIC_HINT match holds: a substring test for them comes first (has_panic_hint), and
# the walk that finds the calls goes down only to them (analyzer/facts/sites.py).
PANIC_WORDS = (b"panic", b"unimplemented", b"todo", b"unreachable")
# An assertion macro (`assert!`, `assert_eq!`, `assert_ne!`; `debug_assert!` is another word) or
# an `.expect(` handed a string literal or a name (bound to one by a `let` or `const` before it).
# These calls are everywhere (most in tests, checking values); one is a site only when the
# refusal wording of the rule data (queries/classifier.toml, `mode.unsupported` and
# `mode.variant_cannot`, part of the rules hash) occurs in its message's literal (see
# refuses_in_words): a call with no such word refuses nothing the rules could name. The test is
# a function of the file's bytes and the word's offset, so the walk and the plan of what to parse
# agree on it wherever they meet it.
CALL_HINT = re.compile(rb'\b(?:assert(?:_eq|_ne)?\s*!|expect\s*\(\s*(?:(?:r#*)?"|([A-Za-z_][A-Za-z0-9_]*)\s*\)))')
CALL_WORDS = (b"assert", b"assert_eq", b"assert_ne", b"expect")
SITE_CALL_WORDS = (*PANIC_WORDS, *CALL_WORDS)
WORDING_REACH = 1024
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
    """The file holds a panic-family call or a call that refuses in words (see CALL_HINT)."""
    return matches_at_a_word(PANIC_HINT, PANIC_WORDS, source) or has_call_hint(source)


@cache
def _wording() -> tuple[re.Pattern[bytes], ...]:
    from analyzer.decisions.data import rule_data

    data = rule_data()
    return tuple(re.compile(p.pattern.encode()) for p in (data.unsupported, data.variant_cannot))


# A string literal's text as written (a raw string's hashes are not matched: its text runs to
# its first `"`, which only ever shortens what is read).
_LITERAL = re.compile(rb'"((?:[^"\\]|\\.)*)"', re.S)


def refuses_in_words(source: bytes, at: int) -> bool:
    """A CALL_HINT match starts at `at` and the first string literal after it, starting within
    WORDING_REACH bytes, holds the refusal wording: `expect`'s literal, an assertion's message
    (a condition seldom holds a literal); for `expect(name)`, the literal of the last `let` or
    `const` of that name in the WORDING_REACH bytes before it. The wording is searched in that literal only, a few
    dozen bytes: its patterns start with no literal text, and searched over the whole reach
    they cost a quarter of a microsecond a byte."""
    hint = CALL_HINT.match(source, at)
    if hint is None:
        return False
    if hint.group(1) is None:
        m = _LITERAL.search(source, at, at + WORDING_REACH)
    else:  # `.expect(msg)`: the literal of the last binding of `msg` before it, within reach
        lo = max(0, at - WORDING_REACH)
        binding = re.compile(_BINDING % hint.group(1))
        last = None
        for last in binding.finditer(source, lo, at):  # noqa: B007 (the last one is wanted)
            pass
        m = _LITERAL.match(source, last.end() - 1) if last is not None else None
    return m is not None and any(p.search(source, m.start(1), m.end(1)) is not None for p in _wording())


# `let name = "`, `const NAME: &str = "`: a binding of a name to a string literal.
_BINDING = rb'\b(?:let|const|static)\s+(?:mut\s+)?%s\s*(?::[^=;]*)?=\s*(?:r#*)?"'


def has_call_hint(source: bytes, lo: int = 0, hi: int | None = None) -> bool:
    """Some call of source[lo:hi] refuses in words (`assert`'s occurrences find `assert_eq` and
    `assert_ne` too)."""
    hi = len(source) if hi is None else hi
    for w in (b"assert", b"expect"):
        at = source.find(w, lo, hi)
        while at >= 0:
            if refuses_in_words(source, at):
                return True
            at = source.find(w, at + 1, hi)
    return False


# An attribute that makes a function a procedural macro's entry point.
_PROC_MACRO = re.compile(rb"#\s*\[\s*proc_macro(?:_derive|_attribute)?\b")


def defines_proc_macros(source: bytes) -> bool:
    """The file defines a procedural macro (`#[proc_macro]`, `#[proc_macro_derive(..)]`,
    `#[proc_macro_attribute]`): a substring test first, the attribute's shape only where it holds."""
    return b"proc_macro" in source and _PROC_MACRO.search(source) is not None


def site_word_spans(source: bytes, lo: int, hi: int) -> list[tuple[int, int]]:
    """(start, end) of the whole-word occurrences in source[lo:hi] of the words a site's call is
    named by: every panic-family word, and the CALL_WORDS of calls that refuse in words. The
    three assertion words are found by one search for `assert`."""
    from analyzer.facts.syntax import _IDENT_BYTES, _word_spans

    spans = _word_spans(source, (*PANIC_WORDS, b"expect"), lo, hi)
    at = source.find(b"assert", lo, hi)
    while at >= 0:
        end = at + 6
        if source[end:end + 3] in (b"_eq", b"_ne"):
            end += 3
        if (end <= hi and (at == 0 or source[at - 1] not in _IDENT_BYTES)
                and (end >= len(source) or source[end] not in _IDENT_BYTES)):
            spans.append((at, end))
        at = source.find(b"assert", at + 6, hi)
    spans.sort()
    return [(s, e) for s, e in spans if source[s] not in _CALL_INITIALS or refuses_in_words(source, s)]


_last: list = [None, [], []]  # the file last asked of file_site_words, and its answer


def file_site_words(source: bytes) -> tuple[list[int], list[int]]:
    """The starts of site_word_spans over the whole file, and those of its CALL_WORDS alone, in
    order: worked out once per file, however many parts of it (the planned tree, each token tree)
    the walk reads."""
    if _last[0] is not source:
        spans = [s for s, _ in site_word_spans(source, 0, len(source))]
        _last[:] = [source, spans, [s for s in spans if source[s] in _CALL_INITIALS]]
    return _last[1], _last[2]


_CALL_INITIALS = frozenset(w[0] for w in CALL_WORDS)  # `a`, `e`: no panic-family word starts so


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
