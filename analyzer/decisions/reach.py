"""Catch-alls and arms no value reaches: the shapes of code after which a panic states an
impossibility, not a missing feature (exclude/unreachable)."""

from __future__ import annotations

import re

from analyzer.decisions.call import Call
from analyzer.decisions.data import rule_data
from analyzer.profiles import Profile


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
    variants = dict(c.profile.dtypes.foreign_non_exhaustive).get(enum)
    if variants is None or c.catalog.is_defined_anywhere(enum):
        return False  # not declared, or the tree's own enum of that name
    covered = _covered_whole(others)
    return covered is not None and set(variants) <= covered


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
    covered = _covered_whole(others)
    if covered is None:
        return False
    if any(c.catalog.outside(r.root) for o in others for r in o.refs):
        return False
    d = c.catalog.resolve(enum, c.named_variants.get(written, set()), c.path, c.crate)
    if d is None or not d.fields:
        return False
    left = [v for v, _ in d.variants if v not in covered]
    return all(c.catalog.uninhabited(d, v) for v in left)


def _covered_whole(others) -> set[str] | None:
    """The variants the arms before a catch-all take whole (an arm with a guard, a literal or a
    nested payload takes part of its variants only), or None when one of them is gated, another
    catch-all, or no plain variant pattern (a literal, a tuple, a slice)."""
    covered: set[str] = set()
    for o in others:
        if o.gated or o.catch_all or not o.refs or o.pattern.startswith(("(", "[")):
            return None
        if not (o.guard or o.error_handling or _PARTIAL.search(o.pattern)):
            covered.update(r.variant for r in o.refs if r.sub is None)
    return covered


def _self_type(impl_header: str) -> str:
    """The type `Self` names in an impl: `impl<P> Trait<P> for Op<P>` -> Op."""
    typ = impl_header.split(" for ", 1)[1] if " for " in impl_header else impl_header.removeprefix("impl")
    if typ.lstrip().startswith("<"):  # `impl<P> Op<P>`: skip the impl's own generics
        typ = typ.split(">", 1)[-1]
    return typ.strip().split("<")[0].split("::")[-1].strip()


# A pattern that matches part of a variant only: a literal or a nested payload pattern.
_PARTIAL = re.compile(r'["\']|\b\d|\btrue\b|\bfalse\b')


# --- catch-alls only dtypes of another kind reach -----------------------------------------------

def kind_fixed_catch_all(c: Call) -> bool:
    """The catch-all of a dtype match that only dtypes of one kind reach: its arms cover every
    dtype of kind K, and the value matched is of kind K by the code around it (the tensor of an
    ops method of kind K), so the dtypes left are of another kind, which the types rule out; or
    the variants left are ones the crate maps to another value before passing a value on
    (`Precision::Bool => self.bool_precision, _ => precision`)."""
    return _plain_dtype_catch_all(c) and (_left_only_remapped(c) or _kind_covered(c))


def _plain_dtype_catch_all(c: Call) -> bool:
    """An ungated catch-all of a dtype match after arms none of which is gated, guarded or
    another catch-all: what the other arms' patterns name is all the match takes before it (a
    gated or guarded arm takes part of its values only, in some builds or for some values)."""
    return bool(c.dtype_enums) and _plain_catch_all(c)


def _plain_catch_all(c: Call) -> bool:
    """The same of a match on any enum."""
    arm = c.arm
    if arm is None or not arm.catch_all or arm.gated or not c.others:
        return False
    return not any(o.gated or o.guard or o.catch_all for o in c.others)


def _left_only_remapped(c: Call) -> bool:
    enum = _catch_all_enum(c)
    remapped = c.catalog.remapped.get(c.crate)
    if enum is None or not remapped or enum not in c.dtype_enums:
        return False
    if any(c.catalog.outside(r.root) for o in c.others for r in o.refs):
        return False
    d = c.catalog.resolve(enum, c.named_variants.get(enum, set()), c.path, c.crate)
    if d is None:
        return False
    covered = _plain_variants(c)
    if covered is None:
        return False
    left = [v for v, _ in d.variants if v not in covered]
    return bool(left) and all((enum, v) in remapped for v in left)


def _plain_variants(c: Call) -> set[str] | None:
    """The variants the other arms take whole, None when one of them is not a plain variant
    pattern (a literal, a tuple, a nested payload)."""
    covered: set[str] = set()
    for o in c.others:
        if not o.refs or o.error_handling or o.pattern.startswith(("(", "[")) or _PARTIAL.search(o.pattern):
            return None
        covered.update(r.variant for r in o.refs if r.sub is None)
    return covered


