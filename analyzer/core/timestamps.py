"""Record dates: UTC, ISO 8601 with milliseconds and `Z`, like the published records."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_time(when: datetime) -> str:
    """`when` (an aware time) as a record date: 2026-01-31T12:00:00.000Z."""
    when = when.astimezone(timezone.utc)
    return (f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when.hour:02d}:{when.minute:02d}:"
            f"{when.second:02d}.{when.microsecond // 1000:03d}Z")


def utc_now() -> str:
    return utc_time(datetime.now(timezone.utc))
