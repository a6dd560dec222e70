"""`coverage` on what a backend cannot do at all: operations whose whole body is a panic, dtypes
its creation dispatches reject (every operation of that kind then panics), the settings (non-dtype
enums) its operations match on, and its own `dtype_usage` claims set against the cells."""

from __future__ import annotations

import json

import pytest
from test_coverage import _Cells

OPS_TRAITS_RS = """\
pub trait Backend {}

pub trait FloatTensorOps<B: Backend> {
    fn float_from_data(data: TensorData) -> B::Float;
    fn float_exp(tensor: B::Float) -> B::Float;
    fn float_sum(tensor: B::Float) -> B::Float;
}

pub trait IntTensorOps<B: Backend> {
    fn int_from_data(data: TensorData) -> B::Int;
    fn int_abs(tensor: B::Int) -> B::Int;
}

pub trait QTensorOps<B: Backend> {
    fn q_slice(tensor: B::Q) -> B::Q;
    fn q_reshape(tensor: B::Q) -> B::Q;
}

pub trait ModuleOps<B: Backend> {
    fn interpolate(x: B::Float, options: InterpolateOptions) -> B::Float;
    fn interpolate_backward(x: B::Float, options: InterpolateOptions) -> B::Float;
    fn pad(x: B::Float, mode: PadMode) -> B::Float;
}
"""

MODES_RS = """\
pub enum InterpolateMode {
    Nearest,
    NearestExact,
    Bilinear,
    Bicubic,
}

pub enum PadMode {
    Constant,
    Reflect,
    Edge,
}

pub struct InterpolateOptions {
    pub mode: InterpolateMode,
}
"""

# A backend in tch's shape: q ops left unimplemented, int storage without U8, no F16/BF16 storage,
# interpolate rejecting one mode.
TORCHY_OPS_RS = """\
use burn_backend::{Backend, FloatTensorOps, IntTensorOps, QTensorOps, ModuleOps};

impl FloatTensorOps<Self> for Torchy {
    fn float_from_data(data: TensorData) -> TorchyTensor {
        match data.dtype {
            DType::F64 => from_f64(data),
            DType::F32 => from_f32(data),
            other => panic!("float_from_data: {other:?} is not supported"),
        }
    }

    fn float_exp(tensor: TorchyTensor) -> TorchyTensor {
        tensor.exp()
    }

    fn float_sum(tensor: TorchyTensor) -> TorchyTensor {
        match tensor.dtype() {
            DType::F64 => sum_f64(tensor),
            DType::F32 => sum_f32(tensor),
            DType::F16 => sum_f16(tensor),
            other => panic!("float_sum: {other:?} is not supported"),
        }
    }
}

impl IntTensorOps<Self> for Torchy {
    fn int_from_data(data: TensorData) -> TorchyTensor {
        match data.dtype {
            DType::I64 => from_i64(data),
            DType::I32 => from_i32(data),
            DType::U8 => unimplemented!("u8 storage"),
            other => panic!("int_from_data: {other:?} is not supported"),
        }
    }

    fn int_abs(tensor: TorchyTensor) -> TorchyTensor {
        tensor.abs()
    }
}

impl QTensorOps<Self> for Torchy {
    fn q_slice(tensor: TorchyTensor) -> TorchyTensor {
        unimplemented!()
    }

    fn q_reshape(tensor: TorchyTensor) -> TorchyTensor {
        tensor.reshape()
    }
}

impl ModuleOps<Self> for Torchy {
    fn interpolate(x: TorchyTensor, options: InterpolateOptions) -> TorchyTensor {
        match options.mode {
            InterpolateMode::Nearest => nearest(x),
            InterpolateMode::NearestExact => {
                panic!("nearest exact interpolation is not supported by this backend")
            }
            InterpolateMode::Bilinear => bilinear(x),
            InterpolateMode::Bicubic => bicubic(x),
        }
    }

    fn interpolate_backward(x: TorchyTensor, options: InterpolateOptions) -> TorchyTensor {
        resample(x, options.mode)
    }

    fn pad(x: TorchyTensor, mode: PadMode) -> TorchyTensor {
        match mode {
            PadMode::Constant => pad_constant(x),
            other => unimplemented!("padding mode {other:?} is not supported"),
        }
    }
}

fn resample(x: TorchyTensor, mode: InterpolateMode) -> TorchyTensor {
    match mode {
        InterpolateMode::NearestExact => panic!("nearest exact resampling is not supported"),
        _ => x,
    }
}
"""


@pytest.fixture
def torchy(git_repo):
    git_repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS, "src/modes.rs": MODES_RS})
    git_repo.crate("burn-torchy", {"src/ops.rs": TORCHY_OPS_RS})
    git_repo.sha = git_repo.commit("a backend")
    return git_repo


def coverage(cli, repo, *args) -> str:
    res = cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", *args)
    assert res.code == 0, res.stderr
    return res.stdout


