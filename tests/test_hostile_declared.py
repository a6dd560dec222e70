"""A pull request cannot hide a new refusal where the tree alone does not show it: code a build
computes the path of (`include!(concat!(env!("OUT_DIR"), ..))`), a git submodule, a library module
that only looks like test code by its path, a macro or helper function that panics for its
callers, `panic_any`."""

from __future__ import annotations

import json

import pytest
from conftest import extract_head, GitRepo, one_site_repo, run_cli

DISPATCH = ('use burn_std::DType;\n\npub fn {name}(x: Tensor) {{\n    match x.dtype() {{\n'
            '        DType::F32 => 1,\n        d => panic!("{name}: unsupported dtype {{d:?}}"),\n    }};\n}}\n')


def dispatch(name: str) -> str:
    return DISPATCH.format(name=name)


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    return one_site_repo(tmp_path / "repo")


extract = extract_head


def gate(repo: GitRepo) -> tuple[int, dict]:
    res = run_cli("diff", "HEAD~1", "HEAD", "--repo", str(repo.path), "--format", "json", "--fail-on", "added")
    return res.code, json.loads(res.stdout)


# --- an include whose file the build computes ----------------------------------------------------

@pytest.mark.parametrize("call", ['include!(concat!(env!("OUT_DIR"), "/generated.rs"));',
                                  'include! { /* generated */ concat!(env!("OUT_DIR"), "/g.rs") }',
                                  "include!(generated_path!());"])
def test_a_computed_include_marks_its_file_as_read_in_part(repo, tmp_path, call):
    repo.write("crates/burn-x/src/gen.rs", f"pub mod generated {{\n    {call}\n}}\n", dedent=False)
    repo.commit()
    _, manifest = extract(repo, tmp_path / "o")
    assert [e["path"] for e in manifest["partlyRead"]] == ["crates/burn-x/src/gen.rs"]
    assert "computed when the crate builds" in manifest["partlyRead"][0]["reason"]
    code, doc = gate(repo)
    assert code == 1 and doc["failed"] == ["unread"] and doc["quiet"] is False


@pytest.mark.parametrize("text", ['include!("more.rs");\n', 'include!(r"more.rs");\n',
                                  '// include!(concat!(env!("OUT_DIR"), "/g.rs"));\n',
                                  'const NOTE: &str = "include!(concat!(a, b))";\n'])
def test_an_include_of_a_named_file_or_one_in_a_comment_is_read(repo, tmp_path, text):
    repo.write("crates/burn-x/src/more.rs", "pub fn more() {}\n", dedent=False)
    repo.write("crates/burn-x/src/named.rs", text, dedent=False)
    repo.commit()
    _, manifest = extract(repo, tmp_path / "o")
    assert manifest["partlyRead"] == [] and manifest["skipped"] == []


def test_a_cfg_attr_path_to_a_file_that_is_not_rust_is_listed(repo, tmp_path):
    repo.write("crates/burn-x/src/ops.txt", dispatch("hidden"), dedent=False)
    repo.write("crates/burn-x/src/pull.rs", '#[cfg_attr(feature = "fast", path = "ops.txt")]\nmod ops;\n',
               dedent=False)
    repo.commit()
    _, manifest = extract(repo, tmp_path / "o")
    assert [e["path"] for e in manifest["skipped"]] == ["crates/burn-x/src/ops.txt"]


# --- git submodules ---------------------------------------------------------------------------------

def test_a_git_submodule_is_listed_as_skipped_and_fails_the_check(repo, tmp_path):
    other = GitRepo(tmp_path / "other")
    other.write("src/lib.rs", dispatch("vendored"), dedent=False)
    commit = other.commit()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{commit},crates/burn-x/vendor")
    repo.git("commit", "-q", "-m", "vendor")
    _, manifest = extract(repo, tmp_path / "o")
    assert [e["path"] for e in manifest["skipped"]] == ["crates/burn-x/vendor"]
    assert "submodule" in manifest["skipped"][0]["reason"]
    code, doc = gate(repo)
    assert code == 1 and doc["failed"] == ["unread"]
    assert [(e["path"], e["whole"]) for e in doc["unread"]] == [("crates/burn-x/vendor", True)]
    md = run_cli("diff", "HEAD~1", "HEAD", "--repo", str(repo.path), "--format", "markdown").stdout
    assert "`crates/burn-x/vendor`" in md and "submodule" in md


def test_an_unread_file_standing_unchanged_since_the_base_lists_but_does_not_fail(repo):
    """burn has computed includes at every release: a pull request that changes nothing in their
    crate is not failed by them (they hide what the base hid), one that changes their crate is."""
    repo.crate("burn-gen", {"src/lib.rs": 'include!(concat!(env!("OUT_DIR"), "/g.rs"));\n',
                            "build.rs": "fn main() {}\n"})
    repo.commit()
    repo.write("crates/burn-x/src/other.rs", "pub fn other() {}\n", dedent=False)
    repo.commit()
    code, doc = gate(repo)
    assert code == 0 and doc["unread"] == [] and doc["quiet"] is True
    assert [e["path"] for e in doc["unreadUnchanged"]] == ["crates/burn-gen/src/lib.rs"]
    repo.write("crates/burn-gen/build.rs", 'fn main() { /* writes a panic into g.rs */ }\n', dedent=False)
    repo.commit()
    code, doc = gate(repo)
    assert code == 1 and doc["failed"] == ["unread"] and doc["unreadUnchanged"] == []
