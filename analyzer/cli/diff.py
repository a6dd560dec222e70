"""`burn-errors diff BASE HEAD`: what changed between two revisions or two records files."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.core import ParameterSource

from analyzer.core.config import FAIL_ON
from analyzer.core.errors import CheckFailed, UserError
from analyzer.core.wording import plural
from analyzer.sinks import Options, formats
from analyzer.cli.common import (
    FormatChoice, debug_option, echo_document, open_cache, open_repo, repo_options, warn,
)


@click.command()
@click.argument("base", metavar="BASE")
@click.argument("head", metavar="HEAD")
@repo_options
@click.option("--format", "fmt", type=FormatChoice("diff"), default="markdown", show_default=True,
              help="markdown for a pull-request comment, json for scripts, sarif for GitHub code scanning.")
@click.option("--fail-on", "fail_on", type=click.Choice(FAIL_ON), multiple=True, default=("none",),
              show_default=True,
              help="Exit 1 (after writing the output) when the diff has sites of this kind; repeat for "
                   "more than one kind. any = added, changed or removed; moves never fail.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False),
              help="Write the output to this file (whole or not at all) instead of stdout.")
@click.option("--artifacts-url", metavar="URL",
              help="markdown only: an https link to the full JSON and SARIF (e.g. a workflow run's "
                   "artifact), shown under the summary and under every table cut short.")
@click.option("--with-dependencies", is_flag=True,
              help="Revisions only: also diff each dependency with a target profile (cubecl) from the "
                   "revision BASE's Cargo.lock pins to the one HEAD's pins, each matched within its own "
                   "repository.")
@click.option("--dependency-repo", "dependency_repos", multiple=True, metavar="OWNER/NAME=PATH|URL",
              help="With --with-dependencies: read that dependency from this clone or URL (repeatable).")
@click.option("--jobs", type=click.IntRange(1, 64), help="Parser processes (default: one per core).")
@debug_option
def diff(base, head, repo, repo_name, no_cache, fmt, fail_on, out_file, artifacts_url, with_dependencies,
         dependency_repos, jobs):
    """Compare the records of BASE and HEAD: sites added, removed, changed and moved, and the
    coverage cells that flipped.

    BASE and HEAD are revisions of --repo (SHA, tag or branch), or two records files (or folders
    of them) when both exist; with records, a given --repo lets lineage follow base lines through
    its history. Revisions are read from git objects, without a checkout; with the
    cache, the second revision parses only the files that differ from the first.

    \b
    Examples:
      burn-errors diff v0.18.0 main --repo ../burn
      burn-errors diff origin/main HEAD --repo . --fail-on added --format markdown --out comment.md
      burn-errors diff $BASE_SHA $HEAD_SHA --repo . --format sarif --out burn-errors.sarif
      burn-errors diff old/records.jsonl new/records.jsonl --format json
      burn-errors diff $BASE $HEAD --repo . --artifacts-url "$ARTIFACT_URL" --out comment.md
    """
    from analyzer.features.diff import diff_records, diff_revisions, records_mode
    from analyzer.core.outputs import ensure_writable_file, write_file
    from analyzer.sinks import diff_markdown
    from analyzer.core.ui import status

    kinds = [k for k in fail_on if k != "none"]
    if "none" in fail_on and kinds:
        raise UserError(f"--fail-on none cannot be combined with --fail-on {','.join(kinds)}; drop one")
    if artifacts_url is not None:
        if fmt != "markdown":
            raise UserError(f"--artifacts-url is for --format markdown (the comment links the full "
                            f"output); drop it with --format {fmt}")
        artifacts_url = diff_markdown.checked_url(artifacts_url, "--artifacts-url")
    if dependency_repos and not with_dependencies:
        raise UserError("--dependency-repo says where to read a dependency from; it needs --with-dependencies")
    out = Path(out_file) if out_file else None
    if out is not None:
        if out.is_dir():
            raise UserError(f"--out {out_file} is a folder; give a file name")
        ensure_writable_file(out)  # fail before the analysis, not after it

    if records_mode(base, head):
        if with_dependencies:
            raise UserError("--with-dependencies follows the Cargo.lock pins of two revisions; records files "
                            "already hold what they hold")
        # With --repo given, lineage can follow base lines through its history.
        given = click.get_current_context().get_parameter_source("repo") != ParameterSource.DEFAULT
        result = diff_records(base, head, open_repo(repo, repo_name, no_cache, want=None) if given else None)
    else:
        git_repo = open_repo(repo, repo_name, no_cache, want=base)
        if git_repo.try_resolve(head) is None:  # a mirror may need a fetch for the second revision
            git_repo = open_repo(repo, repo_name, no_cache, want=head)
        cache = open_cache(no_cache)
        try:
            with status(f"Diffing {git_repo.name} {base}..{head}") as say:
                result = diff_revisions(git_repo, base, head, cache=cache, jobs=jobs,
                                        progress=lambda which, text: say(f"{which}: {text}"), warn=warn)
        finally:
            if cache is not None:
                cache.close()
        if with_dependencies:
            from analyzer.cli.diff_dependencies import dependency_diffs
            from analyzer.features.diff import merged
            assert result.base.sha is not None and result.head.sha is not None
            result = merged(result, dependency_diffs(git_repo, result.base.sha, result.head.sha, dependency_repos,
                                                     no_cache, jobs))

    document = formats("diff")[fmt].render(result, Options(fail_on=tuple(kinds), artifacts_url=artifacts_url))
    if out is not None:
        write_file(out, document)
    else:
        echo_document(document, fmt)

    _summary(result, out_file)
    failed = result.failed(kinds)
    if failed:
        n = result.counts()
        raise CheckFailed("Failing (--fail-on " + ",".join(kinds) + "): "
                          + ", ".join(f"{n[k]} {k}" if k in n else plural(len(result.unread), "head file")
                                      + " not read whole" for k in failed) + ".")


def _summary(result, out_file: str | None) -> None:
    """One or two lines on stderr: the counts, and for revisions what the cache saved."""
    n = result.counts()
    b, h = result.base, result.head
    names = (f"{b.sha[:12] if b.sha else b.label}..{h.sha[:12] if h.sha else h.label}")
    click.echo(f"Diff {result.repo or ''}{'@' if result.repo else ''}{names}: {n['added']} added, "
               f"{n['removed']} removed, {n['changed']} changed, {n['moved']} moved, {n['unchanged']} "
               f"unchanged; {plural(n['flipped'], 'coverage cell')} flipped "
               f"({b.records} -> {plural(h.records, 'record')}, {result.timings.get('total', 0):.2f}s)", err=True)
    if result.new_contradictions or result.fixed_contradictions:
        from analyzer.core.safe import terminal_text
        from analyzer.sinks.diff_markdown import claims_line

        def listed(cs) -> str:
            def claim(c) -> str:
                return "advertised, panics in" if c.advertised else "not advertised, handled in"
            named = [f"{c.crate} {c.dtype} ({claim(c)} {plural(len(c.operations), 'operation')})" for c in cs[:5]]
            return ", ".join(named + ([f"+{len(cs) - 5} more"] if len(cs) > 5 else [])) or "none"
        click.echo(terminal_text(f"Backend claims: {claims_line(result)}: new {listed(result.new_contradictions)}; "
                                 f"fixed {listed(result.fixed_contradictions)}", one_line=True), err=True)
    for dep in result.dependencies:
        d = dep["summary"]
        sides = "..".join(dep[w]["sha"][:12] if dep[w] else "(not pinned)" for w in ("base", "head"))
        click.echo(f"  of which {dep['repo']}@{sides}: {d['added']} added, {d['removed']} removed, "
                   f"{d['changed']} changed, {d['moved']} moved, {d['unchanged']} unchanged", err=True)
    if b.source == "git":
        # The cache counts file contents (git blobs): identical files share one, so the totals can
        # be below the files scanned.
        def read(side) -> str:
            return f"{side.cache_misses} of {plural(side.cache_hits + side.cache_misses, 'distinct Rust file content')}"
        click.echo(f"Read and parsed afresh: base {read(b)}, head {read(h)} (the rest from the cache)", err=True)
    if out_file:
        click.echo(f"Wrote {out_file}", err=True)
    sys.stderr.flush()
