"""Site facts: every panic-family call with the syntax around it (the match arm, let-else or
if-let it is the body of, the arms of that match, the function, impl, module and test attributes
around it, its message), read from a tree and, through shadow parses, from the token trees of
macro calls and macro_rules bodies."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from analyzer.facts.messages import LiteralError, build_message, decode_string_literal
from analyzer.facts.model import ArmFacts, SiteFacts, VariantRef
from analyzer.facts.patterns import _ERROR_VARIANTS, is_catch_all, is_error_handling, pattern_refs
from analyzer.facts.prefilter import PANIC_HINT, PANIC_WORDS
from analyzer.facts.syntax import (
    _COMMENTS,
    _has_test_attribute,
    _is_cfg,
    _matches_at,
    _parser,
    _text,
    norm,
)
from analyzer.facts.tokentrees import _MAX_SHADOW_DEPTH, _shadow


def _is_whole_body(call: Node, body: Node) -> bool:
    """The call is `body` itself, or a top-level statement of the block `body` (with or without
    `;`, beside comments or other statements): every path through `body` reaches it."""
    if body.id == call.id:
        return True
    if body.type != "block":
        return False
    for c in body.named_children:
        if c.id == call.id:
            return True
        if c.type == "expression_statement" and c.named_children and c.named_children[0].id == call.id:
            return True
    return False


def _arm_body_panics(body: Node | None) -> bool:
    if body is None:
        return False
    if _panic_macro_name(body):
        return True
    if body.type == "block":
        for c in body.named_children:
            target = c.named_children[0] if c.type == "expression_statement" and c.named_children else c
            if _panic_macro_name(target):
                return True
    return False


def _panic_macro_name(node: Node) -> str:
    if node.type != "macro_invocation":
        return ""
    m = node.child_by_field_name("macro")
    if m is None:
        return ""
    name = m.child_by_field_name("name") if m.type == "scoped_identifier" else m
    text = _text(name).decode() if name is not None else ""
    return text if text in ("panic", "unimplemented", "todo", "unreachable") else ""


@dataclass
class _Placement:
    context: str
    unconditional: bool
    scrutinee: str = ""
    arm_index: int = -1
    arms: list[ArmFacts] = field(default_factory=list)
    condition: str = ""
    branch: str = ""
    fn_kind: str = ""
    fn_trait: str = ""


def _placement(call: Node, tx, arms_of: dict | None = None) -> _Placement:  # noqa: C901 (one walk up the tree, a branch per kind of parent)
    """Find the match arm, let-else or if-let that the call is the body of. `tx(node)` gives a
    node's text from the original file. `arms_of` keeps each match's arm facts by node id, so a
    match of n panicking arms is read once, not n times."""
    node = call
    parent = call.parent
    # Climb through the block that wraps the call, if any.
    while parent is not None and parent.type in ("expression_statement", "block"):
        node, parent = parent, parent.parent
    if parent is None:
        return _Placement("other", False)
    if parent.type == "match_arm":
        body = parent.child_by_field_name("value")
        unconditional = body is not None and _is_whole_body(call, body)
        block = parent.parent
        match = block.parent if block is not None else None
        if block is None or match is None or match.type != "match_expression":
            return _Placement("other", False)
        value = match.child_by_field_name("value")
        cached = arms_of.get(block.id) if arms_of is not None else None
        if cached is None:
            cached = _arm_facts(block, tx)
            if arms_of is not None:
                arms_of[block.id] = cached
        arms, index_of = cached
        index = index_of.get(parent.id, -1)
        return _Placement("match-arm", unconditional,
                          norm(tx(value)) if value is not None else "", index, arms)
    if parent.type == "let_declaration" and node.type == "block":
        alt = parent.child_by_field_name("alternative")
        if alt is not None and alt.id == node.id:
            pat = parent.child_by_field_name("pattern")
            value = parent.child_by_field_name("value")
            return _let_placement("let-else", call, node, pat, value, tx)
    if parent.type == "else_clause":
        ifx = parent.parent
        if ifx is not None and ifx.type == "if_expression":
            cond = ifx.child_by_field_name("condition")
            if cond is not None and cond.type == "let_condition":
                return _let_placement("if-let-else", call, node, cond.child_by_field_name("pattern"),
                                      cond.child_by_field_name("value"), tx)
    if parent.type == "if_expression":
        cons = parent.child_by_field_name("consequence")
        cond = parent.child_by_field_name("condition")
        if cons is not None and cons.id == node.id and cond is not None and cond.type == "let_condition":
            return _let_placement("if-let", call, node, cond.child_by_field_name("pattern"),
                                  cond.child_by_field_name("value"), tx)
    branch = _plain_if_branch(node, parent)
    if branch is not None:
        cond = branch[0].child_by_field_name("condition")
        return _Placement("guard", _is_whole_body(call, node), condition=norm(tx(cond)) if cond is not None else "",
                          branch=branch[1])
    if parent.type == "function_item" and _is_function_body(call, node, parent):
        kind, trait = _function_kind(parent)
        return _Placement("body", True, fn_kind=kind, fn_trait=trait)
    # Deeper inside an arm (behind an `if`, in a loop): an arm site, but a conditional one. A
    # closure or a nested function is code of its own, not the arm's body.
    up: Node | None = parent
    while up is not None and up.type not in _CODE_BOUNDARY:
        if up.type == "match_arm":
            place = _placement(_arm_body_anchor(up), tx, arms_of)
            return _Placement(place.context, False, place.scrutinee, place.arm_index, place.arms)
        up = up.parent
    return _Placement("other", False)


def _cfg_gate(call: Node, tx) -> _Placement | None:
    """A guard when the call's statement carries a `#[cfg(..)]` attribute
    (`#[cfg(not(target_has_atomic = "32"))] panic!("..")`): the build the user chose (a target, a
    feature) decides whether it runs, as an `if` on a setting would. Only a call no other
    arm reads: a gated statement in an arm stays the arm's; in an `if`, the gate is the nearer test."""
    stmt = call.parent if call.parent is not None and call.parent.type == "expression_statement" else call
    sib = stmt.prev_named_sibling
    while sib is not None and sib.type in _COMMENTS:
        sib = sib.prev_named_sibling
    if sib is None or not _is_cfg(sib):
        return None
    return _Placement("guard", True, condition=norm(tx(sib)), branch="cfg")


