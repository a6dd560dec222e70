"""Target profiles: the shipped ones load and check, a broken one is a one-line error, `--target`
selects one, and what a profile says reaches the records, the coverage rows and the rules hash."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analyzer import profiles
from analyzer.core.errors import UserError
from analyzer.profiles.run import Run
from conftest import read_records

ROOT = Path(__file__).resolve().parent.parent
BURN = ROOT / "analyzer" / "profiles" / "burn.toml"


def test_every_shipped_profile_loads_and_checks():
    assert "burn" in profiles.known()
    for name in profiles.known():
        p = profiles.load(name)
        assert p.name == name and p.format_version == profiles.FORMAT_VERSION
        assert re.fullmatch(r"[0-9a-f]{40}", p.repository.pin)
        assert re.fullmatch(r"[0-9a-f]{64}", p.digest)
    burn = profiles.load("burn")
    assert profiles.current() == burn  # the default target
    assert burn.code.backend_trait == "Backend" and burn.dtypes.primary_enum == "DType"
    assert burn.crate_tag("burn-flex") == "flex" and burn.crate_tag("burn-") == "burn-"
    assert burn.crate_tag("onnx-ir") == "onnx-ir"


def test_only_the_profile_names_the_default_repository():
    named = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "analyzer").rglob("*"))
             if p.is_file() and p.suffix in (".py", ".j2", ".toml")
             and re.search(r"tracel-ai/burn(?![\w-])", p.read_text("utf-8"))]
    assert named == ["analyzer/profiles/burn.toml"]


def _variant(tmp_path: Path, name: str, edits: list[tuple[str, str]]) -> Path:
    """burn.toml with each (old, new) replaced once, written as NAME.toml."""
    text = BURN.read_text("utf-8")
    for old, new in edits:
        assert text.count(old) >= 1, old
        text = text.replace(old, new)
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("edit,says", [
    (('format_version = 1', 'format_version = 7'), "has format_version 7; this burn-errors reads format_version 1"),
    (('primary_enum = "DType"', 'primary_enum = 3'), "dtypes.primary_enum must be a non-empty string"),
    (('backend_trait = "Backend"\n', ''), "missing key code.backend_trait"),
    (('[tests]\n', '[tests]\nframeworks = ["x"]\n'), "unknown key tests.frameworks"),
    (('name = "tracel-ai/burn"', 'name = "burn"'), "repository.name 'burn' is not OWNER/NAME"),
    (('pin = "d16f7ba2ed0d41408189384044cc886fb4c8f957"', 'pin = "main"'), "repository.pin must be a full 40-hex"),
    (('blob = "https://github.com/{repo}/blob/{sha}/{path}#L{start}-L{end}"', 'blob = "https://x/{repo}/{file}"'),
     "links.blob names {file}"),
    (('blob = "https://github.com/{repo}/blob/{sha}/{path}#L{start}-L{end}"', 'blob = "https://x/{repo}/{sha}#L{start}"'),
     "links.blob must name {path}, after {repo} and {sha}"),
    (('blob = "https://github.com/{repo}/blob/{sha}/{path}#L{start}-L{end}"', 'blob = "https://x/{start}/{path}"'),
     "links.blob must name {path}, after {repo} and {sha}"),
    (('commit = "https://github.com/{repo}/commit/{sha}"', 'commit = "http://github.com/{repo}/commit/{sha}"'),
     "links.commit must be an https:// address"),
    (('["bool", \'Bool\']', '["bool", \'Bool(\']'), "dtypes.kinds[2] is not a regular expression"),
    (('crate_tag_prefixes = ["burn-"]', 'crate_tag_prefixes = "burn-"'), "code.crate_tag_prefixes must be a list"),
    (('[prompt]', '[prompt\n'), "is not TOML"),
    (('release_tag = "v{version}"', 'release_tag = "v{tag}"'), "packages.release_tag must name {version}"),
    (('foreign = []', 'foreign = "burn-x"'), "packages.foreign must be a list"),
])
def test_a_broken_profile_is_a_one_line_error_naming_what_is_wrong(cli, git_repo, tmp_path, edit, says):
    path = _variant(tmp_path, "broken", [edit])
    with pytest.raises(UserError, match=re.escape(says)):
        profiles.load(str(path))
    git_repo.commit()
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "out"),
              "--target", str(path))
    assert res.code == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and says in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["extract"], ["coverage"], ["diff", "HEAD", "HEAD"], ["history"]])
def test_an_unknown_target_is_refused_with_the_known_ones(cli, git_repo, command):
    git_repo.commit()
    res = cli(*command, "--repo", str(git_repo.path), "--target", "cubecl-nope")
    assert res.code == 2 and res.stdout == ""
    assert res.stderr.strip() == ("burn-errors: error: unknown target 'cubecl-nope'; known targets: "
                                  f"{', '.join(profiles.known())} (or the path of a profile file, NAME.toml)")


def test_a_profile_file_named_differently_from_its_name_field_is_still_its_own_target(tmp_path):
    path = _variant(tmp_path, "anything", [('name = "burn"', 'name = "acme"')])
    assert profiles.load(str(path)).name == "acme"


# -- a second target, end to end ------------------------------------------------------------------

ACME_EDITS = [
    ('name = "burn"', 'name = "acme"'),
    ('url = "https://github.com/tracel-ai/burn"', 'url = "https://code.example.org/acme/tensors"'),
    ('name = "tracel-ai/burn"', 'name = "acme/tensors"'),
    ('"https://github.com/{repo}/blob/{sha}/{path}#L{start}-L{end}"',
     '"https://code.example.org/{repo}/-/blob/{sha}/{path}#L{start}-{end}"'),
    ('backend_trait = "Backend"', 'backend_trait = "Device"'),
    ('ops_trait_suffix = "Ops"', 'ops_trait_suffix = "Kernels"'),
    ('crate_tag_prefixes = ["burn-"]', 'crate_tag_prefixes = ["acme-"]'),
]

ACME_DTYPE_RS = """\
pub enum DType {
    F64,
    F32,
    F16,
    I64,
}
"""

ACME_TRAITS_RS = """\
pub trait Device {}

