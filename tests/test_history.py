"""`burn-errors history` end to end on a fixture repository with release tags: which revisions
are analysed and in what order, what happens to each site (fixed, removed from the tree,
changed, new), coverage cells that turned handled or regressed, revisions that cannot be
analysed, and the shape and escaping of the three formats."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from analyzer.features.history.revisions import plan, release_tags, version_of
from analyzer.source.repository import open_repository

OPS = "crates/burn-flex/src/ops.rs"
ODD = "crates/burn-flex/src/odd (copy).rs"


def ops(*, i64_handled: bool, f16_handled: bool, reduce_msg: str, bicubic: bool, legacy: bool,
        prerelease: bool = False, sort: bool = False) -> str:
    """The backend file at one release, in the shape burn's backends use."""
    i64_arm = "DType::I64 => cumsum_i64(x)," if i64_handled else 'DType::I64 => panic!("cumsum: i64 is not supported"),'
    f16_arm = "DType::F16 => conv_f16(x)," if f16_handled else ""
    bicubic_arm = ('InterpolateMode::Bicubic => panic!("bicubic interpolation is not supported by this backend"),'
                   if bicubic else "")
    parts = [f'''\
use burn_std::DType;

pub struct Flex;

impl FloatOps for Flex {{
    fn cumsum(x: Tensor) -> Tensor {{
        match x.dtype() {{
            DType::F32 => cumsum_f32(x),
            {i64_arm}
            dtype => panic!("cumsum: unsupported dtype {{:?}}", dtype),
        }}
    }}

    fn conv(x: Tensor) -> Tensor {{
        match x.dtype() {{
            DType::F32 => conv_f32(x),
            {f16_arm}
            dtype => panic!("conv: unsupported dtype {{:?}}", dtype),
        }}
    }}

    fn interpolate(x: Tensor, mode: InterpolateMode) -> Tensor {{
        match mode {{
            InterpolateMode::Nearest => nearest(x),
            {bicubic_arm}
            InterpolateMode::Bilinear => bilinear(x),
        }}
    }}

    fn reduce(x: Tensor, reduction: Reduction) -> Tensor {{
        match reduction {{
            Reduction::Mean => mean(x),
            other => panic!("{reduce_msg}"),
        }}
    }}
''']
    if legacy:
        parts.append('''
    fn legacy_pool(x: Tensor, mode: PoolMode) -> Tensor {
        match mode {
            PoolMode::Max => max_pool(x),
            PoolMode::Lp => unimplemented!("lp pooling is not supported"),
        }
    }
''')
    if prerelease:
        parts.append('''
    fn trial(x: Tensor, mode: TrialMode) -> Tensor {
        match mode {
            TrialMode::A => a(x),
            TrialMode::B => unimplemented!("trial mode b is not supported"),
        }
    }
''')
    if sort:
        parts.append('''
    fn sort(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => sort_f32(x),
            dtype => panic!("sort: unsupported dtype {:?}", dtype),
        }
    }
''')
    return "".join(parts) + "}\n"


OLD_CRATE = '''\
pub fn pad(x: Tensor, mode: PadMode) -> Tensor {
    match mode {
        PadMode::Constant => constant(x),
        PadMode::Reflect => unimplemented!("reflect padding is not supported"),
    }
}
'''

# A message and a file name an attacker could choose: markup, a table pipe, backticks, a
# javascript: link, and a path with a space and parentheses.
HOSTILE_RS = '''\
pub fn odd(x: Tensor, mode: OddMode) -> Tensor {
    match mode {
        OddMode::A => a(x),
        OddMode::B => panic!("<img src=x onerror=alert(1)> | `tick` [x](javascript:alert(1)) is not supported"),
    }
}
'''

V1 = {"i64_handled": False, "f16_handled": True, "reduce_msg": "reduction {other:?} is not supported",
      "bicubic": False, "legacy": True}
V2 = dict(V1, i64_handled=True, reduce_msg="reduction {other:?} is not supported by the flex backend", bicubic=True)
PRE = dict(V2, prerelease=True)
V3 = dict(V2, f16_handled=False, bicubic=False, legacy=False)
HEAD = dict(V3, sort=True)


