"""The operations view of the coverage matrix, built from an extraction: rows are the methods of
the backend ops traits each crate implements, with the dispatches each implementation reaches
through the call graph (analyzer/features/coverage/callgraph.py), repetition macros resolved per
invocation, and n/a where a dtype is of another tensor kind than the operation's trait takes."""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

from analyzer.core.collector import no_cycle_collection
from analyzer.profiles import current
from analyzer.features.coverage.callgraph import UNREADABLE, CallGraph, ops_traits
from analyzer.features.coverage.preempted import mark_preempted
from analyzer.features.coverage.limits import apply_limits, dtype_makes, storage_limits
from analyzer.features.coverage.matches import build
from analyzer.features.coverage.paths import Filter, FnPaths, enum_of, read_paths
from analyzer.features.coverage.settings import (
    QUANTIZED, TupleMatch, apply_schemes, build_settings, decided_matches, tuple_matches,
)
from analyzer.features.coverage.created import creates, creation_says, never_created
from analyzer.features.coverage.model import (
    HANDLED, NA, NOT_IMPLEMENTED, PANICS, PARTIAL, UNKNOWN, Cell, Dispatch, Evidence, Matrix, Operation, Site,
    base_variant, fold, label, qualify, short_path, unique_sites,
)
from analyzer.decisions.categories import OP
from analyzer.records.model import github_url

if TYPE_CHECKING:
    from analyzer.pipeline.extract import AuditEntry

from analyzer.records.macro_lists import METAVARIABLE_VARIANT as _METAVARIABLE_VARIANT


def dtype_kind(dtype: str) -> str:
    """float, int, bool, quantized, or "" (no known kind) for a column key (`F32`, `Kind::Half`)."""
    return _dtype_kind(dtype, current().dtype_kind_patterns)


# Keyed by the target's patterns as well as the key: one process may read trees of several targets.
@cache
def _dtype_kind(dtype: str, patterns: tuple[tuple[str, re.Pattern], ...]) -> str:
    variant = label(dtype).split("(", 1)[0]
    for kind, rx in patterns:
        if rx.fullmatch(variant):
            return kind
    return ""


def trait_kind(trait: str) -> str:
    return next((kind for prefix, kind in current().code.ops_trait_kinds if trait.startswith(prefix)), "")


def build_operations(ex, collapse: bool = False, read_files=None) -> Matrix:
    """The operations matrix of an extraction: every backend operation (a method of a backend
    ops trait a crate implements) with the dispatches its implementation reaches through calls by
    name within its crate (helpers reached from several operations count for each), repetition
    macros resolved per invocation, and n/a where a dtype is of another tensor kind than the
    operation's trait takes. With `read_files(paths) -> {path: bytes}`, the functions holding a
    dtype panic are read for the arms their calls sit in (analyzer/features/coverage/paths.py).
    Built with the cycle collector paused: tens of thousands of cells, none in a cycle."""
    with no_cycle_collection():
        return _build_operations(ex, collapse, read_files)


