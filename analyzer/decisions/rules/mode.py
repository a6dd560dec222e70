"""The unsupported-mode rules: the call rejects a setting or variant a user chose."""

from __future__ import annotations

import re

from analyzer.decisions.call import Call
from analyzer.decisions.data import rule_data


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