def _plain_if_branch(node: Node, parent: Node) -> tuple[Node, str] | None:
    """(the `if`, `then` | `else`) when the block `node` is a branch of a plain `if` (not `if
    let`): its consequence, or the block of its `else`."""
    if node.type != "block":
        return None
    ifx: Node | None = parent
    branch = "then"
    if parent.type == "else_clause":
        ifx, branch = parent.parent, "else"
    else:
        cons = parent.child_by_field_name("consequence")
        if cons is None or cons.id != node.id:
            return None
    if ifx is None or ifx.type != "if_expression":
        return None
    cond = ifx.child_by_field_name("condition")
    # `if let P = v && test { .. }` (a let chain) is a guard: the call runs when a value read
    # from the input passes a test, as in a plain `if`; a lone `if let` is an if-let site.
    if cond is None or cond.type == "let_condition":
        return None
    return ifx, branch


def _is_function_body(call: Node, block: Node, function: Node) -> bool:
    """The call is all the function's body holds, beside comments and `let _ = ..;` bindings that
    silence unused arguments. A shadow parse's own wrapper function (`__m`) is no function."""
    body = function.child_by_field_name("body")
    name = function.child_by_field_name("name")
    if body is None or body.id != block.id or (name is not None and name.text == b"__m"):
        return False
    rest = [c for c in block.named_children if c.type not in _COMMENTS and not _silences(c)]
    return len(rest) == 1 and _is_whole_body(call, block)


def _silences(stmt: Node) -> bool:
    if stmt.type != "let_declaration":
        return False
    pat = stmt.child_by_field_name("pattern")
    return pat is not None and pat.text is not None and pat.text.startswith(b"_")


def _function_kind(function: Node) -> tuple[str, str]:
    """What the function is (trait-impl, trait-default, method, free) and the trait's name."""
    holder = function.parent.parent if function.parent is not None else None
    if holder is not None and holder.type == "trait_item":
        name = holder.child_by_field_name("name")
        return "trait-default", _text(name).decode() if name is not None else ""
    if holder is not None and holder.type == "impl_item":
        trait = holder.child_by_field_name("trait")
        if trait is None:
            return "method", ""
        path = norm(_text(trait).decode("utf-8", "replace")).split("<")[0]
        return "trait-impl", path.split("::")[-1].strip()
    return "free", ""