def doc_of(cli, repo, *args) -> dict:
    return json.loads(coverage(cli, repo, "--format", "json", *args))


def cells(doc: dict, crate: str, op: str) -> dict[str, dict]:
    return {c["dtype"]: c for c in doc["cells"] if c["crate"] == crate and c["operation"] == op}


def test_an_unimplemented_operation_panics_on_every_dtype_of_its_kind(cli, torchy):
    doc = doc_of(cli, torchy, "--full")
    q_slice = cells(doc, "burn-torchy", "q_slice")
    assert q_slice["QFloat"]["status"] == "panics"
    assert q_slice["QFloat"]["reason"] == "not implemented"
    assert q_slice["QFloat"]["sites"][0]["line"] == 43
    # Dtypes of other kinds stay n/a; an implemented q op keeps no panic.
    assert q_slice["F32"]["status"] == "n/a" and "reason" not in q_slice["F32"]
    assert "QFloat" not in cells(doc, "burn-torchy", "q_reshape")
    ops = {o["operation"]: o for o in doc["operations"] if o["crate"] == "burn-torchy"}
    assert ops["q_slice"]["notImplemented"] and ops["q_slice"]["panicFound"]
    assert not ops["q_reshape"]["notImplemented"]


def page_cells(html: str) -> list[dict]:
    parser = _Cells()
    parser.feed(html)
    parser.resolve()
    return parser.cells


def test_not_implemented_is_named_in_every_format(cli, torchy, tmp_path):
    md = coverage(cli, torchy, "--format", "markdown")
    row = next(line for line in md.splitlines() if line.startswith("| `q_slice`"))
    assert "❌" in row and "not implemented" in row and "src/ops.rs:43" in row
    table = coverage(cli, torchy, "--op", "q_slice")
    assert "not implemented src/ops.rs:43" in table
    page = tmp_path / "c.html"
    coverage(cli, torchy, "--format", "html", "--out", str(page))
    html = page.read_text()
    assert "not implemented · src/ops.rs:43" in html
    titles = [c.get("title", "") for c in page_cells(html)]
    assert any(t.startswith("burn-torchy · q_slice · QFloat: panics\nnot implemented\nthe whole body of q_slice panics")
               for t in titles)


def test_a_dtype_the_backend_cannot_create_panics_in_every_operation_of_its_kind(cli, torchy):
    doc = doc_of(cli, torchy, "--full")
    backend = next(b for b in doc["backends"] if b["crate"] == "burn-torchy")
    held = {h["dtype"]: [r["operation"] for r in h["rejectedBy"]] for h in backend["cannotHold"]}
    # from_data rejects F16, BF16 and U8 (an unimplemented arm too) and no other creation handles them.
    assert held == {"F16": ["float_from_data"], "BF16": ["float_from_data"], "U8": ["int_from_data"]}
    exp, total = cells(doc, "burn-torchy", "float_exp"), cells(doc, "burn-torchy", "float_sum")
    # An op with no dispatch, and one whose own dispatch handles F16: both panic at creation.
    assert exp["F16"]["status"] == "panics" and exp["F16"]["reason"] == "cannot hold"
    assert total["F16"]["status"] == "panics" and total["F16"]["reason"] == "cannot hold"
    assert "F32" not in exp and total["F32"]["status"] == "handled"
    assert cells(doc, "burn-torchy", "int_abs")["U8"]["reason"] == "cannot hold"
    # Another kind stays n/a; the creation op keeps its own panic; an unimplemented op says so.
    assert exp["U8"]["status"] == "n/a"
    assert "reason" not in cells(doc, "burn-torchy", "float_from_data")["F16"]
    assert cells(doc, "burn-torchy", "q_slice")["QFloat"]["reason"] == "not implemented"


def test_a_cast_that_makes_the_dtype_means_the_backend_holds_it(cli, git_repo):
    traits = OPS_TRAITS_RS.replace("    fn float_exp(", "    fn float_cast(tensor: B::Float, dtype: DType) -> B::Float;\n"
                                   "    fn float_exp(")
    ops = TORCHY_OPS_RS.replace("""    fn float_exp(tensor: TorchyTensor) -> TorchyTensor {""", """    fn float_cast(tensor: TorchyTensor, dtype: DType) -> TorchyTensor {
        match dtype {
            DType::F16 => to_f16(tensor),
            other => panic!("float_cast: {other:?} is not supported"),
        }
    }

    fn float_exp(tensor: TorchyTensor) -> TorchyTensor {""")
    git_repo.crate("burn-backend", {"src/ops.rs": traits, "src/modes.rs": MODES_RS})
    git_repo.crate("burn-torchy", {"src/ops.rs": ops})
    git_repo.commit()
    doc = doc_of(cli, git_repo)
    backend = next(b for b in doc["backends"] if b["crate"] == "burn-torchy")
    assert sorted(h["dtype"] for h in backend["cannotHold"]) == ["BF16", "U8"]
    assert "F16" not in cells(doc, "burn-torchy", "float_exp")