@pytest.fixture
def releases(git_repo):
    """A commit with no Rust file (on no branch), then v0.1.0, v0.2.0, v0.2.1-pre.1, v0.3.0, v0.3.0-book and HEAD:

    - v0.2.0: cumsum's I64 arm handles I64 (its panic is fixed: the dtype is handled), the reduce
      message is reworded (a content change), the burn-old crate is deleted (removed from tree),
      interpolate gets a panicking bicubic arm (new);
    - v0.2.1-pre.1: a panic that only the pre-release has;
    - v0.3.0: conv's F16 arm goes, so F16 falls into the catch-all (a regression), the bicubic
      arm is implemented (its match remains: fixed), legacy_pool is deleted (function gone);
    - v0.3.0-book: a docs-only commit; HEAD: a new sort dispatch."""
    repo = git_repo
    empty_tree = repo.git("hash-object", "-t", "tree", "/dev/null")
    no_rust = repo.git("commit-tree", empty_tree, "-m", "nothing yet")
    repo.crate("burn-flex", {"src/ops.rs": ops(**V1), "src/odd (copy).rs": HOSTILE_RS})
    repo.crate("burn-old", {"src/lib.rs": OLD_CRATE})
    repo.commit("v0.1.0")
    repo.git("tag", "v0.1.0")
    repo.write(OPS, ops(**V2), dedent=False)
    repo.git("rm", "-q", "-r", "crates/burn-old")
    repo.commit("v0.2.0")
    repo.git("tag", "-a", "v0.2.0", "-m", "release 0.2.0")  # annotated: peeled to its commit
    repo.write(OPS, ops(**PRE), dedent=False)
    repo.commit("pre")
    repo.git("tag", "v0.2.1-pre.1")
    repo.write(OPS, ops(**V3), dedent=False)
    repo.commit("v0.3.0")
    repo.git("tag", "v0.3.0")
    repo.write("book/intro.md", "the book\n")
    repo.commit("book")
    repo.git("tag", "v0.3.0-book")
    repo.write(OPS, ops(**HEAD), dedent=False)
    repo.commit("head")
    return repo, no_rust


def run_history(cli, repo, *args):
    return cli("history", "--repo", str(repo.path), *args)


def history_json(cli, repo, *args) -> dict:
    res = run_history(cli, repo, "--format", "json", *args)
    assert res.code == 0, res.stderr
    return json.loads(res.stdout)


def lineage_of(doc: dict, message: str) -> dict:
    (found,) = [ln for ln in doc["lineages"] if ln["site"]["message"] == message]
    return found


def cell(doc: dict, crate: str, operation: str, dtype: str) -> dict:
    (found,) = [c for c in doc["cells"] if (c["crate"], c["operation"], c["dtype"]) == (crate, operation, dtype)]
    return found


# ---------------------------------------------------------------------------------------------
# Which revisions


def test_version_of_release_tags_only():
    assert version_of("v0.10.0") == (0, 10, 0)
    assert version_of("v0.9") == (0, 9)
    assert version_of("1.2.3") == (1, 2, 3)
    for not_a_release in ("v0.21.0-pre.1", "v0.3.0-book", "v1.0.0-rc1", "v1.0.0-alpha", "main", "v"):
        assert version_of(not_a_release) is None, not_a_release


def test_release_tags_sort_by_version_not_by_name_or_date(git_repo):
    git_repo.crate("burn-flex", {"src/ops.rs": ops(**V1)})
    for tag in ("v0.10.0", "v0.9.0", "v0.9.1-rc1", "v0.2.0"):  # committed in this order
        git_repo.commit(tag)
        git_repo.git("tag", tag)
    repo = open_repository(str(git_repo.path), None)
    assert [t.name for t in release_tags(repo)] == ["v0.2.0", "v0.9.0", "v0.10.0"]
    assert [t.name for t in release_tags(repo, "v0.1*")] == ["v0.10.0"]


def test_the_repository_reads_a_history_plans_and_follows_with(releases):
    git_repo, _ = releases
    repo = open_repository(str(git_repo.path), None)
    v1, v2, v3 = (repo.resolve(t) for t in ("v0.1.0", "v0.2.0", "v0.3.0"))
    tags = dict(repo.tags())
    assert tags["v0.2.0"] == v2 != git_repo.git("rev-parse", "refs/tags/v0.2.0")  # annotated: its commit
    assert tags["v0.1.0"] == v1
    assert repo.tag_names(merged_into=v2) == {"v0.1.0", "v0.2.0"}
    assert repo.tag_names(containing=v2) == {"v0.2.0", "v0.2.1-pre.1", "v0.3.0", "v0.3.0-book"}
    assert repo.is_tag("v0.2.0") and not repo.is_tag("HEAD") and not repo.is_tag("--help")
    times, dates = repo.commit_times([v3, v1, v3]), repo.commit_dates([v1])
    assert list(times) == [v3, v1] and times[v1] <= times[v3]
    assert dates == {v1: repo.commit_date(v1)}
    assert repo.commit_times([]) == {} == repo.commit_dates([])
    # A file, a folder of the asked name, a file gone at that revision, a name git cannot be asked.
    files = repo.read_files(v3, [OPS, "crates/burn-flex/src", "crates/burn-old/src/lib.rs", "a\nb"])
    assert files == {OPS: ops(**V3).encode()}
    assert repo.read_files(v1, ["crates/burn-old/src/lib.rs"])["crates/burn-old/src/lib.rs"] == OLD_CRATE.encode()


