"""The message decoder against Rust's escape rules (property tests), and message regexes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.facts.messages import LiteralError, build_message, decode_string_literal, split_format

# Any Unicode scalar value except surrogates (not representable in Rust strings) and CR (rustc
# rejects a bare CR in a literal).
scalar = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r")
SIMPLE = {"\n": r"\n", "\r": r"\r", "\t": r"\t", "\\": "\\\\", "\0": r"\0", "'": r"\'", '"': r"\""}


@st.composite
def encoded_char(draw, ch: str) -> str:
    """One character written as rustc accepts it, picked among the forms that apply."""
    forms = []
    if ch not in '"\\':
        forms.append(ch)
    if ch in SIMPLE:
        forms.append(SIMPLE[ch])
    if ord(ch) <= 0x7F:
        forms.append(f"\\x{ord(ch):02x}")
        forms.append(f"\\x{ord(ch):02X}")
    digits = f"{ord(ch):x}"
    pad = draw(st.integers(0, 6 - len(digits)))
    u = "0" * pad + digits
    if len(u) > 1 and draw(st.booleans()):
        cut = draw(st.integers(1, len(u) - 1))
        u = u[:cut] + "_" + u[cut:]  # `_` is allowed between the digits
    forms.append("\\u{" + u + "}")
    return draw(st.sampled_from(forms))


@st.composite
def rust_literal(draw):
    """(literal source, the value rustc gives it)."""
    text = draw(st.text(alphabet=scalar, max_size=40))
    parts = [draw(encoded_char(ch)) for ch in text]
    out = []
    for i in range(len(parts) + 1):
        # A backslash before a newline skips the newline and all white space after it, so it
        # can stand only before a part that does not itself start with white space.
        nxt = parts[i] if i < len(parts) else '"'
        if nxt[0] not in " \t\n\r" and draw(st.integers(0, 9)) == 0:
            out.append("\\\n" + draw(st.text(alphabet=" \t\n", max_size=6)))
        if i < len(parts):
            out.append(parts[i])
    return '"' + "".join(out) + '"', text


@given(rust_literal())
@settings(max_examples=400, deadline=None)  # no wall-time bound: a loaded machine is slow, not wrong
def test_cooked_literals_decode_as_rustc_does(case):
    literal, value = case
    assert decode_string_literal(literal) == value


@given(st.text(alphabet=scalar, max_size=40), st.integers(0, 3))
@settings(deadline=None)
def test_raw_literals_are_taken_as_written(text, extra):
    # Enough hashes that no `"#...` inside ends the literal early.
    runs = [len(m.group(0)) - 1 for m in re.finditer(r'"#*', text)]
    hashes = "#" * ((max(runs) + 1 if runs else 0) + extra)
    assert decode_string_literal(f'r{hashes}"{text}"{hashes}') == text


@pytest.mark.parametrize("bad", [r'"\q"', r'"\x80"', r'"\u{d800}"', r'"\u{110000}"', r'"\u{}"',
                                 r'"\u{1234567}"', r'"\x4"', '"abc\\"'])
def test_literals_rustc_rejects_are_refused(bad):
    with pytest.raises(LiteralError):
        decode_string_literal(bad)


def test_crlf_inside_a_literal_reads_as_lf():
    assert decode_string_literal('"a\r\nb"') == "a\nb"
    assert decode_string_literal('"a\\\r\n   b"') == "ab"


placeholder = st.sampled_from(["{}", "{:?}", "{0}", "{x:?}", "{other:?}", "{:>8.3}", "{dtype}"])
literal_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="{}"), max_size=12)


@given(st.lists(st.one_of(literal_text, placeholder), max_size=6),
       st.lists(st.text(max_size=10), min_size=6, max_size=6),
       st.sampled_from(["panic", "unimplemented", "todo"]))
@settings(max_examples=300, deadline=None)
def test_the_message_regex_matches_every_formatted_message(pieces, values, macro):
    fmt = "".join(pieces)
    msg = build_message(macro, fmt)
    # What the program prints: every placeholder replaced by some value.
    it = iter(values)
    printed = "".join(next(it) if s.placeholder else s.text for s in msg.segments)
    assert re.fullmatch(msg.regex, printed, re.S)
    # And the errorMessage keeps the placeholders as written.
    assert msg.text == {"panic": "", "unimplemented": "not implemented: ",
                        "todo": "not yet implemented: "}[macro] + fmt


def test_braces_and_placeholders():
    segs = split_format("a {{b}} {c:?} {}")
    assert [(s.text, s.placeholder) for s in segs] == [("a {b} ", False), ("{c:?}", True), (" ", False), ("{}", True)]
    assert build_message("panic", "{{x}}").text == "{x}"
    assert build_message("todo", None).text == "not yet implemented"
    assert build_message("panic", None, "msg").text == "{msg}"
