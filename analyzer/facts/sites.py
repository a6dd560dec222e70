"""Site facts: every panic-family call with the syntax around it (where it stands, read by
placement.py; the function, impl, module and test attributes around it; its message), read from
a tree and, through shadow parses, from the token trees of macro calls and macro_rules bodies."""

from __future__ import annotations

import re
from bisect import bisect_left

from tree_sitter import Node

from analyzer.facts.macronames import generated_fn_name
from analyzer.facts.messages import LiteralError, build_message, decode_string_literal
from analyzer.facts.model import SiteFacts
from analyzer.facts.placement import _cfg_gate, _is_whole_body, _placement, _Placement
from analyzer.facts.prefilter import PANIC_HINT, SITE_CALL_WORDS, file_site_words
from analyzer.facts.syntax import _COMMENTS, NO_NAV, Nav, _has_test_attribute, _parser, _text, norm
from analyzer.facts.tokentrees import _shadow
from analyzer.profiles import Profile

# The shadow parses' limits (ShadowBudget): nesting read in full, and the bytes a file's shadows read.
MAX_SHADOW_DEPTH = 32
SHADOW_BYTES_PER_FILE_BYTE = 8
SHADOW_BYTES_FLOOR = 1_000_000


# (function, impl header, item path, in test code): what the items around a node say of it.
Enclosing = tuple[str, str, str, bool]
_TOP: Enclosing = ("", "", "", False)
_ITEMS = frozenset(("function_item", "mod_item", "impl_item", "trait_item", "macro_definition"))


def _within(frame: Enclosing, n: Node, test_attribute: re.Pattern) -> Enclosing:
    """The enclosing facts inside item `n`, whose own enclosing facts are `frame`: the innermost
    function and impl win, the path grows by the item. Found on the walk down, one step per item:
    walking up from each call (each `parent` step costing the depth) was cubic on deep nesting."""
    function, impl, path, in_test = frame
    t = n.type
    in_test = in_test or _has_test_attribute(n, test_attribute)
    name = n.child_by_field_name("name")
    label = _text(name).decode("utf-8", "replace") if name is not None else "?"
    if t == "function_item":
        function, part = label, f"fn {label}"
    elif t == "mod_item":
        part = f"mod {label}"
    elif t == "impl_item":
        impl = part = _impl_header(n)
    elif t == "trait_item":
        part = f"trait {label}"
    else:
        part = f"macro_rules! {label}"
    return function, impl, f"{path}::{part}" if path else part, in_test


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


# The assertion macros, and where their message stands among their arguments; a message-less
# assertion names nothing it refuses and is no site.
ASSERTIONS = {"assert": 1, "assert_eq": 2, "assert_ne": 2}


def _arguments(tt: Node) -> list[list[Node]]:
    """The top-level comma-separated arguments of a macro call's token tree."""
    args: list[list[Node]] = [[]]
    for tok in tt.children[1:-1]:  # strip the delimiters
        if tok.type == ",":
            args.append([])
        elif tok.type not in _COMMENTS:
            args[-1].append(tok)
    return [a for a in args if a] if args[-1] or len(args) > 1 else []


def _assertion(call: Node, macro: str, source: bytes, offset: int):
    """(message, literal, condition) of an assertion with a message, else None. The condition is
    what must hold: the assertion's own for `assert!`, `left == right` (`!=`) for the others."""
    tt = next((c for c in call.children if c.type == "token_tree"), None)
    if tt is None:
        return None
    args = _arguments(tt)
    at = ASSERTIONS[macro]
    if len(args) <= at:
        return None

    def text(nodes: list[Node]) -> str:
        return source[nodes[0].start_byte - offset:nodes[-1].end_byte - offset].decode("utf-8", "replace")

    first = args[at]
    if len(first) == 1 and first[0].type in ("string_literal", "raw_string_literal"):
        try:
            msg, literal = build_message(macro, decode_string_literal(text(first))), True
        except LiteralError:
            msg, literal = build_message(macro, None, norm(text(first))), False
    else:
        msg, literal = build_message(macro, None, norm(text(first))), False
    if at == 1:
        condition = norm(text(args[0]))
    else:
        condition = f"{norm(text(args[0]))} {'==' if macro == 'assert_eq' else '!='} {norm(text(args[1]))}"
    return msg, literal, condition


