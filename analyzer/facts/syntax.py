"""Tree-sitter for the facts stage: the Rust language, its parsers, the queries of queries/, run
only around the words their matches must hold, and small helpers over nodes."""

from __future__ import annotations

import re
from functools import cache

import tree_sitter_rust
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from analyzer.core.queries import queries_root

LANGUAGE = Language(tree_sitter_rust.language())

_NOT_NEWLINE = re.compile(rb"[^\n]")


def _blanked(m: re.Match) -> bytes:
    """A regex match turned into spaces, newlines kept: offsets and rows stay the file's."""
    return _NOT_NEWLINE.sub(b" ", m.group(0))


_WS = re.compile(r"\s+")


def _query_text(name: str) -> str:
    return queries_root().joinpath(name).read_text(encoding="utf-8")


@cache
def query(name: str) -> Query:
    """A query from the queries/ folder, compiled once."""
    return Query(LANGUAGE, _query_text(name))


@cache
def _parser() -> Parser:
    return Parser(LANGUAGE)


def norm(text: str) -> str:
    """Source text with runs of white space folded, for comparing patterns and scrutinees."""
    return _WS.sub(" ", text).strip()


def _text(node: Node) -> bytes:
    """A node's source bytes (tree-sitter types `text` as optional: a tree parsed without its
    source keeps none; ours always do)."""
    return node.text or b""


def _walk(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


_COMMENTS = ("line_comment", "block_comment")


class Nav:
    """The parent and the previous named sibling of each node a walk went through, as it found
    them. tree-sitter answers `node.parent` and `node.prev_named_sibling` by walking down from the
    root (and along the siblings): each costs the depth, so asking them of every call in a deep
    tree (an `else if` chain, matches nested in arms) was quadratic. A node the walk did not
    record is asked of tree-sitter. One Nav serves one tree, while that tree lives."""

    def __init__(self) -> None:
        self.up: dict[int, Node] = {}
        self.before: dict[int, Node | None] = {}

    def parent(self, node: Node) -> Node | None:
        got = self.up.get(node.id)
        return node.parent if got is None else got

    def prev_named(self, node: Node) -> Node | None:
        if node.id in self.before:
            return self.before[node.id]
        return node.prev_named_sibling


NO_NAV = Nav()  # records nothing: every question goes to tree-sitter


# How many attributes and comments before an item are read for a test attribute. Each step back
# costs tree-sitter a walk over the siblings before it, so an item after 400,000 comment lines
# took minutes; no hand-written item has more than a few.
MAX_ATTRIBUTES_READ = 32


def _has_test_attribute(item: Node, test_attribute: re.Pattern) -> bool:
    """Whether an attribute before `item` is one `test_attribute` (Profile.test_attribute) matches."""
    sib = item.prev_sibling
    for _ in range(MAX_ATTRIBUTES_READ):
        if sib is None or sib.type not in ("attribute_item", "line_comment", "block_comment"):
            return False
        if sib.type == "attribute_item" and test_attribute.search(_attribute_code(sib)):
            return True
        sib = sib.prev_sibling
    return False


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _attribute_code(attribute: Node) -> str:
    """An attribute's text with its string literals emptied: what a string says is no predicate."""
    return _STRING.sub('""', _text(attribute).decode("utf-8", "replace"))


def _is_cfg(attribute: Node) -> bool:
    return attribute.type == "attribute_item" and re.match(rb"#\s*\[\s*cfg\s*\(", _text(attribute)) is not None


# Queries run only around the words their matches must contain (a macro's name, `enum`, `type`):
# a query over a whole tree visits every node, most of which hold none of them.
_IDENT_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _word_spans(source: bytes, words: tuple[bytes, ...], lo: int, hi: int) -> list[tuple[int, int]]:
    """(start, end) of every whole-word occurrence of `words` in source[lo:hi], in order."""
    spans = []
    for w in words:
        i = source.find(w, lo, hi)
        while i >= 0:
            j = i + len(w)
            if (i == 0 or source[i - 1] not in _IDENT_BYTES) and (j >= len(source) or source[j] not in _IDENT_BYTES):
                spans.append((i, j))
            i = source.find(w, j, hi)
    spans.sort()
    return spans


# Word occurrences closer than this share one query window. A cursor limited to a byte range still
# steps over every sibling before the range at each level of the tree, so one cursor per word is
# quadratic on a flat file of many words (20k comment lines each naming `panic!`); one cursor per
# window costs the nodes of the window, and there are at most len(file) / _WINDOW_GAP windows
# whose words are far apart.
_WINDOW_GAP = 4096


def _windows(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans merged into windows wherever the gap between them is under _WINDOW_GAP."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and s - out[-1][1] < _WINDOW_GAP:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _matches_at(name: str, root: Node, source: bytes, words: tuple[bytes, ...], lo: int = 0,
                hi: int | None = None, shift: int = 0) -> list:
    """The matches of query `name` that touch an occurrence of `words` in source[lo:hi], once
    each, in order: what `QueryCursor(query(name)).matches(root)` gives when every match holds
    one of the words. `shift` maps file offsets to the tree's (a shadow tree's prefix)."""
    q = query(name)
    out, seen = [], set()
    windows = _windows(_word_spans(source, words, lo, len(source) if hi is None else hi))
    # One cursor yields each match once; only a match spanning two windows can come twice.
    several = len(windows) > 1
    for s, e in windows:
        cursor = QueryCursor(q)
        cursor.set_byte_range(s + shift, e + shift)
        for pattern, caps in cursor.matches(root):
            if several:
                key = (pattern, tuple(sorted((k, tuple(n.id for n in ns)) for k, ns in caps.items())))
                if key in seen:
                    continue
                seen.add(key)
            out.append((pattern, caps))
    return out
