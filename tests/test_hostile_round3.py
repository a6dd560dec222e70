"""Hostile input read by every command: bytes that are not UTF-8 anywhere in the facts, answer
files and records that share an id, paths git quotes or spaces, texts built to break markdown or
a reader's terminal, oversized outputs, a cache of another schema."""

from __future__ import annotations

import json

import pytest
from conftest import DTYPE_RS, ONE_SITE_RS, GitRepo, run_cli


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    r = GitRepo(tmp_path / "repo")
    r.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    r.crate("burn-x", {"src/lib.rs": ONE_SITE_RS})
    r.commit("base")
    return r


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

