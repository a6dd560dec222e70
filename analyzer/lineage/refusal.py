"""The last lineage tier: the same refusal, reworded as code is reorganised.

Three rewrites leave a refusal's id, file, function and exact message all changed, so no earlier
tier finds it: a function that served several node types split into one function per node type
in new files, each message gaining a clause (`Conv: padding {:?} is not supported` becomes
`Conv1d: padding {:?} is not supported, only Valid is`); a catch-all narrowed into explicit arms,
its message kept in spirit (`_ => panic!("unsupported padding mode")` becomes
`Reflect => panic!("reflect padding mode is not supported")`); arms rewritten as a closure
(`.unwrap_or_else(|| unimplemented!(..))`).

What stays is what the refusal says. An earlier record continues a new site of the same crate
when every distinctive word of its message (not the words every refusal uses, nor placeholders,
so `{:?}` and `{pads:?}` read alike) is in the new message, a word standing for a node type
matching its numbered forms (`conv` in `conv1d`), and the two stand in the same function, or in
functions one of whose names holds the other's (`conv_config`, `conv1d_config`); a site whose
function is unrelated needs more such words. In the same function one word may be replaced when
three others stay (`ReduceMean: reducing on multiple dimensions` fixed to `ReduceSum: ...`), and
a module moved to another crate is followed when the function is the same. Each earlier record
and each site is taken once, best pairs first (every word kept and the closest function); when
two sites tie for a record, or two records for a site, the tie is broken by the lines around the
call, else nothing is taken: a split that gives several equal heirs hands the id to none rather
than guess.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections import defaultdict
from collections.abc import Callable, Sequence

from analyzer.records.model import RecordLine

# Words any refusal uses: they say that something is refused, not what.
_COMMON = frozenset("""
a an the is are be been not no yet only for of on in at to by with as or and but this that these
those it its implemented implement supported support supports unsupported available allowed
possible currently now here there than other others type types value values got found expected
given use used using please cannot can can't must should does do doesn't don't
""".split())
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_WORD = re.compile(r"[a-z][a-z0-9]*")

MIN_WORDS_SAME_FUNCTION = 1
MIN_WORDS_RELATED_FUNCTION = 2
MIN_WORDS_ANY_FUNCTION = 4


def words(message: str) -> frozenset[str]:
    """The distinctive words of a message: lower-cased, placeholders and common words left out."""
    text = _PLACEHOLDER.sub(" ", message.lower())
    return frozenset(w for w in _WORD.findall(text) if w not in _COMMON and len(w) > 2)


def _has(word: str, new_words: frozenset[str]) -> bool:
    """Whether a word, or a numbered form of it, is among the new words (one look-up each, kept
    linear however long the messages)."""
    return word in new_words or word in _stems_of(new_words)


@functools.lru_cache(maxsize=4096)
def _stems_of(new_words: frozenset[str]) -> frozenset[str]:
    return frozenset(_stem(v) for v in new_words if _stem(v) != v)


def _kept(old: frozenset[str], new: frozenset[str]) -> bool:
    return bool(old) and all(_has(w, new) for w in old)


def _parts(name: str) -> set[str]:
    """A function name's words with their numbered forms reduced (`conv1d_config` -> conv, config)."""
    return {re.sub(r"[0-9]+d?$", "", w) for w in name.lower().split("_") if w}


def relation(old: str, new: str) -> int:
    """0: the same function; 1: one name's words hold the other's (a split per node type, a
    rename); 2: unrelated."""
    if old == new:
        return 0
    a, b = _parts(old) - {""}, _parts(new) - {""}
    if a and b and (a <= b or b <= a):
        return 1
    return 2


_MIN_WORDS = (MIN_WORDS_SAME_FUNCTION, MIN_WORDS_RELATED_FUNCTION, MIN_WORDS_ANY_FUNCTION)


def _closeness(a: RecordLine, b: RecordLine) -> float:
    lines_a = [s.strip() for s in a.record.sourceCode.split("\n")]
    lines_b = [s.strip() for s in b.record.sourceCode.split("\n")]
    return difflib.SequenceMatcher(None, lines_a, lines_b, autojunk=False).ratio()


