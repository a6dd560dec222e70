"""The dtype coverage matrix: for each backend (crate) and operation, which dtypes a dtype-dispatch
match handles and which panic. Built from records (their `analysis`), so it works the same on a
fresh extraction and on a records.jsonl file.

A cell is (crate, operation, dtype). Dtypes are the dtype enum's variants with payload enums
expanded (`Bool(U8)`); `collapse` folds them to the base variant (`Bool`) for display, where a
variant with some sub-variants handled and some panicking is `partial`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from .record import RecordLine

HANDLED = "handled"
PANICS = "panics"
PARTIAL = "partial"


@dataclass(frozen=True)
class Site:
    """Where a cell's status comes from: the panicking arm's record."""

    record_id: str
    path: str
    line: int
    function: str
    url: str


@dataclass
class Cell:
    crate: str
    operation: str
    dtype: str
    status: str  # handled | panics | partial
    sites: list[Site] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.crate, self.operation, self.dtype)


@dataclass
class Matrix:
    cells: dict[tuple[str, str, str], Cell]
    dtypes: list[str]  # column order: the dtype enum's variant order

    def crates(self) -> list[str]:
        return sorted({c for c, _, _ in self.cells})

    def operations(self, crate: str) -> list[str]:
        return sorted({o for c, o, _ in self.cells if c == crate})

    def get(self, crate: str, operation: str, dtype: str) -> Cell | None:
        return self.cells.get((crate, operation, dtype))


def build(lines: Iterable[RecordLine], collapse: bool = False) -> Matrix:
    """The matrix of every dtype-dispatch record. A dtype that one match of an operation handles
    and another rejects is `partial` for that operation."""
    order: list[str] = []
    seen_handled: dict[tuple, list[Site]] = {}
    seen_rejected: dict[tuple, list[Site]] = {}
    for line in lines:
        a, r = line.analysis, line.record
        if a.category != "dtype-dispatch":
            continue
        site = Site(r.id, r.filePath, r.lineNumber, a.function, r.githubUrl)
        for dtype in [*a.handled, *a.rejected]:
            name = _base(dtype) if collapse else dtype
            if name not in order:
                order.append(name)
        for dtype in a.handled:
            seen_handled.setdefault((a.crate, a.operation, _base(dtype) if collapse else dtype), []).append(site)
        for dtype in a.rejected:
            seen_rejected.setdefault((a.crate, a.operation, _base(dtype) if collapse else dtype), []).append(site)
    cells: dict[tuple[str, str, str], Cell] = {}
    for key in set(seen_handled) | set(seen_rejected):
        h, p = key in seen_handled, key in seen_rejected
        status = PARTIAL if h and p else (HANDLED if h else PANICS)
        sites = seen_rejected.get(key, []) + [s for s in seen_handled.get(key, []) if not p]
        cells[key] = Cell(*key, status=status, sites=_unique(sites))
    return Matrix(cells, order)


def _base(dtype: str) -> str:
    return dtype.split("(", 1)[0]


def _unique(sites: list[Site]) -> list[Site]:
    out, ids = [], set()
    for s in sites:
        if s.record_id not in ids:
            ids.add(s.record_id)
            out.append(s)
    return out


def flipped(base: Matrix, head: Matrix) -> list[tuple[tuple[str, str, str], str | None, str | None]]:
    """Cells whose status differs between two matrices: (key, base status, head status); a cell
    missing on one side has status None there."""
    out = []
    for key in sorted(set(base.cells) | set(head.cells)):
        b = base.cells.get(key)
        h = head.cells.get(key)
        bs, hs = (b.status if b else None), (h.status if h else None)
        if bs != hs:
            out.append((key, bs, hs))
    return out
