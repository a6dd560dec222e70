#!/usr/bin/env python3
"""Draw a blind labelling sample of coverage cells.

    python tools/cell_sample.py REV=COVERAGE.json [REV=COVERAGE.json ...] [--per-revision 50] [--seed 35]

Each COVERAGE.json comes from `burn-errors coverage --repo R --sha REV --format json --full`. The
cells are every (backend, operation, dtype of the first column group) of the operations view,
blank ones included, drawn per revision across the audit's statuses (so rare ones are in the
sample) with a seeded random draw. The output (stdout) is the labels file a reader fills in:
`revision crate operation dtype status reason read`, status and reason left empty, `read` the
places to read (the operation's implementation and every dtype match the audit says it reaches,
the same for every dtype of the operation: nothing in a line tells the audit's status).
"""

from __future__ import annotations

import argparse
import json
import random
import sys

# Share of each audit status in a revision's draw (blank: no panic found).
SHARES = {"partial": 0.14, "panics": 0.3, "handled": 0.2, "blank": 0.22, "n/a": 0.14}


def universe(doc: dict) -> list[tuple[str, str, str, str]]:
    """(crate, operation, dtype, status) of every cell of the first column group."""
    columns = doc["columns"][0]["dtypes"] if doc["columns"] else []
    cells = {(c["crate"], c["operation"], c["dtype"]): c for c in doc["cells"]}
    out = []
    for o in doc["operations"]:
        for d in columns:
            cell = cells.get((o["crate"], o["operation"], d))
            out.append((o["crate"], o["operation"], d, cell["status"] if cell else "blank"))
    return out


def places(doc: dict) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], list[str]] = {}
    for o in doc["operations"]:
        out[(o["crate"], o["operation"])] = [f"{o['path']}:{o['line']}"]
    for m in doc["matches"]:
        at = f"{m['path']}:{m['line']}"
        where = out.setdefault((m["crate"], m["operation"]), [])
        if at not in where:
            where.append(at)
    return {k: " ".join(v) for k, v in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("coverage", nargs="+", metavar="REV=FILE")
    ap.add_argument("--per-revision", type=int, default=50)
    ap.add_argument("--seed", type=int, default=35)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print("revision\tcrate\toperation\tdtype\tstatus\treason\tread")
    for spec in args.coverage:
        rev, _, path = spec.partition("=")
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        if doc.get("naCells") == "elided":
            print(f"error: {path} leaves the n/a cells out; write it with --full", file=sys.stderr)
            return 2
        where = places(doc)
        by_status: dict[str, list] = {}
        for cell in universe(doc):
            by_status.setdefault(cell[3], []).append(cell)
        drawn = []
        for status, share in SHARES.items():
            pool = by_status.get(status, [])
            drawn += rng.sample(pool, min(len(pool), round(args.per_revision * share)))
        rest = [c for cells in by_status.values() for c in cells if c not in drawn]
        drawn += rng.sample(rest, max(0, args.per_revision - len(drawn)))
        rng.shuffle(drawn)
        for crate, op, dtype, _ in drawn:
            print(f"{rev}\t{crate}\t{op}\t{dtype}\t\t\t{where.get((crate, op), '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
