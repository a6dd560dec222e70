"""Records files: reading every form a records file comes in, all through `load`/`read`:
- the tool's own records.jsonl;
- a JSONL of the published dataset's envelopes, `{"record": {...}, "datasetVersion": "..."}`,
  with or without `analysis`;
- one envelope file (one JSON document, pretty-printed or not), or a JSON array of envelopes;
- a folder of such files (`*.json`, `*.jsonl`, in name order; a JSON object there without a
  `record` key, such as an index, is not a record), or a folder `extract` wrote (its records.jsonl).

A record read without `analysis` keeps `analysis` None (consumers use `RecordLine.facts`), and its
`datasetVersion` is kept so it can be written back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import ValidationError

from analyzer.core.errors import UserError
from analyzer.records.model import RecordLine

# Files of a folder that are read as records files.
RECORD_FILE_SUFFIXES = (".json", ".jsonl")


# A JSON `\\uD800`-`\\uDFFF` escape: only a line holding one can decode to a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
LONE_SURROGATE = "holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair), which UTF-8 cannot write"


def _holds_surrogate(value: object) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _parse(value: object, raw: str = "") -> RecordLine | str:
    """The record in one decoded JSON value (read from `raw`), or why it is not one. Text no
    output could be written with (a lone surrogate) is refused here, so no writer meets it."""
    if _SURROGATE_ESCAPE.search(raw) and _holds_surrogate(value):
        return LONE_SURROGATE
    try:
        return RecordLine.model_validate(value)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}"


def validate_lines(text: str) -> tuple[list[RecordLine], list[tuple[int, str]]]:
    """Parse a records file's text; return the good records and (line number, reason) for the bad
    ones. JSONL, or else one JSON document (an envelope, or an array of them) at line 1."""
    good: list[RecordLine] = []
    bad: list[tuple[int, str]] = []
    document = single_document(text)
    if document is not None:
        values = document if isinstance(document, list) else [document]
        for value in values:
            parsed = _parse(value, text)
            if isinstance(parsed, str):
                bad.append((1, parsed))
            else:
                good.append(parsed)
        return good, bad
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as e:
            bad.append((number, f"not JSON ({e.msg} at column {e.colno})"))
            continue
        parsed = _parse(value, raw)
        if isinstance(parsed, str):
            bad.append((number, parsed))
        else:
            good.append(parsed)
    return good, bad


def single_document(text: str) -> object | None:
    """The text as one JSON document when it is not JSONL: its first non-blank line is not a JSON
    value of its own, yet the whole text is one (a pretty-printed envelope or array)."""
    first = next((raw for raw in text.split("\n") if raw.strip()), None)
    if first is None:
        return None
    try:
        json.loads(first)
        return None  # JSONL (a one-line envelope file is JSONL of one line)
    except json.JSONDecodeError:
        pass
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None  # bad JSONL: reported line by line
    return value if isinstance(value, (dict, list)) else None


def read_text(path: str | Path) -> str:
    """The text of a records file, or a UserError that says what is wrong with the file. Read
    under the one input policy (analyzer/core/inputs.py): a device, a FIFO or a file that would
    block is refused, never read forever. An error page given for records is named as such."""
    from analyzer.core.inputs import read_text as read_input

    text = read_input(path, "records file")
    if is_page(text):
        raise UserError(f"{path} is an error page (its text, Markdown or HTML), not a records file; give a "
                        f"records.jsonl written by burn-errors extract, or the record as JSON (a published "
                        f"page links its data as JSON)")
    return text


# The headings every error page has, in the text a reader copies or the Markdown `render` writes.
_PAGE_HEADINGS = frozenset({"error message", "source"})


def is_page(text: str) -> bool:
    """Whether a text is an error page rather than records: HTML, or text that is not JSON with
    the page's "Error message" and "Source" headings and its link line ("View on GitHub") or
    "Thrown at" line. One pass over the lines."""
    first = next((raw.strip() for raw in text.split("\n") if raw.strip()), "")
    if first[:1] in ("{", "[", ""):
        return False
    if first.lower().startswith(("<!doctype html", "<html")):
        return True
    headings: set[str] = set()
    anchor = False
    for raw in text.split("\n"):
        line = raw.strip().lstrip("#").strip().lower()
        if line in _PAGE_HEADINGS:
            headings.add(line)
        anchor = anchor or line.startswith(("view on github", "[view on github", "thrown at "))
    return headings == _PAGE_HEADINGS and anchor


def _value_problem(e: ValueError) -> str:
    """What json could not read, in a few words (its own message for long integers is long)."""
    return "it holds an integer too long to read" if "digits" in str(e) else str(e)


def is_folder(path: str | Path) -> bool:
    """Whether `path` is a folder; a path the system cannot even look up (a name too long) is not,
    so reading it then says what is wrong in one line."""
    try:
        return Path(path).is_dir()
    except OSError:
        return False


def record_files(path: str | Path) -> list[Path]:
    """The files a records path stands for: itself; for an extract output folder, its
    records.jsonl; else a folder's records files in name order."""
    p = Path(path)
    if not is_folder(p):
        return [p]
    if (p / "records.jsonl").is_file():  # `extract --out` wrote it beside manifest.json
        return [p / "records.jsonl"]
    files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix in RECORD_FILE_SUFFIXES)
    if not files:
        raise UserError(f"{path} is a folder with no records files (*.json, *.jsonl); give a "
                        f"records.jsonl or a folder of record envelopes")
    return files


