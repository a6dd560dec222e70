"""Sites that share a structural key in one file (catch-alls of nested matches on one scrutinee
in one function) are told apart by their order in the file. When one of them stops being a
record, the others keep their own ids through `extract --previous`, and the one that left is
listed as dropped: its id is never handed to a sibling that stays."""

from __future__ import annotations

import json

from conftest import DTYPE_RS, read_records
from test_lineage import _analysis, _line, _plain_record

from analyzer.lineage.carry import carry_over
from analyzer.lineage.link import Lineage
from analyzer.records.model import RecordLine

PATH = "crates/burn-fuse/src/write.rs"


def _arm(dtype: str, ends: str) -> str:
    return (f"        DType::{dtype} => match input.dtype() {{\n"
            f"            DType::{dtype} => write_{dtype.lower()}(op),\n"
            f"            {ends}\n"
            f"        }},\n")


PANIC = '_ => panic!("fuse: unsupported input {:?}", input.dtype()),'
HANDLED = "_ => write_any(op),"


def _source(middle: str) -> str:
    return ("use burn_std::DType;\n\n"
            "pub fn fuse(op: Op, out: Tensor, input: Tensor) {\n"
            "    match out.dtype() {\n"
            + _arm("F32", PANIC) + _arm("F16", middle) + _arm("I32", PANIC)
            + "        _ => write_any(op),\n"
            "    }\n"
            "}\n")


def _extract(cli, git_repo, out, previous=None) -> list[dict]:
    args = ["extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(out)]
    if previous is not None:
        args += ["--previous", str(previous)]
    res = cli(*args)
    assert res.code == 0, res.stderr
    return sorted((ln for ln in read_records(out) if ln["record"]["filePath"] == PATH),
                  key=lambda ln: ln["record"]["lineNumber"])


def test_the_siblings_that_stay_keep_their_ids_and_the_middle_one_is_dropped(cli, git_repo, tmp_path):
    git_repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    git_repo.crate("burn-fuse", {"src/write.rs": _source(PANIC)})
    git_repo.commit()
    before = _extract(cli, git_repo, tmp_path / "a")
    assert len(before) == 3
    # One structural key: the three differ by their order in the file alone.
    assert len({ln["analysis"]["alternateIds"][0] for ln in before}) == 1
    first, middle, last = before

    # The middle catch-all stops being a record; no line moves.
    git_repo.write(PATH, _source(HANDLED), dedent=False)
    git_repo.commit()
    plain = _extract(cli, git_repo, tmp_path / "plain")
    # Numbered afresh, the last site now holds the id the middle one had.
    assert [ln["record"]["id"] for ln in plain] == [first["record"]["id"], middle["record"]["id"]]

    after = _extract(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    assert [(ln["record"]["lineNumber"], ln["record"]["id"], ln["record"]["slug"]) for ln in after] == [
        (r["record"]["lineNumber"], r["record"]["id"], r["record"]["slug"]) for r in (first, last)]
    assert [ln["analysis"]["annotationStatus"] for ln in after] == ["unchanged", "unchanged"]
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["annotation"]["dropped"] == 1
    assert [(r["id"], r["lineNumber"]) for r in manifest["lineage"]["notFoundRecords"]] == [
        (middle["record"]["id"], middle["record"]["lineNumber"])]


def test_the_siblings_after_one_that_left_keep_their_ids_when_another_is_added(cli, git_repo, tmp_path):
    """The first sibling leaves and a new one is written after the last: the two that stay keep
    their ids (the middle one by its unchanged content, the last, whose neighbourhood changed,
    by its line's history), never the ids their new order would give them."""
    git_repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    git_repo.crate("burn-fuse", {"src/write.rs": _source(PANIC)})
    git_repo.commit()
    before = _extract(cli, git_repo, tmp_path / "a")
    end = "        _ => write_any(op),\n    }\n}"
    git_repo.write(PATH, _source(PANIC).replace(_arm("F32", PANIC), _arm("F32", HANDLED))
                   .replace(end, _arm("I64", PANIC) + end), dedent=False)
    git_repo.commit()
    after = _extract(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    assert len(after) == 3
    assert [(ln["record"]["id"], ln["analysis"]["lineage"]) for ln in after[:2]] == [
        (before[1]["record"]["id"], "id"), (before[2]["record"]["id"], "history")]


def test_a_new_site_never_takes_the_id_of_a_dropped_record():
    """An earlier record not found leaves its id unused: a new site whose structural id it is gets
    another one, so the dropped record's page never comes to show another error."""
    previous = [_line("aaaaaaaaaaaaaaaa", "gone", 3)]
    current = [RecordLine.model_validate({"record": _plain_record("aaaaaaaaaaaaaaaa", "other", 3),
                                          "analysis": _analysis()})]
    carried = carry_over(previous, current, Lineage([], lost=[0], new=[0]))
    assert carried.lines[0].record.id != "aaaaaaaaaaaaaaaa"
    assert carried.annotation["dropped"] == 1 and carried.annotation["new"] == 1