def test_cannot_hold_is_a_line_of_the_backend_summary_in_every_format(cli, torchy, tmp_path):
    md = coverage(cli, torchy, "--format", "markdown")
    assert "Cannot hold `U8`: `int_from_data` at [src/ops.rs:" in md
    table = coverage(cli, torchy, "--backend", "torchy")
    assert "cannot hold F16: rejected by float_from_data src/ops.rs:8" in table
    page = tmp_path / "c.html"
    coverage(cli, torchy, "--format", "html", "--out", str(page))
    html = page.read_text()
    assert "Cannot hold BF16: float_from_data rejects it at" in html
    assert "burn-torchy cannot create a F16 tensor: float_from_data panics on it at crates/burn-torchy/src/ops.rs:8" in html


def _settings(doc: dict, crate: str, op: str, enum: str) -> dict[str, str]:
    return {s["variant"]: s["status"] for s in doc["settings"]
            if (s["crate"], s["operation"], s["enum"]) == (crate, op, enum)}


def test_settings_name_the_modes_each_operation_handles_and_rejects(cli, torchy):
    doc = doc_of(cli, torchy)
    assert set(doc["settings"][0]) == {"crate", "operation", "enum", "variant", "status", "sites"}
    # Explicit arms, in the enum's declaration order.
    assert list(_settings(doc, "burn-torchy", "interpolate", "InterpolateMode").items()) == [
        ("Nearest", "handled"), ("NearestExact", "panics"), ("Bilinear", "handled"), ("Bicubic", "handled")]
    exact = next(s for s in doc["settings"] if s["operation"] == "interpolate" and s["variant"] == "NearestExact")
    assert [x["line"] for x in exact["sites"]] == [56]
    # Reached through a helper; a catch-all handles the rest of the enum's variants.
    assert _settings(doc, "burn-torchy", "interpolate_backward", "InterpolateMode") == {
        "Nearest": "handled", "NearestExact": "panics", "Bilinear": "handled", "Bicubic": "handled"}
    # A panicking catch-all rejects every variant no arm names.
    assert _settings(doc, "burn-torchy", "pad", "PadMode") == {"Constant": "handled", "Reflect": "panics",
                                                             "Edge": "panics"}


def test_settings_in_every_format(cli, torchy, tmp_path):
    md = coverage(cli, torchy, "--format", "markdown")
    assert "### PadMode" in md
    row = next(line for line in md.splitlines() if line.startswith("| `interpolate` | burn-torchy"))
    assert row.split(" | ")[2:6] == ["✅", "❌", "✅", "✅"] and "src/ops.rs:56" in row
    table = coverage(cli, torchy)
    assert "Settings: the InterpolateMode variants each operation handles" in table
    page = tmp_path / "c.html"
    coverage(cli, torchy, "--format", "html", "--out", str(page))
    assert "burn-torchy · interpolate · InterpolateMode::NearestExact: panics\npanics at crates/burn-torchy/src/ops.rs:56" \
        in page.read_text()
    # A filter keeps the settings of the chosen operations only.
    doc = doc_of(cli, torchy, "--op", "pad")
    assert {s["operation"] for s in doc["settings"]} == {"pad"}


def test_a_match_on_the_backends_own_enum_is_no_setting(cli, git_repo):
    ops = TORCHY_OPS_RS + """
pub enum Grad {
    Tracked,
    Untracked,
}

fn require(x: TorchyTensor) -> TorchyTensor {
    match x.grad {
        Grad::Tracked => x,
        Grad::Untracked => panic!("this mode is not supported"),
    }
}
"""
    git_repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS, "src/modes.rs": MODES_RS})
    git_repo.crate("burn-torchy", {"src/ops.rs": ops.replace("tensor.abs()", "require(tensor)")})
    git_repo.commit()
    doc = doc_of(cli, git_repo)
    assert {s["enum"] for s in doc["settings"]} == {"InterpolateMode", "PadMode"}


def test_an_interpreters_match_over_its_own_operation_enum_is_no_setting(cli, git_repo):
    # A router in burn's shape: operations become values of an IR enum (defined in another crate)
    # and an interpreter matches on them; no operation takes that enum from its caller.
    ir = "pub enum FloatOperationIr {\n    Exp,\n    Sum,\n    Quantize,\n}\n"
    routy = """\
impl FloatTensorOps<Self> for Routy {
    fn float_exp(tensor: RoutyTensor) -> RoutyTensor {
        interpret(FloatOperationIr::Exp)
    }

    fn float_sum(tensor: RoutyTensor) -> RoutyTensor {
        interpret(FloatOperationIr::Sum)
    }
}

fn interpret(op: FloatOperationIr) -> RoutyTensor {
    match op {
        FloatOperationIr::Exp => run_exp(),
        FloatOperationIr::Sum => run_sum(),
        FloatOperationIr::Quantize => todo!(),
    }
}
"""
    git_repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS, "src/modes.rs": MODES_RS})
    git_repo.crate("burn-torchy", {"src/ops.rs": TORCHY_OPS_RS})
    git_repo.crate("burn-ir", {"src/operation.rs": ir})
    git_repo.crate("burn-routy", {"src/ops.rs": routy})
    git_repo.commit()
    doc = doc_of(cli, git_repo)
    assert {s["enum"] for s in doc["settings"]} == {"InterpolateMode", "PadMode"}
    # The option struct's field makes InterpolateMode a setting of both operations that take it.
    assert {(s["operation"], s["variant"]) for s in doc["settings"] if s["status"] == "panics"
            and s["enum"] == "InterpolateMode"} == {("interpolate", "NearestExact"),
                                                    ("interpolate_backward", "NearestExact")}


