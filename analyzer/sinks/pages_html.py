"""Error pages as self-contained HTML: `<slug>.html` per record and `index.html`.

Each file carries its own style (light and dark), no script and nothing fetched from elsewhere;
every value is HTML-escaped by jinja2's autoescape; an external link is written only when its URL
passes `analyzer.core.safe.https_url` (else the text stands without a link), and links to other pages
are percent-encoded.
"""

from __future__ import annotations

from analyzer.features.pages import render_all
from analyzer.records.model import RecordLine
from analyzer.sinks import Options

EXT = "html"


def render(lines: list[RecordLine], options: Options) -> dict[str, str]:
    """{file name: HTML text} for every record's page and the index."""
    return render_all(lines, EXT, options.issues_url)
