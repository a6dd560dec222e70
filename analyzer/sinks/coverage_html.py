"""The coverage matrix as one self-contained HTML page (jinja2, templates/coverage.html.j2): an
overview of backends by dtypes, the operations several backends share side by side, and a heatmap of
operations by dtypes per backend (with --with-dependencies, then the limits of the runtimes it runs
on). Every cell links the pinned source line of the record behind it and names path:line in its
tooltip. Inline CSS and JS only: no network assets, works offline."""

from __future__ import annotations

import json

from markupsafe import Markup

from analyzer import __version__
from analyzer.features.coverage.model import (
    CANNOT_HOLD, HANDLED, NA, NOT_IMPLEMENTED, PANICS, PARTIAL, UNKNOWN, Group, Matrix, label, short_path,
)
from analyzer.features.coverage.settings import setting_tables
from analyzer.sinks.coverage_fold import (
    column_label, delegating, gap_text, gaps, nothing_to_show, shown_groups, unadvertised,
)
from analyzer.core.safe import https_url
from analyzer.core.rendering import environment
from analyzer.sinks import Options

GLYPH = {HANDLED: "✓", PANICS: "✗", PARTIAL: "◐", NA: "–", UNKNOWN: "?"}
# A status as a CSS class (`n/a` is not a class name).
CSS = {HANDLED: "handled", PANICS: "panics", PARTIAL: "partial", NA: "na", UNKNOWN: "unknown"}
# Overview colours: green where no operation panics; light to dark red as the share that panics
# grows; amber where operations only partly panic.
GREEN, LIGHT_RED, DARK_RED, AMBER, EMPTY = (46, 158, 94), (246, 189, 182), (165, 15, 21), (238, 160, 40), "#eceff3"


def render(matrix: Matrix, options: Options) -> str:
    return environment().get_template("coverage.html.j2").render(**view(matrix))


def view(matrix: Matrix) -> dict:
    """Everything the template shows, precomputed (the template only lays it out)."""
    crates = matrix.crates()
    counts = matrix.counts()
    folded = delegating(matrix)
    full = [c for c in crates if c not in folded]
    groups = shown_groups(matrix, full)
    lookup = Lookup()
    shared = _shared(matrix, lookup, full, groups)
    on_runtimes = _runtime_limits(matrix)
    backends = [_backend(matrix, lookup, crate, on_runtimes.get(crate, [])) for crate in full]
    # A backend with no operations of its own (burn-wgpu on cubecl) is a section of its limits only.
    limits_only = [c for c in on_runtimes if c not in crates]
    backends += [_limits_only(crate, on_runtimes[crate]) for crate in limits_only]
    return {
        "title": f"dtype coverage · {matrix.repo}@{matrix.sha[:12]}" if matrix.sha else "dtype coverage",
        "repo": matrix.repo,
        "sha": matrix.sha,
        "short_sha": matrix.sha[:12],
        "version": __version__,
        "n_backends": len(crates),
        "n_operations": sum(len(matrix.operations(crate)) for crate in crates),
        "n_matches": len(matrix.dispatches),
        "counts": counts,
        "collapsed": matrix.collapse,
        "overview": [_overview(matrix, g, full) for g in groups],
        "choices": [{"enum": g.enum, "columns": [{"key": d, "label": column_label(d, groups)} for d in g.dtypes]}
                    for g in groups],
        "shared": shared,
        "backends": backends,
        "lookup": lookup.script(),
        "folded": [{"crate": f.crate, "anchor": _anchor(f.crate), "summary": f.summary(),
                    "stubs": [{"op": op, "where": f"{short_path(site.path, f.crate)}:{site.line}",
                               "url": https_url(site.url) or "", "title": site.message} for op, site in f.stubs],
                    "cannot_hold": [label(d) for d in f.cannot_hold],
                    "runtime_limits": on_runtimes.get(f.crate, [])} for f in folded.values()],
        "nav": [{"crate": c, "anchor": _anchor(c)} for c in crates + limits_only],
        "empty": nothing_to_show(matrix),
        "by_operation": matrix.by_operation,
        "settings": _settings(matrix),
        "helpers": [{"crate": d.crate, "function": d.function or d.operation, "url": d.sites[0].url,
                     "where": f"{short_path(d.path, d.crate)}:{d.line}", "via": d.via,
                     "panics": " ".join(label(x) for x in d.panics) or "none"} for d in matrix.helpers],
    }


