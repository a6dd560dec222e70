"""Which enum variants a file turns into another value before passing a value on: a match that
maps one variant to something else and hands every other value back as it came,

    let precision = match precision {
        Precision::Bool => self.bool_precision,
        _ => precision,
    };

Read from the bytes, without a parse (the match may stand in a file with no panic in it). The
classifier reads these as "the crate remaps that variant away" (exclude/kind-fixed-catch-all)."""

from __future__ import annotations

import re

from analyzer.facts.prefilter import finditer_at_a_word

# `match x {` (`*x`, `&x`, `self.x`), one arm `Path::Enum::Variant => expr,` whose value is one
# line with no block, then `_ => x` (or `*x`, `&x`) closing the match: rustfmt's layout of it.
_REMAP = re.compile(
    rb"match[ \t]+[*&]?[ \t]*([a-z_][A-Za-z0-9_.]*)[ \t]*\{\s*"
    rb"(?:[A-Za-z_][A-Za-z0-9_]*::)*([A-Z][A-Za-z0-9_]*)::([A-Z][A-Za-z0-9_]*)[ \t]*=>[ \t]*([^,{};\n]+?)[ \t]*,\s*"
    rb"_[ \t]*=>[ \t]*[*&]?[ \t]*\1[ \t]*,?\s*\}")


def remaps(source: bytes) -> list[tuple[str, str]]:
    """(enum, variant) of each variant the file remaps (sorted, each once). An arm whose value is
    a macro call (`panic!(..)`) or names the same variant again maps nothing away."""
    out: set[tuple[str, str]] = set()
    for m in finditer_at_a_word(_REMAP, b"match", source):  # every match starts with `match`
        enum, variant, value = m.group(2), m.group(3), m.group(4)
        if b"!" in value or re.search(rb"\b" + re.escape(enum + b"::" + variant) + rb"\b", value):
            continue
        out.add((enum.decode("utf-8", "replace"), variant.decode("utf-8", "replace")))
    return sorted(out)
