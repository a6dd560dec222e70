"""`burn-errors history --format html`: one self-contained page (templates/history.html.j2):
a timeline per backend (records per revision by category, as inline SVG bars), the coverage
regressions, the release notes, and every lineage with an anchor of its own (`#l-<key>`), so a
page elsewhere can link "fixed in v0.x" to it. Inline CSS and JS only: no network assets, works
offline. Everything is escaped by jinja2's autoescape; links are https only."""

from __future__ import annotations

import re

from analyzer import __version__
from analyzer.decisions.categories import CATEGORIES as CATEGORY_REGISTRY
from analyzer.features.history.model import FIXED, History, Lineage, State, describe
from analyzer.profiles import current
from analyzer.core.safe import https_url
from analyzer.core.rendering import environment
from analyzer.sinks import Options

CATEGORIES = tuple(CATEGORY_REGISTRY)
# The SVG timeline's geometry, in px.
BAR, GAP, LEFT, TOP, PLOT_HEIGHT, LABELS = 22, 10, 36, 12, 120, 70
_NOT_ID = re.compile(r"[^A-Za-z0-9_-]+")


def render(history: History, options: Options) -> str:
    return environment().get_template("history.html.j2").render(**view(history))


def https(url: str | None) -> str | None:
    """The URL when `analyzer.core.safe.https_url` takes it as a link, else None (no link written)."""
    return https_url(url)


def lineage_anchor(key: str) -> str:
    return "l-" + _NOT_ID.sub("-", key)


def revision_anchors(history: History) -> list[str]:
    out: list[str] = []
    for r in history.revisions:
        anchor = "r-" + (_NOT_ID.sub("-", r.label).strip("-") or str(r.index))
        out.append(anchor if anchor not in out else f"{anchor}-{r.index}")
    return out


def view(history: History) -> dict:
    """Everything the template shows, precomputed (the template only lays it out)."""
    anchors = revision_anchors(history)
    first, last = history.revisions[0], history.revisions[-1]
    return {
        "title": f"burn-errors history · {history.repo} {first.label} → {last.label}",
        "repo": history.repo,
        "version": __version__,
        "first": first.label,
        "last": last.label,
        "summary": history.summary(),
        "skipped": history.skipped,
        "left_out": history.left_out,
        "revisions": [{"label": r.label, "sha": r.sha[:12], "date": r.date[:10], "records": r.records,
                       "anchor": anchors[r.index], "url": _commit_url(history, r.sha)}
                      for r in history.revisions],
        "categories": list(CATEGORIES),
        "timelines": _timelines(history),
        "regressions": _regressions(history, anchors),
        "releases": [_release(history, i, anchors) for i in reversed(range(len(history.revisions)))],
        "lineages": [_lineage(history, ln, anchors)
                     for ln in sorted(history.lineages, key=lambda ln: (ln.state.crate, ln.state.file, ln.state.line))],
    }


def _commit_url(history: History, sha: str) -> str | None:
    return https(current().link("commit", repo=history.repo, sha=sha)) if "/" in history.repo else None


def _timelines(history: History) -> list[dict]:
    """One bar chart per backend: its records at each revision, stacked by category."""
    crates = sorted({c for r in history.revisions for c in r.backends})
    n = len(history.revisions)
    width = LEFT + n * (BAR + GAP) + GAP
    out = []
    for crate in crates:
        totals = [sum(r.backends.get(crate, {}).values()) for r in history.revisions]
        top = max(totals) or 1
        bars = []
        for i, r in enumerate(history.revisions):
            x = LEFT + GAP + i * (BAR + GAP)
            y = float(TOP + PLOT_HEIGHT)
            segments = []
            for cat in CATEGORIES:
                count = r.backends.get(crate, {}).get(cat, 0)
                if not count:
                    continue
                h = PLOT_HEIGHT * count / top
                y -= h
                segments.append({"y": round(y, 1), "h": round(h, 1), "cls": cat})
            parts = ", ".join(f"{r.backends.get(crate, {}).get(c, 0)} {c}" for c in CATEGORIES)
            bars.append({"x": x, "w": BAR, "segments": segments, "label": r.label,
                         "label_x": x + BAR / 2, "label_y": TOP + PLOT_HEIGHT + 10,
                         "title": f"{crate} at {r.label}: {totals[i]} records ({parts})"})
        out.append({"crate": crate, "anchor": "b-" + _NOT_ID.sub("-", crate), "bars": bars, "max": top,
                    "width": width, "height": TOP + PLOT_HEIGHT + LABELS, "axis_y": TOP + PLOT_HEIGHT,
                    "top_y": TOP, "left": LEFT, "now": totals[-1], "peak": max(totals)})
    return out