def _settings(matrix: Matrix) -> list[dict]:
    out = []
    for enum, variants, rows in setting_tables(matrix.settings):
        table = []
        for (op, crate), by_variant in rows.items():
            cells = []
            for v in variants:
                st = by_variant.get(v)
                if st is None:
                    cells.append({"cls": "none", "glyph": "", "url": "", "title": ""})
                    continue
                lines = [f"{crate} · {op} · {enum}::{v}: {st.status}"]
                lines += [f"{'panics' if st.status != HANDLED else 'handled by the match'} at {x.path}:{x.line}"
                          + (f": {x.message}" if st.status != HANDLED else "") for x in st.sites[:4]]
                cells.append({"cls": CSS[st.status], "glyph": GLYPH[st.status],
                              "url": https_url(st.sites[0].url) or "" if st.sites else "", "title": "\n".join(lines)})
            table.append({"op": op, "crate": crate, "cells": cells})
        out.append({"enum": enum, "variants": variants, "rows": table})
    return out


def _columns(group: Group) -> list[dict]:
    return [{"key": d, "label": label(d)} for d in group.dtypes]


def _anchor(crate: str) -> str:
    return "b-" + "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in crate)


def _overview(matrix: Matrix, group: Group, crates: list[str]) -> dict:
    rows = []
    for crate in crates:
        if group not in matrix.groups_of(crate):
            continue
        cells = []
        for dtype in group.dtypes:
            t = matrix.tally(crate, dtype)
            total = sum(len(v) for k, v in t.items() if k != NA)
            bad = len(t[PANICS]) + len(t[PARTIAL])
            if not total:
                na = bool(t[NA])
                cells.append({"text": "–" if na else "", "style": f"background:{EMPTY}", "cls": "none",
                              "title": f"{crate} · {label(dtype)}: " + (
                                  "n/a: no operation of the backend takes this tensor kind, or none panics on it"
                                  if na else "no operation panics on it")})
                continue
            share = (len(t[PANICS]) + 0.5 * len(t[PARTIAL])) / total
            colour = GREEN if not bad else (_mix(LIGHT_RED, DARK_RED, share) if t[PANICS] else AMBER)
            lines = [f"{crate} · {label(dtype)}: {bad} of {total} operations panic"
                     + (f" ({len(t[PARTIAL])} partly)" if t[PARTIAL] else "")]
            lines += [f"✗ {o}" for o in t[PANICS][:12]] + (["…"] if len(t[PANICS]) > 12 else [])
            lines += [f"◐ {o}" for o in t[PARTIAL][:6]] + (["…"] if len(t[PARTIAL]) > 6 else [])
            cells.append({"text": str(bad) if bad else GLYPH[HANDLED], "cls": "some" if bad else "all",
                          "style": f"background:{_hex(colour)};color:{_ink(colour)}", "title": "\n".join(lines)})
        rows.append({"crate": crate, "anchor": _anchor(crate), "ops": len(matrix.operations_in(crate, group)),
                     "cells": cells})
    return {"enum": group.enum, "columns": _columns(group), "rows": rows}


def _shared(matrix: Matrix, lookup: Lookup, crates: list[str], groups: list[Group]) -> list[dict]:
    """The operations side by side, rows operation x backend: in the operations view every
    operation of the chosen backends (one backend's alone too), else those several backends
    dispatch on the same enum. A gap is a dtype one backend panics on and another does not. The
    whole tree's operations the backends agree on are named only (their rows are in each
    backend's table); a choice of operations (--op) shows them side by side too."""
    out = []
    least = 1 if matrix.by_operation else 2
    unclaimed = unadvertised(matrix)
    for group in groups:
        by_op: dict[str, list[str]] = {}
        for crate in crates:
            if group not in matrix.groups_of(crate):
                continue
            for op in matrix.operations_in(crate, group):
                by_op.setdefault(op, []).append(crate)
        ops = []
        for op, on in sorted(by_op.items()):
            if len(on) < least:
                continue
            differ = gaps(matrix, op, on, group, unclaimed)
            if not differ and not matrix.focused:
                ops.append({"op": op, "crates": on, "gaps": 0})
                continue
            rows = [_row(matrix, lookup, crate, op, group, label_text=crate) for crate in on]
            for i, d in enumerate(group.dtypes):
                # Outlined: the cells that take a side (not n/a, nor a dtype the backend cannot hold).
                sided = {c for crates in differ.get(d, {}).values() for c in crates}
                for r in rows:
                    r["cells"][i]["gap"] = r["crate"] in sided
            for r in rows:
                r["cells"] = runs(r["cells"])
            ops.append({"op": op, "rows": rows, "crates": on, "gaps": len(differ),
                        "differ": ", ".join(label(d) for d in differ), "why": gap_text(differ)})
        if ops:
            out.append({"enum": group.enum, "columns": _columns(group), "listed": not matrix.focused,
                        "differ": [o for o in ops if o["gaps"]], "same": [o for o in ops if not o["gaps"]]})
    return out


