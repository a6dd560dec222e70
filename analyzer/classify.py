"""Classify stage: which panic-family calls are records, in which category, and which dtypes
their match handles and rejects.

Each decision names the rule that made it (`Decision.reason`) and every rule that fired on the
way (`Decision.rules`), so the audit (`extract --all-sites`) and the rule tests speak the same ids.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from .parse import ArmFacts, EnumFacts, SiteFacts, VariantRef

DTYPE = "dtype-dispatch"
MODE = "unsupported-mode"
CATEGORIES = (DTYPE, MODE)
BACKGROUND_TAG = {DTYPE: "unsupported-dtype", MODE: "unsupported-op-backend"}

# Reasons a call is not a record, in the order they are checked.
EXCLUSIONS = {
    "exclude/test-code": "in tests/, benches/, a #[cfg(test)] module or a #[test] function",
    "exclude/unreachable": "unreachable! states an impossibility, not a missing feature",
    "exclude/not-in-arm": "not the body of a match arm, let-else or if-let",
    "exclude/conditional": "inside the arm, but behind a condition",
    "exclude/error-handling": "the arm handles Err/None/Ok/Some (error handling)",
    "exclude/internal-expectation": "the message states an internal expectation, not a missing feature",
}
RULES = {
    "dtype/scrutinee": "the match scrutinee is a dtype (x.dtype(), data.dtype, src_dtype, a tuple holding one)",
    "dtype/arm-variants": "the arms name variants of a dtype enum found in the tree",
    "dtype/foreign-kind": "a tch kind() match on tch::Kind variants",
    "dtype/foreign-variants": "arms name variants of a dtype enum from outside the tree (cubecl FloatKind, ElemType)",
    "mode/unimplemented-macro": "unimplemented!/todo! in an arm of a non-dtype match",
    "mode/unsupported-message": "the message says the variant or setting is not supported",
    **EXCLUSIONS,
}

_TEST_PATH = re.compile(r"(?:^|/)(?:tests|benches)/|(?:^|/)tests?\.rs$|_tests?\.rs$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@lru_cache(maxsize=None)
def rule_data() -> dict:
    from .ruleset import queries_root
    text = queries_root().joinpath("classifier.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


class _Patterns(NamedTuple):
    enum_name: re.Pattern
    scrutinee_ident: re.Pattern
    unsupported: re.Pattern
    variant_cannot: re.Pattern
    transient_state: re.Pattern


@lru_cache(maxsize=None)
def _patterns() -> _Patterns:
    """The regexes of classifier.toml, compiled once."""
    d = rule_data()
    return _Patterns(re.compile(d["dtype"]["enum_name"]), re.compile(d["dtype"]["scrutinee_ident"]),
                     re.compile(d["mode"]["unsupported"]), re.compile(d["mode"]["variant_cannot"]),
                     re.compile(d["mode"]["transient_state"]))


# ---------------------------------------------------------------------------------------------
# The dtype catalog


@dataclass
class DtypeEnum:
    name: str
    variants: list[tuple[str, str | None]]
    crate: str
    path: str


@dataclass
class DtypeCatalog:
    """The dtype enums of the analyzed tree: enums named like a dtype (DType, FloatDType), the
    enums their variants carry (DType::Bool(BoolStore)), aliases of those (BoolDType), and
    per-dtype enums whose variants are mostly dtype names (a storage enum `Tensor::F32(..)`)."""

    enums: dict[str, list[DtypeEnum]] = field(default_factory=dict)
    # Every enum name defined in each crate, dtype or not: a crate's own `Kind` is not tch's.
    local: dict[str, set[str]] = field(default_factory=dict)
    # Variant names of the enums named like a dtype (F32, BF16, I64 ...), canonical spelling.
    dtype_names: set[str] = field(default_factory=set)
    # The crates of the tree, as paths name them (burn_std), to tell `syn::Data` from ours.
    crates: set[str] = field(default_factory=set)

    def names(self, ref: VariantRef) -> bool:
        """The ref names a catalog enum: its name is in the catalog and its path does not start
        at a crate outside the tree (`syn::Data::Union` is not a tree's `Data`)."""
        return ref.enum in self.enums and not self.outside(ref.root)

    def outside(self, root: str) -> bool:
        if root in ("", "crate", "self", "super", "Self") or root.startswith(("_", "$")):
            return False
        return root not in self.crates

    def is_defined_anywhere(self, name: str) -> bool:
        return any(name in names for names in self.local.values())

    @staticmethod
    def build(defs: list[tuple[str, str, EnumFacts]],
              aliases: list[tuple[str, str, str, str]] = ()) -> "DtypeCatalog":
        """`defs` holds (path, crate, enum) for every enum in the tree; `aliases` holds
        (path, crate, alias, target) for every plain type alias."""
        enum_name = _patterns().enum_name
        rules = rule_data()["dtype"]
        by_name: dict[str, list[DtypeEnum]] = {}
        local: dict[str, set[str]] = {}
        for path, crate, e in defs:
            by_name.setdefault(e.name, []).append(DtypeEnum(e.name, e.variants, crate, path))
            local.setdefault(crate, set()).add(e.name)
        chosen = {n for n in by_name if enum_name.match(n)}
        # Payload enums of dtype variants belong to the catalog too (DType::Bool(BoolStore)).
        frontier = list(chosen)
        while frontier:
            n = frontier.pop()
            for d in by_name[n]:
                for _, payload in d.variants:
                    if payload and payload in by_name and payload not in chosen:
                        chosen.add(payload)
                        frontier.append(payload)
        dtype_names = {canonical_dtype(v) for n in chosen if enum_name.match(n)
                       for d in by_name[n] for v, _ in d.variants}
        for n, ds in by_name.items():
            if n in chosen:
                continue
            for d in ds:
                names = {canonical_dtype(v) for v, _ in d.variants}
                if len(names) >= rules["all_min"] and names <= dtype_names:
                    chosen.add(n)
                    break
        enums = {n: by_name[n] for n in chosen}
        for path, crate, alias, target in aliases:
            if target in enums and alias not in enums:
                enums[alias] = [DtypeEnum(alias, d.variants, d.crate, d.path) for d in enums[target]]
        crates = {c.replace("-", "_") for _, c, _ in defs} | {c.replace("-", "_") for _, c, _, _ in aliases}
        return DtypeCatalog(dict(sorted(enums.items())), local, dtype_names, crates)

    def defines(self, crate: str, name: str) -> bool:
        return name in self.local.get(crate, ())

    def __contains__(self, name: str) -> bool:
        return name in self.enums

    def definition(self, name: str, crate: str) -> DtypeEnum | None:
        defs = self.enums.get(name)
        if not defs:
            return None
        same = [d for d in defs if d.crate == crate]
        if same:
            return same[0]
        return max(defs, key=lambda d: (len(d.variants), d.path))

    def expand(self, name: str, crate: str, _seen: frozenset = frozenset()) -> list[str]:
        """Variant names of `name`, payload enums expanded: F32, ..., Bool(Native), Bool(U8), QFloat."""
        d = self.definition(name, crate)
        if d is None or name in _seen:
            return []
        out: list[str] = []
        for v, payload in d.variants:
            subs = self.expand(payload, crate, _seen | {name}) if payload and payload in self else []
            out.extend(f"{v}({s})" for s in subs) if subs else out.append(v)
        return out

    def to_json(self) -> dict:
        return {n: [{"crate": d.crate, "path": d.path, "variants": [v for v, _ in d.variants]}
                    for d in defs] for n, defs in self.enums.items()}


# ---------------------------------------------------------------------------------------------
# Decisions


@dataclass
class Decision:
    record: bool
    category: str | None
    reason: str  # the rule id that decided
    rules: list[str]  # every rule that fired
    enum: str | None = None
    handled: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    pattern: str = ""
    catch_all: bool = False  # the panicking arm catches every other value (`_`, `dtype`, else)


_SPELLED = re.compile(r"^(b?float|u?int|f|i|u|bf)(\d+)s?$")


def canonical_dtype(name: str) -> str:
    """A dtype variant name in one spelling: F32, Float32 and Float32s are all `f32`; Bools is
    `bool`. Names that are not dtype-shaped come back lower-cased."""
    low = name.lower()
    m = _SPELLED.match(low)
    if m:
        prefix = {"float": "f", "bfloat": "bf", "int": "i", "uint": "u"}.get(m.group(1), m.group(1))
        return f"{prefix}{m.group(2)}"
    return low[:-1] if low in ("bools", "strings") else low


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def _site_arms(site: SiteFacts) -> tuple[ArmFacts | None, list[ArmFacts]]:
    """The arm the call is the body of, and the others; let-else and if-let as two-armed matches."""
    if site.context == "match-arm" and 0 <= site.arm_index < len(site.arms):
        return site.arms[site.arm_index], [a for i, a in enumerate(site.arms) if i != site.arm_index]
    if site.context in ("let-else", "if-let-else") and site.arms:
        written = site.arms[0]
        other = ArmFacts("else", [], True, False, True, False, site.line)
        return other, [ArmFacts(written.pattern, written.refs, written.catch_all, False, False,
                                written.error_handling, written.line)]
    if site.context == "if-let" and site.arms:
        return site.arms[0], [ArmFacts("else", [], True, False, False, False, site.line)]
    return None, []


_STRING = re.compile(r'r#*"(?:.|\n)*?"#*|"(?:\\.|[^"\\])*"')


def _scrutinee_is_dtype(scrutinee: str) -> bool:
    ident = _patterns().scrutinee_ident
    code = _STRING.sub('""', scrutinee)  # `value.get("DType")` names no dtype value
    return any(ident.match(tok) for tok in _IDENT.findall(code))


def _scrutinee_is_foreign_kind(scrutinee: str, arms: list[ArmFacts], crate: str,
                               catalog: "DtypeCatalog") -> bool:
    d = rule_data()["dtype"]
    enum = d["foreign_kind_enum"]
    if catalog.defines(crate, enum):
        return False  # the crate's own Kind enum (a tensor kind), not tch's dtype
    if not re.search(r"\.\s*" + re.escape(d["foreign_kind_method"]) + r"\s*\(\s*\)", scrutinee):
        return False
    return any(r.enum == enum for a in arms for r in a.refs)


def classify(site: SiteFacts, path: str, crate: str, catalog: DtypeCatalog) -> Decision:
    fired: list[str] = []

    def exclude(rule: str) -> Decision:
        return Decision(False, None, rule, fired + [rule])

    if site.in_test or is_test_path(path):
        return exclude("exclude/test-code")
    if site.macro == "unreachable":
        return exclude("exclude/unreachable")
    arm, others = _site_arms(site)
    if arm is None:
        return exclude("exclude/not-in-arm")
    if not site.unconditional:
        return exclude("exclude/conditional")
    if arm.error_handling or (site.context != "match-arm" and any(o.error_handling for o in others)):
        return exclude("exclude/error-handling")
    # `_ =>` beside `Some(..)` / `Ok(..)` arms only: the catch-all is the None / Err case.
    if arm.catch_all and others and all(o.error_handling for o in others):
        return exclude("exclude/error-handling")

    all_arms = [arm, *others]
    if _scrutinee_is_dtype(site.scrutinee):
        fired.append("dtype/scrutinee")
    if any(catalog.names(r) for a in all_arms for r in _all_refs(a.refs)):
        fired.append("dtype/arm-variants")
    if _scrutinee_is_foreign_kind(site.scrutinee, all_arms, crate, catalog):
        fired.append("dtype/foreign-kind")
    outside = _foreign_dtype_enum(all_arms, catalog)
    if outside:
        fired.append("dtype/foreign-variants")
    if fired:
        dec = Decision(True, DTYPE, fired[0], fired, pattern=arm.pattern, catch_all=arm.catch_all)
        _dtype_sets(dec, arm, others, crate, catalog, outside)
        return dec

    pats = _patterns()
    if site.macro in rule_data()["mode"]["macros"]:
        fired.append("mode/unimplemented-macro")
    says_unsupported = pats.unsupported.search(site.message) or (
        not arm.catch_all and arm.refs and pats.variant_cannot.search(site.message))
    if says_unsupported and not pats.transient_state.search(site.message):
        fired.append("mode/unsupported-message")
    if fired:
        return Decision(True, MODE, fired[0], fired, pattern=arm.pattern, catch_all=arm.catch_all,
                        rejected=_variant_names(arm.refs) if not arm.catch_all else [])
    return exclude("exclude/internal-expectation")


def _foreign_dtype_enum(arms: list[ArmFacts], catalog: DtypeCatalog) -> str | None:
    """An enum from outside the tree whose arms name enough dtype variant names, if any."""
    named: dict[str, set[str]] = {}
    for a in arms:
        for r in _all_refs(a.refs):
            if r.enum not in catalog and not catalog.is_defined_anywhere(r.enum):
                named.setdefault(r.enum, set()).add(r.variant)
    least = rule_data()["dtype"]["foreign_like_min"]
    for enum, variants in sorted(named.items()):
        if len({canonical_dtype(v) for v in variants} & catalog.dtype_names) >= least:
            return enum
    known = rule_data()["dtype"]["foreign_dtype_enums"]
    for enum in sorted(named):
        if enum in known:
            return enum
    return None


def _all_refs(refs: list[VariantRef]):
    for r in refs:
        yield r
        if r.sub:
            yield from _all_refs(r.sub)


def _variant_names(refs: list[VariantRef]) -> list[str]:
    return [f"{r.enum}::{r.variant}" for r in refs]


def _dtype_sets(dec: Decision, arm: ArmFacts, others: list[ArmFacts], crate: str,
                catalog: DtypeCatalog, outside: str | None) -> None:
    """Fill enum, handled, rejected and partial for a dtype-dispatch decision; `outside` is the
    dtype enum from outside the tree the arms name, if any."""
    counts: dict[str, int] = {}
    for a in [arm, *others]:
        for r in a.refs:
            if catalog.names(r):
                counts[r.enum] = counts.get(r.enum, 0) + 1
    foreign = rule_data()["dtype"]["foreign_kind_enum"]
    if counts:
        enum = max(counts, key=lambda n: (counts[n], n == "DType"))
    elif outside:
        enum = outside
    elif any(r.enum == foreign for a in [arm, *others] for r in a.refs):
        enum = foreign
    elif "DType" in catalog:
        enum = "DType"
    else:
        enum = next(iter(catalog.enums), None)
    dec.enum = enum
    universe = catalog.expand(enum, crate) if enum in catalog else []

    def names(a: ArmFacts) -> set[str]:
        out: set[str] = set()
        for r in (a.refs if universe else list(_all_refs(a.refs))):
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