def _expect(call: Node, source: bytes, offset: int, nav: Nav = NO_NAV):
    """(message, receiver) of `.expect("..")` handed one string literal, or a name bound to one
    (_bound_literal), else None: a message computed at run time (`&format!(..)`) is not read."""
    args = call.child_by_field_name("arguments")
    function = call.child_by_field_name("function")
    receiver = function.child_by_field_name("value") if function is not None else None
    if args is None or receiver is None:
        return None
    named = [c for c in args.named_children if c.type not in _COMMENTS]
    if len(named) != 1:
        return None
    lit = named[0] if named[0].type != "identifier" else _bound_literal(call, named[0].text or b"", nav)
    if lit is None or lit.type not in ("string_literal", "raw_string_literal"):
        return None
    try:
        text = decode_string_literal(source[lit.start_byte - offset:lit.end_byte - offset].decode("utf-8", "replace"))
    except LiteralError:
        return None
    rec = norm(source[receiver.start_byte - offset:receiver.end_byte - offset].decode("utf-8", "replace"))
    return build_message("expect", text), rec


def _bound_literal(call: Node, name: bytes, nav: Nav = NO_NAV) -> Node | None:
    """The string literal a name is bound to before the call, in a block around it or an item
    list (`let msg = "..";`, `const MSG: &str = "..";`): a message written once for several
    `expect`s. None when the nearest binding of the name holds something else."""
    n = call
    while (holder := nav.parent(n)) is not None:
        if holder.type in ("block", "source_file", "declaration_list"):
            for item in reversed(holder.named_children[:_index_in(holder, n)]):
                field = "pattern" if item.type == "let_declaration" else "name"
                if item.type in ("let_declaration", "const_item", "static_item"):
                    bound = item.child_by_field_name(field)
                    if bound is not None and bound.text == name:
                        return item.child_by_field_name("value")
        n = holder
    return None


def _index_in(holder: Node, child: Node) -> int:
    for i, c in enumerate(holder.named_children):
        if c.id == child.id:
            return i
    return 0


def _statement_of(node: Node, nav: Nav = NO_NAV) -> Node:
    """The statement (a child of a block) that holds `node`, else `node`."""
    n = node
    while (up := nav.parent(n)) is not None and up.type not in ("block", "source_file", "declaration_list"):
        if n.type in _STATEMENT_BOUNDARY:
            return node
        n = up
    return n if nav.parent(n) is not None else node


_STATEMENT_BOUNDARY = ("closure_expression", "function_item", "match_arm")


def _read_call(call: Node, name_node: Node, macro: str, source: bytes, offset: int, tx, arms_of: dict, wrapper,
               nav: Nav = NO_NAV):
    """(message, literal, placement, the node naming the macro, the node whose line and column
    the site gives) of one call, or None for an assertion without a message or an `expect` not
    handed a string literal."""
    if macro == "expect":
        found = _expect(call, source, offset, nav)
        if found is None:
            return None
        # The Option or Result is the test: `.expect` panics on its None or Err.
        return found[0], True, _Placement("guard", True, condition=found[1], branch="expect"), name_node, name_node
    mnode = call.child_by_field_name("macro")
    if macro in ASSERTIONS:
        read = _assertion(call, macro, source, offset)
        if read is None:
            return None
        # The assertion's condition is its guard, wherever the assertion stands.
        return read[0], read[1], _Placement("guard", True, condition=read[2], branch="assert"), mnode, call
    msg, literal = _message_of(call, source, offset, macro)
    place = _placement(call, tx, arms_of, nav)
    if place.context == "other" and wrapper is not None and _is_whole_shadow(call, nav):
        place = _placement(*wrapper)
    if place.context in ("other", "guard"):
        place = _cfg_gate(call, tx, nav) or place
    return msg, literal, place, mnode, call


