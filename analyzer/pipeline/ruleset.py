"""The rules hash: what decides what is found, hashed without importing the parser or the schema
(the cached path of `extract` stays light)."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from pathlib import Path

from analyzer.core.errors import UserError


@cache
def queries_root():
    """The folder of rule data: `analyzer.queries` in an installed package, else the top-level
    `queries/` folder beside the source package (running from a checkout, where `analyzer/` is
    imported from the source tree and has no `queries` subpackage)."""
    try:
        root = resources.files("analyzer.queries")
        if root.joinpath("panic_calls.scm").is_file():
            return root
    except ModuleNotFoundError:
        pass
    source = Path(__file__).resolve().parents[2] / "queries"
    if (source / "panic_calls.scm").is_file():
        return source
    raise UserError("the rule data (queries/*.scm, classifier.toml) is missing from this installation; "
                    "reinstall burn-errors")


# The modules whose code decides what is found: the parse facts (and which bytes are parsed), the
# messages, the classifier and its rule list (classify.RULE_ORDER), the ids, the record shape and
# the extraction.
HASHED_MODULES = ("facts/prefilter.py", "facts/regions.py", "facts/parse.py", "facts/syntax.py", "facts/sites.py",
                  "facts/patterns.py", "facts/enums.py", "facts/tokentrees.py", "facts/code.py", "facts/model.py",
                  "facts/messages.py",
                  "decisions/classify.py", "records/ids.py", "records/model.py", "records/build.py",
                  "records/operation.py", "pipeline/extract.py")


@cache
def rules_hash() -> str:
    """Hash of the query/rule data and of the code that applies it. Part of every cache key and
    of the manifest."""
    h = hashlib.sha256()
    queries = queries_root()
    for entry in sorted(queries.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".scm", ".toml")):
            h.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    pkg = resources.files("analyzer")
    for module in HASHED_MODULES:
        h.update(module.encode() + b"\0" + pkg.joinpath(module).read_bytes() + b"\0")
    return h.hexdigest()[:16]
