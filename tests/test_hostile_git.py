"""Hostile repositories against the cache: a repository must never make one object id stand for
other content (replace refs, grafts, forged loose objects), since the facts cache is keyed by blob
id and shared between runs on every repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import zlib
from pathlib import Path

from conftest import DTYPE_RS, GitRepo, read_records, run_cli

SITE = ('pub fn conv(x: Tensor) {\n    match x.dtype() {\n        DType::F32 => 1,\n'
        '        d => panic!("conv: unsupported dtype {d:?}"),\n    };\n}\n')
POISON = SITE.replace("conv: unsupported dtype", "POISONED: run a script")
TARGET = "crates/burn-x/src/lib.rs"


def plain_git(cwd: Path, *args: str) -> str:
    """git as a user runs it, replace objects and grafts honoured (the test process may have had
    them turned off by an earlier in-process run)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_NO_REPLACE_OBJECTS", "GIT_GRAFT_FILE")}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def genuine_repo(root: Path) -> GitRepo:
    repo = GitRepo(root / "genuine")
    repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    repo.crate("burn-x", {"src/lib.rs": SITE})
    repo.commit()
    return repo


def messages(out: Path) -> set[str]:
    return {ln["record"]["errorMessage"] for ln in read_records(out)}


def extract(repo: Path | str, out: Path, *extra: str):
    return run_cli("extract", "--repo", str(repo), "--sha", "HEAD", "--out", str(out), *extra)


def test_replace_refs_do_not_poison_the_cache_for_the_genuine_repository(tmp_path):
    genuine = genuine_repo(tmp_path)
    hostile = tmp_path / "hostile"
    plain_git(tmp_path, "clone", "-q", str(genuine.path), str(hostile))
    plain_git(hostile, "remote", "set-url", "origin", "https://github.com/tracel-ai/burn.git")
    blob = plain_git(hostile, "rev-parse", f"HEAD:{TARGET}")
    (hostile / "poison.rs").write_text(POISON)
    poison = plain_git(hostile, "hash-object", "-w", "poison.rs")
    plain_git(hostile, "replace", blob, poison)
    assert "POISONED" in plain_git(hostile, "cat-file", "-p", blob)  # git itself is fooled

    res = extract(hostile, tmp_path / "h")
    assert res.code == 0, res.stderr
    assert not any("POISONED" in m for m in messages(tmp_path / "h"))
    res = extract(genuine.path, tmp_path / "g")
    assert res.code == 0, res.stderr
    assert messages(tmp_path / "g") == {"conv: unsupported dtype {d:?}"}


def test_a_forged_loose_object_is_refused_before_its_facts_are_cached(tmp_path):
    genuine = genuine_repo(tmp_path)
    hostile = tmp_path / "hostile"
    shutil.copytree(genuine.path / ".git", hostile / ".git")
    blob = plain_git(hostile, "rev-parse", f"HEAD:{TARGET}")
    loose = hostile / ".git" / "objects" / blob[:2] / blob[2:]
    loose.unlink()
    data = POISON.encode()
    loose.write_bytes(zlib.compress(b"blob %d\0" % len(data) + data))
    assert "POISONED" in plain_git(hostile, "cat-file", "-p", blob)

    res = extract(hostile, tmp_path / "h")
    assert res.code == 2
    assert "does not hold the content its id names" in res.stderr and "Traceback" not in res.stderr
    res = extract(genuine.path, tmp_path / "g")
    assert res.code == 0, res.stderr
    assert messages(tmp_path / "g") == {"conv: unsupported dtype {d:?}"}


def test_no_graft_file_is_honoured(tmp_path):
    from analyzer.source.repository import open_repository

    repo = genuine_repo(tmp_path)
    repo.write("crates/burn-x/src/more.rs", "pub fn f() {}\n")
    head = repo.commit("second")
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "grafts").write_text(f"{head}\n")  # the head has no parent
    assert plain_git(repo.path, "rev-list", "--count", head) == "1"
    git_repo = open_repository(str(repo.path), None)
    assert git_repo._git("rev-list", "--count", head).decode().strip() == "2"


