"""`burn-errors extract --with-dependencies`: the repository, and each dependency with a target
profile at the revision its Cargo.lock pins (analyzer/pipeline/dependencies.py), into one
records.jsonl (by repository, then file and line) and one manifest that lists the dependencies.

Each repository is analysed under its own profile (its conventions, links, tags and facts
cache), and with --previous each continues only its own earlier records."""

from __future__ import annotations

import sys
from pathlib import Path

from analyzer import profiles
from analyzer.cli.common import analyse, open_cache, open_repo, opened
from analyzer.core.errors import UserError
from analyzer.pipeline import dependencies
from analyzer.pipeline.dependencies import Pin

# Manifest keys of the run as a whole, which a dependency's entry does not repeat.
_RUN_KEYS = ("tool", "toolVersion", "schemaVersion", "command")


def extract_with_dependencies(out: Path, repo, rev, previous, all_sites, dependency_repos, no_cache, repo_name,
                              jobs) -> None:
    from analyzer.cli.previous import check_previous
    from analyzer.core.outputs import write_files

    command = ["extract", *sys.argv[2:]]
    overrides = dependencies.parse_overrides(dependency_repos)
    prev = None
    if previous:
        from analyzer.records import reader
        prev = reader.read(previous)
        check_previous(previous)
    own = profiles.current()
    targets = [profiles.load(n) for n in profiles.known() if n != own.name]
    with opened(repo, rev, repo_name, no_cache) as (git_repo, sha, cache):
        lock = dependencies.read_lock(git_repo, sha)
        found = [p for p in dependencies.pins(lock, targets) if p.name != git_repo.name]
        unknown = sorted(set(overrides) - {p.name for p in found})
        if unknown:
            pinned = ", ".join(p.name for p in found) or "none with a target profile"
            raise UserError(f"--dependency-repo {unknown[0]}: {dependencies.LOCKFILE} at {sha[:12]} pins no "
                            f"such dependency (it pins: {pinned})")
        # Every dependency is found before any analysis, so one that cannot be fetched fails fast.
        opened_deps = [(pin, *open_dependency(pin, overrides, no_cache)) for pin in found]
        main = analyse(git_repo, sha, cache, jobs, _own(prev, git_repo.name))
        origin = git_repo.origin
    runs = []  # (extraction, manifest entry) per dependency
    for pin, dep_repo, dep_sha in opened_deps:
        with profiles.using(pin.profile):  # its conventions, links, tags, and its facts cache
            dep_cache = open_cache(no_cache)
            try:
                ex = analyse(dep_repo, dep_sha, dep_cache, jobs, _own(prev, pin.name))
            finally:
                if dep_cache is not None:
                    dep_cache.close()
            runs.append((ex, _entry(pin, dep_repo, ex)))
    files, man = _outputs(out, main, origin, runs, all_sites, command)
    write_files(files)
    _summary(man, [str(p) for p in files], previous)


def _own(prev, name: str):
    """The earlier records of repository `name` (None without --previous): a record of one
    repository never continues another's."""
    if prev is None:
        return None
    return [ln for ln in prev if ln.record.repo == name]


def open_dependency(pin: Pin, overrides: dict[str, str], no_cache: bool):
    """(repository, full sha) of a pinned dependency: from --dependency-repo, else cloned or
    fetched into the cache from its URL; a one-line error naming --dependency-repo otherwise."""
    hint = (f"pass --dependency-repo {pin.name}=PATH|URL naming a clone or URL that holds it")
    if pin.foreign and pin.name not in overrides:
        raise UserError(f"{dependencies.LOCKFILE} pins {pin.name} from {pin.foreign!r}, not from its profile's "
                        f"repository {pin.profile.repository.url}; a source a lock file names is never fetched: "
                        f"{hint} if you trust it")
    spec = overrides.get(pin.name, pin.url)
    with profiles.using(pin.profile):
        try:
            dep_repo = open_repo(spec, pin.name, no_cache, want=pin.wanted())
        except UserError as e:
            reason = str(e).split("; ", 1)[0]
            raise UserError(f"cannot fetch the dependency {pin.name} ({pin.describe()}): {reason}; {hint}") from None
    sha = dep_repo.try_resolve(pin.wanted())
    if sha is None:
        raise UserError(f"the dependency {pin.name} at {spec} has no {pin.rev[:12] if pin.kind == 'git' else pin.rev} "
                        f"({pin.describe()}); {hint}")
    return dep_repo, sha


def _entry(pin: Pin, dep_repo, ex) -> dict:
    """A dependency's manifest entry: its repository, revision and how it was pinned, then what
    a manifest says of a run (counts, files, cache, timings) for it alone."""
    from analyzer.pipeline import manifest

    built = manifest.build(ex, dep_repo.origin)  # under the dependency's profile: its rules hash
    head = {"repo": ex.repo, "sha": ex.sha, "target": pin.profile.name, "pinnedBy": pin.to_json()}
    return {**head, **{k: v for k, v in built.items() if k not in _RUN_KEYS and k not in head}}


def _outputs(out: Path, main, origin: str, runs, all_sites: bool, command) -> tuple[dict[Path, str], dict]:
    from analyzer.pipeline import manifest, results_cache
    from analyzer.sinks import audit, jsonl

    man = manifest.build(main, origin, command)
    man["dependencies"] = [entry for _, entry in runs]
    extractions = sorted([main, *(ex for ex, _ in runs)], key=lambda ex: ex.repo)
    lines = sorted((ln for ex in extractions for ln in ex.lines), key=dependencies.sort_key)
    files = {out / results_cache.RECORDS_FILE: jsonl.dumps(lines),
             out / results_cache.MANIFEST_FILE: manifest.dumps(man)}
    if all_sites:
        files[out / results_cache.SITES_FILE] = "".join(audit.dumps(ex, with_repo=True) for ex in extractions)
    return files, man


def _summary(man: dict, written: list[str], previous) -> None:
    from analyzer.core.ui import plural, say, summary

    for dep in man["dependencies"]:
        parts = ", ".join(f"{n} {c}" for c, n in dep["counts"].items())
        pinned = dep["pinnedBy"]
        how = (f"commit {pinned['rev'][:12]}" if pinned["kind"] == "git"
               else f"version {pinned['version']}, tag {pinned['tag']}")
        say(f"Dependency {dep['repo']}@{dep['sha'][:12]} (Cargo.lock pins {how}): "
            f"{plural(dep['panicCalls'], 'panic-family call')} in {plural(dep['filesScanned'], 'Rust file')}, "
            f"{plural(dep['records'], 'record')} ({parts})", True)
    summary(man, written, previous=previous)
