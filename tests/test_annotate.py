"""`burn-errors annotate export|import`: the annotation hand-off, both directions."""

from __future__ import annotations

import json

import pytest

from conftest import read_records

from analyzer.features.annotate import FIELD_GUIDE
from analyzer.records.model import ANNOTATION_FIELDS, Annotation

OPS = r'''
use burn_std::DType;

impl PoolOps<Flex> for Flex {
    fn pool3d(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => pool3d_f32(x),
            DType::F64 => pool3d_f64(x),
            dtype => panic!("pool3d: unsupported dtype {:?}", dtype),
        }
    }

    fn resample(x: Tensor, mode: ResampleMode) -> Tensor {
        match mode {
            ResampleMode::Nearest => nearest(x),
            ResampleMode::Cubic => unimplemented!("cubic resampling is not supported"),
        }
    }
}
'''

POOL = "pool3d: unsupported dtype {:?}"
RESAMPLE = "not implemented: cubic resampling is not supported"
MODULE = "crates/burn-flex/src/ops/pool.rs"


def _extract(cli, repo, out, previous=None):
    args = ["extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out)]
    if previous:
        args += ["--previous", str(previous)]
    res = cli(*args)
    assert res.code == 0, res.stderr
    return out / "records.jsonl"


@pytest.fixture
def records(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/pool.rs": OPS})
    git_repo.commit()
    return _extract(cli, git_repo, tmp_path / "out")


def _ids(records):
    return {ln["record"]["errorMessage"]: ln["record"]["id"] for ln in read_records(records.parent)}


def _answer(record_id: str, **over) -> dict:
    a = {
        "id": record_id,
        "documentation": "Flex pools only F32 and F64; other dtypes reach the catch-all arm.",
        "triggerScenarios": "pool3d on an F16 or integer tensor.",
        "commonSituations": "Half-precision models; integer volumes.",
        "solutions": ["Cast to F32 first", "Use a backend with an F16 kernel"],
        "exampleFix": "// before\npool3d(x)\n// after\npool3d(x.cast(DType::F32))",
        "handlingStrategy": "conversion",
        "validationCode": "fn check(x: &Tensor) { assert!(matches!(x.dtype(), DType::F32 | DType::F64)); }",
        "typeGuard": None,
        "tryCatchPattern": None,
        "preventionTips": ["Pick one float dtype for the model"],
    }
    a.update(over)
    return a


def _export(cli, records, out):
    res = cli("annotate", "export", str(records), "--out", str(out))
    assert res.code == 0, res.stderr
    return res


def _import(cli, records, *answers, out=None, extra=()):
    return cli("annotate", "import", str(records), *map(str, answers), "--out", str(out or records), *extra)


def test_field_guide_covers_exactly_the_annotation_model():
    assert tuple(FIELD_GUIDE) == ANNOTATION_FIELDS
    assert list(Annotation.model_fields) == ["id", "contentHash", *ANNOTATION_FIELDS]


def test_export_writes_a_prompt_and_a_skeleton_per_record(cli, records, tmp_path):
    out = tmp_path / "ann"
    res = _export(cli, records, out)
    ids = _ids(records)
    assert "Wrote 2 prompts and 2 answer skeletons" in res.stdout and "2 new" in res.stdout
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"{i}.json" for i in ids.values()] + [f"{i}.prompt.md" for i in ids.values()] + ["export.json"])

    pool = ids[POOL]
    skeleton = json.loads((out / f"{pool}.json").read_text())
    assert list(skeleton) == list(Annotation.model_fields)  # the model's fields, in its order
    assert skeleton["id"] == pool and all(skeleton[k] is None for k in ANNOTATION_FIELDS)
    assert skeleton["contentHash"] == next(ln["analysis"]["contentHash"] for ln in read_records(records.parent)
                                           if ln["record"]["id"] == pool)

    prompt = (out / f"{pool}.prompt.md").read_text()
    line = next(ln for ln in read_records(records.parent) if ln["record"]["id"] == pool)
    rec, an = line["record"], line["analysis"]
    assert f"```text\n{POOL}\n```" in prompt
    # the source window, numbered, the panic line marked
    assert f"> {rec['lineNumber']:>2} |             dtype => panic!(\"pool3d: unsupported dtype {{:?}}\", dtype)," in prompt
    assert f"  {rec['lineNumber'] - 1:>2} |             DType::F64 => pool3d_f64(x)," in prompt
    assert f"`{rec['filePath']}`, line {rec['lineNumber']}" in prompt
    # the facts the analyzer knows
    assert "- kind: dtype-dispatch" in prompt and "- crate: `burn-flex`" in prompt
    assert "- match on: `x.dtype()`; panicking arm: `dtype`" in prompt
    assert "- handled by other arms: `F64`, `F32`" in prompt
    assert "- dtypes that reach this panic: " + ", ".join(f"`{d}`" for d in an["rejected"]) in prompt
    # the exact shape of the answer: every field of the model with its guidance, and the skeleton
    for name in ANNOTATION_FIELDS:
        kind, guide = FIELD_GUIDE[name]
        assert f"| `{name}` | {kind} | {guide} |" in prompt
    block = prompt.split("### Fill in this skeleton\n\n```json\n", 1)[1].split("\n```", 1)[0]
    assert json.loads(block) == skeleton
    assert "`handlingStrategy` is `validation`" in prompt  # the style example, told in words

    manifest = json.loads((out / "export.json").read_text())
    assert manifest["records"] == str(records)
    assert {i["id"]: i["contentHash"] for i in manifest["items"]} == {
        ln["record"]["id"]: ln["analysis"]["contentHash"] for ln in read_records(records.parent)}

    mode_prompt = (out / f"{ids[RESAMPLE]}.prompt.md").read_text()
    mode = next(ln["analysis"] for ln in read_records(records.parent) if ln["record"]["id"] == ids[RESAMPLE])
    assert "- kind: unsupported-mode" in mode_prompt and "panicking arm: `ResampleMode::Cubic`" in mode_prompt
    assert "- dtype enum" not in mode_prompt
    assert mode["rejected"], "the fixture's mode arm names its variant"
    assert "- values that reach this panic: " + ", ".join(f"`{d}`" for d in mode["rejected"]) in mode_prompt


