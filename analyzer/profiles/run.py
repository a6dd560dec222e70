"""One command's run: the target profile it analyses under, made once by the command and handed
down the stages as a parameter. A run that analyses another repository on the way (a dependency
of the target, under `--with-dependencies`) makes a second `Run` for it; nothing swaps a target
in and out, so two runs in one process never read each other's conventions."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from analyzer.profiles import Profile


@dataclass(frozen=True)
class Run:
    profile: Profile

    def under(self, profile: Profile) -> Run:
        """This run's options with another target's profile: the run of a dependency."""
        return dataclasses.replace(self, profile=profile)
