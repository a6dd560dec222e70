"""Rust code that rustc reads but a listing of the tree's `.rs` blobs would not: a symbolic link
(git keeps the path it names, not the file), and a Cargo target whose file is not a `.rs` file.
Each is listed as skipped, so a new site hidden there fails `diff --fail-on` instead of passing."""

from __future__ import annotations

import json
import os

import pytest
from conftest import DTYPE_RS, ONE_SITE_RS, GitRepo, run_cli


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    r = GitRepo(tmp_path / "repo")
    r.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    r.crate("burn-x", {"src/lib.rs": "pub fn ok() {}\n"})
    # Links and path dependencies of the usual kind, which must stay unlisted.
    r.write("LICENSE-MIT", "MIT\n")
    os.symlink("../../LICENSE-MIT", r.path / "crates/burn-x/LICENSE-MIT")
    r.write("crates/burn-y/Cargo.toml", '[package]\nname = "burn-y"\nversion = "0.1.0"\n\n'
            '[dependencies]\nburn-x = { path = "../burn-x" }\n', dedent=False)
    r.write("crates/burn-y/src/lib.rs", "pub fn y() {}\n")
    return r


def skipped(repo: GitRepo, out) -> list[dict]:
    res = run_cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    return json.loads((out / "manifest.json").read_text())["skipped"]


def gate(repo: GitRepo, base: str, head: str) -> tuple[int, dict]:
    res = run_cli("diff", base, head, "--repo", str(repo.path), "--format", "json", "--fail-on", "added")
    return res.code, json.loads(res.stdout)


def test_usual_links_and_path_dependencies_are_not_listed(repo, tmp_path):
    repo.commit()
    assert skipped(repo, tmp_path / "o") == []


def test_a_symbolic_link_named_rs_is_listed_and_fails_the_gate(repo, tmp_path):
    base = repo.commit("base")
    repo.write("crates/burn-x/src/lib.rs", "pub fn ok() {}\nmod ops;\n")
    repo.write("crates/burn-x/hidden.txt", ONE_SITE_RS, dedent=False)
    os.symlink("../hidden.txt", repo.path / "crates/burn-x/src/ops.rs")
    head = repo.commit("head")
    assert [e["path"] for e in skipped(repo, tmp_path / "o")] == ["crates/burn-x/src/ops.rs"]
    code, diff = gate(repo, base, head)
    assert code == 1 and diff["quiet"] is False
    assert [u["path"] for u in diff["unread"]] == ["crates/burn-x/src/ops.rs"]


def test_a_link_to_a_folder_of_rust_files_is_listed(repo, tmp_path):
    # The files are read under tests/ (test code, no records); rustc compiles them as src/ops.
    repo.write("crates/burn-x/src/lib.rs", "pub fn ok() {}\nmod ops;\n")
    repo.write("crates/burn-x/tests/ops/mod.rs", ONE_SITE_RS, dedent=False)
    os.symlink("../tests/ops", repo.path / "crates/burn-x/src/ops")
    repo.commit()
    listed = skipped(repo, tmp_path / "o")
    assert [e["path"] for e in listed] == ["crates/burn-x/src/ops"]
    assert "symbolic link" in listed[0]["reason"]


def test_a_cargo_target_that_is_not_a_rs_file_is_listed(repo, tmp_path):
    base = repo.commit("base")
    repo.write("crates/burn-x/Cargo.toml", '[package]\nname = "burn-x"\nversion = "0.1.0"\n\n'
               '[lib]\npath = "src/lib.txt"\n', dedent=False)
    repo.write("crates/burn-x/src/lib.txt", ONE_SITE_RS, dedent=False)
    head = repo.commit("head")
    listed = skipped(repo, tmp_path / "o")
    assert [e["path"] for e in listed] == ["crates/burn-x/src/lib.txt"]
    assert "crates/burn-x/Cargo.toml" in listed[0]["reason"]
    code, diff = gate(repo, base, head)
    assert code == 1 and diff["quiet"] is False
