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
