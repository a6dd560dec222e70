"""`burn-errors lookup --format json`: the query, the number of matches and the matches shown,
each a records.jsonl line with its rank, how much of the message it spells out and where it is
relative to the panic."""

from __future__ import annotations

import json

from analyzer.features.lookup import Lookup, Match


def dumps(result: Lookup, shown: list[Match], to_terminal: bool = False) -> str:
    panic = result.panic
    return json.dumps({
        "query": {"message": panic.message, "path": panic.path, "line": panic.line, "column": panic.column},
        "total": len(result.matches), "placeholderOnly": result.placeholder_only,
        "matches": [m.to_json(i) for i, m in enumerate(shown, start=1)]}, indent=2,
        # On a terminal, \u escapes: JSON leaves C1 controls (an 8-bit ESC) raw otherwise.
        ensure_ascii=to_terminal) + "\n"