def test_the_url_mirror_takes_branches_and_tags_only(tmp_path):
    source = genuine_repo(tmp_path)
    source.git("tag", "v1")
    blob = plain_git(source.path, "rev-parse", f"HEAD:{TARGET}")
    (source.path / "poison.rs").write_text(POISON)
    poison = plain_git(source.path, "hash-object", "-w", "poison.rs")
    plain_git(source.path, "replace", blob, poison)
    plain_git(source.path, "update-ref", "refs/pull/1/head", "HEAD")
    url = f"file://{source.path}"
    res = extract(url, tmp_path / "o1")
    assert res.code == 0, res.stderr
    source.write("crates/burn-x/src/more.rs", "pub fn f() {}\n")
    second = source.commit("second")
    res = run_cli("extract", "--repo", url, "--sha", second, "--out", str(tmp_path / "o2"))
    assert res.code == 0, res.stderr  # fetched, since the mirror lacked the commit
    (mirror,) = (Path(os.environ["BURN_ERRORS_CACHE"]) / "repos").glob("*.git")
    refs = plain_git(mirror, "for-each-ref", "--format=%(refname)").split()
    assert refs and all(r.startswith(("refs/heads/", "refs/tags/")) for r in refs), refs
    assert "refs/tags/v1" in refs and "refs/heads/main" in refs


def test_a_blob_past_the_budget_is_skipped_from_its_listed_size_unread(tmp_path, monkeypatch):
    from analyzer.source.repository import GitRepository

    from analyzer.facts import parse
    monkeypatch.setattr(parse, "MAX_BLOB_BYTES", 1_000_000)  # the budget of bytes read at all, made small
    repo = genuine_repo(tmp_path)
    big = "// padding\n" * 100_000 + SITE  # past it (comments are never code, so only this budget counts)
    repo.write("crates/burn-x/src/big.rs", big, dedent=False)
    repo.commit("big")
    big_blob = plain_git(repo.path, "rev-parse", "HEAD:crates/burn-x/src/big.rs")
    asked: list[str] = []
    real = GitRepository.read_blobs

    def spy(self, oids):
        oids = list(oids)
        asked.extend(oids)
        return real(self, oids)

    monkeypatch.setattr(GitRepository, "read_blobs", spy)
    out = tmp_path / "o"
    res = extract(repo.path, out)
    assert res.code == 0, res.stderr
    assert asked and big_blob not in asked
    import json
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"path": "crates/burn-x/src/big.rs",
            "reason": "larger than the 1,000,000-byte budget per file"} in manifest["skipped"]


def test_a_commit_tree_missing_between_two_revisions_is_worked_around_with_a_note(tmp_path):
    """A commit between two revisions whose tree the repository lacks (a damaged or partial
    clone): following a gone record's file through renames commit by commit needs it, so the
    renames come from the two revisions' trees instead, and a note says so."""
    repo = genuine_repo(tmp_path)
    first = repo.git("rev-parse", "HEAD")
    repo.write("crates/burn-x/src/more.rs", "pub fn more() -> u8 { 1 }\n")
    middle = repo.commit()
    repo.remove(TARGET)  # its record is gone: was the file renamed on the way?
    repo.commit()
    tree = repo.git("rev-parse", f"{middle}^{{tree}}")
    (repo.path / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    res = run_cli("history", "--repo", str(repo.path), "--revs", f"{first},HEAD", "--format", "json")
    assert res.code == 0, res.stderr
    assert "note: the repository lacks commits between some revisions" in res.stderr
    assert "Traceback" not in res.stderr


def test_an_object_missing_from_the_analysed_revision_is_one_line_naming_it(tmp_path):
    """The revision's own tree is missing: nothing can stand in for it, and the run says which
    object is missing instead of failing inside the tool."""
    repo = genuine_repo(tmp_path)
    tree = repo.git("rev-parse", "HEAD^{tree}")
    (repo.path / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    res = run_cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(tmp_path / "o"))
    assert res.code == 2
    (line,) = res.stderr.strip().splitlines()[-1:]
    assert f"{tree}" in line and "missing" in line and "internal error" not in res.stderr
    assert "Traceback" not in res.stderr