def _places(c: Call) -> tuple[list[str], list[list[str]]] | None:
    """The scrutinee's places (one, or each of a tuple's) and, for each alternative of the other
    arms' patterns, its item at each place; None when the patterns do not line up with them."""
    scrutinee = c.site.scrutinee.strip()
    parts = _split_top(scrutinee[1:-1]) if scrutinee.startswith("(") and scrutinee.endswith(")") else [scrutinee]
    if c.site.context != "match-arm" or not all(parts):
        return None
    alternatives: list[list[str]] = []
    for o in c.others:
        for alt in _split_top(o.pattern, "|"):
            alt = alt.strip().lstrip("&").strip()
            items = _split_top(alt[1:-1]) if len(parts) > 1 and alt.startswith("(") and alt.endswith(")") else [alt]
            if len(items) != len(parts):
                return None
            alternatives.append([i.strip() for i in items])
    return parts, alternatives


def leaves_kind_gap(c: Call) -> bool:
    """The catch-all of a dtype match whose arms, at one place of the scrutinee, name two or more
    dtypes, all of one kind, and no arm names another dtype of that kind (`float_cast`'s `(F32,
    F64)` pairs with `F16` never named): the match dispatches over that kind and the dtype left
    has no arm, so it is a dtype the code lacks, whatever the message calls it. When every dtype
    of the kind has an arm, only mixed combinations are left: those are a mismatch."""
    if not _plain_dtype_catch_all(c):
        return False
    places = _places(c)
    if places is None:
        return False
    parts, alternatives = places
    for i in range(len(parts)):
        named: dict[str, set[str]] = {}
        for a in alternatives:
            for enum, variant in _choices(a[i]) or []:
                if enum:
                    named.setdefault(enum, set()).add(variant)
        if len(named) != 1:
            continue
        enum, variants = named.popitem()
        kinds = {_kind(v, c.profile) for v in variants}
        if len(variants) < 2 or len(kinds) != 1 or None in kinds:
            continue
        kind = kinds.pop()
        if any(_kind(v, c.profile) == kind and v not in variants for v in _variants(c, enum)):
            return True
    return False


def mixes_kinds(c: Call) -> bool:
    """The catch-all of a match on a tuple of dtypes whose arms each pair a variant with itself
    (`(Float(a), Float(b)) => .., (QFloat(a), QFloat(b)) => ..`), over variants of two or more kinds
    that one tensor type holds side by side (`dtype.mixed_kinds`: a plain and a quantized float):
    the pairs left mix the kinds, which the arms show the code handles one at a time, so a user
    who combines a quantized and a plain tensor meets a combination the code lacks, whatever its
    message calls it. Pairs of one kind (`(F32, F32)`,
    `(F64, F64)`) leave only a mismatch. The variants' kinds come from their names (the target's
    `dtypes.kinds`), so a tensor's primitive (`Float`, `QFloat`) counts as its dtypes do."""
    if not _plain_catch_all(c):
        return False
    places = _places(c)
    if places is None or len(places[0]) < 2:
        return False
    named: set[str] = set()
    for alt in places[1]:
        choices = [_choices(item) for item in alt]
        if any(ch is None or len(ch) != 1 or not ch[0][0] for ch in choices):
            return False
        pairs = {ch[0] for ch in choices if ch}
        if len(pairs) != 1:
            return False
        named.update(v for _, v in pairs)
    kinds = {_kind(v, c.profile) for v in named}
    return len(kinds) >= 2 and kinds <= set(rule_data().mixed_kinds)


def _kind_covered(c: Call) -> bool:
    """Each value the scrutinee holds (one, or each of a tuple's) is fixed to a kind, and the
    arms take every combination of dtypes of those kinds."""
    places = _places(c)
    if places is None:
        return False
    parts, alternatives = places
    method = _method_kind(c.site.impl, c.profile) or _name_kind(c.site.function, c.profile)
    wanted: list[list[str]] = []
    for i, expr in enumerate(parts):
        enums = {enum for a in alternatives for enum, _ in _choices(a[i]) or []} - {""}
        if len(enums) != 1:
            return False
        enum = enums.pop()
        variants = _variants(c, enum)
        kinds = {_kind(v, c.profile) for v in variants}
        kind = kinds.pop() if len(kinds) == 1 else _fixed_kind(expr, method)
        wanted.append([v for v in variants if _kind(v, c.profile) == kind] if kind is not None else [])
        if not wanted[-1]:
            return False
    return _covers(alternatives, wanted)