class ShadowBudget:
    """What the shadow parses of one file may still read. Each level of nested macro calls parses
    its token tree again, so the bytes parsed grow with the nesting: past MAX_SHADOW_DEPTH levels,
    or once the shadows of a file have read SHADOW_BYTES_PER_FILE_BYTE times its size, a token
    tree that may hold a call is left unread and `partial` says so (the file is then listed as
    partly read, never passed over in silence)."""

    def __init__(self, source: bytes):
        self.left = SHADOW_BYTES_PER_FILE_BYTE * len(source) + SHADOW_BYTES_FLOOR
        self.partial = ""


def _collect_sites(root: Node, source: bytes, offset: int, in_macro: str, outer: Node | None,
                   sites: list[SiteFacts], depth: int, profile: Profile, wrapper=None,
                   span: tuple[int, int] | None = None,
                   budget: ShadowBudget | None = None, outer_frame: Enclosing = _TOP) -> None:
    """Sites parsed as Rust, then those hidden in token trees through a shadow parse.

    `offset` maps a shadow tree's bytes back to the file; `outer` is the token tree's node in the
    enclosing tree, whose items (function, impl, test module) surround every site found inside.
    `outer_frame` is what the items around `outer` say of it.
    `wrapper` is (macro call node, its text function) when the token tree is a macro call's
    arguments: a call that is all the wrapper holds (`comptime![panic!(..)]`) stands where the
    wrapper stands.
    """
    def tx(node: Node) -> str:
        return source[node.start_byte - offset:node.end_byte - offset].decode("utf-8", "replace")

    lo, hi = span or (0, len(source))
    arms_of: dict = {}
    names_of: dict[str, str] = {}
    nav = Nav()
    calls, token_trees, call_frames, tree_frames = _word_nodes(root, source, lo, hi, offset, profile, nav)
    for (call, name_node), (function, impl, item_path, in_test) in zip(calls, call_frames):
        macro = _text(name_node).decode("utf-8", "replace").removeprefix("r#")
        read = _read_call(call, name_node, macro, source, offset, tx, arms_of, wrapper, nav)
        if read is None:
            continue
        msg, literal, place, mnode, anchor = read
        if outer is not None:
            o_function, o_impl, o_path, o_test = outer_frame
            function = function if function and function != "__m" else o_function
            impl = impl or o_impl
            inner = item_path.replace("fn __m", "").strip(":")
            label = in_macro if in_macro.startswith("macro_rules!") else f"{in_macro}!"
            if o_path.endswith(label):
                label = ""
            item_path = "::".join(p for p in (o_path, label, inner) if p)
            in_test = in_test or o_test
            if depth == 1 and in_macro.startswith("macro_rules!"):
                function = generated_fn_name(call, source, offset, lo, outer, function, names_of)
        sites.append(SiteFacts(
            macro=macro,
            macro_path=norm(tx(mnode)) if mnode is not None else macro,
            line=anchor.start_point.row + 1,
            # 1-based byte column, from the file itself (shadow rows are the file's, columns not always).
            column=_column(source, anchor.start_byte - offset),
            start_byte=anchor.start_byte - offset,
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
            comment=_comment_before(call if anchor is call else _statement_of(call, nav), tx, nav),
        ))
    if budget is None:
        budget = ShadowBudget(source)
    for (body, macro_node), tree_frame in zip(token_trees, tree_frames):
        if macro_node is not None:
            name = norm(source[macro_node.start_byte - offset:macro_node.end_byte - offset].decode("utf-8", "replace"))
            if name.split("::")[-1] in _NO_CODE_INSIDE:
                continue
        else:
            rules = body.parent.parent if body.parent is not None else None
            nm = rules.child_by_field_name("name") if rules is not None else None
            name = "macro_rules! " + (_text(nm).decode("utf-8", "replace") if nm is not None else "?")
        start, end = body.start_byte - offset, body.end_byte - offset
        if not PANIC_HINT.search(source, start, end) and not _any_between(file_site_words(source)[1], start, end):
            continue
        if depth >= MAX_SHADOW_DEPTH or budget.left < end - start:
            budget.partial = budget.partial or (
                f"macro calls nested deeper than {MAX_SHADOW_DEPTH} levels; the calls inside were not read"
                if depth >= MAX_SHADOW_DEPTH else
                "its nested macro calls hold more than the token-tree budget; some calls inside were not read")
            continue
        budget.left -= end - start
        shadow, shadow_offset = _shadow(source, start, end)
        tree = _parser().parse(shadow)
        inner_wrapper = (body.parent, tx) if macro_node is not None and body.parent is not None else None
        _collect_sites(tree.root_node, source, shadow_offset, name,
                       body if outer is None else outer, sites, depth + 1, profile, inner_wrapper, (start, end), budget,
                       tree_frame if outer is None else outer_frame)


