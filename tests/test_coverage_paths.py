"""`coverage` cells along the paths a dtype takes: a helper reached from one dtype's arm speaks for
that dtype only, a dtype an earlier match returns for is not rejected by a later panic, a handled
arm whose helper panics on the same dtype panics, and `partial` is left for payload variants that
go different ways, with the reason in the cell."""

from __future__ import annotations

import json

import pytest

TRAITS_RS = """\
pub trait Backend {}

pub trait FloatTensorOps<B: Backend> {
    fn float_mean(tensor: B::Float) -> B::Float;
    fn float_gather(tensor: B::Float, indices: B::Int) -> B::Float;
}

pub trait IntTensorOps<B: Backend> {
    fn int_matmul(lhs: B::Int, rhs: B::Int) -> B::Int;
    fn int_abs(tensor: B::Int) -> B::Int;
    fn int_sign(tensor: B::Int) -> B::Int;
}

pub trait BoolTensorOps<B: Backend> {
    fn bool_not(tensor: B::Bool) -> B::Bool;
}

pub trait QTensorOps<B: Backend> {
    fn q_from_data(data: TensorData) -> B::Q;
    fn q_reshape(tensor: B::Q, shape: Shape) -> B::Q;
    fn q_slice(tensor: B::Q) -> B::Q;
    fn dequantize(tensor: B::Q) -> B::Float;
}
"""

# A backend in flex's shape: ops call helpers in other files, helpers dispatch on the dtype. Its
# quantization enums (QuantValue) come from outside the tree, as cubecl's do.
OPS_RS = """\
use burn_backend::{Backend, BoolTensorOps, FloatTensorOps, IntTensorOps, QTensorOps};

impl FloatTensorOps<Self> for Flexy {
    fn float_mean(tensor: FlexyTensor) -> FlexyTensor {
        reduce::mean(tensor)
    }

    fn float_gather(tensor: FlexyTensor, indices: FlexyTensor) -> FlexyTensor {
        match indices.dtype() {
            DType::I64 => gather_rows(tensor, indices),
            _ => panic!("float_gather: indices must be I64"),
        }
    }
}

impl IntTensorOps<Self> for Flexy {
    fn int_matmul(lhs: FlexyTensor, rhs: FlexyTensor) -> FlexyTensor {
        matmul::int_matmul(lhs, rhs)
    }

    fn int_abs(tensor: FlexyTensor) -> FlexyTensor {
        match tensor.dtype() {
            DType::I64 => abs_wide(tensor),
            DType::I32 => narrow_abs(tensor),
            DType::U8 => tensor,
            _ => panic!("int_abs: unsupported dtype {:?}", tensor.dtype()),
        }
    }

    fn int_sign(tensor: FlexyTensor) -> FlexyTensor {
        match tensor.dtype() {
            DType::I64 | DType::I32 => with_int!(tensor, [I64, I32]),
            DType::U8 => ones_like(tensor),
            _ => panic!("int_sign: unsupported dtype {:?}", tensor.dtype()),
        }
    }
}

impl BoolTensorOps<Self> for Flexy {
    fn bool_not(tensor: FlexyTensor) -> FlexyTensor {
        match tensor.dtype() {
            DType::Bool(BoolStore::Native | BoolStore::U8) => flip_bytes(tensor),
            DType::Bool(BoolStore::U32) => panic!("bool_not: Bool(U32) storage is not yet supported"),
            _ => panic!("bool_not: not a bool tensor"),
        }
    }
}

impl QTensorOps<Self> for Flexy {
    fn q_from_data(data: TensorData) -> FlexyTensor {
        match data.dtype {
            DType::QFloat(scheme) => {
                let data = TensorData::new(unpack_values(data), scheme);
                from_host(data)
            }
            _ => panic!("q_from_data: expected a quantized dtype"),
        }
    }

    fn q_reshape(tensor: FlexyQTensor, shape: Shape) -> FlexyQTensor {
        let values = tensor.values.to_contiguous();
        FlexyQTensor::new(values.reshape(shape), tensor.scheme)
    }

    fn q_slice(tensor: FlexyQTensor) -> FlexyQTensor {
        match tensor.dtype() {
            DType::I8 => slice_values(tensor),
            DType::QFloat(_) => panic!("q_slice: unsupported dtype {:?}", tensor.dtype()),
            _ => panic!("q_slice: unsupported dtype {:?}", tensor.dtype()),
        }
    }

    fn dequantize(tensor: FlexyQTensor) -> FlexyTensor {
        match tensor.scheme.value {
            QuantValue::Q8F | QuantValue::Q8S => scale_values(tensor),
            QuantValue::Q4F => unimplemented!("dequantize: scheme value Q4F is not supported"),
        }
    }
}

macro_rules! with_int {
    ($tensor:expr, [$($dtype:ident),*]) => {
        match $tensor.dtype() {
            $( DType::$dtype => run_signed($tensor), )*
            other => unimplemented!("unsupported dtype: {:?}", other),
        }
    };
}

fn narrow_abs(tensor: FlexyTensor) -> FlexyTensor {
    match tensor.dtype() {
        DType::I64 => abs_wide(tensor),
        _ => panic!("narrow_abs: unsupported dtype {:?}", tensor.dtype()),
    }
}

fn gather_rows(tensor: FlexyTensor, indices: FlexyTensor) -> FlexyTensor {
    match tensor.dtype() {
        DType::F64 | DType::F32 => copy_rows(tensor, indices),
        _ => panic!("gather_rows: unsupported dtype {:?}", tensor.dtype()),
    }
}

fn from_host(data: TensorData) -> FlexyTensor {
    match data.dtype {
        DType::F32 | DType::I32 => wrap(data),
        other => panic!("from_host: unsupported dtype {other:?}"),
    }
}
"""