def test_default_revisions_are_releases_then_head(releases):
    repo, _ = releases
    git = open_repository(str(repo.path), None)
    assert [p.label for p in plan(git).revisions] == ["v0.1.0", "v0.2.0", "v0.3.0", "HEAD"]
    assert [p.label for p in plan(git, from_rev="v0.2.0").revisions] == ["v0.2.0", "v0.3.0", "HEAD"]
    assert [p.label for p in plan(git, to_rev="v0.2.0").revisions] == ["v0.1.0", "v0.2.0"]
    # A pre-release named as a bound is analysed itself; the releases after it follow.
    assert [p.label for p in plan(git, from_rev="v0.2.1-pre.1").revisions] == ["v0.2.1-pre.1", "v0.3.0", "HEAD"]
    # A commit as a bound: releases by commit date.
    second = repo.git("rev-parse", "v0.2.0^{commit}")
    assert [p.label for p in plan(git, from_rev=second).revisions] == [second, "v0.3.0", "HEAD"]
    assert [p.label for p in plan(git, pattern="v0.1*").revisions] == ["v0.1.0", "HEAD"]
    # The annotated tag v0.2.0 is planned at its commit.
    assert plan(git).revisions[1].sha == second


def test_head_on_a_release_is_analysed_once(releases):
    repo, _ = releases
    git = open_repository(str(repo.path), None)
    assert [p.label for p in plan(git, to_rev="v0.3.0").revisions] == ["v0.1.0", "v0.2.0", "v0.3.0"]


def test_json_lists_revisions_in_order_without_prereleases(cli, releases):
    repo, _ = releases
    doc = history_json(cli, repo)
    assert [r["label"] for r in doc["revisions"]] == ["v0.1.0", "v0.2.0", "v0.3.0", "HEAD"]
    assert [r["tag"] for r in doc["revisions"]] == [True, True, True, False]
    assert not any(ln["site"]["message"] == "not implemented: trial mode b is not supported" for ln in doc["lineages"])
    assert doc["skipped"] == [] and doc["leftOut"] == []


# ---------------------------------------------------------------------------------------------
# What happens to each site


def test_a_panic_fixed_by_handling_its_dtype(cli, releases):
    repo, _ = releases
    doc = history_json(cli, repo)
    i64 = lineage_of(doc, "cumsum: i64 is not supported")
    assert i64["firstSeen"] == "v0.1.0" and i64["presentAtStart"] is True
    assert i64["lastSeen"] == "v0.1.0" and i64["removedIn"] == "v0.2.0"
    assert i64["removal"] == {"kind": "fixed", "reason": "dtype-handled", "dtypes": ["I64"]}
    assert [e["kind"] for e in i64["events"]] == ["added", "removed"]
    # Its cell turned handled at the same release.
    c = cell(doc, "burn-flex", "cumsum", "I64")
    assert c["fixedIn"] == "v0.2.0" and c["regressedIn"] == []
    assert c["changes"] == [{"revision": "v0.2.0", "from": "panics", "to": "handled", "kind": "fixed"}]
    assert i64["key"] in doc["releases"][0]["removed"]["fixed"]


def test_a_deleted_file_is_removed_from_the_tree(cli, releases):
    repo, _ = releases
    pad = lineage_of(history_json(cli, repo), "not implemented: reflect padding is not supported")
    assert pad["removedIn"] == "v0.2.0"
    assert pad["removal"] == {"kind": "removed-from-tree", "reason": "file-gone", "dtypes": []}
    assert pad["site"]["filePath"] == "crates/burn-old/src/lib.rs"


def test_a_panic_added_then_fixed_by_removing_its_arm(cli, releases):
    repo, _ = releases
    doc = history_json(cli, repo)
    bicubic = lineage_of(doc, "bicubic interpolation is not supported by this backend")
    assert bicubic["firstSeen"] == "v0.2.0" and bicubic["presentAtStart"] is False
    assert bicubic["lastSeen"] == "v0.2.0" and bicubic["removedIn"] == "v0.3.0"
    assert bicubic["removal"] == {"kind": "fixed", "reason": "arm-removed", "dtypes": []}
    assert [e["revision"] for e in bicubic["events"]] == ["v0.2.0", "v0.3.0"]
    assert doc["releases"][0]["new"] == [bicubic["key"]]
    legacy = lineage_of(doc, "not implemented: lp pooling is not supported")
    assert legacy["removal"] == {"kind": "removed-from-tree", "reason": "function-gone", "dtypes": []}


