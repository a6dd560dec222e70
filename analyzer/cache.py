"""Per-file cache: parse facts keyed by git blob id, the rules hash and the tool version.

One SQLite file in the cache folder. WAL mode and a busy timeout let two runs share it; a file
that is corrupt or was written by another cache layout is moved aside and rebuilt, never trusted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import zlib
from pathlib import Path

LAYOUT = "facts-v1"


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
        folder.mkdir(parents=True, exist_ok=True)
        try:
            self.db = self._open()
        except sqlite3.DatabaseError:
            self._move_aside()
            self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        db.execute("PRAGMA busy_timeout = 60000")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE key = 'layout'").fetchone()
        if row is None:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('layout', ?)", (LAYOUT,))
        elif row[0] != LAYOUT:
            db.close()
            raise sqlite3.DatabaseError(f"cache layout {row[0]} is not {LAYOUT}")
        db.execute("CREATE TABLE IF NOT EXISTS facts (blob TEXT NOT NULL, tag TEXT NOT NULL, "
                   "data BLOB NOT NULL, PRIMARY KEY (blob, tag))")
        db.execute("PRAGMA quick_check").fetchone()
        return db

    def _move_aside(self) -> None:
        stamp = time.strftime("%Y%m%d%H%M%S")
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                p.replace(Path(str(self.path) + f".corrupt-{stamp}{suffix}"))

    def get_many(self, blobs: list[str]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        try:
            for i in range(0, len(blobs), 500):
                chunk = blobs[i:i + 500]
                marks = ",".join("?" * len(chunk))
                for blob, data in self.db.execute(
                        f"SELECT blob, data FROM facts WHERE tag = ? AND blob IN ({marks})", (self.tag, *chunk)):
                    try:
                        out[blob] = json.loads(zlib.decompress(data))
                    except (zlib.error, ValueError):
                        continue  # a damaged row is a miss; it is rewritten below
        except sqlite3.DatabaseError:
            return {}
        self.hits += len(out)
        self.misses += len(blobs) - len(out)
        return out

    def put_many(self, items: dict[str, dict]) -> None:
        rows = [(b, self.tag, zlib.compress(json.dumps(d, separators=(",", ":")).encode(), 1))
                for b, d in items.items()]
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?)", rows)
        except sqlite3.DatabaseError:
            pass  # the cache is an optimisation; a failed write never fails the run

    def close(self) -> None:
        self.db.close()
