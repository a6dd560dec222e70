"""Parsing only the items that hold sites: the brace lexer, the plan of ranges, and the property
everything rests on, that the facts are exactly those of a whole-file parse."""

from __future__ import annotations

from analyzer.core.toml import tomllib
from pathlib import Path

import pytest

from analyzer.facts import parse, regions, syntax
from analyzer.facts.model import FileFacts
from analyzer.facts.parse import parse_file
from analyzer.facts.prefilter import has_panic_hint, plain_aliases
from targets import BURN

RULES = Path(__file__).parent / "rules"


def _whole(src: bytes) -> FileFacts:
    """Site facts of a whole-file parse, the reference a plan must reproduce."""
    tree = syntax._parser().parse(src)
    has_errors = tree.root_node.has_error
    if has_errors:
        tree = parse._repaired(src, tree)
    facts = parse._site_facts(tree.root_node, src, has_errors, False, plain_aliases(src), has_panic_hint(src), BURN)
    return parse.read_off_bytes(facts, src, BURN)


def _planned(src: bytes):
    hits = parse.site_hits(src)
    return regions.plan(src, hits), parse._planned_tree(src, hits)


def _cut(src: bytes, plan: regions.Plan) -> str:
    """The text a plan parses, ranges joined by `|`."""
    return "|".join(src[a:b].decode() for a, b in plan.ranges)


# --- the lexer ----------------------------------------------------------------------------------

def test_braces_in_strings_chars_and_comments_do_not_count():
    src = (b'const A: &str = "{ \\" }";\n'          # an escaped quote inside
           b'const B: &str = r#"}"{"#;\n'           # a raw string with hashes
           b"const C: &[u8] = br\"{\";\n"             # a raw byte string
           b"const D: char = '{';\n"                 # a char literal
           b"const E: char = '\\u{7D}';\n"           # an escaped char naming a brace
           b"const F: u8 = b'}';\n"                  # a byte char
           b"// } in a line comment\n"
           b"/* a block /* nested } */ comment { */\n"
           b"fn f<'a>(x: &'a str) -> &'a str { 'outer: loop { break 'outer; } x }\n")
    lexed = regions.braces(src)
    assert lexed is not None
    fn_at = src.index(b"fn f")
    assert lexed.opens == [src.index(b"{", fn_at)]
    assert lexed.ends == [len(src) - 1]  # just past the fn's `}`, before the newline
    assert lexed.member_ends == [src.index(b"} x }") + 1]  # the loop closes inside the fn


def test_a_raw_identifier_is_not_a_raw_string():
    src = b'fn r#type() { let s = "}"; }\n'
    assert regions.braces(src).ends == [len(src) - 1]


@pytest.mark.parametrize("src", [
    b'fn f() { let s = "unterminated; }\n',
    b"fn f() { /* unterminated /* nested */ }\n",
    b'fn f() { let s = r#"unterminated"; }\n',
    b"fn f() { } }\n",
    b"fn f() { {\n",
])
def test_a_file_that_does_not_lex_has_no_plan(src):
    assert regions.braces(src) is None
    assert regions.plan(src, [src.index(b"f")]) is None


# --- the plan -------------------------------------------------------------------------------------

CONTAINERS = b"""\
use burn_std::DType;
use crate::{a, b};

/// Float ops.
#[allow(unused)]
impl FloatTensorOps<Self> for Flex {
    type Item = u8;

    fn float_add(x: u8) -> u8 {
        x + 1
    }

    fn float_cast(dtype: DType) {
        match dtype {
            DType::F32 => {}
            _ => unimplemented!("float_cast"),
        }
    }

    fn float_sub(x: u8) -> u8 {
        x - 1
    }
}

pub fn helper() -> u8 {
    if true { 1 } else { 2 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics() {
        panic!("in a test");
    }

    fn quiet() {}
}
"""


def test_containers_are_cut_to_header_members_holding_a_word_and_closing_brace():
    plan, tree = _planned(CONTAINERS)
    assert plan is not None and tree is not None
    cut = _cut(CONTAINERS, plan)
    assert "fn float_cast" in cut and "#[test]\n    fn panics" in cut
    assert "float_add" not in cut and "float_sub" not in cut and "fn helper" not in cut and "fn quiet" not in cut
    assert "#[allow(unused)]\nimpl FloatTensorOps<Self> for Flex {" in cut  # the header, attributes and all
    assert len(plan.containers) == 2
    assert plan.size < len(CONTAINERS) * 0.6
    facts = parse_file(CONTAINERS, BURN)
    assert [(s.line, s.function, s.impl, s.item_path, s.in_test) for s in facts.sites] == [
        (16, "float_cast", "impl FloatTensorOps<Self> for Flex", "impl FloatTensorOps<Self> for Flex::fn float_cast",
         False),
        (35, "panics", "", "mod tests::fn panics", True)]
    assert facts == _whole(CONTAINERS)


def test_a_function_body_is_never_cut():
    src = b"""\
fn big(d: DType) {
    let kind = d.kind();
    if kind { first() }
    match kind {
        Kind::A => {}
        _ => panic!("no"),
    }
    { last() }
}
"""
    plan, tree = _planned(src)
    assert plan.containers == [] and plan.ranges == [(0, len(src) - 1)]  # all but the last newline
    assert parse_file(src, BURN) == _whole(src)


