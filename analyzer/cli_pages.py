"""Commands that work on a records file: `render`.

They register themselves on the `burn-errors` group when analyzer/cli.py imports this module.
"""

from __future__ import annotations

from pathlib import Path

import click

from .cli import debug_option, main
from .errors import UserError

def _read_records(path: str):
    from .sinks import jsonl
    return jsonl.read(path)


@main.command()
@click.argument("records", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["md", "html"]), default="md", show_default=True,
              help="Markdown (CommonMark) or self-contained HTML pages.")
@click.option("--out", "out_dir", default="output/pages", show_default=True, type=click.Path(file_okay=False),
              help="Folder for the pages and the index.")
@click.option("--issues-url", metavar="URL",
              help="Where \"Report an issue\" opens a new issue (default: the analysed repository's "
                   "GitHub issues, prefilled with the message and the pinned source link).")
@debug_option
def render(records, fmt, out_dir, issues_url):
    """Write one page per record, in the shape of the published error pages, and an index.

    A page has the message, what it means, the source with the line, a link to the source pinned to
    the analysed commit, solutions, an example fix, when it happens and related errors (same
    operation family, then same file). Sections whose annotation is still missing are left out.
    Pages are named after the record's slug; existing files of the same name are replaced.

    \b
    Examples:
      burn-errors render output/records.jsonl
      burn-errors render output/records.jsonl --format html --out site/errors/
    """
    from .outputs import ensure_writable_dir, write_files
    from .sinks import page_html, page_markdown

    lines = _read_records(records)
    if not lines:
        raise UserError(f"{records} holds no records; nothing to render")
    out = Path(out_dir)
    ensure_writable_dir(out)
    sink = page_markdown if fmt == "md" else page_html
    pages = sink.render(lines, issues_url)
    write_files({out / name: text for name, text in pages.items()})
    annotated = sum(1 for ln in lines if ln.record.is_annotated())
    click.echo(f"Wrote {len(pages) - 1} pages ({annotated} annotated) and {out / ('index.' + fmt)}")
