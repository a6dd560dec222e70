"""The example workflow's own scripts, run on a small repository: the pull-request job analyses
each revision once and diffs the two records files; the default-branch job analyses once."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DTYPE_RS, GitRepo, subprocess_env

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


def _env(tmp_path, base, head, **extra):
    env, log = _shim(tmp_path)
    env.update(BASE_SHA=base, HEAD_SHA=head, ARTIFACT_URL="https://github.com/o/r/actions/runs/1/artifacts/2",
               BURN_ERRORS_FAIL_ON=_workflow_env("BURN_ERRORS_FAIL_ON"), **extra)
    return env, log


def _workflow_env(name: str) -> str:
    """A value of the workflow's top-level `env:` as written."""
    m = re.search(rf"^  {name}: (.*)$", WORKFLOW.read_text(), re.M)
    assert m, name
    return m.group(1).strip().strip('"')


def _pull_request(git_repo: GitRepo) -> tuple[str, str]:
    """A backend whose float_exp handles every float dtype at the base, and a branch off it
    where it handles F32 only and panics on the rest: one site added, its cells flipped."""
    from test_diff_coverage import HEAD_OPS_RS
    from test_coverage import FIX_OPS_RS, FIX_TENSOR_RS, OPS_TRAITS_RS

    git_repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    git_repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS})
    git_repo.crate("burn-fix", {"src/tensor.rs": FIX_TENSOR_RS, "src/ops.rs": FIX_OPS_RS})
    base = git_repo.commit("base")
    git_repo.git("checkout", "-q", "-b", "feature")
    exp_only = HEAD_OPS_RS.split("    fn float_floor(", 1)[0]
    assert "float_exp: unsupported dtype" in exp_only
    git_repo.crate("burn-fix", {"src/ops.rs": exp_only + FIX_OPS_RS.split("        exp_kernel(tensor)\n    }", 1)[1]})
    return base, git_repo.commit("float_exp handles F32 only")


def _run_pull_request_job(git_repo: GitRepo, env: dict) -> subprocess.CompletedProcess:
    # The step outputs the later steps read, as GitHub passes them.
    res = _bash(run_script("Diff the pull request"), git_repo.path, env)
    assert res.returncode == 0, res.stderr
    outputs = dict(ln.split("=", 1) for ln in Path(env["GITHUB_OUTPUT"]).read_text().split())
    return _bash(run_script("Write the comment"), git_repo.path, {**env, "BASE": outputs["base"]})


def test_the_pull_request_job_diffs_the_two_revisions_with_coverage_and_reports_by_default(git_repo, tmp_path):
    base, head = _pull_request(git_repo)
    env, log = _env(tmp_path, base, head)
    res = _run_pull_request_job(git_repo, env)
    assert res.returncode == 0, res.stderr
    outputs = dict(ln.split("=", 1) for ln in Path(env["GITHUB_OUTPUT"]).read_text().split())
    assert outputs == {"base": base, "status": "0"}  # the default policy reports, never fails
    report = json.loads((git_repo.path / "burn-errors.json").read_text())
    assert report["summary"]["added"] == 1
    # Between two revisions, the diff has each side's coverage: the cells the new site flipped.
    assert report["summary"]["flipped"] >= 1 and report["flipped"]
    assert json.loads((git_repo.path / "burn-errors.sarif").read_text())["runs"][0]["results"]
    comment = (git_repo.path / "burn-errors.md").read_text()
    assert "float_exp: unsupported dtype" in comment and Path(env["GITHUB_STEP_SUMMARY"]).read_text() == comment
    assert "`float_exp`" in comment and "panics" in comment  # the flipped cells' table
    assert log.read_text().split() == ["diff", "diff", "diff"]


def test_a_fail_on_policy_fails_the_job_after_the_report(git_repo, tmp_path):
    base, head = _pull_request(git_repo)
    env, _ = _env(tmp_path, base, head)
    env["BURN_ERRORS_FAIL_ON"] = "added"
    assert _run_pull_request_job(git_repo, env).returncode == 0
    outputs = dict(ln.split("=", 1) for ln in Path(env["GITHUB_OUTPUT"]).read_text().split())
    assert outputs["status"] == "1"  # the last step fails the job on it
    assert (git_repo.path / "burn-errors.md").exists()
    res = _bash(run_script("Fail as BURN_ERRORS_FAIL_ON says"), git_repo.path, env)
    assert res.returncode == 1 and "::error::" in res.stdout


def test_the_default_branch_job_analyses_once(git_repo: GitRepo, tmp_path):
    git_repo.crate("burn-x", {"src/lib.rs": SITE.format(name="first")})
    git_repo.commit()
    env, log = _shim(tmp_path)
    res = _bash(run_script("Analyse the default branch"), git_repo.path, env)
    assert res.returncode == 0, res.stderr
    assert json.loads((git_repo.path / "burn-errors.sarif").read_text())["runs"][0]["results"] == []
    assert log.read_text().split() == ["diff"]


def test_burn_errors_and_every_action_are_pinned_by_commit():
    """Nothing the workflow runs moves under it: burn-errors at a commit, from a URL written in
    the file (no repository variable, which a fork's pull request would not see), and each
    action at a full commit SHA."""
    text = WORKFLOW.read_text()
    assert "vars." not in text and "secrets." not in text
    assert re.fullmatch(r"[0-9a-f]{40}", _workflow_env("BURN_ERRORS_SHA"))
    assert _workflow_env("BURN_ERRORS_GIT").startswith("https://")
    assert 'pip install "burn-errors @ git+${BURN_ERRORS_GIT}@${BURN_ERRORS_SHA}"' in run_script_line("Install burn-errors")
    uses = re.findall(r"uses: (\S+)", text)
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u) for u in uses), uses
    assert "pull_request_target" not in text.split("\non:", 1)[1].split("\npermissions:", 1)[0]
    assert _workflow_env("BURN_ERRORS_FAIL_ON") == "none"


def run_script_line(step: str) -> str:
    """The one-line `run:` of the step named `step`."""
    lines = WORKFLOW.read_text().split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.strip() == f"- name: {step}")
    return next(ln for ln in lines[start:] if ln.strip().startswith("run: ")).strip()[len("run: "):]


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
    env, _ = _env(tmp_path, base, head)
    res = _run_pull_request_job(git_repo, env)
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
