"""The game store: every game's record in SQLite (the standard library's ``sqlite3``, WAL
mode), so a game outlives a reload, a restart, a kill -9 and the process that made it.

A record is what rebuilds a game exactly: its options (opponent, rules, mode, seat), the
deal's seed, the opponent's own seed, and the person's moves in order (the agent's
replies follow from those, as every agent here is deterministic given its seed). It is
the game's record too: ``agents.play.game.Game.record()`` adds the moves of both sides
and the results, and shows the seed and every hand only once the game is over.

**Nothing hidden is on disk while a game is in play.** The two seeds are the whole deal
(the bot's hand, the stock's order) and the bot's future choices, so a live game's record
holds them only sealed (``sealed``: AES-GCM from the ``cryptography`` package, under a
256-bit key that is never written into the database): whoever reads the file, a backup
of it or the volume it sits on learns the options and the person's moves, nothing more.
The seeds are written in the clear once the game is over, when the person may see them
anyway. Sealing rather than keeping the deal out of the file altogether keeps what the
store is for: any process holding the key (a restarted server, another worker) rebuilds
any game. The key comes from ``$GINENV_STORE_KEY`` (64 hex digits) if set, else from the
key file ``$XDG_CONFIG_HOME/ginenv/store.key`` (``~/.config/...``; made on first use,
mode 0600 in a folder of mode 0700), apart from the data folder, so that a copy of the
data alone reveals nothing; a ``":memory:"`` store keys itself afresh. The store's folder
is made 0700 and its files (the database, its ``-wal`` and ``-shm``) 0600.

Each row carries a version; a move is written only over the version it was computed
from (``save`` returns False otherwise), so two processes serving one game serialise
its moves without holding a lock while the bot thinks. A write is one transaction:
a kill at any moment leaves the store as it was before the move or after it.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import sqlite3
import threading
import time
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from agents import strict_json

KEY_ENV = "GINENV_STORE_KEY"
KEY_BYTES = 32
#: A live record's fields that are sealed (the whole deal and the bot's choices: its
#: seed, and its moves, among which a knock's card lies face down until the hand ends).
SEALED_FIELDS = ("seed", "agent_seed", "bot_actions")

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
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "ginenv" / "games.sqlite3"


def default_key_path() -> Path:
    """``$XDG_CONFIG_HOME/ginenv/store.key`` (``~/.config/...`` without it)."""
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "ginenv" / "store.key"


class StoreError(ValueError):
    """The store's file, folder or key cannot be used; the message says which and why."""


def _key(text: str, where: str) -> bytes:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise StoreError(f"{where} must hold {2 * KEY_BYTES} hex digits (a 256-bit key), got {len(text)} characters")
    return key


def store_key() -> bytes:
    """The sealing key: ``$GINENV_STORE_KEY`` (64 hex digits), else the key file (made
    with a fresh random key, mode 0600, on first use)."""
    if os.environ.get(KEY_ENV) is not None:
        return _key(os.environ[KEY_ENV], KEY_ENV)
    path = default_key_path()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(KEY_BYTES) + "\n")
        text = path.read_text()
    except OSError as e:
        raise StoreError(f"cannot make or read the store's key file {path}: {e.strerror or e}") from None
    return _key(text, f"the store's key file {path} (remove it to make a new one)")


