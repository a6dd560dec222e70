#!/usr/bin/env python3
"""Measure the classifier against hand labels (docs/classifier-rubric.md).

    python tools/accuracy.py LABELS.tsv [LABELS.tsv ...] --sites OUT/sites.jsonl [--show]

LABELS.tsv lines are `path<TAB>line<TAB>macro<TAB>label<TAB>note` (label: dtype-dispatch,
unsupported-mode, unsupported-op or none); a file whose first line is a header (`path<TAB>line<TAB>
form<TAB>label<TAB>...`) is read by its column names instead, `form` naming the call (panic,
unimplemented, todo, assert, assert_eq, assert_ne, expect) and `note` the reader's reason.
OUT/sites.jsonl comes from `burn-errors extract --all-sites`. Prints precision and recall per
category, with --by-form the `any record` figures per form, and with --show every disagreement.
"""

from __future__ import annotations

import argparse
import json
import sys

CATEGORIES = ("dtype-dispatch", "unsupported-mode", "unsupported-op")


def _scores(keys, is_gold, is_pred) -> tuple[int, int, int, float, float]:
    """tp, fp, fn, precision and recall over `keys` (each 1.0 when nothing counts toward it)."""
    tp = sum(1 for k in keys if is_gold[k] and is_pred[k])
    fp = sum(1 for k in keys if not is_gold[k] and is_pred[k])
    fn = sum(1 for k in keys if is_gold[k] and not is_pred[k])
    return tp, fp, fn, tp / (tp + fp) if tp + fp else 1.0, tp / (tp + fn) if tp + fn else 1.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labels", nargs="+")
    ap.add_argument("--sites", required=True)
    ap.add_argument("--show", action="store_true", help="list every disagreement")
    ap.add_argument("--by-form", action="store_true", help="the `any record` figures per form of call")
    ap.add_argument("--all-calls", action="store_true",
                    help="the labels cover every call: count a call the tool saw but nobody labelled as `none`")
    args = ap.parse_args()
    gold: dict[tuple[str, int], tuple[str, str]] = {}
    forms: dict[tuple[str, int], str] = {}
    for path in args.labels:
        columns = {"form": 2, "label": 3, "note": 4}
        for n, raw in enumerate(open(path, encoding="utf-8")):
            parts = raw.rstrip("\n").split("\t")
            if n == 0 and parts[:2] == ["path", "line"]:
                columns = {name: i for i, name in enumerate(parts)}
                columns.setdefault("form", columns.get("macro", 2))
                continue
            if len(parts) < 4:
                continue
            key = (parts[0], int(parts[1]))
            note = parts[columns["note"]] if columns.get("note", len(parts)) < len(parts) else ""
            gold[key] = (parts[columns["label"]], note)
            forms[key] = parts[columns["form"]]
    pred: dict[tuple[str, int], dict] = {}
    for raw in open(args.sites, encoding="utf-8"):
        r = json.loads(raw)
        pred[(r["filePath"], r["lineNumber"])] = r
    # A label set may be a random sample of the calls: measure on the labelled calls only (a call
    # the tool saw but nobody labelled says nothing either way), and say how many those are.
    keys = sorted(set(gold) | set(pred)) if args.all_calls else sorted(gold)
    missing_pred = [k for k in keys if k not in pred]
    missing_gold = [k for k in pred if k not in gold]
    print(f"labelled calls: {len(gold)}, calls the tool saw: {len(pred)}, "
          f"labelled but not seen: {len(missing_pred)}, seen but not labelled: {len(missing_gold)}")
    worst = 1.0
    for cat in CATEGORIES:
        tp, fp, fn, p, r = _scores(keys, {k: gold.get(k, ("none",))[0] == cat for k in keys},
                                   {k: (pred.get(k) or {}).get("category") == cat for k in keys})
        worst = min(worst, p, r)
        print(f"{cat:18} labelled {tp + fn:4}  found {tp + fp:4}  tp {tp:4}  fp {fp:3}  fn {fn:3}  "
              f"precision {p:.3f}  recall {r:.3f}")
    # Whether the call is a record at all, whatever its category: the question a reader answers.
    is_gold = {k: gold.get(k, ("none",))[0] != "none" for k in keys}
    is_pred = {k: bool((pred.get(k) or {}).get("category")) for k in keys}
    tp, fp, fn, p, r = _scores(keys, is_gold, is_pred)
    print(f"{'any record':18} labelled {tp + fn:4}  found {tp + fp:4}  tp {tp:4}  fp {fp:3}  fn {fn:3}  "
          f"precision {p:.3f}  recall {r:.3f}")
    if args.by_form:
        for form in sorted({forms.get(k, "") for k in keys}):
            ks = [k for k in keys if forms.get(k, "") == form]
            tp, fp, fn, p, r = _scores(ks, is_gold, is_pred)
            print(f"  {form or '(no form)':16} calls {len(ks):4}  labelled {tp + fn:4}  found {tp + fp:4}  "
                  f"tp {tp:4}  fp {fp:3}  fn {fn:3}  precision {p:.3f}  recall {r:.3f}")
    if args.show:
        for k in keys:
            g = gold.get(k, ("(unlabelled)", ""))
            pr = pred.get(k)
            pc = (pr or {}).get("category") or "none"
            if g[0] != pc:
                why = pr["rule"] if pr else "(not seen)"
                msg = (pr or {}).get("message", "")[:70]
                print(f"{k[0]}:{k[1]}  label={g[0]}  tool={pc} [{why}]  {msg!r}  note={g[1][:90]!r}")
    return 0 if worst >= 0.99 else 1


if __name__ == "__main__":
    sys.exit(main())
