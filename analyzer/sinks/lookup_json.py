"""`burn-errors lookup --format json`: what was read out of the paste (`query`: message, file,
line, column, and `origin`, the release its path names, with `repoPath`, the file's path in that
repository), which records were read (`answeredFrom`), the number of matches and the matches
shown, each a records.jsonl line with its rank, how much of the message it spells out and where
it is relative to the panic; `shared`, the crates of the records a message without a deciding
location is shared by; when none matches, the closest records (`closest`, with the share of
words their message has in common with the panic's), a matching record of a nearby release
(`otherRelease`), and the crates.io release a panic's path names."""

from __future__ import annotations

import json

from analyzer.features.lookup import Answer
from analyzer.sinks import Options


def render(answer: Answer, options: Options) -> str:
    result, shown, source, elsewhere = answer.result, answer.shown, answer.source, answer.elsewhere
    panic, place = result.panic, result.place
    return json.dumps({
        "query": {"message": panic.message, "path": panic.path, "line": panic.line, "column": panic.column},
        "origin": place.origin.to_json() if place.origin is not None else None,
        "repoPath": place.repo_path,
        "answeredFrom": source.to_json() if source is not None else None,
        "notes": list(source.notes) if source is not None else [],
        "total": len(result.matches), "placeholderOnly": result.placeholder_only,
        "shared": [{"crate": c, "records": n} for c, n in result.shared],
        "matches": [m.to_json(i) for i, m in enumerate(shown, start=1)],
        "closest": [n.to_json(i) for i, n in enumerate(result.closest, start=1)],
        "otherRelease": elsewhere.to_json() if elsewhere is not None else None,
        "release": ({"crate": result.release[0], "version": result.release[1]} if result.release else None)},
        indent=2,
        # On a terminal, \u escapes: JSON leaves C1 controls (an 8-bit ESC) raw otherwise.
        ensure_ascii=options.to_terminal) + "\n"
