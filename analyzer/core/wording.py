"""Counted nouns in messages: "1 answer", "2 answers", "1 match", "3 matches"."""

from __future__ import annotations

import re

_ES = re.compile(r"(?:s|x|z|ch|sh)$")
_IES = re.compile(r"[^aeiou]y$")


def plural_of(noun: str) -> str:
    """The English plural of a regular noun, or of the last word of a phrase ("bad answer")."""
    if _IES.search(noun):
        return noun[:-1] + "ies"
    if _ES.search(noun):
        return noun + "es"
    return noun + "s"


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`n` and the noun, singular for exactly one: plural(1, "backend") -> "1 backend",
    plural(2, "duplicate id") -> "2 duplicate ids"; `many` for an irregular plural."""
    return f"{n} {noun if n == 1 else (many or plural_of(noun))}"
