"""A records file from anyone cannot send a reader elsewhere: a `githubUrl` outside the record's
own repository and commit is never linked or shown (pages, the PR comment, SARIF, lookup), and a
`filePath` that leaves the tree is refused on reading, as `validate` refuses both."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import one_record, run_cli

PHISH = "https://evil.example/login?next=github"


@pytest.fixture(scope="module")
def line(tmp_path_factory) -> dict:
    records = one_record(tmp_path_factory.mktemp("records"))
    (only,) = [json.loads(x) for x in records.read_text().splitlines()]
    return only


def write(path, line: dict, **fields) -> str:
    changed = copy.deepcopy(line)
    changed["record"].update(fields)
    path.write_text(json.dumps(changed) + "\n")
    return str(path)


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_pages_link_only_the_records_own_commit(line, tmp_path, fmt):
    good = write(tmp_path / "good.jsonl", line)
    res = run_cli("render", good, "--format", fmt, "--out", str(tmp_path / "good"))
    assert res.code == 0, res.stderr
    (page,) = (tmp_path / "good").glob(f"conv-*.{fmt}")
    assert line["record"]["githubUrl"] in page.read_text()

    evil = write(tmp_path / "evil.jsonl", line, githubUrl=PHISH)
    res = run_cli("render", evil, "--format", fmt, "--out", str(tmp_path / "evil"))
    assert res.code == 0, res.stderr
    (page,) = (tmp_path / "evil").glob(f"conv-*.{fmt}")
    text = page.read_text()
    assert "evil.example" not in text and "View on GitHub" not in text


def test_the_comment_sarif_and_lookup_never_show_a_foreign_link(line, tmp_path):
    evil = write(tmp_path / "evil.jsonl", line, githubUrl=PHISH)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for fmt in ("markdown", "sarif"):
        res = run_cli("diff", str(empty), evil, "--format", fmt)
        assert res.code == 0, res.stderr
        assert "evil.example" not in res.stdout and "crates/burn-x/src/lib.rs" in res.stdout
    res = run_cli("lookup", "conv: unsupported dtype F64", "--records", evil)
    assert res.code == 0, res.stderr
    assert "evil.example" not in res.stdout and "crates/burn-x/src/lib.rs" in res.stdout


@pytest.mark.parametrize("path", ["../../../etc/passwd", "/etc/passwd", "crates/./x.rs", "crates\\x.rs"])
def test_a_path_outside_the_tree_is_refused_on_reading(line, tmp_path, path):
    evil = write(tmp_path / "evil.jsonl", line, filePath=path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for args in (("diff", str(empty), evil, "--format", "sarif"), ("render", evil, "--out", str(tmp_path / "p"))):
        res = run_cli(*args)
        assert res.code == 2 and res.stdout == ""
        assert res.stderr.count("\n") == 1 and "is not a path inside the repository" in res.stderr
    assert not (tmp_path / "p").exists()
