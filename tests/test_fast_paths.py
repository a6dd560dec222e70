"""The fast paths of the parse (the planned items of a file with a panic-family call, each enum item
alone in a file without one) give exactly the facts of a whole-file parse, on generated Rust
whose literals and comments hold the braces, quotes and keywords that could mislead a scan."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.facts import enums, parse, syntax
from analyzer.facts.model import FileFacts
from analyzer.facts.parse import parse_file
from analyzer.facts.prefilter import VARIANT_USE, has_panic_hint, plain_aliases, variant_uses
from targets import BURN


def _whole(src: bytes) -> FileFacts:
    tree = syntax._parser().parse(src)
    has_errors = tree.root_node.has_error
    if has_errors:
        tree = parse._repaired(src, tree)
    return parse._site_facts(tree.root_node, src, has_errors, False, plain_aliases(src), True, BURN)


# Text that could end or open something if a scan misread it.
_TRICKY = ["{", "}", "(", ")", "[", "]", "enum E {", "panic!(", "todo!()", "'", "a", " ", "::", ";", "#", "r#"]
_words = st.lists(st.sampled_from(_TRICKY), max_size=6).map("".join)
# Inside "...": a quote or a backslash only escaped.
_string = st.lists(st.sampled_from([*_TRICKY, '\\"', "\\\\", "/*", "//"]), max_size=6).map("".join)
# Inside r#"..."#: anything but `"#`.
_raw = st.lists(st.sampled_from([*_TRICKY, '"', "/*", "*/", "\\"]), max_size=6).map(lambda p: "".join(p).replace('"#', '" #'))
_char = st.sampled_from(["'{'", "'}'", "'\"'", "'\\''", "'('", "b'['", "'\\u{7D}'"])
_literal = st.one_of(
    _string.map(lambda s: f'"{s}"'),
    _raw.map(lambda s: f'r#"{s}"#'),
    _raw.map(lambda s: f'br##"{s}"##'),
    _string.map(lambda s: f'b"{s}"'),
    _char,
)
_block_comment = st.recursive(
    _words.map(lambda w: f"/* {w} */"),
    lambda inner: st.tuples(_words, inner, _words).map(lambda t: f"/* {t[0]} {t[1]} {t[2]} */"),
    max_leaves=3,
)
_comment = st.one_of(_words.map(lambda w: f"// {w}\n"), _words.map(lambda w: f"/// {w}\n"), _block_comment)
_noise = st.lists(st.one_of(_comment, _literal.map(lambda x: f"/* lit */ // {x}\n")), max_size=2).map(" ".join)

_VARIANTS = ["F32", "F64", "I64", "Bool(BoolStore)", "Named { a: u8, b: [u8; 2] }", "Tagged = 3", "U8"]
_attr = st.one_of(
    st.just("#[cfg(feature = \"x\")]"),
    st.just("#[default]"),
    _literal.filter(lambda x: not x.startswith(("'", "b'"))).map(lambda s: f"#[doc = {s}]"),
    _comment,
)


@st.composite
def _enum(draw, i: int) -> str:
    variants = draw(st.lists(st.sampled_from(_VARIANTS), min_size=1, max_size=4, unique=True))
    body = ",\n    ".join(f"{draw(_attr) if draw(st.booleans()) else ''} {v}" for v in variants)
    vis = draw(st.sampled_from(["", "pub ", "pub(crate) "]))
    return f"{draw(_noise)}\n#[derive(Debug)]\n{vis}enum DType{i} {{\n    {body},\n    {draw(_noise)}\n}}\n"


_BODIES = ['panic!("no {}", x)', "todo!()", 'unimplemented!("dtype {:?}", x)', '{ panic!("in a block") }',
           "0", "{ let _c = '}'; 1 }", "{ let _s = r#\"}\"#; 2 }", "unreachable!()",
           '{ assert!(x > 1, "no {} support", x); 3 }', '{ assert!(x > 1, "{} is not supported", x); 3 }',
           '{ assert_eq!(x, 1); 4 }', 'x.get().expect("not here")', 'x.get().expect("not available")',
           '{ debug_assert_ne!(x, 2, "debug only"); 5 }']


@st.composite
def _match_fn(draw, i: int, indent: str = "", panics: bool = False) -> str:
    arms = [f'{indent}        DType0::Bool(_) => panic!("bool"),'] if panics else []
    for v in draw(st.lists(st.sampled_from(["F32", "F64", "I64", "U8"]), min_size=1, max_size=3, unique=True)):
        arms.append(f"{indent}        DType0::{v} => {draw(st.sampled_from(_BODIES))},")
    if draw(st.booleans()):
        arms.append(f"{indent}        _ => {draw(st.sampled_from(_BODIES))},")
    noise = draw(_noise)
    return (f"{indent}fn f{i}<'a>(x: DType0, s: &'a str) -> u8 {{\n{indent}    {noise}\n"
            f"{indent}    match x {{\n" + "\n".join(arms) + f"\n{indent}    }}\n{indent}}}\n")


@st.composite
def _item(draw, i: int, calls: bool) -> str:
    kind = draw(st.sampled_from(["enum", "fn", "impl", "macro", "const", "mod"] if calls else ["enum", "const", "mod"]))
    if kind == "enum":
        return draw(_enum(i))
    if kind == "fn":
        return draw(_match_fn(i))
    if kind == "impl":
        methods = "".join(draw(_match_fn(i * 10 + k, "    ")) for k in range(draw(st.integers(1, 2))))
        return f"impl<B: Backend> FloatTensorOps<B> for X{i} {{\n    {draw(_noise)}\n{methods}}}\n"
    if kind == "macro":
        body = draw(st.sampled_from(_BODIES))
        return (f"macro_rules! m{i} {{\n    ($x:ident) => {{\n        match $x {{\n"
                f"            $( DType0::$v => {body}, )*\n            _ => 0,\n        }}\n    }};\n}}\n")
    if kind == "const":
        return f"const C{i}: &str = {draw(_literal.filter(lambda x: not x.startswith(('b', chr(39)))))};\n"
    inner = draw(st.one_of(_enum(i * 10), _match_fn(i * 10, "    ")) if calls else _enum(i * 10))
    return f"#[cfg(test)]\nmod m{i} {{\n    {draw(_noise)}\n{inner}}}\n"


@st.composite
def rust_files(draw, calls: bool) -> bytes:
    """A file of a few items; without `calls`, only enums, consts and modules (no panic-family
    call, so the enum-only path reads it)."""
    n = draw(st.integers(1, 4))
    items = [draw(_item(i, calls)) for i in range(n)]
    text = "use a::b;\n" + "\n".join(items)
    if calls:
        return (text + draw(_match_fn(n, panics=True))).encode()
    # The words of a call in a comment or literal still send the file down the other path.
    return text.replace("!(", "(").encode()


def _same_as_whole(src: bytes) -> FileFacts:
    whole = _whole(src)
    assert not whole.parse_errors, src.decode()
    for code in (False, True):
        facts = parse_file(src, BURN, code)
        assert (facts.sites, facts.enums, facts.aliases) == (whole.sites, whole.enums, whole.aliases)
    return whole


_FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FAST
@given(rust_files(calls=True))
def test_the_planned_items_give_the_facts_of_a_whole_parse(src):
    whole = _same_as_whole(src)
    assert has_panic_hint(src)
    hits = parse.site_hits(src)
    planned = parse._planned_tree(src, hits)
    assert planned is not None  # valid Rust of these shapes always has a plan that fits
    alone = parse._site_facts(planned.root_node, src, False, False, plain_aliases(src), True, BURN)
    assert (alone.sites, alone.enums) == (whole.sites, whole.enums)


@_FAST
@given(rust_files(calls=False))
def test_the_enum_items_alone_give_the_enums_of_a_whole_parse(src):
    whole = _same_as_whole(src)
    assert not has_panic_hint(src)
    assert enums._enum_items(src) == whole.enums


# Paths, separators and the characters around them that a scan of `::` could misread.
_PATH_BITS = ["::", ":", ":::", "A", "Ab", "a", "aB", "_", "_C", "9", "9D", "{", "*", " ", "\n", "é", "Kind", "x::",
              "Long" * 20, "b" * 70]  # identifiers longer than the window variant_uses reads first


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PATH_BITS), max_size=12).map("".join))
def test_variant_uses_is_the_regex(text):
    """variant_uses finds exactly the names its defining regex finds, each once, sorted."""
    source = text.encode()
    assert variant_uses(source) == sorted({m.decode() for m in VARIANT_USE.findall(source)})


# Derives before enums and other items, parse-trait impls, and bytes around them that a search
# by word could misread.
_derive = st.tuples(
    st.sampled_from(["#[derive(", "#[cfg_attr(x, derive(", "derive("]),
    st.lists(st.sampled_from(["EnumString", "serde::Deserialize", "Debug"]), min_size=1, max_size=3).map(", ".join),
    st.sampled_from([")]", "))]", ")"]),
    st.sampled_from(["", "\n", "// c\n", "#[repr(u8)]\n", "/* derive */"]),
    st.sampled_from(["", "pub ", "pub(crate) "]),
    st.sampled_from(["enum Kind {}\n", "struct S;\n", "enum  Fmt {}\n", "enumx Y {}\n"])).map("".join)
_parse_impl = st.tuples(
    st.sampled_from(["impl ", "impl<'de> ", "", "x"]),
    st.sampled_from(["FromStr", "TryFrom<&str>", "TryFrom<&'a str>", "TryFrom<String>", "Deserialize<'de>", "xFromStr"]),
    st.sampled_from([" for ", " for a::", "for ", " fo "]),
    st.sampled_from(["Kind", "Fmt"]),
    st.just(" {}\n")).map("".join)
_input_bits = st.sampled_from(["\n", " ", "derive", "enum", "FromStr", "// x\n", "a::"])


def _built_from_everywhere(source: bytes) -> list[tuple[str, str]]:
    """built_from's definition: both of its regexes tried at every offset, with no word search."""
    from analyzer.facts.inputs import _DERIVED_ENUM, _PARSE_IMPL, _PATH_END
    out = set()
    for at in range(len(source)):
        m = _DERIVED_ENUM.match(source, at)
        if m is not None and source.startswith(b"derive", at):
            for part in m.group(1).split(b","):
                last = _PATH_END.search(part)
                if last is not None:
                    out.add((m.group(2).decode(), last.group(1).decode()))
        m = _PARSE_IMPL.match(source, at)
        if m is not None and (at == 0 or not (source[at - 1:at].isalnum() or source[at - 1] == 0x5F)):
            word = next(w for w in ("FromStr", "TryFrom", "Deserialize") if m.group(1).startswith(w.encode()))
            out.add((m.group(2).decode(), word))
    return sorted(out)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_derive, _parse_impl, _input_bits), max_size=6).map("".join))