pub trait FloatKernels<D: Device> {
    fn float_exp(x: D::Float) -> D::Float;
}
"""

ACME_CPU_RS = """\
impl FloatKernels<Self> for Cpu {
    fn float_exp(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F64 => exp64(x),
            DType::F32 => exp32(x),
            dtype => panic!("exp: unsupported dtype {:?}", dtype),
        }
    }
}
"""


@pytest.fixture
def acme(git_repo, tmp_path):
    """A repository in acme's conventions, with no origin remote (so the target names it), and
    the acme profile file."""
    git_repo.git("remote", "remove", "origin")
    git_repo.crate("acme-core", {"src/dtype.rs": ACME_DTYPE_RS, "src/kernels.rs": ACME_TRAITS_RS})
    git_repo.crate("acme-cpu", {"src/kernels.rs": ACME_CPU_RS})
    git_repo.sha = git_repo.commit()
    git_repo.profile = _variant(tmp_path, "acme", ACME_EDITS)
    return git_repo


def _extract(cli, repo, out, *target):
    res = cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out), *target)
    assert res.code == 0, res.stderr
    return res, read_records(out)


def test_the_target_profile_decides_the_records_repo_link_and_tags(cli, acme, tmp_path):
    res, lines = _extract(cli, acme, tmp_path / "acme", "--target", str(acme.profile))
    [rec] = [ln["record"] for ln in lines if ln["record"]["errorMessage"].startswith("exp:")]
    assert rec["repo"] == "acme/tensors"
    n = ACME_CPU_RS.count("\n")
    assert rec["githubUrl"] == (f"https://code.example.org/acme/tensors/-/blob/{acme.sha}/"
                                f"crates/acme-cpu/src/kernels.rs#L1-{n}")
    assert rec["tags"][:4] == ["rust", "tensors", "cpu", "unsupported-dtype"]
    assert "acme/tensors" in res.stderr  # the warning names the target's repository
    # The same tree as burn: burn's name, host and tag prefix (acme-cpu keeps its name).
    _, lines = _extract(cli, acme, tmp_path / "burn")
    [rec] = [ln["record"] for ln in lines if ln["record"]["errorMessage"].startswith("exp:")]
    assert rec["repo"] == "tracel-ai/burn"
    assert rec["githubUrl"].startswith(f"https://github.com/tracel-ai/burn/blob/{acme.sha}/crates/acme-cpu/")
    assert rec["tags"][:4] == ["rust", "burn", "acme-cpu", "unsupported-dtype"]


def test_the_target_profile_decides_what_a_backend_operation_is(cli, acme):
    def operations(*target):
        res = cli("coverage", "--repo", str(acme.path), "--sha", "HEAD", "--format", "json", "--full", *target)
        assert res.code == 0, res.stderr
        doc = json.loads(res.stdout)
        return {(o["crate"], o["operation"], o["trait"]) for o in doc["operations"]}, doc

    ops, doc = operations("--target", str(acme.profile))
    assert ops == {("acme-cpu", "float_exp", "FloatKernels")}
    cells = {c["dtype"]: c["status"] for c in doc["cells"] if c["operation"] == "float_exp"}
    assert cells["F64"] == "handled" and cells["F16"] == "panics" and cells["I64"] == "n/a"
    # burn's conventions (`...Ops` traits of `Backend`) find no operation in this tree.
    ops, _ = operations()
    assert ops == set()


def test_the_rules_hash_covers_the_target_profile(tmp_path):
    from analyzer.pipeline.ruleset import rules_hash
    burn = profiles.load("burn")
    same = profiles.load(str(_variant(tmp_path, "same", [])))
    other = profiles.load(str(_variant(tmp_path, "other", [('ops_trait_suffix = "Ops"', 'ops_trait_suffix = "K"')])))
    assert rules_hash(same) == rules_hash(burn) == rules_hash()
    assert rules_hash(other) != rules_hash(burn)
    with profiles.using(other):
        assert rules_hash() == rules_hash(other)
    assert profiles.current() == burn


def test_parser_processes_read_the_parents_target(acme, tmp_path, monkeypatch):
    """Parser processes parse under the run's target, also when they are spawned (macOS,
    Windows), where nothing of the parent's state is inherited: the profile is handed to them."""
    import multiprocessing
    from analyzer.pipeline import extract as pipeline
    from analyzer.source.repository import open_repository

    spawn = multiprocessing.get_context("spawn")
    monkeypatch.setattr(multiprocessing, "get_context", lambda method=None: spawn)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    repo = open_repository(str(acme.path), None, "acme/tensors")
    ex = pipeline.extract(repo, acme.sha, Run(profiles.load(str(acme.profile))), jobs=2, code=True)
    traits = {t.name for _, _, facts in ex.code for t in facts.traits}
    assert traits == {"FloatKernels"}


