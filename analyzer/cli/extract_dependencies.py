"""`burn-errors extract --with-dependencies`: the repository, and each dependency with a target
profile at the revision its Cargo.lock pins (analyzer/pipeline/dependencies.py), into one
records.jsonl (by repository, then file and line) and one manifest that lists the dependencies.

Each repository is analysed under its own profile (its conventions, links, tags and facts
cache), and with --previous each continues only its own earlier records."""

from __future__ import annotations

import sys
from pathlib import Path

from analyzer.cli.common import analyse, dependencies_of, opened
from analyzer.cli.extract import annotations_kept
from analyzer.pipeline import dependencies
from analyzer.pipeline.dependencies import Pin

# Manifest keys of the run as a whole, which a dependency's entry does not repeat.
_RUN_KEYS = ("tool", "toolVersion", "schemaVersion", "command")


def extract_with_dependencies(out: Path, repo, rev, previous, all_sites, dependency_repos, no_cache, repo_name,
                              jobs, allow_other_repo: bool = False) -> None:
    from analyzer.cli.previous import check_previous, check_repositories
    from analyzer.core.outputs import write_files

    command = ["extract", *sys.argv[2:]]
    dependencies.parse_overrides(dependency_repos)  # a malformed --dependency-repo fails before the work
    prev = None
    if previous:
        from analyzer.records import reader
        prev = reader.read(previous)
        check_previous(previous)
    with opened(repo, rev, repo_name, no_cache) as (git_repo, sha, cache):
        deps = dependencies_of(git_repo, dependency_repos, no_cache)
        found = deps.pins_named(sha)
        names = [git_repo.name, *(p.name for p in found)]
        if prev is not None:
            check_repositories(previous, prev, names, allow_other_repo)
        # Every dependency is found before any analysis, so one that cannot be fetched fails fast.
        opened_deps = [(pin, *deps.open(pin)) for pin in found]
        main = analyse(git_repo, sha, cache, jobs, _own(prev, git_repo.name, names))
        origin = git_repo.origin
    runs = []  # (extraction, manifest entry) per dependency
    for pin, dep_repo, dep_sha in opened_deps:
        with deps.under(pin.profile) as dep_cache:  # its conventions, links, tags, and its facts cache
            ex = analyse(dep_repo, dep_sha, dep_cache, jobs, _own(prev, pin.name))
            runs.append((ex, _entry(pin, dep_repo, ex)))
    files, man = _outputs(out, main, origin, runs, all_sites, command, prev is not None, rev)
    write_files(files)
    _summary(man, [str(p) for p in files], previous, sum(annotations_kept(ex.lines) for ex in _all(main, runs)))


def _all(main, runs) -> list:
    """Every extraction of the run, by repository."""
    return sorted([main, *(ex for ex, _ in runs)], key=lambda ex: ex.repo)


def _own(prev, name: str, analysed: list[str] | None = None):
    """The earlier records of repository `name` (None without --previous): a record of one
    repository this run analyses never continues another's. The records of a repository it does
    not analyse (taken with --allow-other-repo) continue the main repository's, whose name
    comes first in `analysed`."""
    if prev is None:
        return None
    others = analysed is not None and analysed[0] == name
    return [ln for ln in prev if ln.record.repo == name or (others and ln.record.repo not in (analysed or ()))]


def _entry(pin: Pin, dep_repo, ex) -> dict:
    """A dependency's manifest entry: its repository, revision and how it was pinned, then what
    a manifest says of a run (counts, files, cache, timings) for it alone."""
    from analyzer.pipeline import manifest

    built = manifest.build(ex, dep_repo.origin)  # under the dependency's profile: its rules hash
    head = {"repo": ex.repo, "sha": ex.sha, "target": pin.profile.name, "pinnedBy": pin.to_json()}
    return {**head, **{k: v for k, v in built.items() if k not in _RUN_KEYS and k not in head}}


def _outputs(out: Path, main, origin: str, runs, all_sites: bool, command,
             with_previous: bool, rev: str) -> tuple[dict[Path, str], dict]:
    from analyzer.cli.extract import not_carried_text
    from analyzer.pipeline import manifest, results_cache
    from analyzer.sinks import audit, jsonl

    man = manifest.build(main, origin, command, rev)
    man["dependencies"] = [entry for _, entry in runs]
    extractions = _all(main, runs)
    lines = sorted((ln for ex in extractions for ln in ex.lines), key=dependencies.sort_key)
    files = {out / results_cache.RECORDS_FILE: jsonl.dumps(lines),
             out / results_cache.MANIFEST_FILE: manifest.dumps(man)}
    if with_previous:
        files[out / results_cache.NOT_CARRIED_FILE] = not_carried_text(
            [e for ex in extractions for e in ex.not_carried])
    if all_sites:
        files[out / results_cache.SITES_FILE] = "".join(audit.dumps(ex, with_repo=True) for ex in extractions)
    return files, man


def _summary(man: dict, written: list[str], previous, kept: int) -> None:
    from analyzer.core.ui import plural, say, summary

    for dep in man["dependencies"]:
        parts = ", ".join(f"{n} {c}" for c, n in dep["counts"].items())
        pinned = dep["pinnedBy"]
        how = (f"commit {pinned['rev'][:12]}" if pinned["kind"] == "git"
               else f"version {pinned['version']}, tag {pinned['tag']}")
        say(f"Dependency {dep['repo']}@{dep['sha'][:12]} (Cargo.lock pins {how}): "
            f"{plural(dep['panicCalls'], 'panic-family call')} in {plural(dep['filesScanned'], 'Rust file')}, "
            f"{plural(dep['records'], 'record')} ({parts})", True)
    summary(_run_wide(man), written, previous=previous, annotations_kept=kept)


def _run_wide(man: dict) -> dict:
    """The manifest as the closing summary reads it: the counts of every record written, every
    repository's (the manifest's own top-level counts are the repository's, each dependency's
    are in its entry), and the records of each repository."""
    parts = [man, *man["dependencies"]]
    view = dict(man)
    view["counts"] = {c: sum(p["counts"].get(c, 0) for p in parts) for c in man["counts"]}
    view["recordsByRepository"] = {p["repo"]: p["records"] for p in sorted(parts, key=lambda p: p["repo"])}
    if man.get("annotation"):
        view["annotation"] = {k: sum((p.get("annotation") or {}).get(k, 0) for p in parts) for k in man["annotation"]}
        view["annotationsNotCarried"] = sum(p.get("annotationsNotCarried") or 0 for p in parts)
    if man.get("lineage"):
        view["lineage"] = {k: sum((p.get("lineage") or {}).get(k, 0) for p in parts)
                           for k in ("id", "history", "function", "message", "window", "notFound")}
    return view