MATMUL_RS = """\
pub fn int_matmul(lhs: FlexyTensor, rhs: FlexyTensor) -> FlexyTensor {
    match lhs.dtype() {
        DType::I32 => matmul_i32(lhs, rhs),
        _ => panic!("int_matmul: unsupported dtype {:?}", lhs.dtype()),
    }
}

fn matmul_i32(lhs: FlexyTensor, rhs: FlexyTensor) -> FlexyTensor {
    let lhs = lhs.to_contiguous();
    multiply(lhs, rhs)
}
"""

REDUCE_RS = """\
pub fn mean(tensor: FlexyTensor) -> FlexyTensor {
    let dtype = tensor.dtype();
    match dtype {
        DType::F16 => return mean_half(&tensor),
        _ => {}
    }
    match dtype {
        DType::F32 => sum_f32(tensor),
        DType::F64 => sum_f64(tensor),
        _ => panic!("mean: unsupported dtype {:?}", dtype),
    }
}

fn mean_half(tensor: &FlexyTensor) -> FlexyTensor {
    match tensor.dtype() {
        DType::F16 | DType::BF16 => widen_and_sum(tensor),
        _ => panic!("mean_half: unsupported dtype {:?}", tensor.dtype()),
    }
}
"""

TENSOR_RS = """\
impl FlexyTensor {
    pub fn to_contiguous(&self) -> FlexyTensor {
        match self.dtype {
            DType::F64 | DType::F32 | DType::I64 | DType::I32 | DType::U8 => self.copy(),
            _ => panic!("Contiguous copy of an unsupported dtype: {:?}", self.dtype),
        }
    }
}
"""


@pytest.fixture
def flexy(git_repo):
    git_repo.crate("burn-backend", {"src/ops.rs": TRAITS_RS})
    git_repo.crate("burn-flexy", {"src/ops.rs": OPS_RS, "src/matmul.rs": MATMUL_RS, "src/reduce.rs": REDUCE_RS,
                                  "src/tensor.rs": TENSOR_RS})
    git_repo.commit("a backend")
    return git_repo


def cells(cli, repo, op: str, *args) -> dict[str, dict]:
    res = cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", "--format", "json", *args)
    assert res.code == 0, res.stderr
    doc = json.loads(res.stdout)
    return {c["dtype"]: c for c in doc["cells"] if c["crate"] == "burn-flexy" and c["operation"] == op}


def test_a_helper_reached_from_another_dtypes_arm_says_nothing_of_this_one(cli, flexy):
    matmul = cells(cli, flexy, "int_matmul")
    # to_contiguous handles U8 and I64, but only I32 gets there: int_matmul's own match rejects them.
    assert matmul["U8"]["status"] == "panics" and matmul["I64"]["status"] == "panics"
    assert matmul["I32"]["status"] == "handled"
    assert matmul["U8"]["sites"][0]["path"] == "crates/burn-flexy/src/matmul.rs"
    # narrow_abs rejects U8, but int_abs hands U8 back before it: handled.
    assert cells(cli, flexy, "int_abs")["U8"]["status"] == "handled"


def test_a_macro_invoked_in_one_arm_speaks_for_that_arms_dtypes(cli, flexy):
    sign = cells(cli, flexy, "int_sign")
    # with_int! rejects U8, but it is invoked in the signed arm: U8 takes the other one.
    assert sign["U8"]["status"] == "handled"
    assert sign["I32"]["status"] == "handled"


def test_a_handled_arm_whose_helper_panics_on_the_same_dtype_panics(cli, flexy):
    abs_cells = cells(cli, flexy, "int_abs")
    assert abs_cells["I32"]["status"] == "panics"
    narrow_panic = next(n for n, text in enumerate(OPS_RS.splitlines(), 1) if "narrow_abs: unsupported" in text)
    assert abs_cells["I32"]["sites"][0]["line"] == narrow_panic
    assert abs_cells["I64"]["status"] == "handled"


