"""Carrying an earlier record over to the site the lineage (link.py) matched it with."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from analyzer.lineage.link import Lineage
from pydantic import ValidationError

from analyzer.records.model import (
    ANNOTATION_FIELDS,
    UTC_TIME,
    Analysis,
    ErrorRecord,
    RecordLine,
    content_changes,
    slug,
)


# -- carrying an earlier record over ----------------------------------------------------------

@dataclass
class Carried:
    lines: list[RecordLine]
    annotation: dict[str, int]  # new | changed | unchanged | dropped
    lineage: dict  # records per tier, "new", "notFound", and the earlier records not found
    # Every earlier record with annotations this run does not hand on (its content changed, or
    # it was not found again): the old record, its annotations and why (not_carried_entry).
    not_carried: list[dict] = field(default_factory=list)


def carry_over(previous: Sequence[RecordLine], current: list[RecordLine], lineage: Lineage) -> Carried:
    """The new records with what each matched earlier record hands on: its id and slug (the
    address of its page) and its first-seen revision; when the content is unchanged, the rest of
    what it published (annotations, tags, PUBLISHED_FIELDS) as it was; when it changed, its tags
    then the tool's, and the record goes back to annotation. Every carried field passes
    `_checked`. A new site never takes an id an earlier record had, kept or dropped: an id is a
    page's address, and a dropped record's page must not come to show another error."""
    links = lineage.of_current()
    taken = {line.record.id for line in previous}
    used: set[str] = set()
    out: list[RecordLine] = []
    counts = {"new": 0, "changed": 0, "unchanged": 0, "dropped": len(lineage.lost)}
    not_carried: list[dict] = []
    for i, line in enumerate(current):
        k = links.get(i)
        analysis = line.analysis
        assert analysis is not None  # new records always carry their analysis
        if k is None:
            rid = line.record.id
            if rid in taken or rid in used:
                rid = _fresh_id(line, taken | used)
            record = line.record if rid == line.record.id else line.record.model_copy(
                update={"id": rid, "slug": slug(line.record.errorMessage, rid)})
            used.add(rid)
            counts["new"] += 1
            out.append(RecordLine(record=record, analysis=analysis.model_copy(
                update={"lineage": "new", "annotationStatus": "new"})))
            continue
        old = previous[k.previous]
        changed = content_changes(old, line)
        update: dict[str, object] = {"id": old.record.id, "slug": old.record.slug}
        if changed:
            # The error changed: what the tool says of it now joins what the earlier record said.
            update["tags"] = list(dict.fromkeys([*old.record.tags, *line.record.tags]))
        else:
            # Nothing about the error changed: the record stays as it was published.
            update.update({f: getattr(old.record, f) for f in (*ANNOTATION_FIELDS, *PUBLISHED_FIELDS)})
        counts["changed" if changed else "unchanged"] += 1
        used.add(old.record.id)
        first_sha, first_at = first_seen(old)
        if not (isinstance(first_at, str) and UTC.match(first_at) and first_at <= line.record.analyzedAt):
            first_sha, first_at = line.record.analyzedSha, line.record.analyzedAt
        carried = _checked(line, update, analysis.model_copy(update={
            "lineage": k.tier, "annotationStatus": "changed" if changed else "unchanged",
            "firstSeenSha": first_sha, "firstSeenAt": first_at}))
        used.add(carried.record.id)
        out.append(carried)
        if changed and old.record.is_annotated():
            not_carried.append(not_carried_entry(old, "changed", changed, carried))
    lost = [_brief(previous[p]) for p in lineage.lost]
    not_carried += [not_carried_entry(previous[p], "dropped") for p in lineage.lost
                    if previous[p].record.is_annotated()]
    unknown = [_brief(previous[p]) for p in lineage.derived.unknown]
    return Carried(out, counts, {**lineage.counts(), "notFoundRecords": lost,
                                 "contentDerived": {"analyzedSha": lineage.derived.at_sha,
                                                    "sourceCode": lineage.derived.from_window},
                                 "contentUnknown": len(unknown), "contentUnknownRecords": unknown},
                   not_carried)


def not_carried_entry(old: RecordLine, why: str, changes: Sequence[str] = (),
                      now: RecordLine | None = None) -> dict:
    """One line of annotations-not-carried.jsonl: the earlier record whole (with its analysis when
    it had one), the annotations it held, why they were not handed on (`changed`: the content
    changed, the record goes back to annotation; `dropped`: the site was not found again), and
    for a changed record what changed and the record it continues as."""
    entry: dict = {"why": why, "id": old.record.id,
                   "annotations": {f: v for f, v in old.record.annotations().items() if v is not None}}
    if now is not None:
        entry["changes"] = list(changes)
        entry["now"] = {"id": now.record.id,
                        "filePath": now.record.filePath, "lineNumber": now.record.lineNumber,
                        "errorMessage": now.record.errorMessage}
    entry["record"] = old.record.model_dump(mode="json")
    if old.analysis is not None:
        entry["analysis"] = old.analysis.model_dump(mode="json", exclude_none=True)
    return entry


# What a record carried unchanged keeps of the earlier one besides its id, slug and annotations.
PUBLISHED_FIELDS = ("tags", "backgroundTag", "errorCode", "errorClass", "httpStatus", "contentChangedAt")
UTC = re.compile(UTC_TIME)


def _checked(line: RecordLine, update: dict[str, object], analysis: Analysis) -> RecordLine:
    """The new record with the earlier record's fields `update`, each kept only if the result
    passes what `validate` checks (the schema, records/checks.py's record_problems, text that can
    be written): a field that fails is the new record's own (a slug made from the message and the
    kept id). So extract never writes a record its own validate refuses."""
    from analyzer.records.checks import record_problems, unwritable_strings

    fallback = {name: getattr(line.record, name) for name in update}
    fallback["slug"] = slug(line.record.errorMessage, str(update.get("id", line.record.id)))
    while True:
        data = {**line.record.model_dump(mode="json"), **update}
        problems = unwritable_strings(data)
        record = None
        try:
            record = ErrorRecord.model_validate(data)
        except ValidationError as e:
            problems += [".".join(str(p) for p in err["loc"]) for err in e.errors()]
        else:
            problems += record_problems(record, analysis)
        bad = {name for name in update if update[name] != fallback[name]
               and any(_names(problem, name) for problem in problems)}
        if not bad:
            return RecordLine(record=record if record is not None else line.record, analysis=analysis)
        update = {**update, **{name: fallback[name] for name in bad}}
        if "id" in bad:
            update["slug"] = slug(line.record.errorMessage, line.record.id)


def _names(problem: str, name: str) -> bool:
    """Whether a problem (`record.slug: ...`, `tags.1: ...`, `slug`) is about field `name`."""
    where = problem.split(":", 1)[0].removeprefix("record.")
    return where == name or where.startswith(name + ".")


def _brief(line: RecordLine) -> dict:
    r = line.record
    return {"id": r.id, "filePath": r.filePath, "lineNumber": r.lineNumber, "errorMessage": r.errorMessage}


def first_seen(line: RecordLine) -> tuple[str, str]:
    """The revision and time a record was first seen: as it says, else when it was analysed."""
    a = line.analysis
    if a is not None and a.firstSeenSha and a.firstSeenAt:
        return a.firstSeenSha, a.firstSeenAt
    return line.record.analyzedSha, line.record.analyzedAt


def _fresh_id(line: RecordLine, taken: set[str]) -> str:
    """An id for a new site whose structural id an earlier record already keeps: derived from it
    and the site's place, so it is the same on every run."""
    salt = 0
    while True:
        text = f"{line.record.id}\x1f{line.record.filePath}\x1f{line.record.lineNumber}\x1f{salt}"
        rid = hashlib.sha256(text.encode()).hexdigest()[:16]
        if rid not in taken:
            return rid
        salt += 1