def _build_operations(ex, collapse: bool, read_files) -> Matrix:  # noqa: C901 (the operations view walked once, top to bottom; split when it next grows)
    audit_by_id = {a.id: a for a in ex.audit if a.id is not None}
    checks = same_dtype_checks([a for a in ex.audit if a.id is not None and a.decision.category == "dtype-dispatch"])
    base = build([_as_decided(ln, audit_by_id.get(ln.record.id)) for ln in ex.lines if ln.record.id not in checks],
                 collapse)
    traits = ops_traits(ex.code)

    # Operations: each crate's impls of the ops traits another crate defines.
    ops: dict[tuple[str, str], Operation] = {}
    for path, crate, facts in ex.code:
        for impl in facts.impls:
            if traits.get(impl.trait, crate) == crate:
                continue
            for name, line in impl.methods:
                ops.setdefault((crate, name), Operation(crate, name, impl.trait, trait_kind(impl.trait), path, line,
                                                        github_url(ex.run.profile, ex.repo, ex.sha, path, line, line)))

    if not ops:
        # A tree with no backend ops trait implemented: the matches view (rows by panic message).
        return base

    graph = CallGraph(ex.code, traits, ops)

    # Dispatches -> (function, dispatch) instances.
    instances: list[tuple[int, Dispatch]] = []
    helpers: list[Dispatch] = []
    fixed = _kind_fixed_dispatches(ex)
    macro_defs: dict[tuple[str, str], list] = {}
    for path, _crate, facts in ex.code:
        for m in facts.macro_defs:
            macro_defs.setdefault((path, m.name), []).append(m)
    for d, entry in [*((d, audit_by_id.get(d.sites[0].record_id)) for d in base.dispatches), *fixed]:
        site = entry.site if entry is not None else None
        in_macro = site.in_macro if site is not None else ""
        if in_macro.startswith("macro_rules! "):
            macro = in_macro.removeprefix("macro_rules! ")
            metavars = {m for arm in site.arms for m in _METAVARIABLE_VARIANT.findall(arm.pattern)} if site else set()
            reach = graph.reaching_macros(d.crate, macro)
            # The rule each of the match's records sits in: an invocation opening with a rule's
            # word takes that rule, and the records of the others are not its panics.
            defs = macro_defs.get((d.path, macro), [])
            rule_def = next((m for m in defs if any(m.rule_at(s.line) >= 0 for s in d.sites)), None)
            rules = {s.record_id: rule_def.rule_at(s.line) for s in d.sites} if rule_def is not None else {}
            by_lead: dict[str, Dispatch | None] = {}  # the match as the invocations opening with a word take it
            memo: dict = {}
            placed = False
            for name in sorted(reach):
                for i, inv in graph.invocations(d.crate, name):
                    if rule_def is None or inv.name != macro or not inv.lead:
                        taken: Dispatch | None = d
                    else:
                        if inv.lead not in by_lead:
                            by_lead[inv.lead] = _of_rules(d, rules, rule_def.rules_taking(inv.lead), audit_by_id)
                        taken = by_lead[inv.lead]
                    if taken is None:
                        continue
                    f = graph.fns[i]
                    where = f"{short_path(f.path, f.crate)}:{inv.line}"
                    if not metavars:
                        inst = _instance(taken, f"via {inv.name}! at {where}")
                        inst.invoked_at = inv.line
                    else:
                        if inv.name == macro:
                            lists = ({UNREADABLE} if inv.unreadable else
                                     {tuple(inv.dtypes)} if inv.dtypes is not None else
                                     graph.default_lists(d.crate, macro, macro, reach, memo))
                        else:
                            lists = graph.default_lists(d.crate, inv.name, macro, reach, memo)
                        inst = _resolved(taken, macro, inv.name, where, lists)
                        inst.invoked_at = inv.line
                    instances.append((i, inst))
                    placed = True
            if not placed:
                helpers.append(_instance(d, f"{macro}! is invoked in no function"))
            continue
        at = graph.enclosing_fn(d.path, d.function, d.line) if d.function else None
        if at is None:
            helpers.append(d)
        else:
            instances.append((at, d))

    # Instances -> evidence per (crate, operation, column).
    evidence: dict[tuple[str, str, str], list[Evidence]] = {}
    reasons: dict[tuple[str, str, str], list[str]] = {}
    dispatches: list[Dispatch] = []
    paths = _read_paths(graph, [at for at, _ in instances], {d.enum for d in base.dispatches}, read_files)
    allowed = _Allowed(frozenset(k for d in base.dispatches for k in d.statuses))
    edge = _edges(paths, allowed)
    reached_cache: dict[tuple[int, frozenset[str]], dict[str, frozenset[str]]] = {}
    # One Evidence per (dtype, status, site): a helper's dispatch reached by many operations says
    # the same of each, and the cells share the one (frozen) object.
    said: dict[tuple[str, str, int], Evidence] = {}
    for at, d in instances:
        start = _start(paths.get(at), d, allowed)
        if (at, start) not in reached_cache:
            reached_cache[(at, start)] = graph.operations_reaching_for(at, start, edge)
        names = reached_cache[(at, start)]
        if not names:
            helpers.append(d)
            continue
        # A dispatch that handles dtypes of one kind only dispatches on a tensor of that kind (an
        # int index tensor inside a float op): what it says about other kinds is not about the
        # operation's own tensor.
        kinds = {dtype_kind(k) for k, st in d.statuses.items() if st == HANDLED} - {""}
        kind = kinds.pop() if len(kinds) == 1 else ""
        storage = _on_storage(d)
        for op, carried in names.items():
            dispatches.append(_retarget(d, op))
            for dtype, status in d.statuses.items():
                if (kind and dtype_kind(dtype) not in (kind, "")) or dtype not in carried:
                    continue
                if storage and dtype_kind(dtype) == QUANTIZED and ops[(d.crate, op)].kind == QUANTIZED:
                    continue
                column = base_variant(dtype) if collapse else dtype
                if status == PANICS:
                    site = next((s for s in d.sites if dtype in d.rejected_by.get(s.record_id, ())), d.sites[0])
                else:
                    site = d.sites[0]
                said_key = (dtype, status, id(site))
                one = said.get(said_key)
                if one is None:
                    one = said[said_key] = Evidence(dtype, status, site)
                evidence.setdefault((d.crate, op, column), []).append(one)
                if status == UNKNOWN:
                    reasons.setdefault((d.crate, op, column), []).append(d.unknown)

    # The walks' memos, the read paths and the call graph are not needed for the cells: freed
    # before the cells are made, the largest part of the matrix.
    del reached_cache, edge, allowed, paths, said, instances
    unimplemented = _not_implemented(ex, graph, ops)
    unfollowed = _calling_defaults(ex.code, traits, graph, ops)
    _add_inherited(ex, audit_by_id, traits, ops, unimplemented)
    _kinds_from_signatures(ex.code, ops, read_files)
    makes = dtype_makes(ops, read_files, ex.code)
    tuples = tuple_matches(ex)
    matches = decided_matches(ex, graph, tuples)
    settings = build_settings(ex, graph, read_files, tuples, matches)
    creators = {key for key, o in ops.items() if creates(o, QUANTIZED)}
    never = never_created(settings, creation_says(graph, matches, creators), ops, QUANTIZED, unimplemented)
    del graph, matches

    # A backend's columns: the first enum's, and those of the enums its own dispatches name.
    enums_of: dict[str, set[str]] = {}
    for d in base.dispatches:
        enums_of.setdefault(d.crate, set()).add(d.enum)
    cells: dict[tuple[str, str, str], Cell] = {}
    columns = [(n, g, [(col, dtype_kind(col)) for col in g.dtypes]) for n, g in enumerate(base.groups)]
    for (crate, op), operation in sorted(ops.items()):
        own = enums_of.get(crate, ())
        whole = unimplemented.get((crate, op))
        for n, g, cols in columns:
            if n and g.enum not in own:
                continue
            for col, kind in cols:
                key = (crate, op, col)
                ev = evidence.get(key)
                if operation.kind and kind and kind != operation.kind:
                    cells[key] = Cell(crate, op, col, NA, [], g.enum, ev or [])
                elif whole is not None:
                    # The whole body panics: whatever the dtype, the call never returns.
                    cells[key] = Cell(crate, op, col, PANICS, [whole], g.enum, [Evidence(col, PANICS, whole)],
                                      reason=NOT_IMPLEMENTED)
                elif ev:
                    panicking = [e.site for e in ev if e.status == PANICS]
                    status, reason, parts = _fold_paths(ev)
                    if status == HANDLED and not any(e.site.record_id for e in ev):
                        reason = _unrecorded_reason(ev, crate)
                    cells[key] = Cell(crate, op, col, status, unique_sites(panicking + [e.site for e in ev]),
                                      g.enum, ev, reason=reason, decided=parts)
    _apply_tuples(cells, tuples)
    apply_schemes(cells, settings, ops, base.groups, dtype_kind, never)
    limits = storage_limits(cells, dtype_kind, base.groups, ops, unfollowed, makes)
    apply_limits(cells, limits, ops, base.groups, dtype_kind)
    position = {d: i for i, d in enumerate(base.dtypes)}
    order = sorted(cells, key=lambda k: (k[0], k[1], position.get(k[2], len(position))))
    cells = {k: cells[k] for k in order}
    del order
    mark_preempted(cells.values(), ex.lines)
    dispatches.sort(key=lambda d: (d.crate, d.operation, d.path, d.line))
    helpers.sort(key=lambda d: (d.crate, d.function, d.path, d.line))
    return Matrix(cells, base.dtypes, base.groups, dispatches, collapse, base.repo or ex.repo, base.sha or ex.sha,
                  ops, _unique_dispatches(helpers), {k: list(dict.fromkeys(v)) for k, v in reasons.items()},
                  unimplemented=unimplemented, limits=limits, settings=settings)


