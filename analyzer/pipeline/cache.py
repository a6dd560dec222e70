"""Per-file cache: parse facts keyed by git blob id, the rules hash and the tool version.

One SQLite file in the cache folder. WAL mode and a busy timeout let two runs share it; a file
that is corrupt or was written by another cache layout is moved aside and rebuilt, never trusted.

The folder is trusted only when nobody else could have written it: a cache folder, facts file or
mirror folder that is a symbolic link, belongs to another user or is writable by other users is
not used at all (`untrusted`; the run goes on without a cache, with a warning, since the cache is
an optimisation no output depends on). A row is decompressed to a bound, and one that does not
decode is a miss, rewritten.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
import zlib
from pathlib import Path
from typing import Any
from collections.abc import Callable

import orjson

LAYOUT = "facts-v1"
# Parse facts per blob, and whole extraction results per commit; both under the tag of the tool
# version and rules hash that made them.
_TABLES = (
    "CREATE TABLE IF NOT EXISTS facts (blob TEXT NOT NULL, tag TEXT NOT NULL, "
    "data BLOB NOT NULL, PRIMARY KEY (blob, tag))",
    "CREATE TABLE IF NOT EXISTS results (key TEXT NOT NULL, tag TEXT NOT NULL, "
    "data BLOB NOT NULL, PRIMARY KEY (key, tag))",
)
# The columns each table must have: a file whose tables have others (another tool's, a hand-made
# one) is of a foreign schema, moved aside and rebuilt like a corrupt one, not silently unused.
_COLUMNS = {"facts": ["blob", "tag", "data"], "results": ["key", "tag", "data"], "meta": ["key", "value"]}
_MISSING = object()
# A blob's facts are kept as two rows, told apart by a suffix of the tag: its site facts, which
# every command reads, and the code facts only the coverage audit reads (FileFacts.code_part),
# which take a parse of each file's items (less its function bodies) that extract does without.
SITES = ""
CODE = "+code"


# Far above any row the tool writes (burn's whole results are a few MB); a row that inflates past
# it is damaged or a decompression bomb, and is a miss.
MAX_ROW_BYTES = 256 << 20
# The size of the pieces a raw row is inflated to (see get_raw_pieces).
RAW_PIECE = 256 << 10


def encode(facts: dict) -> bytes:
    """One cache row: the facts as compact JSON, zlib level 1 (fast; rows are small). The JSON is
    orjson's (UTF-8, compiled), or the standard library's for what orjson refuses (a lone
    surrogate, an integer past 64 bits); either decodes to the same values."""
    try:
        text = orjson.dumps(facts)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        text = json.dumps(facts, separators=(",", ":")).encode()
    return zlib.compress(text, 1)


def _loads(raw: bytes) -> Any:
    """json.loads of a row, by orjson (compiled; a cold run decodes every parsed file's row, a
    cached run every row). What orjson refuses and the standard library reads (a lone surrogate's
    escape, an integer past 64 bits, NaN) is read by the standard library, so the values are
    json.loads's either way."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def decode(data: bytes) -> dict:
    """A row's facts; ValueError when it inflates past MAX_ROW_BYTES or is not what encode wrote."""
    inflate = zlib.decompressobj()
    raw = inflate.decompress(data, MAX_ROW_BYTES)
    if inflate.unconsumed_tail:
        raise ValueError(f"a cache row inflates past {MAX_ROW_BYTES:,} bytes")
    value = _loads(raw)
    if not isinstance(value, dict):
        raise ValueError("a cache row that is not a JSON object")
    return value


