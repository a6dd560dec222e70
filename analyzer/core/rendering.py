"""The one jinja2 environment every page and report is rendered with (templates/*.j2).

`.html.j2` templates are autoescaped; Markdown templates escape each value with the filters of
analyzer/core/safe.py, chosen for its context (prose, table cell, code span, link target). Links go
through `url` (absolute http(s) only, else None: the template writes no link) or `page` (a page
this tool names itself, percent-encoded).
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from analyzer.core.safe import (
    https_url,
    md_autolink,
    md_cell,
    md_code_span,
    md_fence,
    md_inline,
    md_link_target,
    md_link_title,
    md_one_line,
    md_paragraphs,
)
from analyzer.core.wording import plural


def html_paragraphs(text: str) -> Markup:
    """Prose as HTML paragraphs, split on blank lines, each escaped."""
    paras = [p for p in re.split(r"\n\s*\n", str(text).strip()) if p.strip()]
    return Markup("\n".join(f"<p>{html.escape(p.strip())}</p>" for p in paras))


def page_href(name: str) -> str:
    """A link to a file or path this tool names itself (a page, `/api/errors/<id>`), percent-encoded."""
    return quote(str(name), safe="/")


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("analyzer", "templates"),
        autoescape=lambda name: name is not None and name.endswith(".html.j2"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(md=md_inline, md_line=md_one_line, md_paras=md_paragraphs,
                       md_code=lambda text: md_code_span(text, in_table=False), md_cell=md_cell,
                       md_cell_code=md_code_span, md_fence=md_fence, md_title=md_link_title, md_autolink=md_autolink,
                       md_target=md_link_target, html_paras=html_paragraphs, url=https_url, page=page_href,
                       plural=plural)
    return env
