"""`coverage`'s claims view on a backend whose `supports_dtype` holds no panic, no enum and no
match (so nothing else makes its file worth parsing), and whose answer asks the device."""

from __future__ import annotations

import json

TRAITS_RS = """\
pub trait Backend {}

pub trait IntTensorOps<B: Backend> {
    fn int_abs(tensor: B::Int) -> B::Int;
}
"""

OPS_RS = """\
impl<R: Runtime> IntTensorOps<Self> for Cubey<R> {
    fn int_abs(tensor: CubeyTensor) -> CubeyTensor {
        match tensor.dtype() {
            DType::I64 | DType::I32 => launch_abs(tensor),
            other => panic!("int_abs: unsupported dtype {other:?}"),
        }
    }
}
"""

# Bool(Native) answered before the device is asked; the rest is the device's answer.
BACKEND_RS = """\
impl<R: Runtime> Backend for Cubey<R> {
    fn supports_dtype(device: &Self::Device, dtype: DType) -> bool {
        if let DType::Bool(BoolStore::Native) = dtype {
            return false;
        }
        let client = R::client(device);
        client.properties().supports(dtype)
    }
}
"""


def test_a_claims_method_alone_is_read_and_a_device_answer_named_as_such(cli, git_repo):
    git_repo.crate("burn-backend", {"src/ops.rs": TRAITS_RS})
    git_repo.crate("burn-cubey", {"src/ops.rs": OPS_RS, "src/backend.rs": BACKEND_RS})
    git_repo.commit()
    res = cli("coverage", "--repo", str(git_repo.path), "--sha", "HEAD", "--format", "json")
    assert res.code == 0, res.stderr
    claims = {c["dtype"]: c for c in json.loads(res.stdout)["claims"] if c["crate"] == "burn-cubey"}
    assert claims["F32"]["advertised"] is None and claims["F32"]["reading"] == "device"
    assert claims["F32"]["where"] == "crates/burn-cubey/src/backend.rs:2"
    native = claims["Bool(Native)"]
    assert native["advertised"] is False and native["reading"] == "match"
    assert native["where"] == "crates/burn-cubey/src/backend.rs:3"
    # The other storages are the device's to answer.
    assert claims["Bool"]["advertised"] is None and claims["Bool"]["reading"] == "device"
    table = cli("coverage", "--repo", str(git_repo.path), "--sha", "HEAD").stdout
    assert "burn-cubey I64: its answer depends on the device at run time (src/backend.rs:2)" in table
