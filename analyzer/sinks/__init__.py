"""Sinks: one module per output format, and one registry per output family mapping each format's
name to its writer.

A command's `--format` choices are the keys of its family's registry, and the command calls the
writer its format names: adding a format is a module and a registry entry. Every writer of a
family takes the same arguments. A writer imports its module when first called, so listing the
formats (parsing the options, `--help`) loads no template engine or renderer.

The same name means the same kind of output in every family: `markdown`, `json`, `html`.

A format a person reads (markdown, html, a table, SARIF's alert texts) is `shown`: its whole
output goes through core/safe.py's `visible`, so no control character or bidirectional override
reaches a page, a title, a link text or an alert, whichever field carried it. The JSON formats and
records are data and keep every character.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class Writer:
    """The function `function` of the sink module `module`, imported when first called."""

    def __init__(self, module: str, function: str = "dumps", shown: bool = False):
        self.module = module
        self.function = function
        self.shown = shown

    def sink(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = getattr(self.sink(), self.function)(*args, **kwargs)
        return shown(out) if self.shown else out


def shown(output: Any) -> Any:
    """A sink's output as a person may be shown it (core/safe.py `visible`): a text, or the texts
    of a {file name: text} set of pages (but the records beside them, `.json`, which are data);
    anything else (a terminal drawing's None) as it is."""
    from analyzer.core.safe import visible

    if isinstance(output, str):
        return visible(output)
    if isinstance(output, dict):
        return {name: visible(text) if isinstance(text, str) and not name.endswith(".json") else text
                for name, text in output.items()}
    return output

    def __repr__(self) -> str:
        return f"Writer({self.module}.{self.function})"


# Coverage: (matrix, full=False) -> text; `full` (--full) is the JSON writer's alone.
COVERAGE: dict[str, Writer] = {
    "table": Writer("coverage_table", shown=True),
    "markdown": Writer("coverage_markdown", shown=True),
    "json": Writer("coverage_json"),
    "html": Writer("coverage_html", shown=True),
}
# Coverage formats drawn straight on a terminal (colours, its width) when no --out is given:
# (matrix) -> None.
COVERAGE_TERMINAL: dict[str, Writer] = {
    "table": Writer("coverage_table", "print_tables"),
}


# Diff: (result, fail_on, artifacts_url) -> text; the arguments a format has no use for are
# dropped here so each sink keeps the signature it needs.
def _diff_markdown(result: Any, fail_on: list[str], artifacts_url: str | None) -> str:
    from analyzer.sinks import diff_markdown
    return shown(diff_markdown.render(result, fail_on, artifacts_url=artifacts_url))


def _diff_json(result: Any, fail_on: list[str], artifacts_url: str | None) -> str:
    from analyzer.sinks import diff_json
    return diff_json.dumps(result, fail_on)


def _diff_sarif(result: Any, fail_on: list[str], artifacts_url: str | None) -> str:
    from analyzer.sinks import sarif
    return sarif.dumps(result)


DIFF = {
    "markdown": _diff_markdown,
    "json": _diff_json,
    "sarif": _diff_sarif,
}

# Error pages: (record lines, issues_url) -> {file name: text}, the index `index.<sink EXT>`
# among them.
PAGES: dict[str, Writer] = {
    "markdown": Writer("page_markdown", "render", shown=True),
    "html": Writer("page_html", "render", shown=True),
}
# Other names taken for a pages format (`md` was its only spelling before `markdown`).
PAGES_ALIASES = {"md": "markdown"}

# Lookup: (lookup result, the matches shown, whether stdout is a terminal, the records read, a
# matching record of another release) -> text.
LOOKUP: dict[str, Writer] = {
    "text": Writer("lookup_text"),
    "json": Writer("lookup_json"),
}

# History: (history) -> text.
HISTORY: dict[str, Writer] = {
    "markdown": Writer("history_markdown", shown=True),
    "json": Writer("history_json"),
    "html": Writer("history_html", shown=True),
}
