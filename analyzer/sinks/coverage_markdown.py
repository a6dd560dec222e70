"""The coverage matrix as markdown (GitHub flavour): a summary of the backends, then per backend one
table of operations by dtypes, each row linking the pinned source lines of its panicking arms."""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.features.coverage.model import (
    HANDLED, NA, PANICS, PARTIAL, UNKNOWN, Group, Matrix, label, short_path, unique_sites,
)
from analyzer.features.coverage.settings import setting_tables
from analyzer.sinks.coverage_fold import delegating, nothing_to_show, stub_line
from analyzer.core.safe import md_cell, md_code_span, md_link, md_one_line
from analyzer.core.wording import plural
from analyzer.sinks import Options

MARK = {HANDLED: "✅", PANICS: "❌", PARTIAL: "🟡", NA: "–", UNKNOWN: "❔"}
PREEMPTED_MARK = "⏭️"
LEGEND = (f"{MARK[HANDLED]} handled · {MARK[PANICS]} panics · {MARK[PARTIAL]} partial (some Bool storages or "
          f"quantization schemes handled, others panic) · {MARK[NA]} n/a (a dtype of another tensor "
          f"kind than the operation takes) · {MARK[UNKNOWN]} unknown (the audit cannot resolve the dispatch) · "
          f"{PREEMPTED_MARK} panics only behind an earlier refusal a user meets first (linked in the source column) · "
          f"blank: no dtype panic found")


def render(matrix: Matrix, options: Options) -> str:
    out: list[str] = []
    where = (f" of {md_code_span(matrix.repo, in_table=False)} at {md_code_span(matrix.sha[:12], in_table=False)}"
             if matrix.sha else "")
    out.append(f"# dtype coverage{where}\n")
    everyone = matrix.crates()
    if not everyone:
        out.append(md_cell(nothing_to_show(matrix)) + "\n")
        return "\n".join(out + _runtime_limits(matrix))
    n_ops = sum(len(matrix.operations(crate)) for crate in everyone)
    out.append(f"{len(matrix.dispatches)} dtype-dispatch matches in {n_ops} operations of "
               f"{plural(len(everyone), 'backend')}. {LEGEND}.\n")
    folded = delegating(matrix)
    crates = [c for c in everyone if c not in folded]
    if folded:
        out.append(_folded(folded))
    if len(crates) > 1:
        out.append("## Summary: operations that panic on each dtype\n")
        for group in matrix.groups:
            out.append(_summary(matrix, group, crates))
    for crate in crates:
        ops, matches = len(matrix.operations(crate)), len(matrix.dispatches_of(crate))
        counts = matrix.counts(crate)
        out.append(f"## {md_one_line(crate)}\n")
        out.append(f"{plural(ops, 'operation')}, {plural(matches, 'match', 'matches')}; cells: "
                   f"{counts[HANDLED]} handled, {counts[PANICS]} panic, {counts[PARTIAL]} partial, "
                   f"{counts[UNKNOWN]} unknown.\n")
        for lim in matrix.limits_of(crate):
            by = ", ".join(f"{md_code_span(op)} at " + md_link(md_cell(f"{short_path(s.path, crate)}:{s.line}"), s.url)
                           for op, s in lim.rejected_by)
            out.append(f"Cannot hold {md_code_span(label(lim.dtype))}: {by} rejects it, so every operation on it "
                       f"panics.\n")
        groups = matrix.groups_of(crate)
        for group in groups:
            if len(groups) > 1:
                out.append(f"### {md_one_line(group.enum)}\n")
            out.append(_backend_table(matrix, crate, group))
    if matrix.settings:
        out.append("## Settings: the modes each operation handles\n")
        for enum, variants, rows in setting_tables(matrix.settings):
            out.append(f"### {md_one_line(enum)}\n")
            table = ["| operation | backend | " + " | ".join(md_code_span(v) for v in variants) + " | source |",
                     "|---|---|" + ":-:|" * len(variants) + "---|"]
            for (op, crate), by_variant in rows.items():
                marks = [MARK[by_variant[v].status] if v in by_variant else " " for v in variants]
                panicking = unique_sites([x for st in by_variant.values() if st.status != HANDLED for x in st.sites])
                links = [md_link(md_cell(f"{short_path(x.path, crate)}:{x.line}"), x.url) for x in panicking]
                table.append("| " + " | ".join([md_code_span(op), md_cell(crate), *marks, "<br>".join(links)]) + " |")
            out.append("\n".join(table) + "\n")
    if matrix.claims:
        out += _claims(matrix)
    out += _runtime_limits(matrix)
    if matrix.helpers:
        out.append("## Helpers no operation reaches\n")
        for d in matrix.helpers:
            where = md_link(md_cell(f"{short_path(d.path, d.crate)}:{d.line}"), d.sites[0].url)
            panics = ", ".join(md_code_span(label(x)) for x in d.panics) or "none"
            out.append(f"- {md_cell(d.crate)} {md_code_span(d.function or d.operation)} {where}: panics on {panics}"
                       + (f" ({md_cell(d.via)})" if d.via else ""))
        out.append("")
    return "\n".join(out)