def test_import_merges_answers_and_the_next_export_skips_them(cli, records, tmp_path):
    out = tmp_path / "ann"
    _export(cli, records, out)
    ids = _ids(records)
    before = read_records(records.parent)
    (out / f"{ids[POOL]}.json").write_text(json.dumps(_answer(ids[POOL]), indent=2))
    merged = tmp_path / "merged.jsonl"
    res = _import(cli, records, out, out=merged)
    assert res.code == 0, res.stderr
    assert "Imported 1 answer into" in res.stdout and "1 skeleton not filled yet" in res.stdout
    assert read_records(records.parent) == before  # --out elsewhere: RECORDS itself is left alone
    assert cli("validate", str(merged)).code == 0

    after = {ln["record"]["id"]: ln for ln in read_records_file(merged)}
    pool = after[ids[POOL]]
    want = _answer(ids[POOL])
    assert {k: pool["record"][k] for k in ANNOTATION_FIELDS} == {k: want[k] for k in ANNOTATION_FIELDS}
    assert pool["analysis"]["annotatedAt"] >= pool["record"]["analyzedAt"]
    assert pool["record"]["contentChangedAt"] == next(
        ln for ln in before if ln["record"]["id"] == ids[POOL])["record"]["contentChangedAt"]
    # the other record and every other key are as they were
    old = {ln["record"]["id"]: ln for ln in before}
    assert after[ids[RESAMPLE]] == old[ids[RESAMPLE]]
    assert {k: v for k, v in pool["record"].items() if k not in ANNOTATION_FIELDS} == \
        {k: v for k, v in old[ids[POOL]]["record"].items() if k not in ANNOTATION_FIELDS}

    again = tmp_path / "again"
    res = _export(cli, merged, again)
    assert sorted(p.name for p in again.glob("*.prompt.md")) == [f"{ids[RESAMPLE]}.prompt.md"]

    # and the page now shows the annotation
    pages = tmp_path / "pages"
    assert cli("render", str(merged), "--out", str(pages)).code == 0
    page = next(pages.glob("pool3d-unsupported-dtype--*.md")).read_text()
    assert "## What it means" in page and "1. Cast to F32 first" in page and "Annotated analysis of" in page
    assert "AI-assisted" not in page  # nothing said a model wrote it
    # Imported as written with a model's help: the record is tagged so, and its page says so.
    res = _import(cli, merged, tmp_path / "ann" / f"{ids[POOL]}.json", out=tmp_path / "ai.jsonl", extra=("--ai-assisted",))
    assert res.code == 0, res.stderr
    ai = {ln["record"]["id"]: ln["record"] for ln in read_records_file(tmp_path / "ai.jsonl")}
    assert ai[ids[POOL]]["tags"][-1] == "ai-assisted" and "ai-assisted" not in ai[ids[RESAMPLE]]["tags"]
    assert cli("render", str(tmp_path / "ai.jsonl"), "--out", str(pages)).code == 0
    assert "AI-assisted analysis of" in next(pages.glob("pool3d-unsupported-dtype--*.md")).read_text()
    # A later plain import replaces the annotation and who wrote it.
    assert _import(cli, tmp_path / "ai.jsonl", tmp_path / "ann" / f"{ids[POOL]}.json").code == 0
    assert "ai-assisted" not in {ln["record"]["id"]: ln["record"]
                                 for ln in read_records_file(tmp_path / "ai.jsonl")}[ids[POOL]]["tags"]


