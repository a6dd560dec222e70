"""Pages: one page per record, in the shape of the published pages, and an index.

This module holds what the Markdown and HTML sinks share: which records are related to which,
page names, and the values a page template sees. The templates are `templates/page.{md,html}.j2`
and `templates/page_index.{md,html}.j2`, rendered with the environment of `sinks/environment.py`.

Related errors
--------------
A page lists up to `RELATED_LIMIT` messages of other records, the closest operations first:

1. the same *operation family*: records whose `analysis.operation` has the same family key
   (`family_key`: the last `::` segment, lower-cased, without a tensor-kind prefix `float_`,
   `int_`, `bool_`, `q_`, without a variant prefix `deform_` or `adaptive_`, without suffixes
   such as `_backward`, `_grad`, `_with_indices`, and without a dimension suffix `1d`/`2d`/`3d`,
   so `deform_conv2d_backward`, `conv1d` and `conv3d` are all `conv`, `adaptive_avg_pool2d` is
   `avg_pool`, `float_cumsum` is `cumsum`) *and* the same scope (`family_scope`): an operation
   that the message names (`conv3d: unsupported dtype`) or that implements a backend operation
   trait (`impl ModuleOps<..> for ..`) is the same operation in every crate (every backend); any
   other function name (`forward`, `from`, `new`) only groups records of one crate. Same crate
   first, then same file, then by file and line;
2. the same file, nearest line first
(the published pages' rule: other records of the same operation family or file).

A message equal to the page's own message, or already listed, is not listed again: the list
shows messages, and the same text twice says nothing new.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from analyzer.features.annotate import AI_TAG
from analyzer.core.errors import UserError
from analyzer.profiles import current
from analyzer.records.model import RecordLine
from analyzer.records.operation import STD_PREFIX
from analyzer.core.rendering import environment

RELATED_LIMIT = 5

_KIND_PREFIX = re.compile(r"^(?:float|int|bool|q)_(?=[a-z])")
# Prefixes that name a variant of an operation, not another operation: a deformable convolution
# is a convolution, an adaptive pooling a pooling.
_VARIANT_PREFIX = re.compile(r"^(?:deform|adaptive)_(?=[a-z])")
_SUFFIXES = ("_backward", "_forward", "_grad", "_with_indices", "_inplace", "_elem", "_ref", "_async", "_impl")
_DIM_SUFFIX = re.compile(r"_?[1-9]d$")


def family_key(operation: str) -> str:
    """`deform_conv2d_backward` -> `conv`, `adaptive_avg_pool2d` -> `avg_pool`, `float_cumsum` ->
    `cumsum`, `burn_flex::layer_norm` -> `layer_norm`. Never empty: a name that would strip to
    nothing stays as it was."""
    name = operation.rsplit("::", 1)[-1].lower()
    key = _VARIANT_PREFIX.sub("", _KIND_PREFIX.sub("", name))
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            if key.endswith(suffix) and len(key) > len(suffix):
                key = key[: -len(suffix)]
                changed = True
        stripped = _DIM_SUFFIX.sub("", key)
        if stripped and stripped != key:
            key, changed = stripped, True
    return key.strip("_") or name


def names_operation(line: RecordLine) -> bool:
    """True when the message itself names the operation (`conv3d: unsupported dtype {:?}`)."""
    message = STD_PREFIX.sub("", line.record.errorMessage)
    op = line.facts.operation
    return bool(op) and re.match(re.escape(op) + r"\s*:", message) is not None


def family_scope(line: RecordLine) -> str:
    """"" (every crate) for an operation the message names or a backend-operation trait method;
    else the crate, so that common function names do not tie unrelated crates together."""
    if names_operation(line) or current().ops_impl.match(line.facts.impl or ""):
        return ""
    return line.facts.crate


def family(line: RecordLine) -> tuple[str, str]:
    return family_key(line.facts.operation), family_scope(line)


def related(line: RecordLine, lines: list[RecordLine], limit: int = RELATED_LIMIT,
            families: dict[str, tuple[str, str]] | None = None) -> list[RecordLine]:
    """Other records of the same operation family, then of the same file (see the module doc).
    `families` ({id: family}) saves recomputing them for every page."""
    me, crate = line.record, line.facts.crate
    fam = families or {}

    def family_of(o: RecordLine) -> tuple[str, str]:
        return fam[o.record.id] if o.record.id in fam else family(o)

    def nearest(o: RecordLine) -> tuple:
        return (o.record.filePath != me.filePath, o.record.filePath,
                abs(o.record.lineNumber - me.lineNumber), o.record.lineNumber)

    mine = family_of(line)
    others = [o for o in lines if o.record.id != me.id]
    same_family = sorted((o for o in others if family_of(o) == mine),
                         key=lambda o: (o.facts.crate != crate, o.record.filePath != me.filePath,
                                        o.record.filePath, o.record.lineNumber))
    same_file = sorted((o for o in others if o.record.filePath == me.filePath), key=nearest)
    out: list[RecordLine] = []
    seen = {me.errorMessage}
    for o in same_family + same_file:
        if o.record.errorMessage in seen:
            continue
        seen.add(o.record.errorMessage)
        out.append(o)
        if len(out) == limit:
            break
    return out


# A page name longer than this is not a slug extract writes (message cut to 50, plus the id): the
# record's page is named after its id instead, well within file-name limits.
MAX_STEM = 100
RESERVED_STEMS = frozenset({"index"})  # index.md / index.html is the index
# What render writes: pages, their records beside them, the index.
_PAGE_FILE = re.compile(r"([a-z0-9][a-z0-9-]*)\.(md|html|json)")
INDEX_HEADING = "Errors users can hit"  # the heading of both indexes


def is_pages_folder(folder: Path) -> bool:
    """Whether `folder` holds pages render wrote, and nothing else: an index of render's, and
    only pages each with its record beside it (`<page>.md` or `.html` and `<page>.json`)."""
    try:
        entries = {p.name: p for p in folder.iterdir()}
        index = next((entries[n] for n in ("index.md", "index.html") if n in entries), None)
        if index is None or not index.is_file() or INDEX_HEADING not in index.read_text(encoding="utf-8"):
            return False
        stems: dict[str, set[str]] = {}
        for name, path in entries.items():
            m = _PAGE_FILE.fullmatch(name)
            if m is None or not path.is_file():
                return False
            stems.setdefault(m.group(1), set()).add(m.group(2))
    except (OSError, UnicodeDecodeError):
        return False
    return all(stem == "index" or ("json" in kinds and len(kinds) == 2) for stem, kinds in stems.items())


def page_names(lines: list[RecordLine]) -> dict[str, str]:
    """File stem of each record's page, one distinct stem per record: its slug without a leading
    `-` (a file name a shell would read as an option); the id when the slug is not plain
    `[a-z0-9-]`, longer than MAX_STEM, or `index`; the slug and the full id when several records
    would share a stem, or when a slug is another record's id. Records sharing an id are refused
    (their pages could not be told apart), and so is any clash left (a slug spelling out another
    record's `<slug>-<id>`)."""
    ids: dict[str, int] = {}
    for ln in lines:
        ids[ln.record.id] = ids.get(ln.record.id, 0) + 1
    dupes = sorted(i for i, n in ids.items() if n > 1)
    if dupes:
        raise UserError(f"record id {dupes[0]} appears {ids[dupes[0]]} times"
                        + (f" (and {len(dupes) - 1} more ids repeat)" if len(dupes) > 1 else "")
                        + "; each record needs its own page: run `burn-errors validate` on the records file")
    stems = {}
    for ln in lines:
        slug = ln.record.slug.lstrip("-")
        plain = re.fullmatch(r"[a-z0-9-]+", slug) is not None and len(slug) <= MAX_STEM
        stems[ln.record.id] = slug if plain and slug not in RESERVED_STEMS else ln.record.id
    count: dict[str, int] = {}
    for stem in stems.values():
        count[stem] = count.get(stem, 0) + 1
    names = {rid: stem if count[stem] == 1 and (stem == rid or stem not in ids) else f"{stem}-{rid}"
             for rid, stem in stems.items()}
    owners: dict[str, str] = {}
    for rid, name in names.items():
        if name in owners:
            raise UserError(f"records {owners[name]} and {rid} would both be written as the page {name}; "
                            f"give one of them another slug")
        owners[name] = rid
    return names


def issue_url(line: RecordLine, base: str | None = None) -> str:
    """A new-issue link prefilled with the message, the source location and the record's address.
    `base` defaults to the analysed repository's new-issue page on the target's host."""
    r = line.record
    base = base or current().link("new_issue", repo=r.repo)
    title = f"Panic: {r.errorMessage[:120]}"
    body = f"Panic thrown at {r.filePath}:{r.lineNumber}, {r.githubUrl}\n\nRecord id: {r.id}"
    return f"{base}{'&' if '?' in base else '?'}title={quote(title, safe='/:@')}&body={quote(body, safe='/:@')}"


@dataclass
class RelatedItem:
    message: str
    href: str
    where: str


def page_context(line: RecordLine, lines: list[RecordLine], names: dict[str, str], ext: str,
                 issues_url: str | None = None, families: dict[str, tuple[str, str]] | None = None) -> dict:
    """Everything a page template sees. Annotation values are None when not annotated yet (the
    templates leave their sections out); lists and strings are never empty placeholders."""
    r, a = line.record, line.facts
    example = [(k, getattr(r, k)) for k in ("exampleFix", "validationCode", "typeGuard", "tryCatchPattern")]
    src_lines = r.sourceCode.split("\n")
    return {
        "repo": r.repo,
        "id": r.id,
        "message": r.errorMessage,
        "heading": display_message(r.errorMessage),
        "documentation": _text(r.documentation),
        "file_path": r.filePath,
        "line_number": r.lineNumber,
        "source_code": r.sourceCode,
        "source_lines": [(r.sourceCodeStart + i, text) for i, text in enumerate(src_lines)],
        "github_url": r.githubUrl,
        "sha": r.analyzedSha,
        "short_sha": r.analyzedSha[:10],
        "date": r.analyzedAt[:10],
        "solutions": [s for s in (r.solutions or []) if s.strip()],
        "example_blocks": [(k, v) for k, v in example if _text(v)],
        "trigger": _text(r.triggerScenarios),
        "situations": _text(r.commonSituations),
        "related": [RelatedItem(display_message(o.record.errorMessage), f"{names[o.record.id]}.{ext}",
                                f"{o.facts.crate} · {o.record.filePath}:{o.record.lineNumber}")
                    for o in related(line, lines, families=families)],
        "annotated": r.is_annotated(),
        "ai_assisted": r.is_annotated() and AI_TAG in r.tags,
        "json_href": f"{names[r.id]}.json",
        "issue_url": issue_url(line, issues_url),
        "category": a.category,
        "crate": a.crate,
        "met_first": met_first(line, {ln.record.id: ln for ln in lines} if a.reach == "preempted" else {}, names, ext),
    }


# Why a preempted record's refusal is never the first a user meets, as a page says it.
_MET_FIRST = {
    "creation": "the backend cannot create a tensor of this dtype or kind at all; a user meets its creation "
                "refusal first",
    "forward": "the forward operation refuses the same choice first, so the backward pass never runs with it",
    "nested-autodiff": "only an autodiff backend nested in another reaches it, and the API refuses to nest "
                       "autodiff first",
    "overridden": "every backend overrides this default method, so no backend a user picks runs it",
    "caller": "no caller passes the refused values: each refuses them first or never has them",
    "exhaustive": "every value that exists today is handled before this catch-all",
}


@dataclass
class MetFirst:
    why: str
    text: str
    message: str = ""  # the earlier refusal's message, its page and place ("" when there is none)
    href: str = ""
    where: str = ""


def met_first(line: RecordLine, by_id: dict[str, RecordLine], names: dict[str, str], ext: str) -> list[MetFirst]:
    """What a preempted record's page says a user meets first: each reason once, with the
    earlier refusals it names (their pages); empty for a reachable record."""
    a = line.facts
    if a.reach != "preempted":
        return []
    out: list[MetFirst] = []
    said: set[str] = set()
    for p in a.preemptedBy:
        earlier = by_id.get(p.id) if p.id else None
        if earlier is not None:
            out.append(MetFirst(p.why, _MET_FIRST[p.why], display_message(earlier.record.errorMessage),
                                f"{names[earlier.record.id]}.{ext}" if earlier.record.id in names else "",
                                f"{earlier.facts.crate} · {earlier.record.filePath}:{earlier.record.lineNumber}"))
        elif p.why not in said:
            out.append(MetFirst(p.why, _MET_FIRST[p.why]))
        said.add(p.why)
    return out


def index_context(lines: list[RecordLine], names: dict[str, str], ext: str) -> dict:
    """The index: every page, grouped by crate, in records order (file, then line); paths are
    shown inside the crate's folder."""
    groups: dict[str, list[dict]] = {}
    for ln in lines:
        r, a = ln.record, ln.facts
        groups.setdefault(a.crate, []).append({
            "message": display_message(r.errorMessage), "href": f"{names[r.id]}.{ext}",
            "file_path": _in_crate(r.filePath, a.crate),
            "line_number": r.lineNumber, "category": a.category, "annotated": r.is_annotated()})
    revisions = sorted({(ln.record.repo, ln.record.analyzedSha[:10]) for ln in lines})
    return {
        "revisions": [f"{repo}@{sha}" for repo, sha in revisions],
        "title_repo": revisions[0][0] if len({repo for repo, _ in revisions}) == 1 else "burn-errors",
        "total": len(lines),
        "annotated": sum(1 for ln in lines if ln.record.is_annotated()),
        "groups": sorted(groups.items()),
    }


def _in_crate(path: str, crate: str) -> str:
    """The path inside the crate's folder (the index groups by crate), else the whole path."""
    marker = f"/{crate}/" if crate else ""
    if marker and marker in "/" + path:
        return ("/" + path).split(marker, 1)[1]
    return path


def display_message(message: str) -> str:
    """The message as a heading or link text: `panic!("")` prints nothing, which shows as nothing."""
    return message if message.strip() else "(empty panic message)"


def _text(value: str | None) -> str | None:
    return value if value is not None and value.strip() else None


def render_all(lines: list[RecordLine], ext: str, issues_url: str | None = None) -> dict[str, str]:
    """{file name: text} for every record's page, `index.<ext>`, and beside each page
    `<page>.json`: its record as one records.jsonl line (the page's "Data as JSON" link, which
    `validate`, `lookup` and `diff` read as a records file)."""
    env = environment()
    page = env.get_template(f"page.{ext}.j2")
    index = env.get_template(f"page_index.{ext}.j2")
    names = page_names(lines)
    families = {ln.record.id: family(ln) for ln in lines}
    files = {f"{names[ln.record.id]}.{ext}": page.render(page_context(ln, lines, names, ext, issues_url, families))
             for ln in lines}
    files.update((f"{names[ln.record.id]}.json", ln.to_json_line() + "\n") for ln in lines)
    files[f"index.{ext}"] = index.render(index_context(lines, names, ext))
    return files