def _apply_tuples(cells: dict[tuple[str, str, str], Cell], tuples: dict[str, TupleMatch]) -> None:
    """A dtype a tuple match of a setting and the dtype handles for some setting variants only is
    partial, naming the variants it panics for (`(mode, dtype)` with no NearestExact arm)."""
    if not tuples:
        return
    for cell in cells.values():
        if cell.status not in (HANDLED, PARTIAL):
            continue
        named: dict[str, list[str]] = {}
        sites = []
        for e in cell.evidence:
            found = tuples.get(e.site.record_id) if e.status == HANDLED else None
            if found is None:
                continue
            variants = found.panics_for.get(label(e.dtype), [])
            if variants:
                listed = named.setdefault(found.enum, [])
                listed += [v for v in variants if v not in listed]
                sites.append(e.site)
        if not named:
            continue
        said = "; ".join("panics for " + ", ".join(f"{enum}::{v}" for v in vs) for enum, vs in named.items())
        cell.status = PARTIAL
        cell.reason = f"{cell.reason}; {said}" if cell.reason else said
        cell.sites = unique_sites(sites + cell.sites)
        cell.decided = {k: (PARTIAL if v == HANDLED else v) for k, v in cell.parts.items()}


def _as_decided(ln, entry):
    """The record with the dtypes its own arms decide: a repetition macro's record lists those
    every invocation hands it (analyzer/records/macro_lists.py), and this view resolves each
    invocation's list itself (`_resolved`), from the arms' own say."""
    if entry is None or ln.analysis is None:
        return ln
    d = entry.decision
    if ln.analysis.handled == d.handled and ln.analysis.rejected == d.rejected:
        return ln
    return ln.model_copy(update={"analysis": ln.analysis.model_copy(update={"handled": d.handled,
                                                                            "rejected": d.rejected})})


