"""Hostile input read by every command: bytes that are not UTF-8 anywhere in the facts, answer
files and records that share an id, paths git quotes or spaces, texts built to break markdown or
a reader's terminal, oversized outputs, a cache of another schema."""

from __future__ import annotations

import json

import pytest
from conftest import DTYPE_RS, ONE_SITE_RS, GitRepo, one_site_repo, run_cli


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    return one_site_repo(tmp_path / "repo")


# --- bytes that are not UTF-8 anywhere in the facts ---------------------------------------------

NOT_UTF8 = {
    "enum field type": b"pub enum Kind {\n    F32,\n    Q(Sch\xffeme),\n    S { s: T\xfe },\n}\n",
    "enum name": b"pub enum K\xffind {\n    A\xff(B\xff),\n}\n",
    "pattern type": (b"pub fn g(x: Tensor) {\n    match x.dtype() {\n        Fo\xffo::Bar(_) => 1,\n"
                     b"        d => panic!(\"g: unsupported dtype {d:?}\"),\n    };\n}\n"),
    "impl and fn names": (b"impl Ops\xff for B\xff {\n    fn f\xff(x: Tensor) {\n        match x.dtype() {\n"
                          b"            DType::F32 => 1,\n            d => panic!(\"f: unsupported {d:?}\"),\n"
                          b"        };\n    }\n}\n"),
}


@pytest.mark.parametrize("where", sorted(NOT_UTF8))
@pytest.mark.parametrize("command", ["extract", "coverage"])
def test_bytes_that_are_not_utf8_are_noted_never_fatal(repo, tmp_path, where, command):
    repo.write_bytes("crates/burn-x/src/bad.rs", NOT_UTF8[where])
    repo.commit()
    if command == "extract":
        res = run_cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(tmp_path / "o"))
        assert res.code == 0, res.stderr
        manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
        assert manifest["filesNotUtf8"] == ["crates/burn-x/src/bad.rs"]
        assert manifest["records"] >= 1  # the other file's site is still there
    else:
        res = run_cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", "--format", "json")
        assert res.code == 0, res.stderr


# --- git's batch answers for any path ---------------------------------------------------------------

def test_a_missing_path_shaped_like_a_batch_header_is_missing(repo):
    """`git cat-file --batch` echoes a missing name back (`<sha>:a blob 99999 z.rs missing`): the
    name is a path anyone may write, never read as an object's header."""
    from analyzer.source.repository import open_repository
    repo.write("crates/burn-x/src/a blob 99999 z.rs", "pub fn f() {}\n", dedent=False)
    repo.write("crates/burn-x/src/b.rs", "pub fn b() {}\n", dedent=False)
    sha = repo.commit()
    git = open_repository(str(repo.path), None, "tracel-ai/burn")
    gone = "crates/burn-x/src/gone blob 99999 z.rs"
    got = git.read_files(sha, [gone, "crates/burn-x/src/a blob 99999 z.rs", "crates/burn-x/src", gone,
                               "crates/burn-x/src/b.rs"])
    assert got == {"crates/burn-x/src/a blob 99999 z.rs": b"pub fn f() {}\n", "crates/burn-x/src/b.rs": b"pub fn b() {}\n"}



# --- Markdown links nothing its writer did not link -------------------------------------------------

import re  # noqa: E402

LINKING = ["@octocat", "x#1", "www.evil.example", "GH-7"]
_LINKED = re.compile(r"@(?=[A-Za-z0-9])|#(?=\d)|www\.|GH-\d|https?://(?!github\.com/tracel-ai/burn/)")


def outside_code_and_links(md: str) -> str:
    """The Markdown text GitHub scans for mentions and references: not code spans, not link targets."""
    md = re.sub(r"(`+).*?\1", "", md)
    return re.sub(r"\]\([^)]*\)", "]", md).replace("&#8203;", "\u200b")  # the entity as the reader sees it


def linking_repo(tmp_path) -> GitRepo:
    r = GitRepo(tmp_path / "linking")
    r.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    r.commit("base")
    r.git("tag", "v0.1.0")
    for name in LINKING:
        r.crate(name, {"src/lib.rs": ONE_SITE_RS.replace("conv", f"op{LINKING.index(name)}")})
    r.commit("head")
    r.git("tag", "v0.2.0")
    return r


def test_markdown_sinks_link_no_mention_reference_or_address(tmp_path):
    r = linking_repo(tmp_path)
    docs = {
        "diff": run_cli("diff", "v0.1.0", "v0.2.0", "--repo", str(r.path), "--format", "markdown"),
        "coverage": run_cli("coverage", "--repo", str(r.path), "--sha", "v0.2.0", "--format", "markdown"),
        "history": run_cli("history", "--repo", str(r.path), "--revs", "v0.1.0", "--revs", "v0.2.0",
                           "--format", "markdown"),
    }
    for which, res in docs.items():
        assert res.code == 0, res.stderr
        text = outside_code_and_links(res.stdout)
        assert any("octocat" in line for line in text.splitlines()), which  # the names are shown
        assert not _LINKED.search(text), (which, _LINKED.search(text))


