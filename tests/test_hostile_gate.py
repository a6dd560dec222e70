"""A pull request cannot hide a new panic from the gate: legal Rust at the parser's old limits (a
wide or-pattern, a file padded with a comment, a site deep in nested macro calls) is read, and a
file that still cannot be read whole is listed in every output of `extract` and `diff`, and
fails `diff --fail-on`."""

from __future__ import annotations

import json

import pytest
from conftest import DTYPE_RS, ONE_SITE_RS, GitRepo, run_cli

DISPATCH = ('use burn_std::DType;\n\npub fn {name}(x: Tensor) {{\n    match x.dtype() {{\n'
            '        {arm} => 1,\n        d => panic!("{name}: unsupported dtype {{d:?}}"),\n    }};\n}}\n')


def dispatch(name: str, arm: str = "DType::F32") -> str:
    return DISPATCH.format(name=name, arm=arm)


def nested_macros(name: str, levels: int) -> str:
    inner = f'match x.dtype() {{ DType::F32 => 1, d => panic!("{name}: unsupported dtype {{d:?}}"), }}'
    for i in range(levels):
        inner = f"wrap{i}!({inner})"
    return f"use burn_std::DType;\n\npub fn {name}(x: Tensor) {{\n    {inner};\n}}\n"


HIDING = {
    "wide-or-pattern": dispatch("wide", " | ".join(["DType::F64"] * 500)),
    "comment-padding": dispatch("padded") + "// " + "x" * 4_100_000 + "\n",
    "string-padding": dispatch("strung") + 'const PAD: &str = "' + "x" * 4_100_000 + '";\n',
    "five-nested-macros": nested_macros("macros", 5),
}


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    r = GitRepo(tmp_path / "repo")
    r.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    r.crate("burn-x", {"src/lib.rs": ONE_SITE_RS})
    r.commit("base")
    return r


def extract(repo: GitRepo, out) -> tuple[list[dict], dict]:
    res = run_cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    lines = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    return lines, json.loads((out / "manifest.json").read_text())


@pytest.mark.parametrize("kind", sorted(HIDING))
def test_legal_rust_at_the_parsers_old_limits_is_read(repo, tmp_path, kind):
    repo.write("crates/burn-x/src/hidden.rs", HIDING[kind], dedent=False)
    repo.commit()
    lines, manifest = extract(repo, tmp_path / "o")
    assert manifest["skipped"] == [] and manifest["partlyRead"] == []
    hidden = [x["record"] for x in lines if x["record"]["filePath"].endswith("hidden.rs")]
    assert len(hidden) == 1 and hidden[0]["errorMessage"].endswith(": unsupported dtype {d:?}")
    assert hidden[0]["lineNumber"] in (4, 6)


def test_macro_calls_past_the_nesting_read_are_listed_as_partly_read(repo, tmp_path):
    from analyzer.facts.sites import MAX_SHADOW_DEPTH
    repo.write("crates/burn-x/src/deep.rs", nested_macros("deep", MAX_SHADOW_DEPTH + 1), dedent=False)
    repo.commit()
    res = run_cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(tmp_path / "o"))
    assert res.code == 0, res.stderr
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert [e["path"] for e in manifest["partlyRead"]] == ["crates/burn-x/src/deep.rs"]
    assert "nested deeper" in manifest["partlyRead"][0]["reason"]
    assert "read only in part" in res.stderr
