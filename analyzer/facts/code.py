"""Code facts for the coverage audit: ops traits, their impls, and a call graph by name."""

from __future__ import annotations

import re

from tree_sitter import Node

from analyzer.facts import lexer
from analyzer.facts.model import FileFacts, FnFacts, ImplFacts, MacroCall, MacroDefFacts, TraitFacts
from analyzer.facts.syntax import _has_test_attribute, norm
from analyzer.profiles import Profile

# Read by walking items only (source file, mod, impl and trait bodies), never expression trees:
# a query over a whole tree visits every node, while the items of a file are a few dozen nodes.
# Calls and macro invocations inside a body are found by a regex over its bytes, which also sees
# the calls written inside macro arguments (token trees tree-sitter leaves unparsed).

# A call by name, `name(` or `name::<T>(`, matched on the file's bytes reversed: there the
# pattern starts with the literal `(`, which the regex engine finds by a fast scan; forwards it
# would start with the name and be tried at every byte (ten times slower, measured on burn). Not
# after `$` or `#`: a metavariable or an interpolation.
_CALL_REVERSED = re.compile(rb"\(\s*(?:>[^;{}()<]*<\s*::\s*)?([A-Za-z0-9_]+)(?![$#\w])")
# `!(`, `![`, `!{`: a macro invocation, its name read backwards from the `!` (found by a literal
# search, much faster than a pattern that starts with the name).
_BANG = re.compile(rb"!\s*[(\[{]")
_NAME_BEFORE = re.compile(rb"(?<![$#\w])([a-z_][A-Za-z0-9_]*)\s*$")
_NOT_CALLS = frozenset(("if", "while", "match", "for", "loop", "return", "in", "as", "move", "let", "fn",
                        "where", "unsafe", "async", "await", "else", "mut", "ref", "impl", "dyn", "self",
                        "super", "crate", "macro_rules"))
# Macros of the standard library: never a dtype dispatch of the tree, so their lists are not read.
_STD_MACROS = frozenset(("vec", "format", "format_args", "write", "writeln", "print", "println", "eprint",
                         "eprintln", "assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq",
                         "debug_assert_ne", "matches", "panic", "todo", "unimplemented", "unreachable",
                         "concat", "stringify", "include_str", "include_bytes", "cfg", "env", "dbg",
                         "line", "file", "column", "module_path", "compile_error"))
# An element's leading path; its last segment is the dtype (`F64 => f64`, `DType::F64 => f64`).
_LIST_ELEMENT = re.compile(rb"\s*((?:[A-Za-z_][A-Za-z0-9_]*\s*::\s*)*[A-Za-z_][A-Za-z0-9_]*)")
_OPENERS = frozenset(b"([{")
# The identifier a macro's arguments open with (`float` in `m!(float(x), ..)`, `@int` in
# `m!(@int x)`): the literal word a rule's matcher may open with to be the rule taken.
_LEAD = re.compile(rb"\s*(@\s*)?([A-Za-z_][A-Za-z0-9_]*)")
_LEAD_PUNCT = frozenset(("@",))


def _calls_in(source: bytes, reversed_source: bytes, start: int, end: int, start_line: int
              ) -> tuple[list[str], list[MacroCall]]:
    """Functions called by name and macros invoked in source[start:end] (which starts on
    `start_line`)."""
    n = len(source)
    found = dict.fromkeys(_CALL_REVERSED.findall(reversed_source, n - end, n - start))
    calls: list[str] = []
    if found:
        # One reversal and one decode for all the names (they were matched reversed).
        names = b"\0".join(found)[::-1].decode("utf-8", "replace").split("\0")
        calls = [x for x in reversed(names) if (x[0].islower() or x[0] == "_") and x not in _NOT_CALLS]
    macros: list[MacroCall] = []
    for m in _BANG.finditer(source, start, end):
        named = _NAME_BEFORE.search(source, max(start, m.start() - 80), m.start())
        if named is None:
            continue
        name = named.group(1).decode("utf-8", "replace")
        if name not in _STD_MACROS and name != "macro_rules":
            line = start_line + source.count(b"\n", start, named.start())
            macros.append(_macro_call(source, name, m.end() - 1, end, line))
    return calls, macros


def _scan_invocation(source: bytes, open_at: int, limit: int) -> tuple[int, tuple[int, int] | None]:
    """(index of the delimiter closing the one at open_at, span of the last `[...]` group at the
    top level of the arguments) or (-1, None). The lexer jumps from delimiter to delimiter, past
    literals and comments: a macro's arguments are read without a Python step per byte."""
    depth = 0
    last = None
    list_start = -1
    try:
        for at in lexer.marks(source, lexer.DELIMITERS, open_at, limit):
            c = source[at]
            if c in _OPENERS:
                depth += 1
                if depth == 2 and c == 0x5B:  # [
                    list_start = at
            else:
                depth -= 1
                if depth == 1 and c == 0x5D and list_start >= 0:  # ]
                    last = (list_start, at)
                    list_start = -1
                elif depth == 0:
                    return at, last
    except lexer.LexError:
        pass
    return -1, None


def _lead(source: bytes, open_at: int) -> str:
    m = _LEAD.match(source, open_at + 1)
    if m is None:
        return ""
    return ("@" if m.group(1) else "") + m.group(2).decode("utf-8", "replace")


