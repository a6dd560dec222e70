"""The earlier records `extract --previous` hands fields on from, checked as `validate` checks
them before anything is copied."""

from __future__ import annotations


def check_previous(previous: str) -> None:
    """Refuse earlier records that `validate` refuses: their slugs, tags and dates are handed on
    to the records written now, so a file anyone could write must pass the same checks first."""
    from analyzer.cli.validate import read_documents
    from analyzer.core.errors import UserError
    from analyzer.records.checks import check_documents

    report = check_documents(read_documents(previous)[0])
    if report.problems:
        first = report.lines()[0]
        more = f" (and {len(report.problems) - 1} more)" if len(report.problems) > 1 else ""
        raise UserError(f"--previous {previous} does not pass `burn-errors validate`: {first}{more}; its "
                        f"slugs, tags and dates would be copied into the new records, so fix it first")
