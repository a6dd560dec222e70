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
    from analyzer import sinks

    seen = []
    render = sinks.COVERAGE["json"]
    monkeypatch.setitem(sinks.COVERAGE, "json", lambda matrix: seen.append(gc.isenabled()) or render(matrix))
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
