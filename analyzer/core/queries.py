"""Where the rule data (queries/*.scm, classifier.toml) lies: found by the package that ships it,
so the parse stage and the classifier read it without going through the pipeline."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from analyzer.core.errors import UserError


@cache
def queries_root():
    """The folder of rule data: `analyzer/queries` in an installed package, else the top-level
    `queries/` folder beside the source package (running from a checkout, where `analyzer/` is
    imported from the source tree and has no `queries` subpackage). The package is read from its
    folder on disk, as pip installs it: importlib.resources would cost every run its readers'
    imports."""
    package = Path(__file__).resolve().parents[1]  # analyzer/
    for root in (package / "queries", package.parent / "queries"):
        if (root / "panic_calls.scm").is_file():
            return root
    raise UserError("the rule data (queries/*.scm, classifier.toml) is missing from this installation; "
                    "reinstall burn-errors")