def test_a_dtype_returned_early_is_not_rejected_by_a_later_panic(cli, flexy):
    mean = cells(cli, flexy, "float_mean")
    assert mean["F16"]["status"] == "handled"
    assert mean["BF16"]["status"] == "panics" and mean["F32"]["status"] == "handled"


def test_an_index_tensors_arm_does_not_decide_the_data_tensors_path(cli, flexy):
    gather = cells(cli, flexy, "float_gather")
    # The arm is on the indices' int dtype: gather_rows still speaks for the float tensor's dtypes.
    assert gather["F16"]["status"] == "panics" and gather["F32"]["status"] == "handled"


def test_a_value_rebuilt_in_the_arm_is_not_the_matched_one(cli, flexy):
    # from_host rejects QFloat, but what it is given is the unpacked values, not the quantized data.
    assert cells(cli, flexy, "q_from_data")["QFloat"]["status"] == "handled"


def test_partial_says_which_payload_variants_go_which_way(cli, flexy, tmp_path):
    cell = cells(cli, flexy, "bool_not")["Bool"]
    assert cell["status"] == "partial"
    assert cell["reason"] == "handled: Bool(Native), Bool(U8); panics: Bool(U32)"
    assert cell["parts"] == {"Bool(Native)": "handled", "Bool(U8)": "handled", "Bool(U32)": "panics"}
    # Each dtype alone is never partial: the expanded columns say handled or panics.
    expanded = cells(cli, flexy, "bool_not", "--expand")
    assert {d: c["status"] for d, c in expanded.items() if d.startswith("Bool")} == {
        "Bool(Native)": "handled", "Bool(U8)": "handled", "Bool(U32)": "panics"}
    assert all(c["status"] != "partial" for op in ("int_matmul", "int_abs", "float_mean")
               for c in cells(cli, flexy, op).values())


def test_a_quantized_tensors_values_are_not_the_quantized_dtype(cli, flexy):
    # to_contiguous rejects QFloat only in its catch-all: it runs on the I8 values, never on QFloat.
    assert "QFloat" not in cells(cli, flexy, "q_reshape")
    # A match that names QFloat is on the quantized tensor itself.
    assert cells(cli, flexy, "q_slice")["QFloat"]["status"] == "panics"


def test_a_quantized_operation_that_rejects_some_schemes_is_partial_naming_them(cli, flexy):
    cell = cells(cli, flexy, "dequantize")["QFloat"]
    assert cell["status"] == "partial"
    assert cell["reason"] == "schemes by QuantValue: Q8F, Q8S handled; Q4F panics"
    assert cell["sites"][0]["path"] == "crates/burn-flexy/src/ops.rs"


def _read(fn: str):
    from analyzer.features.coverage.paths import read_paths

    return read_paths(fn.encode(), 1, {"DType"})


def test_a_let_inside_a_closure_of_the_arm_does_not_rebind_the_matched_value():
    paths = _read("""\
fn f(data: T) -> T {
    match data.dtype {
        DType::F32 => {
            let keep = |d| { let data = d; data };
            to_f32(data)
        }
        DType::I32 => {
            let data = convert(data);
            to_i32(data)
        }
        _ => other(data),
    }
}
""")
    assert [f.rebound for f in paths.calls["to_f32"]] == [False]
    assert [f.rebound for f in paths.calls["to_i32"]] == [True]
    # The call inside the let is made before the rebinding.
    assert [f.rebound for f in paths.calls["convert"]] == [False]
    assert paths.calls["to_i32"][0].allows("I32") is False and paths.calls["to_f32"][0].allows("F32")


def test_a_call_inside_a_nested_arm_takes_the_innermost_arms_dtypes():
    paths = _read("""\
fn f(x: T, y: T) -> T {
    match x.dtype {
        DType::F32 | DType::F16 => match y.dtype {
            DType::F16 => half(y),
            _ => wide(y),
        },
        _ => rest(x),
    }
}
""")
    (half,), (wide,), (rest,) = paths.calls["half"], paths.calls["wide"], paths.calls["rest"]
    assert (half.names, half.negated) == (frozenset({"F16"}), False)
    assert (wide.names, wide.negated) == (frozenset({"F16"}), True)
    assert (rest.names, rest.negated) == (frozenset({"F32", "F16"}), True)


def test_a_macro_call_the_parser_places_in_no_arm_is_on_no_path():
    # `helper!(x);` where an arm should be: tree-sitter keeps it in an ERROR node of the match's
    # block, between the arms, where no dtype is known to reach it.
    paths = _read("""\
fn f(x: T) {
    match x.dtype {
        DType::F32 => a(x),
        helper!(x);
        _ => b(x),
    }
    after!(x);
}
""")
    assert sorted(paths.calls) == ["a", "b"]
    assert list(paths.macros) == [7]
