"""The dtypes a dispatch macro's invocations hand it. A record inside a `macro_rules!` arm whose
match arms name a metavariable (`$crate::Tensor::$dtype(x) => ..`, then a catch-all) handles
the dtypes its invocations list and rejects the others: read per file, the arm names no dtype,
so the decision alone says it rejects every variant and handles none. The lists are read from
every file of the macro's crate (its own recursive invocations with a default list included),
so the record says what is true of some invocation: a dtype listed by one is handled, a dtype
listed by none is rejected (a payload variant whose base is listed, `Bool` for
`Bool(Native)`, is neither)."""

from __future__ import annotations

import re
from dataclasses import replace

from analyzer.decisions.model import Decision

# An arm pattern whose variant is a macro metavariable: `Enum::$dtype(x)`, or `$dtype` alone.
METAVARIABLE_VARIANT = re.compile(r"(?:^|::)\s*\$(?!crate\b)(\w+)")
_MACRO = "macro_rules! "


def repetition_macro(site) -> str:
    """The macro a site's match repeats arms over a metavariable in, or ""."""
    if not site.in_macro.startswith(_MACRO):
        return ""
    if not any(METAVARIABLE_VARIANT.search(arm.pattern) for arm in site.arms):
        return ""
    return site.in_macro.removeprefix(_MACRO)


def handed_decisions(kept, paths_of_crate, read) -> dict[int, Decision]:
    """For each of `kept` (audit entries, by position) that is a dtype record of a repetition
    macro with a readable list, its decision with the dtypes the invocations hand it.
    `paths_of_crate(crate)` lists the crate's files, `read(paths)` -> {path: bytes}."""
    from analyzer.decisions.categories import DTYPE
    from analyzer.facts.code import macro_invocations

    wanted: dict[str, set[str]] = {}
    targets: list[tuple[int, str]] = []
    for i, a in enumerate(kept):
        macro = repetition_macro(a.site) if a.decision.category == DTYPE else ""
        if macro:
            wanted.setdefault(a.crate, set()).add(macro)
            targets.append((i, macro))
    if not targets:
        return {}
    listed: dict[tuple[str, str], set[str]] = {}
    for crate, macros in wanted.items():
        needles = [m.encode() + b"!" for m in macros]
        texts = read(paths_of_crate(crate))
        for data in texts.values():
            if not any(n in data for n in needles):
                continue
            for inv in macro_invocations(data, macros):
                if inv.dtypes is not None and not inv.unreadable:
                    listed.setdefault((crate, inv.name), set()).update(inv.dtypes)
    out: dict[int, Decision] = {}
    for i, macro in targets:
        a = kept[i]
        names = listed.get((a.crate, macro))
        if not names:
            continue
        d = a.decision
        handled = [v for v in [*d.handled, *d.rejected] if v in d.handled or v in names]
        ordered = {v: n for n, v in enumerate([*d.rejected, *d.handled])}  # the enum's order, as the lists keep it
        handled.sort(key=lambda v: ordered.get(v, len(ordered)))
        # A list naming a payload variant's base (`DType::Bool(BoolStore::Native)` is read as
        # `Bool`) says nothing of which storage: such variants are neither handled nor rejected.
        rejected = [v for v in d.rejected if v not in names and v.split("(", 1)[0] not in names]
        out[i] = replace(d, handled=handled, rejected=rejected)
    return out