def _claims(matrix: Matrix) -> list[str]:
    out = ["## Claims: what each backend's `dtype_usage` advertises, against the cells\n",
           "| backend | dtype | advertised | where | panics in | handled although not advertised |",
           "|---|---|---|---|---|---|"]
    stubs: dict[str, set[str]] = {}
    for cl in matrix.claims:
        adv = {True: "yes", False: "no", None: f"? ({cl.reading})"}[cl.advertised]
        out.append("| " + " | ".join([md_cell(cl.crate), md_code_span(label(cl.dtype)), adv, md_cell(cl.where),
                                      _ops_list(cl.panics_in), _ops_list(cl.handled_in)]) + " |")
        if cl.stubs_in:
            stubs.setdefault(cl.crate, set()).update(cl.stubs_in)
    if stubs:
        out.append("\nNot implemented (stubs, whatever the dtype; not counted above): "
                   + "; ".join(f"{md_cell(crate)}: {_ops_list(sorted(ops))}" for crate, ops in sorted(stubs.items())))
    return out + [""]


def _folded(folded: dict) -> str:
    """One line per backend that only delegates, its stubs linked."""
    out = ["## Backends that delegate\n"]
    for f in folded.values():
        line = stub_line(f, md_cell, lambda op, s, crate=f.crate: md_code_span(op) + " ("
                         + md_link(md_cell(f"{short_path(s.path, crate)}:{s.line}"), s.url) + ")")
        out.append(f"- **{md_cell(f.crate)}**: {line}")
    return "\n".join(out) + "\n"


def _ops_list(ops: list[str], most: int = 8) -> str:
    shown = ", ".join(md_code_span(o) for o in ops[:most])
    return shown + (f" and {len(ops) - most} more" if len(ops) > most else "")


def _header(group: Group, first: list[str], last: Sequence[str] = ()) -> list[str]:
    cols = [*first, *(md_code_span(label(d)) for d in group.dtypes), *last]
    aligns = ["---"] * len(first) + [":-:"] * len(group.dtypes) + ["---"] * len(last)
    return ["| " + " | ".join(cols) + " |", "|" + "|".join(aligns) + "|"]


def _backend_table(matrix: Matrix, crate: str, group: Group) -> str:
    rows = _header(group, ["operation"], ["source"])
    for op in matrix.operations_in(crate, group):
        operation = matrix.operation(crate, op)
        marks = []
        for dtype in group.dtypes:
            cell = matrix.get(crate, op, dtype)
            marks.append(" " if cell is None else PREEMPTED_MARK if cell.preempted else MARK[cell.status])
        links = []
        for s in matrix.sites_of(crate, op, group.enum):
            fn = f" {md_code_span(s.function)}" if s.function and s.function != op else ""
            links.append(md_link(md_cell(f"{short_path(s.path, crate)}:{s.line}"), s.url) + fn)
        site = matrix.unimplemented.get((crate, op))
        if site is not None:
            where = md_cell(f"{short_path(site.path, crate)}:{site.line}")
            links.append("not implemented: " + md_link(where, site.url))
        first = _preempting(matrix, crate, op, group)
        if first:
            links.append("met first: " + ", ".join(
                md_cell(why) + (" " + md_link(md_cell(f"{short_path(s.path, crate)}:{s.line}"), s.url) if s else "")
                for why, s in first))
        if operation is not None and not links and not matrix.dispatches_of(crate, op):
            links.append(f"{md_cell(operation.trait)}: no panic found")
        rows.append("| " + " | ".join([md_code_span(op), *marks, "<br>".join(links)]) + " |")
    return "\n".join(rows) + "\n"


def _preempting(matrix: Matrix, crate: str, op: str, group: Group) -> list:
    """(why, the earlier refusal's site or None) of the row's preempted cells, once each."""
    out: dict = {}
    for dtype in group.dtypes:
        cell = matrix.get(crate, op, dtype)
        for p in cell.preempted if cell is not None else ():
            out.setdefault((p.why, p.site.record_id if p.site else ""), (p.why, p.site))
    return list(out.values())


def _summary(matrix: Matrix, group: Group, shown: list[str]) -> str:
    crates = [c for c in shown if group in matrix.groups_of(c)]
    if not crates:
        return ""
    rows = _header(group, ["backend", "ops"])
    rows[1] = rows[1].replace("|---|---|", "|---|--:|", 1)
    for crate in crates:
        marks = []
        for dtype in group.dtypes:
            t = matrix.tally(crate, dtype)
            bad = len(t[PANICS]) + len(t[PARTIAL])
            marks.append(f"{bad}" if bad else (MARK[HANDLED] if t[HANDLED] else MARK[NA] if t[NA] else " "))
        rows.append("| " + " | ".join([md_cell(crate), str(len(matrix.operations_in(crate, group))), *marks]) + " |")
    note = (f"Per backend and dtype: how many of its operations panic (or partly panic) on it; "
            f"{MARK[HANDLED]} none; {MARK[NA]} no operation takes it; blank: no dispatch or no panic found.")
    title = f"**{md_cell(group.enum)}**\n\n" if len(matrix.groups) > 1 else ""
    return title + "\n".join(rows) + "\n\n" + note + "\n"


def _runtime_limits(matrix: Matrix) -> list[str]:
    """Beside the backends: what the runtimes each runs on (a dependency's) reject; none without
    --with-dependencies."""
    if not matrix.runtime_limits:
        return []
    rows = ["## Runtime limits: what the runtimes each backend runs on reject\n",
            "| backend | runtime | type or feature | status | source |", "|---|---|---|:-:|---|"]
    for lim in matrix.runtime_limits:
        links = "<br>".join(md_link(md_cell(f"{lim.repo} {s.path}:{s.line}"), s.url) for s in lim.sites[:5])
        rows.append("| " + " | ".join([md_cell(lim.crate), md_cell(lim.runtime), md_code_span(label(lim.dtype)),
                                       MARK[lim.status], links]) + " |")
    return ["\n".join(rows) + "\n"]
