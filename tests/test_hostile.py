"""Hostile input: records files and repositories written by an attacker (CI runs the tool on pull
requests from forks, and `render`/`coverage --records`/`diff`/`lookup` read files anyone can write).
No script in our pages, no injected Markdown, no hang, no escape codes on the terminal, no page
overwriting another, no orphaned process."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from conftest import ONE_SITE_RS as SITE
from conftest import GitRepo, one_record, run_cli
from targets import BURN

@pytest.fixture(scope="module")
def base_line(tmp_path_factory) -> dict:
    """One real records line, extracted from a small repository (the tests then tamper with it)."""
    records = one_record(tmp_path_factory.mktemp("hostile"))
    (line,) = [json.loads(x) for x in records.read_text().splitlines()]
    return line


def pinned(line: dict) -> str:
    """The start of every link into the line's repository at its commit (the only links written)."""
    r = line["record"]
    return f"https://github.com/{r['repo']}/blob/{r['analyzedSha']}/"


def tampered(base: dict, n: int = 1, **fields) -> dict:
    """A copy of the records line with record fields replaced (`a_` prefix: analysis fields), and a
    distinct id and slug for the n-th copy."""
    line = copy.deepcopy(base)
    line["record"]["id"] = f"{n:016x}"
    line["record"]["slug"] = f"conv-unsupported-dtype-{n:06x}"
    for k, v in fields.items():
        if k.startswith("a_"):
            line["analysis"][k[2:]] = v
        else:
            line["record"][k] = v
    return line


def write_records(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return path


SCRIPT_URLS = ["javascript:alert(1)", "java\tscript:alert(1)", "\x01javascript:alert(1)", " JavaScript:alert(1)",
               "data:text/html,<script>alert(1)</script>", "vbscript:x", "//evil.example/x", "java\nscript:alert(1)"]


def hrefs(html: str) -> list[str]:
    import html as html_mod
    return [html_mod.unescape(h) for h in re.findall(r'href="([^"]*)"', html)]


def assert_no_script_href(html: str) -> None:
    for h in hrefs(html):
        squeezed = re.sub(r"[\x00-\x20]", "", h).lower()
        assert not squeezed.startswith(("javascript:", "data:", "vbscript:", "//")), h
        assert ":" not in squeezed.split("/")[0] or squeezed.startswith(("https:", "http:")), h


# --- 1. one URL policy for every href -----------------------------------------------------------

@pytest.mark.parametrize("url", SCRIPT_URLS)
def test_url_policy_refuses_anything_but_http(url):
    from analyzer.core.safe import https_url
    assert https_url(url) is None
    assert https_url("https://github.com/o/r/blob/abc/x.rs#L1-L2") == "https://github.com/o/r/blob/abc/x.rs#L1-L2"
    assert https_url("  https://github.com/o/r\t") == "https://github.com/o/r"


def test_coverage_html_never_links_a_script(base_line, tmp_path):
    lines = [tampered(base_line, i, githubUrl=u) for i, u in enumerate(SCRIPT_URLS, start=1)]
    records = write_records(tmp_path / "r.jsonl", lines)
    res = run_cli("coverage", "--records", str(records), "--format", "html", "--out", str(tmp_path / "c.html"))
    assert res.code == 0, res.stderr
    html = (tmp_path / "c.html").read_text()
    assert_no_script_href(html)


def test_page_html_never_links_a_script(base_line, tmp_path):
    for i, url in enumerate(SCRIPT_URLS, start=1):
        records = write_records(tmp_path / f"r{i}.jsonl", [tampered(base_line, i, githubUrl=url)])
        out = tmp_path / f"p{i}"
        res = run_cli("render", str(records), "--format", "html", "--out", str(out),
                      "--issues-url", url)
        assert res.code == 0, res.stderr
        for page in out.glob("*.html"):
            assert_no_script_href(page.read_text())


# --- 2. Markdown injection ----------------------------------------------------------------------

EVIL_PATH = "crates/burn-x/src/a|b\n# Heading <img src=x onerror=alert(1)> [t](https://evil.example) `x`\n\nz.rs"


def _md_links(md: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]*)", md)