def test_a_content_change_keeps_the_lineage(cli, releases):
    repo, _ = releases
    doc = history_json(cli, repo)
    reduce = lineage_of(doc, "reduction {other:?} is not supported by the flex backend")
    assert reduce["removedIn"] is None and reduce["lastSeen"] == "HEAD"
    assert reduce["changedIn"] == ["v0.2.0"]
    (change,) = [e for e in reduce["events"] if e["kind"] == "changed"]
    assert change["fields"] == ["message"] and change["link"] == "id"
    assert change["before"] == {"message": "reduction {other:?} is not supported"}
    assert change["after"] == {"message": "reduction {other:?} is not supported by the flex backend"}
    assert reduce["ids"] == [reduce["key"]]


def test_a_coverage_regression(cli, releases):
    repo, _ = releases
    doc = history_json(cli, repo)
    c = cell(doc, "burn-flex", "conv", "F16")
    assert c["regressedIn"] == ["v0.3.0"] and c["fixedIn"] is None
    assert c["changes"] == [{"revision": "v0.3.0", "from": "handled", "to": "panics", "kind": "regressed"}]
    conv = lineage_of(doc, "conv: unsupported dtype {:?}")
    (change,) = [e for e in conv["events"] if e["kind"] == "changed"]
    assert change["revision"] == "v0.3.0" and set(change["fields"]) == {"handled", "rejected"}
    assert "F16" in change["after"]["rejected"] and "F16" not in change["before"]["rejected"]
    assert doc["summary"]["regressions"] == 1
    assert doc["releases"][1]["cells"]["regressed"] == 1


def test_a_cell_that_goes_from_panics_to_partial_is_improved_not_fixed(cli, git_repo):
    """v0.1.0 rejects every Bool; v0.2.0 handles Bool(Native) only, so the Bool cell is partial:
    better, but a Bool tensor can still panic, so it is not fixed."""
    path = "crates/burn-flex/src/ops.rs"
    before = """\
        pub fn flip(x: Tensor) -> Tensor {
            match x.dtype() {
                DType::F32 => flip_f32(x),
                dtype => panic!("flip: unsupported dtype {dtype:?}"),
            }
        }
        """
    git_repo.crate("burn-flex", {"src/ops.rs": before})
    git_repo.commit("v0.1.0")
    git_repo.git("tag", "v0.1.0")
    git_repo.write(path, before.replace("DType::F32 => flip_f32(x),",
                                        "DType::F32 => flip_f32(x),\n        DType::Bool(BoolStore::Native) => flip_bool(x),"))
    git_repo.commit("v0.2.0")
    git_repo.git("tag", "v0.2.0")
    doc = history_json(cli, git_repo, "--revs", "v0.1.0,v0.2.0")
    c = cell(doc, "burn-flex", "flip", "Bool")
    assert c["changes"] == [{"revision": "v0.2.0", "from": "panics", "to": "partial", "kind": "improved"}]
    assert c["fixedIn"] is None and doc["summary"]["cellsFixed"] == 0
    assert doc["releases"][0]["cells"]["improved"] == 1 and doc["releases"][0]["cells"]["fixed"] == 0


def test_a_new_site_is_first_seen_where_it_appears(cli, releases):
    repo, _ = releases
    doc = history_json(cli, repo)
    sort = lineage_of(doc, "sort: unsupported dtype {:?}")
    assert sort["firstSeen"] == "HEAD" and sort["presentAtStart"] is False
    assert [e["kind"] for e in sort["events"]] == ["added"]
    assert doc["releases"][-1]["new"] == [sort["key"]]


def test_summary_counts_agree_with_the_lineages(cli, releases):
    repo, _ = releases
    doc = history_json(cli, repo)
    s = doc["summary"]
    assert s["lineages"] == len(doc["lineages"])
    assert s["open"] == sum(1 for ln in doc["lineages"] if ln["removedIn"] is None) == doc["revisions"][-1]["records"]
    assert s["fixed"] == 2 and s["removed-from-tree"] == 2 and s["rewritten"] == 0


def test_cached_links_are_used_only_when_they_fit_the_records():
    from analyzer.features.history.follow import _cached_pairs

    class Rows:
        def __init__(self, row):
            self.row = row

        def get_result(self, key):
            return self.row

    assert _cached_pairs(Rows({"sizes": [2, 2], "pairs": [[0, 1, "id"]]}), "k", 2, 2) == [(0, 1, "id")]
    assert _cached_pairs(Rows({"sizes": [3, 2], "pairs": [[0, 1, "id"]]}), "k", 2, 2) is None  # other records
    assert _cached_pairs(Rows({"sizes": [2, 2], "pairs": [[0, 5, "id"]]}), "k", 2, 2) is None  # out of range
    assert _cached_pairs(Rows({"sizes": [2, 2], "pairs": [[0]]}), "k", 2, 2) is None  # another shape
    assert _cached_pairs(Rows(None), "k", 2, 2) is None
    assert _cached_pairs(None, "k", 2, 2) is None


