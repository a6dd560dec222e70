"""Lineage (analyzer/lineage/): a site keeps the id it had, across refactors that do not change
the error, when the earlier records are the published ones (envelopes, no analysis, the
publisher's ids) or the tool's own; and `diff` matches the same way."""

from __future__ import annotations

import json

import pytest
from conftest import extract_by_message
from published import annotation_for, line_of, published_record, write_envelope_folder

from analyzer.records.ids import arm_slot, site_key
from analyzer.lineage.carry import carry_over
from analyzer.lineage.gitdiff import follow_line, parse_diff
from analyzer.lineage.link import Lineage, Link
from analyzer.lineage.link import link
from analyzer.records.model import RecordLine
from targets import RUN

OPS_PATH = "crates/burn-ndarray/src/ops/module.rs"

OPS = '''\
use burn_std::DType;

use crate::{NdTensor, ScaleKind, QuantScheme};

/// Module operations of the ndarray backend.
impl<E: FloatElement, I: IntElement, Q: QuantElement> ModuleOps<Self> for NdArray<E, I, Q> {
    fn avg_pool3d(x: NdTensor, size: [usize; 3]) -> NdTensor {
        match x.dtype() {
            DType::F32 => avg_pool3d_f32(x, size),
            DType::F64 => avg_pool3d_f64(x, size),
            other => panic!("avg_pool3d: dtype {:?} has no kernel", other),
        }
    }

    fn scale_bytes(scheme: QuantScheme) -> usize {
        match scheme.scale {
            ScaleKind::F32 => 4,
            ScaleKind::E4M3 => unimplemented!("E4M3 scales are not supported by ndarray quantization"),
        }
    }
}
'''

POOL_MSG = "avg_pool3d: dtype {:?} has no kernel"
SCALE_MSG = "not implemented: E4M3 scales are not supported by ndarray quantization"
POOL_ID, SCALE_ID = "a1b2c3d4e5f60718", "0f1e2d3c4b5a6978"  # the publisher's, not structural
POOL_TAGS = ["rust", "burn", "ndarray", "unsupported-dtype", "pooling", "volumetric"]
SCALE_TAGS = ["rust", "burn", "ndarray", "unsupported-op-backend", "quantization"]
ABSENT_SHA = "0123456789abcdef0123456789abcdef01234567"

# The refactors that must not cost a record its id: (name, new path, new text).
REFACTORS = {
    "line-moved": (OPS_PATH, "// Licensed under MIT or Apache-2.0.\n// See the top-level notice.\n\n"
                   + OPS.replace("    fn avg_pool3d(", "    /// 3-D average pooling.\n    /// Row-major input.\n"
                                 "    fn avg_pool3d(")),
    "impl-generics-changed": (OPS_PATH, OPS.replace(
        "impl<E: FloatElement, I: IntElement, Q: QuantElement> ModuleOps<Self> for NdArray<E, I, Q> {",
        "impl ModuleOps<Self> for NdArray {")),
    "enum-renamed-in-arm": (OPS_PATH, OPS.replace("ScaleKind", "ScaleFormat")),
    "file-renamed": ("crates/burn-ndarray/src/ops/pooling.rs", OPS),
    "scrutinee-rewritten": (OPS_PATH, OPS.replace("match x.dtype() {", "match x.elem_type() {")
                            .replace("match scheme.scale {", "match scheme.scale_format() {")),
}

# The refactors that change a record's content (its arm pattern, its scrutinee), by message.
CONTENT_CHANGED = {"enum-renamed-in-arm": (SCALE_MSG,), "scrutinee-rewritten": (POOL_MSG, SCALE_MSG),
                   "previous-sha-absent": (SCALE_MSG,)}


def _published(sha: str) -> list[dict]:
    return [
        published_record(rid=POOL_ID, text=OPS, path=OPS_PATH, needle="avg_pool3d: dtype", message=POOL_MSG,
                         sha=sha, background="unsupported-dtype", tags=POOL_TAGS,
                         annotation=annotation_for("avg_pool3d")),
        published_record(rid=SCALE_ID, text=OPS, path=OPS_PATH, needle="E4M3 scales", message=SCALE_MSG,
                         sha=sha, background="unsupported-op-backend", tags=SCALE_TAGS,
                         annotation=annotation_for("E4M3 scales")),
    ]


