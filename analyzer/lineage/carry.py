"""Carrying an earlier record over to the site the lineage (link.py) matched it with."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from analyzer.lineage.link import Lineage
from analyzer.records.model import ANNOTATION_FIELDS, RecordLine, content_changes, slug


# -- carrying an earlier record over ----------------------------------------------------------

@dataclass
class Carried:
    lines: list[RecordLine]
    annotation: dict[str, int]  # new | changed | unchanged | dropped
    lineage: dict  # records per tier, "new", "notFound", and the earlier records not found


def carry_over(previous: Sequence[RecordLine], current: list[RecordLine], lineage: Lineage) -> Carried:
    """The new records with what each matched earlier record hands on: its id and slug (the
    address of its page), its tags (annotators' and the tool's), its first-seen revision; and,
    when the content is unchanged, its annotations and contentChangedAt. A changed record goes
    back to annotation. A new site never takes an id an earlier record keeps."""
    links = lineage.of_current()
    taken = {previous[k.previous].record.id for k in lineage.links}
    used: set[str] = set()
    out: list[RecordLine] = []
    counts = {"new": 0, "changed": 0, "unchanged": 0, "dropped": len(lineage.lost)}
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
        update: dict[str, object] = {"id": old.record.id, "slug": old.record.slug,
                                     "tags": list(dict.fromkeys([*old.record.tags, *line.record.tags]))}
        changed = content_changes(old, line)
        if not changed:
            update.update({f: getattr(old.record, f) for f in ANNOTATION_FIELDS})
            update["contentChangedAt"] = old.record.contentChangedAt
        counts["changed" if changed else "unchanged"] += 1
        used.add(old.record.id)
        first_sha, first_at = first_seen(old)
        out.append(RecordLine(record=line.record.model_copy(update=update), analysis=analysis.model_copy(update={
            "lineage": k.tier, "annotationStatus": "changed" if changed else "unchanged",
            "firstSeenSha": first_sha, "firstSeenAt": first_at})))
    lost = [_brief(previous[p]) for p in lineage.lost]
    unknown = [_brief(previous[p]) for p in lineage.derived.unknown]
    return Carried(out, counts, {**lineage.counts(), "notFoundRecords": lost,
                                 "contentDerived": {"analyzedSha": lineage.derived.at_sha,
                                                    "sourceCode": lineage.derived.from_window},
                                 "contentUnknown": len(unknown), "contentUnknownRecords": unknown})


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
