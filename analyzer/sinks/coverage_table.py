"""The coverage matrix as terminal tables (rich): one table per backend and dtype enum, rows the
operations, one narrow column per dtype; under each operation the file and line of its panicking
arms. Fits 100 columns. With several backends a summary table closes the output.
"""

from __future__ import annotations

import io
import os
import sys

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from analyzer.features.coverage.model import (
    HANDLED, NA, PANICS, PARTIAL, UNKNOWN, Group, Matrix, label, short_path, unique_sites,
)
from analyzer.features.coverage.settings import setting_tables
from analyzer.sinks.coverage_fold import delegating, nothing_to_show, stub_line
from analyzer.core.safe import rich_text, terminal_text
from analyzer.core.wording import plural
from analyzer.sinks import Options

GLYPH = {HANDLED: ("✓", "green"), PANICS: ("✗", "bold red"), PARTIAL: ("◐", "yellow"), NA: ("–", "dim"),
         UNKNOWN: ("?", "magenta")}
ABSENT = ("·", "dim")
LEGEND = ("✓ handled  ✗ panics  ◐ partial: some Bool storages or schemes panic  – n/a: another tensor "
          "kind  ? unknown: dispatch not resolved  » panics only behind an earlier refusal  · no panic found")
PREEMPTED = ("»", "red")
WIDTH = 100  # for files: the width the table is designed for
NARROW = 24  # a first column narrower than this shows no file names


def renderables(matrix: Matrix, width: int = WIDTH) -> list:
    out: list = []
    if not matrix.crates():
        return [Text(_t(nothing_to_show(matrix))), *_runtime_limit_renderables(matrix, width)]
    folded = delegating(matrix)
    # A backend that only delegates is its heading and one line; the tables are the others'.
    crates = [c for c in matrix.crates() if c not in folded]
    title = f"dtype coverage of {_t(matrix.repo)}@{matrix.sha[:12]}" if matrix.sha else "dtype coverage"
    out.append(Text(title, style="bold"))
    first = _first_width(matrix)
    out += _folded(folded.values())
    for crate in crates:
        out.append(Text())
        out.append(_backend_heading(matrix, crate))
        for lim in matrix.limits_of(crate):
            by = ", ".join(f"{op} {short_path(site.path, crate)}:{site.line}" for op, site in lim.rejected_by)
            out.append(Text(abbreviate(_t(f"cannot hold {label(lim.dtype)}: rejected by {by}"), width), style="dim"))
        if matrix.focused and len(crates) > 1:
            continue  # the operations are shown side by side below
        for group in matrix.groups_of(crate):
            out.append(_backend_table(matrix, crate, group, _room(group, first, width)))
    if matrix.focused and len(crates) > 1:
        for group in matrix.groups:
            room = _room(group, first, width)
            # Too narrow a first column for file names: they go under the table, a line each.
            inline = room >= NARROW
            t = _side_by_side_table(matrix, group, room, inline, crates)
            if t is not None:
                out.append(Text())
                out.append(Text(f"The chosen operations side by side ({group.enum})", style="bold"))
                out.append(t)
                if not inline:
                    out += [Text(abbreviate(line, width), style="dim")
                            for line in _location_lines(matrix, group, crates)]
    if len(crates) > 1:
        for group in matrix.groups:
            t = _summary_table(matrix, group, width, crates)
            if t is not None:
                out.append(Text())
                out.append(Text(f"Operations that panic on each dtype ({_t(group.enum)}), per backend", style="bold"))
                out.append(t)
    out += _settings_renderables(matrix, first)
    out += _claims_renderables(matrix, width)
    out += _runtime_limit_renderables(matrix, width)
    if matrix.helpers:
        out.append(Text())
        out.append(Text("Helpers no operation reaches (their panics, by file and line)", style="bold"))
        for d in matrix.helpers:
            panics = " ".join(label(x) for x in d.panics) or "none"
            line = f"{d.crate} {d.function or d.operation or '?'} {short_path(d.path, d.crate)}:{d.line}: {panics}"
            out.append(Text(abbreviate(line, width), style="dim"))
    out.append(Text(LEGEND, style="dim"))
    return out


