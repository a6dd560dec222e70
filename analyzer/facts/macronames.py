"""The names a `macro_rules!` gives the functions it generates: `fn $fn_name(..)` in a transcriber
is named, in each invocation of the macro in the same file, by the argument the matcher binds to
`$fn_name` (`m!(max_pool_f32, f32)` against `($fn_name:ident, $T:ty)` names it `max_pool_f32`).

The matcher is read as a sequence of bindings and literal tokens up to the binding wanted; a
repetition or a nested group before it, or a binding of another fragment than `ident`, leaves
the name unread (the caller keeps the metavariable). An invocation that does not fit the arm is
one another arm takes, and is passed over."""

from __future__ import annotations

import re

from tree_sitter import Node

from analyzer.facts import lexer

_IDENT = re.compile(rb"(?:r#)?[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(rb"\s*")
_OPEN = frozenset(b"([{")


def _elements(matcher: Node, wanted: bytes) -> list[tuple[str, bytes, bytes]] | None:
    """The matcher's top-level elements up to and including the binding of `wanted`:
    ("bind", name, fragment) or ("lit", text, b""). None when something else comes first or the
    binding is not there."""
    out: list[tuple[str, bytes, bytes]] = []
    for c in matcher.children[1:-1]:  # inside the delimiters
        if c.type == "token_binding_pattern":
            name = c.child_by_field_name("name")
            frag = c.child_by_field_name("type")
            if name is None or frag is None or name.text is None or frag.text is None:
                return None
            out.append(("bind", name.text[1:], frag.text))
            if name.text[1:] == wanted:
                return out
        elif c.child_count == 0 and c.text and c.type not in ("line_comment", "block_comment"):
            out.append(("lit", c.text, b""))
        else:
            return None
    return None


def _literal_pattern(text: bytes) -> bytes | None:
    if any(b in b"\"'/" for b in text):
        return None
    escaped = re.escape(text)
    return rb"\b" + escaped + rb"\b" if _IDENT.fullmatch(text) else escaped


def _next_literal(args: bytes, p: int, text: bytes) -> int:
    """Where `text` next stands at the top level of `args` from `p` (outside groups, literals and
    comments), else -1."""
    pattern = _literal_pattern(text)
    if pattern is None:
        return -1
    depth = 0
    try:
        for at in lexer.marks(args, rb"[()\[\]{}]|" + pattern, p):
            c = args[at]
            if c in _OPEN:
                depth += 1
            elif c in b")]}":
                depth -= 1
                if depth < 0:
                    return -1
            elif depth == 0:
                return at
    except lexer.LexError:
        pass
    return -1


def _bound_name(args: bytes, elements: list[tuple[str, bytes, bytes]]) -> str | None:
    """The identifier the last element (the wanted binding) takes in `args`, else None."""
    p = 0
    for i, (kind, text, frag) in enumerate(elements):
        p = _SPACE.match(args, p).end()  # type: ignore[union-attr]
        if kind == "lit":
            if not args.startswith(text, p):
                return None
            p += len(text)
            continue
        if frag == b"ident":
            m = _IDENT.match(args, p)
            if m is None:
                return None
            if i == len(elements) - 1:
                return m.group().decode("utf-8", "replace")
            p = m.end()
            continue
        if i == len(elements) - 1 or elements[i + 1][0] != "lit":
            return None
        # Another fragment (`ty`, `expr`, ...): it runs to the next literal at the top level.
        found = _next_literal(args, p, elements[i + 1][1])
        if found < 0:
            return None
        p = found
    return None


def generated_names(source: bytes, macro: str, matcher: Node, metavariable: str) -> list[str]:
    """The names the invocations of `macro` in `source` give `$metavariable` under `matcher` (one
    arm's left side), in file order, each once."""
    elements = _elements(matcher, metavariable.encode())
    if elements is None:
        return []
    names: dict[str, None] = {}
    call = re.escape(macro.encode()) + rb"\s*!\s*[(\[{]"
    try:
        starts = list(lexer.marks(source, rb"(?<![\w$#])" + call))
    except lexer.LexError:
        return []
    finder = re.compile(call)
    for start in starts:
        m = finder.match(source, start)
        if m is None:
            continue
        open_at = m.end() - 1
        close = lexer.matching_close(source, open_at)
        if close < 0:
            continue
        name = _bound_name(source[open_at + 1:close], elements)
        if name is not None:
            names.setdefault(name)
    return list(names)


def generated_fn_name(call: Node, source: bytes, offset: int, lo: int, body: Node, function: str,
                      names_of: dict[str, str]) -> str:
    """The name of a function a macro_rules! transcriber (`body`) defines as `fn $name`: the first
    one the macro's invocations in the file give it (the others define the same code under other
    names), else `$name` as written. `function` is returned for a function named in the body."""
    fn = call.parent
    while fn is not None and fn.type != "function_item":
        fn = fn.parent
    name = fn.child_by_field_name("name") if fn is not None else None
    at = name.start_byte - offset if name is not None else -1
    if name is None or at < lo or source[at:at + 1] != b"$":
        return function
    metavariable = source[at + 1:name.end_byte - offset].decode("utf-8", "replace")
    if metavariable not in names_of:
        rule = body.parent
        matcher = rule.child_by_field_name("left") if rule is not None else None
        definition = rule.parent if rule is not None else None
        macro = definition.child_by_field_name("name") if definition is not None else None
        macro_name = macro.text.decode("utf-8", "replace") if macro is not None and macro.text else ""
        found = (generated_names(source, macro_name, matcher, metavariable)
                 if matcher is not None and macro is not None else [])
        names_of[metavariable] = found[0] if found else "$" + metavariable
    return names_of[metavariable]
