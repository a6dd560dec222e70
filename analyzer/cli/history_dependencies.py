"""`burn-errors history --with-dependencies`: each revision's records extended with those of every
dependency with a target profile at the revision that revision's Cargo.lock pins, so the history
follows the pin as it moves and shows the records each bump added and removed. A revision without
a Cargo.lock pins nothing."""

from __future__ import annotations

import contextlib

from analyzer.app.dependencies import LOCKFILE
from analyzer.cli.common import dependencies_of
from analyzer.core.errors import UserError
from analyzer.features.history.model import Analysed
from analyzer.pipeline.dependencies import sort_key


class DependencyRecords:
    """The `extend` step of a history: callable with (sha, the repository's records)."""

    def __init__(self, git_repo, dependency_repos: tuple[str, ...], no_cache: bool, jobs: int | None = None):
        self.git_repo, self.jobs = git_repo, jobs
        self.deps = dependencies_of(git_repo, dependency_repos, no_cache)
        self.opened = self.deps.opened  # repository name -> its repository, as each is opened

    def __call__(self, sha: str, analysed: Analysed) -> Analysed:
        from analyzer.features.history.run import records_at

        if not self.deps.has_lock(sha):
            return analysed
        found = self.deps.pins(sha)
        lines, scanned, parsed, cached, about = list(analysed.lines), analysed.files_scanned, analysed.parsed, \
            analysed.cached, []
        for pin in found:
            dep_repo, dep_sha = self.deps.open(pin)
            with self.deps.under(pin.profile) as cache:  # its conventions, links and facts cache
                dep = records_at(dep_repo, dep_sha, cache=cache, jobs=self.jobs)
            lines += dep.lines
            scanned, parsed, cached = scanned + dep.files_scanned, parsed + dep.parsed, cached and dep.cached
            about.append({"repo": pin.name, "sha": dep_sha, "target": pin.profile.name, "pinnedBy": pin.to_json()})
        if not found:
            return analysed
        return Analysed(sorted(lines, key=sort_key), scanned, parsed, cached, about)

    def check(self, shas: list[str]) -> None:
        """Before the history: a --dependency-repo no planned revision's lock file pins is a
        mistake (reading the lock files from git objects costs little)."""
        pinned: set[str] = set()
        for sha in shas:
            if self.deps.has_lock(sha):
                with contextlib.suppress(UserError):  # a lock that does not parse skips its revision later
                    pinned |= {p.name for p in self.deps.pins(sha)}
        unknown = self.deps.unknown(pinned)
        if unknown:
            they = ", ".join(sorted(pinned)) or "none with a target profile"
            raise UserError(f"--dependency-repo {unknown}: no planned revision's {LOCKFILE} pins "
                            f"such a dependency (they pin: {they})")
