"""How the operations matrix holds what several operations share: a helper's dispatch reached by
several operations says the same of each, and the matrix keeps one object for it, not one per
cell or per operation."""

from __future__ import annotations

import pytest

TRAITS_RS = """\
pub trait Backend {}

pub trait IntTensorOps<B: Backend> {
    fn int_abs(tensor: B::Int) -> B::Int;
    fn int_neg(tensor: B::Int) -> B::Int;
}
"""

OPS_RS = """\
use burn_backend::{Backend, IntTensorOps};

impl IntTensorOps<Self> for Tiny {
    fn int_abs(tensor: TinyTensor) -> TinyTensor {
        contiguous(tensor)
    }

    fn int_neg(tensor: TinyTensor) -> TinyTensor {
        contiguous(tensor)
    }
}

fn contiguous(tensor: TinyTensor) -> TinyTensor {
    match tensor.dtype() {
        DType::I64 => copy_wide(tensor),
        DType::I32 => copy_narrow(tensor),
        _ => panic!("contiguous: unsupported dtype {:?}", tensor.dtype()),
    }
}
"""


@pytest.fixture
def matrix(git_repo):
    from analyzer.pipeline import extract as pipeline
    from analyzer.pipeline.coverage import tree_matrix
    from analyzer.source.repository import open_repository

    git_repo.crate("burn-backend", {"src/ops.rs": TRAITS_RS})
    git_repo.crate("burn-tiny", {"src/ops.rs": OPS_RS})
    sha = git_repo.commit("a backend")
    repo = open_repository(str(git_repo.path), None, "acme/tiny")
    ex = pipeline.extract(repo, sha, jobs=1, code=True)
    return tree_matrix(ex, lambda paths: repo.read_files(ex.sha, paths), claims=False)


def test_operations_reaching_one_helper_share_its_evidence(matrix):
    abs_i64, neg_i64 = matrix.cells[("burn-tiny", "int_abs", "I64")], matrix.cells[("burn-tiny", "int_neg", "I64")]
    abs_u8, neg_u8 = matrix.cells[("burn-tiny", "int_abs", "U8")], matrix.cells[("burn-tiny", "int_neg", "U8")]
    assert (abs_i64.status, neg_i64.status, abs_u8.status, neg_u8.status) == ("handled", "handled", "panics", "panics")
    assert [e.status for e in abs_u8.evidence] == ["panics"]
    assert abs_i64.evidence[0] is neg_i64.evidence[0]
    assert abs_u8.evidence[0] is neg_u8.evidence[0]
    assert abs_u8.sites[0].function == "contiguous"


def test_a_dispatch_counted_in_each_operation_shares_its_maps(matrix):
    counted = [d for d in matrix.dispatches if d.function == "contiguous"]
    assert sorted(d.operation for d in counted) == ["int_abs", "int_neg"]
    first, second = counted
    assert first.statuses is second.statuses and first.rejected_by is second.rejected_by
    assert first.statuses["I32"] == "handled" and first.statuses["U8"] == "panics"
