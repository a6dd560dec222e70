"""A pull request cannot hide a new panic from the gate: legal Rust at the parser's old limits (a
wide or-pattern, a file padded with a comment, a site deep in nested macro calls) is read, and a
file that still cannot be read whole is listed in every output of `extract` and `diff`, and
fails `diff --fail-on`."""

from __future__ import annotations

import json

import pytest
from conftest import extract_head, ONE_SITE_RS, GitRepo, one_site_repo, run_cli

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
    "raw-identifier": dispatch("raw").replace("panic!", "r#panic!"),
}


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    return one_site_repo(tmp_path / "repo")


extract = extract_head


@pytest.mark.parametrize("kind", sorted(HIDING))
def test_legal_rust_at_the_parsers_old_limits_is_read(repo, tmp_path, kind):
    repo.write("crates/burn-x/src/hidden.rs", HIDING[kind], dedent=False)
    repo.commit()
    lines, manifest = extract(repo, tmp_path / "o")
    assert manifest["skipped"] == [] and manifest["partlyRead"] == []
    hidden = [x["record"] for x in lines if x["record"]["filePath"].endswith("hidden.rs")]
    assert len(hidden) == 1 and hidden[0]["errorMessage"].endswith(": unsupported dtype {d:?}")
    assert [x["analysis"]["macro"] for x in lines if x["record"]["filePath"].endswith("hidden.rs")] == ["panic"]
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


# --- diff: a head file not read whole is never quiet and never passes a check ---------------------

def unreadable(kind: str) -> str:
    """A file `extract` cannot read whole: past the code budget (skipped), or macro calls nested
    past what is read (read in part)."""
    if kind == "skipped":
        from analyzer.facts.parse import MAX_FILE_BYTES
        return ONE_SITE_RS + "\nfn pad() {" + "let a = 1;" * (MAX_FILE_BYTES // 10 + 1) + "}\n"
    from analyzer.facts.sites import MAX_SHADOW_DEPTH
    return nested_macros("deep", MAX_SHADOW_DEPTH + 1)


def diff(repo: GitRepo, fmt: str, *extra: str):
    return run_cli("diff", "HEAD~1", "HEAD", "--repo", str(repo.path), "--format", fmt, *extra)


@pytest.mark.parametrize("kind", ["skipped", "partly read"])
def test_a_head_file_not_read_whole_fails_the_check_and_is_listed_everywhere(repo, kind):
    # The file that held the base revision's one site becomes unreadable: nothing else changes.
    repo.write("crates/burn-x/src/lib.rs", unreadable(kind), dedent=False)
    repo.commit()
    res = diff(repo, "json", "--fail-on", "added")
    assert res.code == 1, res.stderr
    assert "not read whole" in res.stderr
    doc = json.loads(res.stdout)
    assert doc["quiet"] is False and doc["failed"] == ["unread"]
    assert [(e["path"], e["whole"]) for e in doc["unread"]] == [("crates/burn-x/src/lib.rs", kind == "skipped")]
    # The base site in that file is not claimed removed: nobody knows.
    assert doc["summary"]["removed"] == 0 and [x["filePath"] for x in doc["unverified"]] == ["crates/burn-x/src/lib.rs"]

    md = diff(repo, "markdown").stdout
    assert "Not read whole (1)" in md and "`crates/burn-x/src/lib.rs`" in md and "#### Removed" not in md
    assert "1 file of the head revision not read whole" in md.splitlines()[1]
    sarif = json.loads(diff(repo, "sarif").stdout)
    run = sarif["runs"][0]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes] == ["crates/burn-x/src/lib.rs"]
    unread = [r for r in run["results"] if r["ruleId"] == "burn-errors/unread-file"]
    assert len(unread) == 1 and run["tool"]["driver"]["rules"][unread[0]["ruleIndex"]]["id"] == "burn-errors/unread-file"