def read_records_file(path):
    return [json.loads(raw) for raw in path.read_text().splitlines() if raw]


def test_import_in_place_and_answers_given_as_files(cli, records, tmp_path):
    ids = _ids(records)
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps(_answer(ids[POOL])))
    b.write_text("```json\n" + json.dumps(_answer(ids[RESAMPLE], typeGuard="fn ok() -> bool { true }")) + "\n```\n")
    res = _import(cli, records, a, b)
    assert res.code == 0, res.stderr
    recs = {ln["record"]["id"]: ln["record"] for ln in read_records(records.parent)}
    assert recs[ids[POOL]]["solutions"] == ["Cast to F32 first", "Use a backend with an F16 kernel"]
    assert recs[ids[RESAMPLE]]["typeGuard"] == "fn ok() -> bool { true }"
    # answering again replaces the annotation as a whole
    a.write_text(json.dumps(_answer(ids[POOL], solutions=["Only this"], validationCode=None)))
    res = _import(cli, records, a)
    assert res.code == 0 and "1 replaced an earlier annotation" in res.stdout
    rec = {ln["record"]["id"]: ln["record"] for ln in read_records(records.parent)}[ids[POOL]]
    assert rec["solutions"] == ["Only this"] and rec["validationCode"] is None


BAD = {
    "wrong type": ({"solutions": "Cast to F32"}, "field solutions: Input should be a valid list"),
    "wrong item": ({"preventionTips": ["ok", 3]}, "field preventionTips.1: Input should be a valid string"),
    "unknown field": ({"severity": "high"}, "field severity: unknown field"),
    "bad id": ({"id": "xyz"}, "field id: String should match pattern"),
    "unknown id": ({"id": "0123456789abcdef"}, "field id: no record 0123456789abcdef in"),
    "blank": ({"documentation": "  "}, "field documentation: blank text"),
    "empty list": ({"solutions": []}, "field solutions: empty list"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_answer_names_file_and_field_and_nothing_is_written(cli, records, tmp_path, case):
    ids = _ids(records)
    over, want = BAD[case]
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_answer(ids[RESAMPLE])))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_answer(ids[POOL], **over)))
    before = records.read_text()
    res = _import(cli, records, good, bad)
    assert res.code == 2
    assert f"{bad}: {want}" in res.stderr, res.stderr
    assert str(good) not in res.stderr
    assert records.read_text() == before


def test_other_bad_answers(cli, records, tmp_path):
    ids = _ids(records)
    cases = {
        "notjson.json": ("{ nope", "not JSON (Expecting property name enclosed in double quotes at line 1 column 3)"),
        "list.json": ("[]", "expected one JSON object"),
        f"{ids[RESAMPLE]}.json": (json.dumps(_answer(ids[POOL])),
                                  f"field id: {ids[POOL]} but the file is named for record {ids[RESAMPLE]}"),
    }
    for name, (text, _) in cases.items():
        (tmp_path / name).write_text(text)
    res = _import(cli, records, *(tmp_path / n for n in cases))
    assert res.code == 2
    for name, (_, want) in cases.items():
        assert f"{tmp_path / name}: {want}" in res.stderr, res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith("burn-errors: error: 3 bad answers")

    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text(json.dumps(_answer(ids[POOL])))
    two.write_text(json.dumps(_answer(ids[POOL])))
    res = _import(cli, records, one, two)
    assert res.code == 2 and f"{two}: field id: record {ids[POOL]} is already answered by {one}" in res.stderr
    res = _import(cli, records, tmp_path / "missing.json")
    assert res.code == 2 and "no such answer file" in res.stderr
    (tmp_path / "emptydir").mkdir()
    res = _import(cli, records, tmp_path / "emptydir")
    assert res.code == 2 and "no answer files" in res.stderr


