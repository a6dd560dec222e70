"""The one Rust lexer, and the scans built on it agreeing with a whole parse where they used to differ."""

from __future__ import annotations

import pytest

from analyzer.facts import code, enums, lexer, regions, syntax, tokentrees
from analyzer.facts.parse import parse_file
from targets import BURN


def _marks(src: bytes, pattern: bytes = lexer.DELIMITERS) -> list[tuple[int, bytes]]:
    return [(at, src[at:at + 1]) for at in lexer.marks(src, pattern)]


@pytest.mark.parametrize("hidden", [
    b'"a { ( ["',
    b'"esc \\" { "',
    b'b"{"',
    b'c"{"',
    b'r"{ \\"',
    b'r#"a " { "#',
    b'br##"a "# { "##',
    b"'{'",
    b"b'('",
    b"'\\''",
    b"'\\u{7B}'",
    b"// { (\n",
    b"/// doc { (\n",
    b"/* { */",
    b"/* /* { */ } */",
])
def test_delimiters_inside_literals_and_comments_are_not_marks(hidden):
    src = b"f(" + hidden + b")"
    assert _marks(src) == [(1, b"("), (len(src) - 1, b")")]


def test_a_lifetime_is_code_and_the_delimiters_after_it_count():
    src = b"fn f<'a>(x: &'a u8) -> [u8; 1] { 'outer: loop { break 'outer; } }"
    got = [t for _, t in _marks(src)]
    assert got == [b"(", b")", b"[", b"]", b"{", b"{", b"}", b"}"]


def test_an_identifier_ending_in_r_does_not_open_a_raw_string():
    # `bar"` is no raw-string prefix: the string is an ordinary one, and its `\"` an escape.
    src = b'f(bar"x\\" }") {}'
    assert [t for _, t in _marks(src)] == [b"(", b")", b"{", b"}"]


@pytest.mark.parametrize("open_literal", [b'"open', b'r#"open"', b"/* /* */", b'b"open'])
def test_a_literal_or_comment_left_open_is_a_lex_error(open_literal):
    with pytest.raises(lexer.LexError):
        _marks(b"f() " + open_literal)
    assert regions.braces(b"fn f() {} " + open_literal) is None


def test_the_scan_stops_at_its_end():
    src = b'(a) "x" (b)'
    assert list(lexer.marks(src, lexer.DELIMITERS, 0, 3)) == [0, 2]
    with pytest.raises(lexer.LexError):  # a string that ends only after the end of the scan
        list(lexer.marks(src, lexer.DELIMITERS, 0, 6))


def test_matching_close_skips_what_the_lexer_skips():
    src = b'{ r#"}"#, \'}\', /* /* } */ } */ { } }'
    assert lexer.matching_close(src, 0) == len(src) - 1
    assert lexer.matching_close(b"( ]", 0) == -1
    assert lexer.matching_close(b'( ")', 0) == -1


# Enum items as the enum-only path reads them (a file with no panic-family call), which used to
# end the item at a `}` inside a raw string or a nested comment and find no variant.
@pytest.mark.parametrize("src", [
    b'pub enum DType { #[doc = r#"a " } b"#] F32, F64, I64 }\n',
    b"pub enum DType { /* /* */ } */ F32, F64, I64 }\n",
    b"pub enum DType {\n    /// the char '}'\n    #[doc = \"'}'\"] F32,\n    F64, I64 }\n",
])
def test_the_enum_only_path_reads_the_variants_a_whole_parse_reads(src):
    items = enums._enum_items(src)
    whole = enums._enums(syntax._parser().parse(src).root_node, src)
    assert [v for v, _ in whole[0].variants] == ["F32", "F64", "I64"]
    assert items == whole
    assert parse_file(src, BURN).enums == whole


def test_enum_items_fall_back_when_a_body_does_not_close():
    assert enums._enum_items(b"enum A { X, Y\n") is None
    assert enums._enum_items(b'const S: &str = "open\nenum A { X }\n') is None
    assert enums._enum_items(b"use a::enum_like; enum B;\nenum C { Z }") is not None


def test_macro_arguments_skip_chars_and_raw_strings():
    src = b"""fn f() { dispatch!(x, ')', r#"]"#, [F32, F64]); }"""
    calls, macros = code._calls_in(src, src[::-1], 0, len(src), 1)
    assert [(m.name, m.dtypes) for m in macros] == [("dispatch", ["F32", "F64"])]


def test_a_repetition_holding_a_char_paren_is_unwrapped():
    buf = bytearray(b"{ $( A::$v => ')', )* }")
    tokentrees._unwrap_repetitions(buf)
    assert bytes(buf) == b"{    A::$v => ')',    }"
