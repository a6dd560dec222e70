"""The call graph of the operations view, from the code facts of an extraction: per crate, the
functions, who calls a name, which functions invoke a macro and which macros invoke which. Calls
are matched by name within a crate (no types are resolved), so a helper called from several
operations is reached from each."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from analyzer.profiles import current
from analyzer.facts.model import FileFacts, FnFacts, MacroCall, MacroDefFacts

# Method names every type has (std traits): a call of one says nothing about which helper runs.
_GENERIC_CALLS = frozenset(("new", "from", "into", "clone", "default", "fmt", "eq", "hash", "try_from",
                            "try_into", "to_string", "as_ref", "unwrap", "expect", "map", "iter", "len", "max", "min",
                            "sum", "abs", "get", "insert", "push", "contains", "is_empty", "to_vec"))
#: The dtype list of a macro invocation the audit cannot read.
UNREADABLE = ("?",)

Code = Iterable[tuple[str, str, FileFacts]]  # (path, crate, facts) of every file with code facts


def ops_traits(code: Code) -> dict[str, str]:
    """Backend ops traits defined in the tree: name -> the crate that defines it."""
    word = current().backend_word
    out: dict[str, str] = {}
    for _, crate, facts in code:
        for t in facts.traits:
            if word.search(t.header):
                out.setdefault(t.name, crate)
    return out


@dataclass
class Fn:
    path: str
    crate: str
    facts: FnFacts


class CallGraph:
    """Functions are numbered in the order of `code`; `operations` are the (crate, method) pairs
    that implement a backend operation of one of `traits`."""

    def __init__(self, code: Code, traits: Collection[str], operations: Collection[tuple[str, str]]):
        self.fns: list[Fn] = []
        self._callers: dict[tuple[str, str], list[int]] = {}
        self._fns_in: dict[str, list[int]] = {}
        self._macro_defs: dict[tuple[str, str], list[MacroDefFacts]] = {}
        self._invocations: dict[tuple[str, str], list[tuple[int, MacroCall]]] = {}  # (crate, macro) -> invocations
        for path, crate, facts in code:
            for f in facts.functions:
                i = len(self.fns)
                self.fns.append(Fn(path, crate, f))
                self._fns_in.setdefault(path, []).append(i)
                for inv in f.macros:
                    self._invocations.setdefault((crate, inv.name), []).append((i, inv))
                for name in f.calls:
                    if name not in _GENERIC_CALLS:
                        self._callers.setdefault((crate, name), []).append(i)
            for m in facts.macro_defs:
                self._macro_defs.setdefault((crate, m.name), []).append(m)
        self._is_op = [f.facts.trait in traits and (f.crate, f.facts.name) in operations for f in self.fns]
        # Macros whose bodies invoke a macro, per crate.
        self._invoked_by: dict[tuple[str, str], set[str]] = {}
        for (crate, name), defs in self._macro_defs.items():
            for d in defs:
                for inv in d.macros:
                    self._invoked_by.setdefault((crate, inv.name), set()).add(name)

    def invocations(self, crate: str, macro: str) -> Iterable[tuple[int, MacroCall]]:
        """The invocations of `macro` in the crate's functions: (function, invocation)."""
        return self._invocations.get((crate, macro), ())

    def is_operation(self, i: int) -> bool:
        """Whether function `i` implements a backend operation."""
        return self._is_op[i]

    def operations_reaching(self, start: int) -> list[str]:
        """The operations whose implementation reaches function `start` (breadth first over
        callers by name, each function once)."""
        seen = {start}
        queue = [start]
        found = []
        for i in queue:  # the list grows as it is read: a FIFO queue
            f = self.fns[i]
            if self._is_op[i]:
                found.append(f.facts.name)
            for j in self._callers.get((f.crate, f.facts.name), ()):
                if j not in seen:
                    seen.add(j)
                    queue.append(j)
        return found

    def operations_reaching_for(self, start: int, dtypes: frozenset[str],
                                edge: Callable[[int, str], frozenset[str] | None]) -> dict[str, frozenset[str]]:
        """The operations whose implementation reaches function `start`, each with the dtypes
        (of `dtypes`) some path from it carries there: `edge(caller, callee name)` is the dtypes a
        caller's calls of that name are made for (None: every dtype). A function is walked again
        only when more dtypes reach it, so each is walked at most once per dtype."""
        reach: dict[int, frozenset[str]] = {start: dtypes}
        queue = [start]
        for i in queue:  # grows as it is read: a FIFO queue
            f = self.fns[i]
            carried = reach[i]
            for j in self._callers.get((f.crate, f.facts.name), ()):
                allowed = edge(j, f.facts.name)
                through = carried if allowed is None else carried & allowed
                before = reach.get(j, frozenset())
                if through - before:
                    reach[j] = before | through
                    queue.append(j)
        out: dict[str, frozenset[str]] = {}
        for i, ds in reach.items():
            if self._is_op[i] and ds:
                name = self.fns[i].facts.name
                out[name] = out.get(name, frozenset()) | ds
        return out

    def reaching_macros(self, crate: str, target: str) -> set[str]:
        """The macros whose bodies reach macro `target` (itself included)."""
        seen = {target}
        queue = [target]
        for name in queue:
            for caller in self._invoked_by.get((crate, name), ()):
                if caller not in seen:
                    seen.add(caller)
                    queue.append(caller)
        return seen

    def default_lists(self, crate: str, macro: str, target: str, reach: set[str], memo: dict) -> set[tuple]:
        """The dtype lists a list-less invocation of `macro` passes on to `target`."""
        key = macro
        if key in memo:
            return memo[key]
        memo[key] = set()  # a cycle adds nothing
        out: set[tuple] = set()
        for d in self._macro_defs.get((crate, macro), []):
            for inv in d.macros:
                if inv.name == target:
                    if inv.unreadable:
                        out.add(UNREADABLE)
                    elif inv.dtypes is not None:
                        out.add(tuple(inv.dtypes))
                    elif macro != target:
                        out |= self.default_lists(crate, target, target, reach, memo)
                elif inv.name in reach and inv.name != macro:
                    out |= self.default_lists(crate, inv.name, target, reach, memo)
        memo[key] = out
        return out

    def enclosing_fn(self, path: str, function: str, line: int) -> int | None:
        """The innermost function of that name in the file around `line`."""
        best = None
        for i in self._fns_in.get(path, ()):
            f = self.fns[i].facts
            innermost = best is None or f.line >= self.fns[best].facts.line
            if f.name == function and f.line <= line <= f.end_line and innermost:
                best = i
        return best