def test_skip_bad_imports_the_good_answers(cli, records, tmp_path):
    ids = _ids(records)
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(_answer(ids[RESAMPLE])))
    bad.write_text(json.dumps(_answer(ids[POOL], solutions="one")))
    res = _import(cli, records, good, bad, extra=["--skip-bad"])
    assert res.code == 0, res.stderr
    assert f"{bad}: field solutions" in res.stderr
    assert "Imported 1 answer" in res.stdout and "1 bad answer skipped" in res.stdout
    recs = {ln["record"]["id"]: ln["record"] for ln in read_records(records.parent)}
    assert recs[ids[RESAMPLE]]["documentation"] and recs[ids[POOL]]["documentation"] is None


def test_unfilled_skeletons_are_skipped(cli, records, tmp_path):
    out = tmp_path / "ann"
    _export(cli, records, out)
    before = records.read_text()
    res = _import(cli, records, out)
    assert res.code == 0
    assert "Imported 0 answers (nothing written); 2 skeletons not filled yet." in res.stdout
    assert records.read_text() == before


def test_export_keeps_filled_answers_and_has_nothing_to_do_when_all_are_annotated(cli, records, tmp_path):
    out = tmp_path / "ann"
    _export(cli, records, out)
    ids = _ids(records)
    filled = json.dumps(_answer(ids[POOL]))
    (out / f"{ids[POOL]}.json").write_text(filled)
    res = _export(cli, records, out)
    assert "Kept 1 answer already filled" in res.stdout
    assert (out / f"{ids[POOL]}.json").read_text() == filled
    assert json.loads((out / f"{ids[RESAMPLE]}.json").read_text())["documentation"] is None

    (out / f"{ids[RESAMPLE]}.json").write_text(json.dumps(_answer(ids[RESAMPLE])))
    assert _import(cli, records, out).code == 0
    res = _export(cli, records, tmp_path / "none")
    assert res.stdout.startswith("Nothing to annotate: all 2 records")
    assert not (tmp_path / "none").exists()


def test_the_annotation_loop_across_a_new_commit(cli, git_repo, records, tmp_path):
    """export -> answer -> import; the code changes; extract --previous keeps what did not change,
    export sends only the changed record, and an answer written for the old code is refused."""
    out = tmp_path / "ann"
    _export(cli, records, out)
    ids = _ids(records)
    for msg in (POOL, RESAMPLE):
        (out / f"{ids[msg]}.json").write_text(json.dumps(_answer(ids[msg])))
    assert _import(cli, records, out).code == 0

    # pool3d learns F16: its content changes; resample only moves down
    git_repo.write(MODULE, "// header\n" + OPS.replace("DType::F64 => pool3d_f64(x),",
                                                       "DType::F64 => pool3d_f64(x),\n            DType::F16 => pool3d_f16(x),"))
    git_repo.commit()
    second = _extract(cli, git_repo, tmp_path / "out2", previous=records)
    lines = {ln["record"]["id"]: ln for ln in read_records(second.parent)}
    assert lines[ids[POOL]]["analysis"]["annotationStatus"] == "changed"
    assert lines[ids[RESAMPLE]]["analysis"]["annotationStatus"] == "unchanged"
    assert lines[ids[RESAMPLE]]["record"]["documentation"] is not None

    # the old answer for pool3d describes code that is gone: refused
    res = _import(cli, second, out / f"{ids[POOL]}.json")
    assert res.code == 2 and f"field id: record {ids[POOL]} changed since this answer was exported" in res.stderr

    out2 = tmp_path / "ann2"
    res = _export(cli, second, out2)
    assert "Wrote 1 prompt and 1 answer skeleton" in res.stdout and "1 changed" in res.stdout
    prompt = (out2 / f"{ids[POOL]}.prompt.md").read_text()
    assert "annotated before, but its content" in prompt and "- handled by other arms: `F64`, `F32`, `F16`" in prompt
    (out2 / f"{ids[POOL]}.json").write_text(json.dumps(_answer(ids[POOL], solutions=["Cast to F16 or F32"])))
    assert _import(cli, second, out2).code == 0
    res = _export(cli, second, tmp_path / "ann3")
    assert res.stdout.startswith("Nothing to annotate")


def test_a_bad_answer_lists_all_its_problems(cli, records, tmp_path):
    """One round of fixes is enough: every problem of the answer is named, not the first one."""
    ids = _ids(records)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_answer(ids[POOL], solutions="Cast to F32", preventionTips=["ok", 3],
                                      severity="high", owner="me", commonSituations=" ")))
    res = _import(cli, records, bad)
    assert res.code == 2
    (line,) = [ln for ln in res.stderr.splitlines() if ln.startswith(f"{bad}: ")]
    assert line == (f"{bad}: field solutions: Input should be a valid list; field preventionTips.1: Input "
                    f"should be a valid string; field severity: unknown field; field owner: unknown field; "
                    f"field commonSituations: blank text; write null when there is nothing to say; "
                    f"the answer holds only the id, the content hash and the Annotation fields")
    assert "more problems" not in res.stderr
    blank = tmp_path / "blank.json"
    blank.write_text(json.dumps(_answer(ids[POOL], documentation=" ", solutions=[], preventionTips=["a", " "])))
    res = _import(cli, records, blank)
    assert (f"{blank}: field documentation: blank text; write null when there is nothing to say; field "
            f"solutions: empty list; write null when there is nothing to say; field preventionTips.1: blank "
            f"text") in res.stderr