def _kind_fixed_dispatches(ex) -> list[tuple[Dispatch, AuditEntry]]:
    """The dtype matches whose catch-all only dtypes of another kind reach (no record: no user
    reaches that panic), with the dtypes their arms handle: what the function does with each dtype
    of its kind, and which arm a helper is called from. Each with its audit entry (it has no
    record id to be found by)."""
    out = []
    enums = ex.catalog.enums
    for a in ex.audit:
        dec = a.decision
        if dec.record:
            continue  # a record's dispatch is the base's
        enum, handled = dec.enum or "", list(dec.handled)
        if not handled:
            # An exclusion that keeps no dtypes (a mismatch check, an accessor) still dispatches on
            # the dtypes its arms name and handle: the operations reaching it handle those there.
            enum, handled = _arm_handled(a.site.arms, enums)
            if not handled:
                continue
        s = a.site
        site = Site("", a.path, s.line, s.function, github_url(ex.run.profile, ex.repo, ex.sha, a.path, s.line, s.line),
                    dec.pattern,
                    s.message)
        out.append((Dispatch(a.crate, s.function, s.function, a.path, enum, s.scrutinee, s.context,
                             {qualify(enum, v): HANDLED for v in handled}, [], [site]), a))
    return out


def _unrecorded_reason(ev: list[Evidence], crate: str) -> str:
    """Why a cell no record speaks for is handled: the matches on its path that name the dtype
    (their panics refuse other kinds or mismatched tensors, not this dtype), the rest of the
    path taking any dtype."""
    where = list(dict.fromkeys(f"{short_path(e.site.path, crate)}:{e.site.line}" for e in ev))
    return (f"handled by the match{'es' if len(where) > 1 else ''} at {', '.join(where)} (no panic there refuses "
            f"it); no other dtype match with a panic is on its path")


