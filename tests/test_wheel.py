"""The package as a user installs it: the wheel built from this checkout, installed in a virtual
environment of its own, runs `burn-errors --help` and an extract through its console script.
What this catches is what only an installed copy shows: a package, template or query file left
out of the wheel, or a broken entry point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import DTYPE_RS, GitRepo

ROOT = Path(__file__).resolve().parent.parent

SITE = """\
pub fn conv(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => conv_f32(x),
        dtype => panic!("conv: unsupported dtype {dtype:?}"),
    }
}
"""


def _run(cmd: list, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{cmd}: {res.stdout}\n{res.stderr}"
    return res


def test_the_built_wheel_installs_and_runs(tmp_path):
    # The wheel is built from a copy of what it is made of, so no build files land in the checkout.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in ("analyzer", "queries"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", tmp_path / "dist", src],
         cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("burn_errors-*.whl")

    # A fresh environment holding the wheel alone. Its dependencies are then read from this
    # environment's site-packages (a path, listed after the new environment's own), so nothing
    # is downloaded and the `analyzer` imported is the wheel's, even where this environment has
    # the package installed too (added after the install, or pip would find it installed there).
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    py = venv / "bin" / "python"
    purelib = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        cwd=tmp_path).stdout.strip())
    _run([sys.executable, "-m", "pip", "--python", py, "install", "--quiet", "--no-deps", "--no-index", wheel],
         cwd=tmp_path)
    (purelib / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(BURN_ERRORS_CACHE=str(tmp_path / "cache"), COLUMNS="100")
    found = _run([py, "-c", "import analyzer; print(analyzer.__file__)"], cwd=tmp_path, env=env).stdout
    assert Path(found.strip()).is_relative_to(purelib)
    # Every module of the checkout is in the wheel and imports (a command may not reach them all).
    walk = ("import importlib, pkgutil, analyzer\n"
            "for m in pkgutil.walk_packages(analyzer.__path__, 'analyzer.'):\n"
            "    if m.name != 'analyzer.__main__':  # importing it runs the command\n"
            "        importlib.import_module(m.name)\n"
            "    print(m.name)\n")
    installed = set(_run([py, "-c", walk], cwd=tmp_path, env=env).stdout.split())
    checkout = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                for p in (ROOT / "analyzer").rglob("*.py")} - {"analyzer"}
    assert installed >= checkout, sorted(checkout - installed)

    exe = venv / "bin" / "burn-errors"
    help_text = _run([exe, "--help"], cwd=tmp_path, env=env).stdout
    assert "Usage: burn-errors" in help_text and "extract" in help_text

    repo = GitRepo(tmp_path / "repo")
    repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    repo.crate("burn-flex", {"src/ops.rs": SITE})
    repo.commit()
    out = tmp_path / "out"
    _run([exe, "extract", "--repo", repo.path, "--sha", "HEAD", "--out", out], cwd=tmp_path, env=env)
    (line,) = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert line["record"]["errorMessage"] == "conv: unsupported dtype {dtype:?}"
    assert line["record"]["filePath"] == "crates/burn-flex/src/ops.rs" and line["analysis"]["crate"] == "burn-flex"
    # The coverage page comes from a template inside the package.
    _run([exe, "coverage", "--records", out / "records.jsonl", "--format", "html", "--out", tmp_path / "c.html"],
         cwd=tmp_path, env=env)
    assert "conv" in (tmp_path / "c.html").read_text()
