"""`extract --previous RECORDS`: annotations survive re-extraction when a record's content did
not change, through the real command on fixture repositories.

"Content" is `record.content_changes()`: the message, category, macro, match scrutinee, arm pattern
and the handled/rejected dtypes; not the line, the window or the file. Which earlier record a site
continues is tests/test_lineage.py's subject.
"""

from __future__ import annotations

import json

from conftest import extract_by_message

OPS = r'''
use burn_std::DType;

pub struct Flex;

impl Flex {
    fn pool3d(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => pool3d_f32(x),
            DType::F64 => pool3d_f64(x),
            dtype => panic!("pool3d: unsupported dtype {:?}", dtype),
        }
    }

    fn cumsum(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => cumsum_f32(x),
            other => panic!("cumsum: unsupported dtype {:?}", other),
        }
    }

    fn resize(x: Tensor, mode: ResizeMode) -> Tensor {
        match mode {
            ResizeMode::Linear => linear(x),
            ResizeMode::Area => unimplemented!("area resize is not supported"),
        }
    }
}
'''

GATHER = r'''
fn gather(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => gather_f32(x),
        d => panic!("gather: unsupported dtype {:?}", d),
    }
}
'''

MODULE = "crates/burn-flex/src/ops/module.rs"


def _annotation(message: str) -> dict:
    """A distinct, complete annotation per record, so a mix-up between records would show."""
    return {
        "documentation": f"What {message!r} means.",
        "triggerScenarios": f"Calling the op behind {message!r}.",
        "commonSituations": "Porting a model between backends; config-driven dtypes.",
        "solutions": [f"Avoid {message!r}", "Cast first"],
        "exampleFix": "// before\nlet y = op(x);\n// after\nlet y = op(x.cast(DType::F32));",
        "handlingStrategy": "validation",
        "validationCode": "fn check(x: &Tensor) { assert!(x.dtype() == DType::F32); }",
        "typeGuard": None,
        "tryCatchPattern": "std::panic::catch_unwind(|| op(x))",
        "preventionTips": ["Check dtypes at startup"],
    }


def _annotate_all(out):
    """Annotate every record of OUT/records.jsonl in place, as an annotator would."""
    path = out / "records.jsonl"
    lines = [json.loads(raw) for raw in path.read_text().splitlines() if raw]
    for ln in lines:
        ln["record"].update(_annotation(ln["record"]["errorMessage"]))
    path.write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    return {ln["record"]["errorMessage"]: ln for ln in lines}


def _manifest_counts(out):
    return json.loads((out / "manifest.json").read_text())["annotation"]


