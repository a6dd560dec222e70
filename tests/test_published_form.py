"""Every command that reads records reads the published form too: a JSONL of envelopes
(`{"record": ..., "datasetVersion": ...}`, with or without `analysis`), one pretty-printed envelope
file, a folder of them, as well as the tool's own records.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import read_records
from published import annotation_for, envelope, published_record, write_envelope_folder

from analyzer.records.model import ErrorRecord, RecordLine
from analyzer.records import reader
from analyzer.sinks import jsonl

PATH = "crates/burn-candle/src/ops/tensor.rs"
OPS = '''\
use burn_std::DType;

impl<F: FloatCandleElement, I: IntCandleElement> FloatTensorOps<Self> for Candle<F, I> {
    fn float_cumprod(tensor: CandleTensor, dim: usize) -> CandleTensor {
        match tensor.dtype() {
            DType::F32 => cumprod_f32(tensor, dim),
            dtype => panic!("float_cumprod: candle has no kernel for {:?}", dtype),
        }
    }

    fn float_sort(tensor: CandleTensor, dim: usize) -> CandleTensor {
        match tensor.dtype() {
            DType::F32 | DType::F64 => sort(tensor, dim),
            other => panic!("float_sort: candle has no kernel for {:?}", other),
        }
    }
}
'''
CUMPROD = "float_cumprod: candle has no kernel for {:?}"
SORT = "float_sort: candle has no kernel for {:?}"


@pytest.fixture
def published(git_repo):
    git_repo.crate("burn-candle", {"src/ops/tensor.rs": OPS})
    sha = git_repo.commit()
    return [
        published_record(rid="c0ffee0000000001", text=OPS, path=PATH, needle="float_cumprod: candle",
                         message=CUMPROD, sha=sha, background="unsupported-dtype",
                         tags=["rust", "burn", "candle", "unsupported-dtype", "scan"],
                         annotation=annotation_for("float_cumprod")),
        published_record(rid="c0ffee0000000002", text=OPS, path=PATH, needle="float_sort: candle",
                         message=SORT, sha=sha, background="unsupported-dtype",
                         tags=["rust", "burn", "candle", "unsupported-dtype"]),
    ]


def _forms(tmp_path, records: list[dict]) -> dict:
    """The same records in each form a records file comes in."""
    jsonl_path = tmp_path / "envelopes.jsonl"
    jsonl_path.write_text("".join(json.dumps(envelope(r), separators=(",", ":")) + "\n" for r in records))
    single = tmp_path / "one.json"
    single.write_text(json.dumps(envelope(records[0]), indent=2) + "\n")
    array = tmp_path / "array.json"
    array.write_text(json.dumps([envelope(r) for r in records], indent=2))
    return {"jsonl": (jsonl_path, 2), "single": (single, 1), "array": (array, 2),
            "folder": (write_envelope_folder(tmp_path / "dataset", records), 2)}


@pytest.mark.parametrize("form", ["jsonl", "single", "array", "folder"])
def test_validate_reads_every_form(cli, tmp_path, published, form):
    path, n = _forms(tmp_path, published)[form]
    res = cli("validate", str(path))
    assert res.code == 0, res.stdout + res.stderr
    assert f"{n} record{'s' if n != 1 else ''} in" in res.stdout


def test_validate_names_the_file_of_a_bad_envelope_in_a_folder(cli, tmp_path, published):
    folder = write_envelope_folder(tmp_path / "dataset", published)
    bad = dict(published[1], lineNumber=0)
    (folder / "zz-bad.json").write_text(json.dumps(envelope(bad), indent=2))
    res = cli("validate", str(folder))
    assert res.code == 1
    assert f"{folder / 'zz-bad.json'}:1: record.lineNumber" in res.stdout


def test_a_folder_leaves_out_an_index_and_an_extract_folder_reads_its_records(cli, git_repo, tmp_path, published):
    folder = write_envelope_folder(tmp_path / "dataset", published)
    (folder / "index.json").write_text(json.dumps({"records": 2, "slugs": [r["slug"] for r in published]}))
    assert [ln.record.id for ln in reader.read(folder)] == sorted(r["id"] for r in published)
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "out"))
    assert res.code == 0, res.stderr
    res = cli("validate", str(tmp_path / "out"))  # records.jsonl beside manifest.json
    assert res.code == 0 and "2 records" in res.stdout, res.stdout


def test_envelope_round_trip_keeps_dataset_version_and_writes_no_analysis(tmp_path, published):
    path, _ = _forms(tmp_path, published)["jsonl"]
    lines = reader.read(path)
    assert [ln.datasetVersion for ln in lines] == ["2026-09-01T12:00:00.000Z"] * 2
    assert all(ln.analysis is None for ln in lines)
    back = [json.loads(raw) for raw in jsonl.dumps(lines).splitlines()]
    assert back == [envelope(r) for r in published]
    assert list(back[0]["record"]) == list(ErrorRecord.model_fields)  # the published key order
    # What a record without analysis still tells of itself.
    facts = lines[0].facts
    assert (facts.crate, facts.function, facts.category) == ("burn-candle", "float_cumprod", "dtype-dispatch")


@pytest.mark.parametrize("form", ["jsonl", "single", "folder"])
def test_extract_previous_reads_every_form(cli, git_repo, tmp_path, published, form):
    path, n = _forms(tmp_path, published)[form]
    git_repo.write(PATH, "// moved down\n" + OPS.replace("<F: FloatCandleElement, I: IntCandleElement>", "")
                   .replace("Candle<F, I>", "Candle"), dedent=False)
    git_repo.commit()
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "out"),
              "--previous", str(path))
    assert res.code == 0, res.stderr
    by_message = {ln["record"]["errorMessage"]: ln for ln in read_records(tmp_path / "out")}
    for old in published[:n]:
        new = by_message[old["errorMessage"]]["record"]
        assert (new["id"], new["slug"], new["documentation"]) == (old["id"], old["slug"], old["documentation"])


def test_lookup_render_and_annotate_read_a_folder_of_envelopes(cli, tmp_path, published):
    folder = write_envelope_folder(tmp_path / "dataset", published)

    res = cli("lookup", "float_sort: candle has no kernel for I64", "--records", str(folder), "--format", "json")
    assert res.code == 0, res.stderr
    assert [m["record"]["id"] for m in json.loads(res.stdout)["matches"]][:1] == ["c0ffee0000000002"]

    res = cli("render", str(folder), "--out", str(tmp_path / "pages"))
    assert res.code == 0, res.stderr
    page = (tmp_path / "pages" / f"{published[0]['slug']}.md").read_text()
    assert published[0]["documentation"] in page

    res = cli("annotate", "export", str(folder), "--out", str(tmp_path / "todo"))
    assert res.code == 0, res.stderr
    # The annotated record needs nothing; the other gets a prompt.
    assert sorted(p.name for p in (tmp_path / "todo").glob("*.prompt.md")) == ["c0ffee0000000002.prompt.md"]


def test_coverage_refuses_records_without_analysis_with_a_reason(cli, tmp_path, published):
    folder = write_envelope_folder(tmp_path / "dataset", published)
    res = cli("coverage", "--records", str(folder))
    assert res.code == 2 and "without analysis" in res.stderr and "Traceback" not in res.stderr


def test_diff_of_published_folder_and_new_records_matches_by_lineage(cli, git_repo, tmp_path, published):
    folder = write_envelope_folder(tmp_path / "dataset", published)
    git_repo.write(PATH, OPS.replace('"float_sort: candle has no kernel for {:?}"',
                                     '"float_sort: no candle kernel for {:?}"'), dedent=False)
    git_repo.commit()
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "out"))
    assert res.code == 0, res.stderr
    res = cli("diff", str(folder), str(tmp_path / "out" / "records.jsonl"), "--format", "json")
    assert res.code == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["added"] == [] and d["removed"] == []
    (change,) = d["changed"]
    assert change["id"] == "c0ffee0000000002" and change["fields"] == ["message"]
    assert d["summary"]["unchanged"] == 1


def test_a_records_line_with_analysis_none_is_valid_input():
    rec = published_record(rid="c0ffee0000000003", text=OPS, path=PATH, needle="float_sort: candle",
                           message=SORT, sha="2" * 40, background="unsupported-dtype", tags=["rust"])
    line = RecordLine.model_validate({"record": rec, "analysis": None})
    assert line.analysis is None and json.loads(line.to_json_line()) == {"record": rec}


PAGES = Path(__file__).parent / "fixtures"


@pytest.fixture(params=["published text", "rendered markdown", "rendered html"])
def page(request, cli, tmp_path) -> Path:
    if request.param == "published text":
        return PAGES / "published" / "page.txt"
    if request.param == "rendered markdown":
        return next((PAGES / "pages" / "expected").glob("*.md"))
    res = cli("render", str(PAGES / "pages" / "records.jsonl"), "--format", "html", "--out", str(tmp_path / "html"))
    assert res.code == 0, res.stderr
    return next(p for p in (tmp_path / "html").glob("*.html") if p.name != "index.html")


@pytest.mark.parametrize("command", [["validate"], ["render", "--out", "pages"], ["lookup", "x", "--records"],
                                     ["export", "--out", "site"], ["annotate", "export", "--out", "a"]])
def test_a_page_given_as_records_is_named_a_page_in_one_line(cli, tmp_path, page, command):
    res = cli(*command, str(page), cwd=tmp_path)
    assert res.code == 2, (res.stdout, res.stderr)
    assert res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        f"burn-errors: error: {page} is an error page (its text, Markdown or HTML), not a records file; give a "
        f"records.jsonl written by burn-errors extract, or the record as JSON (a published page links its data "
        f"as JSON)"]


def test_text_that_merely_mentions_the_headings_is_still_read_as_records(tmp_path):
    assert not reader.is_page('{"record": 1}\nError message\nSource\nView on GitHub\n')
    assert not reader.is_page("Error message\nSource\n")  # no link line, no location
    assert reader.is_page("x · error\n\nError message\n\nm\n\nSource\n\nThrown at a.rs:1\n")
