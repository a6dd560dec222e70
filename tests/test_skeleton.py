"""The code facts read from a file less its function bodies: which bytes are left out, and the
property everything rests on, that the facts are exactly those of a whole-file parse."""

from __future__ import annotations

from analyzer.core.toml import tomllib
from pathlib import Path

import pytest

from analyzer.facts import parse, skeleton
from analyzer.facts.code import _code_facts
from analyzer.facts.model import FileFacts
from analyzer.facts.prefilter import has_panic_hint, plain_aliases
from analyzer.profiles import current
from targets import BURN

RULES = Path(__file__).parent / "rules"

OPS = b"""//! Backend operations.
use crate::{Tensor, DType};

pub trait FloatTensorOps<B: Backend> {
    /// Adds.
    fn float_add(lhs: Tensor, rhs: Tensor) -> Tensor;
    fn float_neg(x: Tensor) -> Tensor {
        let zero = { 0 };
        float_sub(zero, x)
    }
}

pub struct Flags { a: u8, b: u8 }

macro_rules! dispatch {
    ($x:expr) => { match $x { DType::F32 => 1, _ => panic!("no") } };
}

impl<B: Backend> FloatTensorOps<B> for NdArray<B> {
    fn float_add(lhs: Tensor, rhs: Tensor) -> Tensor {
        match lhs.dtype() {
            DType::F32 => add_f32(lhs, rhs),
            other => unimplemented!("{other:?}"),
        }
    }

    fn float_neg(x: Tensor) -> Tensor { dispatch!(x); neg_inner::<f32>(x) }
}

pub(crate) mod kernels {
    pub fn add_f32(a: Tensor, b: Tensor) -> Tensor { let s = "}"; a.zip(b, |x, y| { x + y }) }

    #[cfg(test)]
    mod tests {
        #[test]
        fn adds() { assert_eq!(add_f32(t(), t()), t()); }
    }
}

pub const unsafe extern "C" fn raw(p: *const u8) -> u8 { *p }

const LIMITS: Flags = Flags { a: 1, b: 2 };
"""


def _whole_code(src: bytes) -> FileFacts:
    """Code facts read from the whole file's tree, the reference a skeleton must reproduce."""
    facts = FileFacts([], [], False, False, [])
    _code_facts(parse._whole_tree(src)[0].root_node, src, facts, BURN)
    return facts.code_part()


def _skeleton_code(src: bytes) -> FileFacts:
    facts = FileFacts([], [], False, False, [])
    _code_facts(parse._code_tree(src).root_node, src, facts, BURN)
    return facts.code_part()


def _left_out(src: bytes, plan: skeleton.Skeleton) -> list[str]:
    return [src[a + 1:b].decode() for a, b in plan.bodies]


def test_function_bodies_are_left_out_at_every_level_of_items():
    plan = skeleton.skeleton(OPS)
    assert plan is not None
    left = _left_out(OPS, plan)
    # The trait's default method, the impl's methods, the module's function, the test module's
    # test and the extern function: every function body at a level of items.
    assert [body.split()[0] for body in left] == ["let", "match", "dispatch!(x);", "let", "assert_eq!(add_f32(t(),", "*p"]
    kept = "".join(OPS[a:b].decode() for a, b in plan.ranges)
    # Struct, const and macro bodies are kept whole; the inner `{ 0 }` and the closure's braces
    # went with their function's body.
    assert "pub struct Flags { a: u8, b: u8 }" in kept
    assert "Flags { a: 1, b: 2 };" in kept
    assert "($x:expr) => { match $x { DType::F32 => 1, _ => panic!(\"no\") } };" in kept
    assert "fn float_add(lhs: Tensor, rhs: Tensor) -> Tensor {}" in kept.replace("{\n        }", "{}").replace(
        "{\n    }", "{}")
    assert "{ 0 }" not in kept and "x + y" not in kept


def test_the_skeleton_gives_the_whole_files_code_facts():
    facts = _skeleton_code(OPS)
    assert facts == _whole_code(OPS)
    assert [t.name for t in facts.traits] == ["FloatTensorOps"]
    assert [i.trait for i in facts.impls] == ["FloatTensorOps"]
    assert {f.name: f.calls for f in facts.functions}["float_add"] == ["add_f32", "dtype"]
    neg = [f for f in facts.functions if f.name == "float_neg" and f.trait]
    assert [m.name for m in neg[0].macros] == ["dispatch"] and neg[0].calls == ["neg_inner"]
    assert "adds" not in {f.name for f in facts.functions}  # a test is never a code fact
    # The tree read was the skeleton's, not a whole-file parse: its bodies are empty blocks.
    tree = parse._code_tree(OPS)
    impl = [c for c in tree.root_node.named_children if c.type == "impl_item"][0]
    add = impl.child_by_field_name("body").named_children[0]
    assert add.child_by_field_name("body").named_child_count == 0
    close = OPS.index(b"}\n\n    fn float_neg")  # the file's own row and column of its closing brace
    assert add.end_point == (OPS.count(b"\n", 0, close), close - OPS.rindex(b"\n", 0, close) - 1 + 1)