CUBECL_ELEM_RS = """\
pub enum FloatKind {
    F16,
    BF16,
    F32,
    F64,
}

pub enum ElemType {
    Float(FloatKind),
    Bool,
}
"""

CUBECL_DIALECT_RS = """\
pub fn compile_elem(elem: ElemType) -> &'static str {
    match elem {
        ElemType::Float(FloatKind::F32) => "float",
        ElemType::Float(FloatKind::F16) => "half",
        ElemType::Float(FloatKind::F64) => panic!("f64 is not supported on this dialect"),
        _ => unimplemented!(),
    }
}
"""


def test_the_cubecl_target_names_cubecl_in_records_links_and_tags(cli, git_repo, tmp_path):
    """`--target cubecl` analyses a cubecl-like tree: records of tracel-ai/cubecl, linked there,
    tagged with the runtime crate without its `cubecl-` prefix."""
    git_repo.git("remote", "remove", "origin")
    git_repo.crate("cubecl-core", {"src/elem.rs": CUBECL_ELEM_RS})
    git_repo.crate("cubecl-cuda", {"src/dialect.rs": CUBECL_DIALECT_RS})
    sha = git_repo.commit()
    res = cli("extract", "--target", "cubecl", "--repo", str(git_repo.path), "--sha", sha,
              "--out", str(tmp_path / "out"))
    assert res.code == 0, res.stderr
    records = read_records(tmp_path / "out")
    assert [(r["record"]["lineNumber"], r["analysis"]["category"]) for r in records] == [
        (5, "dtype-dispatch"), (6, "dtype-dispatch")]
    for r in records:
        assert r["record"]["repo"] == "tracel-ai/cubecl"
        assert r["record"]["githubUrl"].startswith(f"https://github.com/tracel-ai/cubecl/blob/{sha}/")
        assert "cuda" in r["record"]["tags"] and "cubecl-cuda" not in r["record"]["tags"]
    assert profiles.load("cubecl").repository.pin == "48348968468e433235be3db6e7c344c34bc446c0"


