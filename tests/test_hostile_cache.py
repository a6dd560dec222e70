"""A cache folder anyone could have written: rows served from it are checked, decompressed to a
bound, and a folder that is a link, another user's or writable by others is not used at all."""

from __future__ import annotations

import os
import sqlite3
import zlib
from pathlib import Path

import pytest
from conftest import DTYPE_RS, GitRepo, read_records, run_cli

SITE = ('pub fn conv(x: Tensor) {\n    match x.dtype() {\n        DType::F32 => 1,\n'
        '        d => panic!("conv: unsupported dtype {d:?}"),\n    };\n}\n')


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    repo.crate("burn-x", {"src/lib.rs": SITE})
    repo.commit()
    return repo


def cache_dir() -> Path:
    return Path(os.environ["BURN_ERRORS_CACHE"])


def extract(repo: GitRepo, out: Path):
    return run_cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out))


def rewrite_results(change) -> None:
    """Apply `change` to every results row's decoded value, as someone with write access could."""
    from analyzer.pipeline.cache import decode

    db = sqlite3.connect(cache_dir() / "facts.sqlite3")
    rows = db.execute("SELECT key, tag, data FROM results").fetchall()
    assert rows
    for key, tag, data in rows:
        db.execute("UPDATE results SET data = ? WHERE key = ? AND tag = ?", (change(decode(data)), key, tag))
    db.commit()
    db.close()


def test_a_tampered_results_row_never_reaches_records_jsonl(repo, tmp_path):
    assert extract(repo, tmp_path / "o1").code == 0
    genuine = read_records(tmp_path / "o1")[0]["record"]["githubUrl"]

    def poison(value):
        from analyzer.pipeline.cache import encode
        value["records"] = [line.replace(genuine, "javascript:alert(1)") for line in value["records"]]
        return encode(value)

    rewrite_results(poison)
    res = extract(repo, tmp_path / "o2")
    assert res.code == 0, res.stderr
    assert read_records(tmp_path / "o2")[0]["record"]["githubUrl"] == genuine
    res = extract(repo, tmp_path / "o3")  # the row made again is served
    assert res.code == 0 and read_records(tmp_path / "o3")[0]["record"]["githubUrl"] == genuine
    assert "results cache" in res.stderr


def test_a_malformed_results_row_is_made_again_and_breaks_no_later_run(repo, tmp_path):
    assert extract(repo, tmp_path / "o1").code == 0

    def break_manifest(value):
        from analyzer.pipeline.cache import encode
        value["manifest"]["counts"] = ["not", "a", "dict"]
        return encode(value)

    rewrite_results(break_manifest)
    for n in (2, 3):
        res = extract(repo, tmp_path / f"o{n}")
        assert res.code == 0, res.stderr
        assert [ln["record"]["id"] for ln in read_records(tmp_path / f"o{n}")] == \
            [ln["record"]["id"] for ln in read_records(tmp_path / "o1")]
    assert "results cache" in res.stderr  # the rebuilt row serves the third run


def test_decompression_is_bounded(monkeypatch):
    from analyzer.pipeline import cache

    bomb = zlib.compress(b" " * 5_000_000, 9)  # a few KB that inflate to 5 MB
    monkeypatch.setattr(cache, "MAX_ROW_BYTES", 1_000_000)
    with pytest.raises(ValueError, match="inflates past"):
        cache.decode(bomb)
    assert cache.decode(cache.encode({"a": 1})) == {"a": 1}


def test_a_symlinked_facts_file_is_not_written_through(repo, tmp_path):
    other = tmp_path / "other.sqlite3"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE precious (x)")
    db.commit()
    db.close()
    before = other.read_bytes()
    cache_dir().mkdir(mode=0o700, parents=True)
    (cache_dir() / "facts.sqlite3").symlink_to(other)
    res = extract(repo, tmp_path / "o")
    assert res.code == 0, res.stderr
    assert "the cache folder is not used" in res.stderr and "symbolic link" in res.stderr
    assert other.read_bytes() == before
    assert read_records(tmp_path / "o")[0]["record"]["errorMessage"] == "conv: unsupported dtype {d:?}"


def test_a_cache_folder_writable_by_others_is_not_used(repo, tmp_path):
    cache_dir().mkdir(parents=True)
    os.chmod(cache_dir(), 0o777)
    res = extract(repo, tmp_path / "o")
    assert res.code == 0, res.stderr
    assert "writable by other users" in res.stderr
    assert not (cache_dir() / "facts.sqlite3").exists()


def test_a_cache_folder_of_another_user_is_not_used(repo, tmp_path):
    cache_dir().mkdir(parents=True)
    if os.geteuid() == 0:
        os.chown(cache_dir(), 12345, 12345)
        res = extract(repo, tmp_path / "o")
        assert "belongs to another user" in res.stderr and res.code == 0
    else:  # cannot give a folder away: the check itself, on a folder owned by root
        from analyzer.pipeline.cache import untrusted
        assert untrusted(Path("/")) == "/ belongs to another user"


@pytest.mark.parametrize("table", ["facts", "results"])
def test_a_cache_file_of_a_foreign_schema_is_moved_aside_and_rebuilt(repo, tmp_path, table):
    """A file of the current layout whose table has other columns: every query of it failed, so
    nothing was cached again, in silence. It is moved aside, rebuilt and warned of."""
    folder = cache_dir()
    folder.mkdir(parents=True, mode=0o700)
    db = sqlite3.connect(folder / "facts.sqlite3")
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('layout', 'facts-v1')")
    db.execute(f"CREATE TABLE {table} (something TEXT, other BLOB)")
    db.commit()
    db.close()
    res = extract(repo, tmp_path / "o1")
    assert res.code == 0, res.stderr
    assert "moved aside" in res.stderr and f"its {table} table has the columns something, other" in res.stderr
    assert len(list(folder.glob("facts.sqlite3.corrupt-*"))) >= 1
    db = sqlite3.connect(folder / "facts.sqlite3")
    assert db.execute("SELECT count(*) FROM facts").fetchone()[0] > 0  # cached again
    db.close()
    again = extract(repo, tmp_path / "o2")
    assert again.code == 0 and "moved aside" not in again.stderr
