"""Lineage: which earlier record each site found now continues, so a site keeps its id.

`link(previous, current)` matches earlier records (any form: the tool's records, or published
envelopes without `analysis`) to the records of a new extraction, one-to-one, in tiers; each tier
sees only what the earlier tiers left unmatched:

- `id`       the same id (the structural id of ids.py or one of its alternates, or a published id
             that happens to agree), confirmed: the same file, else the same function and message;
             sites sharing a key in one file pair by content first, never by a bare id;
- `history`  the earlier record's `filePath:lineNumber` followed through git from its
             `analyzedSha` to the new revision, as `git log -L` would: renamed files, lines added
             or removed above; a rewritten stretch is aligned with what replaced it by message,
             and after the key tiers below, one record left in it pairs with the one site left in
             what replaced it (needs the earlier commit in the repository; only the files that
             hold earlier records are diffed, see gitdiff.file_changes; a file renamed in one of the
             commits between and rewritten later is followed too, see gitdiff.renamed_on_the_way);
- `function` the same crate, function and message, unique among the unmatched on both sides;
- `message`  the same file and message, unique on both sides; then the same crate and message;
- `function` again, tree-wide: the same function and message, unique in each tree (a crate renamed
             or split, its files rewritten on the way, so git's rename detection misses them);
- `function` for a renamed function: the same crate, message, macro and arm, in a function whose
             name holds the earlier one's, unique on both sides;
- `window`   for a moved body: the same message, macro and lines around the call (paths by their
             last segment), anywhere in the tree; several of one key pair in order;
- `window`   the most similar source window within the same file, then the same crate: the lines
             around the call, the whole window and the message, above a threshold, best pairs first;
- then `function` and `message` once more over what is left (a key two sites shared on each side
  may be unique once the windows paired one of them);
- `message`  last, the same refusal reworded (refusal.py): the same crate, a message that keeps
             every distinctive word of the earlier one (a clause added, a node type numbered), in
             the same or a related function (a function split per node type, a catch-all
             narrowed into arms, arms rewritten as a closure); ties give nothing.

A record read without `analysis` still matches: its crate comes from its path and its function from
its source window (`RecordLine.facts`), and the new records are keyed the same way for it.

Every tier indexes by key, so the work is linear in the records; the window tier compares pairs
only inside one file or crate, and skips buckets too big to compare pair by pair.

`carry.carry_over(previous, current, lineage, ...)` then gives each matched site the earlier
record's id, slug and first-seen revision, and, while its content is unchanged
(record.content_changes), the rest of the record as it was published (annotations, tags, dates).
`diff` uses `link` the same way (base = previous, head = new).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from functools import lru_cache
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from analyzer.lineage.published import Derived, RecordsAt, derive_content
from analyzer.lineage.gitdiff import FileChange, file_changes, follow_line, renamed_on_the_way, rewritten
from analyzer.records.ids import arm_slot
from analyzer.records.model import RecordLine, function_from_window

if TYPE_CHECKING:
    from analyzer.decisions.classify import DtypeCatalog
    from analyzer.profiles.run import Run
    from analyzer.source.repository import GitRepository

TIERS = ("id", "history", "function", "message", "window")

# Window tier: a pair scores (0..1) from the lines around the call, the message and the whole
# window; below this it is no match. Buckets with more pairs than WINDOW_MAX_PAIRS are skipped.
WINDOW_THRESHOLD = 0.6
WINDOW_MAX_PAIRS = 2500
CORE_RADIUS = 3  # lines each side of the call that make its "core"


@dataclass(frozen=True)
class Link:
    previous: int  # index into the earlier records
    current: int  # index into the new records
    tier: str  # one of TIERS


@dataclass
class Lineage:
    """The outcome of `link`: the matched pairs, and the earlier records not found."""

    links: list[Link]
    lost: list[int]  # indexes of earlier records that matched no site
    new: list[int]  # indexes of new records that matched no earlier record
    # Earlier records read without analysis: how their content became known (published.py)
    derived: Derived = field(default_factory=Derived)

    def counts(self) -> dict[str, int]:
        out = {t: 0 for t in TIERS}
        for k in self.links:
            out[k.tier] += 1
        out["new"] = len(self.new)
        out["notFound"] = len(self.lost)
        return out

    def of_current(self) -> dict[int, Link]:
        return {k.current: k for k in self.links}


@dataclass
class _State:
    previous: Sequence[RecordLine]
    current: Sequence[RecordLine]
    prev_left: set[int] = field(default_factory=set)
    cur_left: set[int] = field(default_factory=set)
    links: list[Link] = field(default_factory=list)
    # Rewritten stretches the history tier saw: (earlier records in it, new sites in what replaced it)
    stretches: list[tuple[list[int], list[int]]] = field(default_factory=list)

    def take(self, p: int, c: int, tier: str) -> None:
        self.prev_left.discard(p)
        self.cur_left.discard(c)
        self.links.append(Link(p, c, tier))


def link(previous: Sequence[RecordLine], current: Sequence[RecordLine], *, run: Run,
         repo: GitRepository | None = None, sha: str | None = None, records_at: RecordsAt | None = None,
         catalog: DtypeCatalog | None = None) -> Lineage:
    """Match earlier records to new ones, one-to-one, tier by tier (see the module's docstring).
    `repo` and `sha` (the new revision) enable the history tier. Earlier records read without
    analysis first get one derived (published.py: `records_at`, the tool's records at a commit,
    and `catalog`, the new revision's dtype enums, serve it, read under `run`'s target)."""
    derived = derive_content(previous, run, records_at, catalog)
    st = _State(previous, current, set(range(len(previous))), set(range(len(current))))
    _by_id(st)
    if repo is not None and sha is not None and repo.try_resolve(sha) is not None:
        _by_history(st, repo, sha)
    _by_keys(st)
    _stretch_leftovers(st)
    _by_renamed_function(st)
    _by_body(st)
    _by_window(st, lambda r: r.record.filePath)
    _by_window(st, lambda r: r.facts.crate)
    # Once the windows have paired some, a key shared by two sites on each side may be left with
    # one on each: unique now, so the key tiers look again at what is left.
    _by_keys(st)
    _by_refusal(st)
    return Lineage(links=sorted(st.links, key=lambda k: k.current), lost=sorted(st.prev_left),
                   new=sorted(st.cur_left), derived=derived)


# -- tier a: the same id ----------------------------------------------------------------------

def _by_id(st: _State) -> None:
    """An earlier record's id looked up in the new sites' ids and alternate ids (records/ids.py),
    and taken only when the match is confirmed: in the same file, else the same function and
    message. An id alone is not enough: when the first of several sites sharing a key goes, the
    next takes the plain id, and a record linked by it alone would land on another error."""
    held_prev, held_cur = _by_content_among_siblings(st)
    by_id: dict[str, list[int]] = defaultdict(list)
    by_alternate: dict[str, list[int]] = defaultdict(list)
    for c in st.cur_left - held_cur:
        r = st.current[c]
        by_id[r.record.id].append(c)
        for rid in r.facts.alternateIds:
            by_alternate[rid].append(c)

    def candidates(p: int, index: dict[str, list[int]], confirm: Callable[[RecordLine, RecordLine], bool]) -> None:
        old = st.previous[p]
        found = [c for c in dict.fromkeys([*by_id.get(old.record.id, []), *index.get(old.record.id, [])])
                 if c in st.cur_left and confirm(old, st.current[c])]
        if len(found) == 1:
            st.take(p, found[0], "id")

    for p in sorted(st.prev_left - held_prev):
        candidates(p, by_alternate, lambda a, b: a.record.filePath == b.record.filePath)
    for p in sorted(st.prev_left - held_prev):
        candidates(p, {}, _same_function_and_message)
    for p in sorted(st.prev_left - held_prev):
        candidates(p, by_alternate, _same_function_and_message)


def _sibling_key(r: RecordLine) -> tuple[str, str] | None:
    """(the plain id of the site's structural key, its file), or None for a record without ids."""
    ids = r.facts.alternateIds
    return (ids[0], r.record.filePath) if ids else None


def _content(r: RecordLine) -> tuple[Hashable, ...]:
    a = r.facts
    return (r.record.errorMessage, a.macro, a.scrutinee, a.pattern, _body(r))


def _by_content_among_siblings(st: _State) -> tuple[set[int], set[int]]:
    """Sites that share a structural key in one file are told apart by their order in the file
    (records/ids.py), so when one of them stops being a record the ids of those after it shift,
    and a bare id match would hand a continuing site the id of the sibling that left. Within such
    a group (several on either side, in the same file on both), the earlier records and the new
    sites pair by content first: the same message, macro, scrutinee, arm and lines around the
    call, as many on both sides, in line order. Returns the group members left unpaired (earlier,
    new): no bare id decides them; the history, key and window tiers do, and an earlier record
    none of them pairs is dropped."""
    prev_in: dict[tuple[str, str], list[int]] = defaultdict(list)
    cur_in: dict[tuple[str, str], list[int]] = defaultdict(list)
    for p in st.prev_left:
        if (g := _sibling_key(st.previous[p])) is not None:
            prev_in[g].append(p)
    for c in st.cur_left:
        if (g := _sibling_key(st.current[c])) is not None:
            cur_in[g].append(c)
    held_prev: set[int] = set()
    held_cur: set[int] = set()
    for g in sorted(prev_in.keys() & cur_in.keys()):
        ps, cs = prev_in[g], cur_in[g]
        if len(ps) == 1 and len(cs) == 1:
            continue  # a site alone in its file: its id does not hang on an order
        prev_by: dict[Hashable, list[int]] = defaultdict(list)
        cur_by: dict[Hashable, list[int]] = defaultdict(list)
        for p in sorted(ps, key=lambda i: st.previous[i].record.lineNumber):
            prev_by[_content(st.previous[p])].append(p)
        for c in sorted(cs, key=lambda i: st.current[i].record.lineNumber):
            cur_by[_content(st.current[c])].append(c)
        for k, same in prev_by.items():
            if len(same) == len(cur_by.get(k, ())):
                for p, c in zip(same, cur_by[k]):
                    st.take(p, c, "id")
        held_prev.update(p for p in ps if p in st.prev_left)
        held_cur.update(c for c in cs if c in st.cur_left)
    return held_prev, held_cur


def _same_function_and_message(old: RecordLine, new: RecordLine) -> bool:
    if old.record.errorMessage != new.record.errorMessage:
        return False
    return old.facts.function in (new.facts.function, function_from_window(new.record))


# -- tier b: the line followed through git history --------------------------------------------

def _by_history(st: _State, repo: GitRepository, sha: str) -> None:
    by_sha: dict[str, list[int]] = defaultdict(list)
    for p in st.prev_left:
        by_sha[st.previous[p].record.analyzedSha].append(p)
    at: dict[tuple[str, int], list[int]] = defaultdict(list)
    by_file: dict[str, list[int]] = defaultdict(list)
    for c in st.cur_left:
        r = st.current[c].record
        at[(r.filePath, r.lineNumber)].append(c)
        by_file[r.filePath].append(c)
    for old_sha, members in sorted(by_sha.items()):
        if old_sha == sha:
            changes: dict[str, FileChange] = {}
        elif repo.try_resolve(old_sha) is None:
            continue  # the earlier commit is not in this repository: other tiers decide
        else:
            changes = file_changes(repo, old_sha, sha, {st.previous[p].record.filePath for p in members})
            changes.update(renamed_on_the_way(repo, old_sha, sha, changes, set(by_file)))
        stretches: dict[tuple[str, int, int], list[int]] = defaultdict(list)
        for p in sorted(members, key=lambda i: (st.previous[i].record.filePath, st.previous[i].record.lineNumber)):
            r = st.previous[p].record
            change = changes.get(r.filePath)
            spot = follow_line(change, r.filePath, r.lineNumber)
            if spot is None:
                continue
            path, first, last = spot
            if rewritten(change, r.lineNumber):
                # A rewritten line may now hold another call (git aligns changed lines by
                # position): the stretch is aligned by message, not by place.
                stretches[spot].append(p)
                continue
            found = [c for c in at.get((path, first), []) if c in st.cur_left]
            if len(found) == 1:
                st.take(p, found[0], "history")
        for (path, first, last), ps in stretches.items():
            inside = [c for c in by_file.get(path, []) if first <= st.current[c].record.lineNumber <= last]
            _align_stretch(st, ps, sorted(inside, key=lambda c: st.current[c].record.lineNumber))


def _align_stretch(st: _State, ps: list[int], cs: list[int]) -> None:
    """Earlier records whose lines fall in one rewritten stretch, and the new sites in what
    replaced it: paired in order, message by message, when each message has as many on both sides
    (as a line diff aligns them). The stretch is kept for _stretch_leftovers."""
    by_message: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for p in ps:
        by_message[st.previous[p].record.errorMessage][0].append(p)
    for c in cs:
        if c in st.cur_left:
            by_message[st.current[c].record.errorMessage][1].append(c)
    for old, new in by_message.values():
        if old and len(old) == len(new):
            for p, c in zip(old, new):
                st.take(p, c, "history")
    st.stretches.append((ps, cs))


def _stretch_leftovers(st: _State) -> None:
    """After the key tiers: a rewritten stretch with one earlier record and one new site still
    unmatched in it pairs them (git aligned those lines; the call was rewritten, message too)."""
    for ps, cs in st.stretches:
        left_p = [p for p in ps if p in st.prev_left]
        left_c = [c for c in cs if c in st.cur_left]
        if len(left_p) == 1 and len(left_c) == 1 and same_error(st.previous[left_p[0]], st.current[left_c[0]]):
            st.take(left_p[0], left_c[0], "history")


# -- the same error, or another one in its place ----------------------------------------------

# Without an arm pattern on either side (a record read without analysis), messages this alike
# still tell an edited message from another error.
SAME_MESSAGE_RATIO = 0.8
_BINDING = re.compile(r"[a-z_][A-Za-z0-9_]*")


def same_error(old: RecordLine, new: RecordLine) -> bool:
    """Whether a call found where an earlier one stood (a rewritten line, a similar window) is
    that error edited rather than another error in its place: the same message; else the same
    macro and the same arm (its slot as the id takes it: a catch-all, or the first alternative);
    without a known arm on both sides, the same macro and a message nearly the same."""
    if old.record.errorMessage == new.record.errorMessage:
        return True
    a, b = old.facts, new.facts
    if a.macro != b.macro:
        return False
    if a.pattern and b.pattern:
        return _slot(a.pattern) == _slot(b.pattern)
    return message_ratio(old.record.errorMessage, new.record.errorMessage) >= SAME_MESSAGE_RATIO


def message_ratio(a: str, b: str) -> float:
    """How alike two messages read (0..1): the Dice coefficient of their character pairs, linear
    in their lengths. difflib's ratio, used before, is quadratic or worse per pair on repetitive
    text (two 16 KB messages took a minute; 64 characters of `aaaaaaab` already 17 ms)."""
    if a == b:
        return 1.0
    if len(a) < 2 or len(b) < 2:
        return 0.0
    pairs_a, pairs_b = Counter(zip(a, a[1:])), Counter(zip(b, b[1:]))
    return 2 * sum((pairs_a & pairs_b).values()) / (len(a) + len(b) - 2)


# A variant's wildcard payload: `QFloat(_)`, `Bool(..)`, `Scheme { .. }` name the variant alone.
_WILDCARD_PAYLOAD = re.compile(r"\s*(?:\(\s*(?:_|\.\.)(?:\s*,\s*(?:_|\.\.))*\s*\)|\{\s*\.\.\s*\})")


def _slot(pattern: str) -> str:
    slot = _WILDCARD_PAYLOAD.sub("", arm_slot(pattern, False))
    return "_" if _BINDING.fullmatch(slot) else slot


# -- a function renamed, a body moved ---------------------------------------------------------

def _stems(name: str) -> list[str]:
    """A function's name and what it is left when words are cut from either end (`is_marked_impl`:
    `is_marked`, `is`, `marked_impl`, `impl`, ...): a renamed function often keeps its old name
    inside the new one."""
    words = name.split("_")
    out = [name]
    for i in range(1, len(words)):
        out += ["_".join(words[:i]), "_".join(words[i:])]
    return [w for w in dict.fromkeys(out) if w]


def _by_renamed_function(st: _State) -> None:
    """The same crate, message, macro and arm, in a function whose name holds the earlier one's
    (a function renamed, `foo` to `foo_impl`), unique on both sides; then the same function,
    message, macro and arm anywhere in the tree."""
    def key(r: RecordLine, name: str) -> Hashable:
        a = r.facts
        return ("renamed", a.crate, r.record.errorMessage, a.macro, _slot(a.pattern) if a.pattern else "", name)

    _unique_pairs(st, "function", lambda r: [key(r, r.facts.function)] if r.facts.function else [],
                  lambda r: [key(r, stem) for stem in _stems(r.facts.function)])

    # A crate moved whose file holds the message twice: the arm tells the two apart.
    def anywhere(r: RecordLine) -> list[Hashable]:
        a = r.facts
        return [("moved", a.function, r.record.errorMessage, a.macro, _slot(a.pattern))] if a.pattern else []

    _unique_pairs(st, "function", anywhere, anywhere)


_FN_LINE = re.compile(r"\bfn\s")
_CLOSING = re.compile(r"[\])};,]*")  # blank, or closing brackets alone: nesting, not code
_PATH_SEGMENTS = re.compile(r"\b(?:[A-Za-z_][A-Za-z0-9_]*::)+([A-Za-z_][A-Za-z0-9_]*)")


def _body(r: RecordLine) -> tuple[str, ...]:
    """The lines around the call as code reads them: stripped, paths by their last segment,
    without blank lines, lone closing brackets, comments and `fn` headers (a renamed or moved
    function keeps its body)."""
    lines = (_PATH_SEGMENTS.sub(r"\1", s) for s in _core(r))
    return tuple(s for s in lines if not _CLOSING.fullmatch(s) and not s.startswith("//") and not _FN_LINE.search(s))


def _by_body(st: _State) -> None:
    """The same message and macro with the same lines around the call, anywhere in the tree (a
    body moved to another crate and function, its paths shortened on the way). Several with one
    key on each side, as many on both, pair in order of file and line."""
    prev_by: dict[tuple[str, str, tuple[str, ...]], list[int]] = defaultdict(list)
    cur_by: dict[tuple[str, str, tuple[str, ...]], list[int]] = defaultdict(list)
    for p in st.prev_left:
        r = st.previous[p]
        prev_by[(r.record.errorMessage, r.facts.macro, _body(r))].append(p)
    for c in st.cur_left:
        r = st.current[c]
        cur_by[(r.record.errorMessage, r.facts.macro, _body(r))].append(c)
    def place(lines: Sequence[RecordLine]) -> Callable[[int], tuple[str, int]]:
        return lambda i: (lines[i].record.filePath, lines[i].record.lineNumber)

    for k, ps in sorted(prev_by.items(), key=lambda kv: min(kv[1])):
        cs = cur_by.get(k, [])
        if len(k[2]) > 1 and len(ps) == len(cs):
            for p, c in zip(sorted(ps, key=place(st.previous)), sorted(cs, key=place(st.current))):
                st.take(p, c, "window")


# -- tiers c and d: keys unique on both sides -------------------------------------------------

def _by_keys(st: _State) -> None:
    _unique_pairs(st, "function", _function_key_previous, _function_keys_current)
    _unique_pairs(st, "message", lambda r: [("file", r.record.filePath, r.record.errorMessage)],
                  lambda r: [("file", r.record.filePath, r.record.errorMessage)])
    _unique_pairs(st, "message", lambda r: [("crate", r.facts.crate, r.record.errorMessage)],
                  lambda r: [("crate", r.facts.crate, r.record.errorMessage)])
    # A crate renamed or split (its files moved into another crate, often rewritten on the way, so
    # git's rename detection misses them): the same function and message, unique in each tree.
    _unique_pairs(st, "function", lambda r: [("tree", r.facts.function, r.record.errorMessage)],
                  lambda r: [("tree", r.facts.function, r.record.errorMessage)])


def _function_key_previous(r: RecordLine) -> list[Hashable]:
    return [("fn", r.facts.crate, r.facts.function, r.record.errorMessage, r.analysis is not None)]


def _function_keys_current(r: RecordLine) -> list[Hashable]:
    # An earlier record without analysis (function read from its window) meets a new record by
    # its parsed function or by the function read from its window the same way.
    keys = [("fn", r.facts.crate, r.facts.function, r.record.errorMessage, True),
            ("fn", r.facts.crate, r.facts.function, r.record.errorMessage, False),
            ("fn", r.facts.crate, function_from_window(r.record), r.record.errorMessage, False)]
    return list(dict.fromkeys(keys))


def _unique_pairs(st: _State, tier: str, key_previous: Callable[[RecordLine], Iterable[Hashable]],
                  key_current: Callable[[RecordLine], Iterable[Hashable]]) -> None:
    prev_by: dict[Hashable, list[int]] = defaultdict(list)
    cur_by: dict[Hashable, list[int]] = defaultdict(list)
    for p in st.prev_left:
        for k in key_previous(st.previous[p]):
            prev_by[k].append(p)
    for c in st.cur_left:
        for k in key_current(st.current[c]):
            cur_by[k].append(c)
    for k, ps in sorted(prev_by.items(), key=lambda kv: min(kv[1])):
        cs = cur_by.get(k, [])
        if len(ps) == 1 and len(cs) == 1 and ps[0] in st.prev_left and cs[0] in st.cur_left:
            st.take(ps[0], cs[0], tier)


# -- last: the same refusal reworded (refusal.py) ---------------------------------------------

def _by_refusal(st: _State) -> None:
    """A function split per node type, a catch-all narrowed into arms, arms rewritten as a
    closure: the same crate and a message that keeps every distinctive word (refusal.py). Counted
    with the `message` tier: the message, kept in substance, is what matched."""
    from analyzer.lineage.refusal import pairs

    for p, c in pairs(st.previous, st.current, st.prev_left, st.cur_left, lambda r: r.facts.crate):
        st.take(p, c, "message")


# -- tier e: similar source windows -----------------------------------------------------------

@lru_cache(maxsize=4096)
def _lines(source_code: str) -> tuple[str, ...]:
    """A window's lines, stripped: split once per record, not once per pair it is scored in."""
    return tuple(s.strip() for s in source_code.split("\n"))


def _core(r: RecordLine) -> Sequence[str]:
    at = r.record.lineNumber - r.record.sourceCodeStart
    return _lines(r.record.sourceCode)[max(at - CORE_RADIUS, 0):at + CORE_RADIUS + 1]


def _window(r: RecordLine) -> Sequence[str]:
    return _lines(r.record.sourceCode)


def similarity(a: RecordLine, b: RecordLine) -> float:
    """How alike two records' sites read (0..1): the lines around the call weigh most, then the
    message, then the whole source window."""
    core = difflib.SequenceMatcher(None, _core(a), _core(b), autojunk=False).ratio()
    message = message_ratio(a.record.errorMessage, b.record.errorMessage)
    whole = difflib.SequenceMatcher(None, _window(a), _window(b), autojunk=False).ratio()
    return 0.4 * core + 0.3 * message + 0.3 * whole


def _by_window(st: _State, bucket_of: Callable[[RecordLine], str]) -> None:
    prev_in: dict[str, list[int]] = defaultdict(list)
    cur_in: dict[str, list[int]] = defaultdict(list)
    for p in st.prev_left:
        prev_in[bucket_of(st.previous[p])].append(p)
    for c in st.cur_left:
        cur_in[bucket_of(st.current[c])].append(c)
    for bucket in sorted(prev_in.keys() & cur_in.keys()):
        ps, cs = sorted(prev_in[bucket]), sorted(cur_in[bucket])
        if len(ps) * len(cs) > WINDOW_MAX_PAIRS:
            continue
        scored = sorted(((similarity(st.previous[p], st.current[c]), p, c) for p in ps for c in cs),
                        key=lambda t: (-t[0], t[1], t[2]))
        for score, p, c in scored:
            if score < WINDOW_THRESHOLD:
                break
            if p in st.prev_left and c in st.cur_left and same_error(st.previous[p], st.current[c]):
                st.take(p, c, "window")
