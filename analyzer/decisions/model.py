"""What the classifier decides about one panic-family call."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Decision:
    record: bool
    category: str | None
    reason: str  # the rule id that decided
    rules: list[str]  # every rule that fired
    enum: str | None = None
    handled: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    pattern: str = ""
    catch_all: bool = False  # the panicking arm catches every other value (`_`, `dtype`, else)

