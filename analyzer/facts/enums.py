"""Enum facts: each enum's variants, their payload types and the variants gated by `#[cfg]`, read
from a tree, or from each `enum` item parsed alone when the file holds no panic-family call."""

from __future__ import annotations

import re

from tree_sitter import Node

from analyzer.facts import lexer
from analyzer.facts.model import EnumFacts
from analyzer.facts.syntax import _COMMENTS, _is_cfg, _matches_at, _parser, _text

_ENUM_ITEM = re.compile(rb"\benum\s+[A-Za-z_]\w*")
# After an `enum Name`: the braces of its body, and the `;` that shows it has none (`enum` in a
# path, a macro fragment).
_BODY_MARKS = rb"[{};]"


def _enum_items(source: bytes) -> list[EnumFacts] | None:
    """The enums of a file, each `enum Name ... { ... }` item parsed alone (a few hundred bytes
    instead of the file). None when the file does not lex or an item's body does not close:
    parse the whole file.

    Each `enum Name` the lexer finds in code is followed to the brace that closes its body; the
    next one is looked for past that body (an `enum` inside it is not an item of its own), so
    each byte is lexed once."""
    out: list[EnumFacts] = []
    cursor = lexer.CodeCursor(source)
    rows, rows_at = 0, 0
    pos = 0  # lexed up to here by the body scans
    try:
        for word in _ENUM_ITEM.finditer(source):
            start = word.start()
            if start < pos or not cursor.in_code(start):
                continue
            depth = 0
            pos = word.end()
            for at in lexer.marks(source, _BODY_MARKS, pos):
                pos = at + 1
                c = source[at]
                if c == 0x7B:  # {
                    depth += 1
                elif depth == 0:
                    break  # a `;`, or the end of an enclosing block, before any body
                elif c == 0x7D:  # }
                    depth -= 1
                    if depth == 0:
                        snippet = source[start:pos]
                        tree = _parser().parse(snippet)
                        rows += source.count(b"\n", rows_at, start)
                        rows_at = start
                        for e in _enums(tree.root_node, snippet):
                            out.append(EnumFacts(e.name, e.variants, e.line + rows, e.fields, e.gated))
                        break
            else:
                if depth:
                    return None  # a body that does not close
                pos = len(source)
            cursor.resume(pos)
    except lexer.LexError:
        return None
    return out


def _type_name(node: Node) -> str:
    """`std::convert::Infallible` -> Infallible, `PhantomData<T>` -> PhantomData, `!` -> !."""
    return _text(node).decode("utf-8", "replace").split("::")[-1].split("<")[0].strip()


def _enums(root: Node, source: bytes) -> list[EnumFacts]:
    out = []
    for _, caps in _matches_at("enums.scm", root, source, (b"enum",)):
        name = _text(caps["name"][0]).decode("utf-8", "replace")
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
                variants.append((_text(vname).decode("utf-8", "replace"), payload))
                fields.append([_type_name(x) for x in types])
                if cfg_pending or any(_is_cfg(c) for c in v.children):
                    gated.append(_text(vname).decode("utf-8", "replace"))
            cfg_pending = False
        out.append(EnumFacts(name, variants, caps["enum"][0].start_point.row + 1, fields, gated))
    return out
