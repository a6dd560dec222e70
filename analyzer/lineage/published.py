"""The content of earlier records read without `analysis` (the published envelopes, an export).

Such a record tells its message and category; what sends a record back to annotation also lies in
the macro, the arm and the dtypes the match handles (records/model.py `content_of`). So before the
lineage compares, each such record gets an analysis derived (kept with the record, see
RecordLine.derive; the record itself is left as it was read):

- at its `analyzedSha`, when the repository has that commit: the tool's own extraction there,
  whose record at the same file and line, with the same message, is that site as the tool sees it;
- else from its `sourceCode` window, which usually holds the call: the window parsed with the
  project's parser and the call at the record's line classified (with the dtype enums of the new
  revision when known); the dtypes an arm rejects need the whole tree, so only the handled ones
  are compared then;
- else none: the record's content cannot be compared beyond its message and category, and the
  caller warns, naming it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from analyzer.records.model import DERIVED_AT_SHA, DERIVED_FROM_WINDOW, RecordLine, content_hash

if TYPE_CHECKING:
    from analyzer.decisions.classify import DtypeCatalog
    from analyzer.profiles.run import Run

# The tool's own records at a commit, or None when the repository does not have it: given by the
# caller (the pipeline), so the lineage never runs an extraction itself.
RecordsAt = Callable[[str], "Sequence[RecordLine] | None"]


@dataclass
class Derived:
    at_sha: int = 0  # records given the analysis of their own commit
    from_window: int = 0  # records given one from their source window
    unknown: list[int] = field(default_factory=list)  # indexes of records whose content is unknown


def derive_content(previous: Sequence[RecordLine], run: Run, records_at: RecordsAt | None = None,
                   catalog: DtypeCatalog | None = None) -> Derived:
    """Give every record of `previous` without analysis a derived one (see the module's docstring)."""
    out = Derived()
    missing = [i for i, ln in enumerate(previous) if ln.analysis is None and not ln.content_known]
    if not missing:
        return out
    by_sha: dict[str, list[int]] = defaultdict(list)
    for i in missing:
        by_sha[previous[i].record.analyzedSha].append(i)
    left: list[int] = []
    for sha, members in sorted(by_sha.items()):
        found = _at_sha(records_at, sha, [previous[i] for i in members]) if records_at is not None else None
        for i, analysis in zip(members, found or [None] * len(members)):
            if analysis is not None:
                previous[i].derive(analysis)
                out.at_sha += 1
            else:
                left.append(i)
    for i in sorted(left):
        analysis = _from_window(previous[i], catalog, run)
        if analysis is not None:
            previous[i].derive(analysis)
            out.from_window += 1
        else:
            out.unknown.append(i)
    return out


def _at_sha(records_at: RecordsAt, sha: str, lines: list[RecordLine]) -> list | None:
    """Each record's site in the tool's extraction at `sha` (None where it has none), or None
    when the repository does not have the commit."""
    there = records_at(sha)
    if there is None:
        return None
    at = {(ln.record.filePath, ln.record.lineNumber, ln.record.errorMessage): ln for ln in there}
    out = []
    for ln in lines:
        site = at.get((ln.record.filePath, ln.record.lineNumber, ln.record.errorMessage))
        out.append(None if site is None or site.analysis is None else site.analysis.model_copy(update={
            "rule": DERIVED_AT_SHA, "firstSeenSha": None, "firstSeenAt": None, "alternateIds": [],
            "lineage": "new", "annotationStatus": "new"}))
    return out


def _from_window(line: RecordLine, catalog: DtypeCatalog | None, run: Run):
    """The analysis of the call at the record's line, read from its source window; None when the
    window holds no such call (cut before it, or another message there)."""
    from analyzer.decisions.classify import DtypeCatalog, classify
    from analyzer.facts.parse import parse_file

    r = line.record
    at = r.lineNumber - r.sourceCodeStart + 1
    found = _window_site(r.sourceCode, at, r.errorMessage, lambda src: parse_file(src, run.profile))
    if found is None:
        return None
    site, wrapped = found
    crate = line.facts.crate
    decision = classify(site, r.filePath, crate, catalog or DtypeCatalog(), run)
    if not decision.record or decision.category != line.facts.category:
        return None
    known = line.facts
    return known.model_copy(update={
        "macro": site.macro, "function": (site.function if not wrapped else "") or known.function,
        "impl": site.impl, "itemPath": site.item_path if not wrapped else known.itemPath, "context": site.context,
        "scrutinee": site.scrutinee,
        "pattern": decision.pattern, "enum": decision.enum, "handled": decision.handled,
        "rejected": [], "partial": decision.partial, "rule": DERIVED_FROM_WINDOW, "rules": decision.rules,
        "contentHash": content_hash(r.errorMessage, known.category, site.macro, site.scrutinee, decision.pattern,
                                    decision.handled, [])})


def _window_site(text: str, at: int, message: str, parse_file) -> tuple | None:
    """The call at line `at` of a source window, and whether it was read inside a wrapper. A
    window usually starts inside a function (its signature cut), which a parser cannot place; so
    the window is parsed as it is, then from each later line on, wrapped in a function with the
    braces it lacks on either side, until the call is found in a position other than `other`.
    At most one parse per window line (a window has 37)."""
    lines = text.split("\n")
    fallback = None
    for start in range(0, at):
        body = "\n".join(lines[start:])
        if start == 0:
            src, offset = body, 0
        else:
            depth = low = 0
            for ch in body:  # braces in strings or comments only make a parse fail: the next start is tried
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    low = min(low, depth)
            head = "fn __window() {\n" + "{\n" * -low
            src, offset = head + body + "\n" + "}" * (depth - low) + "\n}\n", head.count("\n")
        sites = [s for s in parse_file(src.encode("utf-8")).sites
                 if s.line == at - start + offset and s.message == message]
        if len(sites) != 1:
            continue
        if sites[0].context != "other":
            return sites[0], start > 0
        fallback = fallback or (sites[0], start > 0)
    return fallback
