"""Escaping for every output context, and the one policy for links.

Record fields come from files anyone can write (a records file, a fork's file names), so every
value a sink interpolates goes through one of these functions:

- `https_url`: the only way a URL becomes a link. Parsed with urllib.parse after removing what a
  browser removes (leading/trailing C0 controls and spaces, tabs and newlines anywhere), so
  `java\\tscript:` and `\\x01javascript:` are seen for what they are; only absolute `https:` and
  `http:` URLs with a host pass, anything else gives None (no link).
- `md_cell`, `md_code_span`, `md_link_target`: Markdown (GitHub flavour) in a table cell, an inline
  code span and a link destination.
- `terminal_text`, `rich_text`: text printed to a terminal, without control characters or escape
  sequences (and, for rich, without markup).
- `url_path`: a repository path percent-encoded for use inside a URL (RFC 3986).
- `md_unlinked`: what GitHub would turn into a mention, a reference or a link in Markdown text
  (`@octocat`, `#1`, `GH-1`, `www.`, `https://`) broken by an invisible character; `md_cell` and
  `md_inline` apply it, so every text cell and paragraph of every Markdown sink is covered.
- `visible`, `visible_values`: every document a person reads (Markdown, HTML, SARIF, tables)
  without control characters or bidirectional overrides (tab and newline kept), applied to a
  sink's whole output (analyzer/sinks/__init__.py), never field by field.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

# What the WHATWG URL parser strips before parsing: leading and trailing C0 controls and spaces,
# and ASCII tab and newline anywhere.
_C0_OR_SPACE = "".join(chr(c) for c in range(0x21))
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_UNSAFE_IN_URL = re.compile(r"[\x00-\x20\x7f-\x9f\s]")


def https_url(url: object) -> str | None:
    """`url` when it is an absolute http(s) URL with a host, else None. Control characters or
    whitespace left after the browser's own stripping refuse the URL rather than being guessed at."""
    if not isinstance(url, str):
        return None
    cleaned = _TAB_NEWLINE.sub("", url.strip(_C0_OR_SPACE))
    if not cleaned or _UNSAFE_IN_URL.search(cleaned):
        return None
    try:
        parts = urlsplit(cleaned)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("https", "http") or not parts.hostname:
        return None
    return cleaned


def url_path(path: str) -> str:
    """A repository path as a URL path: every character outside RFC 3986's unreserved set and `/`
    percent-encoded (UTF-8; bytes a file name held that are not UTF-8 come back as themselves; any
    other lone surrogate, which only a crafted records file holds, is written as its escape)."""
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = path.encode("utf-8", "backslashreplace")
    return quote(raw, safe="/")


# --- Markdown ---------------------------------------------------------------------------------

# Characters that start emphasis, code, links and images (`[`), HTML, table cells or strikethrough;
# `&` only where it would start an entity.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|~]|&(?=#?[A-Za-z0-9]+;))")
# `_` opens or closes emphasis only beside a non-alphanumeric character (`max_pool` is plain text).
_MD_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _one_line(text: object) -> str:
    """Whitespace runs (newlines included) as one space: a newline would end a table row, and a
    blank line would end a paragraph or code span. Control characters go too (a report printed to
    a terminal must not carry escape sequences)."""
    return terminal_text(text, one_line=True)


# What GitHub links in Markdown text that its writer did not link: a mention (`@name`, an email's
# `@` too), an issue or pull-request reference (`#12`, `owner/repo#12`, `GH-12`), an extended
# autolink (`www.`, `https://`). Escaping does not stop them (GitHub reads the rendered text).
_GITHUB_LINKS = re.compile(r"@(?=[A-Za-z0-9])|#(?=\d)|(?i:gh)-(?=\d)|(?i:www)\.|(?i:https?|ftp|mailto):(?=/)")
ZERO_WIDTH_SPACE = "&#8203;"


def md_unlinked(markdown: str) -> str:
    """Markdown text (already escaped) in which nothing GitHub would link on its own is linked: a
    zero-width space after the first character of each mention, reference or autolink start."""
    return _GITHUB_LINKS.sub(lambda m: m.group()[0] + ZERO_WIDTH_SPACE + m.group()[1:], markdown)


def md_cell(text: object) -> str:
    """Plain text inside a GitHub table cell (or any inline Markdown): one line, every character
    that Markdown or the table could read as syntax backslash-escaped, nothing linked (md_unlinked)."""
    return md_unlinked(_MD_EDGE_UNDERSCORE.sub(r"\\_", _MD_SPECIAL.sub(r"\\\1", _one_line(text))))


