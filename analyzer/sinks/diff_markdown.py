"""`burn-errors diff --format markdown`: a pull-request comment, rendered from
templates/diff.md.j2.

The first line is an HTML comment marker (`<!-- burn-errors:diff -->`) so a workflow can find and
update its earlier comment instead of adding a new one; then one summary line, then a table per
kind. Links are pinned: removed sites link to the base revision, added, changed and moved sites to
the head revision. Long tables are cut at MAX_ROWS rows, and shorter when the comment would pass
GitHub's limit of 65,536 characters; the JSON format always has everything.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from analyzer import __version__
from analyzer.features.diff import DiffResult
from analyzer.profiles import current
from analyzer.core.errors import UserError
from analyzer.records.model import RecordLine, reach_content
from analyzer.core.safe import md_cell, md_code_span, md_link
from analyzer.core.wording import plural
from analyzer.core.rendering import environment
from analyzer.sinks import Options

MARKER = "<!-- burn-errors:diff -->"
MAX_ROWS = 50
# GitHub refuses a comment longer than 65,536 characters; tables are cut shorter until it fits.
MAX_CHARS = 65_000
MAX_MESSAGE = 120
# No cell holds more than this many characters of text (a 70,000-character function name would
# pass GitHub's limit in one row): with rows cut to one, the comment is bounded whatever it holds.
MAX_CELL = 200



def _flat(text: object) -> str:
    return " ".join(str(text).split())


def _cut(s: str, limit: int) -> str:
    return s[:limit - 1].rstrip() + "…" if len(s) > limit else s


def code(text: object, limit: int | None = None) -> str:
    """An inline code span safe in a table cell, cut to `limit` characters (at most MAX_CELL)."""
    return md_code_span(_cut(_flat(text), min(limit or MAX_CELL, MAX_CELL)))


def text(value: object) -> str:
    """Plain text in a table cell, with Markdown's special characters escaped, cut to MAX_CELL
    characters."""
    return md_cell(_cut(_flat(value), MAX_CELL))


def dtypes(values: list[str], limit: int = 8) -> str:
    if not values:
        return ""
    shown = ", ".join(values[:limit])
    return shown + (f" +{len(values) - limit} more" if len(values) > limit else "")


def message(line: RecordLine, limit: int = MAX_MESSAGE) -> str:
    """The panic message as a code span; a message with nothing to show (`panic!("")`) is said so
    in words, in italics so it cannot be taken for the text itself."""
    text_ = line.record.errorMessage
    return code(text_, limit) if text_.strip() else "*(empty panic message)*"


def rejects(line: RecordLine) -> str:
    """What the site panics for: its rejected dtypes or variants, else its arm pattern."""
    a = line.facts
    if a.rejected:
        return text(dtypes(list(a.rejected)))
    return code(a.pattern, 60)


def location(line: RecordLine) -> str:
    r = line.record
    return md_link(code(f"{r.filePath}:{r.lineNumber}"), r.pinned_url)


def where(line: RecordLine) -> str:
    """crate · function (or the macro_rules! the arm is written in)."""
    a = line.facts
    inside = a.function or a.inMacro
    return text(a.crate) + (" · " + code(inside) if inside else "")


def unread_reason(entry: dict) -> str:
    """Why a head file was not read whole: skipped, or read in part, and the reason."""
    return text(("skipped: " if entry["whole"] else "read in part: ") + entry["reason"])


def more(items: list, limit: int, artifacts_url: str | None = None) -> str:
    """The note under a table cut at `limit` rows (empty when nothing was cut): where the rest is,
    the workflow's artifact when there is one (a reader of a pull request cannot run the tool)."""
    if len(items) <= limit:
        return ""
    if artifacts_url:
        return f"\n…and {len(items) - limit} more; the [full JSON and SARIF]({artifacts_url}) list them all.\n"
    return f"\n…and {len(items) - limit} more; `burn-errors diff --format json` lists them all.\n"


# Characters left as they are in a link to the artifacts: RFC 3986's unreserved and reserved ones
# but for those that end or break a markdown link destination (`(`, `)`, `[`, `]`); the rest
# (spaces, `<`, `>`, quotes, backticks...) is percent-encoded.
_URL_SAFE = "-._~:/?#@!$&'*+,;=%"