def test_a_profile_for_another_host_is_served_its_caches_on_a_rerun(cli, acme, tmp_path):
    """The caches check kept links against the target's own link template: records, the coverage
    matrix and its documents of a target on another host are served again, not warned about as
    links outside the commit and built again at every run."""
    target = ("--target", str(acme.profile))
    _extract(cli, acme, tmp_path / "a", *target)
    again, lines = _extract(cli, acme, tmp_path / "b", *target)
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["cache"]["result"] == "hit"
    assert "was not used" not in again.stderr
    assert all(ln["record"]["githubUrl"].startswith("https://code.example.org/") for ln in lines)
    for fmt in ("json", "markdown", "html"):
        runs = [cli("coverage", "--repo", str(acme.path), "--sha", "HEAD", "--format", fmt, *target) for _ in range(3)]
        assert all(r.code == 0 for r in runs), runs[-1].stderr
        assert all("was not used" not in r.stderr for r in runs), [r.stderr for r in runs]
        assert "code.example.org" in runs[0].stdout and runs[0].stdout == runs[2].stdout
        assert "results cache" in runs[2].stderr, runs[2].stderr


@pytest.mark.parametrize("kind", ["repository", "blob", "commit", "compare", "new_issue"])
def test_every_link_template_of_a_profile_must_be_https(tmp_path, kind):
    """Records, pages and SARIF put the profile's links where a reader clicks them: only https."""
    shipped = (Path(profiles.__file__).parent / "burn.toml").read_text()
    line = next(ln for ln in shipped.splitlines() if ln.startswith(f"{kind} = \"https://"))
    path = _variant(tmp_path, "plain", [(line, line.replace('"https://', '"http://', 1))])
    with pytest.raises(UserError, match=re.escape(f"links.{kind} must be an https:// address")):
        profiles.load(str(path))


ONNX_IR_SLICE_RS = """\
pub enum SliceInput {
    Static(Vec<i64>),
    Runtime(usize),
}

pub fn steps(input: &Option<SliceInput>) -> &[i64] {
    match input {
        Some(SliceInput::Static(s)) => s,
        _ => panic!("For a static slice the steps must be Static"),
    }
}
"""

BURN_ONNX_NODE_RS = """\
pub fn activation(name: &str) -> Code {
    match name {
        "Relu" => relu(),
        _ => panic!("activation {name} is not supported by burn-nn"),
    }
}
"""

# Test code by burn-onnx's conventions: none of these is a record.
BURN_ONNX_TEST_CODE = ["crates/onnx-tests/src/lib.rs", "crates/onnx-tests/build.rs",
                       "crates/model-checks/yolo/src/main.rs", "examples/onnx-inference/src/lib.rs",
                       "xtask/src/main.rs", "crates/burn-onnx/src/burn/node/test_helpers.rs",
                       "crates/onnx-ir/src/node/test_utils.rs"]