def md_code_span(text: object, in_table: bool = True) -> str:
    """An inline code span showing `text`: one line, a fence longer than any backtick run inside,
    and in a table `|` escaped (GitHub splits cells on it even inside code)."""
    s = _one_line(text)
    if in_table:
        s = s.replace("|", "\\|")
    runs = [len(m) for m in re.findall(r"`+", s)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s else ""
    return f"{fence}{pad}{s}{pad}{fence}"


# A link longer than this is shown as its text alone: no page the tool links is that long, and a
# records file could make one as long as the document.
MAX_LINK = 2048


def md_link_target(url: object) -> str | None:
    """A link destination for `[text](...)`: the URL if it passes `https_url`, with the characters
    that could end the destination or the cell (`()<>|` and spaces, quotes, backslash) percent-encoded.
    None when the URL is not a safe link (write the text without a link)."""
    good = https_url(url)
    if good is None or len(good) > MAX_LINK:
        return None
    return quote(good, safe="/:?#[]@!$&'*+,;=%-._~")


def md_link(label_markdown: str, url: object) -> str:
    """`[label](url)` when the URL is safe, else the label alone. `label_markdown` is already escaped."""
    target = md_link_target(url)
    return f"[{label_markdown}]({target})" if target else label_markdown


def md_autolink(url: object) -> str:
    """A URL as a CommonMark autolink `<https://...>`, exactly as written (no backslash escapes:
    inside a URL they would become part of it), when it passes `https_url`; characters an autolink
    cannot hold (space, `<`, `>`, quotes, backticks, controls) percent-encoded. Anything else is
    shown as code, never as a link."""
    good = https_url(url)
    if good is None:
        return md_code_span(" ".join(str(url).split()), in_table=False)
    encoded = "".join(f"%{ord(ch):02X}" if ch in "<> \"`" or ord(ch) < 0x20 or ord(ch) == 0x7F else ch
                      for ch in good)
    return f"<{encoded}>"


# --- Markdown prose ---------------------------------------------------------------------------
# Escaping that keeps the text exactly as given once rendered by a CommonMark reader.

_MD_ALWAYS = re.compile(r"([\\`*\[\]<>~|#])")
_MD_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_MD_BLOCK_START = re.compile(r"^(#{1,6}(?=\s|$)|[-+](?=\s|$)|=+\s*$|-+\s*$|(\d{1,9})([.)])(?=\s|$))")


def md_inline(text: str) -> str:
    """Escape text for a Markdown paragraph, heading or link text: punctuation that would start
    emphasis, code, links, HTML or entities, and line starts that would start a block."""
    out = []
    for raw in str(text).split("\n"):
        s = raw.strip()
        s = _MD_ALWAYS.sub(r"\\\1", s)
        s = _MD_EDGE_UNDERSCORE.sub(r"\\_", s)
        s = _MD_ENTITY.sub(r"\\&", s)
        m = _MD_BLOCK_START.match(s)
        if m:
            if m.group(2):  # "1." or "1)": escape the delimiter
                s = m.group(2) + "\\" + m.group(3) + s[m.end():]
            else:
                s = "\\" + s
        out.append(md_unlinked(s))
    return "\n".join(out)


def md_one_line(text: str) -> str:
    """A heading or list item: one line, whitespace runs as one space."""
    return md_inline(" ".join(str(text).split()))


def md_paragraphs(text: str) -> str:
    """Prose: paragraphs split on blank lines, each escaped; lines inside stay soft breaks."""
    paras = [p for p in re.split(r"\n\s*\n", str(text).strip()) if p.strip()]
    return "\n\n".join(md_inline(p) for p in paras)


def md_fence(text: str, info: str = "") -> str:
    """A fenced code block holding `text` verbatim, with a fence longer than any backtick run in it."""
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def md_link_title(text: str) -> str:
    """A link title `"..."` on one line (a blank line inside would end the link)."""
    return '"' + _one_line(text).replace("\\", "\\\\").replace('"', '\\"') + '"'

# --- Terminal ---------------------------------------------------------------------------------

# ESC sequences: CSI (ESC [ ... final), OSC/DCS/SOS/PM/APC strings (ended by BEL or ST), and the
# two-character forms; the 8-bit CSI/OSC introducers are C1 characters and go with them.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x90\x9d\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x9c|\x1b\\)?")
# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides that reorder
# what the reader sees.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: object, one_line: bool = False) -> str:
    """`text` safe to print on a terminal: escape sequences and control characters removed (tab and
    newline kept, or with `one_line` turned into spaces)."""
    s = _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", str(text)))
    return " ".join(s.split()) if one_line else s


_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """A document a person reads, without control characters (tab and newline kept) or the
    bidirectional marks and overrides that reorder what is shown against what is there."""
    return _INVISIBLE.sub("", text)


def visible_values(value: object) -> object:
    """`visible` on every string of a JSON-shaped value (keys too), for documents such as SARIF
    whose texts are shown to a person: the JSON text itself would only escape them."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible(k) if isinstance(k, str) else k: visible_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [visible_values(v) for v in value]
    return value


def rich_text(text: object, one_line: bool = True) -> str:
    """`terminal_text` with rich's markup escaped, for rich tables and consoles."""
    from rich.markup import escape

    return escape(terminal_text(text, one_line=one_line))


# What a JSON document may hold raw that a terminal acts on or that reorders what is shown: C1
# controls (an 8-bit CSI among them), DEL and the bidirectional marks and overrides. JSON escapes
# C0 controls itself; outside its strings a document is ASCII, so each of these is in a string
# and its \u escape is the same JSON value.
_JSON_TERMINAL = re.compile(r"[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_json(text: str) -> str:
    """A JSON document safe on a terminal and equal to `text` as JSON."""
    return _JSON_TERMINAL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def terminal_document(text: str, is_json: bool) -> str:
    """A whole document (any --format) as it may be shown on a terminal: JSON with the
    characters above as escapes, any other format through `terminal_text`."""
    return terminal_json(text) if is_json else terminal_text(text)