def outside_code(md: str) -> str:
    """The Markdown with its inline code spans and fenced blocks removed: what is read as markup."""
    md = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1\s*$", "", md)
    return re.sub(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", "", md)


def assert_no_injection(md: str) -> None:
    markup = re.sub(r"\\.", "", outside_code(md))  # backslash-escaped characters are text
    assert "<img" not in markup, markup
    assert "](https://evil.example" not in markup
    assert not re.search(r"(?m)^#+ ?Heading", markup)
    assert not re.search(r"(?m)^#+ H\b", markup)
    for target in _md_links(markup):
        assert not re.sub(r"[\x00-\x20]", "", target).lower().startswith(("javascript:", "data:")), target


def _table_widths(md: str) -> set[int]:
    widths = set()
    for row in md.splitlines():
        if row.startswith("|"):
            widths.add(len(re.split(r"(?<!\\)\|", row.strip())) - 2)
    return widths


def test_diff_markdown_escapes_paths_and_links(base_line, tmp_path):
    base = write_records(tmp_path / "base.jsonl", [tampered(base_line, 1)])
    head_lines = [tampered(base_line, 1), tampered(base_line, 2, filePath=EVIL_PATH,
                                                    githubUrl="javascript:alert(1)"),
                  tampered(base_line, 3, filePath=EVIL_PATH, errorMessage="a|b\n\n# H `x` <img src=x>",
                           githubUrl=f"{pinned(base_line)}a%20b)(c<d>.rs#L1")]
    head = write_records(tmp_path / "head.jsonl", head_lines)
    res = run_cli("diff", str(base), str(head), "--format", "markdown")
    assert res.code == 0, res.stderr
    md = res.stdout
    assert_no_injection(md)
    assert "javascript:" not in md
    # every table row has as many cells as its header
    for block in md.split("\n\n"):
        widths = _table_widths(block)
        assert len(widths) <= 1, block
    assert f"({pinned(base_line)}a%20b%29%28c%3Cd%3E.rs#L1)" in md


def test_coverage_markdown_escapes_paths_and_links(base_line, tmp_path):
    lines = [tampered(base_line, 1, filePath=EVIL_PATH, githubUrl="javascript:alert(1)"),
             tampered(base_line, 2, a_function="f|g\n\n# H", a_operation="op|x <img src=y>",
                      errorMessage="op|x <img src=y>: unsupported dtype {d:?}")]
    records = write_records(tmp_path / "r.jsonl", lines)
    res = run_cli("coverage", "--records", str(records), "--format", "markdown")
    assert res.code == 0, res.stderr
    md = res.stdout
    assert_no_injection(md)
    assert "javascript:" not in md, md
    for block in md.split("\n\n"):
        assert len(_table_widths(block)) <= 1, block


def test_render_markdown_index_and_pages_escape(base_line, tmp_path):
    lines = [tampered(base_line, 1, filePath=EVIL_PATH, errorMessage="x\n\n# H <img src=x> [t](https://evil.example)",
                      githubUrl="javascript:alert(1)")]
    records = write_records(tmp_path / "r.jsonl", lines)
    out = tmp_path / "p"
    res = run_cli("render", str(records), "--format", "md", "--out", str(out))
    assert res.code == 0, res.stderr
    index = (out / "index.md").read_text()
    assert_no_injection(index)
    for block in index.split("\n\n"):
        assert len(_table_widths(block)) <= 1, block
    for page in out.glob("*.md"):
        text = page.read_text()
        assert "](<javascript:" not in text and "View on GitHub" not in text  # no link to a script
        assert_no_injection(text)


def test_github_url_percent_encodes_the_path():
    from analyzer.records.model import github_url
    assert github_url(BURN, "o/r", "s", "a b/c)#?.rs", 1, 2) == "https://github.com/o/r/blob/s/a%20b/c%29%23%3F.rs#L1-L2"


# --- 9. SARIF artifact URIs ------------------------------------------------------------------

def test_sarif_artifact_uri_is_percent_encoded(base_line, tmp_path):
    base = write_records(tmp_path / "base.jsonl", [tampered(base_line, 1)])
    head = write_records(tmp_path / "head.jsonl", [tampered(base_line, 1),
                                                     tampered(base_line, 2, filePath="crates/a b/c#d%e ü.rs",
                                                              githubUrl="javascript:x")])
    res = run_cli("diff", str(base), str(head), "--format", "sarif")
    assert res.code == 0, res.stderr
    doc = json.loads(res.stdout)
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in doc["runs"][0]["results"] for loc in r["locations"]]
    assert uris == ["crates/a%20b/c%23d%25e%20%C3%BC.rs"]
    assert "javascript:" not in res.stdout


# --- 3 and 13. lookup is linear ------------------------------------------------------------------

def test_lookup_never_runs_a_regex_of_another_shape(base_line, tmp_path):
    """`^(a+)+$` backtracks for minutes on 40 characters; lookup refuses to run it at all."""
    evil = tampered(base_line, 1, a_messageRegex="^(a+)+$")
    records = write_records(tmp_path / "r.jsonl", [evil])
    res = run_cli("lookup", "a" * 40 + "!", "--records", str(records))
    assert res.code == 1
    assert "messageRegex" in res.stderr


