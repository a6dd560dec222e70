"""`burn-errors lookup --format text`: the matching records for a person at a terminal, best
first. Every value from the records file or the pasted panic goes through `terminal_text`, so no
escape sequence in them reaches the terminal."""

from __future__ import annotations

from analyzer.features.lookup import Answer, Elsewhere, Lookup, Source
from analyzer.core.safe import terminal_text
from analyzer.core.wording import plural
from analyzer.sinks import Options


def _t(value: object) -> str:
    return terminal_text(value, one_line=True)


def _release_hint(result: Lookup) -> str:
    crate, version = result.release or ("", "")
    return (f"Hint: the panic comes from {_t(crate)} {_t(version)} (a crates.io path); records of another "
            f"revision may not hold its message. Without --records, lookup answers from that release's own "
            f"records: burn-errors lookup - [--repo CLONE] < panic.txt")


def understood(result: Lookup) -> str:
    """One line: what was read out of the paste (file, line, column, release, message)."""
    panic, place = result.panic, result.place
    if panic.path is None:
        where = "no location (the message alone)"
    else:
        where = f"file {_t(panic.path)}"
        if place.repo_path is not None and place.repo_path != panic.path:
            where += f" ({_t(place.repo_path)} in {_t(place.origin.repo if place.origin else '')})"
        where += f", line {panic.line}" + (f", column {panic.column}" if panic.column is not None else "")
    release = _t(place.origin.describe()) if place.origin is not None else "not named by the path"
    message = _t(panic.message)
    if len(message) > _SHOWN:
        message = message[:_SHOWN] + "..."
    return f"Understood: {where}; release {release}; message \"{message}\""


# How much of a pasted message the understood line shows.
_SHOWN = 100


def _head(result: Lookup, source: Source | None) -> list[str]:
    out = [understood(result)]
    if source is not None:
        out.append(f"Answered from {_t(source.describe())}.")
        out += [f"note: {_t(n)}" for n in source.notes]
    return out + [""]


def _elsewhere(found: Elsewhere, source: Source | None) -> list[str]:
    m = found.match
    r = m.line.record
    here = (source.rev or source.sha[:12]) if source is not None else "the paste's release"
    out = [f"No record at {_t(here)} matches the message; at {_t(found.rev)} ({found.sha[:12]}) one does:", "",
           f"1. {_t(r.errorMessage)}", f"   {_t(r.filePath)}:{r.lineNumber}",
           f"   id {r.id}" + (f" · {_t(r.pinned_url)}" if r.pinned_url else ""), ""]
    site = found.same_site
    if site is None:
        out.append(f"What changed: no record at {_t(here)} has its id: the site is not there, or is no record there.")
    else:
        s = site.record
        out.append(f"What changed: at {_t(here)} the same site ({_t(s.filePath)}:{s.lineNumber}) says "
                   f"\"{_t(s.errorMessage)}\".")
    return out


def _no_match(result: Lookup, source: Source | None, elsewhere: Elsewhere | None) -> list[str]:
    """What may help when nothing matches: a release whose record matches, the nearest records
    and, for a panic from a released crate read against a records file, that release's records."""
    out: list[str] = []
    if elsewhere is not None:
        return _elsewhere(elsewhere, source)
    if result.closest:
        out.append("No record matches the whole message; the closest"
                   + (" (at the panic's file first)" if any(n.at_location for n in result.closest) else "") + ":")
        for i, near in enumerate(result.closest, start=1):
            r = near.line.record
            flag = "  <- the panic's file" if near.at_location else ""
            out += ["", f"{i}. {_t(r.errorMessage)}", f"   {_t(r.filePath)}:{r.lineNumber}{flag}", f"   id {r.id}"]
    if result.release is not None and (source is None or source.records_file):
        out += ["", _release_hint(result)] if out else [_release_hint(result)]
    return out


def _shared(result: Lookup) -> str:
    crates = ", ".join(f"{_t(c)} ({n})" for c, n in result.shared)
    total = sum(n for _, n in result.shared)
    return (f"\"{_t(result.matches[0].line.record.errorMessage)}\" is the message of {total} records, in "
            f"{crates}; only the panic's location (`panicked at FILE:LINE:COL`) tells them apart.")


def render(answer: Answer, options: Options) -> str:
    """The text: what was understood and which records were read, then the matches, or when
    none matches another release's record or the nearest records and a hint."""
    result, shown, source, elsewhere = answer.result, answer.shown, answer.source, answer.elsewhere
    out = _head(result, source)
    n = len(result.matches)
    if not n:
        return "".join(line + "\n" for line in out + _no_match(result, source, elsewhere))
    path = result.place.repo_path or result.panic.path
    where = f" at {_t(path)}:{result.panic.line}" if path else ""
    out.append(f"{plural(n, 'record')} match{'es' if n == 1 else ''} this panic{where}"
               + (" (best first)" if n > 1 else "") + ":")
    if result.shared:
        out.append(_shared(result))
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
        out.append(f"   id {r.id}" + (f" · {_t(r.pinned_url)}" if r.pinned_url else ""))
    if len(shown) < n:
        out.append(f"\n... and {n - len(shown)} more (--limit 0 shows all)")
    if n > 1 and not result.panic.path:
        out.append("\nTip: give the whole panic (`thread '...' panicked at FILE:LINE:COL:` and the message) "
                   "to rank the site it names first.")
    return "".join(line + "\n" for line in out)
