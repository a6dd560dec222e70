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


MARKED = '''\
use burn_std::DType;

impl<B: Backend> Tensor<B> {
    /// Whether the tensor is marked.
    pub fn is_marked(&self) -> bool {
        match &self.primitive {
            TensorPrimitive::Float(tensor) => B::is_marked(tensor),
            TensorPrimitive::QFloat(_) => unimplemented!(),
        }
    }

    /// Mark the tensor.
    pub fn set_marked(self, mark: Mark) -> Self {
        let primitive = match self.primitive {
            TensorPrimitive::Float(tensor) => TensorPrimitive::Float(B::mark(tensor, mark)),
            TensorPrimitive::QFloat(_) => unimplemented!(),
        };
        Self::new(primitive)
    }
}
'''
MARKED_AFTER = '''\
use burn_std::DType;

impl<B: Backend> Tensor<B> {
    /// Whether the tensor is marked.
    pub fn is_marked(&self) -> bool {
        is_marked_impl(&self.bridge)
    }

    /// Mark the tensor.
    pub fn set_marked(self, mark: Mark) -> Self {
        Self::new(set_marked_impl(self.bridge, mark))
    }
}

#[cfg(feature = "std")]
fn is_marked_impl(p: &BridgeTensor) -> bool {
    let (kind, tensor) = p.as_parts();
    let tensor = tensor.detach();
    match kind {
        BridgeKind::Half if tensor.is_empty() => false,
        BridgeKind::Float | BridgeKind::Half => Dispatch::is_marked(tensor),
        BridgeKind::QFloat => unimplemented!(),
        BridgeKind::Int | BridgeKind::Bool => false,
    }
}

#[cfg(feature = "std")]
fn set_marked_impl(p: BridgeTensor, mark: Mark) -> BridgeTensor {
    let (kind, tensor) = p.into_parts();
    let tensor = tensor.detach();
    match kind {
        BridgeKind::Half if tensor.is_empty() => BridgeTensor::half(tensor),
        BridgeKind::Float | BridgeKind::Half => BridgeTensor::float(Dispatch::mark(tensor, mark)),
        BridgeKind::QFloat => unimplemented!(),
        BridgeKind::Int | BridgeKind::Bool => BridgeTensor::other(tensor),
    }
}
'''
MARKED_PATH = "crates/burn-tensor/src/tensor/api/float.rs"


def _lines(out) -> list[dict]:
    return [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]


def test_functions_renamed_with_their_old_name_kept_are_followed(cli, git_repo, tmp_path):
    """Two calls with one message in one file, each moved into a function named after its old
    one (`is_marked` to `is_marked_impl`) and rewritten around it: the renamed function, the
    message and the arm find each, in whichever order git aligned the lines."""
    git_repo.crate("burn-tensor", {"src/tensor/api/float.rs": MARKED})
    git_repo.commit()
    before = {ln["analysis"]["function"]: ln["record"]["id"] for ln in
              (extract_by_message(cli, git_repo, tmp_path / "a") and _lines(tmp_path / "a"))}
    assert set(before) == {"is_marked", "set_marked"}
    git_repo.write(MARKED_PATH, MARKED_AFTER, dedent=False)
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    after = {ln["analysis"]["function"]: (ln["record"]["id"], ln["analysis"]["lineage"]) for ln in
             _lines(tmp_path / "b")}
    assert after == {"is_marked_impl": (before["is_marked"], "function"),
                     "set_marked_impl": (before["set_marked"], "function")}