def _arm_handled(arms, enums) -> tuple[str, list[str]]:
    """The dtype enum a match's arms name most and the variants its plain arms (no guard, no
    panic, not a catch-all) handle: `Bool(U8)` for a payload variant."""
    from collections import Counter

    named = Counter(r.enum for arm in arms for r in arm.refs if r.enum in enums)
    if not named:
        return "", []
    enum = named.most_common(1)[0][0]
    handled: list[str] = []
    for arm in arms:
        if arm.panics or arm.catch_all or arm.guard:
            continue
        for r in arm.refs:
            if r.enum == enum:
                v = f"{r.variant}({r.sub[0].variant})" if r.sub and len(r.sub) == 1 else r.variant
                if v not in handled:
                    handled.append(v)
    return enum, handled


def _not_implemented(ex, graph: CallGraph, ops: dict[tuple[str, str], Operation]) -> dict[tuple[str, str], Site]:
    """The operations whose implementation is a panic and nothing else (an `unsupported-op`
    record in the `body` position, inside the ops-trait method itself): (crate, name) -> site."""
    out: dict[tuple[str, str], Site] = {}
    for ln in ex.lines:
        a, r = ln.facts, ln.record
        if a.category != OP or a.context != "body" or (a.crate, a.function) not in ops:
            continue
        at = graph.enclosing_fn(r.filePath, a.function, r.lineNumber)
        if at is not None and graph.is_operation(at):
            out.setdefault((a.crate, a.function), Site(r.id, r.filePath, r.lineNumber, a.function, r.pinned_url,
                                                       "", r.errorMessage))
    return out


# The tensor types of burn's backend signatures, by kind (`FloatTensor<B>`, `B::IntTensorPrimitive`).
_TENSOR_TYPE = re.compile(r"\b(Float|Int|Bool|Quantized)Tensor(?:Primitive)?\b")
_TENSOR_KIND = {"Float": "float", "Int": "int", "Bool": "bool", "Quantized": "quantized"}
# A type that may hold a tensor (`TensorRef<B>`, `TransactionPrimitive<B>`): of no one kind.
_HOLDS_TENSOR = re.compile(r"Tensor|Primitive")
NO_TENSOR = "none"


def _kinds_from_signatures(code, ops: dict[tuple[str, str], Operation], read_files) -> None:
    """The kind of an operation whose trait takes no one kind (`DistributedOps`), from its
    method's signature in the trait: the one tensor kind its parameters and result name
    (`all_reduce(tensor: FloatTensor<B>, ..)`: float), or `none` when they hold no tensor at all
    (`sync_collective(device)`: every dtype is n/a there)."""
    wanted = {o.trait for o in ops.values() if not o.kind}
    if not wanted or read_files is None:
        return
    paths = sorted({path for path, _, facts in code for t in facts.traits if t.name in wanted})
    texts = read_files(paths)
    kinds: dict[tuple[str, str], str] = {}
    for path in paths:
        for trait, method, signature in _signatures(texts.get(path, b""), wanted):
            named = {_TENSOR_KIND[m] for m in _TENSOR_TYPE.findall(signature)}
            if len(named) == 1:
                kinds[(trait, method)] = named.pop()
            elif not named and not _HOLDS_TENSOR.search(signature):
                kinds[(trait, method)] = NO_TENSOR
    for key, o in ops.items():
        kind = kinds.get((o.trait, o.name)) if not o.kind else None
        if kind:
            ops[key] = Operation(o.crate, o.name, o.trait, kind, o.path, o.line, o.url)


def _signatures(source: bytes, traits: set[str]):
    """(trait, method, its parameters and result as written) of the methods of `traits` in a file."""
    from tree_sitter import Parser

    from analyzer.facts.syntax import LANGUAGE

    if not source:
        return
    stack = [Parser(LANGUAGE).parse(source).root_node]
    while stack:
        n = stack.pop()
        if n.type == "trait_item":
            name, body = n.child_by_field_name("name"), n.child_by_field_name("body")
            trait = name.text.decode() if name is not None and name.text is not None else ""
            if trait not in traits or body is None:
                continue
            for item in body.named_children:
                if item.type not in ("function_signature_item", "function_item"):
                    continue
                method = item.child_by_field_name("name")
                parts = [item.child_by_field_name(f) for f in ("parameters", "return_type")]
                text = " ".join(p.text.decode("utf-8", "replace") for p in parts if p is not None and p.text)
                if method is not None and method.text is not None:
                    yield trait, method.text.decode(), text
            continue
        stack.extend(n.named_children)


