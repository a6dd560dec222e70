"""The `burn-errors` command line: the group and the one list of its commands.

Each command lives in a module of this package and is a plain click command; none of them knows
the group. `COMMANDS` is the only place a command is registered, (`--help` lists them by name).

Exit codes: 0 success; 1 a check failed (`diff --fail-on`, `validate`, `lookup`); 2 bad input or
an error, reported as one line on stderr (a traceback only with --debug); 130 interrupted.
"""

from __future__ import annotations

import click

from analyzer import __version__
from analyzer.cli.common import PROG, CliGroup, debug_option
from analyzer.cli.coverage import coverage
from analyzer.cli.diff import diff
from analyzer.cli.export import export
from analyzer.cli.extract import extract
from analyzer.cli.history import history
from analyzer.cli.pages import annotate, lookup, render
from analyzer.cli.validate import validate

COMMANDS: tuple[click.Command, ...] = (
    extract, validate, export, coverage, diff, render, lookup, annotate, history,
)


@click.group(cls=CliGroup, commands=COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name=PROG)
@debug_option
def main():
    """Find the panics a burn user hits because a dtype or a mode is not supported, and write each
    as an error record ready for annotation.

    \b
    Examples:
      burn-errors extract --out output/
      burn-errors extract --repo ../burn --sha main --out output/
      burn-errors coverage --repo ../burn --sha main
      burn-errors diff v0.18.0 main --repo ../burn --fail-on added
      burn-errors export output/records.jsonl --out site/data/
    """


__all__ = ["COMMANDS", "main"]