# The arm's value hands back a name its pattern binds: `v`, `&v`, `*v`, or a conversion of it
# (`v.clone()`, `v.into_shared()`); a method that computes something else (`d.strategy()`) does not.
_CONVERSION = r"clone|cloned|copied|to_owned|to_vec|into|into_shared|into_inner|as_ref|as_mut|as_slice|borrow|view"
_BINDING_VALUE = re.compile(rf"^[&*\s]*(?:mut\s+)?([a-z_][A-Za-z0-9_]*)(?:\s*\.\s*(?:{_CONVERSION})\s*\(\s*\))*$")
_PATTERN_NAME = re.compile(r"(?<![A-Za-z0-9_:])([a-z_][A-Za-z0-9_]*)\b(?!\s*(?:::|\())")


def _returns_binding(pattern: str, value: Node | None, tx) -> bool:
    """The value (an expression, or a block holding only one) is a name the pattern binds."""
    if value is None:
        return False
    if value.type == "block":
        inner = [c for c in value.named_children if c.type not in _COMMENTS]
        if len(inner) != 1 or inner[0].type == "expression_statement":
            return False
        value = inner[0]
    m = _BINDING_VALUE.match(norm(tx(value)))
    if m is None:
        return False
    names = set(_PATTERN_NAME.findall(pattern)) - {"ref", "mut", "_"}
    return m.group(1) in names


def _arm_is_gated(arm: Node) -> bool:
    """A `#[cfg(..)]` on the arm: tree-sitter puts it among the arm's children or, before the
    first arm, as a sibling in the match block."""
    if any(_is_cfg(c) for c in arm.children):
        return True
    prev = arm.prev_named_sibling
    while prev is not None and prev.type in ("attribute_item", *_COMMENTS):
        if _is_cfg(prev):
            return True
        prev = prev.prev_named_sibling
    return False


def _arm_facts(block: Node, tx) -> tuple[list[ArmFacts], dict[int, int]]:
    """The facts of each arm of a match block, and each arm's index by node id."""
    arms: list[ArmFacts] = []
    index_of: dict[int, int] = {}
    for arm in (c for c in block.named_children if c.type == "match_arm"):
        pat = arm.child_by_field_name("pattern")
        if pat is None:
            continue
        cond = pat.child_by_field_name("condition")
        guard = cond is not None
        # The pattern's own nodes; `_` is an anonymous node, so named_children misses it.
        core = [c for c in pat.children if (c.is_named or c.type == "_") and c.type not in _COMMENTS
                and (cond is None or c.id != cond.id)]
        refs: list[VariantRef] = []
        for c in core:
            refs.extend(pattern_refs(c))
        pattern_text = norm(tx(pat))
        index_of[arm.id] = len(arms)
        arms.append(ArmFacts(
            pattern=pattern_text,
            refs=refs,
            catch_all=bool(core) and all(is_catch_all(c) for c in core) and not guard,
            guard=guard,
            panics=_arm_body_panics(arm.child_by_field_name("value")),
            # Only a pattern whose text names a variant of Result or Option can handle one.
            error_handling=(any(v in pattern_text for v in _ERROR_VARIANTS)
                            and any(is_error_handling(c) for c in core)),
            line=arm.start_point.row + 1,
            gated=_arm_is_gated(arm),
            returns_binding=_returns_binding(pattern_text, arm.child_by_field_name("value"), tx),
        ))
    return arms, index_of


_CODE_BOUNDARY = ("closure_expression", "function_item", "async_block", "const_item", "static_item")


def _arm_body_anchor(arm: Node) -> Node:
    """A node that `_placement` resolves to `arm`: its body (climbing from there finds the arm)."""
    body = arm.child_by_field_name("value")
    return body if body is not None else arm