def _token_trees(root: Node, source: bytes, lo: int, hi: int, shift: int,
                 profile: Profile) -> list[tuple[Node, Node | None]]:
    """(token tree, macro name node or None for a macro_rules transcriber) of every token tree
    that holds an occurrence of SITE_CALL_WORDS in source[lo:hi], in order (see _word_nodes)."""
    return _word_nodes(root, source, lo, hi, shift, profile)[1]


_CALL_NAMES = frozenset(w.decode() for w in SITE_CALL_WORDS) - {"expect"}
# The panic-family macros' arguments are a message and its values, never code holding a call.
_NO_CODE_INSIDE = frozenset(("panic", "unimplemented", "todo", "unreachable"))


def _tree_read(tree: Node, field: str | None, parent: Node) -> tuple[Node, Node | None] | None:
    """(token tree, macro name node) of a macro call's arguments, (token tree, None) of a
    macro_rules transcriber, else None: the token trees the site facts read."""
    if parent.type == "macro_invocation":
        macro = parent.child_by_field_name("macro")
        return (tree, macro) if macro is not None else None
    if parent.type == "macro_rule" and field == "right":
        return (tree, None)
    return None


def _call_named(name: Node, field: str | None, parents: list[Node], fields: list[str | None]) -> Node | None:
    """The macro call whose macro is `name` (an identifier, its field `field` in its parent, the
    last of `parents`): one of the panic-family words alone or at the end of a path."""
    parent = parents[-1]
    if field == "macro" and parent.type == "macro_invocation":
        call = parent
    elif (field == "name" and parent.type == "scoped_identifier" and fields[-1] == "macro"
          and parents[-2].type == "macro_invocation"):
        call = parents[-2]
    else:
        return None
    return call if _text(name).decode("utf-8", "replace").removeprefix("r#") in _CALL_NAMES else None


def _raw_at(name: Node, word: int) -> bool:
    """`name` is the raw identifier of the word at `word` (`r#panic`: the same macro as `panic`)."""
    return name.start_byte == word - 2 and _text(name).startswith(b"r#")


def _expect_named(name: Node, field: str | None, parents: list[Node], fields: list[str | None]) -> Node | None:
    """The method call `value.expect(..)` whose method is `name` (a field identifier)."""
    if field != "field" or len(parents) < 2 or parents[-1].type != "field_expression":
        return None
    call = parents[-2]
    if call.type != "call_expression" or fields[-1] != "function" or name.text != b"expect":
        return None
    return call


# A word names a call as a macro's name (an identifier) or as a method (a field identifier).
_NAMES = {"identifier": _call_named, "field_identifier": _expect_named}


