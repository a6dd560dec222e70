"""records.jsonl: one `{"record": ..., "analysis": ...}` object per line (read back by
analyzer.records.reader)."""

from __future__ import annotations

from analyzer.records.model import RecordLine


def dumps(lines: list[RecordLine]) -> str:
    return "".join(line.to_json_line() + "\n" for line in lines)
