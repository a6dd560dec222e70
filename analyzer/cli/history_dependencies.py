"""`burn-errors history --with-dependencies`: each revision's records extended with those of every
dependency with a target profile at the revision that revision's Cargo.lock pins, so the history
follows the pin as it moves and shows the records each bump added and removed. A revision without
a Cargo.lock pins nothing."""

from __future__ import annotations

import contextlib

from analyzer import profiles
from analyzer.cli.common import open_cache
from analyzer.cli.extract_dependencies import open_dependency
from analyzer.core.errors import UserError
from analyzer.features.history.model import Analysed
from analyzer.pipeline import dependencies


class DependencyRecords:
    """The `extend` step of a history: callable with (sha, the repository's records). Each
    dependency repository is opened once, however many revisions pin it."""

    def __init__(self, git_repo, dependency_repos: tuple[str, ...], no_cache: bool, jobs: int | None = None):
        self.git_repo, self.no_cache, self.jobs = git_repo, no_cache, jobs
        self.overrides = dependencies.parse_overrides(dependency_repos)
        own = profiles.current()
        self.targets = [profiles.load(n) for n in profiles.known() if n != own.name]
        self.opened: dict = {}  # repository name -> its GitRepository

    def __call__(self, sha: str, analysed: Analysed) -> Analysed:
        from analyzer.features.history.run import records_at

        if dependencies.LOCKFILE not in self.git_repo.read_files(sha, [dependencies.LOCKFILE]):
            return analysed
        found = [p for p in dependencies.pins(dependencies.read_lock(self.git_repo, sha), self.targets)
                 if p.name != self.git_repo.name]
        lines, scanned, parsed, cached, about = list(analysed.lines), analysed.files_scanned, analysed.parsed, \
            analysed.cached, []
        for pin in found:
            dep_repo, dep_sha = self._open(pin)
            with profiles.using(pin.profile):  # its conventions, links and facts cache
                cache = open_cache(self.no_cache)
                try:
                    dep = records_at(dep_repo, dep_sha, cache=cache, jobs=self.jobs)
                finally:
                    if cache is not None:
                        cache.close()
            lines += dep.lines
            scanned, parsed, cached = scanned + dep.files_scanned, parsed + dep.parsed, cached and dep.cached
            about.append({"repo": pin.name, "sha": dep_sha, "target": pin.profile.name, "pinnedBy": pin.to_json()})
        if not found:
            return analysed
        return Analysed(sorted(lines, key=dependencies.sort_key), scanned, parsed, cached, about)

    def _open(self, pin):
        """The dependency's repository and the pinned commit; the repository is opened (or
        fetched) again only when a later pin is not in it yet."""
        known = self.opened.get(pin.name)
        if known is not None:
            sha = known.try_resolve(pin.wanted())
            if sha is not None:
                return known, sha
        dep_repo, sha = open_dependency(pin, self.overrides, self.no_cache)
        self.opened[pin.name] = dep_repo
        return dep_repo, sha

    def check(self, shas: list[str]) -> None:
        """Before the history: a --dependency-repo no planned revision's lock file pins is a
        mistake (reading the lock files from git objects costs little)."""
        pinned: set[str] = set()
        for sha in shas:
            if dependencies.LOCKFILE in self.git_repo.read_files(sha, [dependencies.LOCKFILE]):
                with contextlib.suppress(UserError):  # a lock that does not parse skips its revision later
                    pinned |= {p.name for p in dependencies.pins(dependencies.read_lock(self.git_repo, sha),
                                                                 self.targets)}
        unknown = sorted(set(self.overrides) - pinned)
        if unknown:
            they = ", ".join(sorted(pinned)) or "none with a target profile"
            raise UserError(f"--dependency-repo {unknown[0]}: no planned revision's {dependencies.LOCKFILE} pins "
                            f"such a dependency (they pin: {they})")
