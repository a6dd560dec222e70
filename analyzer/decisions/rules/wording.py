"""Exclusions read from the author's words: what should hold, what the kernel language demands."""

from __future__ import annotations

import re

from analyzer.decisions.call import Call
from analyzer.decisions.data import rule_data
from analyzer.decisions.rules.base import unimplemented_macro

# What unimplemented!/todo! print before the author's words.
_MACRO_PREFIX = re.compile(r"^not (?:yet )?implemented(?::\s*|$)")


def author_words(c: Call) -> str:
    """The call's message without what the macro prints before it."""
    return _MACRO_PREFIX.sub("", c.site.message, count=1).strip()


def stated_expectation(c: Call) -> bool:
    """The message says what should hold or should have happened (`unimplemented!("This should
    never be called since next_key_seed always returns None")`, `_ => panic!("Bool should be
    converted first.")`): the author states an expectation of the program's own values, so the
    call marks a path they hold unused, not a choice the library refuses, whatever the macro, the
    arms or the scrutinee. Not when the author's own words also say the thing is not supported,
    nor for an unimplemented!/todo! arm naming a dtype (`DType::Bool(BoolStore::Native) =>
    unimplemented!("Bool should be U8 or U32")`): there "should" is what the code wants of the
    user's dtype, and the code for the one named is not written."""
    if unimplemented_macro(c) and c.arm is not None and not c.arm.catch_all and c.dtype_enums:
        return False
    pats = rule_data()
    words = author_words(c)
    return pats.expectation.search(words) is not None and pats.unsupported.search(words) is None


def kernel_constant(c: Call) -> bool:
    """In a crate kernels are written against (the target's `audience.kernel_api`), the message
    demands a value known when the kernel is expanded (`index.constant().expect("Index must be
    constant")`): a rule of the kernel language, broken by the kernel's author in the kernel's code,
    not a dtype or setting a model's user picks."""
    return c.crate in c.profile.audience.kernel_api and rule_data().kernel_constant.search(c.site.message) is not None
