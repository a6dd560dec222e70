"""records.jsonl: one `{"record": ..., "analysis": ...}` object per line; reading it back."""

from __future__ import annotations

import json
import stat
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
    """The text of a records file, or a UserError that says what is wrong with the file. A device
    (`/dev/zero`, or a link to one) is refused: it would be read forever."""
    try:
        if is_device(Path(path)):
            raise UserError(f"{path} is a device, not a records file; give a records.jsonl written by "
                            f"burn-errors extract")
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"no such records file: {path}; run `burn-errors extract` to make one") from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text; give a records.jsonl written by burn-errors extract") from None
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from None


def _value_problem(e: ValueError) -> str:
    """What json could not read, in a few words (its own message for long integers is long)."""
    return "it holds an integer too long to read" if "digits" in str(e) else str(e)


def is_device(path: Path) -> bool:
    """A character or block device, through any links (a FIFO is a stream that ends: allowed)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False  # reading it reports what is wrong
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def read(path: str | Path) -> list[RecordLine]:
    """Read a records file; any bad line is an error that names it. JSON nested past Python's
    recursion limit, or with an integer past its digit limit, is an error too, not a crash."""
    text = read_text(path)
    try:
        good, bad = validate_lines(text)
    except RecursionError:
        raise UserError(f"{path} holds JSON nested too deep to be a records file; run `burn-errors "
                        f"validate {path}` to find the line") from None
    except ValueError as e:  # json's limit on integer digits (a ValidationError is handled inside)
        raise UserError(f"{path} is not a records file: {_value_problem(e)}; run `burn-errors validate "
                        f"{path}` to find the line") from None
    if bad:
        number, reason = bad[0]
        more = f" (and {len(bad) - 1} more bad lines)" if len(bad) > 1 else ""
        raise UserError(f"{path}:{number}: {reason}{more}; run `burn-errors validate {path}` to list them")
    return good
