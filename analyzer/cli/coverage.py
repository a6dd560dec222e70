"""`burn-errors coverage`: the dtype support matrix per backend and operation."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from pathlib import Path

import click
from click.core import ParameterSource

from analyzer.core.collector import no_cycle_collection
from analyzer.core.errors import UserError
from analyzer.core.wording import plural
from analyzer.sinks import Options, Sink, formats
from analyzer.cli.common import (
    FormatChoice, analyse, debug_option, echo_document, opened, repo_options, sha_option, warn,
)


@click.command()
@repo_options
@sha_option
@click.option("--records", "records_path", type=click.Path(), metavar="RECORDS",
              help="Build from this records.jsonl (written by `extract`) instead of analysing a revision.")
@click.option("--format", "fmt", type=FormatChoice("coverage"), default="table", show_default=True,
              help="table: one terminal table per backend; markdown; json; html: one self-contained page "
                   "with a heatmap.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write to FILE (whole or not at all) instead of stdout.")
@click.option("--backend", "backends", multiple=True, metavar="CRATE",
              help="Only this backend crate (burn-flex, or just flex); repeat for more. Default: every "
                   "crate with a dtype dispatch, in turn.")
@click.option("--op", "op_patterns", multiple=True, metavar="PATTERN",
              help="Only operations whose name holds PATTERN (conv), or matches it as a glob (conv*d, "
                   "float_*); repeat for more.")
@click.option("--expand", is_flag=True,
              help="Give payload variants (Bool(U8), Bool(U32)) columns of their own instead of folding "
                   "them into Bool (shown partial when they differ).")
@click.option("--with-dependencies", is_flag=True,
              help="Revisions only: beside each backend that runs on a dependency's runtimes (burn-wgpu on "
                   "cubecl's), the limits of those runtimes, the dependency analysed at the revision the "
                   "Cargo.lock pins.")
@click.option("--dependency-repo", "dependency_repos", multiple=True, metavar="OWNER/NAME=PATH|URL",
              help="With --with-dependencies: read that dependency from this clone or URL (repeatable).")
@click.option("--full", is_flag=True,
              help="JSON only: list every cell, the n/a ones too (left out by default: a cell absent from "
                   "`cells` is n/a where the operation's and the dtype's kinds differ).")
@debug_option
def coverage(repo, rev, records_path, fmt, out_file, backends, op_patterns, expand, with_dependencies,
             dependency_repos, no_cache, repo_name, full):
    """Show which dtypes each backend operation handles and which panic.

    Rows are the backend operations: the methods of the ops traits (FloatTensorOps, ModuleOps, ...)
    each backend crate implements, every one of them, with the dtype dispatches its implementation
    reaches through calls within the crate. Cells: handled, panics (a match on the dtype's path
    through the operation panics on it), partial (a Bool whose storages differ), n/a (a dtype of another tensor
    kind than the operation's trait takes), unknown (the audit cannot resolve the dispatch); blank:
    no dtype panic found. Dispatches no operation reaches are listed apart, as helpers.

    With --records (no source tree to read traits from), rows are the dtype-dispatch matches by
    operation (the panic message's prefix before ':', else the function).

    A target whose profile names runtimes (cubecl) has them as rows instead: each runtime or
    compiler dialect by element type and feature.

    \b
    Examples:
      burn-errors coverage --repo ../burn --sha main --op conv --backend ndarray --backend flex --backend tch
      burn-errors coverage --repo ../burn --sha main --backend flex
      burn-errors coverage --records output/records.jsonl --format markdown --out coverage.md
      burn-errors coverage --repo ../burn --format html --out coverage.html
      burn-errors coverage --records output/records.jsonl --format json --out coverage.json
    """
    from analyzer.profiles import current
    from analyzer.core.outputs import ensure_writable_file

    ctx = click.get_current_context()
    out = Path(out_file) if out_file else None
    if out is not None:  # fail before the work when the folder cannot take the file
        ensure_writable_file(out)

    if full and fmt != "json":
        raise UserError(f"--full lists the n/a cells of the JSON matrix; --format {fmt} has no cells list to "
                        f"fill: add --format json, or drop --full")
    options = Options(full=full)
    sink = formats("coverage")[fmt]
    if dependency_repos and not with_dependencies:
        raise UserError("--dependency-repo says where to read a dependency from; it needs --with-dependencies")
    runtimes = bool(current().runtimes.rows)
    if records_path:
        if with_dependencies:
            raise UserError("--with-dependencies follows the Cargo.lock pins of a revision; a records file has "
                            "none: drop --records to analyse a revision")
        given = [f"--{n.replace('_', '-')}" if n != "rev" else "--sha" for n in ("repo", "rev", "repo_name", "no_cache")
                 if ctx.get_parameter_source(n) not in (ParameterSource.DEFAULT, None)]
        if given:
            raise UserError(f"--records reads an existing records file, so {', '.join(given)} "
                            f"{'does' if len(given) == 1 else 'do'} not apply; drop "
                            f"{'it' if len(given) == 1 else 'them'}, or drop --records to analyse a revision")
        # Here only: these load the record schema (pydantic), which a served matrix does without.
        from analyzer.features.coverage.matches import build
        from analyzer.features.coverage.runtimes import build_runtimes
        from analyzer.records import reader

        lines = reader.read(records_path)
        if lines and all(ln.analysis is None for ln in lines):
            raise UserError(f"{records_path} holds records without analysis (the published form), which "
                            f"say nothing of the dtypes each arm handles; give the records.jsonl of "
                            f"`burn-errors extract`, or drop --records to analyse a revision")
        matrix = build_runtimes(lines, collapse=not expand) if runtimes else build(lines, collapse=not expand)
        with _rendering():
            _show(_filtered(matrix, backends, op_patterns, records_path), sink, out, options=options)
        return
    from analyzer.pipeline import coverage as audit

    with opened(repo, rev, repo_name, no_cache) as (git_repo, sha, cache):
        doc_key = None
        # A document is kept for the revision's operations matrix only: the runtimes view and a
        # dependency's limits are built at every run, and a terminal table is drawn for its width.
        terminal = out is None and sink.terminal
        if cache is not None and not runtimes and not with_dependencies and not terminal:
            source = f"{git_repo.name}@{sha[:12]}"
            doc_key = audit.document_key(current().name, git_repo.name, sha, not expand, fmt, backends, op_patterns,
                                         full)
            row, _ = audit.kept_document(cache, doc_key, sink.link_syntax, git_repo.name, sha, current(), warn=warn)
            if row is not None:
                _emit(row["data"], fmt, out, True, source, row["operations"], row["backends"])
                return
        matrix, source, served = _tree_matrix(git_repo, sha, cache, no_cache, not expand, runtimes,
                                              dependency_repos if with_dependencies else None)
        with _rendering():
            matrix = _filtered(matrix, backends, op_patterns, source)
            if doc_key is None:
                _show(matrix, sink, out, served, source, options)
                return
            text = sink.render(matrix, options)
            n_ops, n_crates = _counts(matrix)
            audit.keep_document(cache, doc_key, sink.link_syntax, text, git_repo.name, sha, current(), n_ops, n_crates)
        # Written before the cache is closed: the kept rows are compressed and stored meanwhile.
        _emit(text, fmt, out, served, source, n_ops, n_crates)


@contextmanager
def _rendering():
    """The cycle collector kept off the matrix and the document while a view is filtered and
    rendered: the matrix lives until the command ends (moved out of the collector's reach), and
    a render builds one tree of dicts, lists and strings that holds no cycle and is dropped whole,
    which each collection while it grows would walk again. Refcounting still frees what is dropped."""
    gc.freeze()
    with no_cycle_collection():
        yield


def _filtered(matrix, backends: tuple[str, ...], op_patterns: tuple[str, ...], source: str):
    if backends:
        matrix = matrix.only(_resolve_backends(matrix, backends, source))
    if op_patterns:
        matrix = matrix.only_operations_any(op_patterns)
        if not matrix.crates():
            raise UserError(f"--op {' --op '.join(op_patterns)}: no operation of the chosen backends matches in "
                            f"{source}; a pattern is a substring (conv) or a glob (conv*d)")
    return matrix


def _counts(matrix) -> tuple[int, int]:
    return sum(len(matrix.operations(crate)) for crate in matrix.crates()), len(matrix.crates())


def _show(matrix, sink: Sink, out: Path | None, served: bool = False, source: str = "",
          options: Options | None = None) -> None:
    if out is None and sink.terminal:
        sink.draw(matrix, options)
        _say_served(served, source)
        return
    _emit(sink.render(matrix, options), sink.name, out, served, source, *_counts(matrix))


def _emit(text: str | list[bytes], fmt: str, out: Path | None, served: bool, source: str, n_ops: int,
          n_crates: int) -> None:
    """The document on stdout or into `out` (whole or not at all; a served one's pieces of bytes
    there as they are, UTF-8 already), then what was said of it."""
    if out is None:
        if not isinstance(text, str):  # on stdout as a built document is echoed: as text
            text = b"".join(text).decode("utf-8")
        echo_document(text, fmt, nl=not text.endswith("\n"))
        _say_served(served, source)
        return
    from analyzer.core.outputs import write_file

    write_file(out, text)
    _say_served(served, source)
    click.echo(f"Wrote {out} ({fmt}: {plural(n_ops, 'operation')} in {plural(n_crates, 'backend')}).", err=True)


def _say_served(served: bool, source: str) -> None:
    """After the output (an error stays the one line on stderr): the matrix came from the cache."""
    if served:
        from analyzer.core.safe import terminal_text
        click.echo(terminal_text(f"Coverage of {source}: unchanged since the last run (results cache)",
                                 one_line=True), err=True)


def _tree_matrix(git_repo, sha: str, cache, no_cache: bool, collapse: bool, runtimes: bool = False,
                 dependency_repos: tuple[str, ...] | None = None):
    """(matrix, source, served) of a revision: from the results cache when an earlier run with the
    same rules and options kept it (said on stderr), else analysed and built, then kept. The
    runtimes view is built each time; a dependency's runtime limits (`dependency_repos` not None:
    --with-dependencies) are added after the matrix is kept, so a run without them is never
    served them."""
    if runtimes:
        from analyzer.features.coverage.runtimes import build_runtimes
        ex = analyse(git_repo, sha, cache, code=True)
        matrix = build_runtimes(ex.lines, collapse=collapse)
        matrix.repo, matrix.sha = matrix.repo or ex.repo, matrix.sha or ex.sha
        return matrix, f"{ex.repo}@{ex.sha[:12]}", False
    matrix, source, served = _operations_matrix(git_repo, sha, cache, collapse)
    if dependency_repos is not None:
        from analyzer.cli.coverage_dependencies import dependency_limits
        matrix.runtime_limits = dependency_limits(git_repo, sha, dependency_repos, no_cache, collapse)
    return matrix, source, served


def _operations_matrix(git_repo, sha: str, cache, collapse: bool):
    """The operations matrix of `sha`, served from the results cache when kept, else built and kept."""
    from analyzer.pipeline import coverage as audit
    from analyzer.profiles import current

    source = f"{git_repo.name}@{sha[:12]}"
    key = audit.matrix_key(current().name, git_repo.name, sha, collapse)
    matrix, _ = audit.kept_matrix(cache, key, git_repo.name, sha, current(), warn=warn)
    if matrix is not None:
        return matrix, source, True
    ex = analyse(git_repo, sha, cache, code=True, sources=True)
    return audit.build_and_keep(cache, key, ex, git_repo, collapse), f"{ex.repo}@{ex.sha[:12]}", False


def _resolve_backends(matrix, wanted: tuple[str, ...], source: str) -> list[str]:
    """Crate names from --backend values: exact, or the name without the target's crate prefix
    (`flex` for `burn-flex`)."""
    from analyzer.profiles import current
    have = matrix.crates() + sorted({lim.crate for lim in matrix.runtime_limits} - set(matrix.crates()))
    prefixes = current().code.crate_tag_prefixes
    out: list[str] = []
    for name in wanted:
        hit = name if name in have else next((p + name for p in prefixes if p + name in have), None)
        if hit is None:
            choices = ", ".join(have) if have else "none: no dtype-dispatch sites were found"
            raise UserError(f"--backend {name}: no backend operation or dtype dispatch in that crate in {source}; "
                            f"backends: {choices}")
        if hit not in out:
            out.append(hit)
    return out