TORCHY_BACKEND_RS = """\
impl Backend for Torchy {
    fn dtype_usage(_device: &Self::Device, dtype: DType) -> DTypeUsageSet {
        match dtype {
            DType::F64 | DType::F32 | DType::F16 => DTypeUsage::general(),
            DType::Bool(BoolStore::Native) => DTypeUsage::Storage | DTypeUsage::Arithmetic,
            DType::QFloat(scheme) if usable(&scheme) => DTypeUsage::Storage.into(),
            _ => DTypeUsageSet::empty(),
        }
    }

    fn seed(seed: u64) {
        unimplemented!("seeding")
    }
}
"""

DEVICE_BACKEND_RS = """\
impl Backend for Remote {
    fn dtype_usage(device: &Self::Device, dtype: DType) -> DTypeUsageSet {
        let client = Remote::client(device);
        client.usage(dtype)
    }

    fn seed(seed: u64) {
        unimplemented!("seeding a remote device")
    }
}
"""


def test_claims_set_the_backends_dtype_usage_against_the_cells(cli, git_repo):
    git_repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS, "src/modes.rs": MODES_RS})
    git_repo.crate("burn-torchy", {"src/ops.rs": TORCHY_OPS_RS, "src/backend.rs": TORCHY_BACKEND_RS})
    git_repo.crate("burn-remote", {"src/backend.rs": DEVICE_BACKEND_RS,
                                   "src/ops.rs": "impl IntTensorOps<Self> for Remote {\n"
                                                 "    fn int_abs(tensor: T) -> T {\n        tensor\n    }\n}\n"})
    git_repo.commit()
    doc = doc_of(cli, git_repo)
    claims = {(c["crate"], c["dtype"]): c for c in doc["claims"]}
    assert set(doc["claims"][0]) >= {"crate", "dtype", "advertised", "where", "panicsIn"}
    f16 = claims[("burn-torchy", "F16")]
    # Advertised generally usable, yet the backend cannot even create it.
    assert f16["advertised"] is True and f16["where"] == "crates/burn-torchy/src/backend.rs:4"
    assert f16["panicsIn"] == ["float_exp", "float_from_data", "float_sum", "interpolate", "interpolate_backward",
                               "pad"]
    assert claims[("burn-torchy", "F32")]["advertised"] is True and claims[("burn-torchy", "F32")]["panicsIn"] == []
    # Storage | Arithmetic is the general usage; a sub-variant the match names gets its own row.
    assert claims[("burn-torchy", "Bool(Native)")]["advertised"] is True
    # The catch-all: not advertised, and where operations handle it anyway, they are named.
    i64 = claims[("burn-torchy", "I64")]
    assert i64["advertised"] is False and i64["where"] == "crates/burn-torchy/src/backend.rs:7"
    assert i64["handledIn"] == ["int_from_data"]
    # A guard decides QFloat: the audit does not say. Its stub (q_slice) is apart from the panics.
    assert claims[("burn-torchy", "QFloat")]["advertised"] is None
    assert claims[("burn-torchy", "QFloat")]["stubsIn"] == ["q_slice"]
    assert "q_slice" not in claims[("burn-torchy", "QFloat")]["panicsIn"]
    # An answer that asks the device at run time is named as such.
    remote = [c for c in doc["claims"] if c["crate"] == "burn-remote"]
    assert remote and all(c["advertised"] is None and c["reading"] == "device" for c in remote)
    md = coverage(cli, git_repo, "--format", "markdown")
    assert "| burn-torchy | `F16` | yes | crates/burn-torchy/src/backend.rs:4 | `float_exp`, `float_from_data`" in md
    assert "Not implemented (stubs, whatever the dtype; not counted above): burn-torchy: `q_slice`" in md
    table = coverage(cli, git_repo)
    assert "burn-torchy advertises F16 (src/backend.rs:4); panics in float_exp" in table
    assert "burn-remote F64: its answer depends on the device at run time (src/backend.rs:2)" in table


