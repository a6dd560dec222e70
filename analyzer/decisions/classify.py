"""Classify stage: which panic-family calls are records, in which category, and which dtypes
their match handles and rejects.

Each decision names the rule that made it (`Decision.reason`) and every rule that fired on the
way (`Decision.rules`), so the audit (`extract --all-sites`) and the rule tests speak the same ids.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from collections.abc import Callable
from functools import cached_property, cache
from typing import NamedTuple

from analyzer.facts.model import ArmFacts, EnumFacts, SiteFacts, VariantRef

DTYPE = "dtype-dispatch"
MODE = "unsupported-mode"
CATEGORIES = (DTYPE, MODE)
BACKGROUND_TAG = {DTYPE: "unsupported-dtype", MODE: "unsupported-op-backend"}

_TEST_PATH = re.compile(r"(?:^|/)(?:tests|benches)/|(?:^|/)tests?\.rs$|_tests?\.rs$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@cache
def rule_data() -> dict:
    from analyzer.pipeline.ruleset import queries_root
    text = queries_root().joinpath("classifier.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


class _Patterns(NamedTuple):
    enum_name: re.Pattern
    scrutinee_ident: re.Pattern
    unsupported: re.Pattern
    variant_cannot: re.Pattern
    transient_state: re.Pattern
    element_format: re.Pattern
    internal_enum: re.Pattern


@cache
def _patterns() -> _Patterns:
    """The regexes of classifier.toml, compiled once."""
    d = rule_data()
    return _Patterns(re.compile(d["dtype"]["enum_name"]), re.compile(d["dtype"]["scrutinee_ident"]),
                     re.compile(d["mode"]["unsupported"]), re.compile(d["mode"]["variant_cannot"]),
                     re.compile(d["mode"]["transient_state"]), re.compile(d["dtype"]["element_format"]),
                     re.compile(d["mode"]["internal_enum"]))


# ---------------------------------------------------------------------------------------------
# The dtype catalog


@dataclass
class DtypeEnum:
    name: str
    variants: list[tuple[str, str | None]]
    crate: str
    path: str
    fields: list[list[str]] = field(default_factory=list)  # field type names, parallel to variants
    gated: list[str] = field(default_factory=list)  # variants under #[cfg(..)]


@dataclass
class DtypeCatalog:
    """The dtype enums of the analyzed tree: enums named like a dtype (DType, FloatDType), the
    enums their variants carry (DType::Bool(BoolStore)), aliases of those (BoolDType), and
    per-dtype definitions whose every variant is a dtype name (a storage enum `Tensor::F32(..)`).
    It also keeps every enum of the tree, to resolve the enum a match names and to tell which of
    its variants can hold a value."""

    # Dtype enums by name. For a name made a dtype enum by its variants, only the definitions
    # that qualify are listed: two enums of one name, one with a `Tensor` variant, are two enums.
    enums: dict[str, list[DtypeEnum]] = field(default_factory=dict)
    # Every enum name defined in each crate, dtype or not: a crate's own `Kind` is not tch's.
    local: dict[str, set[str]] = field(default_factory=dict)
    # Variant names of the enums named like a dtype (F32, BF16, I64 ...), canonical spelling.
    dtype_names: set[str] = field(default_factory=set)
    # The crates of the tree, as paths name them (burn_std), to tell `syn::Data` from ours.
    crates: set[str] = field(default_factory=set)
    # Names that are dtype enums whatever their definition: named like a dtype, a dtype's payload
    # enum, or an alias of one.
    named: set[str] = field(default_factory=set)
    # Every enum of the tree by name, dtype or not.
    every: dict[str, list[DtypeEnum]] = field(default_factory=dict)

    def names(self, ref: VariantRef) -> bool:
        """The ref's enum name is a dtype enum somewhere in the tree and its path does not start
        at a crate outside the tree (`syn::Data::Union` is not a tree's `Data`)."""
        return ref.enum in self.enums and not self.outside(ref.root)

    def is_dtype(self, name: str, variants: set[str], path: str, crate: str) -> bool:
        """Whether `name`, as a match at `path` naming `variants` of it sees it, is a dtype enum:
        a name made a dtype enum by its variants counts only where it resolves to a definition
        whose every variant is a dtype (R6, at every commit)."""
        if name not in self.enums:
            return False
        if name in self.named:
            return True
        d = self.resolve(name, variants, path, crate)
        return d is None or any(d is q for q in self.enums[name])

    def resolve(self, name: str, variants: set[str], path: str, crate: str) -> DtypeEnum | None:
        """The definition of `name` a match at `path` naming `variants` of it means: among the
        definitions holding every named variant, the one of the same file, else of the same
        crate, else the largest. None when the tree defines no enum of that name."""
        defs = self.every.get(name)
        if not defs:
            return None
        fitting = [d for d in defs if variants <= {v for v, _ in d.variants}] or defs
        for near in ([d for d in fitting if d.path == path], [d for d in fitting if d.crate == crate]):
            if near:
                return max(near, key=lambda d: (len(d.variants), d.path))
        return max(fitting, key=lambda d: (len(d.variants), d.path))

    def outside(self, root: str) -> bool:
        if root in ("", "crate", "self", "super", "Self") or root.startswith(("_", "$")):
            return False
        return root not in self.crates

    def is_defined_anywhere(self, name: str) -> bool:
        return any(name in names for names in self.local.values())

    def uninhabited(self, d: DtypeEnum, variant: str) -> bool:
        """A variant no value can take: a field of type `Infallible`, `!` or an empty enum of
        the tree."""
        for (v, _), types in zip(d.variants, d.fields):
            if v == variant:
                return any(t in ("Infallible", "!") or self._empty_enum(t) for t in types)
        return False

    def _empty_enum(self, name: str) -> bool:
        defs = self.every.get(name, [])
        return bool(defs) and all(not d.variants for d in defs)

    @staticmethod
    def build(defs: list[tuple[str, str, EnumFacts]],
              aliases: list[tuple[str, str, str, str]] | None = None) -> DtypeCatalog:
        """`defs` holds (path, crate, enum) for every enum in the tree; `aliases` holds
        (path, crate, alias, target) for every plain type alias."""
        enum_name = _patterns().enum_name
        rules = rule_data()["dtype"]
        aliases = aliases or []
        by_name: dict[str, list[DtypeEnum]] = {}
        local: dict[str, set[str]] = {}
        for path, crate, e in defs:
            by_name.setdefault(e.name, []).append(DtypeEnum(e.name, e.variants, crate, path, e.fields, e.gated))
            local.setdefault(crate, set()).add(e.name)
        named = {n for n in by_name if enum_name.match(n)}
        dtype_names = {canonical_dtype(v) for n in named for d in by_name[n] for v, _ in d.variants}
        # Payload enums of dtype variants belong to the catalog too (DType::Bool(BoolStore)), when
        # their variants name dtypes: a quantization strategy a dtype variant carries
        # (QFloat(Strategy) with PerTensorAffine.. variants) is a setting, not a dtype enum.
        frontier = list(named)
        while frontier:
            n = frontier.pop()
            for d in by_name[n]:
                for _, payload in d.variants:
                    if (payload and payload in by_name and payload not in named
                            and _names_dtypes(by_name[payload], dtype_names, rules["payload_share"])):
                        named.add(payload)
                        frontier.append(payload)
        enums = {n: by_name[n] for n in named}
        for n, ds in by_name.items():
            if n in named:
                continue
            qualifying = [d for d in ds if len(names := {canonical_dtype(v) for v, _ in d.variants}) >= rules["all_min"]
                          and names <= dtype_names]
            if qualifying:
                enums[n] = qualifying
        for _path, _crate, alias, target in aliases:
            if target in enums and alias not in enums:
                enums[alias] = [DtypeEnum(alias, d.variants, d.crate, d.path, d.fields, d.gated) for d in enums[target]]
                named.add(alias)
        # Types a derive macro generates from a dtype enum of the tree, with its variants
        # (cubecl's `#[derive(CubeType)]` on `enum Scalar { F32(..), .. }` makes `ScalarExpand`).
        for suffix in rules["derived_suffixes"]:
            for target in list(enums):
                derived = target + suffix
                if derived not in enums and derived not in by_name:
                    enums[derived] = [DtypeEnum(derived, d.variants, d.crate, d.path, d.fields, d.gated)
                                      for d in enums[target]]
                    if target in named:
                        named.add(derived)
        crates = {c.replace("-", "_") for _, c, _ in defs} | {c.replace("-", "_") for _, c, _, _ in aliases}
        return DtypeCatalog(dict(sorted(enums.items())), local, dtype_names, crates, named, by_name)

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


def _names_dtypes(defs: list[DtypeEnum], dtype_names: set[str], share: float) -> bool:
    """Some definition of a payload enum has at least `share` of its variants named as dtypes
    (BoolStore: Native, U8, U32): in canonical spelling, a variant name of the dtype-named enums
    or a width-suffixed number type (U32 where the dtype enum lists no U32)."""
    def is_dtype(v: str) -> bool:
        name = canonical_dtype(v)
        return name in dtype_names or _CANONICAL.match(name) is not None
    return any(d.variants and sum(is_dtype(v) for v, _ in d.variants) >= share * len(d.variants)
               for d in defs)


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
# A number type in canonical spelling: f32, bf16, i64, u8.
_CANONICAL = re.compile(r"^(?:f|bf|i|u)(?:8|16|32|64|128)$")


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
                               catalog: DtypeCatalog) -> bool:
    d = rule_data()["dtype"]
    enum = d["foreign_kind_enum"]
    if catalog.defines(crate, enum):
        return False  # the crate's own Kind enum (a tensor kind), not tch's dtype
    if not re.search(r"\.\s*" + re.escape(d["foreign_kind_method"]) + r"\s*\(\s*\)", scrutinee):
        return False
    return any(r.enum == enum for a in arms for r in a.refs)