def _site(state: State, key: str) -> dict:
    return {"crate": state.crate, "message": state.message, "category": state.category,
            "where": state.function or state.in_macro, "loc": f"{state.file}:{state.line}",
            "url": https(state.url), "anchor": lineage_anchor(key), "key": key,
            "rejected": ", ".join(state.rejected)}


def _regressions(history: History, anchors: list[str]) -> list[dict]:
    rows = []
    for f in history.regressions():
        rows.append({"revision": history.revisions[f.revision].label, "anchor": anchors[f.revision],
                     "crate": f.crate, "operation": f.operation, "dtype": f.dtype, "before": f.before,
                     "after": f.after,
                     "sites": [{"anchor": lineage_anchor(ln.key), "key": ln.key} for ln in history.sites_of(f)]})
    return rows


def _release(history: History, index: int, anchors: list[str]) -> dict:
    r = history.revisions[index]
    events = history.events_at(index)
    flips = history.flips_at(index)
    removed = events["removed"]
    previous = history.revisions[index - 1] if index else None
    return {
        "label": r.label, "anchor": anchors[index], "sha": r.sha[:12], "url": _commit_url(history, r.sha),
        "date": r.date[:10], "records": r.records, "start": index == 0,
        "delta": (r.records - previous.records) if previous else None,
        "previous": previous.label if previous else None,
        "fixed": [dict(_site(e.state, e.key), how=describe(e.removal)) for e in removed
                  if e.removal and e.removal.kind == FIXED],
        "gone": [dict(_site(e.state, e.key), how=describe(e.removal)) for e in removed
                 if e.removal and e.removal.kind != FIXED],
        "new": [_site(e.state, e.key) for e in events["added"]],
        "changed": [dict(_site(e.state, e.key), fields=", ".join(e.fields)) for e in events["changed"]],
        "handled": sorted({(f.crate, f.operation, f.dtype) for f in flips if f.kind == "fixed"}),
        "regressed": sorted({(f.crate, f.operation, f.dtype) for f in flips if f.kind == "regressed"}),
    }


def _lineage(history: History, ln: Lineage, anchors: list[str]) -> dict:
    status = "open" if ln.removal is None else ln.removal.kind
    events = []
    for e in ln.events:
        if e.kind == "added":
            what = "present at the first revision analysed" if e.revision == 0 else "first seen"
        elif e.kind == "changed":
            assert e.before is not None
            what = "; ".join(f"{f}: {_value(e.before.field(f))} → {_value(e.state.field(f))}" for f in e.fields)
        elif e.kind == "moved":
            assert e.before is not None
            what = f"moved from {e.before.file}"
        else:
            what = f"{e.removal.kind.replace('-', ' ')}: {describe(e.removal)}" if e.removal else "removed"
        events.append({"revision": history.revisions[e.revision].label, "anchor": anchors[e.revision],
                       "kind": e.kind, "what": what, "url": https(e.state.url)})
    return dict(_site(ln.state, ln.key), status=status, first=history.revisions[ln.first].label,
                removed=history.label(ln.removed) or "", events=events,
                changes=sum(1 for e in ln.events if e.kind == "changed"))


def _value(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)
