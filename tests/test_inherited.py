"""A backend ops trait's default method whose whole body is a stub: one record at the default,
the backends that leave it as it is in `analysis.inheritedBy`, and in coverage a "not
implemented" row for each of them."""

from __future__ import annotations

import json

import pytest

from analyzer.facts.impls import ops_impls
from tests.conftest import read_records
from targets import BURN

TRAITS_RS = """\
pub trait Backend {}

pub enum DType {
    F64,
    F32,
    I64,
    I32,
    Bool,
}

pub fn element_size(dtype: DType) -> usize {
    match dtype {
        DType::F64 | DType::I64 => 8,
        DType::F32 | DType::I32 => 4,
        other => panic!("{other:?} is not supported"),
    }
}

pub trait IntTensorOps<B: Backend> {
    fn int_abs(tensor: B::Int) -> B::Int;
    fn int_scatter_nd(tensor: B::Int, indices: B::Int) -> B::Int {
        unimplemented!("int_scatter_nd: this backend does not implement it")
    }
    fn int_gather_nd(tensor: B::Int, indices: B::Int) -> B::Int {
        let _ = indices;
        todo!()
    }
}

pub trait SyncOps<B: Backend> {
    fn all_reduce(tensor: B::Float) -> B::Float {
        panic!("all_reduce is not supported by this backend")
    }
}
"""

# Overrides int_gather_nd only; its impl file holds no panic-family call and no enum.
STONE_RS = """\
use burn_backend::{Backend, IntTensorOps, SyncOps};

impl IntTensorOps<Self> for Stone {
    fn int_abs(tensor: StoneTensor) -> StoneTensor {
        abs(tensor)
    }
    // fn int_scatter_nd is left to the trait
    fn int_gather_nd(tensor: StoneTensor, indices: StoneTensor) -> StoneTensor {
        fn gather(t: StoneTensor) -> StoneTensor { t }
        gather(tensor)
    }
}

impl SyncOps<Self> for Stone {}
"""

# Overrides every default, writing the name of one in a string and in a nested function of
# another method, neither of which overrides anything.
CLAY_RS = """\
impl<R: Runtime> IntTensorOps<Self> for Clay<R> {
    fn int_abs(tensor: ClayTensor) -> ClayTensor {
        let _name = "fn int_gather_nd";
        tensor
    }
    fn int_scatter_nd(tensor: ClayTensor, indices: ClayTensor) -> ClayTensor {
        scatter(tensor, indices)
    }
    fn int_gather_nd(tensor: ClayTensor, indices: ClayTensor) -> ClayTensor {
        gather(tensor, indices)
    }
}

impl<R: Runtime> burn_backend::SyncOps<Self> for Clay<R> {
    fn all_reduce(tensor: ClayTensor) -> ClayTensor {
        reduce(tensor)
    }
}
"""

# A backend that writes its impl's method names only inside nested functions and comments.
SAND_RS = """\
impl IntTensorOps<Self> for Sand {
    fn int_abs(tensor: SandTensor) -> SandTensor {
        fn int_scatter_nd() {}
        /* fn int_gather_nd */
        tensor
    }
}
"""

# Test code of a crate implements the trait too; it is no backend a user picks.
TEST_IMPL_RS = """\
impl IntTensorOps<Self> for Mock {
    fn int_abs(tensor: MockTensor) -> MockTensor { tensor }
}
"""


@pytest.fixture
def tree(git_repo):
    git_repo.crate("burn-backend", {"src/ops.rs": TRAITS_RS, "tests/mock.rs": TEST_IMPL_RS})
    git_repo.crate("burn-stone", {"src/ops.rs": STONE_RS})
    git_repo.crate("burn-clay", {"src/ops.rs": CLAY_RS})
    git_repo.crate("burn-sand", {"src/ops.rs": SAND_RS})
    git_repo.sha = git_repo.commit("backends")
    return git_repo


def test_the_methods_of_an_impl_are_read_from_its_signatures_only():
    assert ops_impls(CLAY_RS.encode(), BURN) == [
        ("IntTensorOps", "Clay", ["int_abs", "int_scatter_nd", "int_gather_nd"]),
        ("SyncOps", "Clay", ["all_reduce"])]
    assert ops_impls(SAND_RS.encode(), BURN) == [("IntTensorOps", "Sand", ["int_abs"])]
    assert ops_impls(b"impl Display for Stone { fn fmt() {} }", BURN) == []


def test_a_stub_default_is_one_record_listing_the_backends_that_inherit_it(cli, tree, tmp_path):
    out = tmp_path / "out"
    res = cli("extract", "--repo", str(tree.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    records = {r["analysis"]["function"]: r for r in read_records(out)}
    assert sorted(records) == ["all_reduce", "element_size", "int_gather_nd", "int_scatter_nd"]
    assert "inheritedBy" not in records.pop("element_size")["analysis"]
    inherited = {name: r["analysis"]["inheritedBy"] for name, r in records.items()}
    assert inherited == {"int_scatter_nd": ["burn-sand", "burn-stone"], "int_gather_nd": ["burn-sand"],
                         "all_reduce": ["burn-stone"]}
    assert {r["record"]["filePath"] for r in records.values()} == {"crates/burn-backend/src/ops.rs"}
    assert {r["analysis"]["category"] for r in records.values()} == {"unsupported-op"}


def test_a_record_that_is_no_ops_trait_default_has_no_inherited_key(cli, git_repo, tmp_path):
    # An impl method, and the default of a trait not named like an ops trait, whose impls are
    # not read: "no backend inherits it" would be a guess.
    git_repo.crate("burn-stone", {"src/ops.rs": "pub trait IntTensorOps<B: Backend> {\n    fn int_abs(t: T) -> T;\n}\n"
                                                "impl IntTensorOps<Self> for Stone {\n"
                                                "    fn int_abs(t: T) -> T { unimplemented!() }\n}\n"
                                                "pub trait Collective {\n"
                                                "    fn gather_all(t: T) -> T { unimplemented!() }\n}\n"})
    git_repo.commit("an impl method")
    out = tmp_path / "out"
    assert cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(out)).code == 0
    lines = {r["analysis"]["function"]: r["analysis"] for r in read_records(out)}
    assert sorted(lines) == ["gather_all", "int_abs"]
    assert not any("inheritedBy" in a for a in lines.values())


def test_each_inheriting_backend_gets_a_not_implemented_row(cli, tree):
    res = cli("coverage", "--repo", str(tree.path), "--sha", "HEAD", "--format", "json")
    assert res.code == 0, res.stderr
    doc = json.loads(res.stdout)
    rows = {(o["crate"], o["operation"]): o for o in doc["operations"]}
    stone = rows[("burn-stone", "int_scatter_nd")]
    assert stone["notImplemented"] and stone["trait"] == "IntTensorOps"
    assert stone["path"] == "crates/burn-backend/src/ops.rs"
    assert rows[("burn-sand", "int_gather_nd")]["notImplemented"]
    # A backend that overrides the default keeps its own row, implemented.
    assert not rows[("burn-stone", "int_gather_nd")]["notImplemented"]
    assert not rows[("burn-clay", "int_scatter_nd")]["notImplemented"]
    cells = [c for c in doc["cells"] if (c["crate"], c["operation"]) == ("burn-stone", "int_scatter_nd")]
    assert cells and all(c["reason"] == "not implemented" for c in cells if c["status"] == "panics")
    # Every int dtype panics; the other kinds are n/a.
    assert {c["dtype"] for c in cells if c["status"] == "panics"} >= {"I64", "I32"}
    assert all(c["status"] == "n/a" for c in cells if c["dtype"].startswith("F"))
