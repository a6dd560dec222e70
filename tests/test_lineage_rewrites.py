"""The history tier across rewritten code: a call whose line was rewritten continues an earlier
record only when its content says it is that error (the message, or the macro and the arm), so a
fixed error and a new one written in its place are two sites."""

from __future__ import annotations

import json

from conftest import extract_by_message

PATH = "crates/burn-cpu/src/quant.rs"

QUANT = '''\
use burn_std::DType;

impl QuantOps for Cpu {
    fn dequantize(t: QTensor) -> Tensor {
        match t.scheme() {
            QuantScheme { level: QuantLevel::Tensor, .. } => dequantize_tensor(t),
            QuantScheme { level: QuantLevel::TwoStep { .. }, .. } => {
                unimplemented!("two-step quantization scales are not handled yet")
            }
        }
    }
}
'''
FIXED_AND_NEW = QUANT.replace(
    '''            QuantScheme { level: QuantLevel::TwoStep { .. }, .. } => {
                unimplemented!("two-step quantization scales are not handled yet")
            }''',
    '''            QuantScheme { level: QuantLevel::TwoStep { .. }, .. } => dequantize_two_step(t),
            QuantScheme { mode: QuantMode::Table, .. } => {
                unimplemented!("table quantization is not handled by the cpu backend")
            }''')
OLD_MSG = "not implemented: two-step quantization scales are not handled yet"
NEW_MSG = "not implemented: table quantization is not handled by the cpu backend"
# The function renamed (a new structural id) and the message edited: only the history of the line,
# and the arm it stands in, tell it is the same error.
EDITED = QUANT.replace("two-step quantization scales are not handled yet",
                       "two-step scales are not supported by the cpu backend").replace(
                           "fn dequantize(", "fn dequantize_scheme(")


def test_a_fixed_error_and_a_new_one_in_its_place_are_two_sites(cli, git_repo, tmp_path):
    git_repo.crate("burn-cpu", {"src/quant.rs": QUANT})
    base = git_repo.commit()
    before = extract_by_message(cli, git_repo, tmp_path / "a")
    assert set(before) == {OLD_MSG}
    git_repo.write(PATH, FIXED_AND_NEW, dedent=False)
    head = git_repo.commit()
    after = extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    assert set(after) == {NEW_MSG}
    assert after[NEW_MSG]["analysis"]["lineage"] == "new"
    assert after[NEW_MSG]["record"]["id"] != before[OLD_MSG]["record"]["id"]
    d = json.loads(cli("diff", base, head, "--repo", str(git_repo.path), "--format", "json").stdout)
    assert [r["message"] for r in d["removed"]] == [OLD_MSG]
    assert [r["message"] for r in d["added"]] == [NEW_MSG]
    assert d["changed"] == [] and d["moved"] == []


def test_an_edited_message_on_a_rewritten_line_is_the_same_error(cli, git_repo, tmp_path):
    git_repo.crate("burn-cpu", {"src/quant.rs": QUANT})
    git_repo.commit()
    before = extract_by_message(cli, git_repo, tmp_path / "a")
    git_repo.write(PATH, EDITED, dedent=False)
    git_repo.commit()
    after = extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    (line,) = after.values()
    assert line["record"]["id"] == before[OLD_MSG]["record"]["id"]
    assert line["analysis"]["lineage"] == "history" and line["analysis"]["annotationStatus"] == "changed"


BOOL_OPS = '''\
use burn_std::{BoolStore, DType};

impl BoolTensorOps<Self> for Backend {
    fn bool_cast(t: BoolTensor, to: DType) -> Tensor {
        match to {
            DType::Bool(BoolStore::Native) => cast_native(t),
            DType::Bool(BoolStore::U32) => unimplemented!(),
            DType::QFloat(_) => unimplemented!(),
            _ => cast_other(t, to),
        }
    }
}
'''
BOOL_FROM = "crates/burn-backend/src/tensor/ops/bool.rs"
BOOL_TO = "crates/burn-tensor/src/bridge/ops/bool.rs"


def test_a_file_renamed_into_another_crate_then_rewritten_is_followed(cli, git_repo, tmp_path):
    """git saw the rename in the commit that made it; the range's diff sees a deletion and an
    addition, as the later commits rewrote the file. Both calls share their function and message,
    so no key finds them: only the history does."""
    git_repo.crate("burn-backend", {"src/tensor/ops/bool.rs": BOOL_OPS})
    git_repo.crate("burn-tensor", {"src/lib.rs": "pub mod bridge;\n"})
    git_repo.commit()
    before = extract_by_message(cli, git_repo, tmp_path / "a")
    ids = sorted((ln["record"]["lineNumber"], ln["record"]["id"]) for ln in
                 (json.loads(x) for x in (tmp_path / "a" / "records.jsonl").read_text().splitlines()))
    assert len(ids) == 2 and set(before) == {"not implemented"}
    git_repo.write(BOOL_TO, BOOL_OPS, dedent=False)
    git_repo.remove(BOOL_FROM)
    git_repo.commit("move")
    header = "".join(f"use crate::bridge::part{i};\n" for i in range(12))
    git_repo.write(BOOL_TO, header + BOOL_OPS.replace("use burn_std::{BoolStore, DType};\n", "").replace(
        "impl BoolTensorOps<Self> for Backend {", "impl BridgeBoolOps for Dispatch {"), dedent=False)
    git_repo.commit("rewrite")
    assert "R" not in git_repo.git("diff", "-M", "--name-status", "HEAD~2", "HEAD")
    extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    after = sorted((ln["record"]["lineNumber"], ln["record"]["id"], ln["analysis"]["lineage"]) for ln in
                   (json.loads(x) for x in (tmp_path / "b" / "records.jsonl").read_text().splitlines()))
    assert [(rid, tier) for _, rid, tier in after] == [(rid, "history") for _, rid in ids]
