"""The game store: every game's record in SQLite (the standard library's ``sqlite3``, WAL
mode), so a game outlives a reload, a restart, a kill -9 and the process that made it.

A record is what rebuilds a game exactly: its options (opponent, rules, mode, seat), the
deal's seed, the opponent's own seed, and the person's moves in order (the agent's
replies follow from those, as every agent here is deterministic given its seed). It is
the game's record too: ``agents.play.game.Game.record()`` adds the moves of both sides
and the results, and shows the seed and every hand only once the game is over.

Each row carries a version; a move is written only over the version it was computed
from (``save`` returns False otherwise), so two processes serving one game serialise
its moves without holding a lock while the bot thinks. A write is one transaction:
a kill at any moment leaves the store as it was before the move or after it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    record TEXT NOT NULL,      -- JSON: options, seeds, the person's moves
    version INTEGER NOT NULL,  -- one more with every move
    updated REAL NOT NULL      -- time of the last move (a game with no move expires)
)
"""


def default_path() -> Path:
    """``$XDG_DATA_HOME/ginenv/games.sqlite3`` (``~/.local/share/...`` without it)."""
    import os

    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "ginenv" / "games.sqlite3"


class GameStore:
    """Games' records by id in one SQLite file (or ``":memory:"``, for tests)."""

    def __init__(self, path=":memory:"):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._memory = None
        with self._connect() as db:
            db.execute(SCHEMA)

    def _connect(self, write: bool = True):
        """A transaction on this thread's connection (a memory store shares its single
        connection): ``write`` takes the write lock at once, a read shares the file with
        other processes' readers and writer (WAL)."""
        if self.path == ":memory:":
            if self._memory is None:
                self._memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
                self._lock = threading.Lock()
            return _Locked(self._memory, self._lock, write)
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a commit survives a crash of the process
            self._local.db = db
        return _Plain(db, write)

    def create(self, gid: str, record: dict) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT INTO games (id, record, version, updated) VALUES (?, ?, 0, ?)",
                (gid, json.dumps(record), time.time()),
            )

    def load(self, gid: str):
        """``(record, version)``, or None for an unknown game."""
        with self._connect(write=False) as db:
            row = db.execute("SELECT record, version FROM games WHERE id = ?", (gid,)).fetchone()
        return None if row is None else (json.loads(row[0]), int(row[1]))

    def save(self, gid: str, record: dict, version: int) -> bool:
        """Write ``record`` as version ``version + 1`` if the stored one is still
        ``version``; False if another process moved first (nothing written)."""
        with self._connect() as db:
            cur = db.execute(
                "UPDATE games SET record = ?, version = version + 1, updated = ? WHERE id = ? AND version = ?",
                (json.dumps(record), time.time(), gid, version),
            )
        return cur.rowcount == 1

    def ids(self) -> list:
        with self._connect(write=False) as db:
            return [r[0] for r in db.execute("SELECT id FROM games ORDER BY id")]

    def count(self) -> int:
        with self._connect(write=False) as db:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def expire(self, idle_seconds: float) -> int:
        """Delete the games with no move for ``idle_seconds``; returns how many."""
        with self._connect() as db:
            cur = db.execute("DELETE FROM games WHERE updated < ?", (time.time() - idle_seconds,))
        return cur.rowcount

    def delete(self, gid: str) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM games WHERE id = ?", (gid,))


class _Plain:
    """A connection as a context manager: one transaction (commit, or roll back)."""

    def __init__(self, db, write: bool = True):
        self.db, self.write = db, write

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE" if self.write else "BEGIN")
        return self.db

    def __exit__(self, kind, value, tb):
        self.db.execute("ROLLBACK" if kind else "COMMIT")
        return False


class _Locked(_Plain):
    """The memory store's one connection, shared by threads one at a time."""

    def __init__(self, db, lock, write: bool = True):
        super().__init__(db, write)
        self.lock = lock

    def __enter__(self):
        self.lock.acquire()
        return super().__enter__()

    def __exit__(self, kind, value, tb):
        try:
            return super().__exit__(kind, value, tb)
        finally:
            self.lock.release()
