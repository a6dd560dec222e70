"""What every rule module shares: the rule's shape, the positions a call can stand in, and the
checks more than one category reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from analyzer.decisions.call import Call
from analyzer.decisions.data import rule_data
from analyzer.profiles import Profile


def is_test_path(path: str, profile: Profile) -> bool:
    """A file of the target's test code (its profile's `tests.paths`)."""
    return bool(profile.test_path.search(path))


# The positions a call can stand in (SiteFacts.context); a rule names those it applies to.
ARM_POSITIONS = ("match-arm", "let-else", "if-let-else", "if-let")
BODY, CLOSURE, GUARD = ("body",), ("closure",), ("guard",)
EVERY_POSITION = (*ARM_POSITIONS, *BODY, *CLOSURE, *GUARD, "other")


@dataclass(frozen=True)
class Rule:
    """One rule of the classifier, its one entry in the registry.

    `decides` is a category (the rule makes the call a record of it) or `none` (the rule leaves
    the call out); `checks` says what it checks (the audit's `why`) and `example` shows a call it
    fires on; `positions` are the SiteFacts contexts it applies to; `reads` names the keys of
    queries/classifier.toml it reads (`target.KEY`: a key of the target profile's [dtypes]); its
    rule-test file under tests/rules/ is named after its id (`dtype/scrutinee` ->
    `dtype-scrutinee.toml`)."""

    id: str
    decides: str
    checks: str
    example: str
    applies: Callable[[Call], bool]
    positions: tuple[str, ...] = EVERY_POSITION
    reads: tuple[str, ...] = ()
    # An exclusion whose decision still says which dtypes the match's arms handle: no user
    # reaches the panic, but the coverage audit reads what the function does with each dtype.
    keeps_dtypes: bool = False

    @property
    def test(self) -> str:
        return self.id.replace("/", "-") + ".toml"


NONE = "none"


def unimplemented_macro(c: Call) -> bool:
    """unimplemented!/todo! (the rule data's `mode.macros`): the call says the code is not written."""
    return c.site.macro in rule_data().macros
