"""Parse stage: one Rust file's bytes in, plain facts out.

The facts (every panic-family call with the syntax around it, and every enum definition) are a
pure function of the file's bytes, so they are what the cache stores per git blob. Deciding which
calls are records happens later, in `classify`, because it needs the dtype enums of the whole tree.

This module decides what to parse: the whole file, the items that hold a site (regions.py),
each enum item alone (enums.py), or for the coverage audit's code facts the file less its
function bodies (skeleton.py), less only those that hold no site when the file has sites (one
tree for both kinds of facts); sites.py, enums.py and code.py read the facts off the tree.
"""

from __future__ import annotations

import bisect
import re
from functools import cache

from tree_sitter import Node, Parser, Range

from analyzer.facts import lexer, regions, skeleton
from analyzer.facts.code import _code_facts
from analyzer.facts.enums import _enum_items, _enums
from analyzer.facts.impls import ops_impls
from analyzer.facts.includes import computed_include, included, renamed_macros
from analyzer.facts.inputs import built_from
from analyzer.facts.model import EnumFacts, FileFacts, SiteFacts
from analyzer.facts.remaps import remaps
from analyzer.facts.prefilter import (defines_proc_macros, file_site_words, has_enum_hint, has_panic_hint,
                                      plain_aliases, trait_names, variant_uses)
from analyzer.facts.sites import ShadowBudget, _collect_sites
from analyzer.facts.syntax import LANGUAGE, _blanked, _parser, _word_spans
from analyzer.profiles import Profile


# Per-file budgets, the last resort: every step of a parse is linear in the file, but a file far
# past anything written by hand (a generated table, a crafted input) is still reported and skipped
# rather than read for minutes: past MAX_FILE_BYTES of code (comments and literals are one token
# each to the parser, so a file padded with them is read), past MAX_BLOB_BYTES in all (never read
# into memory), or when its sites would carry more than MAX_ARM_FACTS arm facts (each site keeps
# the arms of its match, so a match of n panicking arms holds n * n).
MAX_FILE_BYTES = 4_000_000
MAX_BLOB_BYTES = 64_000_000
MAX_ARM_FACTS = 200_000


def parse_file(source: bytes, profile: Profile, code: bool = False, panic_hint: bool | None = None) -> FileFacts:
    """The facts of one Rust file, or none with `skipped` saying why (see the budgets above; a
    file nested deeper than Python's recursion limit is skipped too).

    Without `code`, its site facts: the panic-family calls, the enums and plain aliases, read from
    the items that hold them (analyzer/facts/regions.py). With `code`, also what the coverage audit's call
    graph needs of every function, ops trait and impl (FileFacts.code_part), read from a parse of
    the file less its function bodies (analyzer/facts/skeleton.py); the site facts are the same
    either way. `profile` is the target's: what its test code and its ops traits look like.
    `panic_hint` is has_panic_hint(source) when the caller has it already (the
    prefilter asks it of every file)."""
    if len(source) > MAX_BLOB_BYTES:
        return FileFacts([], [], False, False, [], skipped=f"larger than the {MAX_BLOB_BYTES:,}-byte budget per file")
    if len(source) > MAX_FILE_BYTES and lexer.code_size(source) > MAX_FILE_BYTES:
        return FileFacts([], [], False, False, [],
                         skipped=f"more than the {MAX_FILE_BYTES:,}-byte budget of code per file")
    try:
        facts = _parse_file(source, profile, code, has_panic_hint(source) if panic_hint is None else panic_hint)
    except RecursionError:
        return FileFacts([], [], False, False, [], skipped="nested too deep to read")
    if sum(len(s.arms) for s in facts.sites) > MAX_ARM_FACTS:
        return FileFacts([], [], False, facts.not_utf8, [],
                         skipped=f"its matches hold more than {MAX_ARM_FACTS:,} arm facts "
                                 f"(a generated or crafted file)")
    return read_off_bytes(facts, source, profile)


def read_off_bytes(facts: FileFacts, source: bytes, profile: Profile) -> FileFacts:
    """`facts` with what is read off the file's raw bytes, however the file is parsed or whether it
    is: the variant uses, the ops impls' method names, the types built from text and the trait
    names and the variants it remaps, which the catalog and the inherited-default reader need of
    every file."""
    facts.variant_uses = variant_uses(source)
    facts.ops_impls = ops_impls(source, profile)
    facts.built_from = built_from(source)
    facts.trait_names = trait_names(source)
    facts.proc_macros = defines_proc_macros(source)
    facts.remaps = remaps(source)
    facts.includes = included(source)
    renamed = renamed_macros(source)
    if renamed and not facts.partial:
        macro, name = renamed[0]
        facts.partial = (f"it renames {macro}! (`use .. as {name}`); calls under the new name are not read")
    if not facts.partial and computed_include(source):
        facts.partial = ("it includes code whose file is computed when the crate builds "
                         "(`include!(concat!(env!(\"OUT_DIR\"), ..))`); no file of the tree holds it, "
                         "so it was not read")
    return facts


def _parse_file(source: bytes, profile: Profile, code: bool, has_panic: bool) -> FileFacts:
    not_utf8 = False
    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        not_utf8 = True
    aliases = plain_aliases(source)
    hits = site_hits(source) if has_panic else []
    if code and has_panic:
        shared = _shared_tree(source, hits)
        if shared is not None:
            facts = _site_facts(shared.root_node, source, False, not_utf8, aliases, has_panic, profile)
            _code_facts(shared.root_node, source, facts, profile)
            return facts
    facts = _site_facts_alone(source, not_utf8, aliases, has_panic, hits, profile)
    if code and (has_panic or profile.wants_code(source)):
        _code_facts(_code_tree(source).root_node, source, facts, profile)
    return facts