def checked_url(url: str, option: str) -> str:
    """An https URL, percent-encoded where markdown would read it otherwise; anything else is a
    UserError naming `option`."""
    if any(ord(ch) < 0x20 or ch.isspace() or ord(ch) == 0x7F for ch in url):
        raise UserError(f"{option} must be one URL without spaces or control characters")
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.netloc:
        raise UserError(f"{option} must be an https:// URL, got {url[:80]!r}")
    return quote(url, safe=_URL_SAFE)


def contrast(before: str, after: str, limit: int) -> tuple[str, str]:
    """Two long texts cut so the part that differs shows: past a long common prefix, both start
    with `…` a little before the first difference."""
    a, b = _flat(before), _flat(after)
    if len(a) <= limit and len(b) <= limit:
        return a, b
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    start = max(0, common - 8)
    if start:
        a, b = "…" + a[start:], "…" + b[start:]
    return a, b


def delta(values_base: list[str], values_head: list[str]) -> str:
    gone = [v for v in values_base if v not in values_head]
    new = [v for v in values_head if v not in values_base]
    parts = [f"+{v}" for v in new] + [f"−{v}" for v in gone]
    return text(dtypes(parts))


def what_changed(c) -> str:
    b, h = c.base, c.head
    out = []
    for f in c.fields:
        if f == "message":
            x, y = contrast(b.record.errorMessage, h.record.errorMessage, 60)
            before = code(x, 60) if x.strip() else message(b)
            after = code(y, 60) if y.strip() else message(h)
            out.append(f"message {before} → {after}")
        elif f == "category":
            out.append(f"category {b.facts.category} → {h.facts.category}")
        elif f == "pattern":
            x, y = contrast(b.facts.pattern, h.facts.pattern, 40)
            out.append(f"arm {code(x, 40)} → {code(y, 40)}")
        elif f == "rejected":
            out.append(f"panics for {delta(list(b.facts.rejected), list(h.facts.rejected))}")
        elif f == "handled":
            out.append(f"handles {delta(list(b.facts.handled), list(h.facts.handled))}")
        elif f == "scrutinee":
            x, y = contrast(b.facts.scrutinee, h.facts.scrutinee, 40)
            out.append(f"match on {code(x, 40)} → {code(y, 40)}")
        elif f == "macro":
            out.append(f"{b.facts.macro}! → {h.facts.macro}!")
        elif f == "reach":
            out.append(f"reach {text(reach_content(b.facts.reach, b.facts.preemptedBy))} → "
                       f"{text(reach_content(h.facts.reach, h.facts.preemptedBy))}")
        elif f == "file":
            out.append(f"moved from {location(b)}")
        elif f == "line" and "file" not in c.fields:
            out.append(f"line {b.record.lineNumber} → {h.record.lineNumber}")
    return "; ".join(out)


def reach(line: RecordLine) -> str:
    """A record's verdict in a table cell: `reachable`, or `preempted (forward)` with its reasons."""
    return text(reach_content(line.facts.reach, line.facts.preemptedBy) or "not known")


def commit_link(repo: str | None, sha: str | None, label: str) -> str:
    if repo and sha:
        return md_link(code(sha[:12]), current().link("commit", repo=repo, sha=sha))
    return code(label)


def claims_line(result: DiffResult) -> str:
    return (f"{plural(len(result.new_contradictions), 'claim contradiction')} new, "
            f"{len(result.fixed_contradictions)} fixed")


def summary_line(result: DiffResult) -> str:
    n = result.counts()
    main = [f"{n[k]} {k}" for k in ("added", "removed", "changed") if n[k]]
    rest = []
    if n["moved"]:
        rest.append(f"{n['moved']} moved")
    if n["flipped"]:
        rest.append(f"{plural(n['flipped'], 'coverage cell')} flipped")
    if result.new_contradictions or result.fixed_contradictions:
        rest.append(claims_line(result))
    if not main:
        head = "no panic site added, removed or changed"
    else:
        head = ", ".join(main) + f" panic site{'s' if sum(n[k] for k in ('added', 'removed', 'changed')) != 1 else ''}"
    if result.unread:
        head = f"{plural(len(result.unread), 'file')} of the head revision not read whole; " + head
    return head + (f" ({', '.join(rest)})" if rest else "")