def test_lookup_matcher_is_exact_for_literal_segments():
    from analyzer.features.lookup import message_matcher
    m = message_matcher(r"^conv: unsupported dtype .*?$")
    assert m is not None and m("conv: unsupported dtype F16") and not m("conv: unsupported dtyp")
    many = message_matcher("^" + ".*?" * 12 + "X$")
    assert many is not None and not many("a" * 40) and many("a" * 40 + "X")
    m = message_matcher(r"^a.*?b.*?c$")
    assert m("abc") and m("aXbYc") and m("abbc") and not m("acb") and not m("ab")
    m = message_matcher(r"^\{\}\.\*x$")
    assert m("{}.*x") and not m("{}a*x")
    m = message_matcher(r"^ab.*?ba$")
    assert m("aba") is False and m("abba")  # segments may not overlap
    assert message_matcher("^(a+)+$") is None
    assert message_matcher("^a[b]c$") is None


def test_lookup_with_many_placeholders_answers(base_line, tmp_path):
    """Twelve placeholders then a literal: a backtracking regex takes minutes on 40 characters."""
    rx = "^" + ".*?" * 12 + "X$"
    records = write_records(tmp_path / "r.jsonl", [tampered(base_line, 1, a_messageRegex=rx,
                                                            errorMessage="{}" * 12 + "X")])
    res = run_cli("lookup", "a" * 40, "--records", str(records))
    assert res.code == 1  # no match, and an answer at all


def test_panic_header_parse_is_linear():
    """A long header line with many `' panicked at ` parts is read in one pass."""
    from analyzer.features.lookup import parse_panic
    junk = "thread 'a' panicked at " + "x' panicked at " * 20000 + "src/a.rs:1:2"
    p = parse_panic(junk + "\n")
    assert p.message.startswith("thread") or p.path is None or p.path.endswith("src/a.rs")
    old = "thread 'main' panicked at '" + "m', " * 20000 + "\n"
    parse_panic(old)
    p = parse_panic("thread 'main' panicked at src/x.rs:12:5:\nboom: it\nnote: run with `RUST_BACKTRACE=1`")
    assert (p.message, p.path, p.line, p.column) == ("boom: it", "src/x.rs", 12, 5)
    p = parse_panic("thread 'main' panicked at 'boom, it', src/x.rs:12:5\nnote: run with `RUST_BACKTRACE=1`")
    assert (p.message, p.path, p.line, p.column) == ("boom, it", "src/x.rs", 12, 5)
    p = parse_panic("thread 'main' panicked at 'two\nlines', src/x.rs:3:4")
    assert (p.message, p.path) == ("two\nlines", "src/x.rs")


# --- 4. terminal escape codes -------------------------------------------------------------------

ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b[8mhidden\x1b[0m\x9b31m\x07\x08"


def test_lookup_prints_no_control_characters(base_line, tmp_path):
    line = tampered(base_line, 1, errorMessage="conv: unsupported dtype {d:?}" + ESCAPES,
                    filePath="crates/burn-x/src/" + ESCAPES + "lib.rs", a_crate="burn-x" + ESCAPES,
                    solutions=["do " + ESCAPES])
    records = write_records(tmp_path / "r.jsonl", [line])
    res = run_cli("lookup", "conv: unsupported dtype F16", "--records", str(records))
    assert res.code == 0, res.stderr
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", res.stdout + res.stderr), repr(res.stdout)


def test_terminal_text_strips_sequences():
    from analyzer.core.safe import rich_text, terminal_text
    assert terminal_text("a\x1b]0;title\x07b\x1b[2Jc\x9b1md\x01e\tf\ng") == "abcde\tf\ng"
    assert rich_text("[/bold]x\x1b[1m") == "\\[/bold]x"


# The bidirectional embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069): printed,
# they reorder what the reader sees (a path that reads as another, "Trojan Source").
BIDI = "".join(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))


def test_terminal_text_strips_bidi_controls(base_line, tmp_path):
    from analyzer.core.safe import rich_text, terminal_text
    assert terminal_text("src/\u202eevil\u202c.rs" + BIDI) == "src/evil.rs"
    assert rich_text("a" + BIDI + "b") == "ab"
    line = tampered(base_line, 1, errorMessage="conv: unsupported dtype {d:?}" + BIDI,
                    filePath="crates/burn-x/src/\u202elib.rs", a_crate="burn-x\u2067")
    res = run_cli("lookup", "conv: unsupported dtype F16" + BIDI, "--records",
                  str(write_records(tmp_path / "r.jsonl", [line])))
    assert res.code == 0, res.stderr
    assert "lib.rs" in res.stdout and not set(BIDI) & set(res.stdout + res.stderr), repr(res.stdout)


def test_coverage_table_shows_markup_in_dtype_names_as_text(base_line, tmp_path):
    line = tampered(base_line, 1, a_rejected=["[/bold]", "I8[red]"], a_handled=["F32"])
    records = write_records(tmp_path / "r.jsonl", [line])
    res = run_cli("coverage", "--records", str(records), "--format", "table")
    assert res.code == 0, res.stderr
    assert "[/bold]" in res.stdout


# --- 7. pages never overwrite each other --------------------------------------------------------

@pytest.mark.parametrize("slugs", [["index", "conv-1"], ["same", "same"], ["X!", "0000000000000001"],
                                   ["-index", "b"], ["INDEX", "b"]])
@pytest.mark.parametrize("fmt", ["md", "html"])
def test_every_record_gets_its_own_page(base_line, tmp_path, slugs, fmt):
    lines = []
    for i, s in enumerate(slugs, start=1):
        x = tampered(base_line, i, errorMessage=f"m{i}")
        x["record"]["slug"] = s
        lines.append(x)
    records = write_records(tmp_path / "r.jsonl", lines)
    out = tmp_path / "p"
    res = run_cli("render", str(records), "--format", fmt, "--out", str(out))
    assert res.code == 0, res.stderr
    pages = [p for p in out.iterdir() if p.suffix == f".{fmt}" and p.name != f"index.{fmt}"]
    assert len(pages) == len(lines), sorted(p.name for p in out.iterdir())
    bodies = "".join(p.read_text() for p in pages)
    for i in range(1, len(lines) + 1):
        assert f"m{i}" in bodies
    index = (out / f"index.{fmt}").read_text()
    assert "Errors users can hit" in index


def test_duplicate_ids_are_refused_by_render(base_line, tmp_path):
    records = write_records(tmp_path / "r.jsonl", [tampered(base_line, 1), tampered(base_line, 1)])
    res = run_cli("render", str(records), "--out", str(tmp_path / "p"))
    assert res.code == 2 and "0000000000000001" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "p").exists() or not any((tmp_path / "p").iterdir())