def _let_placement(kind: str, call: Node, body: Node, pat: Node | None, value: Node | None,
                   tx) -> _Placement:
    """A let-else / if-let: the pattern is written as one arm; the panic is the other side."""
    if pat is None:
        return _Placement("other", False)
    refs = pattern_refs(pat)
    text = norm(tx(pat))
    arm = ArmFacts(pattern=text, refs=refs,
                   catch_all=is_catch_all(pat), guard=False, panics=(kind == "if-let"),
                   error_handling=is_error_handling(pat), line=pat.start_point.row + 1,
                   returns_binding=_returns_binding(text, _written_side(kind, body), tx))
    return _Placement(kind, _is_whole_body(call, body),
                      norm(tx(value)) if value is not None else "", 0, [arm])


def _written_side(kind: str, body: Node) -> Node | None:
    """The value the written pattern's side gives: the `if let`'s consequence, or the expression
    that ends the block after a let-else."""
    if kind == "if-let-else":
        clause = body.parent
        ifx = clause.parent if clause is not None else None
        return ifx.child_by_field_name("consequence") if ifx is not None else None
    if kind == "let-else":
        decl = body.parent
        nxt = decl.next_named_sibling if decl is not None else None
        while nxt is not None and nxt.type in _COMMENTS:
            nxt = nxt.next_named_sibling
        if nxt is not None and nxt.next_named_sibling is None and nxt.type != "expression_statement":
            return nxt
    return None


def _enclosing(node: Node) -> tuple[str, str, str, bool]:
    """(function, impl header, item path, in test code) for the items around `node`."""
    function = impl = ""
    parts: list[str] = []
    in_test = False
    n = node.parent
    while n is not None:
        t = n.type
        if t in ("function_item", "mod_item", "impl_item", "trait_item", "macro_definition"):
            if _has_test_attribute(n):
                in_test = True
            if t == "function_item":
                name = n.child_by_field_name("name")
                label = _text(name).decode() if name is not None else "?"
                function = function or label
                parts.append(f"fn {label}")
            elif t == "mod_item":
                name = n.child_by_field_name("name")
                label = _text(name).decode() if name is not None else "?"
                if label == "tests":
                    in_test = in_test or _has_test_attribute(n)
                parts.append(f"mod {label}")
            elif t == "impl_item":
                header = _impl_header(n)
                impl = impl or header
                parts.append(header)
            elif t == "trait_item":
                name = n.child_by_field_name("name")
                parts.append(f"trait {_text(name).decode() if name is not None else '?'}")
            else:
                name = n.child_by_field_name("name")
                parts.append(f"macro_rules! {_text(name).decode() if name is not None else '?'}")
        n = n.parent
    return function, impl, "::".join(reversed(parts)), in_test


def _impl_header(node: Node) -> str:
    typ = node.child_by_field_name("type")
    trait = node.child_by_field_name("trait")
    t = norm(_text(typ).decode("utf-8", "replace")) if typ is not None else "?"
    if trait is not None:
        return f"impl {norm(_text(trait).decode('utf-8', 'replace'))} for {t}"
    return f"impl {t}"


# ---------------------------------------------------------------------------------------------
# Messages


def _message_of(call: Node, source: bytes, offset: int, macro: str):
    """Decode the call's first argument as the record's errorMessage. Text comes from the original
    bytes (`offset` maps shadow positions back), so shadow substitutions never leak in."""
    tt = next((c for c in call.children if c.type == "token_tree"), None)
    if tt is None:
        return build_message(macro, None), True
    tokens = tt.children[1:-1]  # strip the delimiters
    first: list[Node] = []
    for tok in tokens:
        if tok.type == ",":
            break
        first.append(tok)
    if not first:
        return build_message(macro, None), True
    text = source[first[0].start_byte - offset:first[-1].end_byte - offset].decode("utf-8", "replace")
    if len(first) == 1 and first[0].type in ("string_literal", "raw_string_literal"):
        try:
            return build_message(macro, decode_string_literal(text)), True
        except LiteralError:
            pass
    return build_message(macro, None, norm(text)), False