def test_built_from_is_its_regexes_everywhere(text):
    """built_from, which tries its regexes only where their words occur, finds what they find at
    every offset."""
    from analyzer.facts.inputs import built_from
    source = text.encode()
    assert built_from(source) == _built_from_everywhere(source)


_UNPARSED_BITS = ["pub type A = b::C;\n", "type D = E;\n", "pub trait T {}\n", "X::Y", "K::{A}", "impl ", "FloatTensorOps",
                  "<B>", " for ", "Cube", " {\n", "fn f() {}\n", "}\n", "\xe9", "\n", "FromStr"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_UNPARSED_BITS), max_size=12).map("".join), st.booleans(), st.booleans())
def test_facts_read_without_a_parse_are_what_their_rows_decode_to(text, code, latin1):
    """A cold run hands on the facts of a file it does not parse as built, not decoded from their
    cache rows: they must be the values a cached run decodes."""
    from analyzer.pipeline.extract import _parsed, _unparsed
    source = text.encode("latin-1" if latin1 else "utf-8")
    direct = _unparsed(source, code, {}, BURN)
    assert direct == _parsed(direct.sites_row, direct.code_row)


# Members of an ops impl, with what hides a brace or a `fn` from the lexer: doc comments, strings,
# lifetimes, chars, nested functions, struct literals and members without a body.
_MEMBERS = ["fn a() {}", "fn b<'a>(x: &'a str) -> u8 { 0 }", "/// fn doc() {\n    fn c() {}",
            "fn d() { fn inner() {} }", "fn e() -> char { '{' }", "const K: S = S {};", "type T = u8;",
            "fn f() { let s = \"} fn g() {\"; }", "/* } */ fn h() {}", "fn i(x: u8) -> u8 { x / 2 }",
            "#[cfg(x)]\n    fn j() {}", "fn k() where B: 'static {}", "m!(fn l);", "fn fnord() {}",
            "m!(afn b);", "fn n_fn(fnx: u8) {}"]


