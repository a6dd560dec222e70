"""What `validate` checks: each record against the schema and as a whole, and the file's records
against each other.

A document is one JSON value: a line of a records file, or one envelope file of an exported
folder. For each document, in order:

1. it is JSON the other commands can read back and write again: no nesting deeper than Python's
   parser goes, no integer longer than Python reads by default, no NaN or Infinity, no key twice
   in one object, and no text that cannot be written as UTF-8 (a lone surrogate such as
   `"\\ud800"`), in any key or value;
2. it has the schema (the pydantic models of `analyzer/records/model.py`): a records line
   `{"record", "analysis"}` or a published envelope `{"record", "datasetVersion"}` (an
   `analysis` beside it is checked too);
3. the record agrees with itself (`record_problems`): the source window, the slug, the GitHub
   link, the message pattern, the background tag against the analysis, the dates, the file path.
   On a document the schema refused, the checks that read only fields it accepted still run
   (`partial_record_problems`), so one round lists every problem.

Across documents, an id or a slug found twice is reported on every document that has it, the
first of them listing every place.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pydantic import ValidationError

from analyzer.decisions.categories import BACKGROUND_TAG
from analyzer.core.config import WINDOW_RADIUS
from analyzer.records.model import Analysis, Envelope, ErrorRecord, RecordLine, github_url, slug

SLUG_CUT = 50


@dataclass(frozen=True)
class Document:
    """One JSON value to check and where it was read: a file and a line (1 for a whole file)."""

    path: str
    line: int
    text: str = field(compare=False, repr=False)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Report:
    """The problems found, each as (document, message), how many documents passed, and the
    records of the documents that have the schema, in document order."""

    problems: list[tuple[Document, str]] = field(default_factory=list)
    good: int = 0
    checked: int = 0
    records: list[ErrorRecord] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One `path:line: message` per problem, in document order, with every character a
        terminal would act on (controls, separators, lone surrogates) written as an escape."""
        return [_visible(f"{doc.where}: {message}") for doc, message in self.problems]


def _visible(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for c in text)


