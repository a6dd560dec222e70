"""The reach verdict of every record: whether a path through the public API reaches the refusal
with the refused choice (`reachable`), or every such path is refused earlier (`preempted`, with
the earlier refusals and why), or the tool cannot tell (`unknown`).

A decision over the whole extraction: it reads the records the classifier kept (their sites and
decisions), the catalog's ops-trait impls and the target profile, after classification and
before the records are built. It is linear in the records: each rule looks its peers up in
indexes made once. The reasons, in the order they are tried:

- `nested-autodiff`: a backward operation of a backend that computes gradients by wrapping
  another (burn's `Autodiff`): only another such backend wrapping it calls it, and the API
  refuses nested autodiff;
- `overridden`: a refusal in an ops trait's default method that every impl of the trait in the
  tree defines for itself;
- `creation`: an operation of a tensor kind (its ops trait's) on a backend that cannot create a
  tensor of that kind at all (every operation that makes one, `q_from_data`, `quantize`, is a
  stub there), or a dtype dispatch whose refused dtypes of the operation's kind are all dtypes the
  backend's creation operations refuse and none of them handles;
- `forward`: a backward operation whose forward operation, on the same backend, refuses the same
  variant or dtype (`interpolate_backward`'s `NearestExact` arm after `interpolate`'s);
- `exhaustive`: a catch-all after every variant of another crate's non-exhaustive enum, as the
  target profile declares them.

Calling a backend's ops-trait method directly is not a public path: a backend that cannot create
a quantized tensor never receives one, whatever its `q_*` methods say.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from analyzer.decisions.catalog import DtypeCatalog
from analyzer.decisions.model import Decision
from analyzer.decisions.reach import _covered_whole
from analyzer.facts.model import ArmFacts, SiteFacts
from analyzer.records.operation import operation_of

REACHABLE = "reachable"
PREEMPTED = "preempted"
UNKNOWN = "unknown"
VERDICTS = (REACHABLE, PREEMPTED, UNKNOWN)
WHYS = ("creation", "forward", "nested-autodiff", "overridden", "caller", "exhaustive")

_DTYPE = "dtype-dispatch"
_OP = "unsupported-op"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Reach:
    """One record's verdict; `by` holds (the earlier refusal's record id or None, why)."""

    verdict: str = REACHABLE
    by: tuple[tuple[str | None, str], ...] = ()

    def to_json(self) -> list[dict]:
        return [{"id": i, "why": w} for i, w in self.by]


@dataclass
class Refusal:
    """What the verdict reads of one kept site."""

    id: str
    path: str
    crate: str
    site: SiteFacts
    decision: Decision
    operation: str = ""
    trait: str = ""  # the ops trait of the impl or trait the call is in, "" for none
    kind: str = ""  # the tensor kind that trait takes, "" for any
    self_type: str = ""  # the type an impl is for
    default: bool = False  # in a trait's default method
    variants: frozenset[str] = field(default_factory=frozenset)  # `Enum::Variant` its arm names
    creates: bool = False  # its function is one by which a tensor comes into being (profile `reach.creation`)


def refusals(entries: Sequence, profile, decisions: Sequence[Decision] | None = None) -> list[Refusal]:
    """A Refusal for each kept audit entry (path, crate, site, decision, id); `decisions`, when
    given, are the entries' decisions as the records are built from them."""
    kinds = profile.code.ops_trait_kinds
    suffix = profile.code.ops_trait_suffix
    out = []
    for n, a in enumerate(entries):
        s = a.site
        decision = decisions[n] if decisions is not None else a.decision
        trait, self_type, default = _trait_of(s, suffix)
        kind = next((k for prefix, k in kinds if trait.startswith(prefix)), "") if trait else ""
        arm = s.arms[s.arm_index] if s.context == "match-arm" and 0 <= s.arm_index < len(s.arms) else None
        variants = frozenset(f"{r.enum}::{r.variant}" for r in arm.refs) if arm is not None and not arm.catch_all \
            else frozenset()
        operation = operation_of(s.message, s.function, s.in_macro, s.impl)
        out.append(Refusal(a.id, a.path, a.crate, s, decision, operation, trait, kind, self_type, default, variants))
    return out


def _trait_of(s: SiteFacts, suffix: str) -> tuple[str, str, bool]:
    """(the ops trait the call's function belongs to, the type an impl of it is for, whether the
    function is the trait's own default method)."""
    if s.item_path.startswith("trait "):
        name = s.item_path[len("trait "):].split("::", 1)[0].split("<", 1)[0].strip()
        return (name, "", True) if name.endswith(suffix) else ("", "", False)
    header = s.impl
    if header.startswith("impl") and " for " in header:
        head, _, typ = header.rpartition(" for ")
        words = _IDENT.findall(head.removeprefix("impl").split("<", 1)[0] if not head.startswith("impl<")
                               else head[_closing(head, 4) + 1:].split("<", 1)[0])
        name = words[-1] if words else ""
        owner = _IDENT.findall(typ)
        if name.endswith(suffix):
            return name, owner[0] if owner else "", False
    if s.fn_kind == "trait-default" and s.fn_trait.endswith(suffix):
        return s.fn_trait, "", True
    return "", "", False


