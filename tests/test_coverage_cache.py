"""`coverage --repo` keeps its matrix in the results cache: a repeated audit of one revision with
the same rules and options is served whole (every format renders from it), `--no-cache` and
another option bypass it, and a damaged or tampered row is dropped with a warning and made again."""

from __future__ import annotations

import json
import sqlite3
import zlib

import pytest
from conftest import GitRepo, run_cli
from test_coverage import FIX_OPS_RS, fix_backend_repo
from test_hostile_cache import cache_dir

SERVED = "unchanged since the last run (results cache)"


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    return fix_backend_repo(tmp_path / "repo")


def drop_documents() -> None:
    """Forget the rendered documents kept, so the next run is served the matrix."""
    db = sqlite3.connect(cache_dir() / "facts.sqlite3")
    db.execute("DELETE FROM results WHERE key LIKE 'coverage-document|%'")
    db.commit()
    db.close()


def coverage(repo: GitRepo, *args: str):
    res = run_cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", *args)
    assert res.code == 0, res.stderr
    return res


def test_a_repeated_audit_is_served_whole_and_renders_every_format(repo):
    first = coverage(repo, "--format", "json")
    assert SERVED not in first.stderr
    second = coverage(repo, "--format", "json")
    assert SERVED in second.stderr
    assert second.stdout == first.stdout
    doc = json.loads(second.stdout)
    assert doc["view"] == "operations" and doc["cells"]
    for fmt in ("markdown", "html", "table"):
        served = coverage(repo, "--format", fmt)
        assert SERVED in served.stderr
        assert served.stdout == coverage(repo, "--format", fmt, "--no-cache").stdout
    # Filters apply to the served matrix, not to the key.
    only = coverage(repo, "--format", "json", "--op", "float_*")
    assert SERVED in only.stderr
    assert {c["operation"] for c in json.loads(only.stdout)["cells"]} <= {o["operation"] for o in doc["operations"]
                                                                          if o["operation"].startswith("float_")}


def test_no_cache_and_another_model_option_are_not_served(repo):
    coverage(repo, "--format", "json")
    assert SERVED not in coverage(repo, "--format", "json", "--no-cache").stderr
    expanded = coverage(repo, "--format", "json", "--expand")
    assert SERVED not in expanded.stderr  # --expand changes the model: a row of its own
    assert SERVED in coverage(repo, "--format", "json", "--expand").stderr
    assert coverage(repo, "--format", "json", "--expand").stdout == expanded.stdout


def rewrite_matrices(change) -> None:
    """Apply `change` to the text of every kept matrix (a row holds the JSON text itself), as
    someone with write access could; rows of other kinds are left alone."""
    db = sqlite3.connect(cache_dir() / "facts.sqlite3")
    rows = db.execute("SELECT key, tag, data FROM results WHERE key LIKE 'coverage|%'").fetchall()
    assert rows
    for key, tag, data in rows:
        text = change(zlib.decompress(data).decode())
        db.execute("UPDATE results SET data = ? WHERE key = ? AND tag = ?",
                   (zlib.compress(text.encode()), key, tag))
    db.commit()
    db.close()


def _poison_links(text: str) -> str:
    return text.replace("https://github.com/", "javascript:alert(1)//github.com/")


def _break_cells(text: str) -> str:
    matrix = json.loads(text)
    matrix["cells"] = [{"crate": 1}]
    return json.dumps(matrix)


def _not_json(text: str) -> str:
    return text[:-10]


def _not_an_object(text: str) -> str:
    return json.dumps([text])


def _other_revision(text: str) -> str:
    matrix = json.loads(text)
    matrix["sha"] = "0" * 40
    return json.dumps(matrix)


@pytest.mark.parametrize("change, why", [(_poison_links, "it links outside"),
                                         (_break_cells, "it does not hold a coverage matrix"),
                                         (_not_json, "it does not hold a coverage matrix"),
                                         (_not_an_object, "it does not hold a coverage matrix"),
                                         (_other_revision, "it is of another revision")])