class _Call:
    """One call and what the rules read about it, each fact worked out once, when first asked."""

    def __init__(self, site: SiteFacts, path: str, crate: str, catalog: DtypeCatalog):
        self.site, self.path, self.crate, self.catalog = site, path, crate, catalog
        self.arm, self.others = _site_arms(site)

    @property
    def body(self) -> ArmFacts:
        """The arm the call is the body of; rules after exclude/not-in-arm may rely on it."""
        assert self.arm is not None, "exclude/not-in-arm is checked first"
        return self.arm

    @cached_property
    def arms(self) -> list[ArmFacts]:
        return [self.arm, *self.others] if self.arm is not None else []

    @cached_property
    def named_variants(self) -> dict[str, set[str]]:
        """Variant names the arms name, per enum name, payloads included."""
        out: dict[str, set[str]] = {}
        for a in self.arms:
            for r in _all_refs(a.refs):
                out.setdefault(r.enum, set()).add(r.variant)
        return out

    @cached_property
    def dtype_enums(self) -> set[str]:
        """The enums the arms name that are dtype enums for this match."""
        return {r.enum for a in self.arms for r in _all_refs(a.refs)
                if self.catalog.names(r)
                and self.catalog.is_dtype(r.enum, self.named_variants[r.enum], self.path, self.crate)}

    @cached_property
    def foreign(self) -> str | None:
        return _foreign_dtype_enum(self.arms, self.catalog)

    @cached_property
    def element_format_enum(self) -> str | None:
        """The enum whose variants the arms name as pixel/element formats with a bit depth
        (`Rgb8`, `L16`, `Rgba32F`), at least `element_format_min` distinct ones, if any."""
        fmt = _patterns().element_format
        least = rule_data()["dtype"]["element_format_min"]
        for enum, variants in sorted(self.named_variants.items()):
            if len({v for v in variants if fmt.match(v)}) >= least:
                return enum
        return None

    @cached_property
    def says_unsupported(self) -> bool:
        pats = _patterns()
        message = self.site.message
        says = pats.unsupported.search(message) or (
            self.arm is not None and not self.arm.catch_all and self.arm.refs
            and pats.variant_cannot.search(message))
        return bool(says) and not pats.transient_state.search(message)

    @cached_property
    def names_a_dtype(self) -> bool:
        """The message names a dtype of the tree (`int64`, `F32`) or speaks of a data type: it
        says which dtype it wanted, so the values it rejects are dtypes."""
        words = re.findall(r"[A-Za-z][A-Za-z0-9]*", self.site.message)
        return (any(canonical_dtype(w) in self.catalog.dtype_names for w in words if any(ch.isdigit() for ch in w))
                or bool(re.search(r"(?i)\b(?:dtype|data\s+type|element\s+type)\b", self.site.message)))