def _rule_leads(definition: Node) -> list[tuple[str, int, int]]:
    """(lead, first line, last line) of each rule of a `macro_rules!` definition: the lead is the
    identifier its matcher opens with (after an `@`), "" when it opens with anything else."""
    out = []
    for rule in definition.named_children:
        if rule.type != "macro_rule":
            continue
        matcher = rule.child_by_field_name("left")
        lead = ""
        punct = ""
        for c in matcher.children[1:-1] if matcher is not None else ():
            if c.type in ("line_comment", "block_comment"):
                continue
            text = (c.text or b"").decode("utf-8", "replace")
            if c.type == "identifier" and c.child_count == 0:
                lead = punct + text
            elif c.child_count == 0 and not punct and text in _LEAD_PUNCT:
                punct = text
                continue
            break
        out.append((lead, rule.start_point.row + 1, rule.end_point.row + 1))
    return out


def _macro_call(source: bytes, name: str, open_at: int, limit: int, line: int) -> MacroCall:
    close, last = _scan_invocation(source, open_at, limit)
    if close < 0:
        return MacroCall(name, line, None, True)
    lead = _lead(source, open_at)
    if last is None:
        return MacroCall(name, line, lead=lead)
    dtypes = []
    for element in source[last[0] + 1:last[1]].split(b","):
        if not element.strip():
            continue
        m = _LIST_ELEMENT.match(element)
        if m is None:
            return MacroCall(name, line, None, True, lead)
        dtypes.append(m.group(1).decode("utf-8", "replace").split("::")[-1].strip())
    return MacroCall(name, line, dtypes, lead=lead)


def _node_text(node: Node | None, source: bytes) -> str:
    """A node's text, read from the file's bytes."""
    return source[node.start_byte:node.end_byte].decode("utf-8", "replace") if node is not None else ""


def _trait_name(node: Node | None, source: bytes) -> str:
    """`burn::ops::FloatTensorOps<Self>` -> `FloatTensorOps`."""
    return _node_text(node, source).split("<", 1)[0].split("::")[-1].strip()


def _method_names(body: Node, source: bytes, kinds: tuple[str, ...]) -> list[tuple[str, int]]:
    """(name, line) of the functions (or signatures) declared in an impl or trait body."""
    out = []
    for item in body.named_children:
        if item.type in kinds:
            name = item.child_by_field_name("name")
            if name is not None:
                out.append((_node_text(name, source), item.start_point.row + 1))
    return out


def _code_facts(root: Node, source: bytes, facts: FileFacts, profile: Profile) -> None:
    reversed_source = source[::-1]  # for _CALL_REVERSED
    suffix = profile.code.ops_trait_suffix  # the target's backend operation traits: FloatTensorOps, ModuleOps
    test_attribute = profile.test_attribute
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, trait = stack.pop()
        for c in node.named_children:
            t = c.type
            if t == "function_item":
                name = c.child_by_field_name("name")
                body = c.child_by_field_name("body")
                if name is None or body is None or _has_test_attribute(c, test_attribute):
                    continue
                calls, macros = _calls_in(source, reversed_source, body.start_byte, body.end_byte,
                                          body.start_point.row + 1)
                facts.functions.append(FnFacts(_node_text(name, source), c.start_point.row + 1, c.end_point.row + 1,
                                               trait, calls, macros))
            elif t == "impl_item":
                body = c.child_by_field_name("body")
                tname = _trait_name(c.child_by_field_name("trait"), source)
                ops = tname.endswith(suffix)
                if ops and body is not None:
                    typ = c.child_by_field_name("type")
                    facts.impls.append(ImplFacts(tname, norm(_node_text(typ, source)) or "?", c.start_point.row + 1,
                                                 _method_names(body, source, ("function_item",))))
                if body is not None:
                    stack.append((body, tname if ops else ""))
            elif t == "trait_item":
                name = c.child_by_field_name("name")
                body = c.child_by_field_name("body")
                trait_name = _node_text(name, source)
                if name is None or body is None or not trait_name.endswith(suffix):
                    continue
                header = norm(source[name.end_byte:body.start_byte].decode("utf-8", "replace"))
                methods = [n for n, _ in _method_names(body, source, ("function_item", "function_signature_item"))]
                facts.traits.append(TraitFacts(trait_name, c.start_point.row + 1, header, methods))
            elif t == "mod_item":
                body = c.child_by_field_name("body")
                # Test modules are never reached from an operation.
                if body is not None and not _has_test_attribute(c, test_attribute):
                    stack.append((body, ""))
            elif t == "macro_definition":
                name = c.child_by_field_name("name")
                if name is None:
                    continue
                calls, macros = _calls_in(source, reversed_source, c.start_byte, c.end_byte, c.start_point.row + 1)
                facts.macro_defs.append(MacroDefFacts(_node_text(name, source), c.start_point.row + 1, calls, macros,
                                                      _rule_leads(c)))


def macro_invocations(source: bytes, names: set[str]) -> list[MacroCall]:
    """The invocations of the macros `names` anywhere in a file, each with the dtype list it
    hands over (its last `[...]` argument), as the code facts read them."""
    _, macros = _calls_in(source, source[::-1], 0, len(source), 1)
    return [m for m in macros if m.name in names]