def _folded(folded) -> list:
    """A blank line and one line per backend that only delegates."""
    out: list = []
    for f in folded:
        line = Text(_t(f.crate), style="bold cyan")
        line.append(": " + stub_line(f, _t, lambda op, s, crate=f.crate:
                                     _t(f"{op} {short_path(s.path, crate)}:{s.line}")))
        out += [Text(), line]
    return out


def draw(matrix: Matrix, options: Options) -> None:
    print_tables(matrix)


def print_tables(matrix: Matrix, console: Console | None = None) -> None:
    if console is None:
        # A terminal says how wide it is; a pipe gets the width the tables are designed for.
        sized = sys.stdout.isatty() or os.environ.get("COLUMNS")
        console = Console(highlight=False, soft_wrap=False, width=None if sized else WIDTH)
    for r in renderables(matrix, console.width):
        console.print(r)


def render(matrix: Matrix, options: Options) -> str:
    return dumps(matrix)


def dumps(matrix: Matrix, width: int = WIDTH) -> str:
    """Plain text (no colours) for a file."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False, highlight=False,
                      emoji=False, legacy_windows=False)
    print_tables(matrix, console)
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())


def _backend_heading(matrix: Matrix, crate: str) -> Text:
    n_ops = len(matrix.operations(crate))
    n_matches = len(matrix.dispatches_of(crate))
    counts = matrix.counts(crate)
    t = Text()
    t.append(_t(crate), style="bold cyan")
    t.append(f"  {plural(n_ops, 'operation')}, {plural(n_matches, 'dtype match')}; cells:  ")
    t.append(f"{counts[HANDLED]} ✓", style="green")
    t.append("  ")
    t.append(f"{counts[PANICS]} ✗", style="red")
    if counts[PARTIAL]:
        t.append("  ")
        t.append(f"{counts[PARTIAL]} ◐", style="yellow")
    if counts[UNKNOWN]:
        t.append("  ")
        t.append(f"{counts[UNKNOWN]} ?", style="magenta")
    return t


def _t(text: object) -> str:
    """Record text for a rich Text (not read as markup): one line, no control characters."""
    return terminal_text(text, one_line=True)


def _header(dtype: str) -> str:
    """A column header (read as rich markup, so escaped)."""
    name = rich_text(label(dtype))
    return name.replace("(", "\n(", 1) if "(" in name else name


def _glyph(status: str | None) -> Text:
    g, style = GLYPH[status] if status else ABSENT
    return Text(g, style=style)


def abbreviate(name: str, width: int) -> str:
    """A name cut in the middle to `width` characters, its start and end kept:
    `deform_conv2d_backward` -> `deform_co…_backward`. Never wrapped."""
    if len(name) <= width:
        return name
    if width <= 1:
        return "…"[:width]
    head = (width - 1 + 1) // 2
    tail = width - 1 - head
    return name[:head] + "…" + (name[-tail:] if tail else "")


def _room(group: Group, first: int, width: int) -> int:
    """The first column's width in a table of this group: `first`, or less when the group has
    many columns, so the dtype headers are never cut."""
    dtypes = sum(max(len(part) for part in _header(d).split("\n")) + 1 for d in group.dtypes)
    return max(14, min(first, width - dtypes - 1))


def _first_width(matrix: Matrix, cap: int = 34) -> int:
    """One width for every table's first column, so the dtype columns line up across backends."""
    longest = max((len(op) for c in matrix.crates() for op in matrix.operations(c)), default=10)
    longest = max([longest] + [len(short_path(d.path, d.crate)) + 1 + len(str(d.line)) + 1
                               for d in matrix.dispatches]
                  + [len(f"not implemented {short_path(s.path, c)}:{s.line}") + 1
                     for (c, _), s in matrix.unimplemented.items()])
    return min(max(longest, 14), cap)


