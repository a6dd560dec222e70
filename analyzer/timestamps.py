"""Record dates: UTC, ISO 8601 with milliseconds and `Z`, like the published records."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_now() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
