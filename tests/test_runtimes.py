"""The runtimes view of `coverage` (a target whose profile names runtimes, cubecl): rows are the
runtimes and compiler dialects, columns element types and features; and from a burn-like
repository pinning a cubecl-like one, `--with-dependencies` shows those runtimes' limits beside
the backends that run on them."""

from __future__ import annotations

import json

import pytest
from conftest import ELEM_RS, GitRepo

# The C++ compiler's Metal dialect rejects f64; its shared code (every dialect's) rejects bool.
METAL_RS = """\
pub fn metal_elem(elem: ElemType) -> &'static str {
    match elem {
        ElemType::Float(FloatKind::F32) => "float",
        ElemType::Float(FloatKind::F16) => "half",
        ElemType::Float(FloatKind::F64) => panic!("f64 is not supported on Metal"),
        ElemType::Bool => "bool",
    }
}
"""

SHARED_RS = """\
pub fn shared_elem(elem: ElemType) -> &'static str {
    match elem {
        ElemType::Float(_) => "float",
        ElemType::Bool => unimplemented!("bool is not supported by this compiler"),
    }
}
"""

CUDA_RS = """\
pub fn cuda_elem(elem: ElemType) -> &'static str {
    match elem {
        ElemType::Float(FloatKind::F64) => "double",
        ElemType::Float(_) => "float",
        ElemType::Bool => "bool",
    }
}
"""

# A feature no record handles: the wgpu runtime has no tensor maps.
WGPU_RS = """\
pub fn bind(resource: KernelResource) -> u32 {
    match resource {
        KernelResource::Buffer(b) => b.id,
        KernelResource::TensorMap(_) => panic!("tensor maps are not supported on wgpu"),
    }
}
"""

BURN_OPS = r'''
use burn_std::DType;

pub struct Fusion;

impl ModuleOps<Fusion> for Fusion {
    fn conv2d(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => conv2d_f32(x),
            dtype => panic!("conv2d: unsupported dtype {:?}", dtype),
        }
    }
}
'''


@pytest.fixture
def cubecl(tmp_path):
    return make_cubecl(tmp_path)


@pytest.fixture
def burn(git_repo, cubecl):
    return make_burn(git_repo, cubecl)


def make_cubecl(tmp_path) -> GitRepo:
    """A cubecl-like repository of four runtimes and dialects, its commit in `.pinned`."""
    repo = GitRepo(tmp_path / "cubecl")
    repo.git("remote", "set-url", "origin", "https://github.com/tracel-ai/cubecl.git")
    repo.crate("cubecl-ir", {"src/elem.rs": ELEM_RS})
    repo.crate("cubecl-cpp", {"src/metal/elem.rs": METAL_RS, "src/shared/elem.rs": SHARED_RS})
    repo.crate("cubecl-cuda", {"src/elem.rs": CUDA_RS})
    repo.crate("cubecl-wgpu", {"src/server.rs": WGPU_RS})
    repo.pinned = repo.commit("runtimes")  # type: ignore[attr-defined]
    return repo


def make_burn(git_repo: GitRepo, cubecl: GitRepo) -> GitRepo:
    """A burn-like repository whose Cargo.lock pins `cubecl` by git revision: burn-cubecl with an
    operation of its own, burn-wgpu and burn-cuda with none."""
    git_repo.crate("burn-cubecl", {"src/ops/module.rs": BURN_OPS})
    git_repo.crate("burn-wgpu", {"src/lib.rs": "pub struct Wgpu;\n"})
    git_repo.crate("burn-cuda", {"src/lib.rs": "pub struct Cuda;\n"})
    source = f"git+https://github.com/tracel-ai/cubecl?rev={cubecl.pinned[:8]}#{cubecl.pinned}"
    lock = ["version = 4\n"] + [f'\n[[package]]\nname = "{n}"\nversion = "0.1.0"\n' + (f'source = "{source}"\n' if s else "")
                               for n, s in (("burn-cubecl", False), ("cubecl", True), ("cubecl-cpp", True))]
    git_repo.write("Cargo.lock", "".join(lock), dedent=False)
    git_repo.head = git_repo.commit("burn on cubecl")  # type: ignore[attr-defined]
    return git_repo


def _json(cli, *args):
    res = cli("coverage", *args, "--format", "json")
    assert res.code == 0, res.stderr
    return json.loads(res.stdout)


def test_rows_are_runtimes_and_dialects_columns_element_types_and_features(cli, cubecl):
    doc = _json(cli, "--repo", str(cubecl.path), "--sha", "HEAD", "--target", "cubecl", "--expand")
    assert doc["view"] == "runtimes"
    cells = {(c["runtime"], c["dtype"]): c["status"] for c in doc["runtimes"]}
    # The Metal dialect is its own folder and the shared code: its own match panics on f64, which
    # the shared one handles; the shared one panics on bool, which its own handles.
    assert cells[("cpp/metal", "Float(F64)")] == cells[("cpp/metal", "Bool")] == "partial"
    assert cells[("cpp/metal", "Float(F32)")] == "handled"
    # The shared code is every dialect's; the CUDA runtime crate handles f64.
    assert cells[("cpp/cuda", "Bool")] == cells[("cpp/hip", "Bool")] == "panics"
    assert cells[("cpp/cuda", "Float(F64)")] == "handled" and ("cuda", "Float(F64)") not in cells
    assert cells[("wgpu", "feature::tensor maps")] == "panics"
    assert {g["enum"] for g in doc["columns"]} == {"ElemType", "feature"}
    [site] = next(c["sites"] for c in doc["runtimes"] if (c["runtime"], c["dtype"]) == ("wgpu", "feature::tensor maps"))
    assert site["path"] == "crates/cubecl-wgpu/src/server.rs" and site["line"] == 4