class _BadDocument(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# 1. JSON the other commands can read and write


def nesting_depth(text: str) -> int:
    """How deep arrays and objects nest in a JSON text, brackets inside strings left out; one
    linear scan, so a hostile depth costs no recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _no_constants(name: str):
    raise _BadDocument(f"not JSON ({name} is not a JSON number)")


def _object_without_twice_keys(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _BadDocument(f"key {json.dumps(key)} appears twice in one object")
            seen.add(key)
    return obj


def load_json(text: str) -> object:
    """The JSON value of a document, or _BadDocument saying in one line why it cannot be read."""
    try:
        return json.loads(text, parse_constant=_no_constants, object_pairs_hook=_object_without_twice_keys)
    except json.JSONDecodeError as e:
        raise _BadDocument(f"not JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        # The parser stops near Python's recursion limit; a record nests 3 levels deep.
        raise _BadDocument(f"JSON nested {nesting_depth(text)} levels deep, too deep to read") from None
    except ValueError as e:
        # Python refuses to read integers of more than 4300 digits (a guard against slow parsing).
        raise _BadDocument(f"a number too long to read ({str(e).split(';')[0]})") from None


def unwritable_strings(value: object) -> list[str]:
    """Every key or string in a JSON value that cannot be encoded as UTF-8 (a lone surrogate
    decoded from `\\ud800`), as `path: why`. Walked with a stack, not recursion."""
    found: list[str] = []
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            for key, sub in reversed(list(item.items())):
                where = f"{path}.{key}" if path else str(key)
                if _unwritable(key):
                    found.append(f"{where}: key {_describe(key)}")
                stack.append((where, sub))
        elif isinstance(item, list):
            for i in range(len(item) - 1, -1, -1):
                stack.append((f"{path}.{i}" if path else str(i), item[i]))
        elif isinstance(item, str) and _unwritable(item):
            found.append(f"{path}: {_describe(item)}")
    return found


def _unwritable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def _describe(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return (f"text that cannot be written as UTF-8 (lone surrogate \\u{ord(text[e.start]):04x} "
                f"at character {e.start + 1})")
    return "text"


# ---------------------------------------------------------------------------------------------
# 2. The schema


def parse_document(value: object) -> tuple[ErrorRecord, Analysis | None]:
    """The record (and its analysis, when the document has one) of a records line or an
    envelope; a pydantic ValidationError when the document does not have the schema."""
    if isinstance(value, dict) and "datasetVersion" in value:
        envelope = Envelope.model_validate({k: v for k, v in value.items() if k != "analysis"})
        raw_analysis = value.get("analysis")
        analysis = Analysis.model_validate(raw_analysis) if raw_analysis is not None else None
        return envelope.record, analysis
    line = RecordLine.model_validate(value)
    return line.record, line.analysis


def _schema_problems(error: ValidationError) -> list[str]:
    """Every field the schema refuses, each once: the first error inside a field (an item of a
    list, say) stands for the rest of that field's, which are counted."""
    by_field: dict[tuple, list] = {}
    for item in error.errors():
        by_field.setdefault(tuple(item["loc"][:2]), []).append(item)
    problems = []
    for key, items in by_field.items():
        first = items[0]
        where = ".".join(str(p) for p in first["loc"])
        text = f"{where}: {first['msg']}" if where else f"not an object holding a record: {first['msg']}"
        if len(items) > 1:
            text += f" (and {len(items) - 1} more in {'.'.join(str(p) for p in key)})"
        problems.append(text)
    return problems


# ---------------------------------------------------------------------------------------------
# 3. The record as a whole


def record_problems(record: ErrorRecord, analysis: Analysis | None) -> list[str]:
    """What in a record that has the schema contradicts the rest of it, as `field: why`."""
    return [p for check, _ in _CHECKS for p in check(record, analysis)]


def _window_problems(r: ErrorRecord) -> list[str]:
    """`sourceCode` is lines lineNumber-18..lineNumber+18, cut at the file's ends."""
    start, end, line = r.sourceCodeStart, r.sourceCodeEnd, r.lineNumber
    if end < start:
        return [f"record.sourceCodeEnd: {end} is before sourceCodeStart {start}"]
    problems = []
    lines = r.sourceCode.count("\n") + 1
    if lines != end - start + 1:
        problems.append(f"record.sourceCode: has {lines} lines, the window {start}-{end} has {end - start + 1}")
    if not start <= line <= end:
        problems.append(f"record.lineNumber: line {line} is outside the window {start}-{end}")
        return problems
    if start != max(1, line - WINDOW_RADIUS):
        problems.append(f"record.sourceCodeStart: the window around line {line} starts at line "
                        f"{max(1, line - WINDOW_RADIUS)} ({WINDOW_RADIUS} lines above it, or the file's "
                        f"first line), not {start}")
    if end > line + WINDOW_RADIUS:
        problems.append(f"record.sourceCodeEnd: the window around line {line} ends at line "
                        f"{line + WINDOW_RADIUS} at most ({WINDOW_RADIUS} lines below it), not {end}")
    return problems


def _slug_problems(r: ErrorRecord, analysis: Analysis | None) -> list[str]:
    """A slug is `<message part>-<id[:6]>`. The message part is made from errorMessage when the
    record is first made; a record carried over from an earlier run keeps its slug (the page's
    address) even if the message was edited since, so then only the slug's form is checked."""
    suffix = "-" + r.id[:6]
    fresh = analysis is not None and analysis.annotationStatus == "new"
    if r.slug == r.id[:6]:  # a message with no letter or digit has no words to show
        if fresh and r.slug != slug(r.errorMessage, r.id):
            return [(f"record.slug: is not made from errorMessage: expected {slug(r.errorMessage, r.id)!r}, "
                     f"is {r.slug!r}")]
        return []
    if not r.slug.endswith(suffix):
        return [(f"record.slug: must end in {suffix!r} (\"-\" and the first 6 digits of id), "
                 f"is {r.slug!r}")]
    stem = r.slug[:-len(suffix)]
    if len(stem) > SLUG_CUT or any(not (c.isascii() and (c.isdigit() or c.islower() or c == "-")) for c in stem):
        return [(f"record.slug: the part before {suffix!r} must be at most {SLUG_CUT} characters of "
                 f"a-z, 0-9 and '-', is {stem!r}")]
    if fresh and r.slug != slug(r.errorMessage, r.id):
        return [(f"record.slug: is not made from errorMessage (lower-cased, other characters to '-', "
                 f"cut to {SLUG_CUT}): expected {slug(r.errorMessage, r.id)!r}, is {r.slug!r}")]
    return []


def _link_problems(r: ErrorRecord) -> list[str]:
    from analyzer.profiles import current
    want = github_url(current(), r.repo, r.analyzedSha, r.filePath, r.sourceCodeStart, r.sourceCodeEnd)
    if r.githubUrl != want:
        return [f"record.githubUrl: must be the window pinned to analyzedSha, {want!r}, is {r.githubUrl!r}"]
    return []


def _message_problems(r: ErrorRecord) -> list[str]:
    if r.messagePattern != r.errorMessage:
        return [f"record.messagePattern: must be the same text as errorMessage, is {r.messagePattern!r}"]
    return []


def _form_problems(r: ErrorRecord, analysis: Analysis | None) -> list[str]:
    """A failed assert_eq!/assert_ne! prints its prefix before the message: errorMessage holds it."""
    from analyzer.facts.messages import MACRO_PREFIX

    if analysis is None or not analysis.macro.startswith("assert_"):
        return []
    prefix = MACRO_PREFIX[analysis.macro]
    if not r.errorMessage.startswith(prefix + ": "):
        return [f"record.errorMessage: an {analysis.macro}! prints {prefix + ': '!r} before its message, "
                f"is {r.errorMessage[:60]!r}"]
    return []


def _tag_problems(r: ErrorRecord, analysis: Analysis | None) -> list[str]:
    if analysis is not None and r.backgroundTag != BACKGROUND_TAG[analysis.category]:
        return [(f"record.backgroundTag: must be {BACKGROUND_TAG[analysis.category]!r} for analysis.category "
                 f"{analysis.category}, is {r.backgroundTag!r}")]
    return []


def _date_problems(r: ErrorRecord) -> list[str]:
    # Both dates have one fixed-width UTC form (the schema checks it), so text order is time order.
    if r.contentChangedAt > r.analyzedAt:
        return [f"record.contentChangedAt: {r.contentChangedAt} is after analyzedAt {r.analyzedAt}"]
    return []


def _path_problems(r: ErrorRecord) -> list[str]:
    parts = r.filePath.split("/")
    if "\\" in r.filePath or any(p in ("", ".", "..") for p in parts):
        return [(f"record.filePath: must be a path inside the repository, '/'-separated, with no empty, "
                 f"'.' or '..' part, is {r.filePath!r}")]
    return []


# The checks of `record_problems`, in order, and the record fields each reads.
_Check = Callable[[ErrorRecord, Analysis | None], list[str]]
_CHECKS: tuple[tuple[_Check, tuple[str, ...]], ...] = (
    (lambda r, a: _window_problems(r), ("sourceCode", "sourceCodeStart", "sourceCodeEnd", "lineNumber")),
    (_slug_problems, ("id", "slug", "errorMessage")),
    (lambda r, a: _link_problems(r),
     ("githubUrl", "repo", "analyzedSha", "filePath", "sourceCodeStart", "sourceCodeEnd")),
    (lambda r, a: _message_problems(r), ("messagePattern", "errorMessage")),
    (_form_problems, ("errorMessage",)),
    (_tag_problems, ("backgroundTag",)),
    (lambda r, a: _date_problems(r), ("contentChangedAt", "analyzedAt")),
    (lambda r, a: _path_problems(r), ("filePath",)),
    (lambda r, a: _repository_tag_problems(r), ("tags", "repo")),
)


@functools.cache
def _target_repositories() -> dict[str, str]:
    """The repository of each shipped target, by the tag its records carry (its name's last
    part: `tracel-ai/cubecl` -> `cubecl`)."""
    from analyzer import profiles
    out = {}
    for name in profiles.known():
        repo = profiles.load(name).repository.name
        out[repo.split("/")[-1]] = repo
    return out


def _repository_tag_problems(r: ErrorRecord) -> list[str]:
    """The tool tags a record `rust`, then its repository's name: a record whose second tag names
    another target's repository continues a record of that repository (an `extract --previous`
    given another repository's records), and carries its tags, and with them its id and dates."""
    if len(r.tags) < 2 or r.tags[0] != "rust":
        return []
    own, named = r.repo.split("/")[-1], r.tags[1]
    other = _target_repositories().get(named)
    if named == own or other is None or other == r.repo:
        return []
    return [f"record.tags: tagged {named!r}, the tag of {other}'s records, on a record of {r.repo}: it "
            f"continues a record of another repository"]


def _partial_record(value: object, error: ValidationError) -> dict | None:
    """The record fields of a document the schema refused that it did accept, by name: what the
    checks of the record as a whole can still read; None when there is no record object."""
    raw = value.get("record") if isinstance(value, dict) else None
    if not isinstance(raw, dict):
        return None
    refused = {str(item["loc"][1]) for item in error.errors() if len(item["loc"]) >= 2 and item["loc"][0] == "record"}
    return {k: raw[k] for k in ErrorRecord.model_fields if k in raw and k not in refused}


def partial_record_problems(value: object, error: ValidationError) -> list[str]:
    """The checks of the record as a whole that read only fields the schema accepted, run on a
    document it refused: one round of `validate` lists a wrong key and a wrong line number both."""
    good = _partial_record(value, error)
    if good is None:
        return []
    record = ErrorRecord.model_construct(**good)  # every field used below passed the schema
    analysis = None
    raw_analysis = value.get("analysis") if isinstance(value, dict) else None
    if raw_analysis is not None:
        try:
            analysis = Analysis.model_validate(raw_analysis)
        except ValidationError:
            pass  # its errors are listed already; the checks that read it take it as absent
    return [p for check, fields in _CHECKS if all(f in good for f in fields) for p in check(record, analysis)]


# ---------------------------------------------------------------------------------------------
# The whole file


def check_documents(documents: Iterable[Document]) -> Report:
    """Check every document, then ids and slugs across them."""
    report = Report()
    ids: dict[str, list[Document]] = defaultdict(list)
    slugs: dict[str, list[Document]] = defaultdict(list)
    # Per file: the repository of its last record, and every repository its records were of.
    repos: dict[str, tuple[str, set[str]]] = {}
    for doc in documents:
        report.checked += 1
        before = len(report.records)
        report.problems.extend((doc, p) for p in _document_problems(doc, report, ids, slugs))
        if len(report.records) > before:
            report.problems.extend((doc, p) for p in _mixed(doc, report.records[-1].repo, repos))
    for kind, seen in (("id", ids), ("slug", slugs)):
        for value, docs in seen.items():
            if len(docs) > 1:
                # Every place once, on the first; the others point back to it (output linear in
                # the file, even when one id fills every line).
                first, times = docs[0], f"record.{kind}: {value} appears {len(docs)} times"
                report.problems.append((first, f"{times}, {_places(docs)}"))
                report.problems.extend((doc, f"{times}, first {_place(first, doc)}") for doc in docs[1:])
    report.good = report.checked - len({doc for doc, _ in report.problems})
    # Stable sort: a document's own problems first, then what it shares with others.
    report.problems.sort(key=lambda p: (p[0].path, p[0].line))
    return report


def _mixed(doc: Document, repo: str, repos: dict[str, tuple[str, set[str]]]) -> list[str]:
    """A records file holds one repository's records, or with `--with-dependencies` each
    repository's together, one after the other: records of a repository that come back after
    another's mix two files (or runs) into one. (An exported folder has one record a file.)"""
    last, seen = repos.setdefault(doc.path, ("", set()))
    if repo == last:
        return []
    repos[doc.path] = (repo, seen)
    if repo in seen:
        return [f"record.repo: {repo}'s records come back after {last}'s: a records file holds each "
                f"repository's records together, so this one mixes files or runs"]
    seen.add(repo)
    return []


def _places(docs: list[Document]) -> str:
    if len({d.path for d in docs}) == 1:
        return "on lines " + ", ".join(str(d.line) for d in docs)
    return "in " + ", ".join(d.where for d in docs)


def _place(doc: Document, seen_from: Document) -> str:
    return f"on line {doc.line}" if doc.path == seen_from.path else f"in {doc.where}"


def _document_problems(doc: Document, report: Report, ids: dict[str, list[Document]],
                       slugs: dict[str, list[Document]]) -> list[str]:
    try:
        value = load_json(doc.text)
    except _BadDocument as e:
        return [str(e)]
    problems = unwritable_strings(value)
    try:
        record, analysis = parse_document(value)
    except ValidationError as e:
        good = _partial_record(value, e) or {}
        if isinstance(good.get("id"), str):  # a duplicate is found on a refused document too
            ids[good["id"]].append(doc)
        if isinstance(good.get("slug"), str):
            slugs[good["slug"]].append(doc)
        return problems + _schema_problems(e) + partial_record_problems(value, e)
    report.records.append(record)
    ids[record.id].append(doc)
    slugs[record.slug].append(doc)
    return problems + record_problems(record, analysis)