def _calling_defaults(code, traits, graph: CallGraph,
                      ops: dict[tuple[str, str], Operation]) -> frozenset[tuple[str, str]]:
    """The operations that call an ops-trait method their crate does not implement (ndarray's
    `float_empty` calls `Self::float_zeros`, the trait's default): the default's body is not in
    the call graph, so what such an operation does with a dtype is not known from its own cells."""
    methods = {m for _, _, facts in code for t in facts.traits if t.name in traits for m in t.methods}
    out = set()
    for i, f in enumerate(graph.fns):
        if graph.is_operation(i) and any(c in methods and (f.crate, c) not in ops for c in f.facts.calls):
            out.add((f.crate, f.facts.name))
    return frozenset(out)


def _add_inherited(ex, audit_by_id, traits, ops: dict[tuple[str, str], Operation],
                   unimplemented: dict[tuple[str, str], Site]) -> None:
    """A backend ops trait's default method whose whole body panics, as a row of each backend
    that inherits it (`analysis.inheritedBy`): not implemented there, whatever the dtype."""
    for ln in ex.lines:
        a, r = ln.facts, ln.record
        entry = audit_by_id.get(r.id)
        if a.category != OP or not a.inheritedBy or entry is None or entry.site.fn_trait not in traits:
            continue
        trait = entry.site.fn_trait
        site = Site(r.id, r.filePath, r.lineNumber, a.function, r.pinned_url, "", r.errorMessage)
        for crate in a.inheritedBy:
            ops.setdefault((crate, a.function), Operation(crate, a.function, trait, trait_kind(trait), r.filePath,
                                                          r.lineNumber, r.pinned_url))
            unimplemented.setdefault((crate, a.function), site)


def _arm_dtypes(arm) -> set[str]:
    """The variants an arm names (`Enum::F32(x)`: F32), and its metavariables (`Enum::$dtype(x)`:
    `$dtype`)."""
    out = {r.variant for r in arm.refs}
    out |= {"$" + m for m in _METAVARIABLE_VARIANT.findall(arm.pattern)}
    return out


def same_dtype_checks(entries) -> set[str]:
    """Record ids of matches nested in an arm of another dtype match that handles the same dtypes
    (`NdArrayTensor::F32(x) => match bias { NdArrayTensor::F32(b) => .., _ => panic!(..) }`): the
    inner panic fires when a second tensor's dtype differs from the first's, not because a dtype
    is unsupported, so it says nothing about the operation's dtype support."""
    by_place: dict[tuple, list] = {}
    for a in entries:
        by_place.setdefault((a.path, a.site.in_macro, a.site.function), []).append(a)
    out: set[str] = set()
    for group in by_place.values():
        if len(group) < 2:
            continue
        for inner in group:
            handled = set().union(*(_arm_dtypes(arm) for arm in inner.site.arms if not arm.panics
                                    and not arm.catch_all)) if inner.site.arms else set()
            if not handled:
                continue
            for outer in group:
                arms = sorted(outer.site.arms, key=lambda arm: arm.line)
                if outer is inner or len(arms) < 2 or not (arms[0].line < inner.site.line < arms[-1].line):
                    continue
                around = [arm for arm in arms if arm.line <= inner.site.line][-1]
                if not around.panics and handled <= _arm_dtypes(around):
                    out.add(inner.id)
                    break
    return out


def _read_paths(graph: CallGraph, functions: list[int], enums: set[str], read_files) -> dict[int, FnPaths]:
    """The paths of each function that holds a dtype dispatch, read from its source."""
    if read_files is None or not functions:
        return {}
    wanted = sorted(set(functions))
    texts = read_files(sorted({graph.fns[i].path for i in wanted}))
    lines_of: dict[str, list[bytes]] = {}  # each file split once, however many functions it holds
    out: dict[int, FnPaths] = {}
    for i in wanted:
        f = graph.fns[i]
        data = texts.get(f.path)
        if data is not None:
            if f.path not in lines_of:
                lines_of[f.path] = data.split(b"\n")
            lines = lines_of[f.path][f.facts.line - 1:f.facts.end_line]
            out[i] = read_paths(b"\n".join(lines), f.facts.line, enums)
    return out


