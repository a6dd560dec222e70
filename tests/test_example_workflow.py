"""The example workflow's own scripts, run on a small repository: the pull-request job analyses
each revision once and diffs the two records files; the default-branch job analyses once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GitRepo, subprocess_env

WORKFLOW = Path(__file__).resolve().parents[1] / "examples" / "burn-errors-pr.yml"

SITE = 'fn {name}(x: Tensor) {{\n    match x.dtype() {{\n        DType::F32 => 1,\n' \
       '        d => panic!("{name}: unsupported dtype {{d:?}}"),\n    }};\n}}\n'


def run_script(step: str, key: str = "run") -> str:
    """The `run: |` (or `script: |`) block of the step named `step`, dedented (the workflow's
    YAML as written)."""
    lines = WORKFLOW.read_text().split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.strip() == f"- name: {step}")
    at = next(i for i in range(start, len(lines)) if lines[i].strip() == f"{key}: |")
    indent = len(lines[at + 1]) - len(lines[at + 1].lstrip())
    body = []
    for ln in lines[at + 1:]:
        if ln.strip() and len(ln) - len(ln.lstrip()) < indent:
            break
        body.append(ln[indent:])
    return "\n".join(body)


def _shim(tmp_path: Path) -> tuple[dict, Path]:
    """A `burn-errors` on PATH that logs its command and runs this checkout's."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    shim = bin_dir / "burn-errors"
    shim.write_text(f'#!/bin/sh\necho "$1" >> "{log}"\nexec "{sys.executable}" -m analyzer "$@"\n')
    shim.chmod(0o755)
    env = subprocess_env({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                          "GITHUB_OUTPUT": str(tmp_path / "github_output"),
                          "GITHUB_STEP_SUMMARY": str(tmp_path / "step_summary"), "REPO_NAME": "tracel-ai/burn"})
    return env, log


def _bash(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)


def test_the_pull_request_job_analyses_each_revision_once(git_repo: GitRepo, tmp_path):
    git_repo.crate("burn-x", {"src/lib.rs": SITE.format(name="first")})
    base = git_repo.commit("base")
    git_repo.git("checkout", "-q", "-b", "feature")
    git_repo.crate("burn-x", {"src/lib.rs": SITE.format(name="first") + SITE.format(name="second")})
    head = git_repo.commit("adds a site")
    env, log = _shim(tmp_path)
    env.update(BASE_SHA=base, HEAD_SHA=head, ARTIFACT_URL="https://github.com/o/r/actions/runs/1/artifacts/2")
    res = _bash(run_script("Analyse the two revisions") + "\n" + run_script("Diff the pull request"), git_repo.path, env)
    assert res.returncode == 0, res.stderr
    outputs = dict(ln.split("=", 1) for ln in Path(env["GITHUB_OUTPUT"]).read_text().split())
    assert outputs == {"base": base, "status": "1"}  # --fail-on added: one site added
    assert json.loads((git_repo.path / "burn-errors.json").read_text())["summary"]["added"] == 1
    assert json.loads((git_repo.path / "burn-errors.sarif").read_text())["runs"][0]["results"]
    res = _bash(run_script("Write the comment"), git_repo.path, env)
    assert res.returncode == 0, res.stderr
    comment = (git_repo.path / "burn-errors.md").read_text()
    assert "second: unsupported dtype" in comment and Path(env["GITHUB_STEP_SUMMARY"]).read_text() == comment
    assert log.read_text().split() == ["extract", "extract", "diff", "diff", "diff"]


def test_the_default_branch_job_analyses_once(git_repo: GitRepo, tmp_path):
    git_repo.crate("burn-x", {"src/lib.rs": SITE.format(name="first")})
    git_repo.commit()
    env, log = _shim(tmp_path)
    res = _bash(run_script("Analyse the default branch"), git_repo.path, env)
    assert res.returncode == 0, res.stderr
    assert json.loads((git_repo.path / "burn-errors.sarif").read_text())["runs"][0]["results"] == []
    assert log.read_text().split() == ["extract", "diff"]


def test_the_install_step_needs_the_repository_variable(tmp_path):
    script = run_script("Install burn-errors")
    res = _bash(script, tmp_path, {**os.environ, "BURN_ERRORS_GIT": ""})
    assert res.returncode == 1 and "::error::Set the repository variable BURN_ERRORS_GIT" in res.stdout
    assert 'pip install "burn-errors @ git+${BURN_ERRORS_GIT}@${BURN_ERRORS_TAG}"' in script


# The github-script step run by node with a stand-in for its `github` and `context`: which calls
# it makes (create or update a comment), as JSON on stdout.
GITHUB_SCRIPT = """
const calls = [];
const github = {
  paginate: async () => JSON.parse(process.env.COMMENTS),
  rest: {issues: {listComments: 'listComments',
                  createComment: async (a) => calls.push(['create', a.issue_number]),
                  updateComment: async (a) => calls.push(['update', a.comment_id])}},
};
const context = {repo: {owner: 'tracel-ai', repo: 'burn'}, issue: {number: 7}};
(async () => {
SCRIPT
})().then(() => console.log(JSON.stringify(calls)), (e) => { console.error(e); process.exit(1); });
"""


def _comment_calls(cwd: Path, comments: list[dict]) -> list:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the comment step's script cannot run")
    script = GITHUB_SCRIPT.replace("SCRIPT", run_script("Comment on the pull request", key="script"))
    res = subprocess.run([node, "-e", script], cwd=cwd, capture_output=True, text=True,
                         env={**os.environ, "COMMENTS": json.dumps(comments)})
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.mark.parametrize("change, quiet", [("moves", True), ("adds", False)])
def test_the_comment_step_stays_quiet_on_a_pull_request_that_only_moves_lines(git_repo: GitRepo, tmp_path,
                                                                               change, quiet):
    git_repo.crate("burn-x", {"src/lib.rs": SITE.format(name="first")})
    base = git_repo.commit("base")
    git_repo.git("checkout", "-q", "-b", "feature")
    head_rs = ("// A comment above the site.\n\n" + SITE.format(name="first") if change == "moves"
               else SITE.format(name="first") + SITE.format(name="second"))
    git_repo.crate("burn-x", {"src/lib.rs": head_rs})
    head = git_repo.commit(change)
    env, _ = _shim(tmp_path)
    env.update(BASE_SHA=base, HEAD_SHA=head, ARTIFACT_URL="https://github.com/o/r/actions/runs/1/artifacts/2")
    steps = ("Analyse the two revisions", "Diff the pull request", "Write the comment")
    res = _bash("\n".join(run_script(s) for s in steps), git_repo.path, env)
    assert res.returncode == 0, res.stderr
    report = json.loads((git_repo.path / "burn-errors.json").read_text())
    assert report["quiet"] is quiet
    if change == "moves":
        assert report["summary"]["moved"] == 1
    assert _comment_calls(git_repo.path, []) == ([] if quiet else [["create", 7]])
    # An earlier comment is kept up to date either way, so it never says what is no longer so.
    marker = (git_repo.path / "burn-errors.md").read_text().split("\n", 1)[0]
    earlier = [{"id": 41, "user": {"type": "Bot"}, "body": marker + "\nolder"}]
    assert _comment_calls(git_repo.path, earlier) == [["update", 41]]
