"""`burn-errors lookup`: which record a pasted panic comes from, answered from the records of the
release the panic names (analyzer/features/lookup.py reads the paste and ranks the records).

Without --records, the records are those of a repository at a revision, made by the normal
extract path and kept in the results cache under the same key `extract` uses, so a lookup at a
revision already extracted (by either command) reads no source. The revision is the one the
panic's path names (a registry checkout's release tag, a git checkout's commit), else --sha,
else the target's pin; the repository is the one of the profile that published the path's crate
(burn, or a dependency such as cubecl), --repo for the target's own.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from analyzer import profiles
from analyzer.cli.common import FormatChoice, debug_option, open_cache, open_repo
from analyzer.features.lookup import Elsewhere, Source
from analyzer.core.errors import CheckFailed, UserError
from analyzer.core.safe import terminal_text
from analyzer.core.wording import plural
from analyzer.profiles import Profile
from analyzer.sinks import Options, formats

# The key the Cargo.toml package names of a revision are kept under in the results cache.
_FOLDERS_KIND = "package-folders"


def _target_profile(ctx: click.Context, param: click.Parameter, value: str) -> Profile:
    """The `--target` profile, current for the rest of the command (the extract path reads it)."""
    profile = profiles.load(value)
    ctx.with_resource(profiles.using(profile))
    return profile


@click.command()
@click.argument("message")
@click.option("--records", type=click.Path(),
              help="Answer from this records file instead of extracting the panic's release.")
@click.option("--repo", metavar="URL|PATH",
              help="The target's repository to extract the panic's release from: a git URL (mirrored once "
                   "into the cache) or a local clone (default: the target's repository).")
@click.option("--sha", "rev", metavar="REV",
              help="The revision to answer at when the panic's path names none (a local clone's path, a "
                   "message alone). Default: the target's pin.")
@click.option("--dependency-repo", "dependency_repos", multiple=True, metavar="OWNER/NAME=PATH|URL",
              help="Where to read a dependency's repository (cubecl) when the panic's path is one of its "
                   "crates (repeatable; default: its profile's URL, mirrored into the cache).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the cache folder.")
@click.option("--format", "fmt", type=FormatChoice("lookup"), default="text", show_default=True)
@click.option("--limit", type=click.IntRange(0), default=5, show_default=True,
              help="Show at most this many matches (0: all).")
@click.option("--target", default=profiles.DEFAULT, show_default=True, metavar="NAME|FILE", is_eager=True,
              callback=_target_profile,
              help="The target profile whose repository, pin and packages the lookup starts from.")
@debug_option
def lookup(message, records, repo, rev, dependency_repos, no_cache, fmt, limit, target):
    """Find the record a runtime panic comes from.

    MESSAGE is the panic as it was printed (`thread 'main' panicked at FILE:LINE:COL:` and the
    message; a thread id, a logger's prefix, cargo's indentation, a bare `panicked at` or the
    old `panicked at 'message', FILE:LINE:COL` form; a backtrace after it), the message alone, or
    `-` to read it from standard input. The release comes from the path: a registry checkout
    (`.../burn-ndarray-0.19.0/src/...`) is that version's release tag, a git checkout
    (`.../git/checkouts/burn-<hash>/<commit>/...`) that commit; the records are that revision's,
    extracted once and then kept in the cache. The record at the panic's file and line comes
    first, then the one that spells out the most of the message. Exit 1 when no record matches.

    \b
    Examples:
      cargo run 2>&1 | burn-errors lookup -
      burn-errors lookup "$(cat panic.txt)" --repo ../burn
      burn-errors lookup 'not implemented' --sha v0.19.0 --format json
      burn-errors lookup - --records output/records.jsonl < panic.txt
    """
    from analyzer.features import lookup as lk

    if records and (repo or rev or dependency_repos):
        raise UserError("--records answers from that file; --repo, --sha and --dependency-repo choose a "
                        "revision to extract instead: give one or the other")
    text = sys.stdin.read() if message == "-" else message
    panic = lk.parse_panic(text)
    if not panic.message.strip():
        raise UserError("the panic message is empty; give the text after `panicked at ...:`")
    targets = [target, *(profiles.load(n) for n in profiles.known() if n != target.name)]
    origins = lk.origins_of(panic.path, targets) if panic.path else []
    origin = origins[0] if origins else None
    elsewhere = None
    if records:
        lines = _read_records(records)
        source = _file_source(records, lines, origin)
        result = lk.lookup(panic, lines, lk.Place(origin))
    else:
        result, source, elsewhere = _at_release(panic, origins, target, targets, repo, rev, dependency_repos,
                                                no_cache)
    if result.bad_regex:
        where = source.records_file or source.describe()
        one = len(result.bad_regex) == 1
        click.echo(terminal_text(f"note: {plural(len(result.bad_regex), 'record')} in {where} "
                                 f"{'has' if one else 'have'} "
                                 f"a messageRegex that is not of the shape extract writes (`^`, escaped text and "
                                 f"`.*?`, `$`) and {'was' if one else 'were'} skipped (first: {result.bad_regex[0]})",
                                 one_line=True), err=True)
    shown = result.matches if limit == 0 else result.matches[:limit]
    document = formats("lookup")[fmt].render(lk.Answer(result, shown, source, elsewhere),
                                              Options(to_terminal=sys.stdout.isatty()))
    if document:
        click.echo(document, nl=False)
    if not result.matches and elsewhere is None:
        one_line = terminal_text(panic.message, one_line=True)
        raise CheckFailed(f"no record in {terminal_text(source.describe(), one_line=True)} matches "
                          f"{one_line[:120]!r}"
                          + (f" ({plural(result.placeholder_only, 'record')} whose message is only a placeholder "
                             f"match{'es' if result.placeholder_only == 1 else ''} any text)"
                             if result.placeholder_only else ""))


def _read_records(path: str):
    from analyzer.records import reader
    return reader.read(path)


def _file_source(records: str, lines, origin) -> Source:
    """A records file as the source, with a note when its commit is not the paste's release."""
    shas = sorted({(ln.record.repo, ln.record.analyzedSha) for ln in lines
                   if origin is None or ln.record.repo == origin.repo})
    repo, sha = shas[0] if len(shas) == 1 else ("", "")
    source = Source(repo, sha, records_file=records)
    if origin is None:
        return source
    if origin.kind == "git" and any(s.startswith(origin.rev) for _, s in shas):
        return source
    held = ", ".join(s[:12] for _, s in shas) or "none"
    if origin.kind == "git":
        why = "is not that commit"
    else:
        why = f"may not be {origin.rev} (a records file does not say which tag its commit is)"
    source.notes.append(f"the panic comes from {origin.describe()}; the records in {records} are of "
                        f"{origin.repo} at {held}, which {why}, so lines may have moved and messages changed; "
                        f"without --records, lookup answers from that release's own records")
    return source


