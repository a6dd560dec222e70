"""Which types of a file may be built from text outside the program: an enum that derives a
parser (`#[derive(EnumString)]`, `Deserialize`), or a type that implements `FromStr`,
`TryFrom<&str>` / `TryFrom<String>` or `Deserialize`. Read from the bytes, without a parse: the impls may stand
in files the parser never sees.

The facts are raw: every derive name of an enum, and the parse traits a type implements; the
classifier's data (queries/classifier.toml, `own_form.input_derives`) says which of them build a
value from a user's input (a model file, a config)."""

from __future__ import annotations

import re

# `derive(A, b::C)` (also inside `cfg_attr(..)`), the rest of its attribute, then the attributes,
# comments and visibility up to `enum Name`.
_DERIVED_ENUM = re.compile(
    rb"derive\s*\(([^()]*)\)\s*\)?\s*\]"
    rb"(?:\s|//[^\n]*|#\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\])*"
    rb"(?:pub(?:\s*\([^)]*\))?\s+)?enum\s+([A-Za-z_]\w*)")
_PATH_END = re.compile(rb"([A-Za-z_]\w*)\s*$")
# `FromStr for path::Name`, `TryFrom<&'a str> for`, `TryFrom<String> for`, `Deserialize<'de> for`:
# a trait and `for` are an impl header (a `for` loop never follows a type); matched where the
# trait's name is found by substring search.
_PARSE_IMPL = re.compile(
    rb"(FromStr|TryFrom\s*<\s*(?:&\s*(?:'\w+\s+)?str|String)\s*>|Deserialize\s*<[^<>{;]*>)"
    rb"\s+for\s+(?:[A-Za-z_]\w*\s*::\s*)*([A-Za-z_]\w*)")
_TRAITS = (b"FromStr", b"TryFrom", b"Deserialize")
# Most files hold no `From`: then one scan for it stands for the scans for both traits that hold it.
_WITHOUT_FROM = (b"Deserialize",)


def built_from(source: bytes) -> list[tuple[str, str]]:
    """(type, derive or trait name) pairs, sorted, each once: the derives of each enum and the
    parse traits each type implements (`TryFrom<&str>` is `TryFrom`). Each word is searched
    once (`From` stands for the two traits that hold it): a file that holds none of them costs three
    substring scans."""
    out: set[tuple[str, str]] = set()
    if b"enum" in source:  # a derive counts only before an enum
        at = source.find(b"derive")
        while at >= 0:
            m = _DERIVED_ENUM.match(source, at)
            if m is not None:
                name = m.group(2).decode("utf-8", "replace")
                for part in m.group(1).split(b","):
                    last = _PATH_END.search(part)
                    if last is not None:
                        out.add((name, last.group(1).decode("utf-8", "replace")))
            at = source.find(b"derive", at + 1)
    for word in _TRAITS if b"From" in source else _WITHOUT_FROM:
        at = source.find(word)
        while at >= 0:
            m = _PARSE_IMPL.match(source, at)
            if m is not None and (at == 0 or not (source[at - 1:at].isalnum() or source[at - 1] == 0x5F)):
                out.add((m.group(2).decode("utf-8", "replace"), word.decode("utf-8", "replace")))
            at = source.find(word, at + 1)
    return sorted(out)
