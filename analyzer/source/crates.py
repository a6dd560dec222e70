"""Which crate a file belongs to: one definition for every stage.

With the tree at hand, a file's crate is the deepest folder above it that holds a `Cargo.toml`
(`crate_of`). A record read without its tree (the published form) has only its path: then the
crate is the folder holding the first `src`, `tests`, `benches` or `examples` folder of the path,
else the file's own folder (`crate_from_path`), which gives the same name for the layouts cargo
uses (`crates/burn-x/src/tests/ops.rs` and `crates/burn-x/lib.rs` are both `burn-x`).
"""

from __future__ import annotations

import posixpath

_CRATE_FOLDERS = ("src", "tests", "benches", "examples")


def crates_of(paths: list[str], crate_roots: list[str]) -> dict[str, str]:
    """crate_of for many paths, worked out once per folder."""
    roots = set(crate_roots)
    by_dir: dict[str, str] = {}
    out = {}
    for p in paths:
        d = posixpath.dirname(p)
        if d not in by_dir:
            by_dir[d] = _crate_of(p, roots)  # every file of a folder has that folder's crate
        out[p] = by_dir[d]
    return out


def crate_of(path: str, crate_roots: list[str]) -> str:
    """The crate a file belongs to: the deepest folder above it holding a Cargo.toml."""
    return _crate_of(path, set(crate_roots))


def _crate_of(path: str, roots: set[str]) -> str:
    # The folders above the file, deepest first: as many steps as the path is deep, whatever
    # the number of crates in the tree.
    folder = posixpath.dirname(path)
    while folder:
        if folder in roots:
            return posixpath.basename(folder)
        folder = posixpath.dirname(folder)
    return path.split("/", 1)[0] if "/" in path else ""


def crate_from_path(path: str) -> str:
    """The crate of a file from its path alone (see the module's docstring)."""
    parts = path.split("/")
    for i in range(1, len(parts) - 1):
        if parts[i] in _CRATE_FOLDERS:
            return parts[i - 1]
    return parts[-2] if len(parts) > 1 else ""