class _Allowed:
    """The dtypes of `every` the filters of a call site (or the arms before a line) let through,
    answered once per filter (and per set of dtypes returned early): many call sites share a
    filter, and every walk asks again."""

    def __init__(self, every: frozenset[str]):
        self.every = every
        self._by_filter: dict[Filter, frozenset[str]] = {}
        self._by_gone: dict[frozenset[str], frozenset[str]] = {}

    def by(self, filters: list[Filter]) -> frozenset[str]:
        """The dtypes any of `filters` allows."""
        out: frozenset[str] = frozenset()
        for f in filters:
            one = self._by_filter.get(f)
            if one is None:
                one = self._by_filter[f] = frozenset(k for k in self.every if f.allows(k, _in_scope(f, k)))
            out |= one
        return out

    def past(self, gone: frozenset[str]) -> frozenset[str]:
        """The dtypes not among `gone` (by their labels or base variants)."""
        out = self._by_gone.get(gone)
        if out is None:
            out = self._by_gone[gone] = frozenset(k for k in self.every if k not in gone
                                                  and base_variant(k) not in gone)
        return out


def _start(paths: FnPaths | None, d: Dispatch, allowed: _Allowed) -> frozenset[str]:
    """The dtypes that reach a dispatch within its function: those not returned for earlier, and
    for a macro's dispatch those of the arm its invocation sits in."""
    if paths is None:
        return allowed.every
    if d.invoked_at:
        filters = paths.macros.get(d.invoked_at)
        if filters:
            return allowed.by(filters)
        line = d.invoked_at
    elif d.via:
        return allowed.every
    else:
        line = d.line
    return allowed.past(paths.gone_before(line))


def _edges(paths: dict[int, FnPaths], allowed: _Allowed):
    """`edge(caller, name)`: the dtypes a read caller calls `name` for (None: every dtype, also
    for a call the reading did not see, e.g. one inside a macro's arguments)."""
    memo: dict[tuple[int, str], frozenset[str] | None] = {}

    def edge(caller: int, name: str) -> frozenset[str] | None:
        key = (caller, name)
        if key not in memo:
            filters = paths[caller].calls.get(name) if caller in paths else None
            memo[key] = None if filters is None else allowed.by(filters)
        return memo[key]

    return edge


def _on_storage(d: Dispatch) -> bool:
    """Whether a dispatch names no quantized dtype in any arm (it rejects one, if at all, in a
    catch-all): a quantized tensor's values are a tensor of another dtype (`I8` storage), and such
    a dispatch is on those values, so it says nothing of the quantized dtype itself."""
    quantized = [k for k in d.statuses if dtype_kind(k) == QUANTIZED]
    if not quantized or any(d.statuses[k] == HANDLED for k in quantized):
        return False
    named = {base_variant(label(k)) for k in quantized}
    return not any(re.search(rf"\b{re.escape(v)}\b", s.pattern) for s in d.sites for v in named)


def _in_scope(f: Filter, dtype: str) -> bool:
    """Whether an arm decides the path of a column: one of its match's enum and, when the match
    names dtypes of one kind only (an index tensor's ints), of that kind."""
    if enum_of(dtype) != f.enum and base_variant(label(dtype)) not in {base_variant(v) for v in f.scope}:
        return False
    kinds = {dtype_kind(d) for d in f.scope} - {""}
    return len(kinds) != 1 or dtype_kind(dtype) in kinds


def _fold_paths(ev: list[Evidence]) -> tuple[str, str, dict[str, str]]:
    """A cell's status from the dispatches its dtype reaches, and why it is partial: each dtype
    (each payload variant of a collapsed column) panics when a dispatch on its path panics on it,
    as within one match; the column is partial only when its payload variants go different ways
    (some `Bool` storages handled, others panic)."""
    by_dtype: dict[str, list[str]] = {}
    for e in ev:
        by_dtype.setdefault(e.dtype, []).append(e.status)
    parts = {dtype: (PANICS if PANICS in sts else _fold_known(sts)) for dtype, sts in by_dtype.items()}
    status = fold(list(parts.values()))
    if status != PARTIAL:
        return status, "", parts
    ways: dict[str, list[str]] = {}
    for dtype, st in parts.items():
        ways.setdefault(st, []).append(label(dtype))
    return PARTIAL, "; ".join(f"{st}: {', '.join(ds)}" for st, ds in ways.items()), parts


