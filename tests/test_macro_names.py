"""A function a macro_rules! generates (`fn $fn_name(..)`) is named after what the macro's
invocations in the file pass for `$fn_name`; its item path (which ids derive from) is unchanged."""

from __future__ import annotations

from analyzer.facts.parse import parse_file
from targets import BURN

TYPED = b"""
macro_rules! backward_typed {
    ($fn_name:ident, $T:ty, $zero:expr) => {
        pub fn $fn_name(x: Tensor, indices: Tensor) -> Tensor {
            match indices.dtype() {
                DType::I64 => backward_impl::<$T, i64>(x, indices, $zero),
                DType::I32 => backward_impl::<$T, i32>(x, indices, $zero),
                other => panic!("backward: index dtype {other:?} unsupported"),
            }
        }
    };
}

// backward_typed!(not_this_one, f32, 0.0f32);
const NOTE: &str = "backward_typed!(nor_this, f32, 0.0)";

backward_typed!(backward_f32, f32, 0.0f32);
backward_typed!(backward_f64, f64, 0.0f64);
backward_typed!(backward_f16, f16, f16::from_f32(0.0));
"""


def _only_site(source: bytes):
    sites = parse_file(source, BURN).sites
    assert len(sites) == 1
    return sites[0]


def test_generated_function_is_named_by_the_first_invocation():
    site = _only_site(TYPED)
    assert site.function == "backward_f32"
    assert site.in_macro == "macro_rules! backward_typed"
    # Ids derive from the item path: it keeps the metavariable's spelling of the shadow parse.
    assert site.item_path == "macro_rules! backward_typed::fn _fn_name"


def test_a_type_argument_with_commas_inside_groups_is_passed_over():
    source = b"""
macro_rules! pair_op {
    ($T:ty, $name:ident) => {
        fn $name(d: DType) {
            match d {
                DType::F32 => 1,
                _ => unimplemented!("pair op"),
            };
        }
    };
}
pair_op!((u8, [u16; 2]), pair_small);
"""
    assert _only_site(source).function == "pair_small"


def test_the_arm_holding_the_site_decides_which_invocations_name_it():
    source = b"""
macro_rules! unary {
    ($name:ident, $op:expr) => {
        fn $name(x: u8) -> u8 { $op(x) }
    };
    (@float $name:ident => $op:expr) => {
        fn $name(d: DType) {
            match d {
                DType::F32 => 1,
                _ => unimplemented!("float unary"),
            };
        }
    };
}
unary!(neg_int, |x| x);
unary!(@float exp_float => |x| x);
"""
    assert _only_site(source).function == "exp_float"


def test_without_an_invocation_in_the_file_the_metavariable_is_kept():
    source = TYPED.split(b"// backward_typed!")[0]
    assert _only_site(source).function == "$fn_name"


def test_a_function_named_in_the_macro_body_keeps_its_name():
    source = b"""
macro_rules! fixed {
    ($T:ty) => {
        fn fixed_name(d: DType) {
            match d {
                DType::F32 => 1,
                _ => unimplemented!("fixed"),
            };
        }
    };
}
fixed!(f32);
"""
    assert _only_site(source).function == "fixed_name"


GENERATED = """
macro_rules! backward_typed {
    ($fn_name:ident, $T:ty) => {
        pub fn $fn_name(indices: Tensor) -> Tensor {
            match indices.dtype() {
                DType::I64 => backward_impl::<$T, i64>(indices),
ARMS            }
        }
    };
}

backward_typed!(backward_f32, f32);
"""
PANIC_ARM = '                other => panic!("backward: index dtype {other:?} unsupported"),\n'


def test_history_judges_a_generated_function_by_its_macro(cli, git_repo):
    """A site of a generated function whose arm is removed is fixed there: its function is named
    by the invocation, so the history looks for the macro, not for `fn backward_f32`."""
    import json

    git_repo.crate("burn-flex", {"src/ops/pool.rs": GENERATED.replace("ARMS", PANIC_ARM)})
    first = git_repo.commit()
    git_repo.write("crates/burn-flex/src/ops/pool.rs",
                   GENERATED.replace("ARMS", "                _ => backward_impl::<$T, i8>(indices),\n"))
    git_repo.commit()
    res = cli("history", "--repo", str(git_repo.path), "--revs", f"{first},HEAD", "--format", "json")
    assert res.code == 0, res.stderr
    (lineage,) = json.loads(res.stdout)["lineages"]
    assert lineage["site"]["function"] == "backward_f32"
    assert lineage["removal"] == {"kind": "fixed", "reason": "arm-removed", "dtypes": []}
