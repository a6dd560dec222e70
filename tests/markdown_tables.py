"""The tables of a Markdown document as a renderer reads them (markdown-it, with GitHub's table
extension): for checking that what a command writes renders as the tables it means."""

from __future__ import annotations

from html.parser import HTMLParser


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def rendered_tables(markdown: str) -> list[list[list[str]]]:
    """Each table's rows (header first), each row's cell texts."""
    import markdown_it

    parser = _Tables()
    parser.feed(markdown_it.MarkdownIt("commonmark").enable("table").render(markdown))
    return parser.tables


def table_starts(markdown: str) -> int:
    """How many tables the text means: header lines followed by a delimiter row."""
    lines = markdown.splitlines()
    return sum(1 for a, b in zip(lines, lines[1:]) if a.startswith("|") and b.startswith("|---"))
