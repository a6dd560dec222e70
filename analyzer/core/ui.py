"""Terminal output: progress on stderr (bars on a terminal, a few plain lines elsewhere) and the
closing summary, in the manner of ruff and pytest."""

from __future__ import annotations

import contextlib
import shutil
import sys
import time

import click

from analyzer.core.wording import plural


def _tty() -> bool:
    return sys.stderr.isatty()


@contextlib.contextmanager
def git_progress():
    """A callback (stage, done, total) for cloning and fetching, shown as a progress bar."""
    if _tty():
        from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeElapsedColumn(), transient=True, console=_console()) as bar:
            tasks: dict[str, TaskID] = {}

            def report(stage: str, done: int, total: int | None):
                if stage not in tasks:
                    tasks[stage] = bar.add_task(f"git {stage}", total=total)
                bar.update(tasks[stage], completed=done, total=total)
            yield report
    else:
        last_stage: str | None = None
        last_time = 0.0

        def report(stage: str, done: int, total: int | None):
            nonlocal last_stage, last_time
            now = time.monotonic()
            if stage != last_stage or now - last_time > 5 or (total and done == total):
                pct = f" {100 * done // total}%" if total else ""
                click.echo(f"git {stage}{pct} ({done}/{total or '?'})", err=True)
                last_stage, last_time = stage, now
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


def _terminal_width(err: bool) -> int | None:
    """The terminal's width when the stream is one, else None (a log or a pipe keeps whole lines)."""
    stream = sys.stderr if err else sys.stdout
    return shutil.get_terminal_size().columns if stream.isatty() else None


def say(text: str, err: bool = False) -> None:
    """A summary line, wrapped at spaces on a terminal: a terminal cuts it at its width mid-word,
    which leaves halves of a word on two lines. A word longer than a line (a path) stays whole."""
    width = _terminal_width(err)
    if width:
        import textwrap

        text = "\n".join(textwrap.wrap(text, width=width, subsequent_indent="  ", break_long_words=False,
                                       break_on_hyphens=False)) or text
    click.echo(text, err=err)


def revision_named(repo: str, rev: str | None, sha: str) -> str:
    """`owner/name@v0.21.0 (546cacb55fe0)`: the revision as the user named it beside the commit it
    resolved to; `owner/name@546cacb55fe0` when they named the commit itself (a full or short SHA)."""
    from analyzer.core.safe import terminal_text
    import re
    if not rev or (re.fullmatch(r"[0-9a-fA-F]{4,40}", rev) and sha.startswith(rev.lower())):
        return f"{repo}@{sha[:12]}"
    return terminal_text(f"{repo}@{rev} ({sha[:12]})", one_line=True)


def summary(manifest: dict, written: list[str], previous: str | None = None, annotations_kept: int = 0) -> None:
    """The closing lines of `extract`, from its manifest (so a run served from the results cache
    prints what a full run prints). Every Rust file is counted once: its facts came from the
    cache, or it was parsed, or the prefilter found no panic-family call or enum in it."""
    counts = manifest["counts"]
    parts = ", ".join(f"{n} {c}" for c, n in counts.items())
    cache = manifest.get("cache") or {}
    calls = f"{plural(manifest['panicCalls'], 'panic-family call')} in {plural(manifest['filesScanned'], 'Rust file')}"
    if cache.get("result") == "hit":
        how = "unchanged since the last run: results cache"
    else:
        scan = manifest.get("scan") or {}
        how = (f"{scan.get('parsed', 0)} parsed, {scan.get('cached', 0)} from the cache, "
         f"{scan.get('prefiltered', 0)} without a panic-family call or enum, not parsed")
    named = revision_named(manifest["repo"], manifest.get("rev"), manifest["sha"])
    say(f"Analysed {named} in {manifest['timings'].get('total', 0):.2f}s: "
         f"{calls} ({how})", True)
    bad = manifest.get("filesWithParseErrors") or []
    if bad:
        say(f"note: {plural(len(bad), 'file')} did not parse cleanly; {'its' if len(bad) == 1 else 'their'} "
             f"sites were still read where the tree allows (listed in manifest.json)", True)
    skipped = manifest.get("skipped") or []
    if skipped:
        from analyzer.core.safe import terminal_text
        first = terminal_text(f"{skipped[0]['path']}: {skipped[0]['reason']}", one_line=True)
        say(f"note: {plural(len(skipped), 'file')} {'was' if len(skipped) == 1 else 'were'} skipped, unread "
             f"(first: {first}; all are listed in manifest.json)", True)
    partly = manifest.get("partlyRead") or []
    if partly:
        from analyzer.core.safe import terminal_text
        first = terminal_text(f"{partly[0]['path']}: {partly[0]['reason']}", one_line=True)
        say(f"note: {plural(len(partly), 'file')} {'was' if len(partly) == 1 else 'were'} read only in part "
             f"(first: {first}; all are listed in manifest.json)", True)
    carry = manifest.get("annotation")
    if carry:
        against = f" {previous}" if previous else ""
        lost = manifest.get("annotationsNotCarried") or 0
        where = " (listed with their text in annotations-not-carried.jsonl)" if lost else ""
        say(f"Compared with{against}: {carry['unchanged']} unchanged, {carry['changed']} changed, "
             f"{carry['new']} new, {carry['dropped']} dropped; annotations kept on "
             f"{plural(annotations_kept, 'record')}, not carried on {lost}{where}; changed and new records "
             f"go to annotation", True)
    lineage = manifest.get("lineage")
    if lineage:
        tiers = ", ".join(f"{lineage[t]} by {t}" for t in ("id", "history", "function", "message", "window"))
        lost = lineage["notFound"]
        say(f"Earlier records found again: {tiers}; {lost} not found"
             + (" (listed in manifest.json)" if lost else ""), True)
    repos = manifest.get("recordsByRepository")
    per_repo = "; " + ", ".join(f"{n} of {r}" for r, n in repos.items()) if repos and len(repos) > 1 else ""
    say(f"Found {plural(sum(counts.values()), 'record')} ({parts}{per_repo}).")
    say("Wrote " + ", ".join(written))