@pytest.mark.parametrize("refactor", [*REFACTORS, "previous-sha-absent"])
def test_published_record_keeps_id_slug_annotations_and_tags(cli, git_repo, tmp_path, refactor):
    git_repo.crate("burn-ndarray", {"src/ops/module.rs": OPS})
    first = git_repo.commit()
    published = _published(ABSENT_SHA if refactor == "previous-sha-absent" else first)
    folder = write_envelope_folder(tmp_path / "dataset", published)

    if refactor == "previous-sha-absent":  # several refactors at once, and no history to follow
        path, text = OPS_PATH, REFACTORS["line-moved"][1].replace(
            "impl<E: FloatElement, I: IntElement, Q: QuantElement> ModuleOps<Self> for NdArray<E, I, Q> {",
            "impl<E: FloatElement> ModuleOps<Self> for NdArray<E> {").replace("ScaleKind", "ScaleFormat")
    else:
        path, text = REFACTORS[refactor]
    if path != OPS_PATH:
        git_repo.git("mv", OPS_PATH, path)
    git_repo.write(path, text, dedent=False)
    git_repo.commit()
    after = extract_by_message(cli, git_repo, tmp_path / "out", previous=folder)

    for old in published:
        new = after[old["errorMessage"]]
        rec, an = new["record"], new["analysis"]
        assert rec["id"] == old["id"] and rec["slug"] == old["slug"]
        assert rec["filePath"] == path
        assert rec["lineNumber"] == line_of(text, old["errorMessage"].removeprefix("not implemented: ")[:12])
        assert rec["tags"][:len(old["tags"])] == old["tags"]  # the annotator's tags, then the tool's
        if old["errorMessage"] in CONTENT_CHANGED.get(refactor, ()):
            # The published record's content, read at its commit or from its window, tells that
            # its arm pattern or scrutinee changed: back to annotation, as a record of the tool's.
            assert an["annotationStatus"] == "changed" and rec["documentation"] is None
            assert rec["contentChangedAt"] != old["contentChangedAt"]
        else:
            assert {k: rec[k] for k in annotation_for("x")} == {k: old[k] for k in annotation_for("x")}
            assert rec["contentChangedAt"] == old["contentChangedAt"]
            assert an["annotationStatus"] == "unchanged"
        assert an["firstSeenSha"] == old["analyzedSha"] and an["firstSeenAt"] == old["analyzedAt"]
        assert an["lineage"] != "new"
        if refactor == "previous-sha-absent":
            assert an["lineage"] != "history"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["lineage"]["notFound"] == 0 and manifest["lineage"]["notFoundRecords"] == []
    assert sum(manifest["lineage"][t] for t in ("id", "history", "function", "message", "window")) == 2


def test_history_follows_a_line_rewritten_in_place_and_a_renamed_file(cli, git_repo, tmp_path):
    """With the earlier commit in the repository, the line is followed through git: the enum
    rename rewrites the arm's line in place, the rename moves the file."""
    git_repo.crate("burn-ndarray", {"src/ops/module.rs": OPS})
    first = git_repo.commit()
    folder = write_envelope_folder(tmp_path / "dataset", _published(first))
    git_repo.git("mv", OPS_PATH, "crates/burn-ndarray/src/ops/pooling.rs")
    git_repo.write("crates/burn-ndarray/src/ops/pooling.rs", "\n" + OPS.replace("ScaleKind", "ScaleFormat"),
                   dedent=False)
    git_repo.commit()
    after = extract_by_message(cli, git_repo, tmp_path / "out", previous=folder)
    assert {after[m]["analysis"]["lineage"] for m in (POOL_MSG, SCALE_MSG)} == {"history"}


