"""`burn-errors history`: when each record appeared, changed and disappeared across releases, and
when each coverage cell turned handled or regressed."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from analyzer.core.safe import rich_text, terminal_text
from analyzer.core.errors import UserError
from analyzer.sinks import formats
from analyzer.cli.common import FormatChoice, echo_document, open_cache, open_repo, repo_options, warn


@click.command()
@repo_options
@click.option("--from", "from_rev", metavar="REV",
              help="First revision: a release tag bounds the releases by version, any other revision by "
                   "commit date. Default: the oldest release tag (revisions before the first one with a "
                   "record are left out).")
@click.option("--to", "to_rev", metavar="REV",
              help="Last revision, analysed after the releases before it. Default: HEAD of --repo.")
@click.option("--revs", multiple=True, metavar="REV[,REV...]",
              help="Exactly these revisions, in this order, instead of the release tags (repeat the option "
                   "or separate with commas); cannot be combined with --from, --to or --tags.")
@click.option("--tags", "pattern", default="v*", show_default=True, metavar="GLOB",
              help="Which tags are releases (a glob on the tag name). Tags with anything after the version "
                   "(-pre.1, -rc1, -alpha, -book) are never releases.")
@click.option("--format", "fmt", type=FormatChoice("history"), default="markdown", show_default=True,
              help="markdown: release notes per release; json: everything (shape in the README); html: one "
                   "self-contained page with a timeline per backend.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write to FILE (whole or not at all) instead of stdout.")
@click.option("--with-dependencies", is_flag=True,
              help="Also follow each dependency with a target profile (cubecl) at the revision each "
                   "revision's Cargo.lock pins, so a bump shows the records it added and removed.")
@click.option("--dependency-repo", "dependency_repos", multiple=True, metavar="OWNER/NAME=PATH|URL",
              help="With --with-dependencies: read that dependency from this clone or URL (repeatable).")
@click.option("--jobs", type=click.IntRange(1, 64), help="Parser processes (default: one per core).")
@click.option("--debug", "debug", is_flag=True, help="Show the traceback of an unexpected error.")
def history(repo, repo_name, no_cache, from_rev, to_rev, revs, pattern, fmt, out_file, with_dependencies,
            dependency_repos, jobs, debug):
    """Follow every record across revisions: the revision it was first seen at, each revision where
    its content changed, and the one where it disappeared, fixed (a dtype it rejected became
    handled, or its match lost the panicking arm) or removed from the tree (its file or function
    is gone); and each backend's dtype coverage cells that turned handled or regressed.

    By default the revisions are the release tags of --repo in version order (v0.9 before v0.10),
    pre-releases and -book tags left out, then --to (HEAD). Every revision shares the per-file
    cache, so each parses only the files that changed since the ones before it. A revision that
    cannot be analysed is reported and skipped.

    \b
    Examples:
      burn-errors history --repo ../burn --from v0.13.0 --out history.md
      burn-errors history --repo ../burn --from v0.18.0 --to main --format html --out history.html
      burn-errors history --repo ../burn --revs v0.20.0,v0.21.0,HEAD --format json --out history.json
      burn-errors history --repo ../burn --tags 'v0.2*' --format json
    """
    from analyzer.features.history.revisions import plan
    from analyzer.features.history.run import build_history
    from analyzer.core.outputs import ensure_writable_file, write_file

    if dependency_repos and not with_dependencies:
        raise UserError("--dependency-repo says where to read a dependency from; it needs --with-dependencies")
    wanted = [r.strip() for value in revs for r in value.split(",") if r.strip()]
    if revs and not wanted:
        raise UserError("--revs was given no revision; name at least one, e.g. --revs v0.20.0,HEAD")
    ctx = click.get_current_context()
    if wanted:
        clash = [name for name, param in (("--from", "from_rev"), ("--to", "to_rev"), ("--tags", "pattern"))
                 if ctx.get_parameter_source(param) is not click.core.ParameterSource.DEFAULT]
        if clash:
            raise UserError(f"--revs lists the revisions itself, so {', '.join(clash)} cannot be used with it; "
                            f"drop one or the other")
    out = Path(out_file) if out_file else None
    if out is not None:
        if out.is_dir():
            raise UserError(f"--out {out_file} is a folder; give a file name")
        ensure_writable_file(out)  # fail before the analysis, not after it

    # A URL mirror is fetched when it lacks the last revision asked for.
    git_repo = open_repo(repo, repo_name, no_cache, want=(wanted[-1] if wanted else to_rev or "HEAD"))
    the_plan = plan(git_repo, from_rev=from_rev, to_rev=to_rev, revs=wanted, pattern=pattern)
    extend, repos = None, None
    if with_dependencies:
        from analyzer.cli.history_dependencies import DependencyRecords
        extend = DependencyRecords(git_repo, dependency_repos, no_cache, jobs)
        extend.check([p.sha for p in the_plan.revisions if p.sha is not None])
        repos = extend.opened  # filled as each dependency is opened
    cache = open_cache(no_cache)
    try:
        with _progress(len(the_plan.revisions)) as report:
            result = build_history(git_repo, the_plan, cache=cache, jobs=jobs, debug=debug, extend=extend, repos=repos,
                                   warn=warn,
                                   **report)
    finally:
        if cache is not None:
            cache.close()

    document = formats("history")[fmt].render(result)
    if out is not None:
        write_file(out, document)
    else:
        echo_document(document, fmt)
    _summary(result, out_file, git_repo.renames_from_trees)


def _revision_line(revision, planned, analysed) -> str:
    """One revision's outcome: records, and what the cache saved."""
    name = planned.label
    if planned.sha and planned.sha[:12] != planned.label:
        name = f"{planned.label} ({planned.sha[:12]})"
    if revision is None:
        return f"{name}: no record yet, left out"
    how = ("from the results cache" if analysed.cached
           else f"{analysed.parsed} of {analysed.files_scanned} Rust files read afresh")
    return f"{name}: {revision.records} records ({how}, {revision.seconds:.2f}s)"