environment().filters.update(code=code, text=text, location=location, where=where, rejects=rejects, message=message,
                    what_changed=what_changed, dtypes=dtypes, more=more, unread_reason=unread_reason,
                    reach=reach)


def flip_rows(result: DiffResult) -> list[dict]:
    """Flipped cells grouped per backend, operation and before/after status, so an operation that
    enters or leaves the matrix is one row, not one per dtype. Rows that now panic come first."""
    groups: dict[tuple, list] = {}
    for f in result.flipped:
        groups.setdefault((f.crate, f.operation, f.base, f.head), []).append(f)
    rows = [{"crate": c, "operation": o, "base": b or "—", "head": h or "—", "worse": fs[0].worse,
             "dtypes": [f.dtype for f in fs]} for (c, o, b, h), fs in groups.items()]
    return sorted(rows, key=lambda r: (not r["worse"], r["crate"], r["operation"], r["base"], r["head"]))


def header(result: DiffResult) -> str:
    """The line under the title: repository, the two pinned commits, record counts, compare link."""
    parts = []
    if result.repo:
        parts.append(code(result.repo) + " ")
    parts.append(f"{commit_link(result.repo, result.base.sha, result.base.label)} → "
                 f"{commit_link(result.repo, result.head.sha, result.head.label)}")
    parts.append(f" · {result.base.records} → {plural(result.head.records, 'record')}")
    if result.repo and result.base.sha and result.head.sha and result.base.sha != result.head.sha:
        parts.append(" · " + md_link("compare", current().link("compare", repo=result.repo, base=result.base.sha,
                                                                  head=result.head.sha)))
    for dep in result.dependencies:  # --with-dependencies: what each side's Cargo.lock pins
        name = dep["repo"].rsplit("/", 1)[-1]
        parts.append(f" · {code(name)} {_pin(dep['repo'], dep['base'])} → {_pin(dep['repo'], dep['head'])}")
    return "".join(parts)


def _pin(repo: str, side: dict | None) -> str:
    """One side's pin of a dependency: a registry version and its tag, or the commit."""
    if side is None:
        return "not pinned"
    by = side["pinnedBy"]
    label = f"{by['version']} ({by['tag']})" if by["kind"] == "registry" else side["sha"][:8]
    return md_link(code(label), current().link("commit", repo=repo, sha=side["sha"]))


def render(result: DiffResult, options: Options) -> str:
    """The comment; `options.artifacts_url` (already checked with `checked_url`) links the full JSON
    and SARIF, e.g. a workflow run's artifact."""
    fail_on, artifacts_url = list(options.fail_on), options.artifacts_url
    template = environment().get_template("diff.md.j2")
    flips = flip_rows(result)
    rows = MAX_ROWS
    while True:
        out = template.render(marker=MARKER, version=__version__, r=result, summary=summary_line(result),
                              header=header(result), max_rows=rows, max_message=MAX_MESSAGE, flips=flips,
                              claims=[("**new**", c) for c in result.new_contradictions]
                              + [("fixed", c) for c in result.fixed_contradictions],
                              failed=result.failed(fail_on), failed_text=_failed_text(result, fail_on),
                              fail_on=fail_on, artifacts_url=artifacts_url)
        if len(out) <= MAX_CHARS or rows <= 1:
            return out
        rows //= 2


def _failed_text(result: DiffResult, fail_on: list[str]) -> str:
    n = result.counts()
    met = result.failed(fail_on)
    kinds = [k for k in met if k != "unread"]
    parts = [f"{n[k]} {k}" for k in kinds]
    words = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1] if parts else ""
    if words:
        total = sum(n[k] for k in kinds)
        words += f" panic site{'s' if total != 1 else ''}"
    if "unread" in met:
        unread = f"{plural(len(result.unread), 'file')} not read whole"
        words = f"{words} and {unread}" if words else unread
    return words