def test_lost_records_are_listed_and_new_sites_get_structural_ids(cli, git_repo, tmp_path):
    git_repo.crate("burn-ndarray", {"src/ops/module.rs": OPS})
    first = git_repo.commit()
    folder = write_envelope_folder(tmp_path / "dataset", _published(first))
    # The scale site is fixed (its arm now handled); a new site appears in another function.
    text = OPS.replace('ScaleKind::E4M3 => unimplemented!("E4M3 scales are not supported by ndarray '
                       'quantization"),', "ScaleKind::E4M3 => 1,")
    text = text.replace("    fn scale_bytes(", '''    fn max_pool1d(x: NdTensor) -> NdTensor {
        match x.dtype() {
            DType::F32 => max_pool1d_f32(x),
            other => panic!("max_pool1d: dtype {:?} has no kernel", other),
        }
    }

    fn scale_bytes(''')
    git_repo.write(OPS_PATH, text, dedent=False)
    git_repo.commit()
    after = extract_by_message(cli, git_repo, tmp_path / "out", previous=folder)
    assert set(after) == {POOL_MSG, "max_pool1d: dtype {:?} has no kernel"}
    new = after["max_pool1d: dtype {:?} has no kernel"]
    assert new["analysis"]["lineage"] == "new" and new["record"]["id"] not in (POOL_ID, SCALE_ID)
    assert new["analysis"]["firstSeenSha"] == git_repo.git("rev-parse", "HEAD")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["lineage"]["notFound"] == 1 and manifest["lineage"]["new"] == 1
    (lost,) = manifest["lineage"]["notFoundRecords"]
    assert lost == {"id": SCALE_ID, "filePath": OPS_PATH, "lineNumber": line_of(OPS, "E4M3 scales"),
                    "errorMessage": SCALE_MSG}
    assert manifest["annotation"] == {"new": 1, "changed": 0, "unchanged": 1, "dropped": 1}


def test_first_seen_is_carried_across_runs_of_the_tools_own_records(cli, git_repo, tmp_path):
    git_repo.crate("burn-ndarray", {"src/ops/module.rs": OPS})
    first = git_repo.commit()
    a = extract_by_message(cli, git_repo, tmp_path / "a")
    assert {ln["analysis"]["firstSeenSha"] for ln in a.values()} == {first}
    git_repo.write(OPS_PATH, "\n" + OPS, dedent=False)
    git_repo.commit()
    b = extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    git_repo.write(OPS_PATH, "\n\n" + OPS.replace("ScaleKind", "ScaleFormat"), dedent=False)
    git_repo.commit()
    c = extract_by_message(cli, git_repo, tmp_path / "c", previous=tmp_path / "b" / "records.jsonl")
    for msg in (POOL_MSG, SCALE_MSG):
        assert c[msg]["analysis"]["firstSeenSha"] == first
        assert c[msg]["analysis"]["firstSeenAt"] == a[msg]["record"]["analyzedAt"]
        assert c[msg]["record"]["id"] == b[msg]["record"]["id"] == a[msg]["record"]["id"]
    # The enum rename changes the arm pattern: content, so the record goes back to annotation.
    assert c[SCALE_MSG]["analysis"]["annotationStatus"] == "changed"
    assert c[POOL_MSG]["analysis"]["annotationStatus"] == "unchanged"


def test_structural_id_ignores_impl_generics_and_enum_paths():
    path = "impl ModuleOps<Self> for NdArray<E, I, Q>::fn avg_pool3d"
    assert site_key("burn-ndarray", path, "x.dtype()", "_") == site_key(
        "burn-ndarray", "impl ModuleOps<Self> for NdArray::fn avg_pool3d", "x.dtype()", "_")
    # The trait's own parameters still tell two impls apart.
    assert site_key("c", "impl From<f32> for Scale::fn from", "v", "_") != site_key(
        "c", "impl From<f64> for Scale::fn from", "v", "_")
    assert arm_slot("ScaleKind::E4M3 | ScaleKind::E5M2", False) == arm_slot("ScaleFormat::E4M3", False) == "E4M3"


