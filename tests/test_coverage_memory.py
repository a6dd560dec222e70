"""How the operations matrix holds what several operations share: a helper's dispatch reached by
several operations says the same of each, and the matrix keeps one object for it, not one per
cell or per operation. And how a matrix is kept: its row, written in pieces, reads back as the
matrix's JSON text whatever its messages hold."""

from __future__ import annotations

import pytest

from analyzer.profiles import load
from targets import RUN

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
        _ => panic!("contiguous: \\"unsupported\\" dtype {:?} (\\\\ é 型)", tensor.dtype()),
    }
}
"""


@pytest.fixture
def extracted(git_repo):
    from analyzer.pipeline import extract as pipeline
    from analyzer.source.repository import open_repository

    git_repo.crate("burn-backend", {"src/ops.rs": TRAITS_RS})
    git_repo.crate("burn-tiny", {"src/ops.rs": OPS_RS})
    sha = git_repo.commit("a backend")
    repo = open_repository(str(git_repo.path), None, "acme/tiny")
    return repo, pipeline.extract(repo, sha, RUN, jobs=1, code=True)


@pytest.fixture
def matrix(extracted):
    from analyzer.pipeline.coverage import tree_matrix

    repo, ex = extracted
    return tree_matrix(ex, lambda paths: repo.read_files(ex.sha, paths), claims=False)


def test_the_matrix_is_built_with_the_cycle_collector_paused_and_then_restored(extracted, monkeypatch):
    """The cells hold no cycles: no collection walks them while they pile up, and what the build
    leaves alive is out of the collector's reach afterwards, which is back as it was, also when
    the build fails."""
    import gc

    from analyzer.features.coverage import operations

    repo, ex = extracted
    seen: list[bool] = []
    real_settings = operations.build_settings

    def settings(*args):
        seen.append(gc.isenabled())
        return real_settings(*args)

    monkeypatch.setattr(operations, "build_settings", settings)
    gc.unfreeze()
    assert gc.isenabled()
    matrix = operations.build_operations(ex, collapse=True, read_files=lambda paths: repo.read_files(ex.sha, paths))
    assert matrix.cells and seen == [False] and gc.isenabled()
    assert gc.get_freeze_count() > 0
    gc.unfreeze()
    monkeypatch.setattr(operations, "build_settings", lambda *a: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        operations.build_operations(ex, collapse=True)
    assert gc.isenabled()


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


def test_a_kept_matrix_row_reads_back_as_its_text(matrix):
    from analyzer.cli.common import open_cache
    from analyzer.pipeline import coverage as audit

    message = matrix.cells[("burn-tiny", "int_abs", "U8")].sites[0].message
    assert '"' in message and "\\" in message and "型" in message
    cache = open_cache(False)
    try:
        audit.keep_matrix(cache, "a-matrix", matrix)
        assert cache.get_raw_result("a-matrix") == audit._text(matrix)
        served, why = audit.kept_matrix(cache, "a-matrix", matrix.repo, matrix.sha, load("burn"))
    finally:
        cache.close()
    assert why is None and served is not None
    assert served.cells == matrix.cells and served.dispatches == matrix.dispatches
