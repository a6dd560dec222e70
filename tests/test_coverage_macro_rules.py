"""`coverage` on a dispatch macro with several rules picked by a leading word: an invocation takes
the rule its arguments open with, so only that rule's catch-all speaks for its operation; a rule
opening with a metavariable may take any invocation."""

from __future__ import annotations

import json

import pytest
from conftest import DTYPE_RS

TRAITS_RS = """\
pub trait Backend {}

pub trait FloatTensorOps<B: Backend> {
    fn float_add(lhs: B::Float, rhs: B::Float) -> B::Float;
}

pub trait IntTensorOps<B: Backend> {
    fn int_add(lhs: B::Int, rhs: B::Int) -> B::Int;
    fn int_mul(lhs: B::Int, rhs: B::Int) -> B::Int;
}
"""

# Two rules chosen by the word the invocation opens with, and a last one taking anything.
KERNELS_RS = """\
macro_rules! run_typed {
    (float($d:expr), $e:ident, $op:expr) => {{
        match $d {
            DType::F64 => $op,
            DType::F32 => $op,
            other => unimplemented!("no float kernel for {:?}", other),
        }
    }};
    (int($d:expr), $e:ident, $op:expr) => {{
        match $d {
            DType::I64 => $op,
            DType::I32 => $op,
            other => unimplemented!("no int kernel for {:?}", other),
        }
    }};
    ($d:expr, $op:expr) => {{
        match $d {
            DType::I64 => $op,
            DType::F64 => $op,
            other => unimplemented!("no wide kernel for {:?}", other),
        }
    }};
}
"""

OPS_RS = """\
use burn_backend::{Backend, FloatTensorOps, IntTensorOps};

impl FloatTensorOps<Self> for Typed {
    fn float_add(lhs: TypedTensor, rhs: TypedTensor) -> TypedTensor {
        run_typed!(float(lhs.dtype), E, add::<E>(lhs, rhs))
    }
}

impl IntTensorOps<Self> for Typed {
    fn int_add(lhs: TypedTensor, rhs: TypedTensor) -> TypedTensor {
        run_typed!(int(lhs.dtype), E, add::<E>(lhs, rhs))
    }

    fn int_mul(lhs: TypedTensor, rhs: TypedTensor) -> TypedTensor {
        run_typed!(lhs.dtype, mul(lhs, rhs))
    }
}
"""


@pytest.fixture
def typed(git_repo):
    git_repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    git_repo.crate("burn-backend", {"src/ops.rs": TRAITS_RS})
    git_repo.crate("burn-typed", {"src/kernels.rs": KERNELS_RS, "src/ops.rs": OPS_RS})
    git_repo.commit("a backend dispatching through one macro of three rules")
    return git_repo


def _rows(cli, repo) -> dict[str, dict[str, str]]:
    res = cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", "--format", "json", "--full")
    assert res.code == 0, res.stderr
    rows: dict[str, dict[str, str]] = {}
    for c in json.loads(res.stdout)["cells"]:
        if c["crate"] == "burn-typed":
            rows.setdefault(c["operation"], {})[c["dtype"]] = c["status"]
    return rows


def test_an_invocation_is_charged_only_with_the_rule_its_leading_word_selects(cli, typed):
    rows = _rows(cli, typed)
    int_add, float_add = rows["int_add"], rows["float_add"]
    # The float rule's catch-all would refuse I64 and the int rule's F64: neither is int_add's or float_add's.
    assert (int_add["I64"], int_add["I32"]) == ("handled", "handled")
    assert (float_add["F64"], float_add["F32"]) == ("handled", "handled")
    # The selected rule's own catch-all still refuses what it lists no kernel for.
    assert int_add["U8"] == "panics" and float_add["F16"] == "panics"


def test_an_invocation_opening_with_no_rule_word_keeps_the_rules_open_to_it(cli, typed):
    # `lhs.dtype` opens neither `float(..)` nor `int(..)`: only the metavariable rule takes it.
    int_mul = _rows(cli, typed)["int_mul"]
    assert int_mul["I64"] == "handled" and int_mul["I32"] == "panics"
