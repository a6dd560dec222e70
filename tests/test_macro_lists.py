"""A dispatch macro's record (a `macro_rules!` arm repeating over the dtypes a list hands it)
lists the dtypes its invocations hand it, read from every file of its crate, in the records,
in `lookup`, and in the coverage cells of each operation, which keep resolving each invocation's
own list."""

from __future__ import annotations

import json

from conftest import read_records

TENSOR_ENUM_RS = """\
pub enum NdTensor {
    F64(Storage),
    F32(Storage),
    I64(Storage),
    I32(Storage),
    Bool(Storage),
}
"""

MACROS_RS = """\
#[macro_export]
macro_rules! run_with_dtype {
    ($tensor:expr, $op:expr, [$($dtype: ident => $ty: ty),*]) => {{
        match $tensor {
            $(
                $crate::NdTensor::$dtype(storage) => $op(storage),
            )*
            #[allow(unreachable_patterns)]
            other => unimplemented!("unsupported dtype: {:?}", other.dtype())
        }
    }};
    ($tensor:expr, $op:expr) => {{
        $crate::run_with_dtype!($tensor, $op, [F64 => f64, F32 => f32])
    }};
}
"""

TRAITS_RS = """\
pub trait Backend {}

pub trait FloatTensorOps<B: Backend> {
    fn float_exp(tensor: B::Float) -> B::Float;
}

pub trait IntTensorOps<B: Backend> {
    fn int_abs(tensor: B::Int) -> B::Int;
}
"""

OPS_RS = """\
impl FloatTensorOps<Self> for Nd {
    fn float_exp(tensor: NdTensor) -> NdTensor {
        run_with_dtype!(tensor, exp)
    }
}

impl IntTensorOps<Self> for Nd {
    fn int_abs(tensor: NdTensor) -> NdTensor {
        run_with_dtype!(tensor, abs, [I64 => i64])
    }
}
"""


def _repo(git_repo, ops: str = OPS_RS):
    git_repo.crate("burn-backend", {"src/ops.rs": TRAITS_RS})
    git_repo.crate("burn-nd", {"src/tensor.rs": TENSOR_ENUM_RS + MACROS_RS, "src/ops.rs": ops})
    git_repo.commit()
    return git_repo


def _macro_record(cli, repo, out):
    res = cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    (record,) = [r for r in read_records(out) if r["analysis"]["inMacro"] == "macro_rules! run_with_dtype"]
    return record


def test_a_dispatch_macros_record_lists_the_dtypes_its_invocations_hand_it(cli, git_repo, tmp_path):
    repo = _repo(git_repo)
    record = _macro_record(cli, repo, tmp_path / "out")
    # The macro's own default list (F64, F32) and another file's (I64): handled; Bool and I32,
    # which no invocation lists, reach the catch-all.
    assert record["analysis"]["handled"] == ["F64", "F32", "I64"]
    assert record["analysis"]["rejected"] == ["I32", "Bool"]
    res = cli("lookup", "not implemented: unsupported dtype: Bool", "--records", str(tmp_path / "out" / "records.jsonl"))
    assert "panics for: I32, Bool" in res.stdout and "F64" not in res.stdout.split("panics for:")[1].split("\n")[0]


def test_the_record_keeps_its_id_when_an_invocation_changes_its_list(cli, git_repo, tmp_path):
    repo = _repo(git_repo)
    before = _macro_record(cli, repo, tmp_path / "a")
    repo.crate("burn-nd", {"src/ops.rs": OPS_RS.replace("[I64 => i64]", "[I64 => i64, I32 => i32]")})
    repo.commit()
    after = _macro_record(cli, repo, tmp_path / "b")
    assert after["record"]["id"] == before["record"]["id"]
    assert after["analysis"]["rejected"] == ["Bool"]


def test_coverage_resolves_each_invocations_list_whatever_the_record_lists(cli, git_repo):
    repo = _repo(git_repo)
    res = cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", "--format", "json")
    assert res.code == 0, res.stderr
    doc = json.loads(res.stdout)
    cells = {(c["operation"], c["dtype"].removeprefix("NdTensor::")): c["status"] for c in doc["cells"]
             if c["crate"] == "burn-nd"}
    assert cells[("float_exp", "F32")] == "handled"
    # int_abs hands I64 only: I32 panics there, and F32, which the record lists as handled,
    # is no dtype of its kind.
    assert cells[("int_abs", "I64")] == "handled" and cells[("int_abs", "I32")] == "panics"
    (match,) = [m for m in doc["matches"] if m["operation"] == "int_abs"]
    assert match["handled"] == ["NdTensor::I64"] and "NdTensor::F64" in match["panics"]