def test_without_previous_every_record_is_new_and_the_manifest_has_no_counts(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": OPS})
    git_repo.commit()
    recs = extract_by_message(cli, git_repo, tmp_path / "a")
    assert len(recs) == 3
    assert {ln["analysis"]["annotationStatus"] for ln in recs.values()} == {"new"}
    assert _manifest_counts(tmp_path / "a") is None


def test_unchanged_records_keep_annotations_and_content_date_when_lines_move(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": OPS})
    git_repo.commit()
    first = extract_by_message(cli, git_repo, tmp_path / "a")
    annotated = _annotate_all(tmp_path / "a")

    # Lines inserted above every site and inside the functions (not in the arms): the window and
    # line numbers move, the content does not.
    moved = "// a licence header\n// that pushes everything down\n\n" + OPS.replace(
        "    fn cumsum(x: Tensor) -> Tensor {\n",
        "    /// Cumulative sum.\n    fn cumsum(x: Tensor) -> Tensor {\n        let _n = 1;\n")
    git_repo.write(MODULE, moved)
    git_repo.commit()
    second = extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")

    assert set(second) == set(first)
    for msg, ln in second.items():
        rec, old = ln["record"], annotated[msg]["record"]
        assert ln["analysis"]["annotationStatus"] == "unchanged"
        assert rec["id"] == old["id"]
        assert rec["lineNumber"] > old["lineNumber"] and rec["sourceCode"] != old["sourceCode"]
        assert {k: rec[k] for k in _annotation(msg)} == _annotation(msg)
        assert rec["contentChangedAt"] == old["contentChangedAt"]
        assert rec["analyzedAt"] != old["analyzedAt"]  # a new run, a new analysis time
    assert _manifest_counts(tmp_path / "b") == {"new": 0, "changed": 0, "unchanged": 3, "dropped": 0}


def test_a_new_dtype_arm_sends_the_record_back_to_annotation(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": OPS, "src/ops/gather.rs": GATHER})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    before = _annotate_all(tmp_path / "a")

    # cumsum now handles F64 too (its rejected dtypes change); gather.rs goes away; a new site comes.
    changed = OPS.replace("            DType::F32 => cumsum_f32(x),\n",
                          "            DType::F32 => cumsum_f32(x),\n            DType::F64 => cumsum_f64(x),\n")
    changed = changed.replace("impl Flex {\n", "impl Flex {\n" + r'''
    fn sort(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => sort_f32(x),
            d => panic!("sort: unsupported dtype {:?}", d),
        }
    }
''')
    git_repo.write(MODULE, changed)
    git_repo.remove("crates/burn-flex/src/ops/gather.rs")
    git_repo.commit()
    after = extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")

    cumsum = after["cumsum: unsupported dtype {:?}"]
    old = before["cumsum: unsupported dtype {:?}"]
    assert cumsum["record"]["id"] == old["record"]["id"]
    assert cumsum["analysis"]["annotationStatus"] == "changed"
    assert "F64" in cumsum["analysis"]["handled"] and "F64" in old["analysis"]["rejected"]
    assert cumsum["record"]["contentChangedAt"] == cumsum["record"]["analyzedAt"]
    assert cumsum["record"]["contentChangedAt"] != old["record"]["contentChangedAt"]
    assert all(cumsum["record"][k] is None for k in _annotation("x"))

    sort = after["sort: unsupported dtype {:?}"]
    assert sort["analysis"]["annotationStatus"] == "new"
    assert sort["record"]["documentation"] is None
    assert "gather: unsupported dtype {:?}" not in after
    for msg in ("pool3d: unsupported dtype {:?}", "not implemented: area resize is not supported"):
        assert after[msg]["analysis"]["annotationStatus"] == "unchanged"
        assert after[msg]["record"]["documentation"] == _annotation(msg)["documentation"]
    assert _manifest_counts(tmp_path / "b") == {"new": 1, "changed": 1, "unchanged": 2, "dropped": 1}


def test_content_date_survives_several_runs_and_moves_only_when_content_changes(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": OPS})
    git_repo.commit()
    a = extract_by_message(cli, git_repo, tmp_path / "a")
    git_repo.write(MODULE, OPS.replace("DType::F64 => pool3d_f64(x),", "DType::F16 => pool3d_f16(x),"))
    git_repo.commit()
    b = extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    git_repo.write(MODULE, "\n\n" + OPS.replace("DType::F64 => pool3d_f64(x),", "DType::F16 => pool3d_f16(x),"))
    git_repo.commit()
    c = extract_by_message(cli, git_repo, tmp_path / "c", previous=tmp_path / "b" / "records.jsonl")

    pool, resize = "pool3d: unsupported dtype {:?}", "not implemented: area resize is not supported"
    assert b[pool]["analysis"]["annotationStatus"] == "changed"
    assert c[pool]["analysis"]["annotationStatus"] == "unchanged"
    # changed at run b, unchanged since: the date is run b's
    assert c[pool]["record"]["contentChangedAt"] == b[pool]["record"]["analyzedAt"] != a[pool]["record"]["analyzedAt"]
    # never changed: still run a's date after two more runs
    assert c[resize]["record"]["contentChangedAt"] == a[resize]["record"]["analyzedAt"]
    assert c[resize]["record"]["analyzedAt"] != a[resize]["record"]["analyzedAt"]


def test_an_edited_message_marks_the_record_changed(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": OPS})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    _annotate_all(tmp_path / "a")
    git_repo.write(MODULE, OPS.replace('"pool3d: unsupported dtype {:?}"', '"pool3d: dtype {:?} is not supported"'))
    git_repo.commit()
    after = extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    edited = after["pool3d: dtype {:?} is not supported"]
    assert edited["analysis"]["annotationStatus"] == "changed"
    assert edited["record"]["documentation"] is None
    assert _manifest_counts(tmp_path / "b") == {"new": 0, "changed": 1, "unchanged": 2, "dropped": 0}


def test_a_broken_previous_file_is_a_clear_error_and_writes_nothing(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": OPS})
    git_repo.commit()
    prev = tmp_path / "prev.jsonl"
    prev.write_text('{"record": {"id": "nope"}}\n')
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "o"),
              "--previous", str(prev))
    assert res.code == 2
    assert f"{prev}:1:" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o" / "records.jsonl").exists()


def test_tags_an_annotator_added_are_kept_with_the_tools_own(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": OPS})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    path = tmp_path / "a" / "records.jsonl"
    lines = [json.loads(raw) for raw in path.read_text().splitlines() if raw]
    for ln in lines:
        ln["record"]["tags"] = ["pooling-and-scans", *ln["record"]["tags"]]
    path.write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    # pool3d now also handles F16: changed content, yet its tags stay.
    git_repo.write(MODULE, OPS.replace("            DType::F64 => pool3d_f64(x),\n",
                                       "            DType::F64 => pool3d_f64(x),\n            DType::F16 => pool3d_f16(x),\n"))
    git_repo.commit()
    after = extract_by_message(cli, git_repo, tmp_path / "b", previous=path)
    before = {ln["record"]["errorMessage"]: ln for ln in lines}
    for msg, ln in after.items():
        assert ln["record"]["tags"] == before[msg]["record"]["tags"]
    assert after["pool3d: unsupported dtype {:?}"]["analysis"]["annotationStatus"] == "changed"
