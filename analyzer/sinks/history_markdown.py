"""`burn-errors history --format markdown`: release notes, newest release first, rendered from
templates/history.md.j2.

Each release says, per backend, which panics it fixed, which are new, which changed, which left
with their code, and which dtype coverage cells turned handled or regressed. Every value from the
analysed code goes through `code` or `text` (escaped for a table cell); links are https only,
pinned to a commit, and percent-encoded so no path can end the link early.
"""

from __future__ import annotations

from analyzer import __version__
from analyzer.decisions.categories import CATEGORIES
from analyzer.features.history.model import FIXED, REMOVED_FROM_TREE, REWRITTEN, Event, Flip, History, State, describe
from analyzer.core.safe import md_link
from analyzer.sinks.diff_markdown import code, commit_link, contrast, delta, dtypes, text
from analyzer.core.rendering import environment
from analyzer.sinks import Options

MAX_MESSAGE = 100

def location(state: State) -> str:
    return md_link(code(f"{state.file}:{state.line}"), state.url)


def where(state: State) -> str:
    inside = state.function or state.in_macro
    return code(inside) if inside else ""


def panics_for(state: State) -> str:
    if state.rejected:
        return text(dtypes(list(state.rejected)))
    return code(state.pattern, 60)


def what_changed(e: Event) -> str:
    before, after = e.before, e.state
    assert before is not None
    out = []
    for f in e.fields:
        if f in ("handled", "rejected"):
            label = "panics for" if f == "rejected" else "handles"
            out.append(f"{label} {delta(list(getattr(before, f)), list(getattr(after, f)))}")
        else:  # long values are cut so that the part that differs shows
            x, y = contrast(str(before.field(f)), str(after.field(f)), 50)
            out.append(f"{f} {code(x, 50)} → {code(y, 50)}")
    if after.file != before.file:
        out.append(f"moved from {code(before.file)}")
    return "; ".join(out)


def how_gone(e: Event) -> str:
    return text(describe(e.removal)) if e.removal else ""


def commit(history: History, index: int) -> str:
    r = history.revisions[index]
    return commit_link(history.repo, r.sha, r.label)


def flip_rows(flips: list[Flip]) -> list[dict]:
    """Flips of one kind grouped per backend, operation and before/after status: one row each."""
    groups: dict[tuple, list[Flip]] = {}
    for f in flips:
        groups.setdefault((f.crate, f.operation, f.before, f.after), []).append(f)
    return [{"crate": c, "operation": o, "before": b, "after": a,
             "dtypes": [f.dtype for f in fs]} for (c, o, b, a), fs in sorted(groups.items(), key=lambda kv: kv[0][:2])]


def release(history: History, index: int) -> dict:
    events = history.events_at(index)
    flips = history.flips_at(index)
    removed = events["removed"]
    r = history.revisions[index]
    backends = sorted({e.state.crate for kind in events.values() for e in kind} | {f.crate for f in flips})
    per_backend = []
    def n(crate: str, kind: str, removal: str | None = None) -> int:
        return sum(1 for e in events[kind] if e.state.crate == crate
                   and (removal is None or (e.removal is not None and e.removal.kind == removal)))

    for crate in backends:
        per_backend.append({"crate": crate, "records": sum(r.backends.get(crate, {}).values()),
                            "fixed": n(crate, "removed", FIXED), "new": n(crate, "added"),
                            "changed": n(crate, "changed"),
                            "gone": n(crate, "removed", REMOVED_FROM_TREE) + n(crate, "removed", REWRITTEN),
                            "handled": sum(1 for f in flips if f.crate == crate and f.kind == "fixed"),
                            "regressed": sum(1 for f in flips if f.crate == crate and f.kind == "regressed")})
    return {"index": index, "revision": r, "commit": commit(history, index),
            "previous": history.revisions[index - 1] if index else None,
            "fixed": [e for e in removed if e.removal and e.removal.kind == FIXED],
            "gone": [e for e in removed if e.removal and e.removal.kind != FIXED],
            "new": events["added"], "changed": events["changed"], "backends": per_backend,
            "handled": flip_rows([f for f in flips if f.kind == "fixed"]),
            "regressed": flip_rows([f for f in flips if f.kind == "regressed"])}


# On the shared environment, under names of their own where diff_markdown has a filter of the same
# name for a record line (code, text and dtypes are the same functions).
environment().filters.update(code=code, text=text, state_location=location, state_where=where, panics_for=panics_for,
                             event_changes=what_changed, how_gone=how_gone, dtypes=dtypes)


def render(history: History, options: Options) -> str:
    releases = [release(history, i) for i in reversed(range(len(history.revisions)))]
    regressions = [(history.revisions[i].label, rows) for i in range(1, len(history.revisions))
                   if (rows := flip_rows([f for f in history.flips_at(i) if f.kind == "regressed"]))]
    return environment().get_template("history.md.j2").render(
        h=history, version=__version__, repo=code(history.repo), first=history.revisions[0],
        last=history.revisions[-1], releases=releases, summary=history.summary(), regressions=regressions,
        max_message=MAX_MESSAGE, categories=list(CATEGORIES), pins=_pins(history))


def _pins(history: History) -> list[str] | None:
    """With dependencies: each revision's pins (`cubecl 0.10.0 (v0.10.0)`, `cubecl 48348968`), as
    code; None when no revision has any, so the table has no column for them."""
    if not any(r.dependencies for r in history.revisions):
        return None
    out = []
    for r in history.revisions:
        parts = []
        for dep in r.dependencies:
            by, name = dep["pinnedBy"], dep["repo"].rsplit("/", 1)[-1]
            pin = f"{by['version']} ({by['tag']})" if by["kind"] == "registry" else dep["sha"][:8]
            parts.append(f"{name} {pin}")
        out.append(", ".join(code(p) for p in parts) or "none")
    return out
