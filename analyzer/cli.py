"""The `burn-errors` command line.

Exit codes: 0 success; 1 a check failed (`diff --fail-on`, `validate`); 2 bad input or an error,
reported as one line on stderr (a traceback only with --debug).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

import click

from . import __version__
from .config import DEFAULT_REPO_URL, PINNED_SHA
from .errors import CheckFailed, UserError

PROG = "burn-errors"
_STARTED = time.perf_counter()


class CliGroup(click.Group):
    """A click group whose errors are one line on stderr with exit code 2, never a traceback."""

    def main(self, args=None, prog_name=None, **extra):  # noqa: D102
        args = list(sys.argv[1:] if args is None else args)
        debug = "--debug" in args or os.environ.get("BURN_ERRORS_DEBUG") == "1"
        try:
            rv = super().main(args=args, prog_name=prog_name or PROG, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as e:
            click.echo(e.ctx.get_help())
            sys.exit(0)
        except click.UsageError as e:
            cmd = e.ctx.command_path if e.ctx is not None else PROG
            _fail(f"{e.format_message()} (see '{cmd} --help')", 2)
        except click.exceptions.Abort:
            _fail("interrupted; earlier outputs were left as they were", 130)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except click.ClickException as e:
            _fail(e.format_message(), 2)
        except UserError as e:
            if debug:
                raise
            _fail(str(e), 2)
        except CheckFailed as e:
            if str(e):
                from .safe import terminal_text
                click.echo(terminal_text(e), err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            _fail("interrupted; earlier outputs were left as they were", 130)
        except BrokenPipeError:
            sys.exit(0)
        except Exception as e:  # noqa: BLE001 - last line of defence, one line unless --debug
            if debug:
                raise
            _fail(f"internal error: {type(e).__name__}: {e} (rerun with --debug for the traceback, and "
                  f"please report it)", 2)
        sys.exit(rv if isinstance(rv, int) else 0)


def _fail(message: str, code: int) -> None:
    from .safe import terminal_text
    first = terminal_text(message, one_line=True)  # messages may quote file names or record text
    click.echo(f"{PROG}: error: {first}", err=True)
    sys.exit(code)


def debug_option(f):
    return click.option("--debug", is_flag=True, hidden=False, expose_value=False, is_eager=True,
                        help="Show the traceback of an unexpected error.")(f)


def repo_options(f):
    f = click.option("--repo-name", metavar="OWNER/NAME",
                     help="owner/name for records and links (default: from the URL or the clone's origin, "
                          "else tracel-ai/burn).")(f)
    f = click.option("--no-cache", is_flag=True, help="Do not read or write the cache folder.")(f)
    f = click.option("--repo", default=DEFAULT_REPO_URL, show_default=True, metavar="URL|PATH",
                     help="Git URL (mirrored once into the cache, fetched as needed) or a local clone or "
                          "bare repository.")(f)
    return f


def sha_option(f):
    return click.option("--sha", "rev", default=PINNED_SHA, show_default="the pin in analyzer/config.py",
                        metavar="REV", help="Revision to analyse: full or short SHA, tag or branch.")(f)


def open_repo(repo: str, repo_name: str | None, no_cache: bool, want: str | None):
    from .cache import default_cache_dir
    from .source import open_repository
    from .ui import git_progress

    cache_dir = None if no_cache else default_cache_dir()
    with git_progress() as progress:
        return open_repository(repo, cache_dir, repo_name, progress=progress, want=want)


def open_cache(no_cache: bool):
    if no_cache:
        return None
    from .cache import FactsCache, default_cache_dir
    from .ruleset import rules_hash
    import sqlite3
    try:
        return FactsCache(default_cache_dir(), rules_hash(), __version__)
    except (OSError, sqlite3.Error) as e:  # sqlite: a folder it may not write in ("unable to open")
        raise UserError(f"cannot use the cache folder {default_cache_dir()}: {getattr(e, 'strerror', None) or e}; set "
                        f"BURN_ERRORS_CACHE to a writable folder or pass --no-cache") from None


@contextlib.contextmanager
def opened(repo: str, rev: str, repo_name: str | None, no_cache: bool):
    """(repository, full SHA of rev, cache or None), the cache closed on leaving."""
    git_repo = open_repo(repo, repo_name, no_cache, want=rev)
    sha = git_repo.resolve(rev)
    cache = open_cache(no_cache)
    try:
        yield git_repo, sha, cache
    finally:
        if cache is not None:
            cache.close()


def analyse(git_repo, sha: str, cache, jobs: int | None = None, previous=None):
    """Extract at `sha`, with a status line on a terminal."""
    from .extract import extract
    from .ui import status

    with status(f"Analysing {git_repo.name}@{sha[:12]}") as say:
        return extract(git_repo, sha, cache=cache, previous=previous, jobs=jobs, progress=say)


def run_extract(repo: str, rev: str, repo_name: str | None, no_cache: bool, jobs: int | None = None,
                previous=None):
    """Open the repository, resolve the revision and extract; shared by every command."""
    with opened(repo, rev, repo_name, no_cache) as (git_repo, sha, cache):
        return git_repo, analyse(git_repo, sha, cache, jobs, previous)


@click.group(cls=CliGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name=PROG)
@debug_option
def main():
    """Find the panics a burn user hits because a dtype or a mode is not supported, and write each
    as an error record ready for annotation.

    \b
    Examples:
      burn-errors extract --out output/
      burn-errors extract --repo ../burn --sha main --out output/
      burn-errors coverage --repo ../burn --sha main
      burn-errors diff v0.18.0 main --repo ../burn --fail-on added
    """


@main.command()
@repo_options
@sha_option
@click.option("--out", "out_dir", default="output", show_default=True, type=click.Path(file_okay=False),
              help="Folder for records.jsonl and manifest.json.")
@click.option("--previous", type=click.Path(dir_okay=False),
              help="Earlier records.jsonl: unchanged records keep their annotations and contentChangedAt.")
@click.option("--all-sites", is_flag=True,
              help="Also write sites.jsonl: every panic-family call with its category or the rule that "
                   "left it out (an audit of the classifier).")
@click.option("--jobs", type=click.IntRange(1, 64), help="Parser processes (default: one per core).")
@debug_option
def extract(repo, rev, out_dir, previous, all_sites, no_cache, repo_name, jobs):
    """Find the sites and write OUT/records.jsonl and OUT/manifest.json.

    \b
    Examples:
      burn-errors extract                                  # burn at the pin, from GitHub
      burn-errors extract --repo ../burn --sha HEAD --out output/
      burn-errors extract --repo ../burn --previous old/records.jsonl --all-sites
    """
    from .outputs import ensure_writable_dir, write_files
    from .ui import summary

    out = Path(out_dir)
    ensure_writable_dir(out)
    command = ["extract", *sys.argv[2:]]
    prev = None
    if previous:
        from .sinks import jsonl
        prev = {line.record.id: line for line in jsonl.read(previous)}
    with opened(repo, rev, repo_name, no_cache) as (git_repo, sha, cache):
        key = _results_key(git_repo.name, sha, all_sites)
        hit = cache.get_result(key) if cache is not None and prev is None else None
        if hit is not None:
            files, man = _files_from_result(hit, git_repo.origin, out, all_sites, command)
            write_files(files)
            summary(man, [str(p) for p in files])
            return
        from .sinks import audit, jsonl, manifest

        ex = analyse(git_repo, sha, cache, jobs, prev)
        man = manifest.build(ex, git_repo.origin, command)
        records_text = jsonl.dumps(ex.lines)
        audit_text = audit.dumps(ex) if all_sites else None
        files = {out / "records.jsonl": records_text, out / "manifest.json": manifest.dumps(man)}
        if audit_text is not None:
            files[out / "sites.jsonl"] = audit_text
        write_files(files)
        summary(man, [str(p) for p in files])
        if cache is not None and prev is None:
            cache.put_result(key, {"records": records_text.splitlines(), "sites": audit_text, "manifest": man})


def _results_key(name: str, sha: str, all_sites: bool) -> str:
    return f"extract|{name}|{sha}|{int(all_sites)}"


def _files_from_result(hit: dict, origin: str, out: Path, all_sites: bool, command: list[str]):
    """The outputs of an earlier run at the same commit with the same rules, tool version and
    options (a results-cache row), with this run's dates: (files, manifest)."""
    import json

    from .sinks import manifest
    from .timestamps import utc_now

    now = utc_now()
    lines = []
    for raw in hit["records"]:
        line = json.loads(raw)
        line["record"]["analyzedAt"] = line["record"]["contentChangedAt"] = now
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
    man = dict(hit["manifest"])
    man.update(source=origin, command=command, cache={"hits": man["filesScanned"], "misses": 0, "result": "hit"},
               timings={"total": round(time.perf_counter() - _STARTED, 3)})
    files = {out / "records.jsonl": "".join(ln + "\n" for ln in lines),
             out / "manifest.json": manifest.dumps(man)}
    if all_sites:
        files[out / "sites.jsonl"] = hit["sites"]
    return files, man


@main.command()
@click.argument("records", type=click.Path(dir_okay=False))
@debug_option
def validate(records):
    """Check a records file against the schema; exit 1 and list the bad line numbers.

    \b
    Example:
      burn-errors validate output/records.jsonl
    """
    from .sinks import jsonl

    good, bad = jsonl.validate_lines(jsonl.read_text(records))
    ids: dict[str, int] = {}
    for line in good:
        ids[line.record.id] = ids.get(line.record.id, 0) + 1
    dupes = sorted(i for i, n in ids.items() if n > 1)
    for number, reason in bad:
        click.echo(f"{records}:{number}: {reason}")
    for i in dupes:
        click.echo(f"{records}: id {i} appears {ids[i]} times")
    if bad or dupes:
        raise CheckFailed(f"Found {len(bad)} bad line{'s' if len(bad) != 1 else ''}"
                          + (f" and {len(dupes)} duplicate ids" if dupes else "") + f" in {records}.")
    click.echo(f"All checks passed! {len(good)} records in {records} match schema version 2.")



# Commands kept in modules of their own register themselves on `main` when imported here.
from . import cli_diff  # noqa: E402,F401
from . import cli_coverage  # noqa: E402,F401
from . import cli_pages  # noqa: E402,F401
