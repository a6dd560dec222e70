"""The coverage matrix as one JSON document (shape in README.md, "coverage"): the columns per dtype
enum, a summary per backend, every dtype-dispatch match, and every (backend, operation, dtype) cell
with the records behind it."""

from __future__ import annotations

import json

from .. import __version__
from ..coverage import STATUSES, Matrix, Site

FORMAT_VERSION = 1
STATUS_MEANING = {
    "handled": "every match of the operation that dispatches on the dtype has an arm for it that does not panic",
    "panics": "every match of the operation that dispatches on the dtype panics on it",
    "partial": "some matches (or some payload variants, e.g. Bool storages) handle it and some panic",
}


def build(matrix: Matrix) -> dict:
    return {
        "tool": "burn-errors",
        "toolVersion": __version__,
        "formatVersion": FORMAT_VERSION,
        "repo": matrix.repo,
        "sha": matrix.sha,
        "collapsed": matrix.collapse,
        "statuses": {s: STATUS_MEANING[s] for s in STATUSES},
        "columns": [{"enum": g.enum, "dtypes": g.dtypes} for g in matrix.groups],
        "backends": [{
            "crate": crate,
            "operations": len(matrix.operations(crate)),
            "matches": len(matrix.dispatches_of(crate)),
            "enums": [g.enum for g in matrix.groups_of(crate)],
            "cells": matrix.counts(crate),
        } for crate in matrix.crates()],
        "matches": [{
            "crate": d.crate,
            "operation": d.operation,
            "function": d.function,
            "path": d.path,
            "line": d.line,
            "enum": d.enum,
            "scrutinee": d.scrutinee,
            "context": d.context,
            "handled": d.handled,
            "panics": d.panics,
            "partial": d.partial,
            "arms": [{**_site(s), "pattern": s.pattern, "message": s.message, "rejects": d.rejected_by[s.record_id]}
                     for s in d.sites],
        } for d in matrix.dispatches],
        "cells": [{
            "crate": c.crate,
            "operation": c.operation,
            "dtype": c.dtype,
            "enum": c.enum,
            "status": c.status,
            "parts": c.parts,
            "sites": [_site(s) for s in c.sites],
        } for c in matrix.cells.values()],
    }


def _site(s: Site) -> dict:
    return {"id": s.record_id, "path": s.path, "line": s.line, "url": s.url}


def dumps(matrix: Matrix) -> str:
    return json.dumps(build(matrix), indent=2, ensure_ascii=False) + "\n"
