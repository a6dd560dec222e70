"""Output formats: each family's registry is the one list of its formats, every `--format`
offers exactly its keys, and the names are spelled the same in every family."""

from __future__ import annotations

import pytest

from analyzer import sinks

FAMILIES = {"coverage": sinks.COVERAGE, "diff": sinks.DIFF, "render": sinks.PAGES, "history": sinks.HISTORY,
            "lookup": sinks.LOOKUP}
# The families whose output people read as a document: each has a markdown format.
DOCUMENTS = ("coverage", "diff", "render", "history")


@pytest.mark.parametrize("command", sorted(FAMILIES))
def test_format_choices_are_the_registry(cli, command):
    res = cli(command, "--help")
    assert res.code == 0
    assert f"--format [{'|'.join(FAMILIES[command])}]" in res.stdout


@pytest.mark.parametrize("command", sorted(FAMILIES))
def test_unknown_formats_are_refused_before_any_work(cli, command, tmp_path):
    args = {"coverage": [], "diff": ["a", "b"], "render": [str(tmp_path / "none.jsonl")], "history": [],
            "lookup": ["a message"]}[command]
    res = cli(command, *args, "--format", "pdf")
    assert res.code == 2
    assert res.stderr.count("\n") == 1 and "'pdf' is not one of" in res.stderr


def test_every_writer_names_a_function_of_its_sink():
    for registry in (sinks.COVERAGE, sinks.COVERAGE_TERMINAL, sinks.PAGES, sinks.HISTORY, sinks.LOOKUP):
        for writer in registry.values():
            assert callable(getattr(writer.sink(), writer.function)), writer
    assert set(sinks.COVERAGE_TERMINAL) <= set(sinks.COVERAGE)
    assert all(target in sinks.PAGES for target in sinks.PAGES_ALIASES.values())


def test_one_spelling_per_kind_of_output():
    for command, registry in FAMILIES.items():
        assert "md" not in registry
        assert "markdown" in registry or command not in DOCUMENTS


def test_one_template_environment_and_one_escaping_module():
    """Every template is rendered by analyzer/core/rendering.py's environment, and Markdown
    escaping lives in analyzer/core/safe.py alone: a second one would drift from it."""
    import re
    from pathlib import Path

    package = Path(sinks.__file__).resolve().parent.parent
    builds_environment, escapes_markdown = [], []
    for path in sorted(package.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = path.relative_to(package).as_posix()
        if re.search(r"\bEnvironment\s*\(", source) and name != "core/rendering.py":
            builds_environment.append(name)
        if re.search(r"^def _?(md_\w+|escape_md\w*|\w*markdown_escape\w*)\(", source, re.M) and name != "core/safe.py":
            escapes_markdown.append(name)
    assert builds_environment == [] and escapes_markdown == []