def test_markdown_has_a_row_per_runtime(cli, cubecl):
    res = cli("coverage", "--repo", str(cubecl.path), "--sha", "HEAD", "--target", "cubecl", "--format", "markdown")
    assert res.code == 0, res.stderr
    summary = res.stdout.split("## Summary", 1)[1].split("\n## ", 1)[0]
    assert "| cpp/metal |" in summary and "| wgpu |" in summary and "`tensor maps`" in summary


def test_a_backend_on_cubecl_shows_the_limits_of_its_runtimes(cli, burn, cubecl):
    doc = _json(cli, "--repo", str(burn.path), "--sha", "HEAD", "--with-dependencies",
                "--dependency-repo", f"tracel-ai/cubecl={cubecl.path}")
    limits = {(lim["crate"], lim["runtime"], lim["dtype"], lim["status"]) for lim in doc["runtimeLimits"]}
    assert ("burn-wgpu", "cpp/metal", "Float", "partial") in limits  # F32 handled, F64 panics
    assert ("burn-wgpu", "wgpu", "feature::tensor maps", "panics") in limits
    # burn-cuda runs on CUDA and the CUDA dialect: not on Metal nor wgpu.
    assert {r for c, r, _, _ in limits if c == "burn-cuda"} == {"cpp/cuda"}
    # burn-cubecl runs on every runtime, and keeps its own cells.
    assert {r for c, r, _, _ in limits if c == "burn-cubecl"} == {"cpp/cuda", "cpp/hip", "cpp/metal", "wgpu"}
    assert any(c["crate"] == "burn-cubecl" and c["status"] == "panics" for c in doc["cells"])
    assert all(lim["repo"] == "tracel-ai/cubecl" and lim["sites"][0]["url"].startswith(
        f"https://github.com/tracel-ai/cubecl/blob/{cubecl.pinned}/") for lim in doc["runtimeLimits"])
    # --backend keeps a backend with no cells of its own, for its limits.
    only = _json(cli, "--repo", str(burn.path), "--sha", "HEAD", "--with-dependencies", "--backend", "cuda",
                 "--dependency-repo", f"tracel-ai/cubecl={cubecl.path}")
    assert {lim["crate"] for lim in only["runtimeLimits"]} == {"burn-cuda"}


def test_markdown_names_the_runtime_limits_beside_the_backends(cli, burn, cubecl):
    res = cli("coverage", "--repo", str(burn.path), "--sha", "HEAD", "--with-dependencies", "--format", "markdown",
              "--dependency-repo", f"tracel-ai/cubecl={cubecl.path}")
    assert res.code == 0, res.stderr
    section = res.stdout.split("## Runtime limits", 1)[1]
    assert "| burn-wgpu | wgpu | `tensor maps` | ❌ |" in section
    # A backend with only limits, alone: its limits are still shown.
    res = cli("coverage", "--repo", str(burn.path), "--sha", "HEAD", "--with-dependencies", "--format", "markdown",
              "--backend", "wgpu", "--dependency-repo", f"tracel-ai/cubecl={cubecl.path}")
    assert res.code == 0, res.stderr
    assert "| burn-wgpu | cpp/metal | `Float` | 🟡 |" in res.stdout and "burn-cuda" not in res.stdout
    table = cli("coverage", "--repo", str(burn.path), "--sha", "HEAD", "--with-dependencies", "--backend", "wgpu",
                "--dependency-repo", f"tracel-ai/cubecl={cubecl.path}")
    assert table.code == 0, table.stderr
    assert "burn-wgpu on wgpu: tensor maps panics (tracel-ai/cubecl crates/cubecl-wgpu/src/server.rs:4)" in table.stdout


def test_without_with_dependencies_there_are_no_runtime_limits(cli, burn):
    assert "runtimeLimits" not in _json(cli, "--repo", str(burn.path), "--sha", "HEAD")


@pytest.mark.parametrize("args, says", [
    (["--dependency-repo", "tracel-ai/cubecl=x"], "it needs --with-dependencies"),
    (["--with-dependencies", "--dependency-repo", "acme/other=x"], "pins no such dependency"),
])
def test_bad_dependency_options_are_one_line_errors(cli, burn, args, says):
    res = cli("coverage", "--repo", str(burn.path), "--sha", "HEAD", *args)
    assert res.code == 2 and says in res.stderr and "Traceback" not in res.stderr


# An mma helper of the CUDA dialect that takes f16 only: a limit of mma, not of f64 on CUDA.
MMA_RS = """\
pub fn mma_elem(elem: ElemType) -> &'static str {
    match elem {
        ElemType::Float(FloatKind::F16) => "f16",
        other => panic!("mma: unsupported element {other:?}"),
    }
}
"""


def test_a_dispatch_about_a_feature_is_the_features_limit_not_the_runtimes(cli, tmp_path):
    cubecl = make_cubecl(tmp_path)
    cubecl.crate("cubecl-cpp", {"src/cuda/mma.rs": MMA_RS})
    cubecl.commit("an mma helper")
    doc = _json(cli, "--repo", str(cubecl.path), "--sha", "HEAD", "--target", "cubecl", "--expand")
    cells = {(c["runtime"], c["dtype"]): c for c in doc["runtimes"]}
    # The CUDA runtime handles f64; only mma refuses it.
    assert cells[("cpp/cuda", "Float(F64)")]["status"] == "handled"
    mma = cells[("cpp/cuda", "feature::mma")]
    assert mma["status"] == "panics" and mma["sites"][0]["path"] == "crates/cubecl-cpp/src/cuda/mma.rs"
