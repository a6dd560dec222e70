"""What a match arm's pattern says: the `Enum::Variant` references it names, whether it catches
everything, whether it handles a Result or an Option."""

from __future__ import annotations

from tree_sitter import Node

from analyzer.facts.model import VariantRef
from analyzer.facts.syntax import _text, _walk

_SCOPED = ("scoped_identifier", "scoped_type_identifier")


def _path_tail(node: Node) -> tuple[str, str, str] | None:
    """`a::b::Enum::Variant` -> (Enum, Variant, a); `Variant` alone has no enum and gives None.
    A struct pattern's path (`Enum::Variant { .. }`) is a scoped_type_identifier: the same."""
    if node.type not in _SCOPED:
        return None
    name = node.child_by_field_name("name")
    path = node.child_by_field_name("path")
    if name is None or path is None:
        return None
    enum = path.child_by_field_name("name") if path.type in _SCOPED else path
    if enum is None or enum.type not in ("identifier", "type_identifier"):
        return None
    root = ""
    if path.type in _SCOPED:
        first = path
        while first.type in _SCOPED and (inner := first.child_by_field_name("path")) is not None:
            first = inner
        root = _text(first).decode("utf-8", "replace")
    return _text(enum).decode("utf-8", "replace"), _text(name).decode("utf-8", "replace"), root


def pattern_refs(node: Node) -> list[VariantRef]:
    """The `Enum::Variant` references a pattern names, outermost first, payloads nested.

    Walked with a stack, not recursion: an or-pattern of n alternatives is n levels deep in the
    tree (`A | B | C` is `(A | B) | C`), and a wide one is legal Rust a file may hold."""
    out: list[VariantRef] = []
    stack: list[tuple[Node, list[VariantRef]]] = [(node, out)]
    while stack:
        n, into = stack.pop()
        t = n.type
        if t == "scoped_identifier":
            tail = _path_tail(n)
            if tail:
                into.append(VariantRef(tail[0], tail[1], None, tail[2]))
            continue
        kids = n.named_children
        if t in ("tuple_struct_pattern", "struct_pattern"):
            typ = n.child_by_field_name("type")
            tail = _path_tail(typ) if typ is not None else None
            if typ is not None:
                kids = [c for c in kids if c.id != typ.id]
            if tail:
                inner: list[VariantRef] = []
                ref = VariantRef(tail[0], tail[1], inner, tail[2])
                into.append(ref)
                into = inner
        stack.extend((c, into) for c in reversed(kids))
    _empty_payloads_to_none(out)
    return out


def _empty_payloads_to_none(refs: list[VariantRef]) -> None:
    stack = list(refs)
    while stack:
        ref = stack.pop()
        if ref.sub is not None:
            if ref.sub:
                stack.extend(ref.sub)
            else:
                ref.sub = None


def _alternatives(node: Node) -> list[Node]:
    """The alternatives of an or-pattern, however deeply its binary nodes nest, in order."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "or_pattern":
            stack.extend(reversed(n.named_children))
        else:
            out.append(n)
    return out


def is_catch_all(node: Node) -> bool:
    """`_`, a lower-case binding (`dtype`, `other`), `x @ _`, `..` or a tuple of those."""
    t = node.type
    if t == "_" or node.text == b"_":
        return True
    if t == "identifier":
        name = _text(node).decode("utf-8", "replace")
        return name[:1].islower() or name[:1] == "_"
    if t == "remaining_field_pattern":
        return True
    if t == "captured_pattern":
        kids = node.named_children
        return bool(kids) and is_catch_all(kids[-1])
    if t in ("tuple_pattern", "match_pattern", "reference_pattern", "ref_pattern", "mut_pattern"):
        kids = [c for c in node.named_children if c.type not in ("line_comment", "block_comment")]
        if node.type == "match_pattern":
            cond = node.child_by_field_name("condition")
            kids = [c for c in kids if cond is None or c.id != cond.id]
        return bool(kids) and all(is_catch_all(c) for c in kids)
    if t == "or_pattern":
        return any(is_catch_all(c) for c in _alternatives(node))
    return False


_ERROR_VARIANTS = {"Err", "Ok", "None", "Some"}


def is_error_handling(node: Node) -> bool:
    """An arm that handles a Result or Option: `Err(e)`, `None`, `Ok(_)`, `Some(x)`."""
    for sub in _walk(node):
        if sub.type == "tuple_struct_pattern":
            typ = sub.child_by_field_name("type")
            if typ is not None and _text(typ).decode("utf-8", "replace").split("::")[-1] in _ERROR_VARIANTS:
                return True
        elif sub.type in ("identifier", "scoped_identifier") and sub.parent is not None \
                and sub.parent.type in ("match_pattern", "or_pattern") \
                and _text(sub).decode("utf-8", "replace").split("::")[-1] in _ERROR_VARIANTS:
            return True
    return False
