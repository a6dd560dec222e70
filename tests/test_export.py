"""`burn-errors export`: the records as the published dataset serves them, one envelope per
record plus an index, written whole or not at all, and read back without loss."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_validate import FIXTURE, PUBLISHED, good_line, nth_id, write

from analyzer.core.errors import UserError
from analyzer.records.model import Envelope
from analyzer.sinks import envelope
from analyzer.records import reader

VERSION = PUBLISHED["datasetVersion"]
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def one_line_error(res, *needles: str) -> str:
    assert res.code == 2, (res.code, res.stdout, res.stderr)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("burn-errors: error: "), res.stderr
    assert "Traceback" not in res.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def unannotated(record_id: str) -> dict:
    """A record as extract writes it before annotation: the annotation fields null."""
    line = good_line(record_id)
    for key in ("documentation", "triggerScenarios", "commonSituations", "solutions", "exampleFix",
                "handlingStrategy", "validationCode", "typeGuard", "tryCatchPattern", "preventionTips"):
        line["record"][key] = None
    line["record"]["contentChangedAt"] = line["record"]["analyzedAt"]
    return line


@pytest.fixture
def records(tmp_path) -> Path:
    """A records file: the fixture's annotated record, then an unannotated one in an earlier file."""
    second = unannotated(nth_id(1))
    second["record"]["filePath"] = "crates/tensor-cpu/src/ops/a_first.rs"
    second["record"]["githubUrl"] = second["record"]["githubUrl"].replace("src/ops/resize.rs", "src/ops/a_first.rs")
    return write(tmp_path, good_line(), second)


def export(cli, records: Path, out: Path, *extra: str):
    return cli("export", str(records), "--out", str(out), *extra)


def test_one_record_is_one_envelope(cli, tmp_path):
    res = export(cli, write(tmp_path, good_line()), tmp_path / "site")
    assert res.code == 0, res.stderr
    assert res.stdout.startswith("Wrote 1 envelope and ")


def test_each_envelope_is_the_published_form_byte_for_byte(cli, records, tmp_path):
    out = tmp_path / "site"
    res = export(cli, records, out, "--dataset-version", VERSION)
    assert res.code == 0, res.stderr
    assert "Wrote 2 envelopes" in res.stdout
    rid = PUBLISHED["record"]["id"]
    written = (out / f"{rid}.json").read_bytes()
    # Compact, keys in the published order, non-ASCII as UTF-8, no newline at the end.
    assert written == FIXTURE.read_bytes()
    data = json.loads(written)
    assert list(data) == ["record", "datasetVersion"]
    assert list(data["record"]) == list(PUBLISHED["record"])
    assert {k: type(v) for k, v in data["record"].items()} == {k: type(v) for k, v in PUBLISHED["record"].items()}
    assert "—".encode() in written and b"\\u2014" not in written


def test_file_names_and_index(cli, records, tmp_path):
    out = tmp_path / "site"
    assert export(cli, records, out, "--dataset-version", VERSION).code == 0
    first, annotated = nth_id(1), PUBLISHED["record"]["id"]
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{first}.json", f"{annotated}.json", "index.json"])
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    assert index["tool"] == "burn-errors" and index["formatVersion"] == 1
    assert index["datasetVersion"] == VERSION and index["schemaVersion"] == 2 and index["count"] == 2
    # Sorted by file path then line: the record in a_first.rs comes first.
    assert [row["id"] for row in index["records"]] == [first, annotated]
    row = index["records"][1]
    assert row == {"id": annotated, "slug": PUBLISHED["record"]["slug"], "file": f"{annotated}.json",
                   "errorMessage": PUBLISHED["record"]["errorMessage"], "filePath": PUBLISHED["record"]["filePath"],
                   "lineNumber": PUBLISHED["record"]["lineNumber"], "backgroundTag": PUBLISHED["record"]["backgroundTag"]}
    for row in index["records"]:
        assert json.loads((out / row["file"]).read_text(encoding="utf-8"))["record"]["slug"] == row["slug"]


def test_dataset_version_defaults_to_now(cli, records, tmp_path):
    out = tmp_path / "site"
    assert export(cli, records, out).code == 0
    versions = {json.loads(p.read_text(encoding="utf-8"))["datasetVersion"] for p in out.glob("*.json")}
    assert len(versions) == 1 and TIME.match(versions.pop())


def test_dataset_version_with_a_zone_is_written_in_utc(cli, records, tmp_path):
    out = tmp_path / "site"
    assert export(cli, records, out, "--dataset-version", "2026-03-05T10:09:10.111+02:00").code == 0
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    assert index["datasetVersion"] == "2026-03-05T08:09:10.111Z"


@pytest.mark.parametrize(("value", "why"), [
    ("yesterday", "is not an ISO 8601 time"),
    ("2026-13-01T00:00:00.000Z", "is not an ISO 8601 time"),
    ("2026-03-05T08:09:10", "has no time zone"),
])
def test_a_bad_dataset_version_is_one_line(cli, records, tmp_path, value, why):
    out = tmp_path / "site"
    one_line_error(export(cli, records, out, "--dataset-version", value), "--dataset-version", why)
    assert not out.exists()


