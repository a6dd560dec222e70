"""Record stage: the schema (one pydantic model, schema version 2) and how a site becomes a record.

`ErrorRecord` holds exactly the 32 keys of the seed record, in its order, with its JSON types.
`Analysis` holds what the extractor knows beyond them. A records.jsonl line is a `RecordLine`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, create_model

from .config import SCHEMA_VERSION

ANNOTATION_FIELDS = ("documentation", "triggerScenarios", "commonSituations", "solutions", "exampleFix",
                     "handlingStrategy", "validationCode", "typeGuard", "tryCatchPattern", "preventionTips")

_Strict = ConfigDict(extra="forbid", strict=True)


class ErrorRecord(BaseModel):
    """One error record, schema version 2 (the seed record's 32 keys)."""

    model_config = _Strict

    id: StrictStr = Field(pattern=r"^[0-9a-f]{16}$")
    repo: StrictStr = Field(pattern=r"^[^/\s]+/[^/\s]+$")
    slug: StrictStr
    errorCode: Optional[StrictStr] = None
    errorMessage: StrictStr
    messagePattern: StrictStr
    errorType: Literal["panic"] = "panic"
    errorClass: Optional[StrictStr] = None
    httpStatus: Optional[StrictInt] = None
    severity: Literal["error"] = "error"
    filePath: StrictStr
    lineNumber: StrictInt = Field(ge=1)
    sourceCode: StrictStr
    sourceCodeStart: StrictInt = Field(ge=1)
    sourceCodeEnd: StrictInt = Field(ge=1)
    githubUrl: StrictStr
    documentation: Optional[StrictStr] = None
    triggerScenarios: Optional[StrictStr] = None
    commonSituations: Optional[StrictStr] = None
    solutions: Optional[list[StrictStr]] = None
    exampleFix: Optional[StrictStr] = None
    handlingStrategy: Optional[StrictStr] = None
    validationCode: Optional[StrictStr] = None
    typeGuard: Optional[StrictStr] = None
    tryCatchPattern: Optional[StrictStr] = None
    preventionTips: Optional[list[StrictStr]] = None
    tags: list[StrictStr]
    backgroundTag: Literal["unsupported-dtype", "unsupported-op-backend"]
    analyzedSha: StrictStr = Field(pattern=r"^[0-9a-f]{40}$")
    analyzedAt: StrictStr = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
    contentChangedAt: StrictStr = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
    schemaVersion: Literal[2] = SCHEMA_VERSION

    def annotations(self) -> dict:
        return {k: getattr(self, k) for k in ANNOTATION_FIELDS}

    def is_annotated(self) -> bool:
        return any(v is not None for v in self.annotations().values())


# The annotation fields alone, what an annotator hands back for one record: built from
# ErrorRecord's own fields, so the record model stays the single source of the schema.
Annotation = create_model(
    "Annotation",
    __config__=_Strict,
    __doc__="The annotation fields of one record (by id), as an annotator returns them.",
    id=(StrictStr, Field(pattern=r"^[0-9a-f]{16}$")),
    **{name: (ErrorRecord.model_fields[name].annotation, None) for name in ANNOTATION_FIELDS},
)


class Analysis(BaseModel):
    """What the extractor knows about a record beyond the 32 keys."""

    model_config = ConfigDict(extra="allow")

    category: Literal["dtype-dispatch", "unsupported-mode"]
    macro: StrictStr
    crate: StrictStr
    function: StrictStr
    impl: StrictStr = ""
    itemPath: StrictStr = ""
    context: StrictStr = "match-arm"  # match-arm | let-else | if-let-else | if-let
    scrutinee: StrictStr
    pattern: StrictStr
    enum: Optional[StrictStr] = None
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
    # new | changed | unchanged, against --previous (new without it)
    annotationStatus: Literal["new", "changed", "unchanged"] = "new"


class RecordLine(BaseModel):
    """One line of records.jsonl."""

    model_config = ConfigDict(extra="forbid")

    record: ErrorRecord
    analysis: Analysis

    def to_json_line(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# Derived fields

_SLUG_RUN = re.compile(r"[^a-z0-9]+")


def slug(message: str, record_id: str) -> str:
    """SPEC.md: lower-cased, runs of other characters to `-`, cut to 50, then `-` + id[:6]."""
    return _SLUG_RUN.sub("-", message.lower())[:50] + "-" + record_id[:6]


def github_url(repo: str, sha: str, path: str, start: int, end: int) -> str:
    """The lines on GitHub, pinned to the commit; the path percent-encoded (a file name may hold
    spaces, `#`, `?`, `)` or newlines)."""
    from .safe import url_path
    return f"https://github.com/{url_path(repo)}/blob/{sha}/{url_path(path)}#L{start}-L{end}"


def window(lines: list[str], line_number: int, radius: int) -> tuple[str, int, int]:
    """Lines line_number-radius .. line_number+radius, cut at the file's ends, joined by \\n."""
    start = max(1, line_number - radius)
    end = min(len(lines), line_number + radius)
    return "\n".join(lines[start - 1:end]), start, end


def content_hash(message: str, category: str, macro: str, scrutinee: str, pattern: str,
                 handled: list[str], rejected: list[str]) -> str:
    """What "content" means for annotation carry-over: the message, the category, the macro, the
    match (scrutinee and arm pattern) and the dtypes it handles and rejects. Not the window, the
    line or the file, so moving code does not send a record back to annotation."""
    payload = json.dumps([message, category, macro, scrutinee, pattern, sorted(handled), sorted(rejected)],
                         ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
