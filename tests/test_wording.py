"""Counted nouns in terminal messages: singular for exactly one."""

from __future__ import annotations

import pytest

from analyzer.core.wording import plural


@pytest.mark.parametrize("n, noun, want", [
    (1, "answer", "1 answer"), (0, "answer", "0 answers"), (2, "backend", "2 backends"),
    (1, "duplicate id", "1 duplicate id"), (3, "duplicate id", "3 duplicate ids"),
    (2, "match", "2 matches"), (2, "entry", "2 entries"), (2, "day", "2 days"), (2, "box", "2 boxes"),
    (1, "coverage cell", "1 coverage cell"), (12, "coverage cell", "12 coverage cells"),
])
def test_plural(n, noun, want):
    assert plural(n, noun) == want


def test_irregular_plural():
    assert plural(2, "child", "children") == "2 children" and plural(1, "child", "children") == "1 child"
