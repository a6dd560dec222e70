"""Catch-alls and arms no value reaches: the shapes of code after which a panic states an
impossibility, not a missing feature (exclude/unreachable)."""

from __future__ import annotations

import re

from analyzer.decisions.call import Call
from analyzer.profiles import current


def unreachable(c: Call) -> bool:
    """`unreachable!`, or a panic no value can reach: a catch-all after every variant of an enum of
    the tree (or of a declared non-exhaustive foreign one), an arm on an uninhabited variant."""
    return c.site.macro == "unreachable" or _catch_all_unreachable(c) or _uninhabited_arm(c) or _foreign_exhausted(c)


def _catch_all_enum(c: Call) -> str | None:
    """The one enum the other arms name, when the call is an ungated catch-all after them."""
    arm, others = c.arm, c.others
    if arm is None or not arm.catch_all or not others or arm.gated:
        return None
    enums = {r.enum for o in others for r in o.refs}
    return enums.pop() if len(enums) == 1 else None


def _foreign_exhausted(c: Call) -> bool:
    """A catch-all after arms that name every variant of a `#[non_exhaustive]` enum of another
    crate, as the target profile declares them (image's ColorType): the compiler demands the
    arm, no value of today's versions reaches it."""
    others = c.others
    enum = _catch_all_enum(c)
    if enum is None:
        return False
    variants = dict(current().dtypes.foreign_non_exhaustive).get(enum)
    if variants is None or c.catalog.is_defined_anywhere(enum):
        return False  # not declared, or the tree's own enum of that name
    covered: set[str] = set()
    for o in others:
        if o.gated or o.catch_all or not o.refs or o.pattern.startswith(("(", "[")):
            return False
        if not (o.guard or o.error_handling or _PARTIAL.search(o.pattern)):
            covered.update(r.variant for r in o.refs if r.sub is None)
    return set(variants) <= covered


def _uninhabited_arm(c: Call) -> bool:
    """An explicit arm whose every variant holds an uninhabited type (`Never(Infallible)`): no
    value takes it."""
    arm = c.arm
    if arm is None or arm.catch_all or not arm.refs or c.site.context != "match-arm":
        return False
    for r in arm.refs:
        d = None if c.catalog.outside(r.root) else c.catalog.resolve(
            _self_type(c.site.impl) if r.enum == "Self" else r.enum, {r.variant}, c.path, c.crate)
        if d is None or not c.catalog.uninhabited(d, r.variant):
            return False
    return True


def _catch_all_unreachable(c: Call) -> bool:
    """A catch-all arm (or let-else) no value can reach: the other arms cover every variant of
    one enum of the tree that can hold a value; what is left holds only uninhabited types
    (`Infallible`, `!`, an empty enum), or nothing is left. A `#[cfg]`-gated arm or a gated
    variant left over can make the catch-all reachable in some builds: then it stays a site."""
    others = c.others
    written = _catch_all_enum(c)
    if written is None:
        return False
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
