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


def check_repositories(previous: str, lines, repos: list[str], allow_other: bool) -> None:
    """Refuse earlier records of a repository this run does not analyse (another target's, say):
    they would hand their ids, first-seen commits and tags to records they are not, matched by
    message and function alone. `--allow-other-repo` takes them anyway, for a fork or a renamed
    repository whose records continue the original's."""
    from analyzer.core.errors import UserError

    if allow_other:
        return
    others: dict[str, int] = {}
    for ln in lines:
        if ln.record.repo not in repos:
            others[ln.record.repo] = others.get(ln.record.repo, 0) + 1
    if others:
        name, n = max(others.items(), key=lambda kv: kv[1])
        more = f" (and {len(others) - 1} other repositories)" if len(others) > 1 else ""
        raise UserError(f"--previous {previous} holds {n} records of {name}{more}, not of {' or '.join(repos)}, "
                        f"which this run analyses; pass the earlier records of this repository, or "
                        f"--allow-other-repo to let another repository's records (a fork's) continue as its own")
