"""Reading input files under one policy: records, answers, an export's index, `export.json`.

A file to read must be a regular file (through any links): a FIFO would block the read, a device
such as `/dev/zero` never end it. It is opened non-blocking (opening a FIFO then neither waits for
a writer, and a file that would block a read, such as `/proc/kmsg`, fails it instead), checked
with `fstat` on the descriptor it is read from (no window for a swap between a check and the
open), and read up to a bound: a file past it is refused rather than read into memory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from analyzer.core.errors import UserError

# Records files of a million lines stay far below this; past it a file is refused unread.
MAX_INPUT_BYTES = 1 << 30
_CHUNK = 1 << 20


def _a(what: str) -> str:
    return f"{'an' if what[:1] in 'aeiou' else 'a'} {what}"


def kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(path: str | Path, what: str = "file", limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file `path`, or a UserError in one line naming `what` it was to be."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UserError(f"no such {what}: {path}") from None
    except IsADirectoryError:
        raise UserError(f"{path} is a folder; give {_a(what)}") from None
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{path} is {kind_of(info.st_mode)}, not a regular file; give {_a(what)}")
        if info.st_size > limit:
            raise UserError(f"{path} is larger than the {limit:,}-byte limit for {_a(what)}")
        parts: list[bytes] = []
        total = 0
        while True:  # to the end, not to st_size: files under /proc report a size of 0
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise UserError(f"{path} is larger than the {limit:,}-byte limit for {_a(what)}")
            parts.append(chunk)
        return b"".join(parts)
    except BlockingIOError:
        raise UserError(f"{path} would block the read (a stream, not a file); give {_a(what)}") from None
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from None
    finally:
        os.close(fd)


def read_text(path: str | Path, what: str = "file", limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of the regular file `path` (see read_bytes)."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text; give {_a(what)}") from None