def _private_file(path: Path) -> None:
    """``path`` made (empty) if missing, mode 0600 either way."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)


class GameStore:
    """Games' records by id in one SQLite file (or ``":memory:"``, for tests).

    ``path``: the file (its folder is made, mode 0700, if missing); ``key``: the 32-byte
    sealing key (default ``store_key()``, a fresh one for ``":memory:"``). A path that is
    a folder, in a missing folder that cannot be made, or a file that is not this
    store's database is a ``StoreError`` naming it."""

    def __init__(self, path=":memory:", key: bytes | None = None):
        self.path = str(path)
        self._local = threading.local()
        self._memory = None
        if self.path != ":memory:":
            self._open_file(Path(self.path))
        if key is None:
            key = secrets.token_bytes(KEY_BYTES) if self.path == ":memory:" else store_key()
        if not isinstance(key, bytes) or len(key) != KEY_BYTES:
            raise StoreError(f"key must be {KEY_BYTES} bytes")
        self._aead = AESGCM(key)
        try:
            with self._connect() as db:
                db.execute(SCHEMA)
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path} is not a game store (an SQLite database): {e}") from None

    def _open_file(self, path: Path) -> None:
        if path.is_dir():
            raise StoreError(f"the store {path} is a folder; give a file path, e.g. {path / 'games.sqlite3'}")
        try:
            if not path.parent.exists():
                path.parent.mkdir(mode=0o700, parents=True)
            _private_file(path)
        except OSError as e:
            raise StoreError(f"cannot make the store {path}: {e.strerror or e}") from None

    def seal(self, record: dict) -> dict:
        """``record`` with its ``SEALED_FIELDS`` replaced by one ``sealed`` string."""
        secret = {k: record[k] for k in SEALED_FIELDS if k in record}
        nonce = secrets.token_bytes(12)
        blob = nonce + self._aead.encrypt(nonce, json.dumps(secret).encode(), b"ginenv-game")
        out = {k: v for k, v in record.items() if k not in SEALED_FIELDS}
        out["sealed"] = base64.b64encode(blob).decode("ascii")
        return out

    def unseal(self, record: dict) -> dict:
        """``record`` with its sealed fields restored (a record in the clear as it is);
        ``StoreError`` if this store's key did not seal it."""
        if "sealed" not in record:
            return record
        try:
            blob = base64.b64decode(record["sealed"], validate=True)
            secret = strict_json.loads(self._aead.decrypt(blob[:12], blob[12:], b"ginenv-game"))
        except (InvalidTag, ValueError) as e:
            raise StoreError(
                f"a game's sealed seeds do not open with this store's key ({KEY_ENV} or {default_key_path()}): "
                f"{type(e).__name__}"
            ) from None
        out = {k: v for k, v in record.items() if k != "sealed"}
        return out | secret

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
            for extra in ("-wal", "-shm"):  # SQLite makes them with the database's mode; made sure
                if os.path.exists(self.path + extra):
                    os.chmod(self.path + extra, 0o600)
            self._local.db = db
        return _Plain(db, write)

    def _text(self, record: dict, sealed: bool) -> str:
        return json.dumps(self.seal(record) if sealed else record)

    def create(self, gid: str, record: dict, sealed: bool = True) -> None:
        """Store a new game's ``record``, its seeds sealed unless ``sealed`` is False (a
        game that is over)."""
        with self._connect() as db:
            db.execute(
                "INSERT INTO games (id, record, version, updated) VALUES (?, ?, 0, ?)",
                (gid, self._text(record, sealed), time.time()),
            )

    def load(self, gid: str):
        """``(record, version)`` with the seeds unsealed, or None for an unknown game."""
        with self._connect(write=False) as db:
            row = db.execute("SELECT record, version FROM games WHERE id = ?", (gid,)).fetchone()
        return None if row is None else (self.unseal(json.loads(row[0])), int(row[1]))

    def save(self, gid: str, record: dict, version: int, sealed: bool = True) -> bool:
        """Write ``record`` (sealed unless ``sealed`` is False) as version ``version + 1``
        if the stored one is still ``version``; False if another process moved first
        (nothing written)."""
        with self._connect() as db:
            cur = db.execute(
                "UPDATE games SET record = ?, version = version + 1, updated = ? WHERE id = ? AND version = ?",
                (self._text(record, sealed), time.time(), gid, version),
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
        if kind is None:
            self.db.execute("COMMIT")
        elif self.db.in_transaction:  # SQLite may have rolled back itself (a full disk)
            self.db.execute("ROLLBACK")
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
