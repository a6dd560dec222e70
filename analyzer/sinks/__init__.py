"""Sinks: one module per output format, and one registry per output family mapping each format's
name to its writer.

A command's `--format` choices are the keys of its family's registry, and the command calls the
writer its format names: adding a format is a module and a registry entry. Every writer of a
family takes the same arguments. A writer imports its module when first called, so listing the
formats (parsing the options, `--help`) loads no template engine or renderer.

The same name means the same kind of output in every family: `markdown`, `json`, `html`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class Writer:
    """The function `function` of the sink module `module`, imported when first called."""

    def __init__(self, module: str, function: str = "dumps"):
        self.module = module
        self.function = function

    def sink(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.sink(), self.function)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Writer({self.module}.{self.function})"


# Coverage: (matrix) -> text.
COVERAGE: dict[str, Writer] = {
    "table": Writer("coverage_table"),
    "markdown": Writer("coverage_markdown"),
    "json": Writer("coverage_json"),
    "html": Writer("coverage_html"),
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
    return diff_markdown.render(result, fail_on, artifacts_url=artifacts_url)


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
    "markdown": Writer("page_markdown", "render"),
    "html": Writer("page_html", "render"),
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
    "markdown": Writer("history_markdown"),
    "json": Writer("history_json"),
    "html": Writer("history_html"),
}