STORE = '''\
pub mod dtype;

impl DType {
    pub fn storage(self) -> StorageType {
        match self {
            DType::F32 => StorageType::Scalar(ElemType::Float(FloatKind::F32)),
            DType::I32 => StorageType::Scalar(ElemType::Int(IntKind::I32)),
            DType::Bool(BoolStore::Native) => {
                panic!("Cannot keep packed sub-byte values")
            }
            DType::QFloat(scheme) => match scheme.store {
                QuantStore::Native => match scheme.value {
                    QuantValue::Q8F => StorageType::Scalar(ElemType::Int(IntKind::I8)),
                    QuantValue::E2M1 => {
                        panic!("Cannot keep packed sub-byte values")
                    }
                },
                QuantStore::U32 => StorageType::Scalar(ElemType::UInt(UIntKind::U32)),
            },
        }
    }
}
'''
STORE_AFTER = '''\
//! Conversions between the backend's storage types and burn's dtypes, moved out of burn-std so
//! that it no longer depends on the compiler crate.

use burn_std::{BoolStore, DType, QuantStore, QuantValue};

/// The storage type of a burn dtype.
pub fn dtype_to_storage(value: DType) -> StorageType {
    match value {
        DType::F32 => StorageType::Scalar(ElemType::Float(FloatKind::F32)),
        DType::I32 => StorageType::Scalar(ElemType::Int(IntKind::I32)),
        DType::Bool(BoolStore::Native) => {
            panic!("Cannot keep packed sub-byte values")
        }
        DType::QFloat(scheme) => match scheme.store {
            QuantStore::Native => match scheme.value {
                QuantValue::Q8F => StorageType::Scalar(ElemType::Int(IntKind::I8)),
                QuantValue::E2M1 => {
                    panic!("Cannot keep packed sub-byte values")
                }
            },
            QuantStore::U32 => StorageType::Scalar(ElemType::UInt(UIntKind::U32)),
        },
    }
}
'''


def test_a_body_moved_to_another_crate_and_function_is_followed_in_order(cli, git_repo, tmp_path):
    """A function's body moved into another crate under another name, its paths shortened: the
    same message twice in it, each found by the lines around it, in their order."""
    git_repo.crate("burn-std", {"src/lib.rs": STORE})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    before = [ln["record"]["id"] for ln in sorted(_lines(tmp_path / "a"), key=lambda ln: ln["record"]["lineNumber"])]
    assert len(before) == 2
    git_repo.write("crates/burn-std/src/lib.rs", "pub mod dtype;\n", dedent=False)
    git_repo.crate("burn-backend", {"src/storage.rs": STORE_AFTER})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    after = sorted(_lines(tmp_path / "b"), key=lambda ln: ln["record"]["lineNumber"])
    assert [ln["record"]["id"] for ln in after] == before
    assert {ln["analysis"]["lineage"] for ln in after} == {"window"}


PACK_BEFORE = '''\
impl From<QuantValue> for StorageKind {
    fn from(value: QuantValue) -> Self {
        match value {
            QuantValue::Q8F | QuantValue::Q8S => StorageKind::I8,
            QuantValue::Q4F | QuantValue::Q2F => {
                panic!("Cannot pack sub-byte values natively")
            }
        }
    }
}
'''
PACK_AFTER = '''\
//! Storage of quantized values, moved out of the tensor crate.

impl From<QuantValue> for StorageKind {
    fn from(value: QuantValue) -> Self {
        let kind = match value {
            QuantValue::Q8F | QuantValue::Q8S | QuantValue::Q8U => StorageKind::I8,
            QuantValue::Q4F | QuantValue::Q2F => {
                // packed values need a packing store
                panic!("Cannot pack sub-byte values natively")
            }
            QuantValue::E2M1 => {
                panic!("Cannot pack sub-byte values natively")
            }
        };
        kind
    }
}
'''


def test_a_message_twice_in_a_moved_function_is_told_apart_by_its_arm(cli, git_repo, tmp_path):
    """The file moved to another crate and rewritten, its function now holding the message twice:
    the arm (its first alternative) says which of the two continues the earlier record."""
    git_repo.crate("burn-tensor", {"src/lib.rs": PACK_BEFORE})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    (before,) = _lines(tmp_path / "a")
    git_repo.git("rm", "-r", "-q", "crates/burn-tensor")
    git_repo.crate("burn-quant", {"src/storage.rs": PACK_AFTER})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    after = {ln["analysis"]["pattern"]: ln for ln in _lines(tmp_path / "b")}
    kept = after["QuantValue::Q4F | QuantValue::Q2F"]
    assert kept["record"]["id"] == before["record"]["id"] and kept["analysis"]["lineage"] == "function"
    assert after["QuantValue::E2M1"]["analysis"]["lineage"] == "new"
