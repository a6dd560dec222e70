"""Settings of the tool itself. What belongs to the analysed repository (its default URL and
pinned commit, its conventions) is in its target profile, analyzer/profiles/<target>.toml."""

from typing import Final

SCHEMA_VERSION: Final = 2
# Lines of source shown on each side of the panic line in `sourceCode`.
WINDOW_RADIUS = 18
# The three macros a site can be; `unreachable!` is seen (for the audit) but never a record.
PANIC_MACROS = ("panic", "unimplemented", "todo")

# What `diff --fail-on` accepts; `any` is added, changed or removed (a move never fails). Kept
# here so the CLI does not import the diff engine to list them.
FAIL_ON = ("added", "changed", "removed", "any", "none")