def test_the_burn_onnx_target_names_burn_onnx_and_leaves_out_its_test_crates(cli, git_repo, tmp_path):
    """`--target burn-onnx` analyses a tree in burn-onnx's shape: records of tracel-ai/burn-onnx at
    the full SHA, linked there, tagged with the crate (`burn-onnx` as `onnx`, onnx-ir whole); its
    end-to-end test crate, model checks, examples, task runner and test helpers are test code."""
    git_repo.git("remote", "remove", "origin")
    git_repo.crate("onnx-ir", {"src/node/slice.rs": ONNX_IR_SLICE_RS})
    git_repo.crate("burn-onnx", {"src/burn/node/lstm.rs": BURN_ONNX_NODE_RS})
    for path in BURN_ONNX_TEST_CODE:
        git_repo.write(path, BURN_ONNX_NODE_RS)
    sha = git_repo.commit()
    res = cli("extract", "--target", "burn-onnx", "--repo", str(git_repo.path), "--sha", sha,
              "--out", str(tmp_path / "out"), "--all-sites")
    assert res.code == 0, res.stderr
    records = read_records(tmp_path / "out")
    assert [(r["record"]["filePath"], r["record"]["lineNumber"], r["analysis"]["category"]) for r in records] == [
        ("crates/burn-onnx/src/burn/node/lstm.rs", 4, "unsupported-mode"),
        ("crates/onnx-ir/src/node/slice.rs", 9, "unsupported-mode")]
    tags = [r["record"]["tags"] for r in records]
    assert "onnx" in tags[0] and "burn-onnx" not in tags[0][2:] and "onnx-ir" in tags[1]
    for r in records:
        assert r["record"]["repo"] == "tracel-ai/burn-onnx" and r["record"]["analyzedSha"] == sha
        assert r["record"]["githubUrl"].startswith(f"https://github.com/tracel-ai/burn-onnx/blob/{sha}/")
    sites = [json.loads(ln) for ln in (tmp_path / "out" / "sites.jsonl").read_text().splitlines()]
    left_out = {s["filePath"]: s["rule"] for s in sites if not s["record"]}
    assert left_out == {path: "exclude/test-code" for path in BURN_ONNX_TEST_CODE}
    burn_onnx = profiles.load("burn-onnx")
    assert burn_onnx.repository.pin == "7db1e206c9f3c8842dd5430010c172fa53457164"
    # Its packages are named one by one: burn's own `burn-*` crates in a Cargo.lock are burn's.
    assert burn_onnx.packages.owns("onnx-ir") and burn_onnx.packages.owns("burn-import")
    assert not burn_onnx.packages.owns("burn-tensor")


def test_what_is_read_under_one_target_does_not_stay_for_the_next(tmp_path):
    """One process reads trees of several targets (a session of commands, a test run): the
    patterns a target's conventions make are compiled for each target, not for the first one."""
    from analyzer.facts.impls import ops_impls
    from analyzer.features.coverage.operations import dtype_kind

    acme = profiles.load(str(_variant(tmp_path, "acme", ACME_EDITS + [("'Q\\w+'", "'Z\\w+'")])))
    burn = profiles.load("burn")
    burn_impl = b"impl FloatTensorOps<Self> for Cpu {\n    fn float_exp(x: T) -> T { x }\n}\n"
    acme_impl = b"impl FloatKernels<Self> for Cpu {\n    fn float_exp(x: T) -> T { x }\n}\n"
    for _ in range(2):  # each order: the first target read must not decide for the second
        with profiles.using(acme):
            assert ops_impls(burn_impl, acme) == []
            assert [(t, ms) for t, _, ms in ops_impls(acme_impl, acme)] == [("FloatKernels", ["float_exp"])]
            assert (dtype_kind("QInt8"), dtype_kind("ZInt8")) == ("", "quantized")
        with profiles.using(burn):
            assert [(t, ms) for t, _, ms in ops_impls(burn_impl, burn)] == [("FloatTensorOps", ["float_exp"])]
            assert ops_impls(acme_impl, burn) == []
            assert (dtype_kind("QInt8"), dtype_kind("ZInt8")) == ("quantized", "")