# ---------------------------------------------------------------------------------------------
# Revisions that cannot be analysed


def test_a_missing_revision_is_skipped_with_a_warning(cli, releases):
    repo, _ = releases
    res = run_history(cli, repo, "--revs", "v0.1.0,no-such-tag", "--revs", "v0.2.0", "--format", "json")
    assert res.code == 0, res.stderr
    assert "warning: skipped no-such-tag: unknown revision" in res.stderr
    doc = json.loads(res.stdout)
    assert [r["label"] for r in doc["revisions"]] == ["v0.1.0", "v0.2.0"]
    assert doc["skipped"] == [{"label": "no-such-tag", "reason": "unknown revision 'no-such-tag'"}]
    assert lineage_of(doc, "cumsum: i64 is not supported")["removedIn"] == "v0.2.0"


def test_a_revision_without_rust_is_skipped(cli, releases):
    repo, no_rust = releases
    res = run_history(cli, repo, "--revs", f"{no_rust},v0.1.0", "--format", "json")
    assert res.code == 0, res.stderr
    doc = json.loads(res.stdout)
    (skip,) = doc["skipped"]
    assert skip["label"] == no_rust and "no Rust files" in skip["reason"]
    assert f"warning: skipped {no_rust}" in res.stderr


def test_no_usable_revision_is_one_line_and_exit_2(cli, releases):
    repo, no_rust = releases
    res = run_history(cli, repo, "--revs", f"nope,{no_rust}")
    assert res.code == 2
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("burn-errors: error: no usable revision") and "Traceback" not in res.stderr


def test_revs_cannot_be_combined_with_bounds(cli, releases):
    repo, _ = releases
    res = run_history(cli, repo, "--revs", "v0.1.0", "--from", "v0.1.0")
    assert res.code == 2 and "--from" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_unknown_bound_is_one_line_and_exit_2(cli, releases):
    repo, _ = releases
    res = run_history(cli, repo, "--from", "v9.9.9")
    assert res.code == 2 and "v9.9.9" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_tag_names_reach_the_terminal_without_control_codes(cli, releases):
    """A fork can name a tag with a C1 control (CSI, U+009B, which git allows in a refname): the
    progress, warning and summary lines print it without the control."""
    repo, _ = releases
    hostile = "v0.1.0\u009b2J"
    repo.git("tag", hostile, "v0.1.0")
    res = run_history(cli, repo, "--revs", f"{hostile},no-such-tag\u009b2J", "--revs", "v0.2.0", "--format", "json")
    assert res.code == 0, res.stderr
    assert "\u009b" not in res.stderr and "\x1b" not in res.stderr
    # The whole escape sequence (CSI, its parameter and final byte) is gone, the rest stays.
    assert "[1/3] v0.1.0 (" in res.stderr and "warning: skipped no-such-tag: unknown revision" in res.stderr


def test_progress_line_per_revision_and_the_cache_serves_a_rerun(cli, releases):
    repo, _ = releases
    first = run_history(cli, repo, "--format", "json")
    assert first.code == 0
    lines = [ln for ln in first.stderr.splitlines() if ln.startswith("[")]
    assert [ln.split("]")[0] + "]" for ln in lines] == ["[1/4]", "[2/4]", "[3/4]", "[4/4]"]
    assert "v0.1.0" in lines[0] and "read afresh" in lines[0]
    again = run_history(cli, repo, "--format", "json")
    assert again.code == 0
    assert all("from the results cache" in ln for ln in again.stderr.splitlines() if ln.startswith("["))
    strip = re.compile(r'"seconds": [0-9.]+|"total": [0-9.]+|"filesReadAfresh": \d+|"resultsCache": \w+')
    assert strip.sub("", again.stdout) == strip.sub("", first.stdout)


# ---------------------------------------------------------------------------------------------
# Formats


def test_json_shape(cli, releases):
    repo, _ = releases
    doc = history_json(cli, repo)
    assert set(doc) == {"tool", "formatVersion", "repo", "contentFields", "revisions", "skipped", "leftOut",
                        "summary", "releases", "lineages", "cells", "timings"}
    assert doc["formatVersion"] == 1 and doc["tool"]["name"] == "burn-errors"
    assert set(doc["revisions"][0]) == {"label", "sha", "date", "tag", "records", "counts", "backends",
                                        "filesScanned", "filesReadAfresh", "resultsCache", "seconds"}
    assert [r["revision"] for r in doc["releases"]] == ["v0.2.0", "v0.3.0", "HEAD"]
    assert set(doc["releases"][0]) == {"revision", "previous", "new", "changed", "moved", "removed", "cells"}
    assert set(doc["lineages"][0]) == {"key", "ids", "firstSeen", "presentAtStart", "lastSeen", "removedIn",
                                       "removal", "changedIn", "site", "events"}
    assert set(doc["cells"][0]) == {"crate", "operation", "dtype", "enum", "fixedIn", "regressedIn", "changes"}
    keys = [ln["key"] for ln in doc["lineages"]]
    assert len(keys) == len(set(keys))


