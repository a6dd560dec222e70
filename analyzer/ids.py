"""Stable record ids.

An id is the first 16 hex digits of a SHA-256 over what makes a site the site it is, and nothing
that moves when unrelated code changes:

    crate, the items around the call inside its file (mod / impl / fn / macro), the macro,
    the match scrutinee, the arm pattern and the message.

Lines, columns, the source window and the file's path are left out, so inserting code above a site,
moving its function inside the file, or moving the file inside its crate keeps the id. When two
sites of one crate share all of that (the same arm copied into two files), the file path is added
for those sites; when they also share a file, their order inside the file is added. So two sites
never share an id, and a new look-alike elsewhere never takes an existing site's id.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Sequence


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def site_key(crate: str, item_path: str, macro: str, scrutinee: str, pattern: str, message: str) -> tuple[str, ...]:
    return (crate, item_path, macro, scrutinee, pattern, message)


def assign_ids(keys: Sequence[tuple[str, ...]], paths: Sequence[str], lines: Sequence[int]) -> list[str]:
    """Ids for sites given their keys, file paths and lines (all three lists aligned)."""
    by_key: dict[tuple, list[int]] = defaultdict(list)
    for i, k in enumerate(keys):
        by_key[k].append(i)
    ids = [""] * len(keys)
    for k, members in by_key.items():
        if len(members) == 1:
            ids[members[0]] = _digest(*k)
            continue
        by_file: dict[str, list[int]] = defaultdict(list)
        for i in members:
            by_file[paths[i]].append(i)
        for path, same in by_file.items():
            if len(same) == 1:
                ids[same[0]] = _digest(*k, path)
            else:
                for ordinal, i in enumerate(sorted(same, key=lambda j: lines[j])):
                    ids[i] = _digest(*k, path, str(ordinal))
    return ids
