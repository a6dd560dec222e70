"""Classify stage: which panic-family calls are records, in which category, and which dtypes
their match handles and rejects.

Each decision names the rule that made it (`Decision.reason`) and every rule that fired on the
way (`Decision.rules`), so the audit (`extract --all-sites`) and the rule tests speak the same ids.
"""

from __future__ import annotations

from analyzer.decisions.call import Call, all_refs
from analyzer.decisions.catalog import DtypeCatalog
from analyzer.decisions.categories import DTYPE
from analyzer.profiles.run import Run
from analyzer.decisions.model import Decision
from analyzer.decisions.rules import EVERY_POSITION, NONE, RULE_ORDER, Rule
from analyzer.facts.model import ArmFacts, SiteFacts, VariantRef


def _runs(rules: tuple[Rule, ...]) -> list[int]:
    """Each rule's run: the index of the stretch of consecutive rules deciding the same."""
    out: list[int] = []
    for i, r in enumerate(rules):
        out.append(out[-1] if i and r.decides == rules[i - 1].decides else i)
    return out


# Per position, the rules that apply there, each with its run in RULE_ORDER: the walk stops where
# the run of the first rule that fired ends, whichever positions the rules after it apply to.
_AT: dict[str, tuple[tuple[Rule, int], ...]] = {
    ctx: tuple((r, run) for r, run in zip(RULE_ORDER, _runs(RULE_ORDER)) if ctx in r.positions)
    for ctx in EVERY_POSITION}


def classify(site: SiteFacts, path: str, crate: str, catalog: DtypeCatalog, run: Run) -> Decision:
    call = Call(site, path, crate, catalog, run)
    fired: list[Rule] = []
    first_run = -1
    for rule, stretch in _AT.get(site.context, ()):
        if fired and stretch != first_run:
            break
        if rule.applies(call):
            if rule.decides == NONE:
                dec = Decision(False, None, rule.id, [r.id for r in fired] + [rule.id])
                if rule.keeps_dtypes and call.arm is not None:
                    dec.pattern, dec.catch_all = call.arm.pattern, True
                    _dtype_sets(dec, call)
                return dec
            if not fired:
                first_run = stretch
            fired.append(rule)
    category = fired[0].decides
    if call.arm is None:
        # A body or a guard: no arms, so no dtype sets; the guard's condition stands for a pattern.
        return Decision(True, category, fired[0].id, [r.id for r in fired], pattern=site.condition)
    arm = call.body
    dec = Decision(True, category, fired[0].id, [r.id for r in fired], pattern=arm.pattern,
                   catch_all=arm.catch_all)
    if category == DTYPE:
        _dtype_sets(dec, call)
    else:
        dec.rejected = _variant_names(arm.refs) if not arm.catch_all else []
    return dec


def _variant_names(refs: list[VariantRef]) -> list[str]:
    return [f"{r.enum}::{r.variant}" for r in refs]



def _dtype_sets(dec: Decision, call: Call) -> None:  # noqa: C901 (the dtype sets of one decision, each step a branch of the same walk)
    """Fill enum, handled, rejected and partial for a dtype-dispatch decision."""
    arm, others, crate, catalog = call.body, call.others, call.crate, call.catalog
    outside = call.foreign or call.element_format_enum
    counts: dict[str, int] = {}
    for a in [arm, *others]:
        for r in a.refs:
            if r.enum in call.dtype_enums and not catalog.outside(r.root):
                counts[r.enum] = counts.get(r.enum, 0) + 1
    foreign = call.profile.dtypes.foreign_kind_enum
    primary = call.profile.dtypes.primary_enum
    enum: str | None
    if counts:
        enum = max(counts, key=lambda n: (counts[n], n == primary))
    elif outside:
        enum = outside
    elif any(r.enum == foreign for a in [arm, *others] for r in a.refs):
        enum = foreign
    elif primary in catalog:
        enum = primary
    else:
        enum = next(iter(catalog.enums), None)
    dec.enum = enum
    universe = catalog.expand(enum, crate) if enum is not None and enum in catalog else []

    def names(a: ArmFacts) -> set[str]:
        out: set[str] = set()
        for r in (a.refs if universe else list(all_refs(a.refs))):
            if r.enum != enum:
                continue
            if not universe:
                out.add(r.variant)
                continue
            members = [u for u in universe if u == r.variant or u.startswith(r.variant + "(")]
            subs = [s for s in (r.sub or []) if s.enum in catalog]
            if subs:
                wanted = {f"{r.variant}({s.variant})" for s in subs}
                members = [m for m in members if m in wanted] or members
            out.update(members)
        return out

    named_elsewhere: set[str] = set()
    handled: set[str] = set()
    for o in others:
        n = names(o)
        named_elsewhere |= n
        if not o.panics:
            if o.catch_all and universe:
                handled |= set(universe)
            handled |= n
    own = names(arm)
    if own:
        rejected = own
    elif universe:
        rejected = set(universe) - named_elsewhere
    else:
        rejected = {"*"}  # every variant of an enum outside the tree
    handled -= rejected
    order = {u: i for i, u in enumerate(universe)}
    key = lambda v: (order.get(v, len(order)), v)  # noqa: E731
    dec.handled = sorted(handled, key=key)
    dec.rejected = sorted(rejected, key=key)
    partial = set()
    for v in dec.handled:
        base = v.split("(")[0]
        if "(" in v and any(r.split("(")[0] == base for r in dec.rejected):
            partial.add(base)
    dec.partial = sorted(partial)