@dataclass(frozen=True)
class Rule:
    """One rule of the classifier: `decides` is a category (the rule makes the call a record of
    it) or `none` (the rule leaves the call out); `checks` says what it checks (the audit's
    `why`); `test` names its rule-test file under tests/rules/."""

    id: str
    decides: str
    checks: str
    test: str
    applies: Callable[[_Call], bool]


NONE = "none"


# --- exclusions checked before any category ---------------------------------------------------

def _in_test_code(c: _Call) -> bool:
    return c.site.in_test or is_test_path(c.path)


def _unreachable(c: _Call) -> bool:
    return c.site.macro == "unreachable" or _catch_all_unreachable(c)


def _catch_all_unreachable(c: _Call) -> bool:
    """A catch-all arm (or let-else) no value can reach: the other arms cover every variant of
    one enum of the tree that can hold a value; what is left holds only uninhabited types
    (`Infallible`, `!`, an empty enum), or nothing is left. A `#[cfg]`-gated arm or a gated
    variant left over can make the catch-all reachable in some builds: then it stays a site."""
    arm, others = c.arm, c.others
    if arm is None or not arm.catch_all or not others or arm.gated:
        return False
    enums = {r.enum for o in others for r in o.refs}
    if len(enums) != 1:
        return False
    written = enums.pop()
    enum = _self_type(c.site.impl) if written == "Self" else written
    covered: set[str] = set()
    for o in others:
        if o.gated or o.catch_all:
            return False
        if not o.refs or o.pattern.startswith(("(", "[")):
            return False  # a literal, a tuple or a slice: not a plain variant pattern
        if o.guard or o.error_handling or _PARTIAL.search(o.pattern):
            continue  # covers part of its variants only
        covered.update(r.variant for r in o.refs if r.sub is None)
    if any(c.catalog.outside(r.root) for o in others for r in o.refs):
        return False
    d = c.catalog.resolve(enum, c.named_variants.get(written, set()), c.path, c.crate)
    if d is None or not d.fields:
        return False
    left = [v for v, _ in d.variants if v not in covered]
    return all(c.catalog.uninhabited(d, v) for v in left)


