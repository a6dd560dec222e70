"""Record stage: the schema (one pydantic model, schema version 2) and how a site becomes a record.

`ErrorRecord` holds exactly the 32 keys of a published record, in their order, with their JSON types.
`Analysis` holds what the extractor knows beyond them. A records.jsonl line is a `RecordLine`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictInt,
    StrictStr,
    create_model,
    model_serializer,
)

from analyzer.core.config import SCHEMA_VERSION
from analyzer.decisions.categories import BackgroundTag, CategoryId
from analyzer.core.jsonlines import dumps_line
from analyzer.profiles import Profile

ANNOTATION_FIELDS = ("documentation", "triggerScenarios", "commonSituations", "solutions", "exampleFix",
                     "handlingStrategy", "validationCode", "typeGuard", "tryCatchPattern", "preventionTips")

_Strict = ConfigDict(extra="forbid", strict=True)

# A record date: UTC, ISO 8601 with milliseconds and `Z` (2026-01-31T12:00:00.000Z).
UTC_TIME = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"

# The main way to handle an error, one word an annotator picks (`handlingStrategy`):
# check the input first, convert it to a supported dtype, fall back to another op or backend,
# change a setting or a feature, guard with a predicate, catch the panic, move to a version that
# supports it, or a workaround that fits none of these.
HandlingStrategy = Literal["validation", "conversion", "fallback", "configuration", "type-guard",
                           "try-catch", "upgrade", "workaround"]


class ErrorRecord(BaseModel):
    """One error record, schema version 2 (the 32 keys of a published record)."""

    model_config = _Strict

    id: StrictStr = Field(pattern=r"^[0-9a-f]{16}$")
    repo: StrictStr = Field(pattern=r"^[^/\s]+/[^/\s]+$")
    slug: StrictStr
    errorCode: StrictStr | None = None
    errorMessage: StrictStr
    messagePattern: StrictStr
    errorType: Literal["panic"] = "panic"
    errorClass: StrictStr | None = None
    httpStatus: StrictInt | None = None
    severity: Literal["error"] = "error"
    filePath: StrictStr
    lineNumber: StrictInt = Field(ge=1)
    sourceCode: StrictStr
    sourceCodeStart: StrictInt = Field(ge=1)
    sourceCodeEnd: StrictInt = Field(ge=1)
    githubUrl: StrictStr
    documentation: StrictStr | None = None
    triggerScenarios: StrictStr | None = None
    commonSituations: StrictStr | None = None
    solutions: list[StrictStr] | None = None
    exampleFix: StrictStr | None = None
    handlingStrategy: HandlingStrategy | None = None
    validationCode: StrictStr | None = None
    typeGuard: StrictStr | None = None
    tryCatchPattern: StrictStr | None = None
    preventionTips: list[StrictStr] | None = None
    tags: list[StrictStr]
    backgroundTag: BackgroundTag
    analyzedSha: StrictStr = Field(pattern=r"^[0-9a-f]{40}$")
    analyzedAt: StrictStr = Field(pattern=UTC_TIME)
    contentChangedAt: StrictStr = Field(pattern=UTC_TIME)
    schemaVersion: Literal[2] = SCHEMA_VERSION

    def annotations(self) -> dict:
        return {k: getattr(self, k) for k in ANNOTATION_FIELDS}

    def is_annotated(self) -> bool:
        return any(v is not None for v in self.annotations().values())

    @property
    def pinned_url(self) -> str:
        """`githubUrl` when it points into the record's own repository at its own commit, else "":
        what every writer links and shows as the record's source. A records file may come from
        anyone, and a "View on GitHub" link to any other site would be taken on trust."""
        from analyzer.profiles import current
        marked = github_url(current(), self.repo, self.analyzedSha, "\0", 1, 1)
        return self.githubUrl if self.githubUrl.startswith(marked[:marked.index("%00")]) else ""


# The annotation fields alone, what an annotator hands back for one record: built from
# ErrorRecord's own fields, so the record model stays the single source of the schema.
Annotation = create_model(  # type: ignore[call-overload]  # field definitions built from ErrorRecord
    "Annotation",
    __config__=_Strict,
    __doc__="The annotation fields of one record (by id), as an annotator returns them.",
    id=(StrictStr, Field(pattern=r"^[0-9a-f]{16}$")),
    # The content hash of the record the answer was written for (`annotate export` writes it into
    # the skeleton): an answer for other content is refused.
    contentHash=(StrictStr | None, Field(default=None, pattern=r"^[0-9a-f]{16}$")),
    **{name: (ErrorRecord.model_fields[name].annotation, None) for name in ANNOTATION_FIELDS},
)


# The calls a record can be (SPEC "Which sites are records"): the panic-family macros, the
# assertion macros with a message, and `.expect("..")`.
MacroId = Literal["panic", "unimplemented", "todo", "assert", "assert_eq", "assert_ne", "expect"]


class PreemptedBy(BaseModel):
    """An earlier refusal that fires first on every path to a preempted record."""

    model_config = ConfigDict(extra="forbid")

    id: StrictStr | None = Field(pattern=r"^[0-9a-f]{16}$")
    why: Literal["creation", "forward", "nested-autodiff", "overridden", "caller", "exhaustive"]


class Analysis(BaseModel):
    """What the extractor knows about a record beyond the 32 keys. Every key is declared: an
    unknown key is refused, so a typo never passes for data."""

    model_config = ConfigDict(extra="forbid")

    category: CategoryId
    macro: MacroId
    crate: StrictStr
    function: StrictStr
    impl: StrictStr = ""
    itemPath: StrictStr = ""
    context: Literal["match-arm", "let-else", "if-let-else", "if-let", "body", "closure", "guard"] = "match-arm"
    scrutinee: StrictStr
    pattern: StrictStr
    enum: StrictStr | None = None
    handled: list[StrictStr] = []
    rejected: list[StrictStr] = []
    partial: list[StrictStr] = []
    messageRegex: StrictStr
    operation: StrictStr
    inMacro: StrictStr = ""
    column: StrictInt = 1
    rule: StrictStr  # the rule that decided the category
    rules: list[StrictStr] = []
    contentHash: StrictStr
    # The ids this site carries whatever other sites share its key (records/ids.py `assign`): its
    # key's plain id and its file-bound one; the lineage's `id` tier looks earlier ids up in them.
    alternateIds: list[StrictStr] = []
    # A trait's default method whose whole body panics: the crates (sorted) whose impl of the
    # trait leaves it out, each of which hits it. Absent on every other record.
    inheritedBy: list[StrictStr] | None = None
    # Whether a user can reach the refusal today (decisions/preemption.py): `reachable`,
    # `preempted` (every path is refused earlier: `preemptedBy` names the earlier refusals, by
    # record id where there is one, and why), or `unknown`. None on a record read from a file
    # written before the verdict existed.
    reach: Literal["reachable", "preempted", "unknown"] | None = None
    preemptedBy: list[PreemptedBy] = []
    # new | changed | unchanged, against --previous (new without it)
    annotationStatus: Literal["new", "changed", "unchanged"] = "new"
    # When `annotate import` last merged an answer; absent until then.
    annotatedAt: StrictStr | None = Field(default=None, pattern=UTC_TIME)

    @model_serializer(mode="wrap")
    def _leave_out_unset_dates(self, handler):
        # A record never annotated has no annotatedAt key, rather than a null one (as inheritedBy).
        data = handler(self)
        for key in ("annotatedAt", "inheritedBy", "reach"):
            if data.get(key) is None:
                data.pop(key, None)
        if not data.get("preemptedBy"):
            data.pop("preemptedBy", None)
        return data
    # How `extract --previous` found this site's earlier record (analyzer/lineage/): by the same
    # id, by following its line through git history, by crate+function+message, by file or crate
    # +message, by a similar source window; "new" when no earlier record matched.
    lineage: Literal["id", "history", "function", "message", "window", "new"] = "new"
    # The revision and time this site's record was first seen: carried over from the earlier
    # record (its analyzedSha when it does not say), else this run's.
    firstSeenSha: StrictStr | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    firstSeenAt: StrictStr | None = None


class RecordLine(BaseModel):
    """One record as read or written: a line of records.jsonl, or one envelope of the published
    dataset (`{"record": ..., "datasetVersion": ...}`, no `analysis`)."""

    model_config = ConfigDict(extra="forbid")

    record: ErrorRecord
    analysis: Analysis | None = None
    # The published dataset's version of this record, kept when read so it can be written back.
    datasetVersion: StrictStr | None = None
    # What `facts` derived, with the record it was derived from (a copy with another record must
    # not reuse it).
    _derived: tuple[ErrorRecord, Analysis] | None = PrivateAttr(default=None)

    @property
    def facts(self) -> Analysis:
        """`analysis`, or for a record read without one (the published form) what the record
        itself tells: the crate from its path, the function from its source window, a message
        matcher from its message (scrutinee and arm pattern unknown, dtypes empty); or what
        `derive` gave it (lineage/published.py: the site at its commit, or read from its window)."""
        if self.analysis is not None:
            return self.analysis
        if self._derived is None or self._derived[0] is not self.record:
            self._derived = (self.record, derive_analysis(self.record))
        return self._derived[1]

    def derive(self, analysis: Analysis) -> None:
        """Keep `analysis` as what this record, read without one, is known to be (not written)."""
        self._derived = (self.record, analysis)

    @property
    def content_known(self) -> bool:
        """Whether the whole content is known: the record's analysis, or one derived from its
        commit or its source window (not from the record alone)."""
        return self.analysis is not None or self.facts.rule in (DERIVED_AT_SHA, DERIVED_FROM_WINDOW)

    def to_json_line(self) -> str:
        return dumps_line(self.model_dump(mode="json", exclude_none=False, exclude=self._absent()))

    def _absent(self) -> set[str]:
        """Top-level keys left out when empty: a record read without analysis is written back
        without one, and datasetVersion appears only when the record came with one."""
        return {k for k in ("analysis", "datasetVersion") if getattr(self, k) is None}


class Envelope(BaseModel):
    """One record as the published dataset serves it: `{"record": ..., "datasetVersion": ...}`,
    the version being when the dataset was published (a record date)."""

    model_config = ConfigDict(extra="forbid")

    record: ErrorRecord
    datasetVersion: StrictStr = Field(pattern=UTC_TIME)


# ---------------------------------------------------------------------------------------------
# Derived fields

_SLUG_RUN = re.compile(r"[^a-z0-9]+")


def slug(message: str, record_id: str) -> str:
    """The message lower-cased, runs of other characters to `-`, cut to 50, then `-` + id[:6]
    (the published rule, dashes at either end kept: `resize: no kernel for {:?}` gives
    `resize-no-kernel-for--<id6>`). A message with no letter or digit (`panic!("")`, `{:?}`)
    has no words to show: its slug is id[:6] alone, not `-<id6>` or `--<id6>`."""
    words = _SLUG_RUN.sub("-", message.lower())[:50]
    if not words.strip("-"):
        return record_id[:6]
    return words + "-" + record_id[:6]


def github_url(profile: Profile, repo: str, sha: str, path: str, start: int, end: int) -> str:
    """The lines on the target's host (its `profile`'s blob link), pinned to the commit; the path
    percent-encoded (a file name may hold spaces, `#`, `?`, `)` or newlines)."""
    from analyzer.core.safe import url_path
    return profile.link("blob", repo=url_path(repo), sha=sha, path=url_path(path), start=start, end=end)


def window(lines: list[str], line_number: int, radius: int) -> tuple[str, int, int]:
    """Lines line_number-radius .. line_number+radius, cut at the file's ends, joined by \\n."""
    start = max(1, line_number - radius)
    end = min(len(lines), line_number + radius)
    return "\n".join(lines[start - 1:end]), start, end


