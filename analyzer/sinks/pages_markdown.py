"""Error pages as Markdown (CommonMark): `<slug>.md` per record and `index.md`.

The values are escaped so that a CommonMark reader shows the text exactly as in the record (see
`analyzer.core.safe`); code is put in fences longer than any backtick run it holds.
"""

from __future__ import annotations

from analyzer.features.pages import render_all
from analyzer.records.model import RecordLine
from analyzer.sinks import Options

EXT = "md"


def render(lines: list[RecordLine], options: Options) -> dict[str, str]:
    """{file name: Markdown text} for every record's page and the index."""
    return render_all(lines, EXT, options.issues_url)