@st.composite
def ops_impl_files(draw) -> bytes:
    items = []
    for _ in range(draw(st.integers(1, 3))):
        head = draw(st.sampled_from(["impl<B: Backend> FloatTensorOps<Self> for Cube<B>", "impl IntTensorOps<B> for Nd",
                                     "impl Other for X", "mod m", "impl BoolTensorOps for Nd"]))
        members = draw(st.lists(st.sampled_from(_MEMBERS), max_size=5))
        items.append(head + " {\n" + "".join(f"    {m}\n" for m in members) + "}\n")
    return "\n".join(items).encode()


def _methods_at_depth_one(source: bytes, open_at: int, close: int) -> list[str]:
    """ops_impls' definition of an impl's methods: every `fn NAME` in code one brace deep."""
    from analyzer.facts import lexer
    from analyzer.facts.impls import _FN
    braces = list(lexer.marks(source, lexer.BRACES))
    cursor = lexer.CodeCursor(source)
    out = []
    for f in _FN.finditer(source, open_at, close):
        depth = sum(1 if source[b] == 0x7B else -1 for b in braces if b < f.start())
        if cursor.in_code(f.start()) and depth == 1:
            out.append(f.group(1).decode())
    return out


@_FAST
@given(ops_impl_files())
def test_ops_impl_methods_are_the_functions_one_brace_deep(src):
    """ops_impls reads each member's signature, lexing it only when it holds a quote, comment or
    slash: the same methods as every `fn` in code at depth one of the impl."""
    from analyzer.facts import regions
    from analyzer.facts.impls import ops_impls
    lexed = regions.braces(src)
    assert lexed is not None
    found = ops_impls(src, BURN)
    heads = [(o, e - 1, src[src.rfind(b"\n", 0, o) + 1:o]) for o, e in zip(lexed.opens, lexed.ends)]
    impls = [(o, c) for o, c, head in heads if b"Ops" in head and b" for " in head]
    assert len(found) == len(impls)
    assert [ms for _, _, ms in found] == [_methods_at_depth_one(src, o, c) for o, c in impls]