# ---------------------------------------------------------------------------------------------
# Content: what sends a record back to annotation

# The fields of a record's content, in the order a diff reports them. Not the window, the line or
# the file: moving code does not send a record back to annotation.
CONTENT_FIELDS = ("message", "category", "macro", "scrutinee", "pattern", "handled", "rejected", "reach")


def reach_content(verdict: str | None, preempted_by: list) -> str:
    """The verdict as content: `reachable`, `unknown`, or `preempted: forward, creation` (the
    reasons, not the ids: an earlier refusal found again under another id is the same news)."""
    if verdict != "preempted":
        return verdict or ""
    whys = dict.fromkeys(p["why"] if isinstance(p, dict) else p.why for p in preempted_by)
    return "preempted: " + ", ".join(whys) if whys else "preempted"


def content_hash(message: str, category: str, macro: str, scrutinee: str, pattern: str,
                 handled: list[str], rejected: list[str], reach: str = "reachable") -> str:
    """A digest of the content (CONTENT_FIELDS, in that order), kept in `analysis.contentHash`
    so an annotation answer can tell that the code changed since it was exported. A reachable
    record's digest leaves the verdict out, so it is the digest records had before there was one."""
    fields: list[object] = [message, category, macro, scrutinee, pattern, sorted(handled), sorted(rejected)]
    if reach != "reachable":
        fields.append(reach)
    payload = json.dumps(fields, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


# The rule of an analysis derived for a record read without one (lineage/published.py): the site
# as the tool sees it at the record's commit, or read from the record's source window alone.
DERIVED_AT_SHA = "derived/analyzed-sha"
DERIVED_FROM_WINDOW = "derived/source-window"


def content_of(line: RecordLine) -> dict[str, object]:
    """A record's content, field by field. A record without analysis (the published form) says
    only its message and category, unless an analysis was derived for it: from its commit, all of
    it is known; from its source window, all but the rejected dtypes (they need the whole tree's
    dtype enums). Only what is known can differ."""
    out: dict[str, object] = {"message": line.record.errorMessage, "category": line.facts.category}
    a = line.analysis if line.analysis is not None else (line.facts if line.content_known else None)
    if a is not None:
        out.update(macro=a.macro, scrutinee=a.scrutinee, pattern=a.pattern, handled=sorted(a.handled))
        if a.rule != DERIVED_FROM_WINDOW:
            out["rejected"] = sorted(a.rejected)
        if a.reach is not None:
            out["reach"] = reach_content(a.reach, a.preemptedBy)
    return out


def content_changes(old: RecordLine, new: RecordLine) -> list[str]:
    """The one definition of a content change, shared by `extract --previous` (a change sends the
    record back to annotation) and `diff` (a change is `changed`, what `--fail-on changed` fails
    on): the CONTENT_FIELDS known on both sides that differ."""
    a, b = content_of(old), content_of(new)
    return [f for f in CONTENT_FIELDS if f in a and f in b and a[f] != b[f]]


# ---------------------------------------------------------------------------------------------
# What a record without analysis still tells

_FN_ITEM = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
_MACRO_CALL = re.compile(r"\b(panic|unimplemented|todo|assert_eq|assert_ne|assert)!|\.(expect)\(")


def function_from_window(record: ErrorRecord) -> str:
    """The nearest `fn name` at or above the record's line in its source window ("" if none)."""
    lines = record.sourceCode.split("\n")
    last = min(len(lines), record.lineNumber - record.sourceCodeStart + 1)
    for text in reversed(lines[:max(last, 0)]):
        m = _FN_ITEM.search(text)
        if m:
            return m.group(1)
    return ""


def derive_analysis(record: ErrorRecord) -> Analysis:
    """What a record without analysis tells of itself (see RecordLine.facts)."""
    from analyzer.source.crates import crate_from_path
    from analyzer.decisions.categories import MODE, by_background_tag
    from analyzer.records.operation import operation_of
    from analyzer.facts.messages import PanicMessage, split_format

    known = by_background_tag(record.backgroundTag)
    # A tag two categories share (unsupported-op-backend) reads as the first that has it.
    category: CategoryId = known.id if known is not None else MODE  # type: ignore[assignment]
    at = record.lineNumber - record.sourceCodeStart
    window_lines = record.sourceCode.split("\n")
    near = "\n".join(window_lines[max(at, 0):at + 3])
    m = _MACRO_CALL.search(near)
    macro: MacroId = "panic"
    if m:
        macro = m.group(1) or m.group(2)  # type: ignore[assignment]  # one of MacroId's words
    function = function_from_window(record)
    message = record.errorMessage
    return Analysis(
        category=category, macro=macro, crate=crate_from_path(record.filePath), function=function,
        scrutinee="", pattern="", messageRegex=PanicMessage(message, tuple(split_format(message))).runtime_regex(macro),
        operation=operation_of(message, function, ""), rule="derived/record",
        contentHash=content_hash(message, category, macro, "", "", [], []))