def _word_nodes(root: Node, source: bytes, lo: int, hi: int, shift: int, profile: Profile, nav: Nav | None = None
                ) -> tuple[list[tuple[Node, Node]], list[tuple[Node, Node | None]], list[Enclosing], list[Enclosing]]:
    """What the site facts read around the occurrences of SITE_CALL_WORDS in source[lo:hi], in
    order, found by going down the tree to each word rather than by running queries over the
    windows around the words: (call, name) of each call that can refuse, the matches of
    queries/panic_calls.scm (a `macro_invocation` whose macro is the word as an identifier, or a
    path ending in it; a method call whose method is `expect`); and (token tree, macro name node or
    None for a macro_rules transcriber) of every token tree that holds a word, the trees of
    queries/token_trees.scm the caller reads.
    One cursor walks forward through the nodes that hold a word and their children, each once:
    a walk from the root per word would step again over every sibling before it (a file of
    thousands of commented words at the top level). Also the enclosing facts of each call and
    each token tree (_within), carried down the same walk; and into `nav`, the parent and the
    previous named sibling of every node it goes through."""
    nav = nav if nav is not None else Nav()
    up, before = nav.up, nav.before
    starts = file_site_words(source)[0]
    words = [s + shift for s in starts[bisect_left(starts, lo):bisect_left(starts, hi)]]
    calls: list[tuple[Node, Node]] = []
    out: list[tuple[Node, Node | None]] = []
    call_frames: list[Enclosing] = []
    tree_frames: list[Enclosing] = []
    cursor = root.walk()
    if not words or not cursor.goto_first_child():
        return calls, out, call_frames, tree_frames
    parents = [root]  # the nodes above the cursor's
    fields: list[str | None] = [None]  # the field name of each of them in its parent
    test_attribute = profile.test_attribute
    # the enclosing facts inside each of them
    frames = [_within(_TOP, root, test_attribute) if root.type in _ITEMS else _TOP]
    levels: list[Node | None] = [None]  # last_named of each level above the cursor's, as `parents`
    last_named: Node | None = None  # the last named node passed at the cursor's level
    k = 0  # the first word not passed yet
    while True:
        node = cursor.node
        assert node is not None
        up[node.id] = parents[-1]
        before[node.id] = last_named
        if node.is_named:
            last_named = node
        while k < len(words) and words[k] < node.start_byte:
            k += 1  # between nodes
        if k == len(words):
            return calls, out, call_frames, tree_frames
        if words[k] < node.end_byte:
            t = node.type
            field = cursor.field_name
            if t == "token_tree":
                tree = _tree_read(node, field, parents[-1])
                if tree is not None:
                    out.append(tree)
                    tree_frames.append(frames[-1])
            elif t in _NAMES and (node.start_byte == words[k] or _raw_at(node, words[k])):
                call = _NAMES[t](node, field, parents, fields)
                if call is not None:
                    calls.append((call, node))
                    call_frames.append(frames[-1])
            if cursor.goto_first_child():
                parents.append(node)
                fields.append(field)
                frames.append(_within(frames[-1], node, test_attribute) if t in _ITEMS else frames[-1])
                levels.append(last_named)
                last_named = None
                continue
            while k < len(words) and words[k] < node.end_byte:
                k += 1  # inside a leaf
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return calls, out, call_frames, tree_frames
            parents.pop()
            fields.pop()
            frames.pop()
            last_named = levels.pop()


def _any_between(starts: list[int], lo: int, hi: int) -> bool:
    i = bisect_left(starts, lo)
    return i < len(starts) and starts[i] < hi


def _column(source: bytes, at: int) -> int:
    """1-based byte column of offset `at` in the file: back to the line's start, so the cost is
    the line's length (listing every line end of the file took longer than all the columns)."""
    return at - source.rfind(b"\n", 0, at)


def _is_whole_shadow(call: Node, nav: Nav = NO_NAV) -> bool:
    """The call is the only statement of a shadow parse's `fn __m() { .. }` body."""
    block = nav.parent(call)
    if block is not None and block.type == "expression_statement":
        block = nav.parent(block)
    function = nav.parent(block) if block is not None else None
    if block is None or block.type != "block" or function is None or function.type != "function_item":
        return False
    name = function.child_by_field_name("name")
    if name is None or name.text != b"__m":
        return False
    stmts = [c for c in block.named_children if c.type not in _COMMENTS]
    return len(stmts) == 1 and _is_whole_body(call, block)


def _comment_before(call: Node, tx, nav: Nav = NO_NAV) -> str:
    """The comments on the lines just before the call's statement (`// Not supported in Burn`
    above `panic!("the reduce operation must preserve the reduced dimension")`), nearest last, as
    one line of text; "" when the line before holds code. At most a few comment lines are read."""
    up = nav.parent(call)
    stmt = up if up is not None and up.type == "expression_statement" else call
    texts: list[str] = []
    sib, row = nav.prev_named(stmt), stmt.start_point.row
    while sib is not None and sib.type in _COMMENTS and sib.end_point.row >= row - 1 and len(texts) < 4:
        texts.append(tx(sib).lstrip("/*! ").rstrip("*/ ").strip())
        row, sib = sib.start_point.row, nav.prev_named(sib)
    return " ".join(reversed(texts))

