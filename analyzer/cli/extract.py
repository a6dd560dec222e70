"""`burn-errors extract`: analyse a revision and write records.jsonl and manifest.json (and
sites.jsonl with --all-sites)."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

import click

from analyzer.cli.common import _STARTED, analyse, debug_option, opened, repo_options, sha_option
from analyzer.cli.previous import check_previous, check_repositories
from analyzer.core.wording import plural

@click.command()
@repo_options
@sha_option
@click.option("--out", "out_dir", default="output", show_default=True, type=click.Path(file_okay=False),
              help="Folder for records.jsonl and manifest.json.")
@click.option("--previous", type=click.Path(exists=True),
              help="Earlier records (records.jsonl, the published envelopes, or a folder of them): each "
                   "site found again keeps its id, slug, tags and first-seen revision, and its "
                   "annotations and contentChangedAt while its content is unchanged.")
@click.option("--allow-other-repo", is_flag=True,
              help="With --previous: let earlier records of another repository (the one a fork or a "
                   "renamed repository continues) continue as this repository's; refused otherwise.")
@click.option("--all-sites", is_flag=True,
              help="Also write sites.jsonl: every panic-family call with its category or the rule that "
                   "left it out (an audit of the classifier).")
@click.option("--with-dependencies", is_flag=True,
              help="Also analyse each dependency that has a target profile (cubecl) at the revision the "
                   "repository's Cargo.lock pins at REV, under its own profile: both repositories' "
                   "records in one records.jsonl, each dependency's revision in the manifest.")
@click.option("--dependency-repo", "dependency_repos", multiple=True, metavar="OWNER/NAME=PATH|URL",
              help="With --with-dependencies: read that dependency from this clone or URL instead of "
                   "cloning it from its profile's URL into the cache (repeatable).")
@click.option("--jobs", type=click.IntRange(1, 64), help="Parser processes (default: one per core).")
@debug_option
def extract(repo, rev, out_dir, previous, allow_other_repo, all_sites, with_dependencies, dependency_repos, no_cache,
            repo_name, jobs):
    """Find the sites and write OUT/records.jsonl and OUT/manifest.json.

    \b
    Examples:
      burn-errors extract                                  # burn at the pin, from GitHub
      burn-errors extract --repo ../burn --sha HEAD --out output/
      burn-errors extract --repo ../burn --previous old/records.jsonl --all-sites
      burn-errors extract --repo ../burn --sha HEAD --with-dependencies \\
          --dependency-repo tracel-ai/cubecl=../cubecl
    """
    from analyzer.core.errors import UserError
    from analyzer.core.outputs import ensure_writable_dir

    if allow_other_repo and not previous:
        raise UserError("--allow-other-repo lets --previous hold another repository's records; it needs --previous")
    if dependency_repos and not with_dependencies:
        raise UserError("--dependency-repo says where to read a dependency from; it needs --with-dependencies")
    out = Path(out_dir)
    with _removed_on_failure(out):
        ensure_writable_dir(out)
        if with_dependencies:
            from analyzer.cli.extract_dependencies import extract_with_dependencies
            extract_with_dependencies(out, repo, rev, previous, all_sites, dependency_repos, no_cache, repo_name,
                                      jobs, allow_other_repo)
        else:
            _extract(out, repo, rev, previous, all_sites, no_cache, repo_name, jobs, allow_other_repo)


def not_carried_text(entries: list[dict]) -> str:
    """annotations-not-carried.jsonl: one line per earlier record whose annotations this run did
    not hand on (analyzer/lineage/carry.py, not_carried_entry). Written on every run with
    --previous, empty when every annotation was carried, so the file beside the records is
    always this run's."""
    from analyzer.core.jsonlines import dumps_line
    return "".join(dumps_line(e) + "\n" for e in entries)


def annotations_kept(lines) -> int:
    """Records whose annotations were carried over: unchanged ones that had any to keep."""
    return sum(1 for ln in lines if ln.analysis.annotationStatus == "unchanged" and ln.record.is_annotated())


@contextlib.contextmanager
def _removed_on_failure(out: Path):
    """Folders of `out` this run creates are removed again, while empty, when it fails: a failed
    extract (an unknown revision, say) leaves no trace of itself."""
    created: list[Path] = []
    folder = out.absolute()
    try:
        while not folder.exists() and folder != folder.parent:
            created.append(folder)
            folder = folder.parent
    except OSError:  # a name the system cannot look up: creating it fails and says why
        created = []
    try:
        yield
    except BaseException:
        for made in created:  # deepest first; one that now holds anything stays
            with contextlib.suppress(OSError):
                made.rmdir()
        raise


def _extract(out: Path, repo, rev, previous, all_sites, no_cache, repo_name, jobs, allow_other_repo=False) -> None:
    from analyzer.core.outputs import write_files
    from analyzer.core.ui import summary
    from analyzer.profiles import current

    command = ["extract", *sys.argv[2:]]
    prev = None
    if previous:
        from analyzer.records import reader
        from analyzer.sinks import jsonl
        prev = reader.read(previous)
        check_previous(previous)
    with opened(repo, rev, repo_name, no_cache) as (git_repo, sha, cache):
        from analyzer.pipeline import results_cache

        if prev is not None:
            check_repositories(previous, prev, [git_repo.name], allow_other_repo)
        key = results_cache.extract_key(git_repo.name, sha, all_sites)
        hit = cache.get_result(key) if cache is not None and prev is None else None
        served = (results_cache.served_extract(hit, git_repo.origin, out, all_sites, command,
                                               time.perf_counter() - _STARTED, git_repo.name, sha, current(), rev)
                  if hit is not None else None)
        if hit is not None and served is None and cache is not None:
            cache.drop_result(key)  # damaged or tampered with: made again below
        if served is not None:
            files, man = served
            write_files(files)
            summary(man, [str(p) for p in files])
            return
        # The sinks (and with them pydantic) are imported after the analysis: extract imports the
        # record stage in a background thread while its parser workers run, which a top-level
        # import here would turn into time before the work starts.
        ex = analyse(git_repo, sha, cache, jobs, prev)
        from analyzer.sinks import audit
        from analyzer.records import reader
        from analyzer.sinks import jsonl
        from analyzer.pipeline import manifest

        man = manifest.build(ex, git_repo.origin, command, rev)
        records_text = jsonl.dumps(ex.lines)
        sites_text = audit.dumps(ex) if all_sites else None
        files = {out / results_cache.RECORDS_FILE: records_text, out / results_cache.MANIFEST_FILE: manifest.dumps(man)}
        if sites_text is not None:
            files[out / results_cache.SITES_FILE] = sites_text
        if prev is not None:
            files[out / results_cache.NOT_CARRIED_FILE] = not_carried_text(ex.not_carried)
        write_files(files)
        summary(man, [str(p) for p in files], previous=previous, annotations_kept=annotations_kept(ex.lines))
        unknown = (man.get("lineage") or {}).get("contentUnknownRecords") or []
        if unknown:
            click.echo(f"warning: {plural(len(unknown), 'earlier record')} without analysis, whose commit is not "
                       f"in the repository and whose source window does not hold the call: only "
                       f"{'its' if len(unknown) == 1 else 'their'} message and category can be compared "
                       f"({', '.join(r['id'] for r in unknown)})", err=True)
        if cache is not None and prev is None:
            results_cache.put_extract(cache, key, records_text, sites_text, man)
