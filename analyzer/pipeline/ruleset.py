"""The rules hash: what decides what is found, hashed without importing the parser or the schema
(the cached path of `extract` stays light)."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from analyzer.core.queries import queries_root


# The modules whose code decides what is found: the parse facts (and which bytes are parsed), the
# messages, the classifier and its rule registry, the ids, the record shape and the extraction.
# Whole stage folders are named by a glob, so a module added to them is hashed without a list to
# keep up to date.
HASHED_MODULES = ("facts/*.py", "decisions/*.py", "decisions/rules/*.py", "profiles/*.py", "records/ids.py",
                  "records/model.py", "records/build.py", "records/operation.py", "records/macro_lists.py",
                  "pipeline/extract.py")


def hashed_files() -> list[str]:
    """The package-relative paths HASHED_MODULES names, sorted."""
    root = Path(__file__).resolve().parents[1]
    return sorted({p.relative_to(root).as_posix() for pattern in HASHED_MODULES for p in root.glob(pattern)})


def rules_hash(profile=None) -> str:
    """Hash of the query/rule data, of the code that applies it and of the target profile
    (`profile`, else the current one: its conventions decide what is found and what records
    say). Part of every cache key and of the manifest."""
    from analyzer.profiles import current
    return _rules_hash((profile or current()).digest)


@cache
def _rules_hash(profile_digest: str) -> str:
    h = hashlib.sha256(b"profile\0" + profile_digest.encode() + b"\0")
    queries = queries_root()
    for entry in sorted(queries.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".scm", ".toml")):
            h.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    pkg = Path(__file__).resolve().parents[1]
    for module in hashed_files():
        h.update(module.encode() + b"\0" + pkg.joinpath(module).read_bytes() + b"\0")
    return h.hexdigest()[:16]