def test_a_guard_added_to_an_arm_keeps_the_structural_id(cli, git_repo, tmp_path):
    """The id is computed afresh (no earlier records to follow): an arm that gains a guard, or
    whose guard is rewritten, is the same slot, so the record keeps its id without lineage."""
    assert arm_slot("DType::F16 if !x.is_contiguous()", False) == arm_slot("DType::F16", False) == "F16"
    assert arm_slot("DType::F16 | DType::BF16 if half", False) == "F16"
    before = """\
        pub fn cumsum(x: Tensor) -> Tensor {
            match x.dtype() {
                DType::F32 => cumsum_f32(x),
                DType::F16 => panic!("cumsum: f16 is not supported"),
                _ => cumsum_any(x),
            }
        }
        """
    git_repo.crate("burn-flex", {"src/ops.rs": before})
    git_repo.commit()
    first = extract_by_message(cli, git_repo, tmp_path / "a")
    git_repo.write("crates/burn-flex/src/ops.rs", before.replace("DType::F16 =>", "DType::F16 if x.rank() > 1 =>"))
    git_repo.commit()
    second = extract_by_message(cli, git_repo, tmp_path / "b")
    message = "cumsum: f16 is not supported"
    assert second[message]["analysis"]["pattern"] != first[message]["analysis"]["pattern"]
    assert second[message]["record"]["id"] == first[message]["record"]["id"]


def test_diff_reports_refactors_as_changed_or_moved_never_removed_and_added(cli, git_repo, tmp_path):
    git_repo.crate("burn-ndarray", {"src/ops/module.rs": OPS})
    base = git_repo.commit()
    text = REFACTORS["scrutinee-rewritten"][1].replace(
        "impl<E: FloatElement, I: IntElement, Q: QuantElement> ModuleOps<Self> for NdArray<E, I, Q> {",
        "impl ModuleOps<Self> for NdArray {").replace("ScaleKind", "ScaleFormat")
    git_repo.git("mv", OPS_PATH, "crates/burn-ndarray/src/ops/pooling.rs")
    git_repo.write("crates/burn-ndarray/src/ops/pooling.rs", text, dedent=False)
    head = git_repo.commit()
    res = cli("diff", base, head, "--repo", str(git_repo.path), "--format", "json")
    assert res.code == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["added"] == [] and d["removed"] == []
    fields = {c["head"]["message"]: c["fields"] for c in d["changed"]}
    assert fields[POOL_MSG] == ["scrutinee", "file"]
    assert fields[SCALE_MSG] == ["scrutinee", "pattern", "rejected", "file"]
    # --fail-on changed fails on exactly those content changes.
    res = cli("diff", base, head, "--repo", str(git_repo.path), "--fail-on", "changed")
    assert res.code == 1 and "2 changed" in res.stderr


def test_diff_and_previous_agree_on_a_handled_dtype_that_grew(cli, git_repo, tmp_path):
    """The one definition of a content change: a new handled dtype is `changed` for diff (and
    fails --fail-on changed), and sends the record back to annotation with --previous."""
    git_repo.crate("burn-ndarray", {"src/ops/module.rs": OPS})
    base = git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    git_repo.write(OPS_PATH, OPS.replace("            DType::F64 => avg_pool3d_f64(x, size),\n",
                                         "            DType::F64 => avg_pool3d_f64(x, size),\n"
                                         "            DType::F16 => avg_pool3d_f16(x, size),\n"), dedent=False)
    head = git_repo.commit()
    res = cli("diff", base, head, "--repo", str(git_repo.path), "--format", "json", "--fail-on", "changed")
    assert res.code == 1
    (change,) = json.loads(res.stdout)["changed"]
    assert change["fields"] == ["handled", "rejected", "line"]
    after = extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    assert after[POOL_MSG]["analysis"]["annotationStatus"] == "changed"
    assert after[SCALE_MSG]["analysis"]["annotationStatus"] == "unchanged"