def _at_release(panic, origins, target: Profile, targets: list[Profile], repo, rev, dependency_repos, no_cache):
    """Extract (or read from the cache) the records of the panic's release and look it up there;
    when none matches, the nearest releases on either side are tried for the message. Of several
    possible origins (a package two profiles own), the first whose repository holds the package
    at its release answers."""
    from analyzer.pipeline.dependencies import parse_overrides

    overrides = parse_overrides(dependency_repos)
    if not origins:
        wanted = rev or target.repository.pin
        spec = _spec(target, target, repo, overrides)
        try:
            return _answer(panic, None, target, spec, wanted, no_cache, several=False)
        except _NotThere:
            said = f"--sha {wanted}" if rev else f"the target's pin {wanted}"
            raise UserError(f"{said} is not a revision of {spec}; pass --sha REV naming one there, or --repo "
                            f"naming a clone that holds it") from None
    missing = []
    for origin in origins:
        profile = next(p for p in targets if p.name == origin.profile)
        spec = _spec(profile, target, repo, overrides)
        try:
            return _answer(panic, origin, profile, spec, origin.rev, no_cache, several=len(origins) > 1)
        except _NotThere as e:
            missing.append(str(e))
    first = origins[0]
    how = "--repo" if first.profile == target.name else f"--dependency-repo {first.repo}=PATH|URL"
    if len(origins) == 1:
        raise UserError(f"the panic names {first.describe()}, which {missing[0]}; pass {how} naming a clone "
                        f"that holds it")
    raise UserError(f"the panic names {first.package} {first.version}, which no repository holds at its "
                    f"release ({'; '.join(missing)}); pass --repo or --dependency-repo OWNER/NAME=PATH|URL naming "
                    f"a clone that does")


class _NotThere(Exception):
    """A repository that does not hold the revision (or the package) a lookup asks for."""


def _spec(profile: Profile, target: Profile, repo, overrides: dict[str, str]) -> str:
    """Where to read `profile`'s repository: --repo for the target's, --dependency-repo or the
    profile's URL for another's."""
    if profile is target and repo:
        return repo
    return overrides.get(profile.repository.name, profile.repository.url)


def _answer(panic, origin, profile: Profile, spec: str, wanted: str, no_cache, several: bool):
    """The lookup at `wanted` in `spec`, under `profile`: (result, source, elsewhere). _NotThere
    when the repository lacks the revision, or (of `several` possible origins) cannot be read or
    lacks the package there."""
    from analyzer.features import lookup as lk

    with profiles.using(profile):  # its conventions, tags and facts cache, as extract has them
        try:
            git_repo = open_repo(spec, None, no_cache, want=_ref(wanted, origin))
        except UserError as e:
            if not several:
                raise
            raise _NotThere(f"{profile.repository.name} could not be read ({str(e).split('; ', 1)[0]})") from None
        sha = git_repo.try_resolve(_ref(wanted, origin))
        if sha is None:
            raise _NotThere(f"{profile.repository.name} at {spec} does not hold" if origin is None or not several
                            else f"{profile.repository.name} has no tag {wanted}")
        if len(sha) != 40:
            sha = git_repo.resolve(sha)
        cache = open_cache(no_cache)
        try:
            folders = _folders(git_repo, sha, cache, origin)
            if several and origin is not None and folders is not None and origin.package not in folders:
                raise _NotThere(f"{profile.repository.name} has no package {origin.package} at {wanted}")
            lines = records_at(git_repo, sha, cache, profile)
            place = lk.Place(origin, lk.repository_path(origin, folders))
            result = lk.lookup(panic, lines, place)
            source = Source(git_repo.name, sha, wanted if wanted != sha else "")
            elsewhere = None
            if not result.matches:
                elsewhere = _other_release(panic, git_repo, sha, cache, profile, lines, origin)
        finally:
            if cache is not None:
                cache.close()
    return result, source, elsewhere