def _self_type(impl_header: str) -> str:
    """The type `Self` names in an impl: `impl<P> Trait<P> for Op<P>` -> Op."""
    typ = impl_header.split(" for ", 1)[1] if " for " in impl_header else impl_header.removeprefix("impl")
    if typ.lstrip().startswith("<"):  # `impl<P> Op<P>`: skip the impl's own generics
        typ = typ.split(">", 1)[-1]
    return typ.strip().split("<")[0].split("::")[-1].strip()


# A pattern that matches part of a variant only: a literal or a nested payload pattern.
_PARTIAL = re.compile(r'["\']|\b\d|\btrue\b|\bfalse\b')


def _not_in_arm(c: _Call) -> bool:
    return c.arm is None


def _conditional(c: _Call) -> bool:
    return not c.site.unconditional


def _error_handling(c: _Call) -> bool:
    arm, others = c.body, c.others
    if arm.error_handling:
        return True
    # (The `else` of a let-else or if-let-else is a catch-all beside its one written pattern, so
    # `let Some(Values::Int64s(v)) = x else { panic!("values must be int64") }` reads as below.)
    # `_ =>` beside `Some(..)` / `Ok(..)` arms only is the None / Err case (R7), unless those
    # arms name variants of an inner enum: then the catch-all also takes every other inner
    # variant, a dispatch on the inner enum (R12). When two or more variants of a dtype enum are
    # named it rejects dtypes, whatever its message (Step 2); otherwise only a message saying the
    # rest is not supported makes it one.
    if arm.catch_all and others and all(o.error_handling for o in others):
        inner = [o for o in others if any(r.variant not in _OPTION_RESULT for r in o.refs)]
        # A `Some(x)` arm takes every inner value: then the catch-all is the None case alone.
        whole = [o for o in others if o not in inner and _VALUE_ARM.match(o.pattern)]
        if not inner or whole:
            return True
        inner_refs = {(r.enum, r.variant) for o in inner for r in o.refs if r.variant not in _OPTION_RESULT}
        inner_enums = {e for e, _ in inner_refs}
        dtype_inner = bool(inner_enums & c.dtype_enums) or c.foreign in inner_enums
        # Two or more inner variants are a dispatch.
        # A single one is a lookup that expects that value: its catch-all is the None case unless
        # the message says the rest is unsupported, or names the dtype it wanted.
        dispatch = dtype_inner and (len(inner_refs) >= 2 or c.names_a_dtype)
        return not (dispatch or c.says_unsupported)
    return False


