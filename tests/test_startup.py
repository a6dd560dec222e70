"""A run pays only for what it uses: the group imports a command's module when that command runs,
its `--help` lists every command without importing one, and a run the results cache serves
imports neither the parser, the record schema, the template engine nor the other commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from conftest import ROOT, GitRepo, run_cli, subprocess_env
from test_coverage import fix_backend_repo

from analyzer.cli import COMMANDS, main

# The command run in a fresh interpreter; the names of the modules it imported are written to the
# file named by the first argument, whatever the command's exit.
_WRAPPER = """
import json, runpy, sys
out = sys.argv.pop(1)
sys.argv[0] = "burn-errors"
try:
    runpy.run_module("analyzer", run_name="__main__", alter_sys=True)
finally:
    with open(out, "w", encoding="utf-8") as f:
        json.dump(sorted(sys.modules), f)
"""

# What a served run has no use for: the parser and its grammar, the record schema, the template
# engine, git through a library, worker processes, the terminal renderer, the extraction itself.
NOT_SERVED = ("tree_sitter", "tree_sitter_rust", "pydantic", "jinja2", "git", "multiprocessing", "rich",
              "analyzer.facts.parse", "analyzer.records.model", "analyzer.decisions.classify",
              "analyzer.pipeline.extract")
COMMAND_MODULES = {module for module, _, _ in COMMANDS.values()}


def imported(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    listing = tmp_path / "modules.json"
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, str(listing), *args], capture_output=True, text=True,
                          cwd=ROOT, env=subprocess_env())
    return proc, set(json.loads(listing.read_text(encoding="utf-8")))


def loaded(modules: set[str], name: str) -> bool:
    return name in modules or any(m.startswith(name + ".") for m in modules)


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    return fix_backend_repo(tmp_path / "repo")


def test_the_group_lists_each_command_with_the_start_of_its_own_help():
    ctx = click.Context(main)
    assert main.list_commands(ctx) == sorted(COMMANDS)
    for name, (_, _, sentence) in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name
        kept = click.Command(name, help=sentence)
        for limit in range(10, 400):  # every terminal width shortens them alike
            assert kept.get_short_help_str(limit) == command.get_short_help_str(limit), (name, limit)
    assert main.get_command(ctx, "no-such-command") is None


def test_a_mistyped_command_is_answered_as_by_a_group_holding_every_command():
    ctx = click.Context(main)
    eager = click.Group("burn-errors", commands=[main.get_command(ctx, name) for name in COMMANDS])
    for typo in ("extrac", "covrage", "anotate", "nothing-like-it"):
        with pytest.raises(click.UsageError) as lazy:
            main.resolve_command(click.Context(main), [typo])
        with pytest.raises(click.UsageError) as held:
            eager.resolve_command(click.Context(eager), [typo])
        assert lazy.value.format_message() == held.value.format_message()


def test_help_of_the_group_imports_no_command(tmp_path):
    proc, modules = imported(tmp_path, "--help")
    assert proc.returncode == 0, proc.stderr
    assert not modules & COMMAND_MODULES
    listed = proc.stdout.split("Commands:", 1)[1].split()
    assert [word for word in listed if word in COMMANDS] == sorted(COMMANDS)
    for name, (_, _, sentence) in COMMANDS.items():
        assert f"  {name}  " in proc.stdout and sentence.split()[0] in proc.stdout


def test_a_served_extract_imports_only_what_it_uses(repo, tmp_path):
    args = ["extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(tmp_path / "out")]
    assert run_cli(*args).code == 0
    proc, modules = imported(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    assert "results cache" in proc.stderr
    assert (tmp_path / "out" / "records.jsonl").read_text(encoding="utf-8")
    assert modules & COMMAND_MODULES == {"analyzer.cli.extract"}
    assert [name for name in NOT_SERVED if loaded(modules, name)] == []


def test_a_served_coverage_imports_only_what_it_uses(repo, tmp_path):
    args = ["coverage", "--repo", str(repo.path), "--sha", "HEAD", "--format", "json",
            "--out", str(tmp_path / "coverage.json")]
    assert run_cli(*args).code == 0
    first = (tmp_path / "coverage.json").read_bytes()
    proc, modules = imported(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    assert "unchanged since the last run (results cache)" in proc.stderr
    assert (tmp_path / "coverage.json").read_bytes() == first
    assert modules & COMMAND_MODULES == {"analyzer.cli.coverage"}
    assert [name for name in NOT_SERVED if loaded(modules, name)] == []


def test_an_output_is_renamed_into_place_without_waiting_for_the_disk(tmp_path, monkeypatch):
    import os

    from analyzer.core import outputs

    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    monkeypatch.setattr(os, "fdatasync", synced.append)
    target = tmp_path / "coverage.json"
    target.write_text("old", encoding="utf-8")
    outputs.write_file(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert synced == []
    assert [p.name for p in tmp_path.iterdir()] == ["coverage.json"]  # no temporary file left
