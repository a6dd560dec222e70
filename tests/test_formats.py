"""Output formats: the sink registry is the one list of formats, every `--format` offers
exactly its family's names, the names are spelled the same in every family, and every registered
format has its module, its test and (where its family's documents are kept) its link syntax."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import sinks

# Each command's --format family.
COMMANDS = {"coverage": "coverage", "diff": "diff", "render": "pages", "history": "history", "lookup": "lookup"}
# The families whose output people read as a document: each has a markdown format.
DOCUMENTS = ("coverage", "diff", "pages", "history")
SINK_TESTS = Path(__file__).resolve().parent / "sinks"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_format_choices_are_the_registry(cli, command):
    res = cli(command, "--help")
    assert res.code == 0
    assert f"--format [{'|'.join(sinks.formats(COMMANDS[command]))}]" in res.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_unknown_formats_are_refused_before_any_work(cli, command, tmp_path):
    args = {"coverage": [], "diff": ["a", "b"], "render": [str(tmp_path / "none.jsonl")], "history": [],
            "lookup": ["a message"]}[command]
    res = cli(command, *args, "--format", "pdf")
    assert res.code == 2
    assert res.stderr.count("\n") == 1 and "'pdf' is not one of" in res.stderr


def test_every_command_offers_a_family_and_every_family_has_formats():
    assert set(COMMANDS.values()) == set(sinks.FAMILIES)
    assert all(sinks.formats(family) for family in sinks.FAMILIES)
    assert len({(s.family, s.name) for s in sinks.SINKS}) == len(sinks.SINKS), "a format registered twice"


@pytest.mark.parametrize("sink", sinks.SINKS, ids=repr)
def test_every_sink_has_its_module_its_test_and_its_link_syntax(sink):
    module = sink.load()
    assert callable(getattr(module, "render", None)), f"{sink.module}.py has no render(result, options)"
    assert not sink.terminal or callable(getattr(module, "draw", None)), f"{sink.module}.py has no draw"
    assert (SINK_TESTS / f"test_{sink.module}.py").is_file(), f"no tests/sinks/test_{sink.module}.py"
    if sinks.FAMILIES[sink.family].links:
        assert sink.link_syntax is not None, f"{sink!r}: its family's documents are kept; say where it opens links"


def test_every_module_of_a_family_that_renders_is_registered():
    package = Path(sinks.__file__).resolve().parent
    registered = {s.module for s in sinks.SINKS}
    for path in sorted(package.glob("*.py")):
        family = next((f for f in sinks.FAMILIES if path.stem.startswith(f + "_")), None)
        if family is not None and "\ndef render(" in path.read_text(encoding="utf-8"):
            assert path.stem in registered, f"sinks/{path.name} renders but is not in sinks.SINKS"


def test_aliases_name_registered_formats():
    for family in sinks.FAMILIES:
        for alias, name in sinks.aliases(family).items():
            assert name in sinks.formats(family) and alias not in sinks.formats(family)
            assert sinks.get(family, alias) is sinks.get(family, name)


def test_one_spelling_per_kind_of_output():
    for family in sinks.FAMILIES:
        assert "md" not in sinks.formats(family)
        assert "markdown" in sinks.formats(family) or family not in DOCUMENTS


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
