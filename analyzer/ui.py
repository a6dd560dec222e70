"""Terminal output: progress on stderr (bars on a terminal, a few plain lines elsewhere) and the
closing summary, in the manner of ruff and pytest."""

from __future__ import annotations

import contextlib
import sys
import time

import click


def _tty() -> bool:
    return sys.stderr.isatty()


@contextlib.contextmanager
def git_progress():
    """A callback (stage, done, total) for cloning and fetching, shown as a progress bar."""
    if _tty():
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeElapsedColumn(), transient=True, console=_console()) as bar:
            tasks: dict[str, int] = {}

            def report(stage: str, done: int, total: int | None):
                if stage not in tasks:
                    tasks[stage] = bar.add_task(f"git {stage}", total=total)
                bar.update(tasks[stage], completed=done, total=total)
            yield report
    else:
        last = {"stage": None, "t": 0.0}

        def report(stage: str, done: int, total: int | None):
            now = time.monotonic()
            if stage != last["stage"] or now - last["t"] > 5 or (total and done == total):
                pct = f" {100 * done // total}%" if total else ""
                click.echo(f"git {stage}{pct} ({done}/{total or '?'})", err=True)
                last.update(stage=stage, t=now)
        yield report


def _console():
    from rich.console import Console
    return Console(stderr=True)


@contextlib.contextmanager
def status(message: str):
    """A spinner with a changing line on a terminal; silent elsewhere."""
    if _tty():
        with _console().status(message) as st:
            yield lambda text: st.update(f"{message}: {text}")
    else:
        yield lambda text: None


def summary(ex, written: list[str]) -> None:
    counts = ex.counts()
    parts = ", ".join(f"{n} {c}" for c, n in counts.items())
    cache = f", {ex.cache_hits} cached" if ex.cache_hits else ""
    click.echo(f"Analysed {ex.repo}@{ex.sha[:12]}: {ex.files_scanned} Rust files, {ex.files_parsed} parsed"
               f"{cache}, {len(ex.audit)} panic-family calls in {ex.timings.get('total', 0):.2f}s", err=True)
    if ex.parse_errors:
        click.echo(f"note: {len(ex.parse_errors)} files did not parse cleanly; their sites were still read "
                   f"where the tree allows (listed in manifest.json)", err=True)
    if ex.carry:
        c = ex.carry
        click.echo(f"Annotations: {c['unchanged']} kept, {c['changed']} changed, {c['new']} new, "
                   f"{c['dropped']} dropped", err=True)
    click.echo(f"Found {len(ex.lines)} records ({parts}).")
    click.echo("Wrote " + ", ".join(written))
