"""The text of one records.jsonl line: compact JSON, non-ASCII characters as they are.

The one place that spells this form. `RecordLine.to_json_line` writes with it, and the results
cache, which re-dates kept lines without importing the schema (pydantic) so a rerun stays light.
"""

from __future__ import annotations

import json
import re


def dumps_line(value: dict) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def string_members(*names: str) -> re.Pattern[str]:
    """A member `"name":"..."` (any of `names`, the name as group 1) of a line in this form whose
    value is a string without quotes or escapes, such as a date. Inside a JSON string every quote
    is escaped, so the pattern meets members only, never text within a value."""
    return re.compile('"(' + "|".join(re.escape(n) for n in names) + ')":"[^"\\\\]*"')