def test_cells_and_prose_break_what_github_links():
    from analyzer.core.safe import md_cell, md_inline
    for text in ("@octocat", "fixes #12", "o/r#3", "gh-4", "www.x.org", "https://evil.example", "a@b.org"):
        assert not _LINKED.search(outside_code_and_links(md_cell(text))), text
        assert not _LINKED.search(outside_code_and_links(md_inline(text))), text
    assert md_cell("max_pool 2") == "max_pool 2"  # plain text stays as written


# --- what a person reads holds no control character or bidirectional override ---------------------

HIDDEN = "\u202e\u2066\x07\x1b"


def hiding_repo(tmp_path) -> GitRepo:
    r = GitRepo(tmp_path / "hiding")
    r.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    r.commit("base")
    r.crate("burn-x", {"src/lib.rs": ONE_SITE_RS.replace("conv: unsupported", "conv\\u{202e}: \\u{2066}un\\u{7}supported\\u{1b}")})
    r.commit("head")
    return r


def test_documents_a_person_reads_hold_no_control_or_bidi_character(tmp_path):
    r = hiding_repo(tmp_path)
    out = tmp_path / "o"
    assert run_cli("extract", "--repo", str(r.path), "--sha", "HEAD", "--out", str(out)).code == 0
    line = json.loads((out / "records.jsonl").read_text().splitlines()[0])
    assert "\u202e" in line["record"]["errorMessage"]  # records keep the message as the code says it
    texts = {}
    for fmt in ("sarif", "markdown"):
        res = run_cli("diff", "HEAD~1", "HEAD", "--repo", str(r.path), "--format", fmt)
        assert res.code == 0, res.stderr
        texts[f"diff {fmt}"] = json.dumps(json.loads(res.stdout), ensure_ascii=False) if fmt == "sarif" else res.stdout
    for fmt in ("html", "markdown"):
        res = run_cli("render", str(out / "records.jsonl"), "--format", fmt, "--out", str(tmp_path / fmt))
        assert res.code == 0, res.stderr
        for page in (tmp_path / fmt).iterdir():
            if page.suffix != ".json":
                texts[f"render {page.name}"] = page.read_text()
    res = run_cli("coverage", "--repo", str(r.path), "--sha", "HEAD", "--format", "html", "--out", str(tmp_path / "c.html"))
    assert res.code == 0, res.stderr
    texts["coverage html"] = (tmp_path / "c.html").read_text()
    assert any("unsupported" in t for t in texts.values())
    for which, text in texts.items():
        assert not any(ch in text for ch in HIDDEN), which
    # SARIF's escapes count too: json.loads gave back every value.
    assert "\\u0007" not in run_cli("diff", "HEAD~1", "HEAD", "--repo", str(r.path), "--format", "sarif").stdout


# --- the pull-request comment stays under GitHub's limit, cell by cell ------------------------------

def test_the_comment_is_bounded_by_cell_as_well_as_by_row(tmp_path):
    from conftest import one_record
    base = one_record(tmp_path / "one")
    line = json.loads(base.read_text())
    huge = "f" * 70_000
    heads = []
    for i in range(60):  # more rows than one comment shows, each with cells far past any limit
        h = json.loads(json.dumps(line))
        h["record"]["id"] = f"{i + 1:016x}"
        h["record"]["slug"] = f"x-{i + 1:06x}"
        h["record"]["filePath"] = "crates/burn-x/src/" + "d/" * 10_000 + f"{i}.rs"
        h["record"]["githubUrl"] = "https://github.com/tracel-ai/burn/blob/" + "a" * 70_000
        h["record"]["errorMessage"] = h["record"]["messagePattern"] = "m" * 70_000
        h["analysis"]["function"] = huge
        h["analysis"]["crate"] = "c" * 70_000
        h["analysis"]["rejected"] = ["R" * 70_000]
        heads.append(h)
    head = tmp_path / "head.jsonl"
    head.write_text("".join(json.dumps(h) + "\n" for h in heads))
    empty = tmp_path / "base.jsonl"
    empty.write_text(base.read_text())
    res = run_cli("diff", str(empty), str(head), "--format", "markdown")
    assert res.code == 0, res.stderr
    assert len(res.stdout) <= 65_536
    assert "Added (60)" in res.stdout and "more" in res.stdout


# --- records bounded by the tree's size ---------------------------------------------------------------

def test_records_many_times_the_rust_read_are_refused_in_one_line(repo, tmp_path, monkeypatch):
    from analyzer.pipeline import extract as ex
    monkeypatch.setattr(ex, "OUTPUT_FLOOR_BYTES", 0)  # the budget relative to the input alone
    out = tmp_path / "o"
    assert run_cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out)).code == 0  # plain code fits
    pad = "/" * 2_000
    arms = "".join(f'        DType::F{i} => panic!("{i}: unsupported"), //{pad}\n' for i in range(60))
    repo.write("crates/burn-x/src/dense.rs", f"pub fn f(x: Tensor) {{\n    match x.dtype() {{\n{arms}    }};\n}}\n",
               dedent=False)
    repo.commit()
    before = (out / "records.jsonl").read_bytes()
    res = run_cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 2 and "more than 16 times the Rust read" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert (out / "records.jsonl").read_bytes() == before  # nothing written
