"""`burn-errors diff --format json`: the whole diff as one JSON document (shape in README.md).

Each site is a compact summary, not the full 32-key record: what a CI step or a script needs to
say what changed and where, with the pinned link. `changed` and `moved` hold both sides.
"""

from __future__ import annotations

import json

from analyzer import __version__
from analyzer.features.diff import Change, Contradiction, DiffResult, Side
from analyzer.records.model import RecordLine
from analyzer.sinks import Options


def site(line: RecordLine) -> dict:
    r, a = line.record, line.facts
    return {"id": r.id, "message": r.errorMessage, "category": a.category, "crate": a.crate,
            "function": a.function, "operation": a.operation, "filePath": r.filePath,
            "lineNumber": r.lineNumber, "githubUrl": r.githubUrl, "pattern": a.pattern,
            "enum": a.enum, "handled": list(a.handled), "rejected": list(a.rejected),
            "reach": a.reach, "preemptedBy": [p.model_dump() for p in a.preemptedBy]}


def change(c: Change) -> dict:
    return {"id": c.id, "fields": c.fields, "lineage": c.lineage, "base": site(c.base), "head": site(c.head)}


def contradiction(c: Contradiction) -> dict:
    return {"crate": c.crate, "dtype": c.dtype, "advertised": c.advertised, "where": c.where,
            ("panicsIn" if c.advertised else "handledIn"): list(c.operations)}


def side(s: Side) -> dict:
    out: dict[str, object] = {"label": s.label, "source": s.source, "repo": s.repo, "sha": s.sha,
                              "records": s.records}
    if s.source == "git":
        out["filesScanned"] = s.files_scanned
        out["cache"] = {"hits": s.cache_hits, "misses": s.cache_misses}
        out["seconds"] = s.seconds
        out["unread"] = [{"path": e["path"], "reason": e["reason"], "whole": e["whole"]} for e in s.unread]
    return out


def build(result: DiffResult, fail_on: list[str]) -> dict:
    failed = result.failed(fail_on)
    out: dict = {
        "tool": {"name": "burn-errors", "version": __version__},
        "repo": result.repo,
        "base": side(result.base),
        "head": side(result.head),
        "summary": result.counts(),
        "added": [site(x) for x in result.added],
        "removed": [site(x) for x in result.removed],
        "changed": [change(c) for c in result.changed],
        "moved": [change(c) for c in result.moved],
        # Changed sites a user reaches at head that an earlier refusal preempted at base.
        "nowReachable": [c.id for c in result.now_reachable],
        "flipped": [{"crate": f.crate, "operation": f.operation, "dtype": f.dtype, "base": f.base,
                     "head": f.head} for f in result.flipped],
        "claims": {"new": [contradiction(c) for c in result.new_contradictions],
                   "fixed": [contradiction(c) for c in result.fixed_contradictions]},
        # The head revision's files not read whole (skipped, or read in part): sites may hide in
        # them. `unverified`: base sites in those files, neither removed nor kept.
        "unread": [{"path": e["path"], "reason": e["reason"], "whole": e["whole"]} for e in result.unread],
        # Unread at base too, for the same reason, in a crate where nothing changed: listed, never failing.
        "unreadUnchanged": [{"path": e["path"], "reason": e["reason"], "whole": e["whole"]}
                            for e in result.standing_unread],
        "unverified": [site(x) for x in result.unverified],
        # Nothing added, removed, changed or flipped, no claim contradiction new or fixed and no
        # head file left unread: a pull-request workflow posts no comment.
        "quiet": result.quiet,
        "failOn": [k for k in fail_on if k != "none"],
        "failed": failed,
        "timings": result.timings,
    }
    if result.dependencies:
        # Sites of several repositories: each says whose it is, and each dependency its pins.
        out["dependencies"] = result.dependencies
        lines = {"added": result.added, "removed": result.removed, "unverified": result.unverified}
        for key, items in lines.items():
            for entry, line in zip(out[key], items):
                entry["repo"] = line.record.repo
        for key, changes in {"changed": result.changed, "moved": result.moved}.items():
            for entry, c in zip(out[key], changes):
                entry["repo"] = c.head.record.repo
    return out


def render(result: DiffResult, options: Options) -> str:
    return json.dumps(build(result, list(options.fail_on)), indent=2, ensure_ascii=False) + "\n"