_OPTION_RESULT = {"Some", "None", "Ok", "Err"}
_VALUE_ARM = re.compile(r"^&?\s*(?:\w+::)*(?:Some|Ok)\b")


# --- dtype-dispatch ---------------------------------------------------------------------------

def _dtype_scrutinee(c: _Call) -> bool:
    return _scrutinee_is_dtype(c.site.scrutinee)


# An arm whose pattern is one binding (`dtype`, `ref elem_type`, `x @ ..`), its guard after ` if `.
_BINDING_ARM = re.compile(r"^&?\s*(?:ref\s+)?(?:mut\s+)?([a-z_][A-Za-z0-9_]*)(?:\s*@[^|]*?)?(?:\s+if\s+(.*))?$", re.S)


def _dtype_arm_bindings(c: _Call) -> bool:
    """An arm binds the scrutinee to a name that says it is a dtype (`dtype if ..`, `elem_type
    =>`), or guards its binding with a dtype-kind predicate (`x if x.is_float()`): the match
    dispatches on a dtype, whatever the scrutinee is called."""
    if c.site.context != "match-arm":
        return False
    ident = _patterns().scrutinee_ident
    predicate = rule_data()["dtype"]["binding_predicate"]
    for a in c.arms:
        m = _BINDING_ARM.match(a.pattern)
        if m is None or m.group(1) == "_":
            continue
        name, guard = m.group(1), m.group(2) or ""
        if ident.match(name):
            return True
        if guard and re.search(rf"\b{re.escape(name)}\s*\.\s*(?:{predicate})\s*\(\s*\)", guard):
            return True
    return False


def _dtype_arm_variants(c: _Call) -> bool:
    return bool(c.dtype_enums)


def _dtype_foreign_kind(c: _Call) -> bool:
    return _scrutinee_is_foreign_kind(c.site.scrutinee, c.arms, c.crate, c.catalog)


def _dtype_foreign_variants(c: _Call) -> bool:
    return c.foreign is not None


def _dtype_element_formats(c: _Call) -> bool:
    """The arms name pixel/element formats with a bit depth per channel (`Rgb8`, `L16`,
    `Rgba32F`) of one enum: each arm maps a format to per-dtype values."""
    return c.element_format_enum is not None


# --- exclusions checked before the unsupported-mode rules ---------------------------------------

def _internal_state(c: _Call) -> bool:
    """The panicking arm rejects a variant of an enum that describes the program's own context
    or state (an autotune run's context, a code-generation stage): values the library makes
    itself, never a setting a user chooses (R8)."""
    internal = _patterns().internal_enum
    refs = c.body.refs if not c.body.catch_all else [r for o in c.others for r in o.refs]
    enums = {r.enum for r in refs}
    return bool(enums) and all(internal.search(e) for e in enums)


# --- unsupported-mode -----------------------------------------------------------------------------

def _mode_macro(c: _Call) -> bool:
    return c.site.macro in rule_data()["mode"]["macros"]


def _mode_message(c: _Call) -> bool:
    return c.says_unsupported


