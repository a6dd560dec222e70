"""The unsupported-mode rules: the call rejects a setting or variant a user chose."""

from __future__ import annotations

import re

from analyzer.decisions.call import Call
from analyzer.decisions.data import rule_data
from analyzer.facts.model import VariantRef


def assertion(c: Call) -> bool:
    """An assertion with a message (analyzer/facts/sites.py reads no other) that says what its
    condition checks is not supported: the condition is the guard, the message names the setting."""
    return c.site.branch == "assert" and c.says_unsupported


def expect(c: Call) -> bool:
    """`.expect(msg)` whose message says what it needed is not supported there (a platform with no
    blocking reader, a runtime input where a constant is read): the Option or Result it unwraps
    is the test, None or Err the refused case."""
    return c.site.branch == "expect" and c.says_unsupported


def unsupported_message(c: Call) -> bool:
    return c.says_unsupported


# A condition that holds no value of the program's input: a call of an associated function with no
# arguments (`DeviceHandle::<S>::is_blocking()`, `!Backend::supports_sync()`) or a `cfg!(..)`.
_BUILD_PREDICATE = re.compile(r"!?\s*(?:cfg\s*!\s*\([^()]*\)"
                              r"|[A-Z]\w*(?:\s*::\s*(?:<[^()]*?>|\w+))*\s*::\s*[a-z_]\w*\s*\(\s*\))")


def build_guard(c: Call) -> bool:
    """A guard whose condition asks only the build or the platform (an associated predicate with
    no arguments, a `cfg!`) and whose call says what cannot be done there (`if
    Handle::is_blocking() { panic!("Can't use `all_reduce` with a blocking device handle") }`):
    the user picked that platform or build, and the operation is not available on it. "Can't"
    on a guard that tests a value states misuse (R17); a test of no value states a limit."""
    pats, message = rule_data(), c.site.message
    if pats.transient_state.search(message):
        return False
    # A statement compiled only when a feature is left out (`#[cfg(not(feature = "std"))]
    # panic!("Attempting to run benchmark in a no-std environment")`) runs exactly in the builds
    # that lack the feature: whatever its wording, it says the operation needs it.
    if c.site.branch == "cfg" and _FEATURE_LEFT_OUT.match(c.site.condition):
        return True
    return bool(_BUILD_PREDICATE.fullmatch(c.site.condition.strip())) and bool(pats.variant_cannot.search(message))


_FEATURE_LEFT_OUT = re.compile(r"#\s*\[\s*cfg\s*\(\s*not\s*\(\s*feature\s*=")


def runtime_input(c: Call) -> bool:
    """The arm takes the variant of an input-kind enum that holds a value known only when the model
    runs (`SliceInput::Runtime`, beside `Static`): explicitly, or as the catch-all beside arms that
    name only its other variants (`Some(SliceInput::Static(s)) => s, _ => panic!("Steps must be
    Static")`). Which variant an input gets is the model's choice (a constant or a computed
    value), so whatever the message says, the importer does not support that input's runtime form.
    The checks that would call the arm an Option's None case, an accessor, a validation or a form
    of its own crate defer to this one (mode/runtime-input)."""
    arm = c.arm
    if arm is None or c.dtype_enums:
        return False
    runtime = rule_data().runtime_variant
    if not arm.catch_all:
        named = {(r.enum, r.variant) for r in _inner_refs(arm.refs)}
        return any(runtime.match(v) and _has_other_variant(c, e, v) for e, v in named)
    named_by: dict[str, set[str]] = {}
    for o in c.others:
        for r in _inner_refs(o.refs):
            named_by.setdefault(r.enum, set()).add(r.variant)
    for enum, variants in named_by.items():
        d = c.catalog.resolve(enum, variants, c.path, c.crate)
        if d is None or any(runtime.match(v) for v in variants):
            continue
        if any(runtime.match(v) for v, _ in d.variants):
            return True
    return False


_OPTION_RESULT = {"Some", "None", "Ok", "Err"}


def _inner_refs(refs: list[VariantRef]):
    """The refs of a pattern past an Option or Result around them (`Some(X::Static(s))` -> X::Static)."""
    for r in refs:
        if r.variant in _OPTION_RESULT:
            yield from _inner_refs(r.sub or [])
        else:
            yield r


def _has_other_variant(c: Call, enum: str, variant: str) -> bool:
    d = c.catalog.resolve(enum, {variant}, c.path, c.crate)
    return d is not None and any(v != variant for v, _ in d.variants)


def input_kinds(c: Call) -> bool:
    """The catch-all of a match on the kinds of two or more operands at once (`match (&lhs.ty,
    &rhs.ty) { (Tensor, Tensor) => .., (ScalarNative(_), ScalarNative(_)) => .., _ =>
    panic!("BitwiseOr operation requires tensor or scalar inputs") }`): the arms dispatch over
    the combinations of kinds a valid model feeds the operator, so those the catch-all takes (a
    shape beside a tensor) are the model's choice the importer does not support. Each element
    must end in an operand's kind field (`mode.operand_kind`); a tuple naming an output, whose
    kind the importer infers itself, is exclude/inferred-output's, checked before."""
    arm = c.arm
    # One combination taken (`(Tensor, Tensor) => .., _ => panic!("Only tensor inputs are valid")`)
    # is what the operator's definition requires, validation; two or more are a dispatch.
    if arm is None or not arm.catch_all or c.dtype_enums or len(c.others) < 2:
        return False
    elements = _tuple_elements(c.site.scrutinee)
    if len(elements) < 2:
        return False
    data = rule_data()
    for element in elements:
        idents = _IDENT.findall(element)
        if not idents or not data.operand_kind.match(idents[-1]):
            return False
    # The arms name kinds of an enum of the tree and leave some: the catch-all takes real values.
    named: dict[str, set[str]] = {}
    for o in c.others:
        for r in _inner_refs(o.refs):
            named.setdefault(r.enum, set()).add(r.variant)
    for enum, variants in named.items():
        d = c.catalog.resolve(enum, variants, c.path, c.crate)
        if d is not None and any(v not in variants for v, _ in d.variants):
            return True
    return False


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _tuple_elements(scrutinee: str) -> list[str]:
    """The top-level elements of a tuple scrutinee (`(&a.ty, &b.ty)` -> [`&a.ty`, `&b.ty`]), [] when
    it is no tuple. One pass over the text."""
    text = scrutinee.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return []
    out, depth, start = [], 0, 1
    for i, ch in enumerate(text[1:-1], 1):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
            if depth < 0:
                return []  # `(a).f(b)`: the parentheses close before the end
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:-1])
    return [e for e in (e.strip() for e in out) if e] if len(out) > 1 else []

