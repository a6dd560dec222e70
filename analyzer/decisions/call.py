"""One call as the rules see it: the arm it is the body of, the other arms, and each fact the
rules read about it, worked out once, when first asked."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

from analyzer.decisions.catalog import DtypeCatalog, canonical_dtype
from analyzer.decisions.data import rule_data
from analyzer.facts.model import ArmFacts, SiteFacts, VariantRef
from analyzer.profiles import Profile
from analyzer.profiles.run import Run

_T = TypeVar("_T")


class cached_fact(Generic[_T]):
    """functools.cached_property without its lock (Python 3.11 takes one on every first
    access): a Call is worked on by one thread only. The value lands in the instance's
    __dict__, which later lookups find before this (non-data) descriptor."""

    def __init__(self, fn: Callable[[Any], _T]):
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> cached_fact[_T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> _T | cached_fact[_T]:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _site_arms(site: SiteFacts) -> tuple[ArmFacts | None, list[ArmFacts]]:
    """The arm the call is the body of, and the others; let-else and if-let as two-armed matches."""
    if site.context == "match-arm" and 0 <= site.arm_index < len(site.arms):
        return site.arms[site.arm_index], [a for i, a in enumerate(site.arms) if i != site.arm_index]
    if site.context in ("let-else", "if-let-else") and site.arms:
        written = site.arms[0]
        other = ArmFacts("else", [], True, False, True, False, site.line)
        return other, [ArmFacts(written.pattern, written.refs, written.catch_all, False, False,
                                written.error_handling, written.line, returns_binding=written.returns_binding)]
    if site.context == "if-let" and site.arms:
        return site.arms[0], [ArmFacts("else", [], True, False, False, False, site.line)]
    return None, []


_STRING = re.compile(r'r#*"(?:.|\n)*?"#*|"(?:\\.|[^"\\])*"')


def scrutinee_is_dtype(scrutinee: str) -> bool:
    ident = rule_data().scrutinee_ident
    code = _STRING.sub('""', scrutinee)  # `value.get("DType")` names no dtype value
    return any(ident.match(tok) for tok in _IDENT.findall(code))


def scrutinee_is_foreign_kind(scrutinee: str, arms: list[ArmFacts], crate: str,
                               catalog: DtypeCatalog, profile: Profile) -> bool:
    d = profile.dtypes
    enum = d.foreign_kind_enum
    if catalog.defines(crate, enum):
        return False  # the crate's own Kind enum (a tensor kind), not tch's dtype
    if not re.search(r"\.\s*" + re.escape(d.foreign_kind_method) + r"\s*\(\s*\)", scrutinee):
        return False
    return any(r.enum == enum for a in arms for r in a.refs)


class Call:
    """One call and what the rules read about it, each fact worked out once, when first asked."""

    def __init__(self, site: SiteFacts, path: str, crate: str, catalog: DtypeCatalog, run: Run):
        self.site, self.path, self.crate, self.catalog, self.run = site, path, crate, catalog, run
        self.profile = run.profile  # the target's conventions, which the rules read
        self.arm, self.others = _site_arms(site)

    @property
    def body(self) -> ArmFacts:
        """The arm the call is the body of; rules after exclude/not-in-arm may rely on it."""
        assert self.arm is not None, "exclude/not-in-arm is checked first"
        return self.arm

    @cached_fact
    def arms(self) -> list[ArmFacts]:
        return [self.arm, *self.others] if self.arm is not None else []

    @cached_fact
    def named_variants(self) -> dict[str, set[str]]:
        """Variant names the arms name, per enum name, payloads included."""
        out: dict[str, set[str]] = {}
        for a in self.arms:
            for r in all_refs(a.refs):
                out.setdefault(r.enum, set()).add(r.variant)
        return out

    @cached_fact
    def dtype_enums(self) -> set[str]:
        """The enums the arms name that are dtype enums for this match."""
        return {r.enum for a in self.arms for r in all_refs(a.refs)
                if self.catalog.names(r)
                and self.catalog.is_dtype(r.enum, self.named_variants[r.enum], self.path, self.crate)}

    @cached_fact
    def foreign(self) -> str | None:
        return _foreign_dtype_enum(self.arms, self.catalog, self.profile)

    @cached_fact
    def element_format_enum(self) -> str | None:
        """The enum whose variants the arms name as pixel/element formats with a bit depth
        (`Rgb8`, `L16`, `Rgba32F`), at least `element_format_min` distinct ones, if any."""
        fmt = rule_data().element_format
        least = rule_data().element_format_min
        for enum, variants in sorted(self.named_variants.items()):
            if len({v for v in variants if fmt.match(v)}) >= least:
                return enum
        return None

    @cached_fact
    def says_unsupported(self) -> bool:
        pats = rule_data()
        message = self.site.message
        # "can't X" names a missing feature when something chosen is in view: an arm's own
        # variants, or the build a `#[cfg]` gate tests (a target without atomics).
        chosen = (self.arm is not None and not self.arm.catch_all and self.arm.refs) or self.site.branch == "cfg"
        # The author's comment just above the call says it for the message (`// Not supported in
        # Burn` above `panic!("the reduce operation must preserve the reduced dimension")`).
        says = (pats.unsupported.search(message) is not None
                or bool(chosen and pats.variant_cannot.search(message))
                or bool(self.site.comment and pats.unsupported.search(self.site.comment)))
        return says and not pats.transient_state.search(message)

    @cached_fact
    def names_a_dtype(self) -> bool:
        """The message names a dtype of the tree (`int64`, `F32`) or speaks of a data type: it
        says which dtype it wanted, so the values it rejects are dtypes."""
        words = re.findall(r"[A-Za-z][A-Za-z0-9]*", self.site.message)
        return (any(canonical_dtype(w) in self.catalog.dtype_names for w in words if any(ch.isdigit() for ch in w))
                or bool(re.search(r"(?i)\b(?:dtype|data\s+type|element\s+type)\b", self.site.message)))



def _foreign_dtype_enum(arms: list[ArmFacts], catalog: DtypeCatalog, profile: Profile) -> str | None:
    """An enum from outside the tree whose arms name enough dtype variant names, if any."""
    named: dict[str, set[str]] = {}
    for a in arms:
        for r in all_refs(a.refs):
            if r.enum not in catalog and not catalog.is_defined_anywhere(r.enum):
                named.setdefault(r.enum, set()).add(r.variant)
    least = rule_data().foreign_like_min
    for enum, variants in sorted(named.items()):
        if len({canonical_dtype(v) for v in variants} & catalog.dtype_names) >= least:
            return enum
    known = profile.dtypes.foreign_enums
    enum_name = rule_data().enum_name
    for enum in sorted(named):
        # Named like a dtype enum (a generated protobuf `DataType`), or one of the libraries'.
        if enum in known or enum_name.match(enum):
            return enum
    return None


def all_refs(refs: list[VariantRef]):
    for r in refs:
        yield r
        if r.sub:
            yield from all_refs(r.sub)

