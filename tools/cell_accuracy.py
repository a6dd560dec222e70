#!/usr/bin/env python3
"""Measure coverage cells against hand labels.

    python tools/cell_accuracy.py LABELS.tsv --coverage REV=COVERAGE.json [--coverage REV=...] [--show]

LABELS.tsv lines are `revision<TAB>crate<TAB>operation<TAB>dtype<TAB>status<TAB>reason` with status one
of handled, panics, cannot-hold, partial, n/a, unclear or skipped (a cell the reader did not
reach: counted apart, as unclear; a header line starting `revision` is skipped); each COVERAGE.json
comes from `burn-errors coverage --repo R --sha REV --format json`. A
cell the audit leaves blank ("no panic found") counts as handled, and a `panics` cell whose reason is
"cannot hold" as cannot-hold. A document that leaves the n/a cells out (no `--full`) has a cell
absent from `cells` read as n/a where the operation's and the dtype's kinds differ. Prints exact
agreement, agreement with cannot-hold and panics taken as one (both mean the user's call fails),
per revision, and with --show every disagreement.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys


def tool_status(cell: dict | None) -> str:
    if cell is None:
        return "handled"
    if cell["status"] == "panics" and cell.get("reason") == "cannot hold":
        return "cannot-hold"
    return str(cell["status"])


def coarse(status: str) -> str:
    return "panics" if status == "cannot-hold" else status


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labels")
    ap.add_argument("--coverage", action="append", required=True, metavar="REV=FILE")
    ap.add_argument("--show", action="store_true", help="list every disagreement")
    args = ap.parse_args()
    cells: dict[str, dict[tuple[str, str, str], dict]] = {}
    for spec in args.coverage:
        rev, _, path = spec.partition("=")
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        cells[rev] = {(c["crate"], c["operation"], c["dtype"]): c for c in doc["cells"]}
        if doc.get("naCells") == "elided":
            kinds = {d: k for g in doc["columns"] for d, k in g.get("kinds", {}).items()}
            for o in doc["operations"]:
                for d, k in kinds.items():
                    key = (o["crate"], o["operation"], d)
                    if key not in cells[rev] and o["kind"] and k and o["kind"] != k:
                        cells[rev][key] = {"status": "n/a"}
    judged = exact = agree = unclear = 0
    per_rev: collections.Counter[str] = collections.Counter()
    per_rev_agree: collections.Counter[str] = collections.Counter()
    pairs: collections.Counter[tuple[str, str]] = collections.Counter()
    shown = []
    for raw in open(args.labels, encoding="utf-8"):
        parts = raw.rstrip("\n").split("\t")
        if len(parts) < 5 or parts[0] == "revision":
            continue
        rev, crate, operation, dtype, status = parts[:5]
        if rev not in cells:
            print(f"error: no --coverage for revision {rev}", file=sys.stderr)
            return 2
        if status in ("unclear", "skipped"):
            unclear += 1
            continue
        cell = cells[rev].get((crate, operation, dtype))
        tool = tool_status(cell)
        judged += 1
        per_rev[rev] += 1
        exact += tool == status
        ok = coarse(tool) == coarse(status)
        agree += ok
        per_rev_agree[rev] += ok
        pairs[(status, tool)] += 1
        if not ok:
            why = f" ({cell['reason']})" if cell and cell.get("reason") else ""
            shown.append(f"{rev}\t{crate}\t{operation}\t{dtype}\treader={status}\ttool={tool}{why}")
    if not judged:
        print("error: no labelled cell", file=sys.stderr)
        return 2
    print(f"cells judged {judged} (unclear or not reached {unclear}): exact {exact}/{judged} = {exact / judged:.2f}; "
          f"cannot-hold taken as panics {agree}/{judged} = {agree / judged:.2f}")
    for rev in cells:
        print(f"  {rev}: {per_rev_agree[rev]}/{per_rev[rev]}")
    print("reader -> audit:", ", ".join(f"{a}->{b} {n}" for (a, b), n in sorted(pairs.items())))
    if args.show:
        print("\n".join(shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
