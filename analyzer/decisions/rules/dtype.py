"""The dtype-dispatch rules: the call's match or guard dispatches on a dtype."""

from __future__ import annotations

import re

from analyzer.decisions.call import Call, scrutinee_is_dtype, scrutinee_is_foreign_kind
from analyzer.decisions.data import rule_data
from analyzer.decisions.rules.base import unimplemented_macro


def scrutinee(c: Call) -> bool:
    return scrutinee_is_dtype(c.site.scrutinee)


# An arm whose pattern is one binding (`dtype`, `ref elem_type`, `x @ ..`), its guard after ` if `.
_BINDING_ARM = re.compile(r"^&?\s*(?:ref\s+)?(?:mut\s+)?([a-z_][A-Za-z0-9_]*)(?:\s*@[^|]*?)?(?:\s+if\s+(.*))?$", re.S)


def arm_bindings(c: Call) -> bool:
    """An arm binds the scrutinee to a name that says it is a dtype (`dtype if ..`, `elem_type
    =>`), or guards its binding with a dtype-kind predicate (`x if x.is_float()`): the match
    dispatches on a dtype, whatever the scrutinee is called."""
    ident = rule_data().scrutinee_ident
    predicate = rule_data().binding_predicate
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


def arm_variants(c: Call) -> bool:
    return bool(c.dtype_enums)


def foreign_kind(c: Call) -> bool:
    return scrutinee_is_foreign_kind(c.site.scrutinee, c.arms, c.crate, c.catalog, c.profile)


def foreign_variants(c: Call) -> bool:
    return c.foreign is not None


def element_formats(c: Call) -> bool:
    """The arms name pixel/element formats with a bit depth per channel (`Rgb8`, `L16`,
    `Rgba32F`) of one enum: each arm maps a format to per-dtype values."""
    return c.element_format_enum is not None


def guard_condition(c: Call) -> bool:
    """A guard whose condition tests a dtype (`x.dtype() != DType::F32`, `dtype.is_int()`, a
    `DType::` variant) and whose call says the dtype is not supported."""
    return _guard_says_unsupported(c) and _condition_tests_dtype(c)


def _condition_tests_dtype(c: Call) -> bool:
    cond = c.site.condition
    if scrutinee_is_dtype(cond):
        return True
    predicate = rule_data().binding_predicate
    if re.search(rf"\.\s*(?:{predicate})\s*\(\s*\)", cond):
        return True
    pats, kinds = rule_data(), c.profile.dtype_kinds
    for enum, variant in re.findall(r"\b([A-Z][A-Za-z0-9]*)\s*::\s*([A-Z][A-Za-z0-9]*)", cond):
        if pats.enum_name.match(enum) or (pats.kind_enum.match(enum) and variant.lower() in kinds):
            return True
    return False


def _guard_says_unsupported(c: Call) -> bool:
    return unimplemented_macro(c) or c.says_unsupported