# Bool storages: the dtype enum's Bool carries its storage, and an alias of the storage enum is
# what bool creations take. Flexy makes bools through one helper that rejects U32; every bool
# operation reads the storage through a contiguous copy that panics on U32 only.
BOOL_TRAITS_RS = """\
pub trait Backend {}

pub type BoolDType = BoolStore;

pub trait BoolTensorOps<B: Backend> {
    fn bool_from_data(data: TensorData) -> B::Bool;
    fn bool_ones(shape: Shape, dtype: BoolDType) -> B::Bool;
    fn bool_all(tensor: B::Bool) -> B::Bool;
    fn bool_reshape(tensor: B::Bool, shape: Shape) -> B::Bool;
}
"""

FLEXY_BOOL_RS = """\
use burn_backend::{Backend, BoolTensorOps};

impl BoolTensorOps<Self> for Flexy {
    fn bool_from_data(data: TensorData) -> FlexyTensor {
        match data.dtype {
            DType::Bool(BoolStore::U32) => panic!("flexy does not support Bool(U32) data"),
            _ => FlexyTensor::from_data(data),
        }
    }

    fn bool_ones(shape: Shape, dtype: BoolDType) -> FlexyTensor {
        make_bool(vec![1u8; shape.num_elements()], shape, dtype)
    }

    fn bool_all(tensor: FlexyTensor) -> FlexyTensor {
        all_of(tensor.to_contiguous())
    }

    fn bool_reshape(tensor: FlexyTensor, shape: Shape) -> FlexyTensor {
        tensor.reshape(shape)
    }
}

fn make_bool(data: Vec<u8>, shape: Shape, dtype: BoolDType) -> FlexyTensor {
    let store = match dtype {
        BoolDType::Native => BoolStore::Native,
        BoolDType::U8 => BoolStore::U8,
        BoolDType::U32 => panic!("flexy does not support Bool(U32) storage"),
    };
    FlexyTensor::new(data, shape, DType::Bool(store))
}

impl FlexyTensor {
    fn to_contiguous(&self) -> FlexyTensor {
        match self.dtype {
            DType::F32 => self.copy::<f32>(),
            DType::Bool(BoolStore::Native | BoolStore::U8) => self.copy::<u8>(),
            DType::Bool(BoolStore::U32) => panic!("flexy: Bool(U32) storage is not yet supported"),
            other => panic!("unsupported dtype for a contiguous copy: {other:?}"),
        }
    }
}
"""


@pytest.fixture
def flexy(git_repo):
    from conftest import DTYPE_RS
    git_repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    git_repo.crate("burn-backend", {"src/ops.rs": BOOL_TRAITS_RS})
    git_repo.crate("burn-flexy", {"src/ops.rs": FLEXY_BOOL_RS})
    # The same backend, but its bool creation makes every storage: Bool(U32) is held there.
    git_repo.crate("burn-wide", {"src/ops.rs": FLEXY_BOOL_RS.replace(
        'BoolDType::U32 => panic!("flexy does not support Bool(U32) storage")', "BoolDType::U32 => BoolStore::U32")})
    # A backend in tch's shape: its creations take the native storage only.
    git_repo.crate("burn-narrow", {"src/ops.rs": FLEXY_BOOL_RS.replace(
        "BoolDType::U8 => BoolStore::U8,", 'BoolDType::U8 => panic!("narrow does not support Bool(U8) storage"),').replace(
        "            DType::Bool(BoolStore::U32) => panic!(\"flexy does not support Bool(U32) data\"),\n"
        "            _ => FlexyTensor::from_data(data),\n",
        "            DType::Bool(BoolStore::Native) => FlexyTensor::from_data(data),\n"
        "            _ => unimplemented!(\"Unsupported dtype for `bool_from_data`\"),\n")})
    git_repo.commit("bool storages")
    return git_repo


def test_a_bool_storage_only_one_the_backend_cannot_create_reaches_does_not_make_a_cell_partial(cli, flexy):
    doc = doc_of(cli, flexy)
    flexy_all, wide_all = cells(doc, "burn-flexy", "bool_all")["Bool"], cells(doc, "burn-wide", "bool_all")["Bool"]
    # Where bool creation rejects U32, the copy's U32 arm is on no path a tensor takes.
    assert flexy_all["status"] == "handled" and "reason" not in flexy_all
    assert flexy_all["parts"] == {"Bool(Native)": "handled", "Bool(U8)": "handled", "Bool(U32)": "cannot hold"}
    # Where it makes U32, the same arm makes the cell partial.
    assert wide_all["status"] == "partial" and wide_all["reason"] == "handled: Bool(Native), Bool(U8); panics: Bool(U32)"
    backend = {b["crate"]: b for b in doc["backends"]}
    held = {h["dtype"]: [r["operation"] for r in h["rejectedBy"]] for h in backend["burn-flexy"]["cannotHold"]}
    assert held == {"Bool(U32)": ["bool_from_data", "bool_ones"]}
    assert backend["burn-wide"]["cannotHold"] == []
    # Two storages it cannot hold: the one left decides the cell.
    narrow = cells(doc, "burn-narrow", "bool_all")["Bool"]
    assert narrow["status"] == "handled"
    assert narrow["parts"] == {"Bool(Native)": "handled", "Bool(U8)": "cannot hold", "Bool(U32)": "cannot hold"}
    # The creation that rejects them keeps its own cell.
    assert cells(doc, "burn-narrow", "bool_from_data")["Bool"]["status"] == "partial"


