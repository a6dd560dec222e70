"""What `coverage --repo` does once its matrix is built: it renders with the cycle collector
paused (the document is a tree with no cycle) and turns it back on however the command ends."""

from __future__ import annotations

import gc

import pytest
from conftest import GitRepo, run_cli
from test_coverage import fix_backend_repo


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    return fix_backend_repo(tmp_path / "repo")


def test_the_collector_is_paused_while_the_document_renders_and_on_after(repo, monkeypatch, tmp_path):
    from analyzer.sinks import coverage_json

    seen = []
    render = coverage_json.render
    monkeypatch.setattr(coverage_json, "render", lambda matrix, options: seen.append(gc.isenabled())
                        or render(matrix, options))
    assert gc.isenabled()
    res = run_cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", "--format", "json",
                  "--out", str(tmp_path / "c.json"))
    assert res.code == 0, res.stderr
    assert seen == [False] and gc.isenabled()
    assert '"crate": "burn-fix"' in (tmp_path / "c.json").read_text()


def test_the_collector_is_on_again_after_a_refused_filter(repo):
    res = run_cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", "--format", "json", "--op", "nothing_such")
    assert res.code == 2 and "no operation of the chosen backends matches" in res.stderr
    assert gc.isenabled()


def test_the_json_cells_say_what_each_cell_holds_and_no_more():
    from analyzer.features.coverage.model import Cell, Evidence, Matrix, Site
    from analyzer.sinks.coverage_json import build

    site = Site("r1", "crates/burn-a/src/ops.rs", 7, "f", "https://github.com/o/r/blob/s/crates/burn-a/src/ops.rs#L7")
    cells = [Cell("burn-a", "op", "I32", "n/a", enum="DType"),
             Cell("burn-a", "op", "F16", "unknown", enum="DType"),
             Cell("burn-a", "op", "F32", "panics", enum="DType", reason="not implemented"),
             Cell("burn-a", "op", "Bool", "partial", enum="DType", decided={"Bool(U8)": "handled", "Bool(U32)": "panics"}),
             Cell("burn-a", "op", "F64", "handled", enum="DType", evidence=[Evidence("F64", "handled", site)]),
             Cell("burn-a", "op", "U8", "panics", [site], enum="DType")]
    matrix = Matrix({c.key: c for c in cells}, [c.dtype for c in cells],
                    unknown_reasons={("burn-a", "op", "F16"): ["the dtype comes from a parameter"]})
    head = {"crate": "burn-a", "operation": "op", "enum": "DType"}
    at = {"id": "r1", "path": "crates/burn-a/src/ops.rs", "line": 7, "url": site.url}
    assert [c["dtype"] for c in build(matrix)["cells"]] == ["F16", "F32", "Bool", "F64", "U8"]  # n/a left out
    assert [{k: v for k, v in c.items() if k not in head} for c in build(matrix, full=True)["cells"]] == [
        {"dtype": "I32", "status": "n/a", "parts": {}, "sites": []},
        {"dtype": "F16", "status": "unknown", "parts": {}, "sites": [], "reasons": ["the dtype comes from a parameter"]},
        {"dtype": "F32", "status": "panics", "parts": {}, "sites": [], "reason": "not implemented"},
        {"dtype": "Bool", "status": "partial", "parts": {"Bool(U8)": "handled", "Bool(U32)": "panics"}, "sites": []},
        {"dtype": "F64", "status": "handled", "parts": {"F64": "handled"}, "sites": []},
        {"dtype": "U8", "status": "panics", "parts": {}, "sites": [at]},
    ]
    assert all(list(c)[:5] == ["crate", "operation", "dtype", "enum", "status"] for c in build(matrix)["cells"])