def test_markdown_release_notes(cli, releases):
    repo, _ = releases
    res = run_history(cli, repo)
    assert res.code == 0, res.stderr
    md = res.stdout
    headings = [ln for ln in md.splitlines() if ln.startswith("#")]
    assert headings[0].startswith("# burn-errors history: ")
    releases_in_order = [h for h in headings if h.startswith("## `")]
    assert releases_in_order == ["## `HEAD`", "## `v0.3.0`", "## `v0.2.0`", "## `v0.1.0` (start)"]
    v3 = md[md.index("## `v0.3.0`"):md.index("## `v0.2.0`")]
    assert "### Fixed (1)" in v3 and "panicking arm removed" in v3
    assert "### Changed (1)" in v3 and "### Gone with their code (1)" in v3 and "its function was removed" in v3
    assert "### Coverage: regressed" in v3 and "**panics**" in v3
    v2 = md[md.index("## `v0.2.0`"):md.index("## `v0.1.0`")]
    assert "### Fixed (1)" in v2 and "I64 handled now" in v2 and "its file was removed" in v2
    assert "### New (1)" in v2 and "bicubic interpolation" in v2
    assert "### Coverage: now handled" in v2
    head = md[md.index("## `HEAD`"):md.index("## `v0.3.0`")]
    assert "### New (1)" in head and "sort: unsupported dtype" in head
    assert "## Regressions" in md
    # Per backend: each release's summary table names the backends it touched.
    assert "| burn-flex |" in v3 and "| burn-old |" in v2


@pytest.fixture
def hostile(releases):
    """The releases, then a commit where the hostile site's message changes: it shows up in
    the notes' Changed table and in the page."""
    repo, _ = releases
    repo.write(ODD, HOSTILE_RS.replace("alert(1))", "alert(2))"), dedent=False)
    repo.commit("hostile change")
    return repo


def test_markdown_cells_cannot_break_out(cli, hostile):
    res = run_history(cli, hostile, "--from", "v0.3.0")
    assert res.code == 0, res.stderr
    changed = res.stdout[res.stdout.index("### Changed"):]
    row = next(ln for ln in changed.splitlines() if "odd" in ln and ln.startswith("|"))
    assert "<img" not in row.replace("`<img", "")  # markup only inside a code span
    assert row.count(" | ") == 4  # five cells: the message's pipe is escaped
    assert "\\|" in row
    assert "alert(1)" in row and "alert(2)" in row  # the part of the message that changed shows
    # The link to the file is https and percent-encoded: the space and parentheses cannot end it.
    (url,) = re.findall(r"\]\((https://[^)\s]+)\)", row)
    assert "odd%20%28copy%29.rs" in url
    assert "javascript:" not in re.sub(r"`[^`]*`", "", row.replace("``", "`"))


def test_html_is_one_self_contained_page(cli, hostile):
    res = run_history(cli, hostile, "--format", "html", "--from", "v0.1.0")
    assert res.code == 0, res.stderr
    page = res.stdout
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=", page)
    assert "http://" not in page
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs and all(h.startswith(("#", "https://")) for h in hrefs)
    # The hostile message only ever appears escaped.
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "javascript:alert" not in "".join(hrefs)
    assert any("odd%20%28copy%29.rs" in h for h in hrefs) and not any(" " in h for h in hrefs)
    # One timeline per backend, as inline SVG.
    assert page.count("<svg") == len(re.findall(r'<figure id="b-', page)) >= 2
    # Every lineage is linkable, and release rows link to it.
    doc = history_json(cli, hostile, "--from", "v0.1.0")
    for ln in doc["lineages"]:
        assert f'id="l-{ln["key"]}"' in page
    fixed = lineage_of(doc, "cumsum: i64 is not supported")
    assert f'href="#l-{fixed["key"]}"' in page
    assert 'id="regressions"' in page and "conv" in page[page.index('id="regressions"'):page.index('id="releases"')]


def test_out_file_is_written_whole(cli, releases, tmp_path):
    repo, _ = releases
    out = tmp_path / "notes" / "history.md"
    res = run_history(cli, repo, "--out", str(out))
    assert res.code == 0 and res.stdout == ""
    assert out.read_text().startswith("# burn-errors history")
    assert f"Wrote {out}" in res.stderr


