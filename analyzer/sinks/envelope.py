"""The published form: one envelope file per record, and an index.

An envelope is `{"record": {the 32 keys, in the schema's order}, "datasetVersion": TIME}`, written
as the published dataset serves it: compact JSON (no spaces after `,` and `:`), non-ASCII text as
UTF-8 rather than `\\u` escapes, and no newline at the end. Each file is named `<id>.json`: the
record id is the address of the record's page and data (`/api/errors/<id>`) and is kept across
regenerations, so a file keeps its name from one dataset version to the next.

`index.json` lists every record (id, slug, file, errorMessage, filePath, lineNumber,
backgroundTag, sorted by filePath then lineNumber then id), so a site can map a slug to its file
and build its list pages without opening every envelope.

The folder is written whole or not at all: every file goes into a new folder beside the target,
which then takes the target's place in one rename (on Linux an atomic exchange with the previous
export; elsewhere the previous export is moved aside first and put back if the rename fails).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import sys
import uuid
from datetime import datetime
from collections.abc import Callable
from pathlib import Path

from analyzer import __version__
from analyzer.core.config import SCHEMA_VERSION
from analyzer.core.errors import UserError
from analyzer.core.outputs import staging_dir
from analyzer.records.model import ErrorRecord
from analyzer.core.timestamps import utc_time

INDEX = "index.json"
FORMAT_VERSION = 1


def file_name(record_id: str) -> str:
    return f"{record_id}.json"


def dumps(record: ErrorRecord, dataset_version: str) -> str:
    """One envelope, byte for byte as the published dataset serves it."""
    envelope = {"record": record.model_dump(mode="json"), "datasetVersion": dataset_version}
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))


def index(records: list[ErrorRecord], dataset_version: str) -> dict:
    rows = sorted(records, key=lambda r: (r.filePath, r.lineNumber, r.id))
    return {
        "tool": "burn-errors", "toolVersion": __version__, "formatVersion": FORMAT_VERSION,
        "datasetVersion": dataset_version, "schemaVersion": SCHEMA_VERSION,
        "count": len(rows),
        "records": [{"id": r.id, "slug": r.slug, "file": file_name(r.id), "errorMessage": r.errorMessage,
                     "filePath": r.filePath, "lineNumber": r.lineNumber, "backgroundTag": r.backgroundTag}
                    for r in rows],
    }


def build(records: list[ErrorRecord], dataset_version: str) -> dict[str, bytes]:
    """The export's files by name: one envelope per record, then the index. A record whose text
    cannot be written as UTF-8 (a lone surrogate) is a UserError naming it."""
    files: dict[str, bytes] = {}
    for r in records:
        name = file_name(r.id)
        if name in files:
            raise UserError(f"record id {r.id} appears twice; ids name the files, so each must be unique "
                            f"(run `burn-errors validate` to list the lines)")
        files[name] = _utf8(dumps(r, dataset_version), r.id)
    files[INDEX] = _utf8(json.dumps(index(records, dataset_version), ensure_ascii=False, indent=2) + "\n",
                         "index")
    return files


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise UserError(f"record {what} holds text that cannot be written as UTF-8 (a lone surrogate); "
                        f"run `burn-errors validate` to find it") from None


def dataset_version(text: str) -> str:
    """A `--dataset-version` value as a record date (UTC, milliseconds, `Z`). Any ISO 8601 time
    with a zone is accepted and converted; a time without a zone is refused as ambiguous."""
    try:
        # Python 3.10's fromisoformat reads only its own output's shape: a `Z` zone is `+00:00` there.
        when = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO 8601 time; give one such as 2026-01-31T12:00:00.000Z") from None
    if when.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone; end it with Z for UTC, e.g. 2026-01-31T12:00:00.000Z")
    return utc_time(when)


# ---------------------------------------------------------------------------------------------
# Writing the folder


def write(out: Path, files: dict[str, bytes], *, owned: Callable[[Path], bool] | None = None,
          kind: str = "export", what: str = "an export of burn-errors") -> Path:
    """Put `files` in folder `out`, replacing a previous export there whole; returns the folder.
    `render` writes its pages the same way: `owned` tells a folder it wrote before (default: an
    export's index, and nothing beside what that index lists), `kind` and `what` name the output
    in messages."""
    out = Path(os.path.realpath(out))
    _check_target(out, owned, kind, what)
    try:
        staging = staging_dir(out)  # swept by a later run when this one is killed
    except OSError as e:
        raise UserError(f"cannot write to {out.parent}: {e.strerror or e}; choose another folder with --out") from None
    try:
        os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes it private; the export is not
        for name, data in files.items():
            with open(staging / name, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        _replace_folder(staging, out)
    except OSError as e:
        raise UserError(f"cannot write the {kind} to {out}: {e.strerror or e}; check the folder's "
                        f"permissions and free space (the previous {kind}, if any, is unchanged)") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out


def _check_target(out: Path, owned: Callable[[Path], bool] | None, kind: str, what: str) -> None:
    if out.exists() and not out.is_dir():
        raise UserError(f"cannot write the {kind} to {out}: it is a file, not a folder; choose a folder with --out")
    try:
        occupied = out.is_dir() and any(out.iterdir())
    except OSError as e:
        raise UserError(f"cannot read {out}: {e.strerror or e}; choose another folder with --out") from None
    if not occupied:
        return
    if owned is not None:
        if not owned(out):
            raise UserError(f"{out} holds files that are not {what}; choose a new or empty "
                            f"folder with --out (an earlier {kind} there is replaced whole)")
        return
    listed = _export_files(out)
    if listed is None:
        raise UserError(f"{out} holds files that are not an export of burn-errors; choose a new or empty "
                        f"folder with --out (an earlier export there is replaced whole)")
    try:
        others = sorted(p.name for p in out.iterdir() if p.name not in listed or not p.is_file() or p.is_symlink())
    except OSError as e:
        raise UserError(f"cannot read {out}: {e.strerror or e}; choose another folder with --out") from None
    if others:
        # The folder is replaced whole: anything beside the earlier export would go with it.
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise UserError(f"{out} holds an earlier export and files it did not write ({shown}); an export is "
                        f"replaced whole, so move them out or choose a new folder with --out")


def _export_files(folder: Path) -> set[str] | None:
    """The names an earlier export in `folder` wrote (its index and the files it lists), or None
    when the folder holds no export of burn-errors."""
    from analyzer.core.inputs import read_text

    try:
        head = json.loads(read_text(folder / INDEX))
    except (UserError, ValueError, RecursionError):
        return None
    if not (isinstance(head, dict) and head.get("tool") == "burn-errors" and "formatVersion" in head):
        return None
    rows = head.get("records")
    if not isinstance(rows, list):
        return None
    return {INDEX} | {r["file"] for r in rows if isinstance(r, dict) and isinstance(r.get("file"), str)}


def _replace_folder(staging: Path, out: Path) -> None:
    """Make `staging` the folder `out`. The previous export ends up in `staging` (after an
    exchange, for the caller to remove) or is removed here."""
    if not out.exists():
        os.rename(staging, out)
        return
    if _exchange(staging, out):
        return
    aside = out.parent / f".{out.name}.{uuid.uuid4().hex[:8]}.old"
    os.rename(out, aside)
    try:
        os.rename(staging, out)
    except OSError:
        os.rename(aside, out)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux renameat2 RENAME_EXCHANGE); False when the
    system cannot, so the caller falls back to two renames."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
