"""Earlier records read without `analysis` (the published envelopes): their content is derived
before it is compared, from their commit when the repository has it, else from their source
window; a record whose content stays unknown is named in a warning and counted in the manifest.
So a handled dtype that went away sends a published record back to annotation."""

from __future__ import annotations

import json

from published import annotation_for, published_record, write_envelope_folder

PATH = "crates/burn-cpu/src/ops/pool.rs"
POOL = '''\
use burn_std::DType;

impl PoolOps<Self> for Cpu {
    fn max_pool2d(x: CpuTensor) -> CpuTensor {
        match x.dtype() {
            DType::F32 => max_pool2d_f32(x),
            DType::BF16 => max_pool2d_bf16(x),
            DType::F16 => max_pool2d_f16(x),
            other => panic!("max_pool2d: no kernel for dtype {:?}", other),
        }
    }
}
'''
NO_BF16 = POOL.replace("            DType::BF16 => max_pool2d_bf16(x),\n", "")
MESSAGE = "max_pool2d: no kernel for dtype {:?}"
RID = "0a1b2c3d4e5f6071"
ABSENT_SHA = "89abcdef0123456789abcdef0123456789abcdef"


def _published(tmp_path, sha: str, text: str = POOL, **over):
    record = published_record(rid=RID, text=text, path=PATH, needle="max_pool2d: no kernel", message=MESSAGE,
                              sha=sha, background="unsupported-dtype", tags=["rust", "burn", "cpu", "unsupported-dtype"],
                              annotation=annotation_for("max_pool2d"))
    record.update(over)
    return write_envelope_folder(tmp_path / "dataset", [record])


def _run(cli, git_repo, tmp_path, sha_of_first: bool, text: str = POOL, **over):
    git_repo.crate("burn-cpu", {"src/ops/pool.rs": text})
    first = git_repo.commit()
    folder = _published(tmp_path, first if sha_of_first else ABSENT_SHA, text, **over)
    git_repo.write(PATH, text.replace("            DType::BF16 => max_pool2d_bf16(x),\n", ""), dedent=False)
    git_repo.commit()
    args = ["extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "out"),
            "--previous", str(folder)]
    res = cli(*args)
    assert res.code == 0, res.stderr
    line = json.loads((tmp_path / "out" / "records.jsonl").read_text().splitlines()[0])
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    return res, line, manifest["lineage"]


def test_a_handled_dtype_gone_sends_a_published_record_back_to_annotation(cli, git_repo, tmp_path):
    res, line, lineage = _run(cli, git_repo, tmp_path, sha_of_first=True)
    assert line["record"]["id"] == RID
    assert line["analysis"]["annotationStatus"] == "changed" and line["record"]["documentation"] is None
    assert lineage["contentDerived"] == {"analyzedSha": 1, "sourceCode": 0} and lineage["contentUnknown"] == 0
    assert "warning" not in res.stderr


def test_without_the_commit_the_source_window_tells_the_content(cli, git_repo, tmp_path):
    res, line, lineage = _run(cli, git_repo, tmp_path, sha_of_first=False)
    assert line["record"]["id"] == RID
    assert line["analysis"]["annotationStatus"] == "changed"
    assert lineage["contentDerived"] == {"analyzedSha": 0, "sourceCode": 1} and lineage["contentUnknown"] == 0


def test_a_record_whose_content_stays_unknown_is_named(cli, git_repo, tmp_path):
    """The match opens further above the call than the window reaches, the commit absent: only
    message and category compare."""
    many = "".join(f"            DType::I{n} => max_pool2d_i{n}(x),\n" for n in range(100, 125))
    long_match = POOL.replace("            DType::F16 => max_pool2d_f16(x),\n",
                              "            DType::F16 => max_pool2d_f16(x),\n" + many)
    res, line, lineage = _run(cli, git_repo, tmp_path, sha_of_first=False, text=long_match)
    assert line["record"]["id"] == RID and line["analysis"]["annotationStatus"] == "unchanged"
    assert lineage["contentUnknown"] == 1
    assert [r["id"] for r in lineage["contentUnknownRecords"]] == [RID]
    (warning,) = [ln for ln in res.stderr.splitlines() if ln.startswith("warning: 1 earlier record")]
    assert RID in warning


def test_a_window_that_starts_inside_a_function_still_tells_the_content(cli, git_repo, tmp_path):
    """A published window usually begins inside a function, its signature cut: the match is read
    from it all the same, so a handled dtype that went away is still a content change."""
    args = "".join(f"        arg_{n}: usize,\n" for n in range(20))
    long_signature = POOL.replace("    fn max_pool2d(x: CpuTensor) -> CpuTensor {\n",
                                  "    fn max_pool2d(\n        x: CpuTensor,\n" + args + "    ) -> CpuTensor {\n")
    res, line, lineage = _run(cli, git_repo, tmp_path, sha_of_first=False, text=long_signature)
    assert line["record"]["id"] == RID
    assert line["analysis"]["annotationStatus"] == "changed"
    assert lineage["contentDerived"] == {"analyzedSha": 0, "sourceCode": 1} and lineage["contentUnknown"] == 0
