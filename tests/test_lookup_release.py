"""`burn-errors lookup` answers a pasted panic from the records of the release it names: each
pasted form, read from a small repository with two releases whose lines moved between them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import GitRepo

from analyzer.features.lookup import Panic, parse_panic

# Five `unimplemented!()` sites: the message alone names none of them, only the location does.
FLEX_OPS = '''\
use burn_std::DType;

pub fn pool(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => run(x),
        d => panic!("pool: unsupported dtype {:?}", d),
    }
}

pub fn conv(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => run(x),
        _ => unimplemented!(),
    }
}

pub fn norm(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => run(x),
        _ => unimplemented!(),
    }
}

pub fn gather(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => run(x),
        other => panic!(
            "gather: no kernel for {:?} on {}",
            other,
            x.device()
        ),
    }
}
'''

TCH_OPS = '''\
pub fn swap_dims(x: TchTensor) -> TchTensor {
    match x.dtype() {
        DType::F32 => x.swap(),
        _ => unimplemented!(),
    }
}

pub fn permute(x: TchTensor) -> TchTensor {
    match x.dtype() {
        DType::F32 => x.permute(),
        _ => unimplemented!(),
    }
}

pub fn flip(x: TchTensor) -> TchTensor {
    match x.dtype() {
        DType::F32 => x.flip(),
        _ => unimplemented!(),
    }
}
'''

# The line each site is at in each release: the second release adds four lines above them
# and words the pool message anew.
MOVED = 4
LINES = {"v0.1.0": {"pool": 6, "conv": 13, "gather": 27}, "v0.2.0": {"pool": 10, "conv": 17, "gather": 31}}
REGISTRY = "/home/me/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f"
NOTE = "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"


def _write_release(repo: GitRepo, first: bool) -> None:
    header = "" if first else "// Kernels.\n// Each op dispatches on the dtype.\n// F32 only.\n\n"
    ops = FLEX_OPS if first else FLEX_OPS.replace("pool: unsupported dtype {:?}", "pool: dtype {:?} is not supported")
    # The crate's folder is not its package's name: only its Cargo.toml says where burn-flex is.
    repo.write("crates/flex/Cargo.toml", '[package]\nname = "burn-flex"\nversion = "0.1.0"\n', dedent=False)
    repo.write("crates/flex/src/ops.rs", header + ops, dedent=False)
    repo.write("crates/burn-tch/Cargo.toml", '[package]\nname = "burn-tch"\nversion = "0.1.0"\n', dedent=False)
    repo.write("crates/burn-tch/src/ops.rs", TCH_OPS, dedent=False)
    repo.write("Cargo.toml", '[workspace]\nmembers = ["crates/*"]\n', dedent=False)


@pytest.fixture
def releases(git_repo) -> tuple[GitRepo, dict[str, str]]:
    _write_release(git_repo, True)
    first = git_repo.commit("first release")
    git_repo.git("tag", "v0.1.0")
    _write_release(git_repo, False)
    second = git_repo.commit("second release")
    git_repo.git("tag", "v0.2.0")
    return git_repo, {"v0.1.0": first, "v0.2.0": second}


def _lookup(cli, repo: GitRepo, text: str, *extra: str, code: int = 0) -> dict:
    res = cli("lookup", text, "--repo", str(repo.path), "--format", "json", *extra)
    assert res.code == code, res.stderr
    return json.loads(res.stdout)


def _registry(version: str) -> str:
    return f"{REGISTRY}/burn-flex-{version}/src/ops.rs"


def _forms(path: str, line: int, column: int, message: str) -> dict[str, str]:
    """The panic as each place prints it."""
    return {
        "rust 1.73+": f"thread 'main' panicked at {path}:{line}:{column}:\n{message}\n{NOTE}\n",
        "thread id": f"thread 'main' (12345) panicked at {path}:{line}:{column}:\n{message}\n{NOTE}",
        "logger": f"[2024-05-01T10:00:00Z ERROR burn_import::logger] PANIC => panicked at {path}:{line}:{column}:\n"
                  f"{message}",
        "cargo build script": f"  --- stderr\n  thread 'main' panicked at {path}:{line}:{column}:\n  {message}\n"
                              f"  {NOTE}\n",
        "browser console": f"panicked at {path}:{line}:{column}:\n{message}\n\nStack:\n\nError\n    at imports.wbg",
        "before 1.73": f"thread 'main' panicked at '{message}', {path}:{line}:{column}\n{NOTE}",
        "no column": f"panicked at {path}:{line}\n{message}",
        "backtrace": f"thread 'main' panicked at {path}:{line}:{column}:\n{message}\nstack backtrace:\n"
                     f"   0: rust_begin_unwind\n             at /rustc/abc/library/std/src/panicking.rs:652:5\n"
                     f"   1: core::panicking::panic_fmt\n",
        "windows": f"thread 'main' panicked at {path.replace('/home/me', 'C:/Users/me').replace('/', chr(92))}"
                   f":{line}:{column}:\r\n{message}\r\n",
    }


FORMS = sorted(_forms("p", 1, 1, "m"))


@pytest.mark.parametrize("version", ["0.1.0", "0.2.0"])
@pytest.mark.parametrize("form", FORMS)
def test_each_pasted_form_names_the_record_at_the_pastes_release(cli, releases, form, version):
    repo, shas = releases
    tag = f"v{version}"
    line = LINES[tag]["conv"]
    got = _lookup(cli, repo, _forms(_registry(version), line, 14, "not implemented")[form])
    assert got["query"]["message"] == "not implemented" and got["query"]["line"] == line
    assert got["origin"] == {"kind": "registry", "target": "burn", "repo": "tracel-ai/burn", "rev": tag,
                             "package": "burn-flex", "version": version}
    assert got["repoPath"] == "crates/flex/src/ops.rs"
    assert got["answeredFrom"] == {"repo": "tracel-ai/burn", "sha": shas[tag], "rev": tag, "recordsFile": None}
    first = got["matches"][0]
    assert (first["record"]["filePath"], first["record"]["lineNumber"]) == ("crates/flex/src/ops.rs", line)
    assert first["record"]["analyzedSha"] == shas[tag] and first["lineDistance"] == 0
    # the site at the location decides: no shared-message note
    assert got["shared"] == []


def test_a_git_checkout_names_its_commit(cli, releases):
    repo, shas = releases
    path = f"/home/me/.cargo/git/checkouts/burn-0123456789abcdef/{shas['v0.1.0'][:7]}/crates/flex/src/ops.rs"
    got = _lookup(cli, repo, f"thread 'main' panicked at {path}:{LINES['v0.1.0']['conv']}:14:\nnot implemented")
    assert got["origin"]["kind"] == "git" and got["origin"]["rev"] == shas["v0.1.0"][:7]
    assert got["answeredFrom"]["sha"] == shas["v0.1.0"]
    assert got["matches"][0]["record"]["lineNumber"] == LINES["v0.1.0"]["conv"]


def test_a_local_path_names_the_file_and_sha_the_release(cli, releases):
    repo, shas = releases
    text = f"thread 'main' panicked at /home/me/src/burn/crates/flex/src/ops.rs:{LINES['v0.2.0']['conv']}:14:\n" \
           "not implemented"
    got = _lookup(cli, repo, text, "--sha", "v0.2.0")
    assert got["origin"] is None and got["answeredFrom"]["sha"] == shas["v0.2.0"]
    assert got["matches"][0]["record"]["lineNumber"] == LINES["v0.2.0"]["conv"]
    assert got["matches"][0]["lineDistance"] == 0


def test_a_line_inside_a_multi_line_call_is_that_call(cli, releases):
    repo, _ = releases
    start = LINES["v0.1.0"]["gather"]
    for line in (start, start + 3, start + 4):  # `panic!(` .. the closing `)`
        got = _lookup(cli, repo, f"panicked at {_registry('0.1.0')}:{line}:18:\ngather: no kernel for I8 on Cpu")
        assert got["matches"][0]["record"]["lineNumber"] == start and got["matches"][0]["lineDistance"] == 0
    got = _lookup(cli, repo, f"panicked at {_registry('0.1.0')}:{start + 5}:18:\ngather: no kernel for I8 on Cpu")
    assert got["matches"][0]["lineDistance"] == 1


def test_a_shared_message_without_a_location_names_its_crates(cli, releases):
    repo, _ = releases
    got = _lookup(cli, repo, "not implemented", "--sha", "v0.1.0")
    assert got["shared"] == [{"crate": "burn-tch", "records": 3}, {"crate": "flex", "records": 2}]
    res = cli("lookup", "not implemented", "--repo", str(repo.path), "--sha", "v0.1.0")
    assert res.code == 0
    assert ('"not implemented" is the message of 5 records, in burn-tch (3), flex (2); only the panic\'s '
            "location (`panicked at FILE:LINE:COL`) tells them apart.") in res.stdout


def test_a_message_that_changed_names_the_release_that_matches(cli, releases):
    repo, shas = releases
    # a v0.1.0 path with the wording v0.2.0 has: no record at v0.1.0 matches, v0.2.0's does
    text = f"thread 'main' panicked at {_registry('0.1.0')}:{LINES['v0.1.0']['pool']}:14:\npool: dtype I8 is not supported"
    got = _lookup(cli, repo, text)
    assert got["matches"] == [] and got["answeredFrom"]["rev"] == "v0.1.0"
    other = got["otherRelease"]
    assert other["rev"] == "v0.2.0" and other["sha"] == shas["v0.2.0"]
    assert other["match"]["record"]["lineNumber"] == LINES["v0.2.0"]["pool"]
    assert other["atPasteRelease"] == {"errorMessage": "pool: unsupported dtype {:?}",
                                       "filePath": "crates/flex/src/ops.rs", "lineNumber": LINES["v0.1.0"]["pool"]}
    res = cli("lookup", text, "--repo", str(repo.path))
    assert res.code == 0
    assert "No record at v0.1.0 matches the message; at v0.2.0" in res.stdout
    assert (f'What changed: at v0.1.0 the same site (crates/flex/src/ops.rs:{LINES["v0.1.0"]["pool"]}) says '
            '"pool: unsupported dtype {:?}".') in res.stdout


def test_the_understood_line_comes_first_escaped(cli, releases):
    repo, _ = releases
    text = f"thread 'main' (7) panicked at {_registry('0.2.0')}:{LINES['v0.2.0']['conv']}:14:\nnot implemented\x1b[2J"
    res = cli("lookup", text, "--repo", str(repo.path), "--limit", "1")
    first = res.stdout.splitlines()[0]
    assert first.startswith(f"Understood: file {_registry('0.2.0')} (crates/flex/src/ops.rs in tracel-ai/burn), "
                            f"line {LINES['v0.2.0']['conv']}, column 14; release tracel-ai/burn v0.2.0 (a registry "
                            "checkout of burn-flex 0.2.0); message \"not implemented")
    assert "\x1b" not in res.stdout


def test_a_second_lookup_is_served_from_the_cache(cli, releases, monkeypatch):
    repo, _ = releases
    text = f"panicked at {_registry('0.1.0')}:{LINES['v0.1.0']['conv']}:14:\nnot implemented"
    _lookup(cli, repo, text)
    from analyzer.pipeline import extract

    def no_analysis(*args, **kwargs):
        raise AssertionError("extracted again")
    monkeypatch.setattr(extract, "extract", no_analysis)
    got = _lookup(cli, repo, text)
    assert got["matches"][0]["record"]["lineNumber"] == LINES["v0.1.0"]["conv"]
    # and `extract` at that release is served by what lookup kept, and the other way round
    out = repo.path.parent / "out"
    res = cli("extract", "--repo", str(repo.path), "--sha", "v0.1.0", "--out", str(out))
    assert res.code == 0 and json.loads((out / "manifest.json").read_text())["cache"]["result"] == "hit"


def test_a_release_the_repository_lacks_is_one_line(cli, releases):
    repo, _ = releases
    res = cli("lookup", f"panicked at {REGISTRY}/burn-flex-9.9.9/src/ops.rs:1:1:\nnot implemented",
              "--repo", str(repo.path))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "tracel-ai/burn v9.9.9" in res.stderr and "--repo" in res.stderr


def test_a_dependency_path_answers_from_that_repository(cli, releases, tmp_path):
    repo, _ = releases
    dep = GitRepo(tmp_path / "cubecl")
    dep.git("remote", "set-url", "origin", "https://github.com/tracel-ai/cubecl.git")
    dep.write("crates/cubecl-core/Cargo.toml", '[package]\nname = "cubecl-core"\nversion = "0.1.0"\n', dedent=False)
    dep.write("crates/cubecl-core/src/ops.rs", TCH_OPS.replace("LibTorch", "Cube"), dedent=False)
    sha = dep.commit("release")
    dep.git("tag", "v0.3.0")
    text = f"panicked at {REGISTRY}/cubecl-core-0.3.0/src/ops.rs:7:9:\nnot implemented"
    got = _lookup(cli, repo, text.replace(":7:9:", ":11:14:"), "--dependency-repo", f"tracel-ai/cubecl={dep.path}")
    assert got["origin"]["target"] == "cubecl" and got["origin"]["rev"] == "v0.3.0"
    assert got["answeredFrom"] == {"repo": "tracel-ai/cubecl", "sha": sha, "rev": "v0.3.0", "recordsFile": None}
    first = got["matches"][0]["record"]
    assert (first["repo"], first["filePath"], first["lineNumber"]) == ("tracel-ai/cubecl", "crates/cubecl-core/src/ops.rs", 11)


@pytest.mark.parametrize("text,want", [
    # a logger's line, then cargo's stderr section with the default hook's print of the same panic
    ("  ERROR burn_import::logger: PANIC => panicked at burn-import-0.12.1\\src\\onnx\\dims.rs:311:9:\n"
     "  Only a tensor input is valid here\n\n  --- stderr\n  thread 'main' panicked at burn-import-0.12.1\\src\\onnx\\dims.rs"
     ":311:9:\n  Only a tensor input is valid here",
     Panic("Only a tensor input is valid here", "burn-import-0.12.1/src/onnx/dims.rs", 311, 9)),
    # an assertion, Rust 1.73 and later: the values' lines are cut, a message over two lines kept
    ("thread 'main' panicked at src/a.rs:4:5:\nassertion `left == right` failed: ranks differ\nsee docs\n"
     "  left: 2\n right: 3\n" + NOTE,
     Panic("assertion `left == right` failed: ranks differ\nsee docs", "src/a.rs", 4, 5)),
    ("thread 'main' panicked at src/a.rs:4:5:\nassertion `left != right` failed\n  left: 2\n right: 2",
     Panic("assertion `left != right` failed", "src/a.rs", 4, 5)),
    # the same assertions before Rust 1.73, read into the record's wording
    ("thread 'main' panicked at 'assertion failed: `(left == right)`\n  left: `2`,\n right: `3`: ranks differ', "
     "src/a.rs:4:5\n" + NOTE, Panic("assertion `left == right` failed: ranks differ", "src/a.rs", 4, 5)),
    ("thread 'main' panicked at 'assertion failed: `(left != right)`\n  left: `2`,\n right: `2`', src/a.rs:4:5",
     Panic("assertion `left != right` failed", "src/a.rs", 4, 5)),
    # `assert!(cond)` is its own message
    ("panicked at src/a.rs:4:5:\nassertion failed: x > 0", Panic("assertion failed: x > 0", "src/a.rs", 4, 5)),
    # a text that only mentions a panic is the message
    ("the thread panicked at dawn", Panic("the thread panicked at dawn")),
])
def test_parse_panic_forms(text, want):
    assert parse_panic(text) == want


def test_a_package_two_profiles_own_is_the_one_whose_repository_holds_it_at_the_release(cli, releases, tmp_path):
    """A package that moved between repositories (burn's onnx-ir, now burn-onnx's) is owned by
    two profiles: the release is read from the repository whose tree holds the package at that
    tag, not from the first profile that names it."""
    repo, shas = releases
    moved = GitRepo(tmp_path / "moved")
    moved.write("crates/other/Cargo.toml", '[package]\nname = "burn-other"\nversion = "0.1.0"\n', dedent=False)
    moved.write("crates/other/src/lib.rs", "pub fn f() {}\n", dedent=False)
    moved.commit("its own release")
    moved.git("tag", "v0.1.0")  # the same tag, without burn-flex
    burn_toml = (Path(__file__).resolve().parent.parent / "analyzer" / "profiles" / "burn.toml").read_text()
    profile = (burn_toml.replace('name = "burn"\n', 'name = "moved"\n', 1)
               .replace('url = "https://github.com/tracel-ai/burn"', f'url = "{moved.path}"')
               .replace('name = "tracel-ai/burn"', 'name = "tracel-ai/moved"')
               .replace('prefixes = ["burn-"]', "prefixes = []"))
    profile = re.sub(r'^names = \[.*\]$', 'names = ["burn-flex"]', profile, count=1, flags=re.M)
    (tmp_path / "moved.toml").write_text(profile)
    text = f"panicked at {_registry('0.1.0')}:{LINES['v0.1.0']['conv']}:14:\nnot implemented"
    res = cli("lookup", text, "--target", str(tmp_path / "moved.toml"), "--dependency-repo",
              f"tracel-ai/burn={repo.path}", "--format", "json")
    assert res.code == 0, res.stderr
    got = json.loads(res.stdout)
    assert got["origin"]["target"] == "burn" and got["answeredFrom"]["sha"] == shas["v0.1.0"]
    assert got["matches"][0]["record"]["lineNumber"] == LINES["v0.1.0"]["conv"]
    # neither repository holding it: one line that names both
    moved.git("tag", "v0.9.0")
    res = cli("lookup", text.replace("0.1.0", "0.9.0"), "--target", str(tmp_path / "moved.toml"),
              "--dependency-repo", f"tracel-ai/burn={repo.path}")
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "tracel-ai/moved" in res.stderr and "tracel-ai/burn" in res.stderr


@pytest.mark.parametrize("folder,want", [
    # published from burn's tree until burn-onnx took them over: both profiles own them, burn first
    ("onnx-ir-0.19.1", [("burn", "v0.19.1"), ("burn-onnx", "v0.19.1")]),
    ("burn-import-0.12.1", [("burn", "v0.12.1"), ("burn-onnx", "v0.12.1")]),
    ("burn-ndarray-0.19.0", [("burn", "v0.19.0")]),
    ("cubecl-cpu-0.8.0", [("cubecl", "v0.8.0")]),
    ("burn-onnx-0.21.0-pre.1", [("burn", "v0.21.0-pre.1"), ("burn-onnx", "v0.21.0-pre.1")]),
    ("ndarray-0.15.6", []),  # a crate no target publishes names no release
])
def test_the_shipped_profiles_own_the_packages_a_registry_path_names(folder, want):
    from analyzer import profiles
    from analyzer.features.lookup import origins_of

    targets = [profiles.load(n) for n in ["burn", *(n for n in profiles.known() if n != "burn")]]
    got = origins_of(f"{REGISTRY}/{folder}/src/lib.rs", targets)
    assert [(o.profile, o.rev) for o in got] == want
    assert all(o.inner == "src/lib.rs" for o in got)


POOL_ASSERT = '''\
pub fn pool(x: Tensor) -> Tensor {
    let rank = x.rank();
    assert_eq!(
        rank, 4,
        "pool: only 4D inputs are supported"
    );
    run(x)
}
'''


@pytest.mark.parametrize("form", ["rust 1.73+", "before 1.73"])
def test_an_assertion_panic_names_its_record_at_each_release(cli, git_repo, form):
    """assert_eq! prints its values below the message (or, before Rust 1.73, around it); the
    record at the paste's release is the one whose call holds the reported line."""
    lines = {}
    for tag, header in (("v0.1.0", ""), ("v0.2.0", "// Pooling.\n// Rank 4 only.\n\n")):
        git_repo.write("crates/flex/Cargo.toml", '[package]\nname = "burn-flex"\nversion = "0.1.0"\n', dedent=False)
        git_repo.write("crates/flex/src/pool.rs", header + POOL_ASSERT, dedent=False)
        git_repo.commit(tag)
        git_repo.git("tag", tag)
        lines[tag] = header.count("\n") + 3
    for tag, line in lines.items():
        path = _registry(tag[1:]).replace("ops.rs", "pool.rs")
        if form == "rust 1.73+":
            text = (f"thread 'main' panicked at {path}:{line}:5:\nassertion `left == right` failed: pool: only 4D "
                    f"inputs are supported\n  left: 3\n right: 4\n{NOTE}")
        else:
            text = (f"thread 'main' panicked at 'assertion failed: `(left == right)`\n  left: `3`,\n right: `4`: "
                    f"pool: only 4D inputs are supported', {path}:{line}:5\n{NOTE}")
        got = _lookup(cli, git_repo, text)
        assert got["query"]["message"] == "assertion `left == right` failed: pool: only 4D inputs are supported"
        first = got["matches"][0]
        assert got["answeredFrom"]["rev"] == tag and first["record"]["lineNumber"] == line
        assert first["lineDistance"] == 0 and first["analysis"]["macro"] == "assert_eq"
