"""`burn-errors lookup --format json`: the query, the number of matches and the matches shown,
each a records.jsonl line with its rank, how much of the message it spells out and where it is
relative to the panic; when none matches, the closest records (`closest`, with the share of words
their message has in common with the panic's); and the crates.io release a panic's path names."""

from __future__ import annotations

import json

from analyzer.features.lookup import Lookup, Match


def dumps(result: Lookup, shown: list[Match], to_terminal: bool = False) -> str:
    panic = result.panic
    return json.dumps({
        "query": {"message": panic.message, "path": panic.path, "line": panic.line, "column": panic.column},
        "total": len(result.matches), "placeholderOnly": result.placeholder_only,
        "matches": [m.to_json(i) for i, m in enumerate(shown, start=1)],
        "closest": [n.to_json(i) for i, n in enumerate(result.closest, start=1)],
        "release": ({"crate": result.release[0], "version": result.release[1]} if result.release else None)},
        indent=2,
        # On a terminal, \u escapes: JSON leaves C1 controls (an 8-bit ESC) raw otherwise.
        ensure_ascii=to_terminal) + "\n"