def _rank(old: RecordLine, new: RecordLine, ow: frozenset[str], nw: frozenset[str],
          crate_of: Callable[[RecordLine], str]) -> tuple[int, int, int, int] | None:
    """How close a site is to being the earlier record's refusal, or None when it is not it.
    Every distinctive word kept (as many as the functions' relation asks); in the same function,
    one word may be replaced when three others are kept (a node type named right: `ReduceMean`
    to `ReduceSum`). In another crate (a module moved between crates), only the same function."""
    rel = relation(old.facts.function, new.facts.function)
    lost = sum(1 for w in ow if not _has(w, nw))
    other_crate = crate_of(old) != crate_of(new)
    if other_crate and (rel != 0 or len(ow) < MIN_WORDS_RELATED_FUNCTION):
        return None
    if len(ow) - lost < _MIN_WORDS[rel]:
        return None
    if lost and not (rel == 0 and lost == 1 and len(ow) - lost >= 3):
        return None
    return (int(other_crate), rel, lost, len(nw) - (len(ow) - lost))


def _stem(word: str) -> str:
    return re.sub(r"[0-9]+d?$", "", word) or word


def pairs(previous: Sequence[RecordLine], current: Sequence[RecordLine], prev_left: set[int],
          cur_left: set[int], crate_of: Callable[[RecordLine], str]) -> list[tuple[int, int]]:
    """(earlier, new) index pairs of the same refusal among those left, one-to-one. The sites are
    indexed by word (each word also under its form without a number), so an earlier record meets
    only the sites that hold its rarest word."""
    index: dict[str, set[int]] = defaultdict(set)
    cur_words: dict[int, frozenset[str]] = {}
    for c in sorted(cur_left):
        cur_words[c] = words(current[c].record.errorMessage)
        for v in cur_words[c]:
            index[v].add(c)
            index[_stem(v)].add(c)
    # Per earlier record, its candidates with a rank: (another crate, function relation, words
    # lost, words the new message added); lower is closer.
    scored: list[tuple[tuple[int, int, int, int], int, int]] = []
    for p in sorted(prev_left):
        old = previous[p]
        ow = words(old.record.errorMessage)
        if len(ow) < MIN_WORDS_SAME_FUNCTION:
            continue
        # A site loses at most one of the words, so it holds one of the two rarest.
        rarest = sorted(ow, key=lambda w: (len(index.get(w, ())), w))[:2]
        seen = set().union(*(index.get(w, set()) for w in rarest))
        for c in sorted(seen):
            rank = _rank(old, current[c], ow, cur_words[c], crate_of)
            if rank is not None:
                scored.append((rank, p, c))
    Rank = tuple[int, int, int, int]
    best_of_prev: dict[int, Rank] = {}
    best_of_cur: dict[int, Rank] = {}
    for rank, p, c in scored:
        best_of_prev[p] = min(best_of_prev.get(p, rank), rank)
        best_of_cur[c] = min(best_of_cur.get(c, rank), rank)
    # Only pairs that are the best for both sides; ties broken by the lines around the call.
    top: dict[int, list[int]] = defaultdict(list)
    for rank, p, c in scored:
        if rank == best_of_prev[p] and rank == best_of_cur[c]:
            top[p].append(c)
    by_cur: dict[int, list[int]] = defaultdict(list)
    for p, cs in top.items():
        heir = _one(previous[p], cs, current)
        if heir is not None:
            by_cur[heir].append(p)
    out = []
    for c, ps in by_cur.items():
        source = _one(current[c], ps, previous)
        if source is not None:
            out.append((source, c))
    return sorted(out)


def _one(anchor: RecordLine, candidates: list[int], lines: Sequence[RecordLine]) -> int | None:
    """The one candidate whose lines around the call are closest to the anchor's; None on a tie."""
    if len(candidates) == 1:
        return candidates[0]
    ranked = sorted(((_closeness(anchor, lines[i]), i) for i in candidates), reverse=True)
    if ranked[0][0] == ranked[1][0]:
        return None
    return ranked[0][1]
