"""Commands that work on a records file: `render` and `annotate export|import`."""

from __future__ import annotations

from pathlib import Path

import click

from analyzer.core.errors import UserError
from analyzer.core.safe import terminal_text
from analyzer.sinks import Options, formats
from analyzer.core.wording import plural
from analyzer.cli.common import FormatChoice, debug_option, target_option

DEFAULT_RECORDS = "output/records.jsonl"


def _read_records(path: str):
    from analyzer.records import reader
    return reader.read(path)


@click.command()
@click.argument("records", type=click.Path())
@click.option("--format", "fmt", type=FormatChoice("pages"), default="markdown", show_default=True,
              help="markdown: CommonMark pages (md is an alias); html: self-contained HTML pages.")
@click.option("--out", "out_dir", default="output/pages", show_default=True, type=click.Path(file_okay=False),
              help="Folder for the pages and the index.")
@click.option("--issues-url", metavar="URL",
              help="Where \"Report an issue\" opens a new issue (default: the analysed repository's "
                   "new-issue page on the target's host, prefilled with the message and the pinned source link).")
@target_option
@debug_option
def render(records, fmt, out_dir, issues_url):
    """Write one page per record, in the shape of the published error pages, and an index.

    A page has the message, what it means, the source with the line, a link to the source pinned to
    the analysed commit, solutions, an example fix, when it happens and related errors (other
    records of the same operation family or file). Sections whose
    annotation is still missing are left out.
    Pages are named after the record's slug. Beside each page, PAGE.json holds its record as one
    records.jsonl line: the page's "Data as JSON" link. OUT is render's own: earlier pages there
    are replaced whole (a page of a record no longer present is gone), and a folder holding other
    files is refused.

    \b
    Examples:
      burn-errors render output/records.jsonl
      burn-errors render output/records.jsonl --format html --out site/errors/
    """
    from analyzer.features.pages import is_pages_folder
    from analyzer.sinks import envelope

    lines = _read_records(records)
    if not lines:
        raise UserError(f"{records} holds no records; nothing to render")
    sink = formats("pages")[fmt]
    pages = sink.render(lines, Options(issues_url=issues_url))
    out = envelope.write(Path(out_dir), {name: text.encode("utf-8") for name, text in pages.items()},
                         owned=is_pages_folder, kind="pages", what="pages burn-errors rendered")
    annotated = sum(1 for ln in lines if ln.record.is_annotated())
    click.echo(f"Wrote {plural(len(lines), 'page')} ({annotated} annotated), each with its record as "
               f"<page>.json beside it, and {out / ('index.' + sink.load().EXT)}")


@click.group()
def annotate():
    """Hand records to annotators (people or a model) and merge their answers back.

    \b
    Examples:
      burn-errors annotate export output/records.jsonl --out annotation/
      burn-errors annotate import output/records.jsonl annotation/ --out output/records.jsonl
    """


@annotate.command("export")
@click.argument("records", type=click.Path())
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder for the prompts, the answer skeletons and export.json.")
@click.option("--drafts", type=click.Path(dir_okay=False),
              help="The annotations-not-carried.jsonl that `extract --previous` wrote (default: the one "
                   "beside RECORDS, if any): the prompt of each changed record offers the annotation it "
                   "had before as a draft to revise.")