def test_parse_diff_and_follow_line(git_repo):
    git_repo.write("a.rs", "".join(f"line {i}\n" for i in range(1, 21)), dedent=False)
    old = git_repo.commit()
    text = "".join(f"line {i}\n" for i in range(1, 21))
    text = "new top\nnew top 2\n" + text.replace("line 10\n", "line ten\n").replace(
        "line 15\nline 16\n", "line 15a\nline 15b\nline 15c\n")
    git_repo.git("mv", "a.rs", "b.rs")
    git_repo.write("b.rs", text, dedent=False)
    new = git_repo.commit()
    from analyzer.source.repository import open_repository
    changes = parse_diff(open_repository(str(git_repo.path), None).diff_text(old, new, "*.rs"))
    change = changes["a.rs"]
    assert change.new_path == "b.rs"
    assert follow_line(change, "a.rs", 5) == ("b.rs", 7, 7)  # two lines added above
    assert follow_line(change, "a.rs", 10) == ("b.rs", 12, 12)  # rewritten: the line that replaced it
    assert follow_line(change, "a.rs", 15) == ("b.rs", 17, 19)  # two lines became three
    assert follow_line(change, "a.rs", 20) == ("b.rs", 23, 23)
    assert follow_line(changes.get("c.rs"), "c.rs", 4) == ("c.rs", 4, 4)  # untouched file


def test_changed_lines_are_never_read_as_diff_headers(git_repo):
    # Removed and added lines that begin `-- ` and `++ ` read `--- ` and `+++ ` in a diff; the
    # file after them keeps its own hunks, and a last line without a newline is passed over too.
    git_repo.write("a.rs", "keep\n-- old\nkeep\n", dedent=False)
    git_repo.write("z.rs", "one\ntwo", dedent=False)
    old = git_repo.commit()
    git_repo.write("a.rs", "keep\n++ new\nkeep\n", dedent=False)
    git_repo.write("z.rs", "one\n2\nthree", dedent=False)
    new = git_repo.commit()
    from analyzer.source.repository import open_repository
    changes = parse_diff(open_repository(str(git_repo.path), None).diff_text(old, new, "*.rs"))
    assert sorted(changes) == ["a.rs", "z.rs"]
    assert (changes["a.rs"].new_path, changes["a.rs"].hunks) == ("a.rs", [(2, 1, 2, 1)])
    assert (changes["z.rs"].new_path, changes["z.rs"].hunks) == ("z.rs", [(2, 1, 2, 2)])


def test_file_changes_are_the_whole_diff_narrowed_to_the_files_asked_for(git_repo):
    """Only the files that hold earlier records are diffed; renames are still found across the
    whole tree, and a path with glob characters is taken literally."""
    from analyzer.lineage.gitdiff import file_changes
    from analyzer.source.repository import open_repository
    def body(name: str) -> str:
        return "".join(f"fn {name}{i}() {{ todo!() }}\n" for i in range(30))
    for name in ("moved", "edited", "gone", "same", "[x]", "x", "other"):
        git_repo.write(f"src/{name}.rs", body(name.strip("[]") + "_"), dedent=False)
    old = git_repo.commit()
    git_repo.git("mv", "src/moved.rs", "src/elsewhere.rs")
    git_repo.write("src/elsewhere.rs", "// moved\n" + body("moved_"), dedent=False)
    git_repo.write("src/edited.rs", body("edited_").replace("edited_3()", "edited_3b()"), dedent=False)
    git_repo.remove("src/gone.rs")
    git_repo.write("src/[x].rs", "// edited\n" + body("x_"), dedent=False)
    git_repo.write("src/other.rs", "// not asked for\n" + body("other_"), dedent=False)
    new = git_repo.commit()
    repo = open_repository(str(git_repo.path), None)
    asked = {"src/moved.rs", "src/edited.rs", "src/gone.rs", "src/same.rs", "src/[x].rs", "src/x.rs"}
    whole = parse_diff(repo.diff_text(old, new, "*.rs"))
    diffed: list[tuple[str, ...]] = []
    real = repo.diff_text
    repo.diff_text = lambda a, b, *paths: diffed.append(paths) or real(a, b, *paths)  # type: ignore[method-assign]
    narrowed = file_changes(repo, old, new, asked)
    assert diffed == [tuple(f":(literal)src/{n}.rs" for n in ("[x]", "edited", "elsewhere", "gone", "moved"))]
    assert narrowed == {path: change for path, change in whole.items() if path in asked}
    assert narrowed["src/moved.rs"].new_path == "src/elsewhere.rs" and narrowed["src/gone.rs"].new_path is None
    assert "src/x.rs" not in narrowed and "src/same.rs" not in narrowed  # unchanged
    assert narrowed["src/[x].rs"].hunks == [(0, 0, 1, 1)]


