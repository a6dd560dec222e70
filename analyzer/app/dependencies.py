"""`--with-dependencies`, as every command follows it: the dependencies with a target profile
that a revision's Cargo.lock pins (analyzer/pipeline/dependencies.py), each opened from
`--dependency-repo` or its profile's repository, and analysed under its own profile (its
conventions, links and facts cache). What a command does with them (extract their records, diff
them, follow them through a history, show their runtimes' limits) is its own."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from analyzer import profiles
from analyzer.core.errors import UserError
from analyzer.pipeline import dependencies
from analyzer.pipeline.dependencies import Pin

LOCKFILE = dependencies.LOCKFILE


class Dependencies:
    """The dependencies a run follows. `open_repo(spec, name, want)` opens (or fetches) a
    repository and `open_cache()` the facts cache of the current profile, or None: the command's
    own, so its options (--no-cache) and its warnings apply to the dependencies too. Each
    dependency repository is opened once, however many revisions pin it."""

    def __init__(self, git_repo, dependency_repos: tuple[str, ...], open_repo: Callable[[str, str, str], Any],
                 open_cache: Callable[[], Any]):
        self.git_repo = git_repo
        self.overrides = dependencies.parse_overrides(dependency_repos)
        own = profiles.current()
        self.targets = [profiles.load(n) for n in profiles.known() if n != own.name]
        self._open_repo, self._open_cache = open_repo, open_cache
        self.opened: dict[str, Any] = {}  # repository name -> its repository, as each is opened

    def pins(self, sha: str) -> list[Pin]:
        """The pins of `sha`'s lock file with a target profile, the repository's own left out."""
        return [p for p in dependencies.pins(dependencies.read_lock(self.git_repo, sha), self.targets)
                if p.name != self.git_repo.name]

    def pins_named(self, sha: str) -> list[Pin]:
        """`pins(sha)`, refused in one line when a --dependency-repo names none of them."""
        found = self.pins(sha)
        unknown = self.unknown(p.name for p in found)
        if unknown:
            pinned = ", ".join(p.name for p in found) or "none with a target profile"
            raise UserError(f"--dependency-repo {unknown}: {LOCKFILE} at {sha[:12]} pins no "
                            f"such dependency (it pins: {pinned})")
        return found

    def has_lock(self, sha: str) -> bool:
        return LOCKFILE in self.git_repo.read_files(sha, [LOCKFILE])

    def unknown(self, pinned: Iterable[str]) -> str | None:
        """The first --dependency-repo naming none of the repositories `pinned`, or None."""
        return next(iter(sorted(set(self.overrides) - set(pinned))), None)

    def open(self, pin: Pin):
        """(repository, full sha) of a pinned dependency: from --dependency-repo, else cloned or
        fetched into the cache from its URL, again only when a later pin is not in it yet; a
        one-line error naming --dependency-repo otherwise."""
        known = self.opened.get(pin.name)
        if known is not None:
            sha = known.try_resolve(pin.wanted())
            if sha is not None:
                return known, sha
        hint = f"pass --dependency-repo {pin.name}=PATH|URL naming a clone or URL that holds it"
        if pin.foreign and pin.name not in self.overrides:
            raise UserError(f"{LOCKFILE} pins {pin.name} from {pin.foreign!r}, not from its profile's repository "
                            f"{pin.profile.repository.url}; a source a lock file names is never fetched: {hint} if "
                            f"you trust it")
        spec = self.overrides.get(pin.name, pin.url)
        with profiles.using(pin.profile):
            try:
                dep_repo = self._open_repo(spec, pin.name, pin.wanted())
            except UserError as e:
                reason = str(e).split("; ", 1)[0]
                raise UserError(f"cannot fetch the dependency {pin.name} ({pin.describe()}): {reason}; "
                                f"{hint}") from None
        sha = dep_repo.try_resolve(pin.wanted())
        if sha is None:
            raise UserError(f"the dependency {pin.name} at {spec} has no "
                            f"{pin.rev[:12] if pin.kind == 'git' else pin.rev} ({pin.describe()}); {hint}")
        self.opened[pin.name] = dep_repo
        return dep_repo, sha

    @contextlib.contextmanager
    def under(self, profile) -> Iterator[Any]:
        """The dependency's profile current and its facts cache (or None) open, closed on leaving."""
        with profiles.using(profile):
            cache = self._open_cache()
            try:
                yield cache
            finally:
                if cache is not None:
                    cache.close()