def test_a_very_long_slug_gets_a_short_file_name(base_line, tmp_path):
    line = tampered(base_line, 1)
    line["record"]["slug"] = "a" * 300
    records = write_records(tmp_path / "r.jsonl", [line])
    res = run_cli("render", str(records), "--out", str(tmp_path / "p"))
    assert res.code == 0, res.stderr
    # the page, its JSON, the index (and the list of what render wrote)
    names = sorted(p.name for p in (tmp_path / "p").iterdir())
    assert len(names) == 3 and all(len(n) < 100 for n in names), names


# --- 5 and 10. parsing crafted files: linear, with a budget, and never a crash --------------------

class CountingBytes(bytes):
    """Bytes that count how many bytes their find/rfind/count calls scan."""

    scanned = 0

    def _span(self, args) -> int:
        start = args[1] if len(args) > 1 and args[1] is not None else 0
        end = args[2] if len(args) > 2 and args[2] is not None else len(self)
        start = start + len(self) if start < 0 else start
        end = end + len(self) if end < 0 else end
        return max(0, min(end, len(self)) - max(start, 0))

    def find(self, *args):
        CountingBytes.scanned += self._span(args)
        return bytes.find(self, *args)

    def rfind(self, *args):
        CountingBytes.scanned += self._span(args)
        return bytes.rfind(self, *args)

    def count(self, *args):
        CountingBytes.scanned += self._span(args)
        return bytes.count(self, *args)


def test_enum_items_scan_each_byte_a_bounded_number_of_times():
    """`enum A ` repeated on one line: each `enum` used to search to the end of the file for its
    `{` and back to the line start for comments (quadratic)."""
    from analyzer.facts.parse import parse_file
    src = CountingBytes(b"enum A " * 20_000)
    CountingBytes.scanned = 0
    facts = parse_file(src, BURN)
    assert facts.enums == [] and not facts.skipped
    # A constant per byte: the prefilter's search for each word a call starts with (the four
    # panic-family words, `assert`, `expect`) scans the file once, the enum reading the rest.
    assert CountingBytes.scanned <= 12 * len(src), CountingBytes.scanned


def test_planned_ranges_on_one_long_line_scan_each_byte_a_bounded_number_of_times():
    """Items holding a call alternate with items that hold none, all on one line: the rows and
    columns of each range are counted on from the last one, never again from the line start."""
    from analyzer.facts import parse, regions
    src = b'fn a() { panic!("a") } fn b() { c() } ' * 5000
    plan = regions.plan(src, [i for i in range(len(src)) if src.startswith(b"panic", i)])
    assert len(plan.ranges) == 5000
    counting = CountingBytes(src)
    CountingBytes.scanned = 0
    points = parse._points(counting, plan.ranges)
    assert CountingBytes.scanned <= 4 * len(src), CountingBytes.scanned
    assert points[-1].start_point == (0, plan.ranges[-1][0])
    assert len(parse.parse_file(src, BURN).sites) == 5000


