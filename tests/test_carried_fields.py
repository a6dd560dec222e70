"""What a carried record keeps of the earlier one: its published fields as published while the
error is unchanged (no tag the tool would add), and only fields that pass `validate`'s checks."""

from __future__ import annotations

import json

from conftest import read_records
from published import annotation_for, envelope, published_record, write_envelope_folder

PATH = "crates/burn-cpu/src/ops/interpolate.rs"
OPS = '''\
use burn_std::DType;

impl ModuleOps<Self> for Cpu {
    fn interpolate_backward(x: CpuTensor, mode: InterpolateMode) -> CpuTensor {
        match mode {
            InterpolateMode::Nearest => nearest_backward(x),
            InterpolateMode::Bilinear => bilinear_backward(x),
            InterpolateMode::Bicubic => panic!("bicubic interpolation backward is not supported by the cpu backend"),
        }
    }
}
'''
MESSAGE = "bicubic interpolation backward is not supported by the cpu backend"
RID = "1f2e3d4c5b6a7980"
TAGS = ["rust", "burn", "cpu", "unsupported-operation", "interpolation", "backward-pass"]


def _first_commit(git_repo):
    git_repo.crate("burn-cpu", {"src/ops/interpolate.rs": OPS})
    sha = git_repo.commit()
    git_repo.write(PATH, "// Interpolation kernels.\n" + OPS, dedent=False)  # the site moves down only
    git_repo.commit()
    return sha


def _extract(cli, git_repo, tmp_path, previous):
    out = tmp_path / "out"
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(out), "--previous", str(previous))
    assert res.code == 0, res.stderr
    (line,) = read_records(out)
    return out, line


def test_an_unchanged_published_record_keeps_its_tags_as_published(cli, git_repo, tmp_path):
    sha = _first_commit(git_repo)
    published = published_record(rid=RID, text=OPS, path=PATH, needle="bicubic interpolation", message=MESSAGE,
                                 sha=sha, background="unsupported-op-backend", tags=TAGS,
                                 annotation=annotation_for("bicubic"))
    out, line = _extract(cli, git_repo, tmp_path, write_envelope_folder(tmp_path / "dataset", [published]))
    rec = line["record"]
    assert line["analysis"]["annotationStatus"] == "unchanged"
    assert rec["tags"] == TAGS  # not the tool's `unsupported-op-backend` or crate tag added
    assert {k: rec[k] for k in ("id", "slug", "backgroundTag", "contentChangedAt")} == {
        k: published[k] for k in ("id", "slug", "backgroundTag", "contentChangedAt")}
    assert rec["lineNumber"] == published["lineNumber"] + 1


def test_an_earlier_file_that_validate_refuses_is_refused_and_its_fields_never_copied(cli, git_repo, tmp_path):
    sha = _first_commit(git_repo)
    hostile = published_record(rid=RID, text=OPS, path=PATH, needle="bicubic interpolation", message=MESSAGE,
                               sha=sha, background="unsupported-op-backend", tags=TAGS,
                               annotated_at="2026-08-14T09:30:00.000Z", annotation=annotation_for("bicubic"))
    hostile.update(slug="../../<script>x</script>", contentChangedAt="2999-01-01T00:00:00.000Z")
    line = {"record": hostile, "analysis": None, "datasetVersion": envelope(hostile)["datasetVersion"]}
    previous = tmp_path / "previous.jsonl"
    previous.write_text(json.dumps({k: v for k, v in line.items() if v is not None}) + "\n")
    git_repo.write(PATH, "// moved down\n" + OPS, dedent=False)
    git_repo.commit()
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "out"),
              "--previous", str(previous))
    assert res.code == 2 and "does not pass `burn-errors validate`" in res.stderr and "record.slug" in res.stderr
    assert not (tmp_path / "out" / "records.jsonl").exists()
    # The lineage checks every field it hands on as well (for callers that pass records directly).
    out, kept = _extract(cli, git_repo, tmp_path, write_envelope_folder(tmp_path / "dataset", [
        published_record(rid=RID, text=OPS, path=PATH, needle="bicubic interpolation", message=MESSAGE, sha=sha,
                         background="unsupported-op-backend", tags=TAGS, annotation=annotation_for("bicubic"))]))
    from analyzer.lineage.carry import _checked
    from analyzer.records.model import RecordLine

    current = RecordLine.model_validate(kept)
    checked = _checked(current, {"slug": "../../<script>x</script>", "contentChangedAt": "2999-01-01T00:00:00.000Z"},
                       current.analysis)
    assert checked.record.slug == current.record.slug
    assert checked.record.contentChangedAt <= checked.record.analyzedAt