def test_the_prompt_links_the_source_url_exactly(cli, records, tmp_path):
    """The pinned source link is an autolink: no markdown escaping inside the URL (`\\#L1`)."""
    markdown_it = pytest.importorskip("markdown_it")
    out = tmp_path / "ann"
    _export(cli, records, out)
    ids = _ids(records)
    url = next(ln["record"]["githubUrl"] for ln in read_records(records.parent) if ln["record"]["id"] == ids[POOL])
    assert "#L" in url
    prompt = (out / f"{ids[POOL]}.prompt.md").read_text()
    assert f"(<{url}>)" in prompt and "\\#L" not in prompt
    rendered = markdown_it.MarkdownIt("commonmark").render(prompt)
    assert f'href="{url}"' in rendered


def test_autolink_encodes_what_would_end_it():
    from analyzer.core.safe import md_autolink

    assert md_autolink('https://x.test/a<b>"c') == "<https://x.test/a%3Cb%3E%22c>"
    # A URL the one URL policy refuses (a space in it) is shown as code, never linked.
    assert md_autolink("https://x.test/a b") == "`https://x.test/a b`"
    assert md_autolink("javascript:alert(1)") == "`javascript:alert(1)`"


def test_an_answer_holds_the_content_it_was_written_for_wherever_it_sits(cli, git_repo, records, tmp_path):
    """The skeleton carries the record's content hash; after the code changed, the filled answer
    is refused by import in the export's folder, in another folder without export.json, and after
    a new export into the same folder (which keeps it and says it is stale)."""
    out = tmp_path / "ann"
    _export(cli, records, out)
    ids = _ids(records)
    skeleton = json.loads((out / f"{ids[POOL]}.json").read_text())
    filled = {**skeleton, **{k: v for k, v in _answer(ids[POOL]).items() if k != "id"}}
    (out / f"{ids[POOL]}.json").write_text(json.dumps(filled))
    git_repo.write(MODULE, OPS.replace("DType::F64 => pool3d_f64(x),",
                                       "DType::F64 => pool3d_f64(x),\n            DType::F16 => pool3d_f16(x),"))
    git_repo.commit()
    second = _extract(cli, git_repo, tmp_path / "out2", previous=records)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / f"{ids[POOL]}.json").write_text(json.dumps(filled))
    for where in (out, moved / f"{ids[POOL]}.json"):
        res = _import(cli, second, where)
        assert res.code == 2 and f"field contentHash: record {ids[POOL]} changed since this answer was written" in res.stderr
    res = _export(cli, second, out)
    assert res.code == 0 and f"{out / (ids[POOL] + '.json')}" in res.stderr and "import refuses it" in res.stderr
    assert json.loads((out / f"{ids[POOL]}.json").read_text()) == filled  # kept, not overwritten
    res = _import(cli, second, out)
    assert res.code == 2 and "changed since this answer was written" in res.stderr


@pytest.mark.parametrize("command", ["import", "export"])
def test_records_sharing_an_id_are_refused_as_validate_refuses_them(cli, records, tmp_path, command):
    """One input policy: a file `validate` refuses for an id held twice is refused by annotate too
    (an answer merged into both records would skip the content check of one)."""
    lines = [json.loads(x) for x in records.read_text().splitlines()]
    assert len(lines) == 2
    lines[1]["record"]["id"] = lines[0]["record"]["id"]
    shared = tmp_path / "shared.jsonl"
    shared.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert cli("validate", str(shared)).code == 1
    answer = tmp_path / "a.json"
    answer.write_text(json.dumps(_answer(lines[0]["record"]["id"], contentHash=lines[0]["analysis"]["contentHash"])))
    before = shared.read_bytes()
    res = (_import(cli, shared, answer) if command == "import"
           else cli("annotate", "export", str(shared), "--out", str(tmp_path / "ann")))
    assert res.code == 2 and f"holds id {lines[0]['record']['id']} twice" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert shared.read_bytes() == before and not (tmp_path / "ann").exists()
