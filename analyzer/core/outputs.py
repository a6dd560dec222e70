"""Writing outputs whole or not at all: a temporary file in the same folder, then a rename."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

from analyzer.core.errors import UserError


def ensure_writable_dir(folder: Path) -> None:
    """Fail before any work when `folder` cannot hold outputs."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UserError(f"cannot write to {folder}: {e.strerror or e}; choose another folder with --out") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temp_prefix(path: Path) -> str:
    """Temporary siblings are `.<name>.<pid>.<random>.tmp`: the pid tells a later run whether
    the writer is still alive."""
    return f".{path.name}.{os.getpid()}."


def _remove_stale_temps(folder: Path, names: set[str]) -> None:
    """Remove the temporary siblings of the outputs `names` in `folder` left by a run that was
    killed while writing (a SIGKILL leaves no chance to clean up); those of a live writer stay.
    One listing of the folder, whatever the number of outputs."""
    for tmp in folder.glob(".*.tmp"):
        parts = tmp.name[1:-len(".tmp")].rsplit(".", 2)  # <name>.<pid>.<random>
        if len(parts) != 3 or parts[0] not in names or not parts[1].isdigit():
            continue
        try:
            os.kill(int(parts[1]), 0)
            continue  # the writer is alive
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, ValueError):
            continue  # alive under another user, or not a pid after all
        try:
            tmp.unlink()
        except OSError:
            pass


# Test hook: with this variable set to a file name, a write stops when every temporary file is
# written and none renamed yet, writes their names to that file and waits, so a test can kill the
# run at exactly that point.
HOLD_BEFORE_RENAME = "BURN_ERRORS_TEST_HOLD_BEFORE_RENAME"


def _hold(path: str, temps: list[str]) -> None:
    with open(path + ".part", "w", encoding="utf-8") as f:
        f.write("\n".join(temps))
    os.replace(path + ".part", path)
    threading.Event().wait()


def write_files(files: dict[Path, str]) -> None:
    """Write every file to a temporary sibling first; rename them into place only when all are
    written, so a failure leaves the previous outputs exactly as they were."""
    for path in files:
        if path.is_dir():
            raise UserError(f"cannot write {path}: a folder is in the way; move it or choose another --out")
    temps: list[tuple[str, Path]] = []
    try:
        by_folder: dict[Path, set[str]] = {}
        for path in files:
            by_folder.setdefault(path.parent, set()).add(path.name)
        for folder, names in by_folder.items():
            folder.mkdir(parents=True, exist_ok=True)
            _remove_stale_temps(folder, names)
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=".tmp", dir=path.parent)
            temps.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            # mkstemp makes the file private (0600); an output gets the permissions any new file would.
            os.chmod(tmp, 0o666 & ~_umask())
        hold = os.environ.get(HOLD_BEFORE_RENAME)
        if hold:
            _hold(hold, [tmp for tmp, _ in temps])
        for tmp, path in temps:
            os.replace(tmp, path)
        temps = []
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}; check the folder's permissions and free "
                        f"space") from None
    finally:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def write_file(path: Path, text: str) -> None:
    write_files({path: text})