class ScanningBytes(bytes):
    """Bytes that count how far their find calls read: up to the match, or the end when none."""

    scanned = 0

    def find(self, sub, start=0, end=None):
        end = len(self) if end is None else end
        hit = bytes.find(self, sub, start, end)
        ScanningBytes.scanned += (hit + len(sub) if hit >= 0 else end) - start
        return hit


def test_the_brace_lexer_reads_each_raw_string_and_comment_once():
    from analyzer.facts import regions
    src = ScanningBytes((b'fn f() { let s = r#"} \" {"#; } // } r#" {\n' + b"/* { */\n") * 20_000)
    ScanningBytes.scanned = 0
    lexed = regions.braces(src)
    assert lexed is not None and len(lexed.ends) == 20_000
    assert ScanningBytes.scanned <= 2 * len(src), ScanningBytes.scanned


def test_enum_items_are_still_found_after_comments_and_strings():
    from analyzer.facts.parse import parse_file
    src = (b'// enum Fake { A }\nconst S: &str = "enum Quoted { B }";\n'
           b'pub enum Real {\n    X,\n    Y,\n}\nfn f() { let s = "\\""; }\nenum Second { Z }\n')
    facts = parse_file(src, BURN)
    assert [(e.name, [v for v, _ in e.variants], e.line) for e in facts.enums] == [
        ("Real", ["X", "Y"], 3), ("Second", ["Z"], 8)]


