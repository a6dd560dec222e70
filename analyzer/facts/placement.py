"""Where a panic-family call stands: the match arm, let-else or if-let it is the body of (with the
arms of that match), the plain `if` or `#[cfg]` that guards it, or the function body it is all of.
Read by walking up the tree from the call (sites.py collects the calls)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from analyzer.facts.model import ArmFacts, VariantRef
from analyzer.facts.patterns import _ERROR_VARIANTS, is_catch_all, is_error_handling, pattern_refs
from analyzer.facts.syntax import _COMMENTS, MAX_ATTRIBUTES_READ, NO_NAV, Nav, _is_cfg, _text, norm


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
    text = _text(name).decode("utf-8", "replace") if name is not None else ""
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


def _placement(call: Node, tx, arms_of: dict | None = None, nav: Nav = NO_NAV) -> _Placement:  # noqa: C901 (one walk up the tree, a branch per kind of parent)
    """Find the match arm, let-else or if-let that the call is the body of. `tx(node)` gives a
    node's text from the original file. `arms_of` keeps each match's arm facts by node id, so a
    match of n panicking arms is read once, not n times."""
    node = call
    parent = nav.parent(call)
    # Climb through the block that wraps the call, if any.
    while parent is not None and parent.type in ("expression_statement", "block"):
        node, parent = parent, nav.parent(parent)
    if parent is None:
        return _Placement("other", False)
    if parent.type == "match_arm":
        body = parent.child_by_field_name("value")
        unconditional = body is not None and _is_whole_body(call, body)
        block = nav.parent(parent)
        match = nav.parent(block) if block is not None else None
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
            return _let_placement("let-else", call, node, pat, value, tx, nav)
    if parent.type == "else_clause":
        ifx = nav.parent(parent)
        if ifx is not None and ifx.type == "if_expression":
            cond = ifx.child_by_field_name("condition")
            if cond is not None and cond.type == "let_condition":
                return _let_placement("if-let-else", call, node, cond.child_by_field_name("pattern"),
                                      cond.child_by_field_name("value"), tx, nav)
    if parent.type == "if_expression":
        cons = parent.child_by_field_name("consequence")
        cond = parent.child_by_field_name("condition")
        if cons is not None and cons.id == node.id and cond is not None and cond.type == "let_condition":
            return _let_placement("if-let", call, node, cond.child_by_field_name("pattern"),
                                  cond.child_by_field_name("value"), tx, nav)
    branch = _plain_if_branch(node, parent, nav)
    if branch is not None:
        cond = branch[0].child_by_field_name("condition")
        return _Placement("guard", _is_whole_body(call, node), condition=norm(tx(cond)) if cond is not None else "",
                          branch=branch[1])
    if parent.type == "function_item" and _is_function_body(call, node, parent):
        kind, trait = _function_kind(parent, nav)
        return _Placement("body", True, fn_kind=kind, fn_trait=trait)
    if parent.type == "closure_expression" and _is_closure_body(call, node, parent):
        return _Placement("closure", True)
    # Deeper inside an arm (behind an `if`, in a loop): an arm site, but a conditional one. A
    # closure or a nested function is code of its own, not the arm's body.
    up: Node | None = parent
    while up is not None and up.type not in _CODE_BOUNDARY:
        if up.type == "match_arm":
            place = _placement(_arm_body_anchor(up), tx, arms_of, nav)
            return _Placement(place.context, False, place.scrutinee, place.arm_index, place.arms)
        up = nav.parent(up)
    return _Placement("other", False)


def _cfg_gate(call: Node, tx, nav: Nav = NO_NAV) -> _Placement | None:
    """A guard when the call's statement carries a `#[cfg(..)]` attribute
    (`#[cfg(not(target_has_atomic = "32"))] panic!("..")`): the build the user chose (a target, a
    feature) decides whether it runs, as an `if` on a setting would. Only a call no other
    arm reads: a gated statement in an arm stays the arm's; in an `if`, the gate is the nearer test."""
    up = nav.parent(call)
    stmt = up if up is not None and up.type == "expression_statement" else call
    sib = nav.prev_named(stmt)
    for _ in range(MAX_ATTRIBUTES_READ):  # each step back walks the siblings before it
        if sib is None or sib.type not in _COMMENTS:
            break
        sib = nav.prev_named(sib)
    if sib is None or not _is_cfg(sib):
        return None
    return _Placement("guard", True, condition=norm(tx(sib)), branch="cfg")


def _plain_if_branch(node: Node, parent: Node, nav: Nav = NO_NAV) -> tuple[Node, str] | None:
    """(the `if`, `then` | `else`) when the block `node` is a branch of a plain `if` (not `if
    let`): its consequence, or the block of its `else`."""
    if node.type != "block":
        return None
    ifx: Node | None = parent
    branch = "then"
    if parent.type == "else_clause":
        ifx, branch = nav.parent(parent), "else"
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