# The rules in the order the classifier walks them (the order docs/classifier-rubric.md gives).
# An exclusion that applies ends the walk; consecutive rules of one category all get their say,
# and the category of the first that fired decides once the walk leaves that group.
RULE_ORDER: tuple[Rule, ...] = (
    Rule("exclude/test-code", NONE, "in tests/, benches/, a #[cfg(test)] module or a #[test] function",
         "exclude-test-code.toml", _in_test_code),
    Rule("exclude/unreachable", NONE, "unreachable! states an impossibility, not a missing feature; "
         "so does a catch-all arm no value can reach", "exclude-unreachable.toml", _unreachable),
    Rule("exclude/not-in-arm", NONE, "not the body of a match arm, let-else or if-let",
         "exclude-not-in-arm.toml", _not_in_arm),
    Rule("exclude/conditional", NONE, "inside the arm, but behind a condition",
         "exclude-conditional.toml", _conditional),
    Rule("exclude/error-handling", NONE, "the arm handles Err/None/Ok/Some (error handling)",
         "exclude-error-handling.toml", _error_handling),
    Rule("dtype/scrutinee", DTYPE,
         "the match scrutinee is a dtype (x.dtype(), data.dtype, src_dtype, a tuple holding one)",
         "dtype-scrutinee.toml", _dtype_scrutinee),
    Rule("dtype/arm-bindings", DTYPE,
         "an arm binds the scrutinee to a dtype name (dtype, elem_type) or guards it with x.is_float()-like predicates",
         "dtype-arm-bindings.toml", _dtype_arm_bindings),
    Rule("dtype/arm-variants", DTYPE, "the arms name variants of a dtype enum found in the tree",
         "dtype-arm-variants.toml", _dtype_arm_variants),
    Rule("dtype/foreign-kind", DTYPE, "a tch kind() match on tch::Kind variants",
         "dtype-foreign-kind.toml", _dtype_foreign_kind),
    Rule("dtype/foreign-variants", DTYPE,
         "arms name variants of a dtype enum from outside the tree (cubecl FloatKind, ElemType)",
         "dtype-foreign-variants.toml", _dtype_foreign_variants),
    Rule("dtype/element-formats", DTYPE,
         "arms name pixel/element formats with a bit depth (an image colour type: L8, Rgb16, Rgba32F)",
         "dtype-element-formats.toml", _dtype_element_formats),
    Rule("exclude/internal-state", NONE,
         "the arm rejects a variant of an internal context/state enum, which no user setting selects",
         "exclude-internal-state.toml", _internal_state),
    Rule("mode/unimplemented-macro", MODE, "unimplemented!/todo! in an arm of a non-dtype match",
         "mode-unimplemented-macro.toml", _mode_macro),
    Rule("mode/unsupported-message", MODE, "the message says the variant or setting is not supported",
         "mode-unsupported-message.toml", _mode_message),
    Rule("exclude/internal-expectation", NONE, "the message states an internal expectation, not a missing feature",
         "exclude-internal-expectation.toml", lambda c: True),
)
RULES = {r.id: r.checks for r in RULE_ORDER}
EXCLUSIONS = {r.id: r.checks for r in RULE_ORDER if r.decides == NONE}


def classify(site: SiteFacts, path: str, crate: str, catalog: DtypeCatalog) -> Decision:
    call = _Call(site, path, crate, catalog)
    fired: list[Rule] = []
    for rule in RULE_ORDER:
        if fired and rule.decides != fired[0].decides:
            break
        if rule.applies(call):
            if rule.decides == NONE:
                return Decision(False, None, rule.id, [r.id for r in fired] + [rule.id])
            fired.append(rule)
    category = fired[0].decides
    arm = call.body
    dec = Decision(True, category, fired[0].id, [r.id for r in fired], pattern=arm.pattern,
                   catch_all=arm.catch_all)
    if category == DTYPE:
        _dtype_sets(dec, call)
    else:
        dec.rejected = _variant_names(arm.refs) if not arm.catch_all else []
    return dec


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
    enum_name = _patterns().enum_name
    for enum in sorted(named):
        # Named like a dtype enum (a generated protobuf `DataType`), or one of the libraries'.
        if enum in known or enum_name.match(enum):
            return enum
    return None


def _all_refs(refs: list[VariantRef]):
    for r in refs:
        yield r
        if r.sub:
            yield from _all_refs(r.sub)


def _variant_names(refs: list[VariantRef]) -> list[str]:
    return [f"{r.enum}::{r.variant}" for r in refs]


def _dtype_sets(dec: Decision, call: _Call) -> None:
    """Fill enum, handled, rejected and partial for a dtype-dispatch decision."""
    arm, others, crate, catalog = call.body, call.others, call.crate, call.catalog
    outside = call.foreign or call.element_format_enum
    counts: dict[str, int] = {}
    for a in [arm, *others]:
        for r in a.refs:
            if r.enum in call.dtype_enums and not catalog.outside(r.root):
                counts[r.enum] = counts.get(r.enum, 0) + 1
    foreign = rule_data()["dtype"]["foreign_kind_enum"]
    enum: str | None
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
    universe = catalog.expand(enum, crate) if enum is not None and enum in catalog else []

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