def test_query_cursors_per_file_are_bounded_by_its_size(monkeypatch):
    """Comment lines naming panic!/todo!: one range-limited query cursor per word steps over every
    earlier sibling (quadratic on a flat file); words close together share one cursor."""
    from analyzer.facts import parse, syntax
    made = []
    real = syntax.QueryCursor

    class Counting:
        def __init__(self, q):
            made.append(1)
            self.cursor = real(q)

        def set_byte_range(self, a, b):
            self.cursor.set_byte_range(a, b)

        def matches(self, root):
            return self.cursor.matches(root)

    monkeypatch.setattr(syntax, "QueryCursor", Counting)
    src = b"// panic! todo! panic!\n" * 5000
    facts = parse.parse_file(src, BURN)
    assert facts.sites == []
    assert len(made) <= 2 * (len(src) // syntax._WINDOW_GAP + 1), len(made)


def _arms_match(n: int) -> bytes:
    arms = "".join(f'        E::V{i} => panic!("v{i}"),\n' for i in range(n))
    return f"fn f(x: E) {{\n    match x {{\n{arms}    }}\n}}\n".encode()


def test_the_arms_of_a_match_are_read_once(monkeypatch):
    from analyzer.facts import parse, placement
    calls = []
    real = placement._arm_facts
    monkeypatch.setattr(placement, "_arm_facts", lambda block, tx: calls.append(1) or real(block, tx))
    facts = parse.parse_file(_arms_match(40), BURN)
    assert len(facts.sites) == 40 and len(calls) == 1
    assert [s.arm_index for s in facts.sites] == list(range(40))
    assert all(len(s.arms) == 40 for s in facts.sites)


def test_columns_on_one_long_line():
    from analyzer.facts.parse import parse_file
    src = b"fn f(x: E) { match x { " + b"E::A => panic!(\"a\"), " * 3 + b"} }\n"
    cols = [s.column for s in parse_file(src, BURN).sites]
    starts = [i + 1 for i in range(len(src)) if src.startswith(b"panic!", i)]
    assert cols == starts


@pytest.fixture
def crafted_repo(tmp_path):
    repo = GitRepo(tmp_path / "crafted")
    from conftest import DTYPE_RS
    repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    repo.crate("burn-x", {"src/lib.rs": SITE})
    return repo


def test_files_past_the_budget_are_reported_and_skipped(crafted_repo, tmp_path):
    from analyzer.facts import parse
    crafted_repo.write_bytes("crates/burn-x/src/arms.rs", _arms_match(parse.MAX_ARM_FACTS // 400 + 50))
    crafted_repo.commit()
    out = tmp_path / "o"
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["path"] for s in manifest["skipped"]] == ["crates/burn-x/src/arms.rs"]
    assert "arm facts" in manifest["skipped"][0]["reason"]
    assert manifest["records"] == 1  # the other file was read as usual
    assert "skipped" in res.stderr


def test_a_pattern_nested_too_deep_is_reported_and_skipped(crafted_repo, tmp_path):
    deep = "(" * 400 + "x" + ")" * 400
    crafted_repo.write("crates/burn-x/src/deep.rs",
                       f'fn g(v: T) {{\n    match v {{\n        {deep} => 1,\n        _ => panic!("g: no"),\n    }};\n}}\n')
    crafted_repo.commit()
    out = tmp_path / "o"
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["skipped"] == [{"path": "crates/burn-x/src/deep.rs", "reason": "nested too deep to read"}]
    assert manifest["records"] == 1


# --- 6. parser workers never outlive the run -----------------------------------------------------

def _alive(pid: int) -> bool:
    import os
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for a parent that is gone counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_workers_exit_when_the_run_is_killed(crafted_repo, tmp_path, how):
    import os
    import signal
    import subprocess
    import time

    from conftest import _command

    from analyzer.pipeline.extract import PARALLEL_MIN_BYTES
    from analyzer.pipeline.workers import HOLD_AFTER_POOL

    body = SITE * (10_000 // len(SITE) + 1)
    for i in range(PARALLEL_MIN_BYTES // len(body) + 5):  # enough bytes to use worker processes
        crafted_repo.write(f"crates/burn-x/src/m{i}.rs", body.replace("conv:", f"m{i}:"))
    crafted_repo.commit()
    ready = tmp_path / "workers"
    proc = subprocess.Popen([*_command(), "extract", "--repo", str(crafted_repo.path), "--sha", "HEAD",
                             "--out", str(tmp_path / "o"), "--no-cache", "--jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, HOLD_AFTER_POOL: str(ready)})
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():  # the run says when its workers are up
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the workers never started"
            time.sleep(0.05)
        workers = [int(p) for p in ready.read_text().split()]
        assert len(workers) == 2 and all(_alive(p) for p in workers)
        proc.send_signal(getattr(signal, how))
        proc.wait(timeout=10)
        # The pipes the workers inherited close: reading them to the end returns.
        proc.communicate(timeout=10)
        deadline = time.monotonic() + 60  # a wait, not a bound: a loaded machine reaps late
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in workers)
    finally:
        for p in [proc.pid, *workers]:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()


def test_a_clash_left_after_disambiguation_fails_naming_it(base_line, tmp_path):
    lines = []
    for i, s in enumerate(["same", "same", "same-0000000000000001"], start=1):
        x = tampered(base_line, i)
        x["record"]["slug"] = s
        lines.append(x)
    records = write_records(tmp_path / "r.jsonl", lines)
    res = run_cli("render", str(records), "--out", str(tmp_path / "p"))
    assert res.code == 2 and "Traceback" not in res.stderr
    assert "same-0000000000000001" in res.stderr and "0000000000000003" in res.stderr
    assert not (tmp_path / "p").exists() or not any((tmp_path / "p").iterdir())


# --- 8. the tool cleans up what it creates -------------------------------------------------------

def test_no_cache_with_a_url_leaves_no_clone_behind(crafted_repo, tmp_path):
    import os
    crafted_repo.commit()
    temp = tmp_path / "temp"
    temp.mkdir()
    res = run_cli("extract", "--repo", f"file://{crafted_repo.path}", "--sha", "HEAD", "--no-cache",
                  "--out", str(tmp_path / "o"), env={"TMPDIR": str(temp)})
    assert res.code == 0, res.stderr
    assert os.listdir(temp) == []


def test_temporary_files_of_a_killed_writer_are_removed(crafted_repo, tmp_path):
    import os
    import subprocess
    crafted_repo.commit()
    out = tmp_path / "o"
    out.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = out / f".records.jsonl.{dead.pid}.a1b2c3.tmp"
    stale.write_text("half written")
    live = out / f".records.jsonl.{os.getpid()}.d4e5f6.tmp"  # a writer still at work
    live.write_text("being written")
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    assert not stale.exists() and live.exists()
    assert sorted(p.name for p in out.iterdir()) == sorted([live.name, "manifest.json", "records.jsonl"])


def test_at_most_one_corrupt_cache_copy_is_kept(crafted_repo, tmp_path):
    crafted_repo.commit()
    cache = tmp_path / "cache"
    cache.mkdir()
    for stamp in ("20200101000000", "20200102000000"):  # copies set aside by earlier runs
        (cache / f"facts.sqlite3.corrupt-{stamp}").write_bytes(b"old copy")
    (cache / "facts.sqlite3").write_bytes(b"not a database" * 100)
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "o"),
                  env={"BURN_ERRORS_CACHE": str(cache)})
    assert res.code == 0, res.stderr
    copies = sorted(p.name for p in cache.iterdir() if ".corrupt-" in p.name)
    assert len(copies) == 1 and not copies[0].endswith(("20200101000000", "20200102000000")), copies
    assert (cache / copies[0]).read_bytes() == b"not a database" * 100


# --- 10 and 11. one accurate line and exit 2, or it works ------------------------------------------

def _one_line_error(res, *needles: str) -> str:
    assert res.code == 2, (res.code, res.stdout, res.stderr)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("burn-errors: error: "), res.stderr
    assert "internal error" not in lines[0] and "Traceback" not in res.stderr, lines[0]
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"record": ' + "9" * 5000 + "}"])
def test_readers_of_a_hostile_records_file_fail_in_one_line(tmp_path, text):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text + "\n")
    for args in (["lookup", "x", "--records", str(bad)], ["render", str(bad), "--out", str(tmp_path / "p")],
                 ["diff", str(bad), str(bad)], ["annotate", "export", str(bad), "--out", str(tmp_path / "a")],
                 ["coverage", "--records", str(bad)]):
        _one_line_error(run_cli(*args), str(bad))


def test_a_file_name_that_is_not_utf8_is_skipped_and_listed(crafted_repo, tmp_path):
    import os
    name = os.fsdecode(b"caf\xe9.rs")  # the bytes as the file system has them
    (crafted_repo.path / "crates" / "burn-x" / "src" / name).write_text(SITE)
    crafted_repo.commit()
    out = tmp_path / "o"
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["skipped"] == [{"path": "crates/burn-x/src/caf\\xe9.rs", "reason": "its file name is not UTF-8"}]
    assert manifest["records"] == 1


def test_a_sha256_repository_is_refused_in_one_line(tmp_path):
    import subprocess
    repo = tmp_path / "s"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", "-b", "main", str(repo)], check=True)
    (repo / "lib.rs").write_text(SITE)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=a@b.invalid", "-c", "user.name=n", "commit", "-qm", "x"],
                   check=True)
    res = run_cli("extract", "--repo", str(repo), "--sha", "HEAD", "--out", str(tmp_path / "o"))
    _one_line_error(res, "SHA-256")


def test_an_origin_url_with_spaces_falls_back_to_the_default_name(crafted_repo, tmp_path):
    crafted_repo.git("remote", "set-url", "origin", "https://github.com/own er/na me.git")
    crafted_repo.commit()
    out = tmp_path / "o"
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    (line,) = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert " " not in line["record"]["repo"]


def test_a_repo_name_with_spaces_is_refused(crafted_repo, tmp_path):
    crafted_repo.commit()
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--repo-name", "a b/c", "--out", str(tmp_path / "o"))
    _one_line_error(res, "--repo-name")


@pytest.mark.parametrize("which", ["repo", "out", "records"])
def test_a_name_too_long_is_one_line(crafted_repo, tmp_path, which):
    crafted_repo.commit()
    long = str(tmp_path / ("n" * 300))
    if which == "repo":
        res = run_cli("extract", "--repo", long, "--out", str(tmp_path / "o"))
    elif which == "out":
        res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", long)
    else:
        res = run_cli("lookup", "x", "--records", long)
    _one_line_error(res, "too long")


@pytest.mark.parametrize("spec", ["ext::sh -c touch% pwned", "ext://sh", "fd::3"])
def test_remote_transport_programs_are_refused_in_one_line(tmp_path, spec):
    res = run_cli("extract", "--repo", spec, "--out", str(tmp_path / "o"), cwd=tmp_path)
    _one_line_error(res, "--repo")
    assert not (tmp_path / "pwned").exists()


def test_a_cache_folder_that_cannot_be_used_is_one_line(crafted_repo, tmp_path):
    crafted_repo.commit()
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache folder goes")
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "o"),
                  env={"BURN_ERRORS_CACHE": str(blocker / "cache")})
    _one_line_error(res, "cache folder")