def test_with_expand_the_storage_a_backend_cannot_create_is_a_cannot_hold_column(cli, flexy):
    doc = doc_of(cli, flexy, "--expand")
    flexy_all = cells(doc, "burn-flexy", "bool_all")
    assert flexy_all["Bool(U32)"]["status"] == "panics" and flexy_all["Bool(U32)"]["reason"] == "cannot hold"
    assert flexy_all["Bool(U8)"]["status"] == "handled"
    # An operation with no dispatch panics on it at creation too; the wide backend's U32 arm is its own.
    assert cells(doc, "burn-flexy", "bool_reshape")["Bool(U32)"]["reason"] == "cannot hold"
    wide = cells(doc, "burn-wide", "bool_all")["Bool(U32)"]
    assert wide["status"] == "panics" and "reason" not in wide


MAKER_TRAITS_RS = """\
pub trait Backend {}

pub trait FloatTensorOps<B: Backend> {
    fn float_from_data(data: TensorData) -> B::Float;
    fn float_zeros(shape: Shape, dtype: FloatDType) -> B::Float;
    fn float_empty(shape: Shape, dtype: FloatDType) -> B::Float;
    fn float_exp(tensor: B::Float) -> B::Float;
}
"""

# from_data takes four float dtypes; zeros hands any dtype to a kind conversion with no panic
# found (Flex32 is made there); empty calls the trait's default zeros (the crate has none).
MAKER_OPS_RS = """\
impl FloatTensorOps<Self> for Maker {
    fn float_from_data(data: TensorData) -> MakerTensor {
        match data.dtype {
            DType::F64 => from_f64(data),
            DType::F32 => from_f32(data),
            _ => unimplemented!("`float_from_data` got an unsupported dtype"),
        }
    }

    fn float_zeros(shape: Shape, dtype: FloatDType) -> MakerTensor {
        MakerTensor::zeros_of(shape, to_kind(dtype))
    }

    fn float_exp(tensor: MakerTensor) -> MakerTensor {
        tensor.exp()
    }
}
"""


def _cannot_hold(doc: dict, crate: str) -> dict[str, list[str]]:
    backend = next(b for b in doc["backends"] if b["crate"] == crate)
    return {h["dtype"]: [r["operation"] for r in h["rejectedBy"]] for h in backend["cannotHold"]}


def test_a_dtype_another_creation_makes_with_no_panic_found_is_held(cli, git_repo):
    from conftest import DTYPE_RS
    git_repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    git_repo.crate("burn-backend", {"src/ops.rs": MAKER_TRAITS_RS})
    git_repo.crate("burn-maker", {"src/ops.rs": MAKER_OPS_RS})
    # The same from_data, but the only other creation calls the trait's default zeros, which the
    # audit does not read: from_data's refusal decides.
    git_repo.crate("burn-defaulted", {"src/ops.rs": MAKER_OPS_RS.replace(
        "fn float_zeros(shape: Shape, dtype: FloatDType) -> MakerTensor {\n"
        "        MakerTensor::zeros_of(shape, to_kind(dtype))",
        "fn float_empty(shape: Shape, dtype: FloatDType) -> MakerTensor {\n"
        "        Self::float_zeros(shape, dtype)")})
    git_repo.commit()
    doc = doc_of(cli, git_repo)
    assert _cannot_hold(doc, "burn-maker") == {}
    maker = cells(doc, "burn-maker", "float_from_data")
    # from_data refusing a dtype stays its own cell; other operations do not panic at creation.
    assert maker["F16"]["status"] == "panics" and "reason" not in maker["F16"]
    assert "F16" not in cells(doc, "burn-maker", "float_exp")
    assert "F16" not in cells(doc, "burn-maker", "float_zeros")
    held = _cannot_hold(doc, "burn-defaulted")
    assert set(held) == {"F16", "BF16"} and held["F16"] == ["float_from_data"]
    assert cells(doc, "burn-defaulted", "float_exp")["F16"]["reason"] == "cannot hold"


