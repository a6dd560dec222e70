"""`burn-errors export`: write the records as the published dataset serves them, one envelope per
record and an index."""

from __future__ import annotations

from pathlib import Path

import click

from analyzer.core.errors import UserError
from analyzer.core.wording import plural
from analyzer.cli.common import debug_option
from analyzer.cli.validate import read_documents

def _dataset_version(ctx, param, value):
    if value is None:
        return None
    from analyzer.sinks.envelope import dataset_version
    try:
        return dataset_version(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


@click.command()
@click.argument("records", type=click.Path())
@click.option("--out", "out_dir", required=True, type=click.Path(),
              help="Folder to write; an earlier export there is replaced whole (a folder holding anything "
                   "else is refused).")
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
    from analyzer.records.checks import check_documents
    from analyzer.sinks import envelope
    from analyzer.core.timestamps import utc_now

    report = check_documents(read_documents(records)[0])
    if report.problems:
        first, count = report.lines()[0], len(report.problems)
        more = f" (and {count - 1} more problems)" if count > 1 else ""
        raise UserError(f"{first}{more}; only valid records are exported, run `burn-errors validate "
                        f"{records}` to list every problem")
    if not report.records:
        raise UserError(f"{records} holds no records; nothing to export")
    version = dataset_version or utc_now()
    folder = envelope.write(Path(out_dir), envelope.build(report.records, version))
    click.echo(f"Wrote {plural(len(report.records), 'envelope')} and {folder / envelope.INDEX} "
               f"(dataset version {version})")