def _line(rid: str, message: str, line: int) -> RecordLine:
    return RecordLine.model_validate({"record": _plain_record(rid, message, line)})


def _plain_record(rid: str, message: str, line: int) -> dict:
    return {"id": rid, "repo": "o/n", "slug": "s-" + rid[:6], "errorCode": None, "errorMessage": message,
            "messagePattern": message, "errorType": "panic", "errorClass": None, "httpStatus": None,
            "severity": "error", "filePath": "crates/c/src/lib.rs", "lineNumber": line,
            "sourceCode": "fn f() {", "sourceCodeStart": line, "sourceCodeEnd": line,
            "githubUrl": "https://github.com/o/n/blob/x", **{k: None for k in annotation_for("x")},
            "tags": ["rust"], "backgroundTag": "unsupported-dtype", "analyzedSha": "1" * 40,
            "analyzedAt": "2026-01-01T00:00:00.000Z", "contentChangedAt": "2026-01-01T00:00:00.000Z",
            "schemaVersion": 2}


def test_a_new_site_never_takes_an_id_a_carried_record_keeps():
    """An earlier record found again keeps its id even when that is a new site's structural id:
    the new site then gets another id, so two sites never share one."""
    previous = [_line("aaaaaaaaaaaaaaaa", "first", 3)]
    current = [RecordLine.model_validate({"record": _plain_record("bbbbbbbbbbbbbbbb", "first", 4),
                                          "analysis": _analysis()}),
               RecordLine.model_validate({"record": _plain_record("aaaaaaaaaaaaaaaa", "second", 9),
                                          "analysis": _analysis()})]
    carried = carry_over(previous, current, Lineage([Link(0, 0, "window")], lost=[], new=[1]))
    ids = [ln.record.id for ln in carried.lines]
    assert ids[0] == "aaaaaaaaaaaaaaaa" and ids[1] not in ("aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb")
    assert carried.lines[1].record.slug.endswith(ids[1][:6])


def _analysis() -> dict:
    return {"category": "dtype-dispatch", "macro": "panic", "crate": "c", "function": "f", "scrutinee": "x",
            "pattern": "_", "messageRegex": "^x$", "operation": "f", "rule": "r", "contentHash": "h"}


def test_records_diff_follows_history_when_given_the_repository(cli, git_repo, tmp_path):
    """Two records files: with --repo, base lines are followed through git (a renamed function
    whose message was edited too); without it, only the record contents can pair them."""
    git_repo.crate("burn-ndarray", {"src/ops/module.rs": OPS})
    git_repo.commit()
    assert cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "a")).code == 0
    git_repo.write(OPS_PATH, OPS.replace("fn avg_pool3d(", "fn avg_pool3d_forward(")
                   .replace('"avg_pool3d: dtype {:?} has no kernel"', '"avg_pool3d: no kernel for dtype {:?}"'),
                   dedent=False)
    git_repo.commit()
    assert cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "b")).code == 0
    files = [str(tmp_path / "a" / "records.jsonl"), str(tmp_path / "b" / "records.jsonl")]

    with_repo = json.loads(cli("diff", *files, "--repo", str(git_repo.path), "--format", "json").stdout)
    without = json.loads(cli("diff", *files, "--format", "json").stdout)
    for d in (with_repo, without):
        assert d["added"] == [] and d["removed"] == []
        (change,) = d["changed"]
        assert change["fields"] == ["message"] and change["head"]["function"] == "avg_pool3d_forward"
    assert with_repo["changed"][0]["lineage"] == "history"
    assert without["changed"][0]["lineage"] == "window"