def _covers(alternatives: list[list[str]], wanted: list[list[str]]) -> bool:
    """Every combination of the wanted variants is taken by one alternative (a wildcard or a
    binding takes every variant at its place)."""
    budget = 1
    for w in wanted:
        budget *= len(w)
    if budget > _MAX_COMBINATIONS:
        return False
    combos: set[tuple[str, ...]] = set()
    for alt in alternatives:
        partial: list[tuple[str, ...]] = [()]
        for item, w in zip(alt, wanted):
            choices = _choices(item)
            if choices is None:
                return False  # a literal or a nested payload: part of a variant only
            taken = w if ("", "") in choices else [v for v in w if any(v == variant for _, variant in choices)]
            partial = [p + (v,) for p in partial for v in taken]
        combos.update(partial)
    return len(combos) == budget


# A tuple of dtypes has few places and each kind few dtypes; more than this is no dtype match.
_MAX_COMBINATIONS = 4096
_BINDING = re.compile(r"^(?:_|(?:ref\s+)?(?:mut\s+)?[a-z_][A-Za-z0-9_]*)$")
_PATH_VARIANT = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*::)*([A-Z][A-Za-z0-9_]*)::([A-Z][A-Za-z0-9_]*)"
                           r"(?:\s*\(\s*(?:\.\.|_|[a-z_][A-Za-z0-9_]*)?\s*\)|\s*\{[^{}]*\})?$")


def _choices(item: str) -> list[tuple[str, str]] | None:
    """The (enum, variant) pairs one place of a pattern takes (`A::X | A::Y`); ("", "") for a
    wildcard or a binding; None for anything else."""
    out: list[tuple[str, str]] = []
    for choice in _split_top(item.strip(), "|"):
        choice = choice.strip()
        if _BINDING.match(choice):
            out.append(("", ""))
            continue
        m = _PATH_VARIANT.match(choice)
        if m is None:
            return None
        out.append((m.group(1), m.group(2)))
    return out


def _variants(c: Call, enum: str) -> list[str]:
    d = c.catalog.resolve(enum, c.named_variants.get(enum, set()), c.path, c.crate)
    return [v for v, _ in d.variants] if d is not None and enum in c.dtype_enums else []


def _kind(variant: str, profile: Profile) -> str | None:
    """float, int, bool or quantized for a dtype variant, by the target's `dtypes.kinds`."""
    return next((kind for kind, rx in profile.dtype_kind_patterns if rx.fullmatch(variant)), None)


def _method_kind(impl_header: str, profile: Profile) -> str | None:
    """The tensor kind of the ops trait the enclosing impl implements (`impl FloatTensorOps<Self>
    for B` -> float), by the target's `code.ops_trait_kinds`."""
    m = profile.ops_impl.match(impl_header)
    if m is None:
        return None
    return next((kind for prefix, kind in profile.code.ops_trait_kinds if m.group(1).startswith(prefix)), None)


def _name_kind(function: str, profile: Profile) -> str | None:
    """The tensor kind a function's name gives it the way the ops traits name their methods
    (`int_scalar_op` -> int, `float_predicate` -> float): a backend's helper named after the kind
    of tensor its callers hand it, by the target's `code.ops_trait_kinds` prefixes."""
    head, sep, _ = function.partition("_")
    if not sep:
        return None
    # Only the traits named after their kind (`Int`, `Q`); `Module` ops are float by their tensors,
    # not by a `module_` prefix on their names.
    return next((kind for prefix, kind in profile.code.ops_trait_kinds
                 if prefix.lower() == head and (kind == head or len(prefix) == 1)), None)


def _fixed_kind(expr: str, method: str | None) -> str | None:
    """The kind a scrutinee's value is fixed to: the enclosing ops method's kind, unless the value
    comes from outside the backend's tensors (the data a tensor is built from)."""
    outside = rule_data().outside_value
    if method is None or any(outside.fullmatch(tok) for tok in re.findall(r"[A-Za-z_]\w*", expr)):
        return None
    return method


def _split_top(text: str, sep: str = ",") -> list[str]:
    """`text` split at each `sep` outside brackets."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [p for p in out if p.strip()] if sep == "," else out