# Bytes that open, close or hide a brace: quotes of every literal form, comment openers, a
# lifetime, an identifier ending in `r` before a quote, escapes and line ends.
_LEX_BITS = ["{", "}", '"', "'", "/", "*", "\\", "\n", "r", "#", "b", "a", " ", "'a", "'{'", "'\\''", "'\\u{7D}'",
             "r#\"", "\"#", "br\"", "//", "/*", "*/", "é", "x/2"]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_LEX_BITS), max_size=16).map("".join))
def test_code_braces_are_the_brace_marks(text):
    """The brace scan that reads plain strings, line comments and chars in its regex finds the
    braces marks finds, and fails where marks fails."""
    from analyzer.facts import lexer
    source = text.encode()
    try:
        expected: list[int] | None = list(lexer.marks(source, lexer.BRACES))
    except lexer.LexError:
        expected = None
    try:
        got: list[int] | None = lexer.code_braces(source)
    except lexer.LexError:
        got = None
    assert got == expected


@st.composite
def _token_tree_files(draw) -> bytes:
    """Files whose calls stand in macro arguments and transcribers, nested, beside plain ones."""
    parts = [draw(rust_files(calls=True)).decode()]
    for i in range(draw(st.integers(1, 3))):
        body = draw(st.sampled_from(_BODIES))
        parts.append(draw(st.sampled_from([
            f"fn g{i}() {{ wrap!{{ {body} }}; }}\n",
            f"fn g{i}() -> T {{ quote! {{ match x {{ A => 1, _ => {body} }} }} }}\n",
            f"fn g{i}() {{ outer!(inner![ {body} ], {draw(_noise)} 2); }}\n",
            f"fn g{i}() {{ a::b::c!( {body} ); {body}; }}\n",
            f"macro_rules! t{i} {{ () => {{ {body} }}; ($x:expr) => {{ w!({body}) }}; }}\n",
            f"// panic in a comment\nfn g{i}() {{ v!(1); }}\n",
        ])))
    return "\n".join(parts).encode()


@_FAST
@given(_token_tree_files())
def test_the_token_trees_around_the_words_are_those_the_query_matches(src):
    # sites._token_trees walks down to each word in place of running queries/token_trees.scm:
    # it must give the query's trees that hold a word, in order.
    from tree_sitter import QueryCursor

    from analyzer.facts import sites
    from analyzer.facts.prefilter import site_word_spans

    root = syntax._parser().parse(src).root_node
    words = [s for s, _ in site_word_spans(src, 0, len(src))]
    expected = []
    for _, caps in QueryCursor(syntax.query("token_trees.scm")).matches(root):
        body = caps["body"][0]
        if any(body.start_byte <= w < body.end_byte for w in words):
            expected.append((body.start_byte, body.end_byte, caps["macro"][0].id if "macro" in caps else None))
    got = [(b.start_byte, b.end_byte, m.id if m is not None else None)
           for b, m in sites._token_trees(root, src, 0, len(src), 0, BURN)]
    assert got == sorted(expected)


@_FAST
@given(_token_tree_files())
def test_the_calls_found_on_the_way_to_the_words_are_the_query_matches(src):
    # sites._word_nodes finds the calls on its walk down to each word in place of running
    # queries/panic_calls.scm: it must give the query's matches, once each, in order.
    from tree_sitter import QueryCursor

    from analyzer.facts import sites

    from analyzer.facts.prefilter import site_word_spans

    root = syntax._parser().parse(src).root_node
    # An assertion or an `expect` is a call the walk reads only where it refuses in words.
    words = {s for s, _ in site_word_spans(src, 0, len(src))}
    expected = [(caps["call"][0].id, caps["name"][0].id)
                for _, caps in QueryCursor(syntax.query("panic_calls.scm")).matches(root)
                if caps["name"][0].start_byte in words]
    got = [(call.id, name.id) for call, name in sites._word_nodes(root, src, 0, len(src), 0, BURN)[0]]
    assert got == expected