@pytest.mark.parametrize("src", [
    b"fn f() { let s = \"; }\n",       # an unterminated string
    b"fn f() { }}\n",                 # a brace that closes nothing
    b"fn f() {\n",                    # a brace left open
    b"struct S { a: u8 }\n",          # no function body to leave out
    b"fn f() {}\n",                   # only an empty one
])
def test_a_file_that_does_not_lex_or_has_no_body_to_leave_out_has_no_skeleton(src):
    assert skeleton.skeleton(src) is None
    assert _skeleton_code(src) == _whole_code(src)


def test_a_brace_of_a_signature_taken_for_the_body_falls_back_to_the_whole_file():
    # The `{ 2 }` of a const generic default comes first: the skeleton leaves it out as if it
    # were the body, which the tree shows is not a function's body.
    src = b"pub fn f<const N: usize = { 2 }>() -> u8 { helper(N) }\nfn helper(n: usize) -> u8 { n as u8 }\n"
    plan = skeleton.skeleton(src)
    assert plan is not None and _left_out(src, plan)[0] == " 2 "
    tree = parse._ranged_parser()
    tree.included_ranges = parse._points(src, plan.ranges)
    assert not parse._bodies_fit(tree.parse(src).root_node, plan.bodies)
    assert _skeleton_code(src) == _whole_code(src)
    assert {f.name: f.calls for f in _skeleton_code(src).functions}["f"] == ["helper"]


def _snippets() -> list[bytes]:
    out = []
    for f in sorted(RULES.glob("*.toml")):
        data = tomllib.loads(f.read_text())
        out += [c["code"].encode() for kind in ("valid", "invalid") for c in data.get(kind, [])]
    return out


def test_skeleton_code_facts_are_the_whole_file_facts_for_every_rule_example():
    cut = 0
    for src in _snippets():
        assert _skeleton_code(src) == _whole_code(src), src.decode()[:200]
        if skeleton.skeleton(src) is not None:
            cut += 1
    assert cut > 100  # the skeleton, not the fallback, is what was compared


def _two_trees(src: bytes) -> FileFacts:
    """The facts read as the planned tree (site facts) and the skeleton tree (code facts) give them."""
    facts = parse._site_facts_alone(src, False, plain_aliases(src), has_panic_hint(src), _hits(src), BURN)
    if has_panic_hint(src) or current().wants_code(src):
        _code_facts(parse._code_tree(src).root_node, src, facts, BURN)
    return parse.read_off_bytes(facts, src, BURN)


def _hits(src: bytes) -> list[int]:
    return parse.site_hits(src)


def _same_facts(a: FileFacts, b: FileFacts) -> bool:
    return (a.site_part().to_json(), a.code_part().to_json()) == (b.site_part().to_json(), b.code_part().to_json())


def test_one_tree_gives_the_facts_of_the_planned_and_the_skeleton_trees():
    tree = parse._shared_tree(OPS, _hits(OPS))
    assert tree is not None
    facts = parse.parse_file(OPS, BURN, code=True)
    assert _same_facts(facts, _two_trees(OPS))
    assert [s.macro for s in facts.sites] == ["panic", "unimplemented"]
    assert {f.name: f.calls for f in facts.functions}["float_add"] == ["add_f32", "dtype"]
    # The body that holds a call was put back; one that holds none is still an empty block.
    impl = [c for c in tree.root_node.named_children if c.type == "impl_item"][0]
    add, neg = [m for m in impl.child_by_field_name("body").named_children if m.type == "function_item"]
    assert add.child_by_field_name("body").named_child_count == 1
    assert neg.child_by_field_name("body").named_child_count == 0


@pytest.mark.parametrize("src", [
    # The const generic's `{ 2 }` is left out as if it were the body: not a function's body.
    b'pub fn g<const N: usize = { 2 }>() -> u8 { N as u8 }\nfn f() { panic!("no") }\n',
    # The struct's `{ 1 }` ends a top-level item for the plan: the impl is not where it was planned.
    b'struct S<const N: usize = { 1 }>;\nimpl S { fn f() { panic!("no") } fn h() -> u8 { 1 } }\n',
])
def test_one_tree_is_trusted_only_where_both_trees_would_be(src):
    assert parse._shared_tree(src, _hits(src)) is None
    facts = parse.parse_file(src, BURN, code=True)
    assert _same_facts(facts, _two_trees(src))
    assert [s.function for s in facts.sites] == ["f"]


def test_one_tree_gives_the_facts_of_the_two_for_every_rule_example():
    shared = 0
    # Each example as written, and with a function whose body holds no call (most examples are
    # one function with a call: nothing to leave out).
    for src in [x for s in _snippets() for x in (s, s + b"\nfn helper() -> u8 { let x = 1; x }\n")]:
        assert _same_facts(parse.parse_file(src, BURN, code=True), _two_trees(src)), src.decode()[:200]
        if has_panic_hint(src) and parse._shared_tree(src, _hits(src)) is not None:
            shared += 1
    assert shared > 100  # the one tree, not the fallback, is what was compared
