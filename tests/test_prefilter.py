"""The byte-level reads that decide what is parsed: the hint tests, plain aliases and columns."""

from __future__ import annotations

import pytest

from analyzer.pipeline.extract import _prefilter
from analyzer.facts.parse import parse_file
from analyzer.facts.prefilter import ENUM_HINT, PANIC_HINT, has_enum_hint, has_panic_hint, plain_aliases, trait_names
from targets import BURN

HINT_CASES = [
    b"fn f() { panic!(\"no\") }",
    b"fn f() { todo !() }",
    b"fn f() { my_panic!(\"x\") }",  # another macro whose name ends in the word
    b"fn f() { panicky(); unimplemented_yet(); }",  # the words, never a call
    b"// todo: later\nfn f() {}",
    b"let unreachable = 1; unreachable\n  !()",
    b"pub enum DType { F32 }",
    b"fn f() { xs.iter().enumerate() }",  # `enum` inside a word
    b"enum\tKind { A }",
    b"",
    b"panic",
    b"enum",
]


@pytest.mark.parametrize("source", HINT_CASES)
def test_hints_agree_with_their_regex_over_the_whole_file(source):
    assert has_panic_hint(source) == (PANIC_HINT.search(source) is not None)
    assert has_enum_hint(source) == (ENUM_HINT.search(source) is not None)


def test_hints_find_a_call_after_a_word_that_is_not_one():
    source = b"// the panic handler\nfn f() { my_todo(); todo!() }"
    assert has_panic_hint(source)
    assert not has_panic_hint(b"fn f() { my_panic!(); todo_list(); }")
    assert has_enum_hint(b"for (i, x) in xs.iter().enumerate() {}\npub enum A { B }")
    assert not has_enum_hint(b"for (i, x) in xs.iter().enumerate() {}")


def test_prefilter_keeps_calls_and_enums_and_for_the_coverage_audit_ops_traits():
    for code in (False, True):
        verdict = _prefilter(code, BURN)
        assert verdict(b"fn f() { unimplemented!() }") == (True, True)  # worth parsing, and for its call
        assert verdict(b"pub enum E { A }") == (True, False)
        assert verdict(b"fn f() { xs.iter().enumerate(); let panicked = true; }\n// todo\n") == (False, False)
    ops_only = b"impl<B: Backend> FloatTensorOps<Self> for Flex<B> {}"
    assert _prefilter(True, BURN)(ops_only) == (True, False) and not _prefilter(False, BURN)(ops_only)[0]


def test_plain_aliases_one_per_line_at_the_line_start():
    source = (b"pub type FloatElem = f32;\n"
              b"    pub(crate) type IntElem = burn::tensor::I64;\n"
              b"type Local = Other; type Second = Ignored;\n"  # a second alias on a line is not at its start
              b"    type Assoc = u8;\n"  # indented without `pub`: an associated type, not read
              b"let prototype = x;\n"
              b"type Last=Final;")  # no newline at the end
    assert plain_aliases(source) == [("FloatElem", "f32"), ("IntElem", "I64"), ("Local", "Other"),
                                     ("Last", "Final")]
    assert plain_aliases(b"fn f() {}") == []
    assert plain_aliases(b"type") == []


def test_trait_names_are_the_traits_a_file_defines_at_a_line_start():
    source = (b"pub trait Recorder<B>: Send {\n"
              b"    pub(crate) unsafe trait Kernel {}\n"
              b"trait Local;\n"
              b"/// the trait Serializer drives it\n"  # a comment names a trait, defines none
              b"impl serde::Serializer for Packer {}\n"
              b"let s = \"trait Quoted\";\n"
              b"fn f() { let trait_ = 1; }\n"
              b"pub trait Recorder2 {}\n"
              b"trait Last")  # no newline at the end
    assert trait_names(source) == ["Kernel", "Last", "Local", "Recorder", "Recorder2"]
    assert trait_names(b"fn f() {}") == []
    assert trait_names(b"trait") == []
    # A file with sites reports them too, so the catalog sees every file's traits.
    assert parse_file(b"pub trait Keeper {}\nfn f() { todo!() }\n", BURN).trait_names == ["Keeper"]


def test_columns_are_bytes_from_the_line_start():
    source = "fn f(x: u8) {\n    match x {\n        0 => {}\n        _ => panic!(\"bad\"),\n    }\n}\n" \
             "fn g() { let s = \"é\"; todo!() }\n"
    sites = parse_file(source.encode(), BURN).sites
    assert [(s.line, s.column) for s in sites] == [(4, 14), (7, 24)]  # `é` is two bytes


def test_a_file_defining_a_procedural_macro_is_told_from_one_naming_proc_macro():
    from analyzer.facts.model import FileFacts
    from analyzer.facts.parse import parse_file
    from analyzer.facts.prefilter import defines_proc_macros

    derive = b"use proc_macro::TokenStream;\n#[proc_macro_derive(Module, attributes(module))]\npub fn m(i: TokenStream) -> TokenStream { i }\n"
    assert defines_proc_macros(derive)
    assert defines_proc_macros(b"#[ proc_macro_attribute ]\npub fn a() {}\n")
    assert not defines_proc_macros(b"use proc_macro2::TokenStream;\n// a proc_macro crate's helper\nfn f() {}\n")
    facts = parse_file(derive, BURN)
    assert facts.proc_macros and FileFacts.from_json(facts.to_json()).proc_macros
    assert facts.site_part().proc_macros