def _is_closure_body(call: Node, node: Node, closure: Node) -> bool:
    """The call is all a closure's body holds (`.map(|_| todo!(".."))`, `|| { panic!(..) }`): every
    element or value the closure is handed reaches it."""
    body = closure.child_by_field_name("body")
    if body is None or body.id != node.id:
        return False
    if node.id == call.id:
        return True
    rest = [c for c in node.named_children if c.type not in _COMMENTS]
    return len(rest) == 1 and _is_whole_body(call, node)


def _silences(stmt: Node) -> bool:
    if stmt.type != "let_declaration":
        return False
    pat = stmt.child_by_field_name("pattern")
    return pat is not None and pat.text is not None and pat.text.startswith(b"_")


def _function_kind(function: Node, nav: Nav = NO_NAV) -> tuple[str, str]:
    """What the function is (trait-impl, trait-default, method, free) and the trait's name."""
    up = nav.parent(function)
    holder = nav.parent(up) if up is not None else None
    if holder is not None and holder.type == "trait_item":
        name = holder.child_by_field_name("name")
        return "trait-default", _text(name).decode("utf-8", "replace") if name is not None else ""
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
_MAX_BINDING_VALUE = 256
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
    if value.end_byte - value.start_byte > _MAX_BINDING_VALUE:
        return False  # no name and conversions are that long; reading the text of every arm's body was quadratic
    m = _BINDING_VALUE.match(norm(tx(value)))
    if m is None:
        return False
    names = set(_PATTERN_NAME.findall(pattern)) - {"ref", "mut", "_"}
    return m.group(1) in names


def _arm_is_gated(arm: Node, siblings: list[Node], at: int) -> bool:
    """A `#[cfg(..)]` on the arm (`siblings[at]` of its match block's named children):
    tree-sitter puts it among the arm's children or, before the first arm, as a sibling in the
    match block (read from the list: asking each arm for its previous sibling walks the arms
    before it)."""
    if any(_is_cfg(c) for c in arm.children):
        return True
    i = at - 1
    while i >= 0 and siblings[i].type in ("attribute_item", *_COMMENTS):
        if _is_cfg(siblings[i]):
            return True
        i -= 1
    return False


def _arm_facts(block: Node, tx) -> tuple[list[ArmFacts], dict[int, int]]:
    """The facts of each arm of a match block, and each arm's index by node id."""
    arms: list[ArmFacts] = []
    index_of: dict[int, int] = {}
    siblings = block.named_children
    for at, arm in enumerate(siblings):
        if arm.type != "match_arm":
            continue
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
            gated=_arm_is_gated(arm, siblings, at),
            returns_binding=_returns_binding(pattern_text, arm.child_by_field_name("value"), tx),
        ))
    return arms, index_of


_CODE_BOUNDARY = ("closure_expression", "function_item", "async_block", "const_item", "static_item")


def _arm_body_anchor(arm: Node) -> Node:
    """A node that `_placement` resolves to `arm`: its body (climbing from there finds the arm)."""
    body = arm.child_by_field_name("value")
    return body if body is not None else arm


def _let_placement(kind: str, call: Node, body: Node, pat: Node | None, value: Node | None,
                   tx, nav: Nav = NO_NAV) -> _Placement:
    """A let-else / if-let: the pattern is written as one arm; the panic is the other side."""
    if pat is None:
        return _Placement("other", False)
    refs = pattern_refs(pat)
    text = norm(tx(pat))
    arm = ArmFacts(pattern=text, refs=refs,
                   catch_all=is_catch_all(pat), guard=False, panics=(kind == "if-let"),
                   error_handling=is_error_handling(pat), line=pat.start_point.row + 1,
                   returns_binding=_returns_binding(text, _written_side(kind, body, nav), tx))
    return _Placement(kind, _is_whole_body(call, body),
                      norm(tx(value)) if value is not None else "", 0, [arm])


def _written_side(kind: str, body: Node, nav: Nav = NO_NAV) -> Node | None:
    """The value the written pattern's side gives: the `if let`'s consequence, or the expression
    that ends the block after a let-else."""
    if kind == "if-let-else":
        clause = nav.parent(body)
        ifx = nav.parent(clause) if clause is not None else None
        return ifx.child_by_field_name("consequence") if ifx is not None else None
    if kind == "let-else":
        decl = nav.parent(body)
        nxt = decl.next_named_sibling if decl is not None else None
        for _ in range(MAX_ATTRIBUTES_READ):  # each step costs the siblings before it
            if nxt is None or nxt.type not in _COMMENTS:
                break
            nxt = nxt.next_named_sibling
        if nxt is not None and nxt.next_named_sibling is None and nxt.type != "expression_statement":
            return nxt
    return None