TUPLE_RS = """\
impl ModuleOps<Self> for Tupley {
    fn interpolate(x: TupleyTensor, options: InterpolateOptions) -> TupleyTensor {
        match (options.mode, x.dtype()) {
            (InterpolateMode::Nearest, DType::F32) => nearest_f32(x),
            (InterpolateMode::Nearest, DType::F64) => nearest_f64(x),
            (InterpolateMode::Bilinear | InterpolateMode::Bicubic, DType::F32) => smooth_f32(x),
            (mode, dtype) => panic!("interpolate: unsupported mode {:?} / dtype {:?}", mode, dtype),
        }
    }

    fn interpolate_backward(x: TupleyTensor, options: InterpolateOptions) -> TupleyTensor {
        match (options.mode, x.dtype()) {
            (_, DType::F32) => backward_f32(x, options.mode),
            (InterpolateMode::Nearest, DType::F64) => backward_f64(x),
            (mode, dtype) => panic!("interpolate backward: unsupported mode {:?} / dtype {:?}", mode, dtype),
        }
    }
}
"""


def test_a_tuple_match_of_a_setting_and_a_dtype_feeds_both_views(cli, git_repo):
    from conftest import DTYPE_RS
    git_repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    git_repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS, "src/modes.rs": MODES_RS})
    git_repo.crate("burn-tupley", {"src/ops.rs": TUPLE_RS})
    git_repo.commit()
    doc = doc_of(cli, git_repo)
    forward = cells(doc, "burn-tupley", "interpolate")
    # F32 has arms for every mode but NearestExact; F64 for Nearest only; F16 for none.
    assert forward["F32"]["status"] == "partial"
    assert forward["F32"]["reason"] == "panics for InterpolateMode::NearestExact"
    assert forward["F32"]["sites"][0]["line"] == 7
    assert forward["F64"]["reason"] == ("panics for InterpolateMode::NearestExact, InterpolateMode::Bilinear, "
                                        "InterpolateMode::Bicubic")
    assert forward["F16"]["status"] == "panics" and "reason" not in forward["F16"]
    assert list(_settings(doc, "burn-tupley", "interpolate", "InterpolateMode").items()) == [
        ("Nearest", "handled"), ("NearestExact", "panics"), ("Bilinear", "handled"), ("Bicubic", "handled")]
    # A wildcard setting arm takes every mode for its dtype: F32 is handled there.
    backward = cells(doc, "burn-tupley", "interpolate_backward")
    assert backward["F32"]["status"] == "handled" and "reason" not in backward["F32"]
    assert backward["F64"]["status"] == "partial"
    assert _settings(doc, "burn-tupley", "interpolate_backward", "InterpolateMode") == {
        "Nearest": "handled", "NearestExact": "handled", "Bilinear": "handled", "Bicubic": "handled"}


MODULE_TRAITS_RS = """\
pub trait Backend {}

pub trait ModuleOps<B: Backend> {
    fn conv2d(x: B::Float, weight: B::Float) -> B::Float;
    fn conv3d(x: B::Float, weight: B::Float) -> B::Float;
    fn deform_conv2d(x: B::Float) -> B::Float;
}
"""

# ndarray's shape: a module macro matches both inputs' storage, the catch-all a mismatch check
# (no record), and the arms hand the arrays to a generic helper with no dispatch of its own.
MODULE_OPS_RS = """\
pub enum NdTensor {
    F64(Storage),
    F32(Storage),
    I64(Storage),
}

macro_rules! module_op {
    (inp($($x:tt),+), $element:ident, $op:expr) => {{
        match ($($x),+) {
            ($(NdTensor::F32($x)),+) => {
                type $element = f32;
                $op($($x.into_shared()),+)
            }
            ($(NdTensor::F64($x)),+) => {
                type $element = f64;
                $op($($x.into_shared()),+)
            }
            _ => panic!("Data type mismatch"),
        }
    }};
}

impl ModuleOps<Self> for Nd {
    fn conv2d(x: NdTensor, weight: NdTensor) -> NdTensor {
        module_op!(inp(x, weight), E, |x, weight| conv::<E>(x, weight).into())
    }

    fn conv3d(x: NdTensor, weight: NdTensor) -> NdTensor {
        conv::<f32>(x, weight)
    }

    fn deform_conv2d(x: NdTensor) -> NdTensor {
        match x {
            NdTensor::F32(storage) => deform::<f32>(storage),
            other => panic!("deform_conv2d: unsupported dtype {:?}", other),
        }
    }
}
"""


def test_a_match_with_no_record_that_handles_a_dtype_makes_it_handled_and_says_so(cli, git_repo):
    git_repo.crate("burn-backend", {"src/ops.rs": MODULE_TRAITS_RS})
    git_repo.crate("burn-nd", {"src/ops.rs": MODULE_OPS_RS})
    git_repo.commit()
    doc = doc_of(cli, git_repo)
    conv = cells(doc, "burn-nd", "conv2d")
    assert conv["NdTensor::F32"]["status"] == "handled" and conv["NdTensor::F64"]["status"] == "handled"
    assert conv["NdTensor::F32"]["reason"] == ("handled by the match at src/ops.rs:18 (no panic there refuses it); "
                                               "no other dtype match with a panic is on its path")
    # An operation with no dispatch at all stays "no panic found"; the int storage is n/a.
    assert not {d for d, c in cells(doc, "burn-nd", "conv3d").items() if c["status"] != "n/a"}
    assert "NdTensor::I64" not in conv


