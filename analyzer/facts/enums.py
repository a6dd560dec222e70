"""Enum facts: each enum's variants, their payload types and the variants gated by `#[cfg]`, read
from a tree, or from each `enum` item parsed alone when the file holds no panic-family call."""

from __future__ import annotations

import re

from tree_sitter import Node

from analyzer.facts.model import EnumFacts
from analyzer.facts.syntax import _COMMENTS, _is_cfg, _matches_at, _parser, _text
from analyzer.facts.tokentrees import _matching_close

_ENUM_ITEM = re.compile(rb"\benum\s+[A-Za-z_]\w*")


def _enum_items(source: bytes) -> list[EnumFacts] | None:
    """The enums of a file, each `enum Name ... { ... }` item parsed alone (a few hundred bytes
    instead of the file). None when an item's braces cannot be matched: parse the whole file.

    One pass: the next `{` and `;`, the line count and the comment/string state of the current
    line are carried from one `enum` to the next, never searched again from the start."""
    out: list[EnumFacts] = []
    lines = _LineState(source)
    next_open = next_semi = -2  # -2: not looked for yet; -1: none left in the file
    item_end = -1  # the close of the last item read: an `enum` inside it is not an item
    rows, rows_at = 0, 0
    for m in _ENUM_ITEM.finditer(source):
        if m.start() <= item_end or lines.in_comment_or_string(m.start()):
            continue
        if next_open != -1 and next_open < m.end():
            next_open = source.find(b"{", m.end())
        if next_semi != -1 and next_semi < m.end():
            next_semi = source.find(b";", m.end())
        open_at, semi = next_open, next_semi
        if open_at < 0 or (0 <= semi < open_at):
            continue  # not an item with a body (`enum` in a path, a macro fragment)
        close = _matching_close(source, open_at)
        if close < 0:
            return None
        item_end = close
        snippet = source[m.start():close + 1]
        tree = _parser().parse(snippet)
        rows += source.count(b"\n", rows_at, m.start())
        rows_at = m.start()
        for e in _enums(tree.root_node, snippet):
            out.append(EnumFacts(e.name, e.variants, e.line + rows, e.fields, e.gated))
    return out


class _LineState:
    """Whether offsets, asked in increasing order, are inside a line comment or a one-line string
    (`/// an enum of ...`, `"enum Fake { .. }"`), reading each line once. Multi-line strings
    holding an enum item are not caught; the parse of such a snippet finds no enum item, or one
    the whole-file parse would not."""

    def __init__(self, source: bytes):
        self.source = source
        self.line_start = 0
        self.pos = 0  # scanned up to here on the current line
        self.comment = False
        self.quotes = 0  # unescaped `"` seen on the current line before pos

    def in_comment_or_string(self, at: int) -> bool:
        src = self.source
        nl = src.rfind(b"\n", self.pos, at)
        if nl >= 0:  # a new line since the last offset
            self.line_start = self.pos = nl + 1
            self.comment, self.quotes = False, 0
        lo = max(self.line_start, self.pos - 1)  # a `//` or `\"` may straddle the last offset
        if not self.comment and b"//" in src[lo:at]:
            self.comment = True
        self.quotes += src[self.pos:at].count(b'"') - src[lo:at].count(b'\\"')
        self.pos = at
        return self.comment or self.quotes % 2 == 1


def _type_name(node: Node) -> str:
    """`std::convert::Infallible` -> Infallible, `PhantomData<T>` -> PhantomData, `!` -> !."""
    return _text(node).decode().split("::")[-1].split("<")[0].strip()


def _enums(root: Node, source: bytes) -> list[EnumFacts]:
    out = []
    for _, caps in _matches_at("enums.scm", root, source, (b"enum",)):
        name = _text(caps["name"][0]).decode()
        variants: list[tuple[str, str | None]] = []
        fields: list[list[str]] = []
        gated: list[str] = []
        cfg_pending = False  # attributes stand before their variant, as siblings
        for v in caps["variants"][0].named_children:
            if v.type == "attribute_item":
                cfg_pending = cfg_pending or _is_cfg(v)
                continue
            if v.type != "enum_variant":
                continue
            vname = v.child_by_field_name("name")
            body = v.child_by_field_name("body")
            payload = None
            types: list[Node] = []
            if body is not None and body.type == "ordered_field_declaration_list":
                types = [c for c in body.named_children if c.type not in _COMMENTS and c.type != "attribute_item"
                         and c.type != "visibility_modifier"]
                if len(types) == 1:
                    payload = _type_name(types[0])
            elif body is not None and body.type == "field_declaration_list":
                types = [t for c in body.named_children if c.type == "field_declaration"
                         for t in [c.child_by_field_name("type")] if t is not None]
            if vname is not None:
                variants.append((_text(vname).decode(), payload))
                fields.append([_type_name(x) for x in types])
                if cfg_pending or any(_is_cfg(c) for c in v.children):
                    gated.append(_text(vname).decode())
            cfg_pending = False
        out.append(EnumFacts(name, variants, caps["enum"][0].start_point.row + 1, fields, gated))
    return out
