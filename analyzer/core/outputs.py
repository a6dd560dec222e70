"""Writing outputs whole or not at all: a temporary file in the same folder, then a rename.

Every output goes through here, under one policy for what is already at the target path:
- nothing, or a regular file: written to a temporary sibling, then renamed over it;
- a character device (`/dev/null`, a terminal, through any links), or one of the process's own
  descriptors named as `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` or `/proc/self/fd/N` (a pipe
  too): written through, as a shell redirection would, since a rename would replace the device
  node or the link with a regular file;
- anything else (a symlink to a file, a FIFO, a socket, a block device, a folder): refused with one
  line, since writing through a link writes wherever it points and a FIFO blocks.

The rename is what makes an output whole against the run's own failures (an error, a full disk,
a kill): the path holds the old file or the new one, never a part. The temporary file is not
synced to the disk before it: the sync would only add survival of a machine crash to outputs a
rerun makes again from the repository, and it waits for the disk (and for whatever else the
system has to write) on every run.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Mapping
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


def ensure_writable_file(path: Path) -> None:
    """Fail before any work when `path` cannot take an output: what is there is refused by the
    policy above, or its folder cannot hold a new file (a device written through needs neither)."""
    if not _through(path):
        ensure_writable_dir(path.parent)


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
    One listing of the folder, whatever the number of outputs. A staging folder (an export's) is
    removed with what it holds."""
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
            if tmp.is_dir() and not tmp.is_symlink():
                shutil.rmtree(tmp)
            else:
                tmp.unlink()
        except OSError:
            pass


def staging_dir(target: Path) -> Path:
    """A new private folder beside `target` to build it in, named as temporary siblings are (so a
    later run sweeps it when this one is killed); the stale ones of killed runs are removed first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(target.parent, {target.name})
    return Path(tempfile.mkdtemp(prefix=_temp_prefix(target), suffix=".tmp", dir=target.parent))


_OWN_DESCRIPTOR = re.compile(r"^/(?:dev/fd|proc/self/fd)/(\d+)$")
_STANDARD = {"/dev/stdout": 1, "/dev/stderr": 2}


def _own_descriptor(path: Path) -> int | None:
    text = os.path.normpath(str(path))
    if text in _STANDARD:
        return _STANDARD[text]
    m = _OWN_DESCRIPTOR.match(text)
    return int(m.group(1)) if m else None


def _what(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _through(path: Path) -> bool:
    """Whether `path` is written through rather than replaced (see the module's policy); a
    UserError when what is there may be neither."""
    if _own_descriptor(path) is not None:
        return True
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}; choose another --out") from None
    if stat.S_ISREG(mode):
        return False
    if stat.S_ISDIR(mode):
        raise UserError(f"cannot write {path}: a folder is in the way; move it or choose another --out")
    try:
        if stat.S_ISCHR(os.stat(path).st_mode):
            return True
    except OSError:
        pass  # a dangling link
    raise UserError(f"cannot write {path}: it is {_what(mode)}, not a regular file, and is never replaced "
                    f"or written through; remove it or choose another --out")


def _write_through(path: Path, data: bytes) -> None:
    fd = _own_descriptor(path)
    opened = fd is None
    if fd is None:
        fd = os.open(path, os.O_WRONLY | os.O_NOCTTY)  # never created, never truncated
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        if opened:
            os.close(fd)


# Test hook: with this variable set to a file name, a write stops when every temporary file is
# written and none renamed yet, writes their names to that file and waits, so a test can kill the
# run at exactly that point.
HOLD_BEFORE_RENAME = "BURN_ERRORS_TEST_HOLD_BEFORE_RENAME"


def _hold(path: str, temps: list[str]) -> None:
    with open(path + ".part", "w", encoding="utf-8") as f:
        f.write("\n".join(temps))
    os.replace(path + ".part", path)
    threading.Event().wait()


def write_files(files: Mapping[Path, str | bytes | list[bytes]]) -> None:
    """Write every file to a temporary sibling first; rename them into place only when all are
    written, so a failure leaves the previous outputs exactly as they were. A device or one of the
    process's descriptors is written through, after the others are in place. A text is written as
    UTF-8; bytes (a document already encoded, or the pieces of one as the results cache serves
    it) as they are."""
    through = {path for path in files if _through(path)}
    temps: list[tuple[str, Path]] = []
    path = next(iter(files), Path("."))
    try:
        by_folder: dict[Path, set[str]] = {}
        for path in files:
            if path not in through:
                by_folder.setdefault(path.parent, set()).add(path.name)
        for folder, names in by_folder.items():
            folder.mkdir(parents=True, exist_ok=True)
            _remove_stale_temps(folder, names)
        for path, text in files.items():
            if path in through:
                continue
            fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=".tmp", dir=path.parent)
            temps.append((tmp, path))
            with os.fdopen(fd, "wb") as fh:
                fh.writelines(_pieces(text))
            # mkstemp makes the file private (0600); an output gets the permissions any new file would.
            os.chmod(tmp, 0o666 & ~_umask())
        hold = os.environ.get(HOLD_BEFORE_RENAME)
        if hold:
            _hold(hold, [tmp for tmp, _ in temps])
        for tmp, path in temps:
            os.replace(tmp, path)
        temps = []
        for path in through:
            _write_through(path, b"".join(_pieces(files[path])))
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}; check the folder's permissions and free "
                        f"space") from None
    except UnicodeEncodeError:
        raise UserError(f"cannot write {path}: its text holds a lone surrogate, which UTF-8 cannot hold; "
                        f"run `burn-errors validate` on the records it came from") from None
    finally:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _pieces(text: str | bytes | list[bytes]) -> list[bytes]:
    if isinstance(text, str):
        return [text.encode("utf-8")]
    return [text] if isinstance(text, bytes) else text


def write_file(path: Path, text: str | bytes | list[bytes]) -> None:
    write_files({path: text})