# The sources a runtime limit names (the first few: a limit is one type or feature).
RUNTIME_SITES = 5


def _runtime_limits(matrix: Matrix) -> dict[str, list[dict]]:
    """Per backend crate, the cells of the runtimes it runs on that panic or partly panic
    (--with-dependencies), each with its dependency's pinned source lines."""
    out: dict[str, list[dict]] = {}
    for lim in matrix.runtime_limits:
        sites = [{"where": f"{s.path}:{s.line}", "url": https_url(s.url) or "", "title": s.message}
                 for s in lim.sites[:RUNTIME_SITES]]
        out.setdefault(lim.crate, []).append({
            "repo": lim.repo, "runtime": lim.runtime, "what": label(lim.dtype), "status": lim.status,
            "cls": CSS[lim.status], "glyph": GLYPH[lim.status], "sites": sites,
            "more": max(0, len(lim.sites) - RUNTIME_SITES),
            "title": f"{lim.crate} on {lim.runtime} ({lim.repo}) · {label(lim.dtype)}: {lim.status}"})
    return out


def _limits_only(crate: str, runtime_limits: list[dict]) -> dict:
    return {"crate": crate, "anchor": _anchor(crate), "limits_only": True, "runtime_limits": runtime_limits,
            "tables": [], "limits": []}


def _backend(matrix: Matrix, lookup: Lookup, crate: str, runtime_limits: list[dict]) -> dict:
    counts = matrix.counts(crate)
    total = sum(counts.values()) or 1
    tables = []
    for group in matrix.groups_of(crate):
        rows = [_row(matrix, lookup, crate, op, group, label_text=op) for op in matrix.operations_in(crate, group)]
        for r in rows:
            r["cells"] = runs(r["cells"])
        tables.append({"enum": group.enum, "columns": _columns(group), "rows": rows})
    return {
        "crate": crate,
        "anchor": _anchor(crate),
        "ops": len(matrix.operations(crate)),
        "matches": len(matrix.dispatches_of(crate)),
        "counts": counts,
        "bar": [{"status": s, "pct": round(100 * counts[s] / total, 2)} for s in (HANDLED, PARTIAL, PANICS)
                if counts[s]],
        "tables": tables,
        "limits": [{"dtype": label(lim.dtype),
                    "by": [{"op": op, "where": f"{short_path(site.path, crate)}:{site.line}",
                            "url": https_url(site.url) or ""} for op, site in lim.rejected_by]}
                   for lim in matrix.limits_of(crate)],
        "limits_only": False,
        "runtime_limits": runtime_limits,
    }


class Lookup:
    """The page's one table of link targets and tooltips, each written once and referenced by
    index from the cells (the page's script turns the indices into links and titles): a link is
    a base (up to the file's directory) and the rest, a tooltip a deduplicated text."""

    def __init__(self) -> None:
        self.bases: dict[str, int] = {}
        self.urls: dict[tuple[int, str], int] = {}
        self.titles: dict[str, int] = {}

    def url(self, url: object) -> int | str:
        """The index of a safe link (analyzer/core/safe.py), or "" for none."""
        safe = https_url(url)
        if not safe:
            return ""
        hash_at = safe.find("#")
        cut = safe.rfind("/", 0, hash_at if hash_at >= 0 else len(safe)) + 1
        base = self.bases.setdefault(safe[:cut], len(self.bases))
        return self.urls.setdefault((base, safe[cut:]), len(self.urls))

    def title(self, text: str) -> int | str:
        return self.titles.setdefault(text, len(self.titles)) if text else ""

    def script(self) -> Markup:
        """The table as JSON inside a script element: `<`, `>` and `&` escaped so no text in it can
        end the element or open a comment."""
        data = {"bases": list(self.bases), "urls": [list(k) for k in self.urls], "titles": list(self.titles)}
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _row(matrix: Matrix, lookup: Lookup, crate: str, op: str, group: Group, label_text: str) -> dict:
    locs = []
    for s in matrix.sites_of(crate, op, group.enum):
        fn = f" · fn {s.function}" if s.function and s.function != op else ""
        locs.append({"text": f"{short_path(s.path, crate)}:{s.line}", "s": lookup.url(s.url),
                     "t": lookup.title(f"{s.path}:{s.line}{fn}\n{s.message}")})
    cells = [_cell(matrix, lookup, crate, op, d, matrix.unknown_reasons.get((crate, op, d), [])) for d in group.dtypes]
    site = matrix.unimplemented.get((crate, op))
    if site is not None:
        locs.append({"text": f"not implemented · {short_path(site.path, crate)}:{site.line}",
                     "s": lookup.url(site.url), "t": lookup.title(f"{site.path}:{site.line}\n{site.message}")})
    operation = matrix.operation(crate, op)
    if operation is not None and not locs and not matrix.dispatches_of(crate, op):
        locs.append({"text": f"{operation.trait}: no panic found", "s": lookup.url(operation.url),
                     "t": lookup.title(f"{operation.path}:{operation.line}: {operation.trait}::{op} as {crate} "
                                       "implements it")})
    return {"label": label_text, "op": op, "crate": crate, "locs": locs, "cells": cells,
            "panics": " ".join(d for d, c in zip(group.dtypes, cells) if c["status"] in (PANICS, PARTIAL))}


