"""records.jsonl: one `{"record": ..., "analysis": ...}` object per line; reading it back."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from ..errors import UserError
from ..record import RecordLine


def dumps(lines: list[RecordLine]) -> str:
    return "".join(line.to_json_line() + "\n" for line in lines)


def validate_lines(text: str) -> tuple[list[RecordLine], list[tuple[int, str]]]:
    """Parse every line; return the good ones and (line number, reason) for the bad ones."""
    good: list[RecordLine] = []
    bad: list[tuple[int, str]] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            good.append(RecordLine.model_validate(json.loads(raw)))
        except json.JSONDecodeError as e:
            bad.append((number, f"not JSON ({e.msg} at column {e.colno})"))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            bad.append((number, f"{where}: {first['msg']}"))
    return good, bad


def read_text(path: str | Path) -> str:
    """The text of a records file, or a UserError that says what is wrong with the file."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"no such records file: {path}; run `burn-errors extract` to make one") from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text; give a records.jsonl written by burn-errors extract") from None
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from None


def read(path: str | Path) -> list[RecordLine]:
    """Read a records file; any bad line is an error that names it."""
    good, bad = validate_lines(read_text(path))
    if bad:
        number, reason = bad[0]
        more = f" (and {len(bad) - 1} more bad lines)" if len(bad) > 1 else ""
        raise UserError(f"{path}:{number}: {reason}{more}; run `burn-errors validate {path}` to list them")
    return good