def untrusted(folder: Path) -> str | None:
    """Why `folder` must not be used as the cache (a path in it that another user could have
    written, or that leads elsewhere), or None when it may."""
    for path in (folder, folder / "facts.sqlite3", folder / "facts.sqlite3-wal", folder / "facts.sqlite3-shm",
                 folder / "repos"):
        try:
            info = os.lstat(path)
        except OSError:
            continue  # missing, or not reachable at all: opening it then says what is wrong
        if stat.S_ISLNK(info.st_mode):
            return f"{path} is a symbolic link"
        if info.st_uid != os.geteuid():
            return f"{path} belongs to another user"
        if info.st_mode & stat.S_IWOTH:
            return f"{path} is writable by other users"
        if path != folder and path.name != "repos" and not stat.S_ISREG(info.st_mode):
            return f"{path} is not a regular file"
    return None


def default_cache_dir() -> Path:
    env = os.environ.get("BURN_ERRORS_CACHE")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir
    return Path(user_cache_dir("burn-errors", appauthor=False))


class FactsCache:
    def __init__(self, folder: Path, rules_hash: str, tool_version: str):
        self.folder = folder
        self.path = folder / "facts.sqlite3"
        self.tag = f"{tool_version}:{rules_hash}"
        self.hits = 0
        self.misses = 0
        self._pending: _Behind | None = None  # the last write handed to a thread, until `_settle`
        # Why the file found was moved aside and an empty one started (corrupt, another layout or
        # schema), for the caller to warn of; None when the file was used as it was.
        self.moved_aside: str | None = None
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new cache is private
        try:
            self.db = self._open()
        except sqlite3.DatabaseError as e:
            self._move_aside()
            self.moved_aside = str(e)
            self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        # Used by one thread at a time: a `_Behind` thread writes while the caller's thread does not
        # touch the database, which waits for it first (`_settle`).
        db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA busy_timeout = 60000")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE key = 'layout'").fetchone()
        if row is None:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('layout', ?)", (LAYOUT,))
        elif row[0] != LAYOUT:
            db.close()
            raise sqlite3.DatabaseError(f"cache layout {row[0]} is not {LAYOUT}")
        for table in _TABLES:
            db.execute(table)
        for name, columns in _COLUMNS.items():
            got = [row[1] for row in db.execute(f"PRAGMA table_info({name})")]
            if got != columns:
                db.close()
                raise sqlite3.DatabaseError(f"its {name} table has the columns {', '.join(got) or 'none'}, "
                                            f"not {', '.join(columns)}")
        # No `PRAGMA quick_check` here: it reads the whole file on every run, which costs more than
        # a whole cached run. A file that is not a database fails the
        # statements above; damaged pages fail the query that reads them, and then the file is
        # moved aside and rebuilt (`_rebuild`); a damaged row fails to decode and is a miss.
        return db

    def _rebuild(self, error: sqlite3.DatabaseError) -> bool:
        """After `error` from a query: if it says the file is damaged (not merely busy or
        read-only), move it aside and start an empty cache. Whether that happened."""
        if isinstance(error, sqlite3.OperationalError):
            return False  # locked, busy, I/O, read-only: the file is not at fault
        try:
            self.db.close()
        except sqlite3.Error:
            pass
        try:
            self._move_aside()
            self.db = self._open()
        except (OSError, sqlite3.DatabaseError):
            self.db = sqlite3.connect(":memory:", isolation_level=None,  # run on, uncached
                                      check_same_thread=False)
            for table in _TABLES:
                self.db.execute(table)
        return True

    def _move_aside(self) -> None:
        """Move the damaged files aside for a look, keeping only the latest such copy (a cache
        that keeps breaking must not fill the disk with copies)."""
        for old in self.folder.glob(self.path.name + ".corrupt-*"):
            try:
                old.unlink()
            except OSError:
                pass
        stamp = time.strftime("%Y%m%d%H%M%S")
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                p.replace(Path(str(self.path) + f".corrupt-{stamp}{suffix}"))

    def get_many(self, blobs: list[str], build: Callable[[dict], Any] | None = None,
                 facet: str = SITES) -> dict[str, Any]:
        """The cached facts of `blobs` (those the cache holds) in one facet, as JSON dicts, or as
        `build(d)` when given. Identical rows (every file without facts stores the same few bytes) are
        decoded and built once and shared, so callers must not mutate what they get. A row
        that does not decode or build is a miss; the caller parses that file again."""
        self._settle()
        out: dict[str, Any] = {}
        memo: dict[bytes, Any] = {}
        try:
            for i in range(0, len(blobs), 500):
                chunk = blobs[i:i + 500]
                marks = ",".join("?" * len(chunk))
                query = f"SELECT blob, data FROM facts WHERE tag = ? AND blob IN ({marks})"
                for blob, data in self.db.execute(query, (self.tag + facet, *chunk)):
                    value = memo.get(data, _MISSING)
                    if value is _MISSING:
                        try:
                            value = decode(data)
                            if build is not None:
                                value = build(value)
                        except (zlib.error, ValueError, KeyError, TypeError, AttributeError, RecursionError):
                            value = None  # a damaged or foreign row is a miss; it is rewritten
                        memo[data] = value
                    if value is not None:
                        out[blob] = value
        except sqlite3.DatabaseError as e:
            self._rebuild(e)
            out = {}  # every blob is a miss; the caller parses them and fills the new file
        self.hits += len(out)
        self.misses += len(blobs) - len(out)
        return out

    def put_many(self, items: dict[str, dict]) -> None:
        self.put_encoded({b: encode(d) for b, d in items.items()})

    def put_encoded(self, items: dict[str, bytes], facet: str = SITES) -> None:
        """Store rows already made by `encode` (parser processes encode their own results)."""
        self._settle()
        self._put_rows(items, facet)

    def put_encoded_behind(self, batches: list[tuple[dict[str, bytes], str]]) -> None:
        """`put_encoded` of each (rows, facet) on a thread, while the caller goes on: SQLite
        leaves the GIL while it writes and syncs the file. Every other use of the cache, and
        close, waits for that thread first."""
        def write(_: None) -> None:
            for items, facet in batches:
                self._put_rows(items, facet)
        self._pending = _Behind("cache-writer", lambda: None, write, self._pending)

    def _put_rows(self, items: dict[str, bytes], facet: str) -> None:
        rows = [(b, self.tag + facet, data) for b, data in items.items()]
        for attempt in (1, 2):
            try:
                with self.db:
                    self.db.execute("BEGIN IMMEDIATE")
                    self.db.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?)", rows)
                return
            except sqlite3.DatabaseError as e:
                # The cache is an optimisation: a failed write never fails the run. A damaged
                # file is replaced and written once more.
                if attempt == 2 or not self._rebuild(e):
                    return

    # -- whole results --------------------------------------------------------------------
    # A rerun at the same commit with the same rules, tool version and options gives the same
    # outputs but for the dates: they are kept whole (one row), so such a run neither reads
    # blobs nor parses nor classifies.

    def _result_row(self, key: str) -> bytes | None:
        """The stored bytes of a results row, or None (a damaged database is rebuilt)."""
        self._settle()
        try:
            row = self.db.execute("SELECT data FROM results WHERE key = ? AND tag = ?", (key, self.tag)).fetchone()
        except sqlite3.DatabaseError as e:
            self._rebuild(e)
            return None
        return None if row is None else row[0]

    def get_result(self, key: str) -> dict | None:
        data = self._result_row(key)
        if data is None:
            return None
        try:
            return decode(data)
        except (zlib.error, ValueError, TypeError, RecursionError):
            self.drop_result(key)  # damaged: made again by this run
            return None

    def drop_result(self, key: str) -> None:
        """Forget a row that did not decode or serve, so no later run meets it again."""
        self._settle()
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute("DELETE FROM results WHERE key = ? AND tag = ?", (key, self.tag))
        except sqlite3.DatabaseError:
            pass

    def put_result(self, key: str, value: dict) -> None:
        self._settle()
        self._put_result_row(key, encode(value))

    def get_raw_result(self, key: str) -> bytes | None:
        """The bytes `put_raw_result` kept under `key`, for a result that is a document rather
        than facts (decoding it as a JSON string would cost more than the rest of a hit). A row
        that does not inflate whole, to the end of its stream, is dropped: a miss."""
        pieces = self.get_raw_pieces(key)
        return None if pieces is None else b"".join(pieces)

    def get_raw_pieces(self, key: str) -> list[bytes] | None:
        """`get_raw_result` as the pieces it inflates to, each RAW_PIECE bytes but the last (which
        is never empty): a document megabytes long is neither inflated into an output buffer that
        grows by copying nor joined, whose fresh memory costs more than the inflating. Bounded
        as a whole row is: past MAX_ROW_BYTES it is not whole, so dropped: a miss."""
        stored = self._result_row(key)
        if stored is None:
            return None
        inflate = zlib.decompressobj()
        pieces: list[bytes] = []
        size = 0
        try:
            tail = stored
            while size <= MAX_ROW_BYTES:
                piece = inflate.decompress(tail, RAW_PIECE)
                tail = inflate.unconsumed_tail
                if not piece:  # the input ran out before the stream's end, or ends it with nothing
                    break
                pieces.append(piece)
                size += len(piece)
                if inflate.eof:
                    break
            whole = inflate.eof and not tail and not inflate.unused_data and size <= MAX_ROW_BYTES
        except (zlib.error, TypeError):
            whole = False
        if not whole:
            self.drop_result(key)
            return None
        return pieces

    def put_raw_result(self, key: str, data: bytes) -> None:
        self._settle()
        self._put_result_row(key, zlib.compress(data, 1))

    def put_raw_result_soon(self, key: str, data: bytes) -> None:
        """`put_raw_result` on a thread of its own, while the caller goes on (zlib and SQLite let
        go of the interpreter lock): rows are written in the order given, each whole or not at
        all, and every later use of the cache (`close` too) waits for them first."""
        def compressed() -> bytes | None:
            try:
                return zlib.compress(data, 1)
            except (zlib.error, MemoryError, OverflowError):
                return None  # not kept: the cache is an optimisation, the run goes on as if it had none

        def write(row: bytes | None) -> None:
            if row is not None:
                self._put_result_row(key, row)
        self._pending = _Behind("cache-keeping", compressed, write, self._pending)

    def _settle(self) -> None:
        """Wait for the writes handed to threads (put_encoded_behind's, put_raw_result_soon's):
        the database is then this thread's alone. What a write raised is raised here, as the
        same write made in this thread would have raised it."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.join()
            if pending.error is not None:
                raise pending.error

    def _put_result_row(self, key: str, data: bytes) -> None:
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?)", (key, self.tag, data))
        except sqlite3.DatabaseError:
            pass  # an optimisation only

    def close(self) -> None:
        self._settle()
        self.db.close()


class _Behind(threading.Thread):
    """One write of the cache on a thread of its own: `prepare()` (compressing a row) runs at
    once, beside the caller and the writes before it; `write(prepared)` once the write handed
    over before it (`after`) is done, so writes land in the order given and never two at a time
    on the one connection. What is raised, by this write or one before it, is kept in `error`
    for the cache's next use to raise."""

    def __init__(self, name: str, prepare: Callable[[], Any], write: Callable[[Any], None],
                 after: _Behind | None):
        super().__init__(name=name)
        self.prepare: Callable[[], Any] | None = prepare
        self.write: Callable[[Any], None] | None = write
        self.after = after
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        assert self.prepare is not None and self.write is not None
        try:
            prepared = self.prepare()
            self.prepare = None  # what it held (a document's bytes) is freed once it is made
            if self.after is not None:
                self.after.join()
                self.error, self.after = self.after.error, None
            if self.error is None:
                self.write(prepared)
        except BaseException as e:
            self.error = e
        self.prepare = self.write = None