def _closing(text: str, start: int) -> int:
    """The index of the `>` that closes the `<` just before `start`."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "<":
            depth += 1
        elif text[i] == ">":
            depth -= 1
            if depth == 0:
                return i
    return len(text) - 1


def verdicts(found: Sequence[Refusal], catalog: DtypeCatalog, profile) -> list[Reach]:
    """The verdict of each refusal, in order."""
    reach = profile.reach
    entries = re.compile(reach.creation)
    backward = reach.backward_suffix
    kind_of = _kind_of(profile)
    by_op: dict[tuple[str, str], list[Refusal]] = {}
    for r in found:
        by_op.setdefault((r.crate, r.operation), []).append(r)
    for r in found:
        r.creates = entries.search(r.site.function) is not None
    uncreatable = _uncreatable_kinds(found, catalog, entries, profile)
    unheld = _unheld_dtypes(found, kind_of, _made_freely(found, catalog, entries, profile))
    # Every dtype of a kind a backend cannot create is one it never holds.
    dtypes_of: dict[str, set[str]] = {}
    if uncreatable:
        for d in {d for r in found for d in (*r.decision.handled, *r.decision.rejected)}:
            dtypes_of.setdefault(kind_of(d), set()).add(d)
    for (crate, kind), stubs in uncreatable.items():
        for d in dtypes_of.get(kind, ()):
            unheld.setdefault((crate, d), stubs)
    refusal = re.compile(reach.nested_refusal)
    nested = [r.id for r in found if refusal.search(r.site.message)]
    foreign = dict(profile.dtypes.foreign_non_exhaustive)
    out = []
    for r in found:
        out.append(_nested(r, reach, backward, nested)
                   or _overridden(r, catalog)
                   or _creation(r, uncreatable, unheld, kind_of)
                   or _forward(r, backward, by_op, kind_of, catalog)
                   or (foreign and _exhaustive(r, catalog, foreign))
                   or Reach())
    return out


def _kind_of(profile):
    patterns = profile.dtype_kind_patterns
    cache: dict[str, str] = {}

    def kind(dtype: str) -> str:
        if dtype not in cache:
            base = dtype.split("(", 1)[0].split("::")[-1]
            cache[dtype] = next((k for k, rx in patterns if rx.fullmatch(base)), "")
        return cache[dtype]
    return kind


# -- nested autodiff ------------------------------------------------------------------------------

def _nested(r: Refusal, reach, backward: str, nested: list[str]) -> Reach | None:
    if not (r.trait and r.self_type in reach.gradient_backends and r.site.function.endswith(backward)):
        return None
    return Reach(PREEMPTED, tuple((i, "nested-autodiff") for i in nested) or ((None, "nested-autodiff"),))


# -- defaults every impl overrides ----------------------------------------------------------------

def _overridden(r: Refusal, catalog: DtypeCatalog) -> Reach | None:
    if not r.default or catalog.implementors is None:
        return None
    impls = catalog.implementors.get(r.trait)
    if not impls or any(r.site.function not in methods for _crate, methods in impls):
        return None
    return Reach(PREEMPTED, ((None, "overridden"),))


# -- what a backend cannot create -----------------------------------------------------------------

def _stub(r: Refusal) -> bool:
    return r.decision.category == _OP and r.site.context == "body"


def _uncreatable_kinds(found: Sequence[Refusal], catalog: DtypeCatalog, entries: re.Pattern,
                       profile) -> dict[tuple[str, str], list[str]]:
    """(crate, kind) -> the stubs of every operation by which the crate would make a tensor of
    the kind, for the crates where each such operation it implements is a stub."""
    stubs: dict[tuple[str, str], dict[str, str]] = {}
    for r in found:
        if r.kind and not r.default and _stub(r) and r.creates:
            stubs.setdefault((r.crate, r.kind), {})[r.site.function] = r.id
    if not stubs or catalog.implementors is None:
        return {}
    kinds = profile.code.ops_trait_kinds
    implemented: dict[tuple[str, str], set[str]] = {}
    for trait, impls in catalog.implementors.items():
        kind = next((k for prefix, k in kinds if trait.startswith(prefix)), "")
        if not kind:
            continue
        for crate, methods in impls:
            if (crate, kind) in stubs:
                implemented.setdefault((crate, kind), set()).update(m for m in methods if entries.search(m))
    return {key: [by[m] for m in sorted(by)] for key, by in stubs.items()
            if implemented.get(key) and implemented[key] <= set(by)}


def _made_freely(found: Sequence[Refusal], catalog: DtypeCatalog, entries: re.Pattern,
                 profile) -> set[tuple[str, str]]:
    """(crate, kind) pairs where the crate implements a creation operation of the kind with no
    refusal in it: that operation may make a tensor of any dtype of the kind."""
    refusing = {(r.crate, r.site.function) for r in found if r.kind and r.creates}
    kinds = profile.code.ops_trait_kinds
    out: set[tuple[str, str]] = set()
    for trait, impls in (catalog.implementors or {}).items():
        kind = next((k for prefix, k in kinds if trait.startswith(prefix)), "")
        if kind:
            out.update((crate, kind) for crate, methods in impls
                       if any(entries.search(m) and (crate, m) not in refusing for m in methods))
    return out


def _unheld_dtypes(found: Sequence[Refusal], kind_of, free: set[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
    """(crate, dtype) -> the creation dispatches that refuse it, for the dtypes of a kind that
    some creation operation of the crate's ops refuses and none of them handles, on a crate all of
    whose creation operations of the kind refuse something (`free`: those that do not)."""
    refused: dict[tuple[str, str], list[str]] = {}
    held: set[tuple[str, str]] = set()
    for r in found:
        if not r.kind or r.decision.category != _DTYPE or not r.creates or (r.crate, r.kind) in free:
            continue
        for d in r.decision.handled:
            held.add((r.crate, d))
        for d in r.decision.rejected:
            if kind_of(d) == r.kind:
                refused.setdefault((r.crate, d), []).append(r.id)
    return {k: v for k, v in refused.items() if k not in held}


def _own_kind(r: Refusal, kind_of) -> list[str]:
    """The dtypes the refusal refuses that its operation can be given: of its ops trait's kind."""
    return [d for d in r.decision.rejected if not r.kind or kind_of(d) == r.kind]


