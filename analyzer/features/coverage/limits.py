"""Storage limits of the operations view: a dtype a backend cannot hold at all. Its creation
operations (`*from_data`, `*empty`) panic on it and no creation operation or cast handles it, so
no tensor of it ever exists on the backend: every operation of the dtype's kind panics there,
at the tensor's creation (cells `panics`, reason `cannot hold`)."""

from __future__ import annotations

import re

from analyzer.features.coverage.model import (
    CANNOT_HOLD, HANDLED, NA, NOT_IMPLEMENTED, PANICS, PARTIAL, Cell, Evidence, Group, Limit, Operation,
)

# burn's creation operations (a tensor from host data, an uninitialised one) and casts (another
# dtype's tensor made into this one), by their names in the ops traits.
_CREATES = re.compile(r"(?:^|_)(?:from_data|empty)$")
_CASTS = re.compile(r"(?:^|_)cast$")


def storage_limits(cells: dict[tuple[str, str, str], Cell], kind_of) -> list[Limit]:
    """The (crate, dtype) pairs a creation operation panics on and none handles (dtypes of a
    known kind only: a foreign enum's `*` is no one dtype)."""
    rejected: dict[tuple[str, str], list] = {}
    held: set[tuple[str, str]] = set()
    for (crate, op, col), cell in cells.items():
        creates = bool(_CREATES.search(op))
        if (not creates and not _CASTS.search(op)) or not kind_of(col):
            continue
        if cell.status in (HANDLED, PARTIAL):
            held.add((crate, col))
        elif cell.status == PANICS and creates:
            rejected.setdefault((crate, col), []).append((op, cell.sites[0]))
    return [Limit(crate, col, by) for (crate, col), by in rejected.items() if (crate, col) not in held]


def apply_limits(cells: dict[tuple[str, str, str], Cell], limits: list[Limit],
                 ops: dict[tuple[str, str], Operation], groups: list[Group], kind_of) -> None:
    """Every operation of a held-nowhere dtype's kind panics on it (the creation operations that
    reject it keep their own cells); cells of another kind stay n/a."""
    by_crate: dict[str, list[Limit]] = {}
    for lim in limits:
        by_crate.setdefault(lim.crate, []).append(lim)
    enum_of = {d: g.enum for g in groups for d in g.dtypes}
    for (crate, op), operation in ops.items():
        for lim in by_crate.get(crate, ()):
            if any(op == name for name, _ in lim.rejected_by):
                continue
            key = (crate, op, lim.dtype)
            cell = cells.get(key)
            kind = kind_of(lim.dtype)
            if (cell is not None and cell.status == NA) or (operation.kind and kind and kind != operation.kind):
                continue
            site = lim.rejected_by[0][1]
            if cell is None:
                cells[key] = Cell(crate, op, lim.dtype, PANICS, [site], enum_of.get(lim.dtype, ""),
                                  [Evidence(lim.dtype, PANICS, site)], reason=CANNOT_HOLD)
            elif cell.reason != NOT_IMPLEMENTED:
                cell.status = PANICS
                cell.reason = CANNOT_HOLD
                cell.sites = [site] + [s for s in cell.sites if s.record_id != site.record_id]
