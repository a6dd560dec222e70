"""`burn-errors lookup --format text`: the matching records for a person at a terminal, best
first. Every value from the records file or the pasted panic goes through `terminal_text`, so no
escape sequence in them reaches the terminal."""

from __future__ import annotations

from analyzer.features.lookup import Lookup, Match
from analyzer.core.safe import terminal_text
from analyzer.core.wording import plural


def _t(value: object) -> str:
    return terminal_text(value, one_line=True)


def _release_hint(result: Lookup) -> str:
    crate, version = result.release or ("", "")
    return (f"Hint: the panic comes from {_t(crate)} {_t(version)} (a crates.io path); records of another "
            f"revision may not hold its message. Extract that release's records and look up in them: "
            f"burn-errors extract --sha v{_t(version)} --out records-{_t(version)}/ && burn-errors lookup "
            f"... --records records-{_t(version)}/records.jsonl")


def _no_match(result: Lookup) -> str:
    """What may help when nothing matches: the nearest records and, for a panic from a released
    crate, that release's records; empty when there is neither (the command says so on stderr)."""
    out: list[str] = []
    if result.closest:
        out.append("No record matches the whole message; the closest"
                   + (" (at the panic's file first)" if any(n.at_location for n in result.closest) else "") + ":")
        for i, near in enumerate(result.closest, start=1):
            r = near.line.record
            flag = "  <- the panic's file" if near.at_location else ""
            out += ["", f"{i}. {_t(r.errorMessage)}", f"   {_t(r.filePath)}:{r.lineNumber}{flag}", f"   id {r.id}"]
    if result.release is not None:
        out += ["", _release_hint(result)] if out else [_release_hint(result)]
    return "".join(line + "\n" for line in out)


def dumps(result: Lookup, shown: list[Match], to_terminal: bool = False) -> str:
    """The text: the matches, or when none matches the nearest records and a hint."""
    n = len(result.matches)
    if not n:
        return _no_match(result)
    where = f" at {_t(result.panic.path)}:{result.panic.line}" if result.panic.path else ""
    out = [f"{plural(n, 'record')} match{'es' if n == 1 else ''} this panic{where}"
           + (" (best first)" if n > 1 else "") + ":"]
    for i, m in enumerate(shown, start=1):
        r, a = m.line.record, m.line.facts
        out.append("")
        out.append(f"{i}. {_t(r.errorMessage)}")
        flag = "  <- the panic's location" if m.at_location and m.distance == 0 else (
            "  <- the panic's file" if m.at_location else "")
        out.append(f"   {_t(r.filePath)}:{r.lineNumber}{flag}")
        out.append(f"   {_t(a.crate)} · {_t(a.function or a.operation)} · {a.category}")
        if a.rejected:
            out.append(f"   panics for: {_t(', '.join(a.rejected))}")
        if r.solutions:
            out.append(f"   first fix: {_t(r.solutions[0])}")
        out.append(f"   id {r.id} · {_t(r.githubUrl)}")
    if len(shown) < n:
        out.append(f"\n... and {n - len(shown)} more (--limit 0 shows all)")
    if n > 1 and not result.panic.path:
        out.append("\nTip: give the whole panic (`thread '...' panicked at FILE:LINE:COL:` and the message) "
                   "to rank the site it names first.")
    return "".join(line + "\n" for line in out)
