"""The one place that names the default target. Edit PINNED_SHA to move the pin."""

DEFAULT_REPO_URL = "https://github.com/tracel-ai/burn"
DEFAULT_REPO_NAME = "tracel-ai/burn"
PINNED_SHA = "d16f7ba2ed0d41408189384044cc886fb4c8f957"

SCHEMA_VERSION = 2
# Lines of source shown on each side of the panic line in `sourceCode`.
WINDOW_RADIUS = 18
# The three macros a site can be; `unreachable!` is seen (for the audit) but never a record.
PANIC_MACROS = ("panic", "unimplemented", "todo")

# What `diff --fail-on` accepts; `any` is added, changed or removed (a move never fails). Kept
# here so the CLI does not import the diff engine to list them.
FAIL_ON = ("added", "changed", "removed", "any", "none")
