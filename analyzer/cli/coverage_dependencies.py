"""`burn-errors coverage --with-dependencies`: each dependency with a target profile whose
runtimes a backend crate runs on (the profile's `runtimes.backends`), analysed at the revision the
analysed repository's Cargo.lock pins (as `extract --with-dependencies` does), and its runtimes'
panicking cells shown beside those backends (analyzer/features/coverage/runtimes.py)."""

from __future__ import annotations

from analyzer import profiles
from analyzer.cli.common import analyse, dependencies_of


def dependency_limits(git_repo, sha: str, dependency_repos: tuple[str, ...], no_cache: bool,
                      collapse: bool = True) -> list:
    """The runtime limits of every pinned dependency that has runtimes, for the backends of the
    current profile that run on them."""
    from analyzer.features.coverage.runtimes import build_runtimes, runtime_cells, runtime_limits

    deps = dependencies_of(git_repo, dependency_repos, no_cache)
    own = profiles.current()
    found = deps.pins_named(sha)
    crates = [crate for crate, _ in own.runtimes.backends]
    out: list = []
    for pin in found:
        if not pin.profile.runtimes.rows:
            continue
        dep_repo, dep_sha = deps.open(pin)
        with deps.under(pin.profile) as cache:
            ex = analyse(dep_repo, dep_sha, cache)
            cells = runtime_cells(build_runtimes(ex.lines, collapse))
        out += runtime_limits(crates, own.runtimes.backends, pin.name, cells)
    return out
