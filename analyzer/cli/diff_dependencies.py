"""`burn-errors diff BASE HEAD --with-dependencies`: each dependency with a target profile is
diffed from the revision BASE's Cargo.lock pins to the one HEAD's pins (a pull request that bumps
cubecl shows the errors the bump adds and removes), matched within its own repository."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzer.app.dependencies import LOCKFILE
from analyzer.cli.common import dependencies_of
from analyzer.core.errors import UserError

if TYPE_CHECKING:
    from analyzer.features.diff import DiffResult


def dependency_diffs(git_repo, base_sha: str, head_sha: str, dependency_repos: tuple[str, ...], no_cache: bool,
                     jobs: int | None) -> list[tuple[DiffResult, dict]]:
    """(diff, what the result says of it) per dependency either side pins, by repository name."""
    from analyzer.features.diff import diff_shas

    deps = dependencies_of(git_repo, dependency_repos, no_cache)
    pinned = {which: {p.name: p for p in deps.pins(sha)} for which, sha in (("base", base_sha), ("head", head_sha))}
    names = sorted(pinned["base"].keys() | pinned["head"].keys())
    unknown = deps.unknown(names)
    if unknown:
        raise UserError(f"--dependency-repo {unknown}: neither revision's {LOCKFILE} pins such a "
                        f"dependency (they pin: {', '.join(names) or 'none with a target profile'})")
    parts: list[tuple[DiffResult, dict]] = []
    for name in names:
        pins = {w: pinned[w].get(name) for w in ("base", "head")}
        opened = {w: deps.open(p) for w, p in pins.items() if p is not None}
        dep_repo = (opened.get("head") or opened["base"])[0]  # one repository: both commits are in it
        shas = {w: opened[w][1] if w in opened else None for w in ("base", "head")}
        profile = next(p for p in pins.values() if p is not None).profile
        with deps.under(profile) as cache:
            result = diff_shas(dep_repo, shas["base"], shas["head"], cache=cache, jobs=jobs,
                               labels=tuple(p.rev if p else "(not pinned)" for p in pins.values()))  # type: ignore[arg-type]
        about = {"repo": name, "target": profile.name,
                 **{w: ({"sha": shas[w], "pinnedBy": p.to_json()} if p is not None else None) for w, p in pins.items()}}
        parts.append((result, about))
    return parts
