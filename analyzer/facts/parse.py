"""Parse stage: one Rust file's bytes in, plain facts out.

The facts (every panic-family call with the syntax around it, and every enum definition) are a
pure function of the file's bytes, so they are what the cache stores per git blob. Deciding which
calls are records happens later, in `classify`, because it needs the dtype enums of the whole tree.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cache

import tree_sitter_rust
from tree_sitter import Language, Node, Parser, Query, QueryCursor, Range

from analyzer.facts.model import (
    ArmFacts,
    EnumFacts,
    FileFacts,
    FnFacts,
    ImplFacts,
    MacroCall,
    MacroDefFacts,
    SiteFacts,
    TraitFacts,
    VariantRef,
)
from analyzer.facts import regions
from analyzer.facts.messages import LiteralError, build_message, decode_string_literal
from analyzer.facts.prefilter import OPS_HINT, PANIC_HINT, PANIC_WORDS, has_enum_hint, has_panic_hint, plain_aliases
from analyzer.pipeline.ruleset import queries_root

LANGUAGE = Language(tree_sitter_rust.language())

# Prefix that turns a token tree into a function body for the shadow parse. It has no newline,
# so every row in the shadow is the row of the original file.
_SHADOW_PREFIX = b"fn __m()"
# `$x`, `$crate`, `$(...)` in macro_rules and `#x`, `#(...)` in quote! become `_x`, `_(...)`:
# same length, still Rust tree-sitter can read.
_METAVAR = re.compile(rb"[$#](?=[A-Za-z_(])")
_NOT_NEWLINE = re.compile(rb"[^\n]")


def _blanked(m: re.Match) -> bytes:
    """A regex match turned into spaces, newlines kept: offsets and rows stay the file's."""
    return _NOT_NEWLINE.sub(b" ", m.group(0))

_MAX_SHADOW_DEPTH = 4

_TEST_ATTR = re.compile(r"^#\[\s*(?:[\w:]*::)?(?:test|rstest|test_case|bench)\b|cfg\(\s*(?:all\(\s*)?test\b")
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


# ---------------------------------------------------------------------------------------------
# Patterns


_SCOPED = ("scoped_identifier", "scoped_type_identifier")


def _text(node: Node) -> bytes:
    """A node's source bytes (tree-sitter types `text` as optional: a tree parsed without its
    source keeps none; ours always do)."""
    return node.text or b""


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


