"""Bad input and faults: one-line errors with exit code 2, nothing lost."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import GitRepo, read_records, run_cli, run_cli_subprocess

SITE = 'fn f(x: Tensor) {\n    match x.dtype() {\n        DType::F32 => 1,\n        d => panic!("f: unsupported dtype {d:?}"),\n    };\n}\n'


def one_line_error(res, *needles: str) -> str:
    """The command failed with exit 2 and exactly one line on stderr, no traceback."""
    assert res.code == 2, (res.code, res.stdout, res.stderr)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("burn-errors: error: ")
    assert "Traceback" not in res.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def repo_with_site(git_repo):
    git_repo.crate("burn-x", {"src/lib.rs": SITE})
    git_repo.commit()
    return git_repo


def test_unknown_revision(cli, repo_with_site, tmp_path):
    res = cli("extract", "--repo", str(repo_with_site.path), "--sha", "no-such-rev", "--out", str(tmp_path / "o"))
    one_line_error(res, "unknown revision 'no-such-rev'")
    assert not (tmp_path / "o" / "records.jsonl").exists()


def test_a_failed_extract_leaves_no_output_folder_it_made(cli, repo_with_site, tmp_path):
    out = tmp_path / "new" / "o"
    res = cli("extract", "--repo", str(repo_with_site.path), "--sha", "no-such-rev", "--out", str(out))
    one_line_error(res, "unknown revision")
    assert not (tmp_path / "new").exists()
    (tmp_path / "kept").mkdir()  # a folder that was there before stays
    res = cli("extract", "--repo", str(repo_with_site.path), "--sha", "no-such-rev", "--out", str(tmp_path / "kept"))
    assert res.code == 2 and (tmp_path / "kept").is_dir()


def test_the_default_pin_missing_from_the_repository_says_so_and_names_sha(cli, repo_with_site, tmp_path):
    from analyzer import profiles

    pin = profiles.load(profiles.DEFAULT).repository.pin
    res = cli("extract", "--repo", str(repo_with_site.path), "--out", str(tmp_path / "o"))
    line = one_line_error(res, f"unknown revision '{pin}'", "default pin", "--sha REV")
    res = cli("extract", "--repo", str(repo_with_site.path), "--sha", "no-such-rev", "--out", str(tmp_path / "o"))
    assert "default pin" not in res.stderr and line


def test_missing_path(cli, tmp_path):
    res = cli("extract", "--repo", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o"))
    one_line_error(res, "no such repository path")


def test_folder_that_is_not_a_git_repository(cli, tmp_path):
    (tmp_path / "plain").mkdir()
    res = cli("extract", "--repo", str(tmp_path / "plain"), "--out", str(tmp_path / "o"))
    one_line_error(res, "is not a git repository")


def test_url_that_cannot_be_reached(cli, tmp_path):
    res = cli("extract", "--repo", f"file://{tmp_path}/missing.git", "--out", str(tmp_path / "o"))
    one_line_error(res, "cannot clone")


def test_output_folder_that_cannot_be_written(cli, repo_with_site, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    res = cli("extract", "--repo", str(repo_with_site.path), "--sha", "HEAD", "--out", str(blocker / "out"))
    one_line_error(res, "cannot write to")


def test_a_folder_in_place_of_an_output_file(cli, repo_with_site, tmp_path):
    out = tmp_path / "o"
    (out / "manifest.json").mkdir(parents=True)
    res = cli("extract", "--repo", str(repo_with_site.path), "--sha", "HEAD", "--out", str(out))
    one_line_error(res, "a folder is in the way")
    assert not (out / "records.jsonl").exists()  # nothing half-written beside it


def test_tree_without_rust_files(cli, tmp_path):
    repo = GitRepo(tmp_path / "norust")
    repo.write("README.md", "hello\n")
    repo.commit()
    res = cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(tmp_path / "o"))
    one_line_error(res, "no Rust files")


def test_unknown_flag(cli):
    one_line_error(cli("extract", "--frobnicate"), "--frobnicate", "burn-errors extract --help")


def test_debug_shows_the_traceback(tmp_path):
    # A real process: the traceback is what the interpreter prints for the re-raised error.
    res = run_cli_subprocess("extract", "--repo", str(tmp_path / "nowhere"), "--debug")
    assert res.code != 0 and "Traceback" in res.stderr


@pytest.mark.parametrize("broken", ['{"record": {"id": "x"}}\n', "not json at all\n"])
def test_validate_names_the_bad_lines(cli, repo_with_site, tmp_path, broken):
    out = tmp_path / "o"
    assert cli("extract", "--repo", str(repo_with_site.path), "--sha", "HEAD", "--out", str(out)).code == 0
    good = (out / "records.jsonl").read_text()
    assert cli("validate", str(out / "records.jsonl")).code == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good + broken + good)
    res = cli("validate", str(bad))
    assert res.code == 1
    assert f"{bad}:2:" in res.stdout
    # The same id twice is a bad file too, reported on both lines; line 1 has nothing else.
    assert "appears 2 times, on lines 1, 3" in res.stdout and "appears 2 times, first on line 1" in res.stdout
    assert all("appears 2 times" in ln for ln in res.stdout.splitlines() if ln.startswith(f"{bad}:1:"))


def test_validate_of_a_missing_file(cli, tmp_path):
    one_line_error(cli("validate", str(tmp_path / "none.jsonl")), "no such records file")


def test_broken_previous_records_is_an_error_before_any_work(cli, repo_with_site, tmp_path):
    bad = tmp_path / "prev.jsonl"
    bad.write_text("{broken\n")
    res = cli("extract", "--repo", str(repo_with_site.path), "--sha", "HEAD", "--out", str(tmp_path / "o"),
              "--previous", str(bad))
    one_line_error(res, f"{bad}:1:")


def test_a_file_that_does_not_parse_does_not_stop_the_run(cli, git_repo, tmp_path):
    broken = SITE + "\nfn g( {{{ this is not rust\n"
    git_repo.crate("burn-x", {"src/lib.rs": SITE.replace("f:", "ok:"), "src/broken.rs": broken})
    git_repo.commit()
    out = tmp_path / "o"
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    msgs = {r["record"]["errorMessage"] for r in read_records(out)}
    # The site before the damage in the broken file is still found.
    assert msgs == {"ok: unsupported dtype {d:?}", "f: unsupported dtype {d:?}"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["filesWithParseErrors"] == ["crates/burn-x/src/broken.rs"]
    assert "did not parse cleanly" in res.stderr


def test_bytes_that_are_not_utf8_do_not_stop_the_run(cli, git_repo, tmp_path):
    data = SITE.encode().replace(b"fn f(", b"// caf\xe9 in latin-1\nfn f(")
    git_repo.crate("burn-x", {})
    git_repo.write_bytes("crates/burn-x/src/latin1.rs", data)
    git_repo.commit()
    out = tmp_path / "o"
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    (rec,) = [r["record"] for r in read_records(out)]
    assert rec["lineNumber"] == 5 and rec["errorMessage"] == "f: unsupported dtype {d:?}"
    assert "\ufffd" in rec["sourceCode"]  # the bad byte shows as a replacement character
    assert json.loads((out / "manifest.json").read_text())["filesNotUtf8"] == ["crates/burn-x/src/latin1.rs"]


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_a_failed_run_leaves_the_previous_output_as_it_was(cli, repo_with_site, tmp_path):
    out = tmp_path / "o"
    assert cli("extract", "--repo", str(repo_with_site.path), "--sha", "HEAD", "--out", str(out)).code == 0
    before = _digest(out)
    assert set(before) == {"records.jsonl", "manifest.json"}
    assert cli("extract", "--repo", str(repo_with_site.path), "--sha", "nope", "--out", str(out)).code == 2
    assert _digest(out) == before  # same files, same bytes, no temporary files left


@pytest.mark.parametrize("moment", ["parsing", "writing"])
def test_an_interrupted_run_leaves_the_previous_output_as_it_was(repo_with_site, tmp_path, moment):
    """Kill the process at a moment the test controls: while its parser workers run, and when
    every new output is written to its temporary file and none renamed yet. The earlier outputs
    stay whole and unchanged, and the temporary files of the killed run are cleaned up by the
    next run into the folder."""
    import time

    from analyzer.pipeline.extract import PARALLEL_MIN_BYTES
    from analyzer.pipeline.workers import HOLD_AFTER_POOL
    from analyzer.core.outputs import HOLD_BEFORE_RENAME
    from conftest import _command, subprocess_env

    out = tmp_path / "o"
    assert run_cli("extract", "--repo", str(repo_with_site.path), "--sha", "HEAD", "--out", str(out)).code == 0
    before = _digest(out)
    # A new commit with enough source for the parser workers, and other records to write.
    per_file = SITE.replace("f:", "m:") * 20
    for i in range(PARALLEL_MIN_BYTES // len(per_file) + 2):
        repo_with_site.write(f"crates/burn-x/src/m{i}.rs", SITE.replace("f:", f"m{i}:") * 20)
    repo_with_site.commit()
    ready = tmp_path / "ready"
    hook = HOLD_AFTER_POOL if moment == "parsing" else HOLD_BEFORE_RENAME
    proc = subprocess.Popen([*_command(), "extract", "--repo", str(repo_with_site.path), "--sha", "HEAD",
                             "--out", str(out), "--no-cache", "--jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=subprocess_env({hook: str(ready)}))
    deadline = time.monotonic() + 60
    while not ready.exists():  # the hook says when the run has reached the moment
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the run never reached the hook"
        time.sleep(0.05)
    if moment == "writing":
        temps = [t for t in ready.read_text().splitlines() if t]
        assert temps and all(Path(t).exists() for t in temps)  # written, not yet renamed
    proc.kill()
    proc.wait()
    after = _digest(out)
    # The previous records.jsonl and manifest.json, byte for byte; a killed writer's temporary
    # files may be left (the next write into the folder removes them).
    assert {k: v for k, v in after.items() if not k.endswith(".tmp")} == before
    for line in (out / "records.jsonl").read_text().splitlines():
        json.loads(line)
    # The next run into the folder succeeds and leaves no temporary file behind.
    assert run_cli("extract", "--repo", str(repo_with_site.path), "--sha", "HEAD", "--out", str(out)).code == 0
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "records.jsonl"]


def test_two_runs_sharing_the_cache_both_succeed_and_agree(repo_with_site, tmp_path):
    for i in range(40):
        repo_with_site.write(f"crates/burn-x/src/m{i}.rs", SITE.replace("f:", f"m{i}:"))
    repo_with_site.commit()
    from conftest import _command, subprocess_env
    procs = [subprocess.Popen([*_command(), "extract", "--repo", str(repo_with_site.path), "--sha", "HEAD",
                               "--out", str(tmp_path / f"o{k}")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=subprocess_env())
             for k in range(2)]
    for p in procs:
        p.wait()
        assert p.returncode == 0, p.stderr.read()
    a = [{**r["record"], "analyzedAt": 0, "contentChangedAt": 0} for r in read_records(tmp_path / "o0")]
    b = [{**r["record"], "analyzedAt": 0, "contentChangedAt": 0} for r in read_records(tmp_path / "o1")]
    assert a == b and len(a) == 41


def test_a_corrupt_cache_is_rebuilt_not_trusted(cli, repo_with_site, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir(exist_ok=True)
    (cache / "facts.sqlite3").write_bytes(b"this is not a database" * 100)
    out = tmp_path / "o"
    res = cli("extract", "--repo", str(repo_with_site.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    assert len(read_records(out)) == 1
    assert any(p.name.startswith("facts.sqlite3.corrupt-") for p in cache.iterdir())
    # and the rebuilt cache is used by the next run
    res = cli("extract", "--repo", str(repo_with_site.path), "--sha", "HEAD", "--out", str(out))
    assert json.loads((out / "manifest.json").read_text())["cache"]["hits"] >= 1


def test_a_cache_of_another_layout_is_rebuilt(cli, repo_with_site, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(exist_ok=True)
    db = sqlite3.connect(cache / "facts.sqlite3")
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('layout', 'facts-v0')")
    db.execute("CREATE TABLE facts (blob TEXT, tag TEXT, data BLOB)")
    db.commit()
    db.close()
    out = tmp_path / "o"
    res = cli("extract", "--repo", str(repo_with_site.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    assert len(read_records(out)) == 1


def test_a_url_is_mirrored_once_then_reused_and_fetched_when_needed(cli, repo_with_site, tmp_path):
    url = f"file://{repo_with_site.path}"
    out = tmp_path / "o"
    res = cli("extract", "--repo", url, "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    mirrors = list((tmp_path / "cache" / "repos").iterdir())
    assert len(mirrors) == 1 and mirrors[0].name.endswith(".git")
    # A new commit upstream: the mirror is fetched because the revision is missing.
    repo_with_site.write("crates/burn-x/src/lib.rs", SITE.replace("f:", "g:"))
    new = repo_with_site.commit()
    res = cli("extract", "--repo", url, "--sha", new, "--out", str(out))
    assert res.code == 0, res.stderr
    assert [r["record"]["errorMessage"] for r in read_records(out)] == ["g: unsupported dtype {d:?}"]
    assert list((tmp_path / "cache" / "repos").iterdir()) == mirrors


def test_a_broken_mirror_is_repaired(cli, repo_with_site, tmp_path):
    url = f"file://{repo_with_site.path}"
    out = tmp_path / "o"
    assert cli("extract", "--repo", url, "--sha", "HEAD", "--out", str(out)).code == 0
    (mirror,) = list((tmp_path / "cache" / "repos").iterdir())
    # Simulate an interrupted clone that left a half-made folder where the mirror goes.
    subprocess.run(["rm", "-rf", str(mirror)], check=True)
    mirror.mkdir()
    (mirror / "objects").mkdir()
    res = cli("extract", "--repo", url, "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    assert len(read_records(out)) == 1


def test_cloning_shows_progress_when_not_on_a_terminal(cli, repo_with_site, tmp_path):
    res = cli("extract", "--repo", f"file://{repo_with_site.path}", "--sha", "HEAD", "--out", str(tmp_path / "o"))
    assert res.code == 0
    assert "git " in res.stderr  # a few plain progress lines on stderr
