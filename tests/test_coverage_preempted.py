"""Coverage of cells that panic only behind an earlier refusal: every format shows them apart,
with the earlier refusal linked."""

from __future__ import annotations

import json

import pytest

TRAITS_RS = """\
pub trait FloatTensorOps<B: Backend> {}
pub trait QTensorOps<B: Backend> {}
"""

STONE_RS = """\
impl QTensorOps<Self> for Stone {
    fn q_from_data(data: TensorData, device: &Device) -> QuantizedTensor<Self> {
        unimplemented!()
    }
    fn quantize(tensor: FloatTensor<Self>, scheme: &QuantScheme) -> QuantizedTensor<Self> {
        unimplemented!()
    }
    fn q_reshape(tensor: QuantizedTensor<Self>, shape: Shape) -> QuantizedTensor<Self> {
        unimplemented!()
    }
}
impl FloatTensorOps<Self> for Stone {
    fn float_exp(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        match tensor.dtype() {
            DType::F64 => exp_f64(tensor),
            DType::F32 => exp_f32(tensor),
            _ => panic!("exp: unsupported dtype"),
        }
    }
}
"""


@pytest.fixture
def stone(git_repo):
    git_repo.write("crates/burn-std/src/traits.rs", TRAITS_RS)
    git_repo.crate("burn-stone", {"src/ops.rs": STONE_RS})
    git_repo.sha = git_repo.commit()
    return git_repo


def _coverage(cli, repo, fmt: str) -> str:
    r = cli("coverage", "--repo", str(repo.path), "--sha", repo.sha, "--format", fmt)
    assert r.code == 0, r.stderr
    return r.stdout


def test_preempted_cells_in_every_format(cli, stone):
    records = {}
    r = cli("extract", "--repo", str(stone.path), "--sha", stone.sha, "--out", str(stone.path.parent / "out"))
    assert r.code == 0, r.stderr
    for line in (stone.path.parent / "out" / "records.jsonl").read_text().splitlines():
        d = json.loads(line)
        records[d["record"]["lineNumber"]] = d
    q_from_data, quantize = records[3]["record"], records[6]["record"]

    doc = json.loads(_coverage(cli, stone, "json"))
    cells = {(c["operation"], c["dtype"]): c for c in doc["cells"] if c["crate"] == "burn-stone"}
    reshape = cells[("q_reshape", "QFloat")]
    assert reshape["status"] == "panics"
    assert reshape["preemptedBy"] == [
        {"why": "creation", "id": q_from_data["id"], "path": q_from_data["filePath"], "line": 3,
         "url": q_from_data["githubUrl"]},
        {"why": "creation", "id": quantize["id"], "path": quantize["filePath"], "line": 6,
         "url": quantize["githubUrl"]}]
    # The refusals a user does meet are not preempted: the creation stubs, and a float dtype
    # the backend holds.
    assert "preemptedBy" not in cells[("q_from_data", "QFloat")]
    assert cells[("float_exp", "F16")]["status"] == "panics" and "preemptedBy" not in cells[("float_exp", "F16")]

    markdown = _coverage(cli, stone, "markdown")
    row = next(ln for ln in markdown.splitlines() if ln.startswith("| `q_reshape`"))
    assert "⏭️" in row and "❌" not in row and f"]({q_from_data['githubUrl']})" in row and "met first: creation" in row
    exp_row = next(ln for ln in markdown.splitlines() if ln.startswith("| `float_exp`"))
    assert "❌" in exp_row and "⏭️" not in exp_row

    table = _coverage(cli, stone, "table")
    row = next(ln for ln in table.splitlines() if ln.lstrip().startswith("q_reshape"))
    assert "»" in row and "✗" not in row

    html = _coverage(cli, stone, "html")
    assert 'class="c panics preempted"' in html or "panics preempted" in html
    assert "preempted (creation): a user meets" in html