def test_help_has_examples(cli):
    res = cli("history", "--help")
    assert res.code == 0
    for option in ("--from", "--to", "--revs", "--tags", "--format", "--out"):
        assert option in res.stdout
    assert "burn-errors history --repo" in res.stdout


def test_bench_history_run_prints_its_rows(releases, tmp_path):
    """bench/bench.py --history runs end to end on the fixture (its timings are never checked)."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    repo, _ = releases
    if not ((Path(sys.executable).parent / "ast-grep").exists() or shutil.which("ast-grep")):
        pytest.skip("ast-grep is not installed (pip install '.[bench]')")
    bench = Path(__file__).resolve().parent.parent / "bench" / "bench.py"
    from conftest import subprocess_env

    # this checkout's burn-errors, as tests/test_bench.py has bench.py time it
    out = subprocess.run([sys.executable, str(bench), "--repo", str(repo.path), "--sha", "HEAD", "--rounds", "1",
                          "--history", "v0.1.0", "--history-rounds", "1", "--json", str(tmp_path / "b.json"),
                          "--burn-errors", f"{sys.executable} -m analyzer"],
                         capture_output=True, text=True, timeout=600, check=False, env=subprocess_env())
    assert out.returncode == 0, out.stderr
    for label in ("history, 4 revisions, cold cache", "history, 4 revisions, warm cache",
                  "ast-grep, 4 checkouts + scans", "history cold wall", "history warm wall", "history peak RSS",
                  "(4 revisions: v0.1.0, v0.2.0, v0.3.0, "):
        assert label in out.stdout, label
    data = json.loads((tmp_path / "b.json").read_text())
    assert set(data["historyRatios"]) == {"cold", "warm", "memory", "ast-grep"}


INTERP_V1 = '''\
pub fn interpolate(x: Tensor, mode: InterpolateMode) -> Tensor {
    match mode {
        InterpolateMode::Nearest => nearest(x),
        InterpolateMode::Bilinear => bilinear(x),
        InterpolateMode::Bicubic => panic!("bicubic interpolation is not supported here"),
    }
}
'''
def _interp_moved_to_another_crate(repo):
    """v0.1.0 with a panicking arm in burn-a, then a commit that moves its file to burn-b."""
    repo.crate("burn-a", {"src/interp.rs": INTERP_V1})
    repo.commit("v0.1.0")
    repo.git("tag", "v0.1.0")
    repo.crate("burn-b", {"src/lib.rs": "pub mod interp;\n"})
    repo.git("mv", "crates/burn-a/src/interp.rs", "crates/burn-b/src/interp.rs")
    repo.commit("move the module to burn-b")
    return repo


INTERP_FIXED = INTERP_V1.replace('panic!("bicubic interpolation is not supported here")', "bicubic(x)")


def test_a_panic_fixed_in_a_file_renamed_to_another_crate_is_fixed_not_gone(cli, git_repo):
    """The file moves to another crate in one commit and the arm is implemented there in the next:
    the site is fixed, and history says so rather than that its file was removed."""
    repo = _interp_moved_to_another_crate(git_repo)
    repo.write("crates/burn-b/src/interp.rs", INTERP_FIXED, dedent=False)
    repo.commit("bicubic")
    repo.git("tag", "v0.2.0")
    doc = history_json(cli, repo)
    bicubic = lineage_of(doc, "bicubic interpolation is not supported here")
    assert bicubic["removedIn"] == "v0.2.0"
    assert bicubic["removal"] == {"kind": "fixed", "reason": "arm-removed", "dtypes": []}


def test_a_panic_whose_file_moved_to_another_crate_and_was_rewritten_is_followed_not_removed(cli, git_repo):
    """Moved to another crate in one commit, the file rewritten around the call in the next: the
    lineage continues the site, so history shows it moved, never fixed or removed."""
    repo = _interp_moved_to_another_crate(git_repo)
    rewritten = "use crate::kernels::*;\n\n// Interpolation of images.\n" + INTERP_V1.replace("nearest(x)", "kernels::nearest(x)")
    repo.write("crates/burn-b/src/interp.rs", rewritten, dedent=False)
    repo.commit("rewrite around it")
    repo.git("tag", "v0.2.0")
    doc = history_json(cli, repo)
    bicubic = lineage_of(doc, "bicubic interpolation is not supported here")
    assert bicubic["removedIn"] is None and bicubic["lastSeen"] == "v0.2.0"
    assert bicubic["site"]["filePath"] == "crates/burn-b/src/interp.rs"
    assert [e["kind"] for e in bicubic["events"]] == ["added", "moved"]


def test_a_release_spelled_with_and_without_its_trailing_zero_is_one_release(git_repo):
    """`v0.13` and `v0.13.0` name the same release: a range ending at either takes both tags, one
    starting at either takes both, and they sort side by side before v0.13.1."""
    for name in ("v0.12.0", "v0.13", "v0.13.0", "v0.13.1", "v0.14.0"):
        git_repo.write("crates/burn-x/src/lib.rs", f"// {name}\n")
        git_repo.commit()
        git_repo.git("tag", name)
    repo = open_repository(str(git_repo.path), None)
    assert [t.name for t in release_tags(repo)] == ["v0.12.0", "v0.13", "v0.13.0", "v0.13.1", "v0.14.0"]
    assert [p.label for p in plan(repo, to_rev="v0.13").revisions] == ["v0.12.0", "v0.13", "v0.13.0"]
    assert [p.label for p in plan(repo, to_rev="v0.13.0").revisions] == ["v0.12.0", "v0.13", "v0.13.0"]
    assert [p.label for p in plan(repo, from_rev="v0.13.0", to_rev="v0.13.1").revisions] == [
        "v0.13.0", "v0.13", "v0.13.1"]


def _drop_object(repo, sha: str) -> None:
    """Delete a loose object, as a partial or snapshot clone lacks it."""
    (repo.path / ".git" / "objects" / sha[:2] / sha[2:]).unlink()


def test_a_clone_without_the_commits_between_two_releases_reads_renames_from_the_two_trees(cli, git_repo):
    """The commit that moved the file is missing (a partial, shallow or snapshot clone): the walk
    over the range cannot run, so renames come from the two trees' diff, a note says so, and the
    arm implemented in the moved file is still judged fixed, not gone with its file."""
    repo = _interp_moved_to_another_crate(git_repo)
    middle = repo.git("rev-parse", "HEAD")
    repo.write("crates/burn-b/src/interp.rs", INTERP_FIXED, dedent=False)
    repo.commit("bicubic")
    repo.git("tag", "v0.2.0")
    _drop_object(repo, middle)
    with pytest.raises(subprocess.CalledProcessError):
        repo.git("log", "--format=%H", "v0.1.0..v0.2.0")  # the walk git would do cannot run
    res = run_history(cli, repo, "--format", "json")
    assert res.code == 0, res.stderr
    bicubic = lineage_of(json.loads(res.stdout), "bicubic interpolation is not supported here")
    assert bicubic["removedIn"] == "v0.2.0"
    assert bicubic["removal"] == {"kind": "fixed", "reason": "arm-removed", "dtypes": []}
    [note] = [ln for ln in res.stderr.splitlines() if ln.startswith("note: the repository lacks commits")]
    assert "v0.1.0 .. v0.2.0" in note and "git diff -M" in note


def test_renames_between_falls_back_to_the_two_trees_only_when_the_walk_cannot_run(git_repo):
    repo = _interp_moved_to_another_crate(git_repo)
    middle = repo.git("rev-parse", "HEAD")
    repo.write("crates/burn-b/src/interp.rs", INTERP_FIXED, dedent=False)
    repo.commit("bicubic")
    repo.git("tag", "v0.2.0")
    whole = open_repository(str(repo.path), None)
    moved = [("crates/burn-a/src/interp.rs", "crates/burn-b/src/interp.rs")]
    assert whole.renames_between("v0.1.0", "v0.2.0", "*.rs") == moved and whole.renames_from_trees == []
    _drop_object(repo, middle)
    partial = open_repository(str(repo.path), None)
    assert partial.renames_between("v0.1.0", "v0.2.0", "*.rs") == moved
    assert partial.renames_from_trees == [("v0.1.0", "v0.2.0")]


def test_a_whole_clone_walks_the_commits_and_says_nothing_of_trees(cli, git_repo):
    repo = _interp_moved_to_another_crate(git_repo)
    repo.git("tag", "v0.2.0")
    res = run_history(cli, repo, "--format", "json")
    assert res.code == 0, res.stderr
    assert "lacks commits" not in res.stderr


def test_markdown_tables_render_as_tables_of_one_width(cli, releases):
    """Every table the notes mean renders as one (none run into one line), each row as wide as
    its header, the revisions table one row per revision."""
    from markdown_tables import rendered_tables, table_starts

    repo, _ = releases
    res = run_history(cli, repo, "--format", "markdown")
    assert res.code == 0, res.stderr
    md = res.stdout
    tables = rendered_tables(md)
    assert len(tables) == table_starts(md) > 1
    for rows in tables:
        assert len({len(r) for r in rows}) == 1, rows
    revisions = tables[0]
    assert revisions[0][:3] == ["Revision", "Date", "Records"]
    assert [r[0] for r in revisions[1:]] == ["v0.1.0", "v0.2.0", "v0.3.0", "HEAD"]
