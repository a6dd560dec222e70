"""The rules hash: what decides what is found, hashed without importing the parser or the schema
(the cached path of `extract` stays light)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=None)
def rules_hash() -> str:
    """Hash of the query/rule data and of the code that applies it. Part of every cache key and
    of the manifest."""
    h = hashlib.sha256()
    queries = resources.files("analyzer.queries")
    for entry in sorted(queries.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".scm", ".toml")):
            h.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    pkg = resources.files("analyzer")
    for module in ("parse.py", "messages.py", "classify.py", "ids.py", "record.py", "extract.py"):
        h.update(module.encode() + b"\0" + pkg.joinpath(module).read_bytes() + b"\0")
    return h.hexdigest()[:16]
