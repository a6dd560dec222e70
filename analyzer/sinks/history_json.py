"""`burn-errors history --format json`: the whole history as one JSON document (shape in
README.md): the revisions, what happened at each release, every lineage with its events, and
every coverage cell that flipped."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from analyzer import __version__
from analyzer.records.model import CONTENT_FIELDS
from analyzer.features.history.model import FLIP_KINDS, REMOVAL_KINDS, Event, History, Lineage, Removal, State
from analyzer.sinks import Options

FORMAT_VERSION = 1


def site(state: State) -> dict:
    return {"id": state.id, "message": state.message, "category": state.category, "macro": state.macro,
            "crate": state.crate, "function": state.function, "operation": state.operation,
            "filePath": state.file, "lineNumber": state.line, "githubUrl": state.url,
            "scrutinee": state.scrutinee, "pattern": state.pattern, "enum": state.enum,
            "handled": list(state.handled), "rejected": list(state.rejected), "reach": state.reach or None}


def removal(r: Removal | None) -> dict | None:
    return None if r is None else {"kind": r.kind, "reason": r.reason, "dtypes": list(r.dtypes)}


def event(history: History, e: Event) -> dict:
    out: dict = {"revision": history.label(e.revision), "kind": e.kind}
    if e.kind == "changed" and e.before is not None:
        out["fields"] = list(e.fields)
        out["before"] = {f: e.before.field(f) for f in e.fields}
        out["after"] = {f: e.state.field(f) for f in e.fields}
    if e.kind in ("changed", "moved") and e.before is not None:
        out["link"] = e.link
        out["from"] = {"filePath": e.before.file, "lineNumber": e.before.line}
        out["to"] = {"filePath": e.state.file, "lineNumber": e.state.line}
    if e.kind == "removed":
        out["removal"] = removal(e.removal)
    return out


def lineage(history: History, ln: Lineage) -> dict:
    return {"key": ln.key, "ids": ln.ids, "firstSeen": history.label(ln.first),
            # Seen at the first revision analysed: it may be older than that.
            "presentAtStart": ln.first == 0, "lastSeen": history.label(ln.last),
            "removedIn": history.label(ln.removed), "removal": removal(ln.removal),
            "changedIn": [history.label(e.revision) for e in ln.events if e.kind == "changed"],
            "site": site(ln.state), "events": [event(history, e) for e in ln.events]}


def release(history: History, index: int) -> dict:
    events = history.events_at(index)
    flips = history.flips_at(index)
    return {"revision": history.label(index), "previous": history.label(index - 1) if index else None,
            "new": [e.key for e in events["added"]],
            "changed": [e.key for e in events["changed"]],
            "moved": [e.key for e in events["moved"]],
            "removed": {k: [e.key for e in events["removed"] if e.removal and e.removal.kind == k]
                        for k in REMOVAL_KINDS},
            "cells": {k: sum(1 for f in flips if f.kind == k) for k in FLIP_KINDS}}


def sections(history: History) -> dict[str, Callable[[], object]]:
    """Each top-level key of the document and how to make its value (lists are made item by
    item when written, so the whole document never sits in memory as objects)."""
    return {
        "tool": lambda: {"name": "burn-errors", "version": __version__},
        "formatVersion": lambda: FORMAT_VERSION,
        "repo": lambda: history.repo,
        "contentFields": lambda: list(CONTENT_FIELDS),
        "revisions": lambda: ({"label": r.label, "sha": r.sha, "date": r.date, "tag": r.is_tag,
                               "records": r.records, "counts": r.counts, "backends": r.backends,
                               "filesScanned": r.files_scanned, "filesReadAfresh": r.parsed,
                               "resultsCache": r.cached, "seconds": r.seconds,
                               **({"dependencies": r.dependencies} if r.dependencies else {})}
                              for r in history.revisions),
        "skipped": lambda: ({"label": s.label, "reason": s.reason} for s in history.skipped),
        "leftOut": lambda: history.left_out,
        "summary": history.summary,
        "releases": lambda: (release(history, i) for i in range(1, len(history.revisions))),
        "lineages": lambda: (lineage(history, ln) for ln in history.lineages),
        "cells": lambda: ({"crate": c["crate"], "operation": c["operation"], "dtype": c["dtype"],
                           "enum": c["enum"], "fixedIn": c["fixedIn"], "regressedIn": c["regressedIn"],
                           "changes": [{"revision": history.label(f.revision), "from": f.before, "to": f.after,
                                        "kind": f.kind} for f in c["flips"]]}
                          for c in history.cells()),
        "timings": lambda: {"total": history.seconds},
    }


def build(history: History) -> dict:
    """The whole document as one dict."""
    out = {}
    for key, make in sections(history).items():
        value = make()
        out[key] = list(value) if isinstance(value, Iterator) else value
    return out


def render(history: History, options: Options) -> str:
    """The document with one line per top-level value and per item of a list (a lineage, a
    release, a cell): readable, easy to grep, and written item by item."""
    chunks = ["{"]
    for n, (key, make) in enumerate(sections(history).items()):
        value = make()
        head = ("," if n else "") + "\n  " + json.dumps(key) + ": "
        if isinstance(value, (Iterator, list)):
            items = [_compact(x) for x in value]
            chunks.append(head + ("[\n    " + ",\n    ".join(items) + "\n  ]" if items else "[]"))
        else:
            chunks.append(head + _compact(value))
    chunks.append("\n}\n")
    return "".join(chunks)


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