def _fold_known(statuses: list[str]) -> str:
    """The cell of several dispatches: the known ones folded (handled, panics or partial); a
    cell only unknown dispatches speak for, or handled by the known ones while an unknown one
    might panic, is unknown. Never panics by default."""
    known = [s for s in statuses if s != UNKNOWN]
    if not known:
        return UNKNOWN
    folded = fold(known)
    return UNKNOWN if folded == HANDLED and len(known) < len(statuses) else folded


def _of_rules(d: Dispatch, rule_of: dict[str, int], taken: set[int], audit_by_id) -> Dispatch | None:
    """The match of a macro's body as an invocation taking the rules `taken` makes it: only the
    records in those rules (or in no rule read); None when none is."""
    kept = [s for s in d.sites if rule_of.get(s.record_id, -1) < 0 or rule_of[s.record_id] in taken]
    if len(kept) == len(d.sites):
        return d
    if not kept:
        return None
    rejected_by = {s.record_id: d.rejected_by.get(s.record_id, []) for s in kept}
    rejected = {k for ks in rejected_by.values() for k in ks}
    handled = {qualify(d.enum, v) for s in kept if (e := audit_by_id.get(s.record_id)) is not None
               for v in e.decision.handled}
    statuses = {k: (PANICS if k in rejected else HANDLED) for k in d.statuses if k in rejected or k in handled}
    partial = [b for b in d.partial if len({st for k, st in statuses.items() if base_variant(k) == b}) > 1]
    return Dispatch(d.crate, d.operation, d.function, d.path, d.enum, d.scrutinee, d.context, statuses, partial,
                    kept, rejected_by, d.via, d.unknown, d.invoked_at)


def _instance(d: Dispatch, via: str) -> Dispatch:
    return Dispatch(d.crate, d.operation, d.function, d.path, d.enum, d.scrutinee, d.context, dict(d.statuses),
                    list(d.partial), d.sites, d.rejected_by, via)


def _retarget(d: Dispatch, operation: str) -> Dispatch:
    """The dispatch as counted in one operation it reaches: its maps are shared with `d`, not
    copied (nothing changes a dispatch's maps in place; a changed one is a new map)."""
    return Dispatch(d.crate, operation, d.function, d.path, d.enum, d.scrutinee, d.context, d.statuses, d.partial,
                    d.sites, d.rejected_by, d.via, d.unknown)


def _resolved(d: Dispatch, macro: str, invoked: str, where: str, lists: set[tuple]) -> Dispatch:
    """A repetition macro's dispatch as one invocation makes it: the listed dtypes handled, the
    others as the catch-all says; unknown when the list cannot be read or is not one list."""
    if len(lists) != 1 or UNREADABLE in lists:
        why = (f"{invoked}! at {where} passes a dtype list the audit cannot read" if UNREADABLE in lists else
               f"{invoked}! at {where} reaches {macro}! with {len(lists)} different dtype lists" if lists else
               f"{invoked}! at {where} reaches {macro}! with no dtype list the audit can find")
        out = _instance(d, f"via {invoked}! at {where}")
        out.statuses = {k: UNKNOWN for k in d.statuses}
        out.unknown = why
        return out
    (names,) = lists
    listed = set(names)
    out = _instance(d, f"via {invoked}! [{', '.join(names)}] at {where}")
    out.statuses = {k: (HANDLED if label(k).split("(", 1)[0] in listed else s) for k, s in d.statuses.items()}
    out.rejected_by = {rid: [k for k in ks if label(k).split("(", 1)[0] not in listed]
                       for rid, ks in d.rejected_by.items()}
    return out


def _unique_dispatches(ds: list[Dispatch]) -> list[Dispatch]:
    out, seen = [], set()
    for d in ds:
        key = (d.crate, d.path, d.line, d.via)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