COLLECTIVE_TRAITS_RS = """\
pub trait Backend {}

pub trait FloatTensorOps<B: Backend> {
    fn float_from_data(data: TensorData) -> FloatTensor<B>;
}

pub trait CollectiveOps<B: Backend> {
    fn all_reduce(tensor: FloatTensor<B>, op: ReduceOperation) -> FloatTensor<B>;
    fn sync_collective(device: &B::Device);
    fn gather_any(tensor: TensorRef<B>) -> Vec<u8>;
}
"""

COLLECTIVE_OPS_RS = """\
impl FloatTensorOps<Self> for Lone {
    fn float_from_data(data: TensorData) -> LoneTensor {
        LoneTensor::new(data)
    }
}

impl CollectiveOps<Self> for Lone {
    fn all_reduce(tensor: LoneTensor, op: ReduceOperation) -> LoneTensor {
        unimplemented!()
    }

    fn sync_collective(device: &LoneDevice) {
        unimplemented!()
    }

    fn gather_any(tensor: TensorRef<Lone>) -> Vec<u8> {
        unimplemented!()
    }
}
"""


def test_a_stub_of_a_trait_of_no_one_kind_panics_only_for_the_kind_its_signature_takes(cli, git_repo):
    from conftest import DTYPE_RS
    # A dtype record elsewhere gives the matrix its columns.
    git_repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    git_repo.crate("burn-backend", {"src/ops.rs": COLLECTIVE_TRAITS_RS})
    git_repo.crate("burn-lone", {"src/ops.rs": COLLECTIVE_OPS_RS})
    git_repo.crate("burn-torchy", {"src/ops.rs": TORCHY_OPS_RS})
    git_repo.commit()
    doc = doc_of(cli, git_repo, "--full")
    kinds = {o["operation"]: o["kind"] for o in doc["operations"] if o["crate"] == "burn-lone"}
    assert kinds == {"float_from_data": "float", "all_reduce": "float", "sync_collective": "none", "gather_any": None}
    reduce = cells(doc, "burn-lone", "all_reduce")
    assert reduce["F32"]["reason"] == "not implemented" and reduce["I64"]["status"] == "n/a"
    # No tensor at all: every dtype is n/a; a tensor of no one kind: every dtype panics.
    assert {c["status"] for c in cells(doc, "burn-lone", "sync_collective").values()} == {"n/a"}
    assert {c["status"] for c in cells(doc, "burn-lone", "gather_any").values()} == {"panics"}


ELEMENTS_RS = """\
pub trait FloatElement {}
impl FloatElement for f64 {}
impl FloatElement for f32 {}
"""


def test_a_creation_makes_only_the_dtypes_it_really_produces(cli, git_repo):
    from conftest import DTYPE_RS
    git_repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    git_repo.crate("burn-backend", {"src/ops.rs": MAKER_TRAITS_RS})
    zeros = ("fn float_zeros(shape: Shape, dtype: FloatDType) -> MakerTensor {\n"
             "        MakerTensor::zeros_of(shape, to_kind(dtype))")
    # zeros ignores the dtype asked for and makes the crate's element type (f64/f32).
    git_repo.crate("burn-ignorer", {"src/element.rs": ELEMENTS_RS, "src/ops.rs": MAKER_OPS_RS.replace(
        zeros, "fn float_zeros(shape: Shape, _dtype: FloatDType) -> MakerTensor {\n"
               "        MakerTensor::zeros_of(shape, E::KIND)")})
    # zeros maps the dtype itself: an arm names F16, the rest fall back with no panic.
    git_repo.crate("burn-mapper", {"src/element.rs": ELEMENTS_RS, "src/ops.rs": MAKER_OPS_RS.replace(
        zeros, "fn float_zeros(shape: Shape, dtype: FloatDType) -> MakerTensor {\n"
               "        match dtype {\n"
               "            FloatDType::F16 => MakerTensor::zeros_f16(shape),\n"
               "            _ => MakerTensor::zeros_of(shape, E::KIND),\n"
               "        }")})
    git_repo.commit()
    doc = doc_of(cli, git_repo)
    ignorer = _cannot_hold(doc, "burn-ignorer")
    assert {"F16", "BF16"} <= set(ignorer) and not {"F64", "F32"} & set(ignorer)
    assert ignorer["F16"] == ["float_from_data"]
    assert cells(doc, "burn-ignorer", "float_exp")["F16"]["reason"] == "cannot hold"
    mapper = _cannot_hold(doc, "burn-mapper")
    assert "F16" not in mapper and "BF16" in mapper
    assert "F16" not in cells(doc, "burn-mapper", "float_exp")
    assert cells(doc, "burn-mapper", "float_from_data")["F16"]["status"] == "panics"
