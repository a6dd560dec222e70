"""`coverage` on a quantization setting a backend never creates: every creation of a quantized
tensor refuses the level, so an operation on an existing tensor refusing it too is handled (the
creations' refusals come first, shown as what preempts it); the creations keep their own cells,
and a backend one of whose creations makes the level stays partial."""

from __future__ import annotations

import json

import pytest

TRAITS_RS = """\
pub trait Backend {}

pub trait FloatTensorOps<B: Backend> {
    fn float_exp(tensor: B::Float) -> B::Float;
}

pub trait QTensorOps<B: Backend> {
    fn q_from_data(data: TensorData) -> B::Q;
    fn quantize(tensor: B::Float, scheme: &QuantScheme) -> B::Q;
    fn q_reshape(tensor: B::Q, shape: Shape) -> B::Q;
    fn q_flip(tensor: B::Q) -> B::Q;
}
"""

SCHEME_RS = """\
pub enum QuantLevel {
    Tensor,
    Block,
    Pair,
}

pub struct QuantScheme {
    pub level: QuantLevel,
}
"""

# The shared decoding every backend's q_from_data hands the scheme to, in a crate no backend is.
DECODE_RS = """\
pub fn unpack_scheme(bytes: Bytes, scheme: QuantScheme) -> Vec<i8> {
    count_scales(&bytes, scheme)
}

fn count_scales(bytes: &Bytes, scheme: QuantScheme) -> Vec<i8> {
    match scheme.level {
        QuantLevel::Tensor => one_scale(bytes),
        QuantLevel::Block => block_scales(bytes),
        QuantLevel::Pair => unimplemented!("pair-level quantization is not supported yet"),
    }
}
"""

# A backend in flex's shape: its creations refuse the Pair level, and so do its layout operations.
QUANTY_RS = """\
use burn_backend::{Backend, FloatTensorOps, QTensorOps};

impl FloatTensorOps<Self> for Quanty {
    fn float_exp(tensor: QuantyTensor) -> QuantyTensor {
        match tensor.dtype() {
            DType::F32 => exp_f32(tensor),
            other => panic!("float_exp: unsupported dtype {other:?}"),
        }
    }
}

impl QTensorOps<Self> for Quanty {
    fn q_from_data(data: TensorData) -> QuantyTensor {
        let values = unpack_scheme(data.bytes, data.scheme);
        QuantyTensor::new(values, data.scheme)
    }

    fn quantize(tensor: QuantyTensor, scheme: &QuantScheme) -> QuantyTensor {
        match scheme.level {
            QuantLevel::Tensor => per_tensor(tensor),
            QuantLevel::Block => per_block(tensor),
            QuantLevel::Pair => unimplemented!("pair-level quantization is not supported yet"),
        }
    }

    fn q_reshape(tensor: QuantyTensor, shape: Shape) -> QuantyTensor {
        rescale(tensor.reshape(shape))
    }

    fn q_flip(tensor: QuantyTensor) -> QuantyTensor {
        tensor.flip()
    }
}

fn rescale(tensor: QuantyTensor) -> QuantyTensor {
    match tensor.scheme.level {
        QuantLevel::Tensor => tensor,
        QuantLevel::Block => regroup(tensor),
        QuantLevel::Pair => unimplemented!("pair-level quantization is not supported yet"),
    }
}
"""


@pytest.fixture
def quanty(git_repo):
    git_repo.crate("burn-backend", {"src/ops.rs": TRAITS_RS, "src/scheme.rs": SCHEME_RS})
    git_repo.crate("burn-codec", {"src/decode.rs": DECODE_RS})
    git_repo.crate("burn-quanty", {"src/ops.rs": QUANTY_RS})
    # The same backend, but its quantize makes the Pair level: a tensor of it exists there.
    git_repo.crate("burn-paired", {"src/ops.rs": QUANTY_RS.replace(
        'QuantLevel::Pair => unimplemented!("pair-level quantization is not supported yet"),\n        }\n    }\n\n'
        '    fn q_reshape', "QuantLevel::Pair => per_pair(tensor),\n        }\n    }\n\n    fn q_reshape", 1)})
    # And one whose q_from_data keeps the scheme it is given, checking nothing: it makes any level.
    git_repo.crate("burn-unchecked", {"src/ops.rs": QUANTY_RS.replace(
        "let values = unpack_scheme(data.bytes, data.scheme);", "let values = data.bytes;")})
    git_repo.commit("quantized backends")
    return git_repo


def _cells(cli, repo, crate: str) -> dict[str, dict]:
    res = cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", "--format", "json")
    assert res.code == 0, res.stderr
    return {c["operation"]: c for c in json.loads(res.stdout)["cells"] if c["crate"] == crate and c["dtype"] == "QFloat"}


def test_a_level_no_creation_makes_is_no_panic_of_an_operation_on_an_existing_tensor(cli, quanty):
    cells = _cells(cli, quanty, "burn-quanty")
    reshape = cells["q_reshape"]
    assert reshape["status"] == "handled"
    assert reshape["reason"] == ("schemes by QuantLevel: Tensor, Block handled; "
                                 "Pair never created (refused by q_from_data, quantize)")
    # What preempts it: the creations' refusals, the shared decoding's and quantize's own.
    assert [(p["why"], p["path"], p["line"]) for p in reshape["preemptedBy"]] == [
        ("never created", "crates/burn-codec/src/decode.rs", 9), ("never created", "crates/burn-quanty/src/ops.rs", 22)]
    # The creation a user hands the scheme to refuses it there: its cell stays partial.
    assert cells["quantize"]["status"] == "partial"
    assert cells["quantize"]["reason"] == "schemes by QuantLevel: Tensor, Block handled; Pair panics"
    assert "preemptedBy" not in cells["quantize"]
    assert "q_flip" not in cells  # no match on its path: no panic found


@pytest.mark.parametrize("crate", ["burn-paired", "burn-unchecked"])
def test_a_level_one_creation_makes_keeps_the_operation_partial(cli, quanty, crate):
    reshape = _cells(cli, quanty, crate)["q_reshape"]
    assert reshape["status"] == "partial"
    assert reshape["reason"] == "schemes by QuantLevel: Tensor, Block handled; Pair panics"
    assert "preemptedBy" not in reshape


def test_the_never_created_level_is_shown_as_preempted_in_the_table(cli, quanty):
    res = cli("coverage", "--repo", str(quanty.path), "--sha", "HEAD", "--backend", "burn-quanty", "--op", "q_reshape",
              "--format", "markdown")
    assert res.code == 0, res.stderr
    assert "never created" in res.stdout
