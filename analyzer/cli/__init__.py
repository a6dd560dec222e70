"""The `burn-errors` command line: the group and the one list of its commands.

Each command lives in a module of this package and is a plain click command; none of them knows
the group. `COMMANDS` is the only place a command is registered: its name, the module and
attribute that hold it, and the first sentence of its help. The group imports a command's module
only when that command runs (or its own `--help` is asked for), so a run pays for the one command
it uses; the group's `--help` lists every command from the sentences kept here, importing none
(tests/test_startup.py checks they match each command's own help).

Exit codes: 0 success; 1 a check failed (`diff --fail-on`, `validate`, `lookup`); 2 bad input or
an error, reported as one line on stderr (a traceback only with --debug); 130 interrupted.
"""

from __future__ import annotations

import importlib

import click

from analyzer import __version__
from analyzer.cli.common import PROG, CliGroup, debug_option

COMMANDS: dict[str, tuple[str, str, str]] = {
    "extract": ("analyzer.cli.extract", "extract",
                "Find the sites and write OUT/records.jsonl and OUT/manifest.json."),
    "validate": ("analyzer.cli.validate", "validate",
                 "Check a records file, or a folder written by `export`, record by record; exit 1 and list "
                 "every problem as FILE:LINE: FIELD: WHY."),
    "export": ("analyzer.cli.export", "export",
               'Write the records as the published dataset serves them: OUT/<id>.json holds {"record": {the '
               '32 keys}, "datasetVersion": TIME} for each record, and OUT/index.json lists them (id, slug, '
               'file, errorMessage, filePath, lineNumber, backgroundTag).'),
    "coverage": ("analyzer.cli.coverage", "coverage",
                 "Show which dtypes each backend operation handles and which panic."),
    "diff": ("analyzer.cli.diff", "diff",
             "Compare the records of BASE and HEAD: sites added, removed, changed and moved, and the coverage "
             "cells that flipped."),
    "render": ("analyzer.cli.pages", "render",
               "Write one page per record, in the shape of the published error pages, and an index."),
    "lookup": ("analyzer.cli.lookup", "lookup", "Find the record a runtime panic comes from."),
    "annotate": ("analyzer.cli.pages", "annotate",
                 "Hand records to annotators (people or a model) and merge their answers back."),
    "history": ("analyzer.cli.history", "history",
                "Follow every record across revisions: the revision it was first seen at, each revision where "
                "its content changed, and the one where it disappeared, fixed (a dtype it rejected became "
                "handled, or its match lost the panicking arm) or removed from the tree (its file or function "
                "is gone); and each backend's dtype coverage cells that turned handled or regressed."),
}


class LazyGroup(CliGroup):
    """A group whose commands are imported when used (click's lazily loading group pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module, attribute, _ = entry
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """As click's, with the names of the commands not imported to suggest one for a typo."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as e:
            no_such = getattr(click.exceptions, "NoSuchCommand", None)  # click 8.4 and later
            if no_such is None or not isinstance(e, no_such) or e.possibilities:
                raise
            raise no_such(e.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands section of `--help` from the kept sentences, shortened as click shortens
        a command's own help."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, click.Command(name, help=COMMANDS[name][2]).get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup,
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