def test_round_trip_is_lossless(cli, records, tmp_path):
    out = tmp_path / "site"
    assert export(cli, records, out, "--dataset-version", VERSION).code == 0
    original = [json.loads(ln)["record"] for ln in records.read_text(encoding="utf-8").splitlines()]
    # Read back by the one records reader every command uses (a folder of envelopes).
    back = {e.record.id: e.record.model_dump(mode="json") for e in reader.read(out)}
    assert len(back) == len(original)
    for record in original:
        assert back[record["id"]] == record
        assert list(back[record["id"]]) == list(record)
    assert {e.datasetVersion for e in reader.read(out)} == {VERSION}
    # The exported folder is valid, and exporting it again under a new version changes only that.
    assert cli("validate", str(out)).code == 0
    again = tmp_path / "again"
    assert export(cli, out, again, "--dataset-version", "2026-04-01T00:00:00.000Z").code == 0
    assert {e.record.id: e.record.model_dump(mode="json") for e in reader.read(again)} == back


def test_a_file_of_envelope_lines_reads_back(tmp_path):
    path = tmp_path / "envelopes.jsonl"
    rid = PUBLISHED["record"]["id"]
    other = FIXTURE.read_text(encoding="utf-8").replace(rid, "0123456789abcdef").replace(f"-{rid[:6]}\"", "-012345\"")
    path.write_text(FIXTURE.read_text(encoding="utf-8") + "\n\n" + other + "\n", encoding="utf-8")
    got = reader.read(path)
    assert [e.record.model_dump(mode="json") for e in got][0] == PUBLISHED["record"]
    assert [e.record.id for e in got] == [rid, "0123456789abcdef"]
    path.write_text(FIXTURE.read_text(encoding="utf-8").replace('"datasetVersion"', '"version"'), encoding="utf-8")
    with pytest.raises(UserError, match=r"envelopes.jsonl:1: "):
        reader.read(path)


def test_an_output_path_that_is_a_file(cli, records, tmp_path):
    blocker = tmp_path / "site"
    blocker.write_text("keep me", encoding="utf-8")
    one_line_error(export(cli, records, blocker), "it is a file, not a folder")
    assert blocker.read_text(encoding="utf-8") == "keep me"


def test_a_folder_of_other_files_is_not_replaced(cli, records, tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    one_line_error(export(cli, records, out), "holds files that are not an export")
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_an_export_replaces_the_previous_one_whole(cli, records, tmp_path):
    out = tmp_path / "site"
    assert export(cli, records, out, "--dataset-version", VERSION).code == 0
    (tmp_path / "later").mkdir()
    only = write(tmp_path / "later", unannotated(nth_id(7)))
    assert export(cli, only, out, "--dataset-version", "2026-04-01T00:00:00.000Z").code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{nth_id(7)}.json", "index.json"])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site.")]  # nothing left beside it


def test_a_failed_write_leaves_the_previous_export_as_it_was(cli, records, tmp_path):
    out = tmp_path / "site"
    assert export(cli, records, out, "--dataset-version", VERSION).code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    files = envelope.build([Envelope.model_validate(PUBLISHED).record], "2026-04-01T00:00:00.000Z")
    # A name that cannot be created inside the folder fails the write after other files are written.
    files = {"0000000000000000.json": b"{}", "missing-folder/x.json": b"{}", **files}
    with pytest.raises(UserError, match="cannot write the export"):
        envelope.write(out, files)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site.")]


def test_invalid_records_are_not_exported(cli, tmp_path):
    bad = good_line()
    bad["record"]["errorMessage"] += "\ud800"
    records = write(tmp_path, bad)
    out = tmp_path / "site"
    one_line_error(export(cli, records, out), f"{records}:1: record.errorMessage: text that cannot be written",
                   "burn-errors validate")
    assert not out.exists()


def test_extracted_records_export_and_validate(cli, git_repo, tmp_path):
    """What extract writes passes every check, and exports."""
    git_repo.crate("burn-cpu", {"src/ops.rs": """\
        use burn_std::DType;

        pub fn sum(x: Tensor) -> Tensor {
            match x.dtype() {
                DType::F32 => sum_f32(x),
                dtype => panic!("sum: unsupported dtype {:?}", dtype),
            }
        }

        pub fn pad(x: Tensor, mode: PadMode) -> Tensor {
            match mode {
                PadMode::Zeros => pad_zeros(x),
                other => unimplemented!("{other:?} padding"),
            }
        }
        """})
    git_repo.commit()
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "o"))
    assert res.code == 0, res.stderr
    records = tmp_path / "o" / "records.jsonl"
    assert cli("validate", str(records)).code == 0
    assert export(cli, records, tmp_path / "site").code == 0
    assert cli("validate", str(tmp_path / "site")).code == 0
    assert len(reader.read(tmp_path / "site")) == 2


def test_without_an_atomic_exchange_the_previous_export_is_still_replaced_whole(records, tmp_path, monkeypatch):
    """Where the system cannot swap two folders in one step, the previous export is moved aside,
    the new one renamed in, and the old one removed; if the rename fails it is put back."""
    monkeypatch.setattr(envelope, "_exchange", lambda a, b: False)
    out = tmp_path / "site"
    old = envelope.build([Envelope.model_validate(PUBLISHED).record], VERSION)
    envelope.write(out, old)
    new = envelope.build([Envelope.model_validate(PUBLISHED).record], "2026-04-01T00:00:00.000Z")
    envelope.write(out, new)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == new
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records.jsonl", "site"]

    real_rename = envelope.os.rename

    def rename_fails_into_place(src, dst):
        if Path(dst) == out and ".tmp" in Path(src).name:
            raise OSError(28, "No space left on device")
        return real_rename(src, dst)

    monkeypatch.setattr(envelope.os, "rename", rename_fails_into_place)
    with pytest.raises(UserError, match="No space left on device"):
        envelope.write(out, old)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == new
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records.jsonl", "site"]
