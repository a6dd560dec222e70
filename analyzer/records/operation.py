"""The operation a site belongs to (the coverage audit's row, the pages' family of related
errors), from the message and the items around the call."""

from __future__ import annotations

import re

_OPERATION = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)\s*:")
# The prefixes rustc puts before the text of `unimplemented!(..)` and `todo!(..)`.
STD_PREFIX = re.compile(r"^(?:not implemented|not yet implemented): ")

# Trait methods whose name says nothing about the operation: qualified with the impl's type.
_GENERIC_METHODS = {"from", "try_from", "into", "try_into", "fmt", "default", "new", "clone", "eq", "hash"}


def operation_of(message: str, function: str, in_macro: str, impl: str = "") -> str:
    """The operation a site belongs to: the message's prefix before `:`, else the function
    (`FloatDType::from` rather than `from` for a conversion impl)."""
    m = _OPERATION.match(STD_PREFIX.sub("", message))
    if m:
        return m.group(1)
    if function in _GENERIC_METHODS and impl:
        owner = impl.rsplit(" for ", 1)[-1].removeprefix("impl ").split("<")[0].strip()
        return f"{owner}::{function}"
    return function or in_macro.replace("macro_rules! ", "") or "?"