def test_a_repository_git_refuses_for_its_owner_is_named_so(crafted_repo, tmp_path):
    crafted_repo.commit()
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "o"),
                  env={"GIT_TEST_ASSUME_DIFFERENT_OWNER": "1"})
    _one_line_error(res, "dubious ownership", "safe.directory")


def test_answers_folder_with_a_fifo_and_a_link_to_a_device(base_line, tmp_path):
    import os
    records = write_records(tmp_path / "r.jsonl", [tampered(base_line, 1)])
    answers = tmp_path / "answers"
    answers.mkdir()
    os.mkfifo(answers / "0000000000000002.json")
    os.symlink("/dev/zero", answers / "0000000000000003.json")
    (answers / "0000000000000001.json").write_text(json.dumps({"id": "0000000000000001", "documentation": "Docs."}))
    res = run_cli("annotate", "import", str(records), str(answers), "--out", str(tmp_path / "new.jsonl"))
    assert res.code == 0, res.stderr
    assert "Imported 1 answer" in res.stdout
    res = run_cli("annotate", "import", str(records), str(answers / "0000000000000003.json"),
                  "--out", str(tmp_path / "new2.jsonl"))
    assert res.code == 2 and "not a regular file" in res.stderr
    res = run_cli("lookup", "x", "--records", str(answers / "0000000000000003.json"))
    _one_line_error(res, "device")


