"""Shared fixtures: real git repositories built from small Rust fixtures in a temporary folder,
and a runner for the real `burn-errors` command (in-process, through click's entry point)."""

from __future__ import annotations

import json
import os
import shutil
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


def _command() -> list[str]:
    """The installed console script beside this interpreter, else `python -m analyzer`."""
    script = Path(sys.executable).parent / "burn-errors"
    if script.exists():
        return [str(script)]
    found = shutil.which("burn-errors")
    return [found] if found else [sys.executable, "-m", "analyzer"]


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> Result:
    """Run the installed `burn-errors` command for real, in a subprocess."""
    proc = subprocess.run([*_command(), *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "COLUMNS": "100", **(env or {})})
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli():
    return run_cli


def read_records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines() if line]