def test_a_site_whose_crate_was_renamed_keeps_its_id_by_function_and_message(cli, git_repo, tmp_path):
    """The crate renamed and its file rewritten around the site, the earlier commit unknown: no
    history, no window in the same file or crate; the same function and message, unique in each
    tree, still find it."""
    git_repo.crate("burn-ndarray", {"src/ops/module.rs": OPS})
    git_repo.commit()
    folder = write_envelope_folder(tmp_path / "dataset", _published(ABSENT_SHA))
    git_repo.git("rm", "-r", "-q", "crates/burn-ndarray")
    moved = "// The CPU backend, split out of the ndarray crate.\n\n" + OPS.replace("NdTensor", "CpuTensor")
    git_repo.crate("burn-cpu", {"src/module_ops.rs": moved})
    git_repo.commit()
    after = extract_by_message(cli, git_repo, tmp_path / "out", previous=folder)
    for rid, message in ((POOL_ID, POOL_MSG), (SCALE_ID, SCALE_MSG)):
        rec, an = after[message]["record"], after[message]["analysis"]
        assert rec["id"] == rid and rec["filePath"] == "crates/burn-cpu/src/module_ops.rs"
        assert an["lineage"] == "function" and an["crate"] == "burn-cpu"


def _windowed(rid: str, line: int, window: list[str]) -> RecordLine:
    """A record in the published form (no analysis) whose source window is `window`, with the
    panic on the window's line that holds `panic!`."""
    at = next(i for i, text in enumerate(window) if "panic!" in text)
    return RecordLine.model_validate({"record": {
        **_plain_record(rid, "dtype not supported", line), "sourceCode": "\n".join(window),
        "sourceCodeStart": line - at, "sourceCodeEnd": line - at + len(window) - 1}})


def test_the_key_tiers_look_again_after_the_windows_paired_some():
    """Two sites with one message in one file on each side: the key `file and message` is shared
    by two, so it pairs nothing at first. The window tier pairs the pair whose windows agree (its
    function was renamed, so no function key pairs it); the other pair's windows differ, but the
    message key is unique once the first pair is taken, and the last pass pairs it."""
    kept = ["    let shape = x.shape();", "    let strides = x.strides();", "    match x.dtype() {",
            "        DType::F32 => run_f32(x),", '        _ => panic!("dtype not supported"),', "    }"]
    previous = [_windowed("aaaaaaaaaaaaaaaa", 20, ["fn conv(x: Tensor) {", *kept]),
                _windowed("bbbbbbbbbbbbbbbb", 60, ["fn pool(a: Tensor) {", "    if a.is_empty() {",
                                                   '        panic!("dtype not supported")', "    }"])]
    current = [_windowed("cccccccccccccccc", 22, ["fn conv_forward(x: Tensor) {", *kept]),
               _windowed("dddddddddddddddd", 70, ["fn pool2d(input: Tensor, k: usize) -> Tensor {",
                                                  "    let size = k * k;", "    assert_ne!(size, 0);",
                                                  '    panic!("dtype not supported")'])]
    result = link(previous, current, run=RUN)
    assert {(k.previous, k.current): k.tier for k in result.links} == {(0, 0): "window", (1, 1): "message"}
    assert result.lost == [] and result.new == []


def test_the_no_newline_marker_is_not_counted_as_a_changed_line(git_repo):
    # `\ No newline at end of file` after the removed last line is no line of the hunk: counted as
    # one, the hunk's real last added line (`++ three`, read `+++ three` in the diff) would be
    # read as the next file's header.
    git_repo.write("z.rs", "one\ntwo", dedent=False)
    old = git_repo.commit()
    git_repo.write("z.rs", "one\n2\n++ three", dedent=False)
    new = git_repo.commit()
    from analyzer.source.repository import open_repository
    text = open_repository(str(git_repo.path), None).diff_text(old, new, "*.rs")
    assert "-two\n\\ No newline at end of file\n+2\n+++ three\n" in text
    changes = parse_diff(text)
    assert sorted(changes) == ["z.rs"]
    assert (changes["z.rs"].new_path, changes["z.rs"].hunks) == ("z.rs", [(2, 1, 2, 2)])