def runs(cells: list[dict]) -> list[dict]:
    """Cells with runs of blank or n/a cells (no link, no tooltip, no outline) as one cell spanning
    them: most of an operation's row is the dtypes of other tensor kinds."""
    out: list[dict] = []
    for c in cells:
        last = out[-1] if out else None
        if (last is not None and c["cls"] in ("none", "na") and last["cls"] == c["cls"]
                and not c["gap"] and not last["gap"]):
            last["span"] += 1
        else:
            out.append({**c, "span": 1})
    return out


def _cell(matrix: Matrix, lookup: Lookup, crate: str, op: str, dtype: str, reasons: list[str]) -> dict:
    cell = matrix.get(crate, op, dtype)
    # Blank and n/a cells carry no tooltip (the legend says what they mean): in the operations
    # view they are most cells.
    if cell is None:
        return {"status": "none", "cls": "none", "glyph": "", "s": "", "t": "", "gap": False}
    if cell.status == NA:
        return {"status": NA, "cls": CSS[NA], "glyph": "", "s": "", "t": "", "gap": False}
    # The tooltip's first line (backend · operation · dtype: status) is the page script's, read
    # from the row and the column: the rest is shared by the cells one match decides.
    lines = [f"unknown: {r}" for r in reasons]
    parts = cell.parts
    folded = len(parts) > 1 or (parts and next(iter(parts)) != dtype)
    if folded:
        lines.append(", ".join(f"{label(k)} {v}" for k, v in parts.items()))
    if cell.reason:
        lines.append(cell.reason)
    limit = matrix.limit(crate, dtype) if cell.reason == CANNOT_HOLD else None
    if limit is not None:
        lines += [f"{crate} cannot create a {label(dtype)} tensor: {name} panics on it at {s.path}:{s.line}"
                  for name, s in limit.rejected_by]
    for e in cell.evidence:
        what = f"{label(e.dtype)} " if folded else ""
        if e.status == PANICS and cell.reason == NOT_IMPLEMENTED:
            lines.append(f"{what}the whole body of {op} panics at {e.site.path}:{e.site.line}: {e.site.message}")
        elif e.status == PANICS:
            lines.append(f"{what}panics at {e.site.path}:{e.site.line}: {e.site.message}")
        elif e.status == UNKNOWN:
            lines.append(f"{what}unresolved dispatch at {e.site.path}:{e.site.line}")
        else:
            lines.append(f"{what}handled by the match at {e.site.path}:{e.site.line}")
    for p in cell.preempted:
        where = f"{p.site.path}:{p.site.line}: {p.site.message}" if p.site else "no path reaches it"
        lines.insert(0, f"preempted ({p.why}): a user meets {where} first")
    # A dtype the backend cannot hold panics at creation, not in the operation: drawn apart; so
    # does a panic only an earlier refusal's path leads to.
    cls = CSS[cell.status] + (" cannot" if cell.reason == CANNOT_HOLD else "")
    cls += " preempted" if cell.preempted else ""
    return {"status": cell.status, "cls": cls, "glyph": GLYPH[cell.status],
            "s": lookup.url(_first_url(cell)), "gap": False,
            "t": lookup.title("\n".join(dict.fromkeys(lines)))}


def _first_url(cell) -> str:
    """Where a cell's link goes: the earlier refusal a user meets first when the cell is
    preempted, else its first panicking site."""
    for p in cell.preempted:
        if p.site is not None:
            return p.site.url
    return cell.sites[0].url if cell.sites else ""


def _mix(a: tuple, b: tuple, t: float) -> tuple:
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b))


def _hex(rgb: tuple) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _ink(rgb: tuple) -> str:
    r, g, b = (c / 255 for c in rgb)
    return "#111" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "#fff"
