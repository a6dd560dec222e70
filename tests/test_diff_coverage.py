"""`diff` and `coverage` share one coverage model: every cell `diff` reports as flipped is a cell
`coverage` shows at both revisions, with the statuses coverage gives it there (blank included),
and every such cell whose status differs is reported. Revisions use the operations matrix of
`coverage --repo`; records files that of `coverage --records`."""

from __future__ import annotations

import json

import pytest
from conftest import DTYPE_RS, GitRepo, run_cli
from test_coverage import FIX_OPS_RS, FIX_TENSOR_RS, OPS_TRAITS_RS

# At head: float_exp dispatches (a blank row now handles F32 and panics on the rest), int_abs is a
# stub (every int dtype: not implemented), conv_transpose handles F64 too, and float_floor is a
# new operation (a row only at head).
HEAD_OPS_RS = FIX_OPS_RS.replace('''    fn float_exp(tensor: FixTensor) -> FixTensor {
        exp_kernel(tensor)
    }''', '''    fn float_exp(tensor: FixTensor) -> FixTensor {
        match tensor.dtype() {
            DType::F32 => exp_kernel(tensor),
            other => panic!("float_exp: unsupported dtype {other:?}"),
        }
    }

    fn float_floor(tensor: FixTensor) -> FixTensor {
        match tensor.dtype() {
            DType::F32 => tensor,
            other => panic!("float_floor: unsupported dtype {other:?}"),
        }
    }''').replace('''    fn int_abs(tensor: FixTensor) -> FixTensor {
        match tensor.dtype() {
            DType::I64 => abs_i64(tensor),
            DType::I32 => abs_i32(tensor),
            other => panic!("int_abs: unsupported dtype {other:?}"),
        }
    }''', '''    fn int_abs(tensor: FixTensor) -> FixTensor {
        unimplemented!("int_abs is not supported by this backend")
    }''').replace("            DType::F32 => x,\n            other => panic!(\"conv_transpose",
                 "            DType::F32 | DType::F64 => x,\n            other => panic!(\"conv_transpose")
OPS_TRAITS_HEAD_RS = OPS_TRAITS_RS.replace("fn float_exp(", "fn float_floor(tensor: FloatTensor<B>) -> FloatTensor<B>;\n"
                                           "    fn float_exp(")


@pytest.fixture
def revisions(tmp_path) -> tuple[GitRepo, str, str]:
    assert HEAD_OPS_RS.count("float_floor") == 2 and "unimplemented!" in HEAD_OPS_RS
    assert "DType::F32 | DType::F64 => x," in HEAD_OPS_RS
    repo = GitRepo(tmp_path / "repo")
    repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS})
    repo.crate("burn-fix", {"src/tensor.rs": FIX_TENSOR_RS, "src/ops.rs": FIX_OPS_RS})
    base = repo.commit("base")
    repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_HEAD_RS})
    repo.crate("burn-fix", {"src/ops.rs": HEAD_OPS_RS})
    head = repo.commit("head")
    return repo, base, head


def ok(*args: str):
    res = run_cli(*args)
    assert res.code == 0, res.stderr
    return res


def shown(doc: dict) -> dict[tuple[str, str, str], str]:
    """What the coverage JSON shows per cell: its status (or reason), blank for a row's column
    with no cell. Rows: the operations (operations view) or the operations with cells."""
    cells = {(c["crate"], c["operation"], c["dtype"]): c.get("reason") or c["status"] for c in doc["cells"]}
    rows = {(o["crate"], o["operation"]) for o in doc["operations"]} or {k[:2] for k in cells}
    return {(crate, op, d): cells.get((crate, op, d), "blank")
            for crate, op in rows for group in doc["columns"] for d in group["dtypes"]}


def expected_flips(base_doc: dict, head_doc: dict) -> dict[tuple[str, str, str], tuple[str, str]]:
    before, after = shown(base_doc), shown(head_doc)
    return {k: (before[k], s) for k, s in after.items() if k in before and before[k] != s}


def flips(doc: dict) -> dict[tuple[str, str, str], tuple[str, str]]:
    return {(f["crate"], f["operation"], f["dtype"]): (f["base"], f["head"]) for f in doc["flipped"]}


