"""Settings of a dtype a backend never creates: a quantization scheme's variant (a level, a value)
every creation of a quantized tensor refuses. A tensor holding it never exists there, so an
operation refusing it on an existing tensor is no panic a user meets: the creation's refusal comes
first. Such an operation's cell is handled on it (its reason says the variant is never created),
with the creations' refusals as what preempts it; the creations keep their own cells.

Which variants a creation makes is read as `cannot hold` reads dtypes (limits.py): a creation
that handles the variant makes it, one that says nothing of the enum passes the value on and is
taken to make it, one that refuses it (or is a stub) does not. A creation's say is its own
settings row, and the matches its calls reach in the library crates no backend is (burn's shared
`QuantizedBytes` decoding, which a backend's `q_from_data` hands the scheme to): the settings
view follows calls within a crate only."""

from __future__ import annotations

import re

from analyzer.features.coverage.callgraph import _GENERIC_CALLS, CallGraph
from analyzer.features.coverage.model import HANDLED, PANICS, PARTIAL, Operation, Site
from analyzer.features.coverage.settings import Matches

# The operations that make a quantized tensor: from host data, or from a float tensor and a scheme.
_CREATES = re.compile(r"(?:^|_)(?:from_data|empty|zeros|ones|full|random)$|^quantize(?:_dynamic)?$")
NEVER_CREATED = "never created"


def creates(operation: Operation, kind: str) -> bool:
    """Whether an operation of `kind` makes a tensor of it (a creation, not an operation on one)."""
    return operation.kind == kind and bool(_CREATES.search(operation.name))


Says = dict[tuple[str, str], dict[tuple[str, str], list[tuple[str, Site]]]]


def creation_says(graph: CallGraph, matches: Matches, creators: set[tuple[str, str]]) -> Says:
    """Per creation operation, (enum, variant) -> the (status, site) of each setting match its
    calls reach: by name within its crate, and into crates that implement no operation (a name
    defined there, when its own crate defines none)."""
    by_fn: dict[int, list[tuple[str, dict[str, tuple[str, Site | None]], Site]]] = {}
    for fn, _, enum, statuses, site in matches:
        by_fn.setdefault(fn, []).append((enum, statuses, site))
    backends = {c for c, _ in creators} | {f.crate for i, f in enumerate(graph.fns) if graph.is_operation(i)}
    named: dict[tuple[str, str], list[int]] = {}
    library: dict[str, list[int]] = {}
    for i, f in enumerate(graph.fns):
        named.setdefault((f.crate, f.facts.name), []).append(i)
        if f.crate not in backends:
            library.setdefault(f.facts.name, []).append(i)
    out: Says = {}
    for start, f in enumerate(graph.fns):
        if not graph.is_operation(start) or (f.crate, f.facts.name) not in creators:
            continue
        says = out.setdefault((f.crate, f.facts.name), {})
        seen = {start}
        queue = [start]
        for i in queue:  # grows as it is read: a FIFO queue
            g = graph.fns[i]
            for enum, statuses, site in by_fn.get(i, ()):
                for variant, (status, arm) in statuses.items():
                    says.setdefault((enum, variant), []).append((status, arm or site))
            for name in g.facts.calls:
                if name in _GENERIC_CALLS:
                    continue
                for j in named.get((g.crate, name)) or library.get(name, []):
                    if j not in seen:
                        seen.add(j)
                        queue.append(j)
    return out


def never_created(settings, says, ops: dict[tuple[str, str], Operation], kind: str,
                  stubs: dict[tuple[str, str], Site]) -> dict[tuple[str, str, str], list[tuple[str, Site]]]:
    """(crate, enum, variant) of each setting variant of `kind`'s operations the backend never
    creates, with the creations that refuse it and where: it has a creation of the kind, and
    every one refuses the variant (a stub refuses every one)."""
    rows: dict[tuple[str, str, str, str], list[tuple[str, Site]]] = {}
    known: dict[str, dict[tuple[str, str], None]] = {}
    for st in settings:
        operation = ops.get((st.crate, st.operation))
        if operation is None or operation.kind != kind:
            continue
        known.setdefault(st.crate, {})[(st.enum, st.variant)] = None
        first = next(iter(st.sites), None)
        if first is not None:
            rows.setdefault((st.crate, st.operation, st.enum, st.variant), []).append((st.status, first))
    creators: dict[str, list[str]] = {}
    for (crate, name), operation in sorted(ops.items()):
        if creates(operation, kind):
            creators.setdefault(crate, []).append(name)
    out: dict[tuple[str, str, str], list[tuple[str, Site]]] = {}
    for crate, variants in known.items():
        for enum, variant in variants:
            refused: list[tuple[str, Site]] = []
            for name in creators.get(crate, ()):
                stub = stubs.get((crate, name))
                if stub is not None:
                    refused.append((name, stub))
                    continue
                said = rows.get((crate, name, enum, variant), []) + says.get((crate, name), {}).get((enum, variant), [])
                if not said or any(status in (HANDLED, PARTIAL) for status, _ in said):
                    break  # it makes the variant (or passes the scheme on unchecked)
                refused.append((name, next((site for status, site in said if status == PANICS), said[0][1])))
            else:
                if refused:
                    out[(crate, enum, variant)] = refused
    return out
