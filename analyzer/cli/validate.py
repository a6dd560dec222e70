"""`burn-errors validate`: check a records file or an export folder record by record, and the
reading of every records form into JSON documents that `export` shares."""

from __future__ import annotations

import click

from analyzer.core.errors import CheckFailed
from analyzer.core.wording import plural
from analyzer.cli.common import debug_option, target_option

@click.command()
@click.argument("records", type=click.Path())
@target_option
@debug_option
def validate(records):
    """Check a records file, or a folder written by `export`, record by record; exit 1 and list
    every problem as FILE:LINE: FIELD: WHY.

    Each line is checked against the schema (the pydantic models in analyzer/records/model.py: types,
    value sets, no unknown keys), for text that cannot be written as UTF-8 and for JSON the
    other commands cannot read (nested too deep, a number too long); then each record as a whole:
    sourceCode is the window lineNumber-18..lineNumber+18 cut at the file's ends, the slug ends in
    "-" and the id's first 6 digits (and is made from errorMessage on a new record), githubUrl
    pins that window at analyzedSha, messagePattern is errorMessage, backgroundTag agrees with
    analysis.category, contentChangedAt is not after analyzedAt. An id or slug found twice is
    reported on every line that has it. A line the schema refuses still gets the record checks
    that read only fields it accepted, so one run lists every problem.

    \b
    Examples:
      burn-errors validate output/records.jsonl
      burn-errors validate site/data/        # a folder written by burn-errors export
    """
    from analyzer.records.checks import check_documents

    documents, unit = read_documents(records)
    report = check_documents(documents)
    for line in report.lines():
        click.echo(line)
    bad = report.checked - report.good
    if bad:
        raise CheckFailed(f"Found {plural(len(report.problems), 'problem')} "
                          f"on {plural(bad, unit)} of {records}.")
    click.echo(f"All checks passed! {plural(report.good, 'record')} in {records} "
               f"match{'es' if report.good == 1 else ''} schema version 2.")


def read_documents(records: str):
    """The JSON documents of a records path, and what one is called ("line", "item" or "file"):
    a records file holds one per line, a pretty-printed envelope file one, a JSON array one per
    item; a folder (an export, a folder of envelopes, or a folder `extract` wrote) is read file by
    file as `reader.record_files` lists them, leaving out a file that holds no record (an index)."""
    import json

    from analyzer.records.checks import Document
    from analyzer.records import reader

    in_folder = reader.is_folder(records)
    documents: list = []
    unit = "file" if in_folder else "line"
    for path in reader.record_files(records):
        text = reader.read_text(path)
        if in_folder and reader.holds_no_record(text):
            continue
        try:
            whole = reader.single_document(text)
        except (ValueError, RecursionError):  # JSON no reader takes: checked, and named, line by line
            whole = None
        if isinstance(whole, list):  # a JSON array of envelopes: one document per item
            documents += [Document(str(path), i, json.dumps(item, ensure_ascii=False))
                          for i, item in enumerate(whole, start=1)]
            unit = unit if in_folder else "item"
        elif whole is not None:  # one pretty-printed envelope
            documents.append(Document(str(path), 1, text))
            unit = "file"
        else:
            documents += [Document(str(path), n, raw) for n, raw in enumerate(text.split("\n"), start=1)
                          if raw.strip()]
    return documents, unit