def test_revisions_flip_exactly_the_cells_coverage_shows_changed(revisions):
    repo, base, head = revisions
    docs = [json.loads(ok("coverage", "--repo", str(repo.path), "--sha", sha, "--format", "json").stdout)
            for sha in (base, head)]
    assert all(d["view"] == "operations" for d in docs)
    got = flips(json.loads(ok("diff", base, head, "--repo", str(repo.path), "--format", "json").stdout))
    assert got == expected_flips(*docs)
    assert got[("burn-fix", "float_exp", "F32")] == ("blank", "handled")
    assert got[("burn-fix", "float_exp", "F64")] == ("blank", "panics")
    assert got[("burn-fix", "int_abs", "I64")] == ("handled", "not implemented")
    assert got[("burn-fix", "int_abs", "U8")] == ("panics", "not implemented")
    assert not [k for k in got if k[1] == "float_floor"]  # a row only head has
    assert ("burn-fix", "float_floor", "F64") in shown(docs[1])


def test_the_same_cells_flip_whether_the_matrices_were_kept_or_not(revisions):
    repo, base, head = revisions
    args = ("diff", base, head, "--repo", str(repo.path), "--format", "json")
    cold = json.loads(ok(*args, "--no-cache").stdout)["flipped"]
    ok("coverage", "--repo", str(repo.path), "--sha", base, "--format", "json")  # keeps base's matrix
    assert json.loads(ok(*args).stdout)["flipped"] == cold
    assert json.loads(ok(*args).stdout)["flipped"] == cold  # both kept now


def test_records_files_flip_the_cells_coverage_records_shows_changed(revisions, tmp_path):
    repo, base, head = revisions
    files = []
    for name, sha in (("base", base), ("head", head)):
        ok("extract", "--repo", str(repo.path), "--sha", sha, "--out", str(tmp_path / name))
        files.append(str(tmp_path / name / "records.jsonl"))
    docs = [json.loads(ok("coverage", "--records", f, "--format", "json").stdout) for f in files]
    got = flips(json.loads(ok("diff", *files, "--format", "json").stdout))
    assert got and got == expected_flips(*docs)


def test_claim_contradictions_new_and_fixed_are_listed(tmp_path):
    from test_coverage_limits import MODES_RS, OPS_TRAITS_RS as LIMITS_TRAITS_RS, TORCHY_BACKEND_RS, TORCHY_OPS_RS

    repo = GitRepo(tmp_path / "repo")
    repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    repo.crate("burn-backend", {"src/ops.rs": LIMITS_TRAITS_RS, "src/modes.rs": MODES_RS})
    repo.crate("burn-torchy", {"src/ops.rs": TORCHY_OPS_RS, "src/backend.rs": TORCHY_BACKEND_RS})
    base = repo.commit("F16 advertised, I64 not")
    # F16 (which no operation can create) no longer advertised, I64 (int_from_data handles it) is.
    head_backend = TORCHY_BACKEND_RS.replace("DType::F64 | DType::F32 | DType::F16 =>",
                                             "DType::F64 | DType::F32 | DType::I64 =>")
    assert head_backend != TORCHY_BACKEND_RS
    repo.crate("burn-torchy", {"src/backend.rs": head_backend})
    head = repo.commit("claims fixed")

    def claims(a: str, b: str) -> dict:
        return json.loads(ok("diff", a, b, "--repo", str(repo.path), "--format", "json").stdout)

    fixed = claims(base, head)
    assert fixed["claims"]["new"] == []
    by_dtype = {c["dtype"]: c for c in fixed["claims"]["fixed"]}
    assert by_dtype["F16"]["advertised"] is True and "float_from_data" in by_dtype["F16"]["panicsIn"]
    assert by_dtype["F16"]["where"] == "crates/burn-torchy/src/backend.rs:4"
    assert by_dtype["I64"]["advertised"] is False and by_dtype["I64"]["handledIn"] == ["int_from_data"]
    assert fixed["quiet"] is False
    again = claims(head, base)  # the other way round they are new
    assert [(c["dtype"], c["advertised"]) for c in again["claims"]["new"]] == \
        [(c["dtype"], c["advertised"]) for c in fixed["claims"]["fixed"]]
    res = ok("diff", head, base, "--repo", str(repo.path))
    assert "#### Backend claims contradicted (2 new, 0 fixed)" in res.stdout
    assert "| **new** | burn-torchy | F16 | advertised, panics in |" in res.stdout
    assert "Backend claims: 2 claim contradictions new, 0 fixed: new burn-torchy " in res.stderr