@target_option
@debug_option
def annotate_export(records, out_dir, drafts):
    """Write a prompt and an answer skeleton for each record that needs annotation.

    A record needs annotation when it has none yet, or when it is new or changed (after `extract
    --previous`) and no answer has been imported for it since. For each, OUT gets ID.prompt.md
    (the message, the source, the facts and the exact JSON shape of the answer) and ID.json (that
    JSON with every field null, to fill in). Answers already filled in OUT are kept.

    \b
    Examples:
      burn-errors annotate export output/records.jsonl --out annotation/
      for p in annotation/*.prompt.md; do my-llm < "$p" > "${p%.prompt.md}.json"; done
    """
    from analyzer.features.annotate import export
    from analyzer.core.timestamps import utc_now
    from analyzer.core.outputs import ensure_writable_dir, write_files

    from analyzer.features.annotate import read_not_carried
    from analyzer.pipeline.results_cache import NOT_CARRIED_FILE

    lines = _read_records(records)
    out = Path(out_dir)
    beside = Path(records).parent / NOT_CARRIED_FILE if not Path(records).is_dir() else Path(records) / NOT_CARRIED_FILE
    drafts_path = Path(drafts) if drafts else (beside if beside.is_file() else None)
    earlier = read_not_carried(drafts_path) if drafts_path is not None else []
    todo = export(lines, out, records, utc_now(), earlier) if lines else None
    if todo is None or not todo.exported:
        click.echo(f"Nothing to annotate: {'the' if len(lines) == 1 else 'all'} {plural(len(lines), 'record')} "
                   f"in {records} {'is' if len(lines) == 1 else 'are'} annotated.")
        return
    ensure_writable_dir(out)
    write_files(todo.files)
    by_status: dict[str, int] = {}
    for ln in todo.exported:
        by_status[ln.facts.annotationStatus] = by_status.get(ln.facts.annotationStatus, 0) + 1
    parts = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
    n = len(todo.exported)
    click.echo(f"Wrote {plural(n, 'prompt')} and {plural(n, 'answer skeleton')} to {out} ({parts}).")
    if todo.drafted:
        click.echo(f"{plural(len(todo.drafted), 'prompt')} of changed records offer the annotation the record had "
                   f"before as a draft (from {drafts_path}).")
    dropped = sum(1 for e in earlier if e["why"] == "dropped")
    if dropped:
        click.echo(f"{plural(dropped, 'annotation')} of records not found again stay in {drafts_path}, with "
                   f"the records they were written for.")
    if todo.stale:
        click.echo(f"{plural(len(todo.stale), 'answer')} already filled in {out} "
                   f"{'was' if len(todo.stale) == 1 else 'were'} written for content that changed since "
                   f"(import refuses {'it' if len(todo.stale) == 1 else 'them'}): "
                   f"{', '.join(todo.stale)}; answer again in place of "
                   f"{'it' if len(todo.stale) == 1 else 'them'}, from the new prompt.", err=True)
    if todo.kept:
        click.echo(f"Kept {plural(len(todo.kept), 'answer')} already filled in {out}; import "
                   f"{'it' if len(todo.kept) == 1 else 'them'} with "
                   f"`burn-errors annotate import {records} {out} --out {records}`.")


@annotate.command("import")
@click.argument("records", type=click.Path())
@click.argument("answers", nargs=-1, required=True, type=click.Path())
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="Records file to write (may be RECORDS itself; written whole or not at all).")
@click.option("--skip-bad", is_flag=True,
              help="Import the good answers and list the bad ones (without it, any bad answer means nothing "
                   "is written).")
@click.option("--ai-assisted", is_flag=True,
              help="The answers were written with a model's help: tag the records `ai-assisted`, so their "
                   "pages say \"AI-assisted analysis\" (without it they say \"Annotated analysis\").")
@debug_option
def annotate_import(records, answers, out_path, skip_bad, ai_assisted):
    """Merge answers (files, or folders of *.json) into the records.

    Each answer is checked with the same Annotation model as the records: exactly the id, the
    content hash and the ten annotation fields, strings or null (solutions and preventionTips:
    lists of strings). Its id must be a record of RECORDS; an answer whose content hash is not the
    record's current one (its record changed since export) is refused, wherever it sits. An
    answer with every field still null is skipped. A bad answer stops the import (exit 2, nothing
    written) unless --skip-bad is given. An imported answer replaces the record's ten annotation
    fields.

    \b
    Examples:
      burn-errors annotate import output/records.jsonl annotation/ --out output/records.jsonl
      burn-errors annotate import old.jsonl a.json b.json --out new.jsonl --skip-bad
      burn-errors annotate import output/records.jsonl model-answers/ --out output/records.jsonl --ai-assisted
    """
    from analyzer.features import annotate as an
    from analyzer.core.timestamps import utc_now
    from analyzer.core.outputs import write_files
    from analyzer.sinks import jsonl

    lines = _read_records(records)
    files = an.answer_files(list(answers))
    got = an.read_answers(files, lines, records)
    for path, reason in got.bad:  # file names and the keys of an answer are anyone's text
        click.echo(terminal_text(f"{path}: {reason}", one_line=True), err=True)
    if got.bad and not skip_bad:
        n = len(got.bad)
        raise UserError(f"{plural(n, 'bad answer')} (listed above); nothing was written; fix "
                        f"{'them' if n != 1 else 'it'} or pass --skip-bad to import the good ones")
    merged, replaced = an.merge(lines, got.good, utc_now(), ai_assisted=ai_assisted)
    if got.good:
        write_files({Path(out_path): jsonl.dumps(merged)})
    summary = f"Imported {plural(len(got.good), 'answer')}"
    summary += f" into {out_path}" if got.good else " (nothing written)"
    notes = []
    if replaced:
        notes.append(f"{replaced} replaced an earlier annotation")
    if got.empty:
        notes.append(f"{plural(len(got.empty), 'skeleton')} not filled yet")
    if got.bad:
        notes.append(f"{plural(len(got.bad), 'bad answer')} skipped")
    click.echo(summary + (f"; {', '.join(notes)}" if notes else "") + ".")
