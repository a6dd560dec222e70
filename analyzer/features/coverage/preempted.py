"""Cells that panic only behind an earlier refusal: every record a panicking cell panics at is
preempted (`analysis.reach`), so a user meets the earlier refusals first. The cell keeps its
status (the operation does panic there) and says which refusals come first, linked."""

from __future__ import annotations

from collections.abc import Iterable

from analyzer.features.coverage.model import PANICS, PARTIAL, Cell, Preempted, Site


def mark_preempted(cells: Iterable[Cell], lines) -> None:
    """Mark each panicking cell all of whose panicking records `lines` (the records the matrix
    is built from) says are preempted, with the earlier refusals' sites."""
    lines = list(lines)
    reach = {ln.record.id: ln.facts for ln in lines if ln.facts.reach == "preempted"}
    if not reach:
        return
    earlier = {p.id for a in reach.values() for p in a.preemptedBy if p.id}
    known = {ln.record.id: Site(ln.record.id, ln.record.filePath, ln.record.lineNumber, ln.facts.function,
                                ln.record.githubUrl, ln.facts.pattern, ln.record.errorMessage)
             for ln in lines if ln.record.id in earlier}
    for cell in cells:
        if cell.status not in (PANICS, PARTIAL):
            continue
        panicking = [e.site for e in cell.evidence if e.status == PANICS] or cell.sites
        if not panicking or any(s.record_id not in reach for s in panicking):
            continue
        out: dict[tuple[str, str], Preempted] = {}
        for s in panicking:
            for p in reach[s.record_id].preemptedBy:
                out.setdefault((p.why, p.id or ""), Preempted(p.why, known.get(p.id) if p.id else None))
        cell.preempted = list(out.values())