def _backend_table(matrix: Matrix, crate: str, group: Group, first: int) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=0, pad_edge=False, show_edge=False,
                  header_style="bold", collapse_padding=True)
    table.add_column(rich_text(group.enum), overflow="crop", no_wrap=True, width=first)
    for d in group.dtypes:
        table.add_column(_header(d), justify="center", no_wrap=True)
    for op in matrix.operations_in(crate, group):
        where = Text(abbreviate(_t(op), first), style="bold")
        for loc in _locations(matrix, crate, op, group):
            where.append("\n " + abbreviate(loc, first - 1), style="dim")
        row = [where]
        for dtype in group.dtypes:
            cell = matrix.get(crate, op, dtype)
            row.append(Text(PREEMPTED[0], style=PREEMPTED[1]) if cell is not None and cell.preempted
                       else _glyph(cell.status if cell else None))
        table.add_row(*row)
    return table


def _settings_renderables(matrix: Matrix, first: int) -> list:
    out: list = []
    for enum, variants, rows in setting_tables(matrix.settings):
        out.append(Text())
        out.append(Text(f"Settings: the {_t(enum)} variants each operation handles", style="bold"))
        out.append(_settings_table(variants, rows, first))
    return out


READING = {"device": "its answer depends on the device at run time",
           "guard or nested match": "a guard or a nested match decides",
           "not a match": "not a match on the dtype the audit reads"}


def _claims_renderables(matrix: Matrix, width: int) -> list:
    """Only the contradictions: an advertised dtype some operation panics on, or one not advertised
    that operations handle; a claim the audit cannot read, once per backend."""
    out: list = []
    unread: dict[str, str] = {}
    for cl in matrix.claims:
        path, _, line = cl.where.rpartition(":")
        where = f"{short_path(path, cl.crate)}:{line}"
        if cl.advertised is True and cl.panics_in:
            text = f"{cl.crate} advertises {label(cl.dtype)} ({where}); panics in {', '.join(cl.panics_in)}"
        elif cl.advertised is False and cl.handled_in:
            text = f"{cl.crate} does not advertise {label(cl.dtype)} ({where}); handled in {', '.join(cl.handled_in)}"
        else:
            if cl.advertised is None:
                unread.setdefault(cl.crate, f"{cl.crate} {label(cl.dtype)}: {READING.get(cl.reading, cl.reading)} "
                                            f"({where})")
            continue
        out.append(Text(_t(text), style="dim"))
    out += [Text(_t(u), style="dim") for u in unread.values()]
    if out:
        out.insert(0, Text("Claims: dtype_usage against the cells", style="bold"))
        out.insert(0, Text())
    return out


def _runtime_limit_renderables(matrix: Matrix, width: int) -> list:
    """--with-dependencies: what the runtimes each backend runs on reject, a line each."""
    if not matrix.runtime_limits:
        return []
    out: list = [Text(), Text("Runtime limits: what the runtimes each backend runs on reject", style="bold")]
    for lim in matrix.runtime_limits:
        where = ", ".join(f"{s.path}:{s.line}" for s in lim.sites[:2])
        text = f"{lim.crate} on {lim.runtime}: {label(lim.dtype)} {lim.status} ({lim.repo} {where})"
        out.append(Text(abbreviate(_t(text), width), style="dim"))
    return out


def _settings_table(variants: list[str], rows: dict, first: int) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=0, pad_edge=False, show_edge=False, header_style="bold",
                  collapse_padding=True)
    table.add_column("operation · backend", overflow="crop", no_wrap=True, width=first)
    for v in variants:
        table.add_column(rich_text(v), justify="center", no_wrap=True)
    for (op, crate), by_variant in rows.items():
        where = Text(abbreviate(_t(op), first), style="bold")
        where.append("\n " + abbreviate(_t(crate), first - 1), style="cyan")
        for x in unique_sites([x for st in by_variant.values() if st.status != HANDLED for x in st.sites]):
            where.append("\n " + abbreviate(f"{_t(short_path(x.path, crate))}:{x.line}", first - 1), style="dim")
        table.add_row(where, *(_glyph(by_variant[v].status if v in by_variant else None) for v in variants))
    return table