def _creation(r: Refusal, uncreatable, unheld, kind_of) -> Reach | None:
    if r.kind and not r.default and not r.creates:
        stubs = uncreatable.get((r.crate, r.kind))
        if stubs:
            return Reach(PREEMPTED, tuple((i, "creation") for i in stubs))
    if r.decision.category != _DTYPE or r.creates:
        return None
    own = _own_kind(r, kind_of)
    if not own or not all((r.crate, d) in unheld for d in own):
        return None
    ids = dict.fromkeys(i for d in own for i in unheld[(r.crate, d)])
    return Reach(PREEMPTED, tuple((i, "creation") for i in ids))


# -- a backward pass after its forward pass ---------------------------------------------------------

def _forward(r: Refusal, backward: str, by_op, kind_of, catalog: DtypeCatalog) -> Reach | None:
    if not r.operation.endswith(backward) or len(r.operation) == len(backward):
        return None
    forwards = [f for f in by_op.get((r.crate, r.operation[:-len(backward)]), ()) if f.id != r.id]
    if not forwards:
        return None
    if _stub(r):
        ids = [f.id for f in forwards if _stub(f)]
    elif r.decision.category == _DTYPE:
        own = set(_own_kind(r, kind_of))
        if not own:
            return Reach(UNKNOWN)
        covering = [f for f in forwards if f.decision.category == _DTYPE and own & set(f.decision.rejected)]
        ids = [f.id for f in covering] if own <= {d for f in covering for d in f.decision.rejected} else []
        ids = ids or [f.id for f in forwards if _stub(f)]
    else:
        refused = _refused_variants(r, catalog)
        if refused is None:
            return Reach(UNKNOWN)
        covering = []
        covered: set[str] = set()
        for f in forwards:
            theirs = _refused_variants(f, catalog) if not _stub(f) else None
            if _stub(f) or (theirs and refused & theirs):
                covering.append(f)
                covered |= theirs or refused
        ids = [f.id for f in covering] if refused <= covered else []
    return Reach(PREEMPTED, tuple((i, "forward") for i in ids)) if ids else None


def _catch_all_of_one_enum(r: Refusal) -> tuple[list[ArmFacts], str] | None:
    """The other arms and the one enum they name, when the refusing site is a match's catch-all
    arm beside arms of a single enum; None otherwise."""
    s = r.site
    if s.context != "match-arm" or not (0 <= s.arm_index < len(s.arms)) or not s.arms[s.arm_index].catch_all:
        return None
    others = [a for i, a in enumerate(s.arms) if i != s.arm_index]
    enums = {ref.enum for a in others for ref in a.refs}
    if len(enums) != 1:
        return None
    return others, enums.pop()


def _refused_variants(r: Refusal, catalog: DtypeCatalog) -> set[str] | None:
    """`Enum::Variant` of every variant the refusing arm takes: those it names, or for a
    catch-all the enum's variants the other arms leave (None when the enum is not known)."""
    if r.variants:
        return set(r.variants)
    beside = _catch_all_of_one_enum(r)
    if beside is None:
        return None
    others, enum = beside
    named = {ref.variant for a in others for ref in a.refs}
    d = catalog.resolve(enum, named, r.path, r.crate)
    if d is None:
        return None
    return {f"{enum}::{v}" for v, _ in d.variants if v not in named}


# -- every value that exists today handled ----------------------------------------------------------

def _exhaustive(r: Refusal, catalog: DtypeCatalog, foreign: dict[str, tuple[str, ...]]) -> Reach | None:
    beside = _catch_all_of_one_enum(r)
    if beside is None:
        return None
    others, enum = beside
    declared = foreign.get(enum)
    if declared is None:
        return None
    covered = _covered_whole(others)
    if covered is None or catalog.is_defined_anywhere(enum):
        return None
    return Reach(PREEMPTED, ((None, "exhaustive"),)) if set(declared) <= covered else None