def _collect_sites(root: Node, source: bytes, offset: int, in_macro: str, outer: Node | None,
                   sites: list[SiteFacts], depth: int, wrapper=None, span: tuple[int, int] | None = None) -> None:
    """Sites parsed as Rust, then those hidden in token trees through a shadow parse.

    `offset` maps a shadow tree's bytes back to the file; `outer` is the token tree's node in the
    enclosing tree, whose items (function, impl, test module) surround every site found inside.
    `wrapper` is (macro call node, its text function) when the token tree is a macro call's
    arguments: a call that is all the wrapper holds (`comptime![panic!(..)]`) stands where the
    wrapper stands.
    """
    def tx(node: Node) -> str:
        return source[node.start_byte - offset:node.end_byte - offset].decode("utf-8", "replace")

    lo, hi = span or (0, len(source))
    arms_of: dict = {}
    for _, caps in _matches_at("panic_calls.scm", root, source, PANIC_WORDS, lo, hi, offset):
        call = caps["call"][0]
        macro = _text(caps["name"][0]).decode()
        mnode = call.child_by_field_name("macro")
        place = _placement(call, tx, arms_of)
        if place.context == "other" and wrapper is not None and _is_whole_shadow(call):
            place = _placement(*wrapper)
        if place.context in ("other", "guard"):
            place = _cfg_gate(call, tx) or place
        function, impl, item_path, in_test = _enclosing(call)
        if outer is not None:
            o_function, o_impl, o_path, o_test = _enclosing(outer)
            function = function if function and function != "__m" else o_function
            impl = impl or o_impl
            inner = item_path.replace("fn __m", "").strip(":")
            label = in_macro if in_macro.startswith("macro_rules!") else f"{in_macro}!"
            if o_path.endswith(label):
                label = ""
            item_path = "::".join(p for p in (o_path, label, inner) if p)
            in_test = in_test or o_test
        msg, literal = _message_of(call, source, offset, macro)
        sites.append(SiteFacts(
            macro=macro,
            macro_path=norm(tx(mnode)) if mnode is not None else macro,
            line=call.start_point.row + 1,
            # 1-based byte column, from the file itself (shadow rows are the file's, columns not always).
            column=_column(source, call.start_byte - offset),
            start_byte=call.start_byte - offset,
            end_byte=call.end_byte - offset,
            message=msg.text,
            message_segments=[(s.text, s.placeholder) for s in msg.segments],
            message_literal=literal,
            context=place.context,
            unconditional=place.unconditional,
            condition=place.condition,
            branch=place.branch,
            fn_kind=place.fn_kind,
            fn_trait=place.fn_trait,
            scrutinee=place.scrutinee,
            arm_index=place.arm_index,
            arms=place.arms,
            function=function,
            impl=impl,
            item_path=item_path,
            in_test=in_test,
            in_macro=in_macro,
        ))
    if depth >= _MAX_SHADOW_DEPTH:
        return
    for _, caps in _matches_at("token_trees.scm", root, source, PANIC_WORDS, lo, hi, offset):
        body = caps["body"][0]
        macro_node = caps.get("macro", [None])[0]
        if macro_node is not None:
            name = norm(source[macro_node.start_byte - offset:macro_node.end_byte - offset].decode("utf-8", "replace"))
            if name.split("::")[-1] in ("panic", "unimplemented", "todo", "unreachable"):
                continue
        else:
            rules = body.parent.parent if body.parent is not None else None
            nm = rules.child_by_field_name("name") if rules is not None else None
            name = "macro_rules! " + (_text(nm).decode() if nm is not None else "?")
        start, end = body.start_byte - offset, body.end_byte - offset
        if not PANIC_HINT.search(source, start, end):
            continue
        shadow, shadow_offset = _shadow(source, start, end)
        tree = _parser().parse(shadow)
        inner_wrapper = (body.parent, tx) if macro_node is not None and body.parent is not None else None
        _collect_sites(tree.root_node, source, shadow_offset, name,
                       body if outer is None else outer, sites, depth + 1, inner_wrapper, (start, end))


def _column(source: bytes, at: int) -> int:
    """1-based byte column of offset `at` in the file: back to the line's start, so the cost is
    the line's length (listing every line end of the file took longer than all the columns)."""
    return at - source.rfind(b"\n", 0, at)


def _is_whole_shadow(call: Node) -> bool:
    """The call is the only statement of a shadow parse's `fn __m() { .. }` body."""
    block = call.parent
    if block is not None and block.type == "expression_statement":
        block = block.parent
    if block is None or block.type != "block" or block.parent is None or block.parent.type != "function_item":
        return False
    name = block.parent.child_by_field_name("name")
    if name is None or name.text != b"__m":
        return False
    stmts = [c for c in block.named_children if c.type not in _COMMENTS]
    return len(stmts) == 1 and _is_whole_body(call, block)