def _location_lines(matrix: Matrix, group: Group, shown: list[str]) -> list[str]:
    """`operation · backend: where` for every row of a side-by-side table that has dispatches."""
    out = []
    for op, crates in _rows_by_operation(matrix, group, shown).items():
        for crate in crates:
            out += [f"{op} · {crate}: {loc}" for loc in _locations(matrix, crate, op, group)]
    return out


def _rows_by_operation(matrix: Matrix, group: Group, shown: list[str]) -> dict[str, list[str]]:
    by_op: dict[str, list[str]] = {}
    for crate in shown:
        if group in matrix.groups_of(crate):
            for op in matrix.operations_in(crate, group):
                by_op.setdefault(op, []).append(crate)
    return dict(sorted(by_op.items()))


def _side_by_side_table(matrix: Matrix, group: Group, first: int, inline: bool, shown: list[str]) -> Table | None:
    """Rows operation x backend: each operation's name, then one row per backend that has it in
    this group, with the file and line of its panics under it."""
    by_op = _rows_by_operation(matrix, group, shown)
    if not by_op:
        return None
    table = Table(box=box.SIMPLE_HEAD, padding=0, pad_edge=False, show_edge=False,
                  header_style="bold", collapse_padding=True)
    table.add_column(abbreviate("operation · backend", first), overflow="crop", no_wrap=True, width=first)
    for d in group.dtypes:
        table.add_column(_header(d), justify="center", no_wrap=True)
    for op, crates in by_op.items():
        table.add_row(Text(abbreviate(op, first), style="bold"), *([""] * len(group.dtypes)))
        for crate in crates:
            where = Text(" " + abbreviate(crate, first - 1), style="cyan")
            for loc in _locations(matrix, crate, op, group) if inline else []:
                where.append("\n  " + abbreviate(loc, first - 2), style="dim")
            table.add_row(where, *(_glyph(c.status if (c := matrix.get(crate, op, d)) else None)
                                   for d in group.dtypes))
    return table


def _locations(matrix: Matrix, crate: str, op: str, group: Group) -> list[str]:
    """`path:line[,line]`, or `function() path:line` for a helper, of the dispatches behind a
    row, once each (cut in the middle when long, so the function and the line both stay)."""
    out: dict[str, None] = {}
    for d in matrix.dispatches_of(crate, op):
        if d.enum != group.enum:
            continue
        loc = f"{_t(short_path(d.path, crate))}:{','.join(str(s.line) for s in d.sites)}"
        if d.function and d.function != op:
            loc = f"{_t(d.function)}() {loc}"
        out[loc] = None
    site = matrix.unimplemented.get((crate, op))
    if site is not None and group is matrix.groups_of(crate)[0]:
        out[f"not implemented {_t(short_path(site.path, crate))}:{site.line}"] = None
    return list(out)


def _summary_table(matrix: Matrix, group: Group, width: int, shown: list[str]) -> Table | None:
    crates = [c for c in shown if group in matrix.groups_of(crate=c)]
    if not crates:
        return None
    table = Table(box=box.SIMPLE_HEAD, padding=0, pad_edge=False,
                  show_edge=False, header_style="bold", collapse_padding=True)
    # The backend column gets what the dtype columns and the ops count leave (names cut in the
    # middle), so the dtype headers are never cut.
    room = max(8, min(max(len(c) for c in crates), _room(group, 99, width) - 5))
    table.add_column("backend", overflow="crop", no_wrap=True, width=room)
    table.add_column("ops", justify="right", no_wrap=True)
    for d in group.dtypes:
        table.add_column(_header(d), justify="center", no_wrap=True)
    for crate in crates:
        row: list = [Text(abbreviate(_t(crate), room), style="cyan"), str(len(matrix.operations_in(crate, group)))]
        for dtype in group.dtypes:
            t = matrix.tally(crate, dtype)
            bad = len(t[PANICS]) + len(t[PARTIAL])
            if bad:
                row.append(Text(str(bad), style="bold red" if t[PANICS] else "yellow"))
            elif t[HANDLED]:
                row.append(_glyph(HANDLED))
            elif t[NA] and not t[UNKNOWN]:
                row.append(_glyph(NA))
            else:
                row.append(_glyph(None))
        table.add_row(*row)
    return table