def _walk(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


# ---------------------------------------------------------------------------------------------
# Where a call stands

_COMMENTS = ("line_comment", "block_comment")


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


def _placement(call: Node, tx, arms_of: dict | None = None) -> _Placement:
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
    # Deeper inside an arm (behind an `if`, in a loop): an arm site, but a conditional one. A
    # closure or a nested function is code of its own, not the arm's body.
    up: Node | None = parent
    while up is not None and up.type not in _CODE_BOUNDARY:
        if up.type == "match_arm":
            place = _placement(_arm_body_anchor(up), tx, arms_of)
            return _Placement(place.context, False, place.scrutinee, place.arm_index, place.arms)
        up = up.parent
    return _Placement("other", False)


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
    arm = ArmFacts(pattern=norm(tx(pat)), refs=refs,
                   catch_all=is_catch_all(pat), guard=False, panics=(kind == "if-let"),
                   error_handling=is_error_handling(pat), line=pat.start_point.row + 1)
    return _Placement(kind, _is_whole_body(call, body),
                      norm(tx(value)) if value is not None else "", 0, [arm])


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


def _has_test_attribute(item: Node) -> bool:
    sib = item.prev_sibling
    while sib is not None and sib.type in ("attribute_item", "line_comment", "block_comment"):
        if sib.type == "attribute_item" and _TEST_ATTR.search(_text(sib).decode("utf-8", "replace")):
            return True
        sib = sib.prev_sibling
    return False


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


# ---------------------------------------------------------------------------------------------
# Files


# Per-file budgets. Every step of a parse is linear in the file, but a file far past anything
# written by hand (a generated table, a crafted input) is still reported and skipped rather than
# read for minutes: past MAX_FILE_BYTES, or when its sites would carry more than MAX_ARM_FACTS arm
# facts (each site keeps the arms of its match, so a match of n panicking arms holds n * n).
MAX_FILE_BYTES = 4_000_000
MAX_ARM_FACTS = 200_000


def parse_file(source: bytes, code: bool = False) -> FileFacts:
    """The facts of one Rust file, or none with `skipped` saying why (see the budgets above; a
    file nested deeper than Python's recursion limit is skipped too).

    Without `code`, its site facts: the panic-family calls, the enums and plain aliases, read from
    the items that hold them (analyzer/regions.py). With `code`, also what the coverage audit's call
    graph needs of every function, ops trait and impl (FileFacts.code_part), which takes a parse of
    the whole file; the site facts are the same either way."""
    if len(source) > MAX_FILE_BYTES:
        return FileFacts([], [], False, False, [], skipped=f"larger than the {MAX_FILE_BYTES:,}-byte budget per file")
    try:
        facts = _parse_file(source, code)
    except RecursionError:
        return FileFacts([], [], False, False, [], skipped="nested too deep to read")
    if sum(len(s.arms) for s in facts.sites) > MAX_ARM_FACTS:
        return FileFacts([], [], False, facts.not_utf8, [],
                         skipped=f"its matches hold more than {MAX_ARM_FACTS:,} arm facts "
                                 f"(a generated or crafted file)")
    return facts


def _parse_file(source: bytes, code: bool) -> FileFacts:
    not_utf8 = False
    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        not_utf8 = True
    aliases = plain_aliases(source)
    has_panic = has_panic_hint(source)
    if not code or not (has_panic or OPS_HINT.search(source) is not None):
        return _site_facts_alone(source, not_utf8, aliases, has_panic)
    whole, parse_errors = _whole_tree(source)
    if not parse_errors:
        # A file that parses cleanly whole gives, from the whole tree, the very site facts its
        # planned items give (each item parses alike alone): no second parse.
        facts = _site_facts(whole.root_node, source, False, not_utf8, aliases, has_panic)
    else:
        facts = _site_facts_alone(source, not_utf8, aliases, has_panic, (whole, parse_errors))
    _code_facts(whole.root_node, source, facts)
    return facts


def _whole_tree(source: bytes):
    """The whole file's tree, repaired where tree-sitter rejects valid Rust (see _repaired), and
    whether the first parse had errors."""
    tree = _parser().parse(source)
    parse_errors = tree.root_node.has_error
    return (_repaired(source, tree) if parse_errors else tree), parse_errors


def _site_facts_alone(source: bytes, not_utf8: bool, aliases: list[tuple[str, str]], has_panic: bool,
                      whole=None) -> FileFacts:
    """Site facts from as little parsing as gives them exactly. A file with no panic-family call
    is read only for its enums, each `enum` item parsed on its own; one with calls, as the items
    that hold a call or an enum (analyzer/regions.py). Either falls back to the whole file when its
    cut cannot be trusted, and only then does a parse error elsewhere in the file count. `whole`
    is the file's _whole_tree when the caller has it already."""
    if not has_panic:
        items = _enum_items(source)
        if items is not None:
            return FileFacts([], items, False, not_utf8, aliases)
    else:
        hits = [start for start, _ in _word_spans(source, _SITE_WORDS, 0, len(source))]
        planned = _planned_tree(source, hits)
        if planned is not None:
            return _site_facts(planned.root_node, source, False, not_utf8, aliases, has_panic)
    tree, parse_errors = whole if whole is not None else _whole_tree(source)
    return _site_facts(tree.root_node, source, parse_errors, not_utf8, aliases, has_panic)


def _site_facts(root: Node, source: bytes, parse_errors: bool, not_utf8: bool, aliases: list[tuple[str, str]],
                has_panic: bool) -> FileFacts:
    sites: list[SiteFacts] = []
    enums: list[EnumFacts] = []
    if has_enum_hint(source):
        enums = _enums(root, source)
    if has_panic:
        _collect_sites(root, source, 0, "", None, sites, 0)
    sites.sort(key=lambda s: (s.start_byte, s.line))
    return FileFacts(sites, enums, parse_errors, not_utf8, aliases)


# The words whose items hold every site fact: the calls' macro names, and `enum`.
_SITE_WORDS = (*PANIC_WORDS, b"enum")
_CONTAINER_TYPES = ("impl_item", "mod_item", "trait_item")


@cache
def _ranged_parser() -> Parser:
    """The parser of planned ranges. Included ranges are parser state, so it is not the parser
    the whole-file and token-tree (shadow) parses use."""
    return Parser(LANGUAGE)


def _planned_tree(source: bytes, hits: list[int]):
    """The tree of the items that hold `hits`, or None when the file has no plan or the ranges do
    not parse into the items planned (then the caller parses the whole file)."""
    plan = regions.plan(source, hits)
    if plan is None or not plan.ranges:
        return None
    parser = _ranged_parser()
    parser.included_ranges = _points(source, plan.ranges)
    tree = parser.parse(source)
    if tree.root_node.has_error or not _fits(tree.root_node, plan):
        return None
    return tree


def _points(source: bytes, ranges: list[tuple[int, int]]) -> list[Range]:
    """Byte ranges as tree-sitter ranges (rows and byte columns of the file). Each byte is
    scanned a bounded number of times: rows are counted on from the last range, and a column's
    line start is searched for back only as far as the last range (a file of one long line with
    many ranges would otherwise be scanned again per range)."""
    out = []
    row, counted, line_start = 0, 0, 0
    for start, end in ranges:
        row += source.count(b"\n", counted, start)
        newline = source.rfind(b"\n", counted, start)
        if newline >= 0:
            line_start = newline + 1
        start_point = (row, start - line_start)
        row += source.count(b"\n", start, end)
        newline = source.rfind(b"\n", start, end)
        if newline >= 0:
            line_start = newline + 1
        out.append(Range(start_point, (row, end - line_start), start, end))
        counted = end
    return out


def _fits(root: Node, plan: regions.Plan) -> bool:
    """Whether the planned ranges parsed into what the plan says they hold: every top-level item
    within one range, but for each cut container, which must be an impl, module or trait whose
    body opens and closes at the planned braces, with every member of it within one range. (A
    brace of a const generic in a header, a `fn` taken for a container, a `}` inside top-level
    parentheses: any such miscut shows here, or as a parse error.)"""
    starts = [start for start, _ in plan.ranges]
    cut = {open_at: close for _, open_at, close in plan.containers}

    def within(node: Node) -> bool:
        i = bisect.bisect_right(starts, node.start_byte) - 1
        return i >= 0 and node.end_byte <= plan.ranges[i][1]

    # A container planned but not found is an item across its ranges, refused below.
    for item in root.children:
        body = item.child_by_field_name("body") if item.type in _CONTAINER_TYPES else None
        if body is not None and cut.get(body.start_byte, -1) == body.end_byte - 1:
            if not all(within(member) for member in body.children):
                return False
        elif not within(item):
            return False
    return True


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


_PAIRS = {0x7B: 0x7D, 0x28: 0x29, 0x5B: 0x5D}  # { } ( ) [ ]


def _matching_close(source: bytes | bytearray, open_at: int) -> int:
    """Index of the delimiter closing the `{`, `(` or `[` at open_at, skipping strings, chars and
    comments; -1 if none."""
    opener = source[open_at]
    closer = _PAIRS[opener]
    depth = 0
    i, n = open_at, len(source)
    while i < n:
        c = source[i]
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i
        elif c == 0x22:  # a string literal
            i += 1
            while i < n and source[i] != 0x22:
                i += 2 if source[i] == 0x5C else 1
        elif c == 0x2F and i + 1 < n and source[i + 1] == 0x2F:  # a line comment
            nl = source.find(b"\n", i)
            i = n if nl < 0 else nl
        elif c == 0x2F and i + 1 < n and source[i + 1] == 0x2A:  # a block comment
            end = source.find(b"*/", i + 2)
            if end < 0:
                return -1
            i = end + 1
        elif c == 0x27 and i + 2 < n and source[i + 2] == 0x27:  # a char literal 'x'
            i += 2
        i += 1
    return -1


# Attributes on struct-pattern fields (`#[cfg(..)] value: QuantValue::Q8S`) are valid Rust that
# tree-sitter-rust does not accept; blanking them (they say nothing the rules read) lets the file
# parse. Only tried on files that fail to parse.
_FIELD_ATTRIBUTE = re.compile(rb"#\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]\s*(?=[A-Za-z_]\w*\s*:(?!:))")


def _error_count(node: Node) -> int:
    count = 0
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            count += 1
        elif n.has_error:
            stack.extend(n.children)
    return count


def _repaired(source: bytes, tree):
    """A parse of `source` with constructs tree-sitter rejects blanked, if it has fewer errors."""
    fixed = _FIELD_ATTRIBUTE.sub(_blanked, source)
    if fixed == source:
        return tree
    retry = _parser().parse(fixed)
    return retry if _error_count(retry.root_node) < _error_count(tree.root_node) else tree


# Queries run only around the words their matches must contain (a macro's name, `enum`, `type`):
# a query over a whole tree visits every node, ~0.9 s of CPU for burn; around the words, ~0.05 s.
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


def _type_name(node: Node) -> str:
    """`std::convert::Infallible` -> Infallible, `PhantomData<T>` -> PhantomData, `!` -> !."""
    return _text(node).decode().split("::")[-1].split("<")[0].strip()


def _is_cfg(attribute: Node) -> bool:
    return attribute.type == "attribute_item" and re.match(rb"#\s*\[\s*cfg\s*\(", _text(attribute)) is not None


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


def _shadow(source: bytes, start: int, end: int) -> tuple[bytes, int]:
    """One token tree as Rust a parser reads: behind `fn __m()`, on the file's own row and column
    (the lines before it kept as bare newlines), its delimiters turned into a block, repetitions
    unrolled once and metavariables turned into identifiers (same lengths). Returns the shadow
    and the offset to subtract from a shadow byte to get the file's byte."""
    mid = bytearray(source[start:end])
    _unwrap_repetitions(mid)
    mid = bytearray(_LONE_INTERPOLATION.sub(_blanked, bytes(mid)))
    mid = bytearray(_METAVAR.sub(b"_", bytes(mid)))
    mid[0:1] = b"{"
    mid[-1:] = b"}"
    line_start = source.rfind(b"\n", 0, start) + 1
    rows = source.count(b"\n", 0, line_start)
    lead = _SHADOW_PREFIX + b"\n" * rows + b" " * (start - line_start)
    return lead + bytes(mid), len(lead) - start


# An interpolation alone on its line (`#ad_tag_arm`, `$($arms)*` after unwrapping) stands for
# whole arms or statements; left in, it would break the parse of the arms around it.
_LONE_INTERPOLATION = re.compile(rb"(?m)^[ \t]*[$#][A-Za-z_][A-Za-z0-9_]*[ \t]*,?[ \t]*$")


def _unwrap_repetitions(buf: bytearray) -> None:
    """Blank the wrapper of every `$( ... ) sep? op` / `#( ... ) sep? op` repetition in place,
    keeping its content once: `$( A::$v => x, )*` reads as the arm `A::$v => x,`."""
    i = 0
    n = len(buf)
    while i < n - 1:
        if buf[i] in b"$#" and buf[i + 1] == ord("("):
            close = _matching_close(buf, i + 1)
            if close < 0:
                i += 1
                continue
            j = close + 1
            # Optional separator token (`,` `;` `|` ...) then the repetition operator.
            k = j
            while k < n and buf[k] in b" \t":
                k += 1
            if k < n and buf[k] in b"*+?":
                op_end = k + 1
            elif k + 1 < n and buf[k] in b",;|&" and buf[k + 1] in b"*+?":
                op_end = k + 2
            else:
                i += 1
                continue
            buf[i:i + 2] = b"  "
            for p in range(close, op_end):
                if buf[p] != 10:
                    buf[p] = 32
            i += 2
            continue
        i += 1


# ---------------------------------------------------------------------------------------------
# Code facts for the coverage audit: ops traits, their impls, and a call graph by name.
#
# Read by walking items only (source file, mod, impl and trait bodies), never expression trees:
# a query over a whole tree visits every node, while the items of a file are a few dozen nodes.
# Calls and macro invocations inside a body are found by a regex over its bytes, which also sees
# the calls written inside macro arguments (token trees tree-sitter leaves unparsed).

# The naming convention of backend operation traits (FloatTensorOps, ModuleOps, ...).
OPS_TRAIT_SUFFIX = "Ops"
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
        name = named.group(1).decode()
        if name not in _STD_MACROS and name != "macro_rules":
            line = start_line + source.count(b"\n", start, named.start())
            macros.append(_macro_call(source, name, m.end() - 1, end, line))
    return calls, macros


# The tokens that matter to delimiter matching: delimiters, the start of a string, a comment.
_DELIMITER_TOKEN = re.compile(rb'[()\[\]{}"]|//|/\*')
_STRING_REST = re.compile(rb'(?:[^"\\]|\\.)*"', re.DOTALL)
_OPENERS = frozenset(b"([{")


def _scan_invocation(source: bytes, open_at: int, limit: int) -> tuple[int, tuple[int, int] | None]:
    """(index of the delimiter closing the one at open_at, span of the last `[...]` group at the
    top level of the arguments) or (-1, None). Jumps from token to token by regex, skipping
    strings and comments: a macro's arguments are read without a Python step per byte."""
    depth = 0
    last = None
    list_start = -1
    pos = open_at
    while True:
        m = _DELIMITER_TOKEN.search(source, pos, limit)
        if m is None:
            return -1, None
        tok = m.group()
        pos = m.end()
        if tok == b'"':
            rest = _STRING_REST.match(source, pos, limit)
            if rest is None:
                return -1, None
            pos = rest.end()
        elif tok == b"//":
            nl = source.find(b"\n", pos, limit)
            pos = limit if nl < 0 else nl
        elif tok == b"/*":
            end = source.find(b"*/", pos, limit)
            if end < 0:
                return -1, None
            pos = end + 2
        elif tok[0] in _OPENERS:
            depth += 1
            if depth == 2 and tok == b"[":
                list_start = m.start()
        else:
            depth -= 1
            if depth == 1 and tok == b"]" and list_start >= 0:
                last = (list_start, m.start())
                list_start = -1
            elif depth == 0:
                return m.start(), last


def _macro_call(source: bytes, name: str, open_at: int, limit: int, line: int) -> MacroCall:
    close, last = _scan_invocation(source, open_at, limit)
    if close < 0:
        return MacroCall(name, line, None, True)
    if last is None:
        return MacroCall(name, line)
    dtypes = []
    for element in source[last[0] + 1:last[1]].split(b","):
        if not element.strip():
            continue
        m = _LIST_ELEMENT.match(element)
        if m is None:
            return MacroCall(name, line, None, True)
        dtypes.append(m.group(1).decode().split("::")[-1].strip())
    return MacroCall(name, line, dtypes)


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


def _code_facts(root: Node, source: bytes, facts: FileFacts) -> None:
    reversed_source = source[::-1]  # for _CALL_REVERSED
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, trait = stack.pop()
        for c in node.named_children:
            t = c.type
            if t == "function_item":
                name = c.child_by_field_name("name")
                body = c.child_by_field_name("body")
                if name is None or body is None or _has_test_attribute(c):
                    continue
                calls, macros = _calls_in(source, reversed_source, body.start_byte, body.end_byte,
                                          body.start_point.row + 1)
                facts.functions.append(FnFacts(_node_text(name, source), c.start_point.row + 1, c.end_point.row + 1,
                                               trait, calls, macros))
            elif t == "impl_item":
                body = c.child_by_field_name("body")
                tname = _trait_name(c.child_by_field_name("trait"), source)
                ops = tname.endswith(OPS_TRAIT_SUFFIX)
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
                if name is None or body is None or not trait_name.endswith(OPS_TRAIT_SUFFIX):
                    continue
                header = norm(source[name.end_byte:body.start_byte].decode("utf-8", "replace"))
                methods = [n for n, _ in _method_names(body, source, ("function_item", "function_signature_item"))]
                facts.traits.append(TraitFacts(trait_name, c.start_point.row + 1, header, methods))
            elif t == "mod_item":
                body = c.child_by_field_name("body")
                # Test modules are never reached from an operation.
                if body is not None and not _has_test_attribute(c):
                    stack.append((body, ""))
            elif t == "macro_definition":
                name = c.child_by_field_name("name")
                if name is None:
                    continue
                calls, macros = _calls_in(source, reversed_source, c.start_byte, c.end_byte, c.start_point.row + 1)
                facts.macro_defs.append(MacroDefFacts(_node_text(name, source), c.start_point.row + 1, calls, macros))