@contextlib.contextmanager
def _progress(total: int):
    """Callbacks for build_history: a progress bar over the revisions on a terminal (with the
    current revision's status), one plain line per revision elsewhere; skips always warned."""
    def warn_skip(skip) -> None:
        click.echo(terminal_text(f"warning: skipped {skip.label}: {skip.reason}", one_line=True), err=True)

    if not sys.stderr.isatty():
        seen: list = []

        def done(revision, planned, analysed) -> None:
            seen.append(planned)
            click.echo(terminal_text(f"[{len(seen)}/{total}] {_revision_line(revision, planned, analysed)}",
                                     one_line=True), err=True)

        def skip_plain(s) -> None:
            seen.append(s)
            warn_skip(s)
        yield {"on_done": done, "on_skip": skip_plain}
        return

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(stderr=True, highlight=False)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[status]}"), console=console, transient=True) as bar:
        task = bar.add_task("history", total=total, status="")

        def start(i, n, planned) -> None:
            bar.update(task, description=f"history: {rich_text(planned.label)}", status="")

        def status(text: str) -> None:
            bar.update(task, status=text)

        def done(revision, planned, analysed) -> None:
            bar.console.print(f"[green]✓[/green] {rich_text(_revision_line(revision, planned, analysed))}")
            bar.advance(task)

        def skip(s) -> None:
            bar.console.print(f"[yellow]warning:[/yellow] skipped {rich_text(s.label)}: {rich_text(s.reason)}")
            bar.advance(task)
        yield {"on_start": start, "on_status": status, "on_done": done, "on_skip": skip}


def _summary(result, out_file: str | None, from_trees: Sequence[tuple[str, str]] = ()) -> None:
    n = result.summary()
    first, last = result.revisions[0], result.revisions[-1]
    # Revision labels are the repository's tag names: whatever a fork put there.
    click.echo(terminal_text(
        f"History of {result.repo} over {n['revisions']} revisions ({first.label} .. {last.label}"
        + (f", {n['skipped']} skipped" if n["skipped"] else "") + f"): {n['lineages']} sites, "
        f"{n['open']} still open, {n['fixed']} fixed, {n['removed-from-tree']} removed from the tree, "
        f"{n['rewritten']} rewritten, {n['changes']} content changes; {n['cellsFixed']} coverage cells "
        f"turned handled, {n['regressions']} regressed ({result.seconds:.2f}s)", one_line=True), err=True)
    if result.left_out:
        click.echo(terminal_text(f"note: {len(result.left_out)} earlier releases had no record and were left out "
                                 f"({result.left_out[0]} .. {result.left_out[-1]})", one_line=True), err=True)
    if from_trees:
        names = {r.sha: r.label for r in result.revisions}
        ranges = ", ".join(f"{names.get(a, a[:12])} .. {names.get(b, b[:12])}" for a, b in from_trees[:3])
        more = f" and {len(from_trees) - 3} more" if len(from_trees) > 3 else ""
        click.echo(terminal_text(f"note: the repository lacks commits between some revisions ({ranges}{more}); "
                                 f"their renames were read from the two trees (git diff -M) instead of commit by "
                                 f"commit, so a file renamed then rewritten reads as removed and added",
                                 one_line=True), err=True)
    if out_file:
        click.echo(f"Wrote {out_file}", err=True)
    sys.stderr.flush()
