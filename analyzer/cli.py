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
from .wording import plural

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
    # The pin itself, and how to move it: an installed user cannot see analyzer/config.py.
    return click.option("--sha", "rev", default=PINNED_SHA, show_default=False, metavar="REV",
                        help=f"Revision to analyse: full or short SHA, tag or branch. Default: the pinned "
                             f"commit {PINNED_SHA}. For another revision pass --sha REV; to move the pin "
                             f"for good, edit PINNED_SHA in analyzer/config.py in a clone of this tool's "
                             f"source and install that clone (pip install .).")(f)


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
      burn-errors export output/records.jsonl --out site/data/
    """


@main.command()
@repo_options
@sha_option
@click.option("--out", "out_dir", default="output", show_default=True, type=click.Path(file_okay=False),
              help="Folder for records.jsonl and manifest.json.")
@click.option("--previous", type=click.Path(exists=True),
              help="Earlier records (records.jsonl, the published envelopes, or a folder of them): each "
                   "site found again keeps its id, slug, tags and first-seen revision, and its "
                   "annotations and contentChangedAt while its content is unchanged.")
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
        prev = jsonl.read(previous)
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
        # Records whose annotations were carried over: unchanged ones that had any to keep.
        kept = sum(1 for ln in ex.lines if ln.analysis.annotationStatus == "unchanged" and ln.record.is_annotated())
        summary(man, [str(p) for p in files], previous=previous, annotations_kept=kept)
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
        if "firstSeenAt" in line["analysis"]:
            line["analysis"]["firstSeenAt"] = now
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
    man = dict(hit["manifest"])
    man.update(source=origin, command=command, cache={"hits": man["filesScanned"], "misses": 0, "result": "hit"},
               scan={"cached": man["filesScanned"], "parsed": 0, "prefiltered": 0},
               timings={"total": round(time.perf_counter() - _STARTED, 3)})
    files = {out / "records.jsonl": "".join(ln + "\n" for ln in lines),
             out / "manifest.json": manifest.dumps(man)}
    if all_sites:
        files[out / "sites.jsonl"] = hit["sites"]
    return files, man


@main.command()
@click.argument("records", type=click.Path())
@debug_option
def validate(records):
    """Check a records file, or a folder written by `export`, record by record; exit 1 and list
    every problem as FILE:LINE: FIELD: WHY.

    Each line is checked against the schema (the pydantic models in analyzer/record.py: types,
    value sets, no unknown keys), for text that cannot be written as UTF-8 and for JSON the
    other commands cannot read (nested too deep, a number too long); then each record as a whole:
    sourceCode is the window lineNumber-18..lineNumber+18 cut at the file's ends, the slug ends in
    "-" and the id's first 6 digits (and is made from errorMessage on a new record), githubUrl
    pins that window at analyzedSha, messagePattern is errorMessage, backgroundTag agrees with
    analysis.category, contentChangedAt is not after analyzedAt. An id or slug found twice is
    reported on every line that has it.

    \b
    Examples:
      burn-errors validate output/records.jsonl
      burn-errors validate site/data/        # a folder written by burn-errors export
    """
    from .checks import check_documents

    documents, unit = _documents(records)
    report = check_documents(documents)
    for line in report.lines():
        click.echo(line)
    bad = report.checked - report.good
    if bad:
        raise CheckFailed(f"Found {plural(len(report.problems), 'problem')} "
                          f"on {plural(bad, unit)} of {records}.")
    click.echo(f"All checks passed! {plural(report.good, 'record')} in {records} "
               f"match{'es' if report.good == 1 else ''} schema version 2.")


def _documents(records: str):
    """The JSON documents of a records path, and what one is called ("line", "item" or "file"):
    a records file holds one per line, a pretty-printed envelope file one, a JSON array one per
    item; a folder (an export, a folder of envelopes, or a folder `extract` wrote) is read file by
    file as `jsonl.record_files` lists them, leaving out a file that holds no record (an index)."""
    import json

    from .checks import Document
    from .sinks import jsonl

    in_folder = jsonl.is_folder(records)
    documents: list = []
    unit = "file" if in_folder else "line"
    for path in jsonl.record_files(records):
        text = jsonl.read_text(path)
        if in_folder and jsonl.holds_no_record(text):
            continue
        lines = [Document(str(path), n, raw) for n, raw in enumerate(text.split("\n"), start=1) if raw.strip()]
        if len(lines) > 1 and lines[0].text.strip() in ("{", "["):
            # One pretty-printed document (a published envelope file, or a JSON array of
            # envelopes) rather than one per line.
            items = None
            if lines[0].text.strip() == "[":
                try:
                    items = json.loads(text)
                except (ValueError, RecursionError):
                    items = None
            if isinstance(items, list):
                documents += [Document(str(path), i, json.dumps(item, ensure_ascii=False))
                              for i, item in enumerate(items, start=1)]
                unit = "item" if not in_folder else unit
            else:
                documents.append(Document(str(path), 1, text))
                unit = "file"
        else:
            documents += lines
    return documents, unit


def _dataset_version(ctx, param, value):
    if value is None:
        return None
    from .sinks.envelope import dataset_version
    try:
        return dataset_version(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


@main.command()
@click.argument("records", type=click.Path())
@click.option("--out", "out_dir", required=True, type=click.Path(),
              help="Folder to write; an earlier export there is replaced whole.")
@click.option("--dataset-version", metavar="TIME", callback=_dataset_version,
              help="When this dataset version is published, ISO 8601 with a zone "
                   "(default: now), written as UTC with milliseconds and Z.")
@debug_option
def export(records, out_dir, dataset_version):
    """Write the records as the published dataset serves them: OUT/<id>.json holds
    {"record": {the 32 keys}, "datasetVersion": TIME} for each record, and OUT/index.json lists
    them (id, slug, file, errorMessage, filePath, lineNumber, backgroundTag). RECORDS is a
    records file or an earlier export's folder (to publish it again under a new version).

    The records must pass `burn-errors validate`. The folder is written whole or not at all: a
    failed export leaves the previous one exactly as it was.

    \b
    Examples:
      burn-errors export output/records.jsonl --out site/data/
      burn-errors export output/records.jsonl --out site/data/ --dataset-version 2026-09-12T17:17:11.597Z
    """
    from .checks import check_documents
    from .sinks import envelope
    from .timestamps import utc_now

    report = check_documents(_documents(records)[0])
    if report.problems:
        first, count = report.lines()[0], len(report.problems)
        more = f" (and {count - 1} more problems)" if count > 1 else ""
        raise UserError(f"{first}{more}; only valid records are exported, run `burn-errors validate "
                        f"{records}` to list every problem")
    if not report.records:
        raise UserError(f"{records} holds no records; nothing to export")
    version = dataset_version or utc_now()
    folder = envelope.write(Path(out_dir), envelope.build(report.records, version))
    click.echo(f"Wrote {len(report.records)} envelopes and {folder / envelope.INDEX} (dataset version {version})")


# Commands kept in modules of their own register themselves on `main` when imported here.
from . import cli_diff  # noqa: E402,F401
from . import cli_coverage  # noqa: E402,F401
from . import cli_pages  # noqa: E402,F401
from . import cli_history  # noqa: E402,F401
