"""Sinks: one module per output format, and one registry of them all.

Every format is a `Sink`: its family (the command whose `--format` offers it), its name, and
where its documents open links. Its module is `sinks/<family>_<name>.py` and holds
`render(result, options)`: the whole output, a text (a {file name: text} set for `pages`), from
the family's result and the `Options` a command passes (each format reads the fields it needs).
A format drawn straight on a terminal (colours, its width) has `draw(result, options)` too.
A command's `--format` choices are `formats(family)`; adding a format is its module, its line
in `SINKS` and its test (tests/sinks/test_<family>_<name>.py, which the registry's test asks
for). A sink imports its module when first used, so listing the formats (parsing the options,
`--help`) loads no template engine or renderer.

The same name means the same kind of output in every family: `markdown`, `json`, `html`.

A format a person reads (markdown, html, a table, SARIF's alert texts) is `shown`: its whole
output goes through core/safe.py's `visible`, so no control character or bidirectional override
reaches a page, a title, a link text or an alert, whichever field carried it. The JSON formats and
records are data and keep every character.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Options:
    """What a command tells its sink beyond the result."""
    full: bool = False  # coverage json: every cell, the n/a ones too (--full)
    fail_on: tuple[str, ...] = ()  # diff: the kinds of site that fail the check (--fail-on)
    artifacts_url: str | None = None  # diff markdown: where the full outputs are (--artifacts-url)
    issues_url: str | None = None  # pages: where "Report an issue" opens an issue (--issues-url)
    to_terminal: bool = False  # lookup: stdout is a terminal


@dataclass(frozen=True)
class Family:
    """A family of formats: `links` when its documents are kept by the results cache and served
    after a check of every link they open (each of its sinks says where it opens one)."""
    links: bool = False
    # Other names taken for a format (`md` was the pages' only spelling before `markdown`).
    aliases: tuple[tuple[str, str], ...] = ()


FAMILIES: dict[str, Family] = {
    "coverage": Family(links=True),
    "diff": Family(),
    "pages": Family(aliases=(("md", "markdown"),)),
    "lookup": Family(),
    "history": Family(),
}


@dataclass(frozen=True)
class Sink:
    family: str
    name: str
    # Where a document opens a link (the bytes just before its target): what follows each must
    # be a place in the page, the commit's files on the target's host, or nothing. None: not
    # said, and such a document is never kept.
    link_syntax: tuple[bytes, ...] | None = None
    shown: bool = False
    terminal: bool = False

    @property
    def module(self) -> str:
        return f"{self.family}_{self.name}"

    def load(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module}")

    def render(self, result: Any, options: Options | None = None) -> Any:
        out = self.load().render(result, options or Options())
        return shown(out) if self.shown else out

    def draw(self, result: Any, options: Options | None = None) -> None:
        """On the terminal (a `terminal` sink only)."""
        self.load().draw(result, options or Options())

    def __repr__(self) -> str:
        return f"Sink({self.family}/{self.name})"


SINKS: tuple[Sink, ...] = (
    Sink("coverage", "table", link_syntax=(), shown=True, terminal=True),
    Sink("coverage", "markdown", link_syntax=(b"](",), shown=True),
    Sink("coverage", "json", link_syntax=(b'"url": "',)),
    Sink("coverage", "html", link_syntax=(b'href="', b'src="'), shown=True),
    Sink("diff", "markdown", shown=True),
    Sink("diff", "json"),
    Sink("diff", "sarif"),
    Sink("pages", "markdown", shown=True),
    Sink("pages", "html", shown=True),
    Sink("lookup", "text"),
    Sink("lookup", "json"),
    Sink("history", "markdown", shown=True),
    Sink("history", "json"),
    Sink("history", "html", shown=True),
)


def formats(family: str) -> dict[str, Sink]:
    """The sinks of `family` by format name, in the order registered (the first is listed first)."""
    return {s.name: s for s in SINKS if s.family == family}


def aliases(family: str) -> dict[str, str]:
    return dict(FAMILIES[family].aliases)


def get(family: str, name: str) -> Sink:
    return formats(family)[aliases(family).get(name, name)]


def shown(output: Any) -> Any:
    """A sink's output as a person may be shown it (core/safe.py `visible`): a text, or the texts
    of a {file name: text} set of pages (but the records beside them, `.json`, which are data);
    anything else as it is."""
    from analyzer.core.safe import visible

    if isinstance(output, str):
        return visible(output)
    if isinstance(output, dict):
        return {name: visible(text) if isinstance(text, str) and not name.endswith(".json") else text
                for name, text in output.items()}
    return output