def test_a_diff_with_every_file_read_stays_quiet(repo):
    repo.write("crates/burn-x/src/other.rs", "pub fn f() {}\n", dedent=False)
    repo.commit()
    res = diff(repo, "json", "--fail-on", "added")
    assert res.code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["quiet"] is True and doc["unread"] == [] and doc["unverified"] == []
    sarif = json.loads(diff(repo, "sarif").stdout)["runs"][0]
    assert "toolExecutionNotifications" not in sarif["invocations"][0]
    assert all(r["id"] != "burn-errors/unread-file" for r in sarif["tool"]["driver"]["rules"])


@pytest.mark.parametrize("how", ['include!("{name}");\n', '#[path = "{name}"]\nmod hidden;\n'])
def test_a_file_rust_includes_that_is_not_a_rs_file_is_listed_not_passed_over(repo, tmp_path, how):
    """rustc reads whatever `include!` or `#[path]` names; the tree's `.rs` files alone would never
    show a site written in `ops.txt`. Such a file is listed as skipped, so the check fails."""
    repo.write("crates/burn-x/src/ops.txt", dispatch("hidden"), dedent=False)
    repo.write("crates/burn-x/src/also.rs", dispatch("also"), dedent=False)
    repo.write("crates/burn-x/src/pull.rs", how.format(name="ops.txt") + how.format(name="also.rs").replace("hidden", "also"),
               dedent=False)
    repo.commit()
    _, manifest = extract(repo, tmp_path / "o")
    assert [e["path"] for e in manifest["skipped"]] == ["crates/burn-x/src/ops.txt"]
    assert "crates/burn-x/src/pull.rs" in manifest["skipped"][0]["reason"]
    res = diff(repo, "json", "--fail-on", "added")
    assert res.code == 1 and "unread" in json.loads(res.stdout)["failed"]


def test_a_renamed_panic_macro_marks_its_file_as_read_in_part(repo, tmp_path):
    """`use core::panic as oops;` then `oops!(..)`: no walk for the macros' names finds the call, so
    the file is listed as read in part (and fails the check), and only that file: files that share
    nothing to parse do not share its note."""
    repo.write("crates/burn-x/src/renamed.rs", "use core::panic as oops;\n" + dispatch("renamed").replace("panic!", "oops!"),
               dedent=False)
    for i in range(3):  # files with nothing to parse, before and after it in path order
        repo.write(f"crates/burn-x/src/plain{i}.rs", "pub fn f() {}\n", dedent=False)
        repo.write(f"crates/burn-x/src/z{i}.rs", "pub fn f() {}\n", dedent=False)
    repo.commit()
    _, manifest = extract(repo, tmp_path / "o")
    assert [e["path"] for e in manifest["partlyRead"]] == ["crates/burn-x/src/renamed.rs"]
    assert "renames panic!" in manifest["partlyRead"][0]["reason"]
    res = diff(repo, "json", "--fail-on", "added")
    assert res.code == 1 and json.loads(res.stdout)["failed"] == ["unread"]


def test_a_records_diff_reads_the_unread_files_from_the_manifest_beside_the_head_records(repo, tmp_path):
    """A workflow may extract each side and diff the two records files: the head's manifest.json
    (same commit) lists what its extract could not read whole, and the diff says so too."""
    base_out, head_out = tmp_path / "base", tmp_path / "head"
    repo.write("crates/burn-x/src/other.rs", dispatch("other"), dedent=False)  # a record that names the commit
    repo.commit()
    extract(repo, base_out)
    repo.write("crates/burn-x/src/lib.rs", unreadable("partly read"), dedent=False)
    repo.commit()
    extract(repo, head_out)
    res = run_cli("diff", str(base_out / "records.jsonl"), str(head_out / "records.jsonl"), "--format", "json",
                  "--fail-on", "added")
    assert res.code == 1, res.stderr
    doc = json.loads(res.stdout)
    assert [e["path"] for e in doc["unread"]] == ["crates/burn-x/src/lib.rs"] and doc["quiet"] is False
    # A manifest of another commit beside the records says nothing of them.
    manifest = json.loads((head_out / "manifest.json").read_text())
    manifest["sha"] = "0" * 40
    (head_out / "manifest.json").write_text(json.dumps(manifest))
    res = run_cli("diff", str(base_out / "records.jsonl"), str(head_out / "records.jsonl"), "--format", "json")
    assert json.loads(res.stdout)["unread"] == []