# --- What held up: keep it so ------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["--sha", "--output=OUT/pwned"],
    ["--sha", "-n1"],
    ["--repo", "--upload-pack=touch OUT/pwned"],
    ["--repo", "-c core.sshCommand=touch%20OUT/pwned"],
])
def test_git_arguments_cannot_be_injected(crafted_repo, tmp_path, args):
    crafted_repo.commit()
    args = [a.replace("OUT", str(tmp_path)) for a in args]
    base = ["--repo", str(crafted_repo.path)] if args[0] == "--sha" else []
    res = run_cli("extract", *base, *args, "--out", str(tmp_path / "o"), cwd=tmp_path)
    _one_line_error(res)
    assert not (tmp_path / "pwned").exists()


def test_repository_config_never_runs_commands(crafted_repo, tmp_path):
    """fsmonitor, pager, gpg, smudge filters and hooks of an untrusted clone: none runs."""
    pwned = tmp_path / "pwned"
    crafted_repo.write(".gitattributes", "*.rs filter=evil\n")
    crafted_repo.commit()
    for key, value in [("core.fsmonitor", f"touch {pwned}"), ("core.pager", f"touch {pwned}"),
                       ("gpg.program", f"touch {pwned}"), ("log.showSignature", "true"),
                       ("filter.evil.smudge", f"touch {pwned}"), ("filter.evil.clean", f"touch {pwned}"),
                       ("diff.external", f"touch {pwned}")]:
        crafted_repo.git("config", key, value)
    hook = crafted_repo.path / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {pwned}\n")
    hook.chmod(0o755)
    out = tmp_path / "o"
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    res = run_cli("extract", "--repo", f"file://{crafted_repo.path}", "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    assert not pwned.exists()


def test_rust_symlinks_are_read_as_their_link_text(crafted_repo, tmp_path):
    import os
    secret = tmp_path / "secret.rs"
    secret.write_text('fn s(x: T) { match x.dtype() { DType::F32 => 1, d => panic!("secret: {d:?}"), }; }\n')
    os.symlink(secret, crafted_repo.path / "crates" / "burn-x" / "src" / "link.rs")
    crafted_repo.commit()
    out = tmp_path / "o"
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    assert "secret" not in (out / "records.jsonl").read_text()


HOSTILE_RUST = {
    "nul": SITE.replace("pub fn", "\0\0pub fn"),
    "crlf": SITE.replace("\n", "\r\n"),
    "bom": "\ufeff" + SITE,
    "unterminated": SITE + '\nfn g() { let s = "never closed;\n',
    "deep": SITE + "fn d() " + "{" * 10_000 + "}" * 10_000 + "\n",
    "deep-unclosed": SITE + "fn d() " + "(" * 10_000 + "\n",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_RUST))
def test_hostile_rust_still_gives_its_site(crafted_repo, tmp_path, kind):
    crafted_repo.write("crates/burn-x/src/lib.rs", HOSTILE_RUST[kind], dedent=False)
    crafted_repo.commit()
    out = tmp_path / "o"
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    msgs = [json.loads(x)["record"]["errorMessage"] for x in (out / "records.jsonl").read_text().splitlines()]
    assert msgs == ["conv: unsupported dtype {d:?}"]


def test_a_file_past_the_size_budget_is_listed_not_read(crafted_repo, tmp_path):
    from analyzer.facts.parse import MAX_FILE_BYTES
    # Twice the budget: the string literals in it are not code, the rest is past the budget.
    crafted_repo.write("crates/burn-x/src/huge.rs", SITE * (2 * MAX_FILE_BYTES // len(SITE)), dedent=False)
    crafted_repo.commit()
    out = tmp_path / "o"
    res = run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["path"] for s in manifest["skipped"]] == ["crates/burn-x/src/huge.rs"]
    assert manifest["records"] == 1


def test_a_full_disk_is_one_line_and_earlier_outputs_stay(crafted_repo, tmp_path):
    """RLIMIT_FSIZE makes writes past a size fail as a full disk would (EFBIG)."""
    import resource
    import signal
    import subprocess

    from conftest import _command
    crafted_repo.commit()
    out = tmp_path / "o"
    assert run_cli("extract", "--repo", str(crafted_repo.path), "--sha", "HEAD", "--out", str(out)).code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

    proc = subprocess.run([*_command(), "extract", "--repo", str(crafted_repo.path), "--sha", "HEAD",
                           "--out", str(out), "--no-cache"], capture_output=True, text=True, preexec_fn=small_files,
                          check=False)
    from conftest import Result
    _one_line_error(Result(proc.returncode, proc.stdout, proc.stderr), "cannot write")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
