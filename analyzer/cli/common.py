"""What the commands share: the group class that turns every error into one line and an exit
code, the option decorators, and opening a repository, the cache and an analysis.

Exit codes: 0 success; 1 a check failed (`diff --fail-on`, `validate`, `lookup`); 2 bad input or
an error, reported as one line on stderr (a traceback only with --debug); 130 interrupted.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any, NoReturn
from pathlib import Path

import click

from analyzer import __version__
from analyzer.core.errors import CheckFailed, UserError

PROG = "burn-errors"
_STARTED = time.perf_counter()


class CliGroup(click.Group):
    """A click group whose errors are one line on stderr with exit code 2, never a traceback."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> NoReturn:
        """Always standalone: every outcome is an exit code (`standalone_mode` is accepted, as
        click's signature has it, and does not change that)."""
        args = list(sys.argv[1:] if args is None else args)
        _WARNINGS.clear()
        from analyzer.source.repository import harden_git
        harden_git()  # for git processes any module starts, not only the source stage's
        debug = "--debug" in args or os.environ.get("BURN_ERRORS_DEBUG") == "1"
        try:
            rv = super().main(args=args, prog_name=prog_name or PROG, complete_var=complete_var,
                              standalone_mode=False, **extra)
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
                from analyzer.core.safe import terminal_text
                click.echo(terminal_text(e), err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            _fail("interrupted; earlier outputs were left as they were", 130)
        except BrokenPipeError:
            sys.exit(0)
        except Exception as e:  # the last line of defence: one line unless --debug
            if debug:
                raise
            _fail(f"internal error: {type(e).__name__}: {e} (rerun with --debug for the traceback, and "
                  f"please report it)", 2)
        _say_warnings()
        sys.exit(rv if isinstance(rv, int) else 0)


def _say_warnings() -> None:
    """The warnings a command gathered, said once it has done its work (never beside an error)."""
    from analyzer.core.ui import say
    for warning, said in _WARNINGS.items():
        say(warning, True)
        if said is not None:
            said()


def _fail(message: str, code: int) -> NoReturn:
    from analyzer.core.safe import terminal_text
    first = terminal_text(message, one_line=True)  # messages may quote file names or record text
    click.echo(f"{PROG}: error: {first}", err=True)
    sys.exit(code)


def debug_option(f):
    return click.option("--debug", is_flag=True, hidden=False, expose_value=False, is_eager=True,
                        help="Show the traceback of an unexpected error.")(f)


def _use_target(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Make the `--target` profile current for the rest of the command (the other options'
    defaults come from it, so it is read first)."""
    from analyzer import profiles
    profile = profiles.load(value)
    ctx.with_resource(profiles.using(profile))
    return profile.name


def target_option(f):
    from analyzer import profiles
    return click.option("--target", default=profiles.DEFAULT, show_default=True, metavar="NAME|FILE",
                        is_eager=True, expose_value=False, callback=_use_target,
                        help=f"The target profile: the repository's default URL and pin, its link shape and "
                             f"conventions. A shipped one ({', '.join(profiles.known())}) or the path of a "
                             f"profile file (NAME.toml).")(f)


def repo_options(f):
    f = click.option("--repo-name", metavar="OWNER/NAME",
                     help="owner/name for records and links (default: from the URL or the clone's origin, "
                          "else the target's repository).")(f)
    f = click.option("--no-cache", is_flag=True, help="Do not read or write the cache folder.")(f)
    f = click.option("--repo", default=lambda: _target().repository.url, show_default="the target's repository",
                     metavar="URL|PATH",
                     help="Git URL (mirrored once into the cache, fetched as needed) or a local clone or "
                          "bare repository.")(f)
    return target_option(f)


def _target():
    from analyzer import profiles
    return profiles.current()


def sha_option(f):
    # The pin itself, and how to move it: an installed user cannot see the profile file.
    from analyzer import profiles
    default = profiles.load(profiles.DEFAULT)
    return click.option("--sha", "rev", default=lambda: _target().repository.pin, show_default=False, metavar="REV",
                        help=f"Revision to analyse: full or short SHA, tag or branch. Default: the target's "
                             f"pinned commit ({default.name}: {default.repository.pin}). For another revision "
                             f"pass --sha REV; to move the pin for good, edit repository.pin in "
                             f"analyzer/profiles/{default.name}.toml in a clone of this tool's source and "
                             f"install that clone (pip install .).")(f)


def open_repo(repo: str, repo_name: str | None, no_cache: bool, want: str | None):
    from analyzer.source.repository import open_repository
    from analyzer.core.ui import git_progress

    cache_dir = cache_folder(no_cache)
    with git_progress() as progress:
        git_repo = open_repository(repo, cache_dir, repo_name, progress=progress, want=want)
    if git_repo.name_assumed:
        _warn_of_a_guessed_name(git_repo, repo, cache_dir)
    return git_repo


def _warn_of_a_guessed_name(git_repo, repo: str, cache_dir) -> None:
    """The name fell back to the default target's. Say so when it is a guess, once per repository
    (remembered in the cache folder): not when the origin is a local path whose folders already
    spell the name (`../burn`, `.../tracel-ai+burn/repo`), as a clone of a clone's is, nor when
    there is no origin and the repository's own folders spell it (a snapshot at `.../burn.git`)."""
    import hashlib
    from pathlib import Path

    from analyzer.core.safe import terminal_text
    from analyzer.source.repository import origin_url
    from analyzer.source.urls import local_origin_path

    origin = git_repo.origin_remote if git_repo.origin_remote is not None else origin_url(git_repo.git_dir)
    local = local_origin_path(origin) if origin else None
    if local is not None and _path_names(local, git_repo.name):
        return
    if not origin and _path_names(str(git_repo.git_dir), git_repo.name):
        return
    marker = None
    if cache_dir is not None:
        key = hashlib.sha256(str(Path(git_repo.git_dir).resolve()).encode("utf-8", "surrogateescape")).hexdigest()
        marker = Path(cache_dir) / "notices" / f"guessed-name-{key[:16]}"
        if marker.exists():
            return
    why = (f"its origin remote {origin} does not name it" if origin else "it has no origin remote to name it")
    text = terminal_text(f"warning: {repo}: {why}; records and links say {git_repo.name} (pass --repo-name "
                         f"OWNER/NAME for another repository; said once for this repository)", one_line=True)
    warn(text, said=None if marker is None else lambda: _remember(marker))


def _path_names(path: str, name: str) -> bool:
    """Whether the last two folders of a local path spell owner/name: `name`, `name.git` or
    `owner+name` (the form a mirror's folder takes)."""
    owner, _, repo_part = name.partition("/")
    folders = [p for p in path.replace("\\", "/").rstrip("/").split("/") if p][-2:]
    spelled = {repo_part, f"{repo_part}.git", f"{owner}+{repo_part}"}
    return any(f in spelled for f in folders)


def _remember(marker) -> None:
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:  # a cache folder it cannot write: the warning comes again next time
        pass
def echo_document(text: str, fmt: str, nl: bool = False) -> None:
    """A command's document on stdout: exact for a file or a pipe; on a terminal through the one
    escape every command's output takes there (analyzer/core/safe.py), JSON kept valid JSON."""
    if sys.stdout.isatty():
        from analyzer.core.safe import terminal_document
        text = terminal_document(text, is_json=fmt in ("json", "sarif"))
    click.echo(text, nl=nl)


# Warnings a command gathers while it works, printed after its output when it succeeds (an error
# stays the one line on stderr), each with what to do once it is said.
_WARNINGS: dict[str, Callable[[], None] | None] = {}


def warn(text: str, said: Callable[[], None] | None = None) -> None:
    if text not in _WARNINGS:
        _WARNINGS[text] = said


def cache_folder(no_cache: bool) -> Path | None:
    """The cache folder to use, or None: with --no-cache, or when the folder could have been
    written by someone else (see analyzer/pipeline/cache.py), which is warned about and bypassed
    rather than fatal, as no output depends on the cache."""
    if no_cache:
        return None
    from analyzer.pipeline.cache import default_cache_dir, untrusted

    folder = default_cache_dir()
    reason = untrusted(folder)
    if reason is not None:
        from analyzer.core.safe import terminal_text
        warn(terminal_text(f"warning: the cache folder is not used: {reason}; this run went without it (make "
                           f"it yours and private, or set BURN_ERRORS_CACHE to a folder that is)", one_line=True))
        return None
    return folder


def open_cache(no_cache: bool):
    folder = cache_folder(no_cache)
    if folder is None:
        return None
    from analyzer.pipeline.cache import FactsCache, default_cache_dir
    from analyzer.pipeline.ruleset import rules_hash
    import sqlite3
    try:
        cache = FactsCache(folder, rules_hash(), __version__)
    except (OSError, sqlite3.Error) as e:  # sqlite: a folder it may not write in ("unable to open")
        raise UserError(f"cannot use the cache folder {default_cache_dir()}: {getattr(e, 'strerror', None) or e}; set "
                        f"BURN_ERRORS_CACHE to a writable folder or pass --no-cache") from None
    if cache.moved_aside is not None:
        from analyzer.core.safe import terminal_text
        warn(terminal_text(f"warning: the cache file {cache.path} was moved aside ({cache.moved_aside}) and an "
                           f"empty one started", one_line=True))
    return cache


@contextlib.contextmanager
def opened(repo: str, rev: str, repo_name: str | None, no_cache: bool):
    """(repository, full SHA of rev, cache or None), the cache closed on leaving."""
    git_repo = open_repo(repo, repo_name, no_cache, want=rev)
    if rev == _target().repository.pin and git_repo.try_resolve(rev) is None:
        # The first run on a clone or snapshot of another commit lands here: name the way out.
        raise UserError(f"unknown revision '{rev}' in {git_repo.origin}: it is the default pin (the commit "
                        f"burn-errors analyses when --sha is not given), which this repository does not hold; "
                        f"pass --sha REV to analyse another revision (a commit, tag or branch there, e.g. "
                        f"--sha HEAD)")
    sha = git_repo.resolve(rev)
    cache = open_cache(no_cache)
    try:
        yield git_repo, sha, cache
    finally:
        if cache is not None:
            cache.close()


def analyse(git_repo, sha: str, cache, jobs: int | None = None, previous=None, code: bool = False,
            sources: bool = False):
    """Extract at `sha`, with a status line on a terminal; `code` for the coverage audit, `sources`
    to keep the bytes it parsed (see extract)."""
    from analyzer.pipeline.extract import extract
    from analyzer.core.ui import status
    from analyzer.profiles import current
    from analyzer.profiles.run import Run

    with status(f"Analysing {git_repo.name}@{sha[:12]}") as say:
        return extract(git_repo, sha, Run(current()), cache=cache, previous=previous, jobs=jobs, progress=say,
                       code=code,
                       sources=sources)


def run_extract(repo: str, rev: str, repo_name: str | None, no_cache: bool, jobs: int | None = None,
                previous=None, code: bool = False):
    """Open the repository, resolve the revision and extract; shared by every command."""
    with opened(repo, rev, repo_name, no_cache) as (git_repo, sha, cache):
        return git_repo, analyse(git_repo, sha, cache, jobs, previous, code)


class FormatChoice(click.Choice):
    """`--format`: the format names of a family of the sink registry (analyzer/sinks), which
    `--help` lists; an alias is taken for the name it stands for, and anything else is refused."""

    def __init__(self, family: str):
        from analyzer import sinks
        super().__init__(list(sinks.formats(family)))
        self.aliases = sinks.aliases(family)

    def convert(self, value, param, ctx):
        return super().convert(self.aliases.get(value, value), param, ctx)


def dependencies_of(git_repo, dependency_repos: tuple[str, ...], no_cache: bool):
    """The dependencies `--with-dependencies` follows (analyzer/app/dependencies.py), opened and
    cached as this command opens and caches its own repository."""
    from analyzer.app.dependencies import Dependencies
    return Dependencies(git_repo, dependency_repos,
                        lambda spec, name, want: open_repo(spec, name, no_cache, want=want),
                        lambda: open_cache(no_cache))
