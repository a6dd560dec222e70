"""bench/bench.py runs end to end on a tiny repository and prints its table (the timings'
values are never checked: no timing in unit tests)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import subprocess_env

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench.py"

def have_ast_grep() -> bool:
    """What bench.py looks for: ast-grep beside this Python (the `bench` extra), else on PATH."""
    return (Path(sys.executable).parent / "ast-grep").exists() or shutil.which("ast-grep") is not None

DISPATCH_RS = """\
use burn_std::DType;

pub fn conv(dtype: DType) {
    match dtype {
        DType::F32 => run(),
        DType::F16 => {
            // not yet
            unimplemented!("conv for f16")
        }
        other => panic!("conv: unsupported dtype {other:?}"),
    }
}

pub fn pool(dtype: DType) {
    match dtype {
        DType::F32 => run(),
        _ => todo!(),
    }
    panic!("not in an arm");
}
"""


def bench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """bench.py timing this checkout's burn-errors (`python -m analyzer` with the working tree first
    on sys.path), not an installed copy, unless the test names one."""
    own = [] if "--burn-errors" in args else ["--burn-errors", f"{shlex.quote(sys.executable)} -m analyzer"]
    return subprocess.run([sys.executable, str(BENCH), *args, *own], capture_output=True, text=True,
                          env=subprocess_env(env), timeout=300)


@pytest.fixture
def bench_repo(git_repo):
    git_repo.crate("burn-flex", {"src/ops.rs": DISPATCH_RS})
    base = git_repo.commit("base")
    git_repo.write("crates/burn-flex/src/more.rs", DISPATCH_RS.replace("conv", "deform").replace("pool", "pad"))
    head = git_repo.commit("head")
    return git_repo, base, head


@pytest.mark.skipif(not have_ast_grep(), reason="ast-grep is not installed (pip install '.[test]' or '.[bench]')")
def test_bench_prints_the_table(bench_repo, tmp_path):
    repo, base, head = bench_repo
    out = bench("--repo", str(repo.path), "--sha", head, "--base", base, "--rounds", "1",
                "--json", str(tmp_path / "bench.json"))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for label in ("burn-errors extract, cold cache", "burn-errors extract, warm cache", "ast-grep scan",
                  "burn-errors diff BASE HEAD", "cold/ast-grep", "cached/ast-grep", "peak RSS", "command:",
                  "burn-errors coverage, cold cache", "burn-errors coverage, results cache",
                  "coverage cold/ast-grep", "coverage cached/ast-grep", "burn-errors lookup, served",
                  "lookup served (wall)", "--lookup-only"):
        assert label in text, label
    ratios = json.loads((tmp_path / "bench.json").read_text())["ratios"]
    assert set(ratios) == {"cold", "cached", "coverage cold", "coverage cached"}
    # Both tools looked at the same three files and agree on the six arm bodies (three a file).
    assert "6 matches" in text
    assert "files scanned: burn-errors 3, ast-grep 3" in text
    assert "burn-errors saw 6 calls of the same shape" in text and "6 at the same file:line" in text
    assert (tmp_path / "bench.json").exists()


def test_bench_times_the_served_lookup_alone(bench_repo, tmp_path):
    """`--lookup-only` needs no ast-grep: one lookup that extracts, then the served ones."""
    repo, _, head = bench_repo
    out = bench("--repo", str(repo.path), "--sha", head, "--rounds", "2", "--lookup-only",
                "--ast-grep", str(tmp_path / "no-such-ast-grep"), "--json", str(tmp_path / "lookup.json"))
    assert out.returncode == 0, out.stderr
    assert "the first lookup (one extract)" in out.stdout and "then 2 served" in out.stdout
    assert "burn-errors lookup, served" in out.stdout and "lookup served (wall)" in out.stdout
    data = json.loads((tmp_path / "lookup.json").read_text())
    assert len(data["wall"]) == 2 and data["lookupServed"] > 0


def test_bench_says_how_to_get_ast_grep(bench_repo, tmp_path):
    repo, _, head = bench_repo
    out = bench("--repo", str(repo.path), "--sha", head, "--rounds", "1",
                "--ast-grep", str(tmp_path / "no-such-ast-grep"))
    assert out.returncode == 2
    assert out.stderr.startswith("bench: error: ") and "ast-grep" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_bench_rejects_an_unknown_revision(bench_repo):
    repo, _, _ = bench_repo
    out = bench("--repo", str(repo.path), "--sha", "no-such-rev", "--rounds", "1")
    assert out.returncode == 2
    assert "no-such-rev" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.skipif(not have_ast_grep(), reason="ast-grep is not installed (pip install '.[test]' or '.[bench]')")
def test_bench_exports_the_rust_files_alone_when_the_repository_lacks_a_blob(git_repo):
    """A snapshot without the old images of a revision: `git archive` of the whole tree fails, the
    Rust files are exported alone and both tools still read the same three files."""
    git_repo.crate("burn-flex", {"src/ops.rs": DISPATCH_RS, "src/more.rs": DISPATCH_RS.replace("conv", "deform")})
    git_repo.write_bytes("docs/picture.png", b"\x89PNG not really")
    head = git_repo.commit("with a picture")
    oid = git_repo.git("rev-parse", f"{head}:docs/picture.png")
    (git_repo.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    out = bench("--repo", str(git_repo.path), "--sha", head, "--rounds", "1")
    assert out.returncode == 0, out.stderr
    assert "ast-grep scans its Rust files alone" in out.stderr
    assert "files scanned: burn-errors 3, ast-grep 3" in out.stdout


SCALING = Path(__file__).resolve().parent.parent / "bench" / "scaling.py"


def test_hostile_inputs_scale_linearly():
    """bench/scaling.py at its small sizes: each hostile input at n and 4n (nested matches, an
    else-if chain, comment lines, a wide or-pattern, long messages, records over many crates).
    Only the ratio of CPU times (least of five rounds) is asserted, never seconds: 4 is linear, 16
    quadratic, and other processes on the machine do not count in this one's CPU time."""
    res = subprocess.run([sys.executable, str(SCALING), "--small", "--check", "--max-ratio", "10", "--rounds", "5"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert len(res.stdout.strip().splitlines()) == 6