def _shared_tree(source: bytes, hits: list[int]):
    """One tree for both the site facts and the code facts of a file with calls: the skeleton
    (analyzer/facts/skeleton.py) with the function bodies that hold a hit put back. Trusted only
    when it parses cleanly, every body still left out is a function's at a level the code facts
    walk, and the items the plan (analyzer/facts/regions.py) would parse lie in this tree where the plan
    put them; then it holds every item the planned tree and the skeleton tree would, parsed the
    same, and the left-out bodies hold no word a site fact is read around. None otherwise: the
    caller parses the two trees (or the whole file) as before."""
    plan = regions.plan(source, hits)
    skel = skeleton.skeleton(source)
    if plan is None or not plan.ranges or skel is None:
        return None
    left_out = skeleton.without_hits(skel.bodies, hits)
    if not left_out:
        return None
    parser = _ranged_parser()
    parser.included_ranges = _points(source, skeleton.ranges_without(left_out, len(source)))
    tree = parser.parse(source)
    root = tree.root_node
    if root.has_error or not _bodies_fit(root, left_out) or not _fits(root, plan):
        return None
    return tree


def _code_tree(source: bytes):
    """The tree the code facts are read from: the file less its function bodies' insides
    (analyzer/facts/skeleton.py) when that parses cleanly into the items planned, else the whole
    file's."""
    plan = skeleton.skeleton(source)
    if plan is not None:
        parser = _ranged_parser()
        parser.included_ranges = _points(source, plan.ranges)
        tree = parser.parse(source)
        if not tree.root_node.has_error and _bodies_fit(tree.root_node, plan.bodies):
            return tree
    return _whole_tree(source)[0]


_LEVELS = ("impl_item", "mod_item", "trait_item")


def _bodies_fit(root: Node, bodies: list[tuple[int, int]]) -> bool:
    """Whether every body the skeleton left out is the body of a function at a level of items the
    code facts walk (the top, and module, impl and trait bodies)."""
    found: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        for item in stack.pop().named_children:
            body = item.child_by_field_name("body")
            if body is None:
                continue
            if item.type == "function_item":
                found.add((body.start_byte, body.end_byte - 1))
            elif item.type in _LEVELS:
                stack.append(body)
    return all(b in found for b in bodies)


def _whole_tree(source: bytes):
    """The whole file's tree, repaired where tree-sitter rejects valid Rust (see _repaired), and
    whether the first parse had errors."""
    tree = _parser().parse(source)
    parse_errors = tree.root_node.has_error
    return (_repaired(source, tree) if parse_errors else tree), parse_errors


def _site_facts_alone(source: bytes, not_utf8: bool, aliases: list[tuple[str, str]], has_panic: bool,
                      hits: list[int], profile: Profile) -> FileFacts:
    """Site facts from as little parsing as gives them exactly. A file with no panic-family call
    is read only for its enums, each `enum` item parsed on its own; one with calls, as the items
    that hold a call or an enum (`hits`, the offsets of their words; analyzer/facts/regions.py). Either
    falls back to the whole file when its cut cannot be trusted, and only then does a parse error
    elsewhere in the file count."""
    if not has_panic:
        items = _enum_items(source)
        if items is not None:
            return FileFacts([], items, False, not_utf8, aliases)
    else:
        planned = _planned_tree(source, hits)
        if planned is not None:
            return _site_facts(planned.root_node, source, False, not_utf8, aliases, has_panic, profile)
    tree, parse_errors = _whole_tree(source)
    return _site_facts(tree.root_node, source, parse_errors, not_utf8, aliases, has_panic, profile)


def _site_facts(root: Node, source: bytes, parse_errors: bool, not_utf8: bool, aliases: list[tuple[str, str]],
                has_panic: bool, profile: Profile) -> FileFacts:
    sites: list[SiteFacts] = []
    enums: list[EnumFacts] = []
    if has_enum_hint(source):
        enums = _enums(root, source)
    budget = ShadowBudget(source)
    if has_panic:
        _collect_sites(root, source, 0, "", None, sites, 0, profile, budget=budget)
    sites.sort(key=lambda s: (s.start_byte, s.line))
    return FileFacts(sites, enums, parse_errors, not_utf8, aliases, partial=budget.partial)


def site_hits(source: bytes) -> list[int]:
    """The offsets of the words whose items hold every site fact: the calls' names (the CALL_WORDS
    only of calls that refuse in words, prefilter.file_site_words) and `enum`."""
    starts = file_site_words(source)[0] + [s for s, _ in _word_spans(source, (b"enum",), 0, len(source))]
    return sorted(starts)
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
    parentheses: any such miscut shows here, or as a parse error.)

    The nodes that touch no planned range are passed over: a tree of the planned ranges has none,
    and a tree of more of the file (parse._shared_tree) holds the planned items among others."""
    starts = [start for start, _ in plan.ranges]
    cut = {open_at: close for _, open_at, close in plan.containers}

    def within(node: Node) -> bool:
        i = bisect.bisect_right(starts, node.start_byte) - 1
        return i >= 0 and node.end_byte <= plan.ranges[i][1]

    def touches(node: Node) -> bool:
        i = bisect.bisect_right(starts, max(node.end_byte, node.start_byte + 1) - 1) - 1
        return i >= 0 and plan.ranges[i][1] > node.start_byte

    # A container planned but not found is an item across its ranges, refused below.
    for item in root.children:
        if not touches(item):
            continue
        body = item.child_by_field_name("body") if item.type in _CONTAINER_TYPES else None
        if body is not None and cut.get(body.start_byte, -1) == body.end_byte - 1:
            if not all(within(member) for member in body.children if touches(member)):
                return False
        elif not within(item):
            return False
    return True


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