def _ref(rev: str, origin) -> str:
    return f"refs/tags/{rev}" if origin is not None and origin.kind == "registry" else rev


def records_at(git_repo, sha: str, cache, profile: Profile) -> list:
    """The records of `git_repo` at `sha`: served from the results cache `extract` keeps (the same
    key), else extracted and kept there."""
    import time

    from analyzer.cli.common import analyse
    from analyzer.pipeline import manifest, results_cache
    from analyzer.features.lookup import kept_lines

    key = results_cache.extract_key(git_repo.name, sha, False)
    command = ["lookup", "--repo", git_repo.origin, "--sha", sha]
    hit = cache.get_result(key) if cache is not None else None
    if hit is not None:
        served = results_cache.served_extract(hit, git_repo.origin, Path("."), False, command, 0.0,
                                              git_repo.name, sha, profile)
        if served is not None:
            text = served[0][Path(".") / results_cache.RECORDS_FILE]
            kept = kept_lines(text)
            if kept is not None:
                return kept
            from analyzer.records.reader import validate_lines
            return validate_lines(text)[0]
        cache.drop_result(key)  # damaged or tampered with: made again below
    from analyzer.sinks import jsonl

    started = time.perf_counter()
    ex = analyse(git_repo, sha, cache)
    if cache is not None:
        text = jsonl.dumps(ex.lines)
        man = manifest.build(ex, git_repo.origin, command)
        man.setdefault("timings", {})["total"] = round(time.perf_counter() - started, 3)
        results_cache.put_extract(cache, key, text, None, man)
    return ex.lines


def _folders(git_repo, sha: str, cache, origin) -> dict[str, str] | None:
    """{package: folder} at `sha` for a registry path (read from the Cargo.toml files there, kept
    in the results cache), else None."""
    from analyzer.features.lookup import package_folders
    from analyzer.pipeline import results_cache

    if origin is None or origin.kind != "registry":
        return None
    key = results_cache.key(_FOLDERS_KIND, git_repo.name, sha)
    hit = cache.get_result(key) if cache is not None else None
    if isinstance(hit, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in hit.items()):
        return hit
    manifests = [b.path for b in git_repo.tree(sha) if b.path == "Cargo.toml" or b.path.endswith("/Cargo.toml")]
    folders = package_folders(git_repo.read_files(sha, manifests))
    if cache is not None:
        cache.put_result(key, folders)
    return folders


def _release_tags(git_repo, profile: Profile) -> list[tuple[tuple, str, str]]:
    """(version key, tag, commit) of the profile's release tags, oldest version first."""
    template = re.escape(profile.packages.release_tag).replace(re.escape("{version}"), r"(\d+)\.(\d+)\.(\d+)(\S*)")
    shape = re.compile(template)
    found = []
    for name, commit in git_repo.tags():
        m = shape.fullmatch(name)
        if m:
            # A pre-release sorts before its release (0.21.0-pre.1 < 0.21.0).
            found.append(((int(m[1]), int(m[2]), int(m[3]), not m[4], m[4]), name, commit))
    return sorted(found)


def _other_release(panic, git_repo, sha: str, cache, profile: Profile, lines, origin):
    """The nearest release on either side of `sha` whose records match the message, with the
    record of the same site (by id) at `sha`; None when neither does."""
    from analyzer.features import lookup as lk

    tags = _release_tags(git_repo, profile)
    at = next((i for i, (_, _, c) in enumerate(tags) if c == sha), None)
    if at is not None:
        candidates = [tags[i] for i in (at - 1, at + 1) if 0 <= i < len(tags)]
    else:
        before = git_repo.tag_names(merged_into=sha)
        after = git_repo.tag_names(containing=sha)
        older = [t for t in tags if t[1] in before]
        newer = [t for t in tags if t[1] in after]
        candidates = older[-1:] + newer[:1]
    by_id = {ln.record.id: ln for ln in lines}
    for _, tag, commit in candidates:
        other = records_at(git_repo, commit, cache, profile)
        folders = _folders(git_repo, commit, cache, origin)
        found = lk.lookup(panic, other, lk.Place(origin, lk.repository_path(origin, folders)))
        if found.matches:
            best = found.matches[0]
            return Elsewhere(tag, commit, best, by_id.get(best.line.record.id))
    return None