def test_an_item_ending_in_a_semicolon_after_braces_stays_whole():
    src = b"""\
use a::{b, c};
const TABLE: Table = Table { f: 1 };
fn f() { todo!() }
"""
    plan, tree = _planned(src)
    assert tree is not None
    assert _cut(src, plan) == "\nfn f() { todo!() }"
    assert parse_file(src, BURN) == _whole(src)


# --- when the cut cannot be trusted, the whole file is parsed -------------------------------------

@pytest.mark.parametrize("src", [
    # A `}` inside top-level parentheses ends no item: the cut lands inside the invocation.
    b'define!(A, { x }, { y });\nfn g(d: u8) {\n    match d { 0 => {} _ => panic!("g") }\n}\n',
    # The first top-level `{` of the impl is a const generic's block, not the body.
    b'impl Foo<{ N }> for Bar {\n    fn a() {}\n    fn f() { panic!("f") }\n}\n',
])
def test_a_miscut_falls_back_to_the_whole_file(src):
    plan, _ = _planned(src)
    assert plan is not None  # it lexes, and the plan cuts where no item ends
    assert parse._planned_tree(src, [src.index(b"panic")]) is None
    facts = parse_file(src, BURN)
    assert facts == _whole(src) and facts.sites


def _parse_ranges(src: bytes, plan: regions.Plan):
    parser = parse._ranged_parser()
    parser.included_ranges = parse._points(src, plan.ranges)
    return parser.parse(src).root_node


def test_ranges_that_parse_cleanly_but_split_an_item_are_refused():
    # `}` inside a top-level array ends no item; the ranges around the skipped element still
    # read as one clean const item, which no single range holds.
    src = b'const A: [F; 3] = [{ panic!("a") }, { 1 }, { todo!() }]; // todo\n'
    plan, tree = _planned(src)
    root = _parse_ranges(src, plan)
    assert len(plan.ranges) == 2 and not root.has_error
    assert not parse._fits(root, plan) and tree is None
    assert parse_file(src, BURN) == _whole(src)


def test_a_function_taken_for_a_container_is_refused():
    src = b'fn f() {\n    a();\n    { panic!("x") }\n}\n'
    open_at, close = src.index(b"{"), src.rindex(b"}")
    block = src.index(b"    {"), src.index(b"}\n}") + 1
    wrong = regions.Plan([(0, open_at + 1), block, (close, len(src))], [(0, open_at, close)])
    root = _parse_ranges(src, wrong)
    assert not root.has_error and root.children[0].type == "function_item"
    assert not parse._fits(root, wrong)
    right = regions.Plan([(0, len(src))], [])
    assert parse._fits(_parse_ranges(src, right), right)


def test_the_impl_of_a_const_generic_header_is_still_named():
    src = b'impl Foo<{ N }> for Bar {\n    fn a() {}\n    fn f() { panic!("f") }\n}\n'
    assert [s.impl for s in parse_file(src, BURN).sites] == ["impl Foo<{ N }> for Bar"]


def test_a_parse_error_counts_where_an_item_read_holds_it_only():
    elsewhere = b"fn broken( {\n}\n\nfn f(d: u8) {\n    match d { 0 => {} _ => panic!(\"d\") }\n}\n"
    facts = parse_file(elsewhere, BURN)
    assert [s.line for s in facts.sites] == [5] and not facts.parse_errors
    inside = b"fn f(d: u8) {\n    let x = ;\n    match d { 0 => {} _ => panic!(\"d\") }\n}\n"
    facts = parse_file(inside, BURN)
    assert [s.line for s in facts.sites] == [3] and facts.parse_errors


# --- the property: a plan never changes a fact -----------------------------------------------------

def _snippets() -> list[bytes]:
    out = [(RULES / "context.rs").read_bytes(), CONTAINERS]
    for f in sorted(RULES.glob("*.toml")):
        data = tomllib.loads(f.read_text())
        out += [c["code"].encode() for kind in ("valid", "invalid") for c in data.get(kind, [])]
    return out


def test_planned_facts_are_the_whole_file_facts_for_every_rule_example():
    planned = 0
    for src in _snippets():
        assert parse_file(src, BURN) == _whole(src), src.decode()[:200]
        if has_panic_hint(src) and _planned(src)[1] is not None:
            planned += 1
    assert planned > 100  # the plan, not the fallback, is what was compared


def test_code_facts_come_with_the_same_site_facts():
    for src in _snippets():
        with_code = parse_file(src, BURN, code=True)
        assert with_code.site_part() == parse_file(src, BURN)


def test_file_facts_split_into_site_and_code_parts():
    facts = parse_file(CONTAINERS, BURN, code=True)
    assert facts.functions and facts.impls
    assert facts.site_part().functions == [] and facts.site_part().sites == facts.sites
    assert facts.code_part().sites == [] and facts.code_part().impls == facts.impls
    assert parse_file(CONTAINERS, BURN).functions == []  # extract never reads the code facts
