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

A call that is a function's whole body (`fn q_slice(..) { unimplemented!() }`) is keyed by the
crate, the items around it and `body`; a call that is the body of a plain `if`/`else` branch by the
crate, the items, `guard` and the branch with its condition.

Two refactors that do not touch the error keep the id too: an impl's self type is taken without
its generic parameters (`impl Ops<Self> for Backend<E, I, Q>` and `impl Ops<Self> for Backend` are
one impl; the trait's own parameters stay, as `From<f32>` and `From<f64>` are two impls), and the
paths in the arm's pattern are taken by their last segment (`OldEnum::V` renamed `NewEnum::V`).

What gives a site a new id: renaming or moving its function to another impl or module, renaming
its crate, rewriting the scrutinee, or changing the first alternative of an explicit arm pattern
(`DType::QFloat(_)` to `DType::Bool(_)`). Widening an arm (`A | B` to `A | B | C`) keeps the id.
A new structural id is not the end of a record's lineage: `extract --previous` and `diff` match
the earlier record to the site by other means (analyzer/lineage/) and keep its id.

Two sites never share an id. When sites of one crate share all of the above (the same macro body
in two files, a cfg-gated copy of a module), the first of them, by folder depth, then path, then
line, keeps the plain id, and each other one adds its file path (and its order in the file when
one file holds several). So a copy added in a deeper folder or later file never takes or changes
the original's id. Which site holds the plain id depends on which others exist (when the first
goes, the next takes it), so each record also carries both ids it could hold, its key's plain id
and its file-bound one (`analysis.alternateIds`), which depend on nothing else: the lineage's `id`
tier looks an earlier id up in them and confirms the match (same file, or the same function and
message), so a record never moves to the copy that inherited its id.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence

# Where one item of an item path starts (`fn`, `mod`, `impl`, `trait`, `macro_rules!`): the path
# joins items with `::`, and a type inside an impl header may hold `::` too.
_ITEM_START = re.compile(r"::(?=(?:fn|mod|impl|trait|macro_rules!) )")
# A path in a pattern (`a::B::C`): kept as its last segment.
_PATH = re.compile(r"\b(?:[A-Za-z_][A-Za-z0-9_]*::)+([A-Za-z_][A-Za-z0-9_]*)")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def arm_slot(pattern: str, catch_all: bool) -> str:
    """The arm's part of the id: `_` for any catch-all, else the first alternative of the pattern
    without its guard (so adding alternatives to an arm keeps its id)."""
    if catch_all:
        return "_"
    return _PATH.sub(r"\1", _first_alternative(pattern.split(" if ", 1)[0]).strip())


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
    return (crate, structural_path(item_path), scrutinee, slot)


def position_key(crate: str, item_path: str, context: str, scrutinee: str, pattern: str, catch_all: bool,
                 branch: str = "") -> tuple[str, ...]:
    """The key of a site in any position. An arm's is `site_key`; a function's whole body is
    (crate, items, `body`), a closure's (crate, items, `closure`); a guard is (crate, items,
    `guard`, the branch and the condition, paths by their last segment). Keys of the four shapes
    never coincide."""
    if context in ("body", "closure"):
        return (crate, structural_path(item_path), context)
    if context == "guard":
        return (crate, structural_path(item_path), "guard", branch + " " + _PATH.sub(r"\1", pattern))
    return site_key(crate, item_path, scrutinee, arm_slot(pattern, catch_all))


def structural_path(item_path: str) -> str:
    """The item path with each impl's self type stripped of its generic parameters."""
    return "::".join(_impl_without_generics(part) if part.startswith("impl ") else part
                     for part in _ITEM_START.split(item_path))


def _impl_without_generics(header: str) -> str:
    depth = 0
    for i, ch in enumerate(header):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0 and header.startswith(" for ", i):
            return header[:i + 5] + _strip_angles(header[i + 5:])
    return "impl " + _strip_angles(header[5:])


def _strip_angles(text: str) -> str:
    """`Backend<R, F>` -> `Backend` (every `<...>`, nested too; `->` is not a bracket)."""
    out: list[str] = []
    depth = 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">" and depth > 0 and text[i - 1:i] != "-":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out).strip()


def assign(keys: Sequence[tuple[str, ...]], paths: Sequence[str],
           lines: Sequence[int]) -> tuple[list[str], list[list[str]]]:
    """(ids, alternates): each site's id, and the ids it carries at a revision where the other
    sites of its key are otherwise (`analysis.alternateIds`): its key's plain id and its
    file-bound one. Which of them is the id depends on the other sites; the alternates do not,
    so the lineage's `id` tier finds a site by the id it had however its key's group changed."""
    by_key: dict[tuple, list[int]] = defaultdict(list)
    for i, k in enumerate(keys):
        by_key[k].append(i)
    ids = [""] * len(keys)
    alternates: list[list[str]] = [[] for _ in keys]
    for k, members in by_key.items():
        plain = _digest(*k)
        first = min(members, key=lambda j: (paths[j].count("/"), paths[j], lines[j]))
        by_file: dict[str, list[int]] = defaultdict(list)
        for i in members:
            by_file[paths[i]].append(i)
        for path, same in by_file.items():
            same.sort(key=lambda j: lines[j])
            for ordinal, i in enumerate(same):
                bound = _digest(*k, path) if len(same) == 1 else _digest(*k, path, str(ordinal))
                ids[i] = plain if i == first else bound
                # The first of several in a file had the file-bound id alone before the others came.
                alternates[i] = list(dict.fromkeys([plain, bound, *([_digest(*k, path)] if ordinal == 0 else [])]))
    return ids, alternates
