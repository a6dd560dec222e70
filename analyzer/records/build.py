"""The record stage: one site the classifier kept, as a record line (the pydantic model), with
its source window, tags, message regex and the operation it belongs to."""

from __future__ import annotations

from analyzer.core.config import WINDOW_RADIUS
from analyzer.decisions.categories import BACKGROUND_TAG
from analyzer.decisions.model import Decision
from analyzer.decisions.preemption import Reach
from analyzer.facts.messages import PanicMessage, Segment
from analyzer.facts.model import SiteFacts
from analyzer.profiles import Profile
from analyzer.records.operation import operation_of
from analyzer.records.model import (
    Analysis, ErrorRecord, RecordLine, content_hash, github_url, reach_content, slug, window,
)

def file_lines(data: bytes) -> list[str]:
    """The file's lines as an editor counts them: a final newline ends the last line, it does
    not start an empty one. Each line is kept exactly (a CR of a CRLF file stays)."""
    lines = data.decode("utf-8", "replace").split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def record_line(profile: Profile, repo: str, sha: str, now: str, path: str, crate: str, s: SiteFacts, d: Decision,
                record_id: str | None,
                file_lines: list[str], alternate_ids: list[str] | None = None,
                inherited_by: list[str] | None = None, reach: Reach | None = None) -> RecordLine:
    """The record line of one site the classifier kept, with its source window from `file_lines`,
    its tags and link by the target's `profile`."""
    reach = reach or Reach()
    source, start, end = window(file_lines, s.line, WINDOW_RADIUS)
    category = d.category
    assert category is not None and record_id is not None
    tags = ["rust", repo.split("/")[-1], profile.crate_tag(crate), BACKGROUND_TAG[category]]
    if s.macro != "panic":
        tags.append(s.macro)
    record = ErrorRecord(
        id=record_id, repo=repo, slug=slug(s.message, record_id), errorMessage=s.message, messagePattern=s.message,
        filePath=path, lineNumber=s.line, sourceCode=source, sourceCodeStart=start, sourceCodeEnd=end,
        githubUrl=github_url(profile, repo, sha, path, start, end), tags=list(dict.fromkeys(tags)),
        # The stage's plain strings meet the model's closed sets here; pydantic checks them at run time.
        backgroundTag=BACKGROUND_TAG[category], analyzedSha=sha, analyzedAt=now,  # type: ignore[arg-type]
        contentChangedAt=now)
    regex = PanicMessage(s.message, tuple(Segment(t, p) for t, p in s.message_segments)).runtime_regex(s.macro)
    analysis = Analysis(
        category=category, macro=s.macro, crate=crate, function=s.function,  # type: ignore[arg-type]
        impl=s.impl, itemPath=s.item_path, context=s.context,  # type: ignore[arg-type]
        scrutinee=s.scrutinee, pattern=d.pattern, enum=d.enum,
        handled=d.handled, rejected=d.rejected, partial=d.partial, messageRegex=regex,
        operation=operation_of(s.message, s.function, s.in_macro, s.impl), inMacro=s.in_macro, column=s.column,
        rule=d.reason, rules=d.rules, firstSeenSha=sha, firstSeenAt=now, alternateIds=alternate_ids or [],
        inheritedBy=inherited_by, reach=reach.verdict, preemptedBy=reach.to_json(),  # type: ignore[arg-type]
        contentHash=content_hash(s.message, category, s.macro, s.scrutinee, d.pattern, d.handled, d.rejected,
                                 reach_content(reach.verdict, reach.to_json())))
    return RecordLine(record=record, analysis=analysis)
