"""`extract --previous`: every annotation it does not hand on (the record changed, or was not
found again) is written to annotations-not-carried.jsonl beside the records, with the earlier
record whole and why, and the summary counts them; `annotate export` offers them as drafts."""

from __future__ import annotations

import json

from conftest import extract_by_message

OPS = r'''
use burn_std::DType;

pub fn cumsum(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => cumsum_f32(x),
        other => panic!("cumsum: unsupported dtype {:?}", other),
    }
}

pub fn resize(x: Tensor, mode: ResizeMode) -> Tensor {
    match mode {
        ResizeMode::Linear => linear(x),
        ResizeMode::Area => unimplemented!("area resize is not supported"),
    }
}
'''

GATHER = r'''
pub fn gather(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => gather_f32(x),
        d => panic!("gather: unsupported dtype {:?}", d),
    }
}
'''

MODULE = "crates/burn-flex/src/ops/module.rs"
CUMSUM, GATHER_MSG = "cumsum: unsupported dtype {:?}", "gather: unsupported dtype {:?}"
RESIZE = "not implemented: area resize is not supported"


def _annotate(path, messages):
    """Write a distinct annotation into the records of `messages`, as an annotator editing the file would."""
    lines = [json.loads(raw) for raw in path.read_text().splitlines() if raw]
    for ln in lines:
        msg = ln["record"]["errorMessage"]
        if msg in messages:
            ln["record"]["documentation"] = f"Hours of work on {msg}."
            ln["record"]["solutions"] = [f"Avoid {msg}"]
    path.write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    return {ln["record"]["errorMessage"]: ln for ln in lines}


def _two_commits(git_repo, cli, tmp_path, annotated=(CUMSUM, GATHER_MSG, RESIZE)):
    git_repo.crate("burn-flex", {"src/ops/module.rs": OPS, "src/ops/gather.rs": GATHER})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    before = _annotate(tmp_path / "a" / "records.jsonl", set(annotated))
    # cumsum handles F64 now (its content changes); gather.rs goes away; resize stays as it was.
    git_repo.write(MODULE, OPS.replace("        DType::F32 => cumsum_f32(x),\n",
                                       "        DType::F32 => cumsum_f32(x),\n        DType::F64 => cumsum_f64(x),\n"))
    git_repo.remove("crates/burn-flex/src/ops/gather.rs")
    git_repo.commit()
    return before


def _not_carried(out):
    return [json.loads(raw) for raw in (out / "annotations-not-carried.jsonl").read_text().splitlines() if raw]


def test_changed_and_dropped_annotations_are_listed_with_their_text(cli, git_repo, tmp_path):
    before = _two_commits(git_repo, cli, tmp_path)
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "b"),
              "--previous", str(tmp_path / "a" / "records.jsonl"))
    assert res.code == 0, res.stderr

    entries = {e["record"]["errorMessage"]: e for e in _not_carried(tmp_path / "b")}
    assert set(entries) == {CUMSUM, GATHER_MSG}
    cumsum, gather = entries[CUMSUM], entries[GATHER_MSG]
    assert cumsum["why"] == "changed" and gather["why"] == "dropped"
    for msg, e in entries.items():
        old = before[msg]
        assert e["id"] == old["record"]["id"]
        assert e["record"] == old["record"]  # the earlier record whole, as it was
        assert e["annotations"] == {"documentation": f"Hours of work on {msg}.", "solutions": [f"Avoid {msg}"]}
        assert e["analysis"]["category"] == old["analysis"]["category"]
    assert "rejected" in cumsum["changes"]
    assert cumsum["now"]["id"] == cumsum["id"] and cumsum["now"]["errorMessage"] == CUMSUM
    assert "now" not in gather

    man = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert man["annotationsNotCarried"] == 2
    assert "annotations kept on 1 record, not carried on 2 (listed" in res.stderr
    assert str(tmp_path / "b" / "annotations-not-carried.jsonl") in res.stdout


def test_a_record_without_annotations_is_not_listed(cli, git_repo, tmp_path):
    _two_commits(git_repo, cli, tmp_path, annotated=(RESIZE,))
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "b"),
              "--previous", str(tmp_path / "a" / "records.jsonl"))
    assert res.code == 0, res.stderr
    # Written, and empty: the file beside the records always says what this run did not carry.
    assert (tmp_path / "b" / "annotations-not-carried.jsonl").read_text() == ""
    assert "not carried on 0;" in res.stderr and "listed with their text" not in res.stderr
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["annotationsNotCarried"] == 0


def test_without_previous_there_is_no_such_file(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": OPS})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    assert not (tmp_path / "a" / "annotations-not-carried.jsonl").exists()
    assert json.loads((tmp_path / "a" / "manifest.json").read_text())["annotationsNotCarried"] is None


def test_a_failed_run_leaves_the_earlier_list_as_it_was(cli, git_repo, tmp_path):
    _two_commits(git_repo, cli, tmp_path)
    out = tmp_path / "b"
    extract_by_message(cli, git_repo, out, previous=tmp_path / "a" / "records.jsonl")
    kept = (out / "annotations-not-carried.jsonl").read_text()
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "no-such-rev", "--out", str(out),
              "--previous", str(tmp_path / "a" / "records.jsonl"))
    assert res.code == 2
    assert (out / "annotations-not-carried.jsonl").read_text() == kept != ""


def test_annotate_export_offers_the_earlier_annotation_of_a_changed_record_as_a_draft(cli, git_repo, tmp_path):
    before = _two_commits(git_repo, cli, tmp_path)
    extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    res = cli("annotate", "export", str(tmp_path / "b" / "records.jsonl"), "--out", str(tmp_path / "ann"))
    assert res.code == 0, res.stderr
    rid = before[CUMSUM]["record"]["id"]
    prompt = (tmp_path / "ann" / f"{rid}.prompt.md").read_text()
    assert "A draft: the annotation of this error as it was" in prompt
    assert f"Hours of work on {CUMSUM}." in prompt and "`rejected`" in prompt
    # Offered to revise, never taken as the answer: the skeleton stays empty.
    skeleton = json.loads((tmp_path / "ann" / f"{rid}.json").read_text())
    assert skeleton["documentation"] is None
    [item] = json.loads((tmp_path / "ann" / "export.json").read_text())["items"]
    assert item["id"] == rid and item["draft"] is True
    assert "1 prompt of changed records offer" in res.stdout
    assert "1 annotation of records not found again stay in" in res.stdout


def test_annotate_export_without_the_file_offers_no_draft(cli, git_repo, tmp_path):
    before = _two_commits(git_repo, cli, tmp_path)
    extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    (tmp_path / "b" / "annotations-not-carried.jsonl").unlink()
    assert cli("annotate", "export", str(tmp_path / "b" / "records.jsonl"), "--out", str(tmp_path / "ann")).code == 0
    prompt = (tmp_path / "ann" / f"{before[CUMSUM]['record']['id']}.prompt.md").read_text()
    assert "A draft" not in prompt and "Hours of work" not in prompt


def test_a_drafts_file_of_another_shape_is_a_one_line_error(cli, git_repo, tmp_path):
    _two_commits(git_repo, cli, tmp_path)
    extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"why": "changed", "id": "x"}\n')
    res = cli("annotate", "export", str(tmp_path / "b" / "records.jsonl"), "--out", str(tmp_path / "ann"),
              "--drafts", str(bad))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1 and f"{bad}:1:" in res.stderr
    assert not (tmp_path / "ann").exists()