def holds_no_record(text: str) -> bool:
    """A JSON object with no `record` key (an index or manifest beside the envelopes)."""
    document = single_document(text)
    if document is None:
        first = next((raw for raw in text.split("\n") if raw.strip()), "")
        try:
            document = json.loads(first)
        except json.JSONDecodeError:
            return False
    return isinstance(document, dict) and "record" not in document


def load(path: str | Path) -> tuple[list[RecordLine], list[tuple[str, str]]]:
    """Every record of a records file or folder, and ("file:line", reason) for each bad one.
    In a folder, a file that holds a JSON object without `record` (an index) is not read."""
    good: list[RecordLine] = []
    bad: list[tuple[str, str]] = []
    in_folder = is_folder(path)
    for f in record_files(path):
        text = read_text(f)
        if in_folder and holds_no_record(text):
            continue
        try:
            lines, wrong = validate_lines(text)
        except RecursionError:
            raise UserError(f"{f} holds JSON nested too deep to be a records file; run `burn-errors "
                            f"validate {f}` to find the line") from None
        except ValueError as e:  # json's limit on integer digits (a ValidationError is handled inside)
            raise UserError(f"{f} is not a records file: {_value_problem(e)}; run `burn-errors validate "
                            f"{f}` to find the line") from None
        good.extend(lines)
        bad.extend((f"{f}:{number}", reason) for number, reason in wrong)
    return good, bad


def read(path: str | Path) -> list[RecordLine]:
    """Read a records file or folder; any bad record is an error that names it, and so are two
    records sharing an id: every command reads records by this one policy, the one `validate`
    checks (an id names a page, an answer, a lineage; with two, which one is meant is anyone's
    guess, and an answer merged into both skips the content check of one)."""
    good, bad = load(path)
    if bad:
        where, reason = bad[0]
        more = f" (and {len(bad) - 1} more bad records)" if len(bad) > 1 else ""
        raise UserError(f"{where}: {reason}{more}; run `burn-errors validate {path}` to list them")
    refuse_shared_ids(good, str(path))
    return good


def refuse_shared_ids(lines: list[RecordLine], label: str) -> None:
    """A UserError naming the first id two of `lines` share."""
    seen: set[str] = set()
    for line in lines:
        rid = line.record.id
        if rid in seen:
            raise UserError(f"{label} holds id {rid} twice; records must have unique ids (run "
                            f"`burn-errors validate {label}` to list them)")
        seen.add(rid)
