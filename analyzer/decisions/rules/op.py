"""The unsupported-op rules: the call is what an operation does where it is not there."""

from __future__ import annotations

from analyzer.decisions.call import Call
from analyzer.decisions.data import rule_data
from analyzer.decisions.rules.base import unimplemented_macro
from analyzer.decisions.rules.mode import build_guard


def build_gate(c: Call) -> bool:
    """A statement a `#[cfg(..)]` attribute compiles in only for the builds that lack a feature or
    a capability, and that says so (`#[cfg(not(target_has_atomic = "32"))] panic!("Can't use
    deformable convolution backwards pass without atomics")`): in those builds it is what the
    operation does, so the operation is not there."""
    return c.site.branch == "cfg" and (unimplemented_macro(c) or c.says_unsupported or build_guard(c))


def unsupported_message(c: Call) -> bool:
    """The message says the operation is not supported; a function's name says which operation,
    as an explicit arm names its variant, so "can't <verb>" counts too (`Can't differentiate ..`)."""
    pats, message = rule_data(), c.site.message
    return c.says_unsupported or (bool(pats.variant_cannot.search(message))
                                  and not pats.transient_state.search(message))
