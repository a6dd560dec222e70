"""The text of one records.jsonl line: compact JSON, non-ASCII characters as they are.

The one place that spells this form. `RecordLine.to_json_line` writes with it, and the results
cache, which re-dates kept lines without importing the schema (pydantic) so a rerun stays light.
"""

from __future__ import annotations

import json


def dumps_line(value: dict) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
