"""Stable record ids.

An id is the first 16 hex digits of a SHA-256 over where a site stands, not over what it says:

    the crate, the items around the call inside its file (mod / impl / fn / macro), the match
    scrutinee, and the arm's slot: `_` for a catch-all arm (`_`, `dtype`, `other` alike), else the
    arm's pattern without its guard.

So the id survives what the record reports as a change: an edited message, `panic!` becoming
`unimplemented!`, a new arm that handles a dtype (the rejected dtypes change), a renamed catch-all
binding or a new guard (the arm changes). Lines, columns, the source window and the file's path
are left out too, so inserting code above a site, moving its function inside the file, or moving
the file inside its crate keeps the id.

What gives a site a new id: renaming or moving its function to another impl or module, renaming
its crate, rewriting the scrutinee, or changing the first alternative of an explicit arm pattern
(`DType::QFloat(_)` to `DType::Bool(_)`): the old site is then removed and a new one added.
Widening an arm (`A | B` to `A | B | C`) keeps the id, so the diff reports it as changed.

Two sites never share an id. When sites of one crate share all of the above (the same macro body
in two files, a cfg-gated copy of a module), the first of them, by folder depth, then path, then
line, keeps the plain id, and each other one adds its file path (and its order in the file when
one file holds several). So a copy added in a deeper folder or later file never takes or changes
the original's id.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Sequence


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def arm_slot(pattern: str, catch_all: bool) -> str:
    """The arm's part of the id: `_` for any catch-all, else the first alternative of the pattern
    without its guard (so adding alternatives to an arm keeps its id)."""
    if catch_all:
        return "_"
    return _first_alternative(pattern.split(" if ", 1)[0]).strip()


def _first_alternative(pattern: str) -> str:
    depth = 0
    for i, ch in enumerate(pattern):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "|" and depth == 0:
            return pattern[:i]
    return pattern


def site_key(crate: str, item_path: str, scrutinee: str, slot: str) -> tuple[str, ...]:
    return (crate, item_path, scrutinee, slot)


def assign_ids(keys: Sequence[tuple[str, ...]], paths: Sequence[str], lines: Sequence[int]) -> list[str]:
    """Ids for sites given their keys, file paths and lines (all three lists aligned)."""
    by_key: dict[tuple, list[int]] = defaultdict(list)
    for i, k in enumerate(keys):
        by_key[k].append(i)
    ids = [""] * len(keys)
    for k, members in by_key.items():
        first = min(members, key=lambda j: (paths[j].count("/"), paths[j], lines[j]))
        ids[first] = _digest(*k)
        by_file: dict[str, list[int]] = defaultdict(list)
        for i in members:
            by_file[paths[i]].append(i)
        for path, same in by_file.items():
            same.sort(key=lambda j: lines[j])
            for ordinal, i in enumerate(same):
                if i != first:
                    ids[i] = _digest(*k, path) if len(same) == 1 else _digest(*k, path, str(ordinal))
    return ids
