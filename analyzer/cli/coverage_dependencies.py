"""`burn-errors coverage --with-dependencies`: each dependency with a target profile whose
runtimes a backend crate runs on (the profile's `runtimes.backends`), analysed at the revision the
analysed repository's Cargo.lock pins (as `extract --with-dependencies` does), and its runtimes'
panicking cells shown beside those backends (analyzer/features/coverage/runtimes.py)."""

from __future__ import annotations

from analyzer import profiles
from analyzer.cli.common import analyse, open_cache
from analyzer.cli.extract_dependencies import open_dependency
from analyzer.core.errors import UserError
from analyzer.pipeline import dependencies


def dependency_limits(git_repo, sha: str, dependency_repos: tuple[str, ...], no_cache: bool,
                      collapse: bool = True) -> list:
    """The runtime limits of every pinned dependency that has runtimes, for the backends of the
    current profile that run on them."""
    from analyzer.features.coverage.runtimes import build_runtimes, runtime_cells, runtime_limits

    overrides = dependencies.parse_overrides(dependency_repos)
    own = profiles.current()
    targets = [profiles.load(n) for n in profiles.known() if n != own.name]
    found = [p for p in dependencies.pins(dependencies.read_lock(git_repo, sha), targets) if p.name != git_repo.name]
    unknown = sorted(set(overrides) - {p.name for p in found})
    if unknown:
        pinned = ", ".join(p.name for p in found) or "none with a target profile"
        raise UserError(f"--dependency-repo {unknown[0]}: {dependencies.LOCKFILE} at {sha[:12]} pins no "
                        f"such dependency (it pins: {pinned})")
    crates = [crate for crate, _ in own.runtimes.backends]
    out: list = []
    for pin in found:
        if not pin.profile.runtimes.rows:
            continue
        dep_repo, dep_sha = open_dependency(pin, overrides, no_cache)
        with profiles.using(pin.profile):
            cache = open_cache(no_cache)
            try:
                ex = analyse(dep_repo, dep_sha, cache)
            finally:
                if cache is not None:
                    cache.close()
            cells = runtime_cells(build_runtimes(ex.lines, collapse))
        out += runtime_limits(crates, own.runtimes.backends, pin.name, cells)
    return out