def test_a_tampered_or_damaged_row_is_warned_about_and_made_again(repo, change, why):
    genuine = coverage(repo, "--format", "html").stdout
    assert "https://github.com/" in genuine
    drop_documents()  # the matrix row's own checks, not the rendered page's
    rewrite_matrices(change)
    res = coverage(repo, "--format", "html")
    assert why in res.stderr and "was not used" in res.stderr
    assert SERVED not in res.stderr
    assert res.stdout == genuine and "javascript:" not in res.stdout
    drop_documents()
    again = coverage(repo, "--format", "html")  # the row made again serves the next run
    assert SERVED in again.stderr and again.stdout == genuine


def _set_matrix_rows(data: bytes) -> None:
    db = sqlite3.connect(cache_dir() / "facts.sqlite3")
    assert db.execute("UPDATE results SET data = ? WHERE key LIKE 'coverage|%'", (data,)).rowcount == 1
    db.commit()
    db.close()


def test_a_matrix_row_cut_short_or_not_utf8_is_made_again(repo):
    genuine = coverage(repo, "--format", "json").stdout
    db = sqlite3.connect(cache_dir() / "facts.sqlite3")
    (data,) = db.execute("SELECT data FROM results WHERE key LIKE 'coverage|%'").fetchone()
    db.close()
    text = zlib.decompress(data)
    # A stream cut short does not inflate: a miss, dropped without a word; bytes that are not
    # UTF-8 do not validate: dropped with the warning.
    for damaged, said in ((data[: len(data) // 2], False), (zlib.compress(text.replace(b"float_", b"\xff_")), True)):
        drop_documents()
        _set_matrix_rows(damaged)
        res = coverage(repo, "--format", "json")
        assert SERVED not in res.stderr and res.stdout == genuine
        assert ("it does not hold a coverage matrix" in res.stderr) == said
        drop_documents()
        again = coverage(repo, "--format", "json")  # the row made again serves the next run
        assert SERVED in again.stderr and again.stdout == genuine


def _poison_kept_matrices(text: str) -> str:
    """A kept matrix's links pointed elsewhere."""
    return text.replace("https://github.com/", "https://example.com/")


def test_diff_warns_about_a_kept_matrix_it_drops_as_coverage_does(repo):
    base = repo.git("rev-parse", "HEAD").strip()
    repo.crate("burn-fix", {"src/ops.rs": FIX_OPS_RS.replace("F64 => f64, ", "")})
    head = repo.commit("float_add drops F64")
    for sha in (base, head):
        run_cli("coverage", "--repo", str(repo.path), "--sha", sha, "--format", "json")
    genuine = run_cli("diff", base, head, "--repo", str(repo.path), "--format", "json")
    assert genuine.code == 0 and "was not used" not in genuine.stderr
    drop_documents()  # diff reads the matrices; coverage's rendered documents are rows of another shape
    rewrite_matrices(_poison_kept_matrices)
    res = run_cli("diff", base, head, "--repo", str(repo.path), "--format", "json")
    assert res.code == 0, res.stderr
    said = [line for line in res.stderr.splitlines() if "was not used" in line]
    # One line per side, worded as coverage words it: which revision, why, and that it was rebuilt.
    assert said == [f"warning: the results cache's coverage of tracel-ai/burn@{sha[:12]} was not used: it links "
                    f"outside tracel-ai/burn@{sha[:12]}; it was built again" for sha in (base, head)]
    assert json.loads(res.stdout)["flipped"] == json.loads(genuine.stdout)["flipped"]
    # The rebuilt matrices were kept again: coverage is served them without a word.
    again = coverage(repo, "--format", "json")
    assert "was not used" not in again.stderr


def test_coverage_words_the_dropped_row_as_diff_does(repo):
    coverage(repo, "--format", "json")
    drop_documents()  # else the rendered document is served, and the matrix row never read
    rewrite_matrices(_poison_kept_matrices)
    res = coverage(repo, "--format", "json")
    sha = repo.git("rev-parse", "HEAD").strip()
    assert [line for line in res.stderr.splitlines() if "was not used" in line] == [
        f"warning: the results cache's coverage of tracel-ai/burn@{sha[:12]} was not used: it links outside "
        f"tracel-ai/burn@{sha[:12]}; it was built again"]
