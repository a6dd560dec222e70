"""The coverage matrix as one JSON document (shape in docs/coverage.md): the columns per dtype
enum (with each dtype's tensor kind), a summary per backend, every dtype-dispatch match, and the
(backend, operation, dtype) cells with the records behind them. The n/a cells, most of a tree's
matrix, are left out unless `full` (`--full`): a cell absent from `cells` is n/a when the
operation's `kind` and the dtype's kind are both known and differ, else no panic was found."""

from __future__ import annotations

from analyzer import __version__
from analyzer.core.jsontext import dumps_indented
from analyzer.features.coverage.model import STATUSES, Dispatch, Matrix, Site
from analyzer.sinks import Options

FORMAT_VERSION = 3  # 3: n/a cells left out unless --full (`naCells`), columns carry their dtypes' kinds
STATUS_MEANING = {
    "handled": "every match of the operation that dispatches on the dtype has an arm for it that does not panic",
    "panics": "a match on the dtype's path through the operation panics on it, or (the cell's reason) the "
              "operation is not implemented: its whole body is a panic, or (reason `cannot hold`) the backend "
              "cannot create a tensor of the dtype at all (its creation operations reject it, none handles it)",
    "partial": "some payload variants (Bool storages) or quantization schemes are handled and others panic "
               "(the cell's reason says which)",
    "n/a": "a dtype of another tensor kind than the operation's trait takes (an int dtype in a float op): "
           "the typed tensor API never routes it there",
    "unknown": "the dispatch depends on something the audit cannot resolve (see the cell's reasons)",
}


def build(matrix: Matrix, full: bool = False) -> dict:
    # The runtimes view's module is imported for that view only: it loads the record schema.
    runtimes = matrix.view == "runtimes"
    return {
        "tool": "burn-errors",
        "toolVersion": __version__,
        "formatVersion": FORMAT_VERSION,
        "repo": matrix.repo,
        "sha": matrix.sha,
        "collapsed": matrix.collapse,
        "statuses": {s: STATUS_MEANING[s] for s in STATUSES},
        "view": matrix.view or ("operations" if matrix.by_operation else "matches"),
        "columns": [{"enum": g.enum, "dtypes": g.dtypes, "kinds": _kinds(g.dtypes)} for g in matrix.groups],
        "naCells": "listed" if full else "elided",
        "operations": [{"crate": o.crate, "operation": o.name, "trait": o.trait, "kind": o.kind or None,
                        "path": o.path, "line": o.line, "url": o.url,
                        "panicFound": matrix.panic_found(o.crate, o.name),
                        "notImplemented": (o.crate, o.name) in matrix.unimplemented}
                       for o in sorted(matrix.ops.values(), key=lambda o: (o.crate, o.name))],
        "helpers": [_match(d) for d in matrix.helpers],
        "backends": [{
            "crate": crate,
            "operations": len(matrix.operations(crate)),
            "traits": sorted({o.trait for o in matrix.ops.values() if o.crate == crate}),
            "matches": len(matrix.dispatches_of(crate)),
            "enums": [g.enum for g in matrix.groups_of(crate)],
            "cells": matrix.counts(crate),
            "cannotHold": [{"dtype": lim.dtype,
                            "rejectedBy": [{"operation": op, **_site(s)} for op, s in lim.rejected_by]}
                           for lim in matrix.limits_of(crate)],
        } for crate in matrix.crates()],
        "matches": [_match(d) for d in matrix.dispatches],
        "cells": _cells(matrix, full),
        "settings": [{"crate": st.crate, "operation": st.operation, "enum": st.enum, "variant": st.variant,
                      "status": st.status, "sites": [_site(x) for x in st.sites]} for st in matrix.settings],
        "claims": [{"crate": cl.crate, "dtype": cl.dtype, "advertised": cl.advertised, "where": cl.where,
                    "reading": cl.reading, "panicsIn": cl.panics_in, "handledIn": cl.handled_in,
                    "stubsIn": cl.stubs_in}
                   for cl in matrix.claims],
        **({"runtimes": _runtimes(matrix)} if runtimes else {}),
        **({"runtimeLimits": [{"crate": lim.crate, "repo": lim.repo, "runtime": lim.runtime, "dtype": lim.dtype,
                               "status": lim.status, "sites": [_site(s) for s in lim.sites]}
                              for lim in matrix.runtime_limits]} if matrix.runtime_limits else {}),
    }


def _kinds(dtypes: list[str]) -> dict[str, str | None]:
    from analyzer.features.coverage.operations import dtype_kind

    return {d: dtype_kind(d) or None for d in dtypes}


def _cells(matrix: Matrix, full: bool) -> list[dict]:
    out: list[dict] = []
    add = out.append
    for c in matrix.cells.values():
        if c.status == "n/a" and not full:
            continue
        # Most cells of a tree are n/a with nothing behind them: their entry is written at once.
        if not (c.sites or c.evidence or c.decided or c.reason) and c.status != "unknown":
            add({"crate": c.crate, "operation": c.operation, "dtype": c.dtype, "enum": c.enum, "status": c.status,
                 "parts": {}, "sites": []})
            continue
        cell = {"crate": c.crate, "operation": c.operation, "dtype": c.dtype, "enum": c.enum, "status": c.status,
                "parts": c.parts, "sites": [_site(s) for s in c.sites]}
        if c.status == "unknown":
            cell["reasons"] = matrix.unknown_reasons.get(c.key, [])
        if c.reason:
            cell["reason"] = c.reason
        if c.preempted:
            # Panics only behind these earlier refusals, which a user meets first.
            cell["preemptedBy"] = [{"why": p.why, **(_site(p.site) if p.site else {"id": None})} for p in c.preempted]
        add(cell)
    return out


def _runtimes(matrix: Matrix) -> list[dict]:
    from analyzer.features.coverage.runtimes import runtime_cells

    return [{"runtime": c.runtime, "dtype": c.dtype, "enum": c.enum, "status": c.status,
             "sites": [_site(s) for s in c.sites]} for c in runtime_cells(matrix)]


def _match(d: Dispatch) -> dict:
    return {
        "crate": d.crate,
        "operation": d.operation,
        "function": d.function,
        "path": d.path,
        "line": d.line,
        "enum": d.enum,
        "scrutinee": d.scrutinee,
        "context": d.context,
        "via": d.via or None,
        "handled": d.handled,
        "panics": d.panics,
        "partial": d.partial,
        "unknown": d.unknown or None,
        "arms": [{**_site(s), "pattern": s.pattern, "message": s.message, "rejects": d.rejected_by.get(s.record_id, [])}
                 for s in d.sites],
    }


def _site(s: Site) -> dict:
    return {"id": s.record_id, "path": s.path, "line": s.line, "url": s.url}


def render(matrix: Matrix, options: Options) -> str:
    return dumps_indented(build(matrix, options.full)) + "\n"
