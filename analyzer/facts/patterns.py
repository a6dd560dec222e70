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
    """The `Enum::Variant` references a pattern names, outermost first, payloads nested."""
    t = node.type
    if t == "scoped_identifier":
        tail = _path_tail(node)
        return [VariantRef(tail[0], tail[1], None, tail[2])] if tail else []
    if t in ("tuple_struct_pattern", "struct_pattern"):
        typ = node.child_by_field_name("type")
        tail = _path_tail(typ) if typ is not None else None
        inner: list[VariantRef] = []
        for c in node.named_children:
            if c is not typ and c.id != (typ.id if typ is not None else -1):
                inner.extend(pattern_refs(c))
        if tail:
            return [VariantRef(tail[0], tail[1], inner or None, tail[2])]
        return inner
    out: list[VariantRef] = []
    for c in node.named_children:
        out.extend(pattern_refs(c))
    return out


def is_catch_all(node: Node) -> bool:
    """`_`, a lower-case binding (`dtype`, `other`), `x @ _`, `..` or a tuple of those."""
    t = node.type
    if t == "_" or node.text == b"_":
        return True
    if t == "identifier":
        name = _text(node).decode()
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
        return any(is_catch_all(c) for c in node.named_children)
    return False


_ERROR_VARIANTS = {"Err", "Ok", "None", "Some"}


def is_error_handling(node: Node) -> bool:
    """An arm that handles a Result or Option: `Err(e)`, `None`, `Ok(_)`, `Some(x)`."""
    for sub in _walk(node):
        if sub.type == "tuple_struct_pattern":
            typ = sub.child_by_field_name("type")
            if typ is not None and _text(typ).decode().split("::")[-1] in _ERROR_VARIANTS:
                return True
        elif sub.type in ("identifier", "scoped_identifier") and sub.parent is not None \
                and sub.parent.type in ("match_pattern", "or_pattern") \
                and _text(sub).decode().split("::")[-1] in _ERROR_VARIANTS:
            return True
    return False
