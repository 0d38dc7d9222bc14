"""Play the bot over HTTP: ``python -m agents.serve [--opponent SPEC] [--host 127.0.0.1]
[--port 8000]``, a JSON API and the web page at ``/`` (Starlette on uvicorn; the
``serve`` extra).

Endpoints (every body and answer is JSON):

- ``POST /api/games`` with an optional body ``{"opponent", "rules", "mode", "seat"}``
  -> 201 ``{"id", "state"}``. ``opponent`` is ``"bot"`` (the server's ``--opponent``,
  the default), ``"expert"`` (that bot searching at decision time, when it is a trained
  policy) or a baseline name: never a path. The deal comes from 128 bits of OS
  randomness; ``"seed"`` (the whole deal) is taken only from a server started with
  ``--allow-seed`` (tests, practice). The seed is in the state once the game is over.
- ``GET /api/games/{id}`` -> ``{"id", "state"}``.
- ``POST /api/games/{id}/actions`` with ``{"action": <action id>}`` -> ``{"id", "state",
  "bot_moves", "bot_seconds"}``: the state after the move and the bot's replies up to the
  person's next decision or the end of the game, and how long the bot thought over them.
- ``GET /api/games/{id}/hint`` -> ``{"hint": [{"id", "label", "probability"}, ...]}``;
  ``?search=true``: the moves played out as the expert level searches, each with its
  ``"value"`` and ``"se"`` in its ``"unit"`` (``"points"``: mean points of the hand after
  it, the person's minus the bot's; ``"match"``, in a match against the expert: the
  person's chance of winning the match after the hand), the search's choice first.
- ``GET /api/games/{id}/record`` -> ``{"id", "record"}``: the game's record
  (``agents.play.game.Game.record``).
- ``GET /api/openapi.json``: this API as an OpenAPI 3.1 document (``agents/play/openapi.json``,
  written by hand; the tests hold it to the routes and fuzz the server from it).

Games live in SQLite (``--db``, ``agents.play.store``): a reload, a restart or a crash
loses none, and ``--workers N`` processes on one port share them.

A ``state`` is ``agents.play.game.Game.view()``: what the person may see, never a card of the
bot's hand or of the stock while a hand is in play. Errors: 404 for an unknown game, 400
for a body that is not the JSON asked for (a key of the wrong type, JSON nested deeper
than 4 levels), 422 for an illegal move (the message lists the legal ones; nothing is
applied), 413 for a body over 4 KB, 429 when one client starts games faster than
``--creates-per-minute``, 503 when the server holds ``--max-games`` games (a game with
no move for ``--idle-minutes`` expires; reading it does not keep it) or when its store
cannot be written (a full or read-only disk: the move or the new game is refused, the
game stays as stored, reads go on). A refused request
stores nothing. The bot's moves run in
a thread pool, one request at a time per game, so one slow game does not stall others.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import sqlite3
import sys
import time
from pathlib import Path

from agents.extras import require

require("serve", what="the web server (python -m agents.serve)", main=__name__ == "__main__")

from starlette.applications import Starlette  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402
from starlette.exceptions import HTTPException  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402
from starlette.middleware.gzip import GZipMiddleware  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import FileResponse, JSONResponse  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402
from starlette.staticfiles import StaticFiles  # noqa: E402

from agents import strict_json  # noqa: E402
from agents.play.game import Game, hint, hint_policy  # noqa: E402
from agents.play.lang import LANGUAGES, table  # noqa: E402
from agents.play.store import GameStore, StoreError, default_path  # noqa: E402
from agents.registry import SHIPPED, make_agent, with_search  # noqa: E402
from ginenv.baselines import BASELINES  # noqa: E402
from ginenv.rules import PRESETS  # noqa: E402

WEB = Path(__file__).resolve().parent / "web"
OPENAPI = Path(__file__).resolve().parent / "openapi.json"
MAX_BODY = 4096
SEARCH_FLAGS = {"true": True, "1": True, "false": False, "0": False}  # the hint's ?search=
MAX_DEPTH = 4  # the API's bodies are flat objects; deeper JSON is refused before parsing
#: The create body's keys and the JSON types each may hold.
GAME_KEYS = {"opponent": str, "rules": str, "mode": str, "seed": int, "seat": int}


class Games:
    """The games, kept in a ``GameStore`` (SQLite) and, for speed, as live ``Game``
    objects in this process. A game is rebuilt from its record when this process has not
    seen its latest move (a restart, another worker), so any process may serve any game.
    Bounded in number; a game with no move for ``idle_seconds`` expires (reading it does
    not keep it alive). Creates are rate-limited per client (``creates_per_minute``, a
    token bucket holding a burst of ``burst``), so one client cannot fill the server. At
    most ``cache_games`` live games stay in memory (the least recently used goes first and
    is rebuilt from its record when asked for again), so the memory of a process stays
    flat however many games the store holds."""

    def __init__(
        self,
        bot,
        max_games: int = 1000,
        idle_seconds: float = 1800.0,
        *,
        allow_seed: bool = False,
        creates_per_minute: float = 30.0,
        burst: int = 10,
        store: GameStore | None = None,
        cache_games: int = 256,
    ):
        self.bot, self.max_games, self.idle_seconds = bot, max_games, idle_seconds
        self.allow_seed, self.rate, self.burst = allow_seed, creates_per_minute / 60.0, burst
        self.hinter = hint_policy(bot)
        self._hint_search = None  # the hinter with search, built at the first hint that asks for it
        self.store = store if store is not None else GameStore(":memory:")
        self.cache: dict = {}  # id -> (Game, the version of its record it reflects), least recently used first
        self.cache_games = min(max_games, cache_games)
        self.locks: dict = {}  # id -> asyncio.Lock: one request at a time per game here
        self.buckets: dict = {}  # client -> (tokens, when)
        self._expired = float("-inf")  # when expire last ran

    def hint_search(self):
        """The hinter with search at the expert level's budget (``?search=true``)."""
        if self._hint_search is None:
            self._hint_search = with_search(self.hinter)
        return self._hint_search

    def expire(self) -> None:
        """Drop the expired games, at most every ``idle_seconds / 10`` (a write of the
        store: not one per request, which workers would queue on)."""
        now = time.monotonic()
        if now - self._expired < min(self.idle_seconds / 10, 5.0):
            return
        self._expired = now
        try:
            expired = self.store.expire(self.idle_seconds)
        except sqlite3.OperationalError:  # a full or read-only disk: the reads go on, expiry waits
            return
        if expired:
            kept = set(self.store.ids())
            self.cache = {g: v for g, v in self.cache.items() if g in kept}

    def check_room(self) -> None:
        self.expire()
        if self.store.count() >= self.max_games:
            raise HTTPException(503, f"the server holds its limit of {self.max_games} games; try again later")

    def take_token(self, client: str) -> None:
        """One create for ``client``, or 429 when it created too many too fast."""
        now = time.monotonic()
        tokens, when = self.buckets.get(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - when) * self.rate)
        if tokens < 1.0:
            wait = (1.0 - tokens) / self.rate if self.rate > 0 else 60.0
            raise HTTPException(429, f"too many new games from this client; try again in {wait:.0f} s")
        self.buckets[client] = (tokens - 1.0, now)
        if len(self.buckets) > 10 * self.max_games:  # forget the clients that are full again
            self.buckets = {
                c: (t, w) for c, (t, w) in self.buckets.items() if now - w < self.burst / max(self.rate, 1e-9)
            }

    def build(self, options: dict) -> tuple[Game, dict]:
        """A new game from the request's options (checked by ``check_options``), and the
        record that rebuilds it."""
        seed = options.get("seed")
        if options.get("opponent") == "expert" and not hasattr(self.bot, "model"):
            raise HTTPException(400, "opponent expert needs the server's bot to be a trained policy; this one is not")
        record = {
            "opponent": options.get("opponent", "bot"),
            "agent_seed": secrets.randbits(63),
            "rules": options.get("rules", "standard"),
            "mode": options.get("mode", "match"),
            "seat": options.get("seat", 0),
            "seed": str(secrets.randbits(128) if seed is None else seed),
            "actions": [],
        }
        game = self.rebuild(record)
        return game, {**record, "bot_actions": list(game.bot_actions)}

    def rebuild(self, record: dict) -> Game:
        """The game a record describes: dealt from its seeds, the person's moves replayed.
        A pure bot's moves (``agents.base``) come from the record's ``bot_actions``, not
        from the bot again (a rebuild costs no inference: the soak's rebuilds after a
        kill, or when a client's connection moves to another worker, had replayed every
        bot move of a match through the network); a record from before they were kept
        asks the bot."""
        opponent = record["opponent"]
        if opponent == "expert":  # the server's bot, searching at decision time
            agent = with_search(self.bot, seed=record["agent_seed"])
        else:
            agent = self.bot if opponent == "bot" else make_agent(opponent, seed=record["agent_seed"])
        script = record.get("bot_actions") if getattr(agent, "pure", False) else None
        game = Game(agent, record["rules"], record["mode"], int(record["seed"]), record["seat"], bot_actions=script)
        game.replay(record["actions"])
        return game

    def add(self, game: Game, record: dict) -> str:
        gid = secrets.token_urlsafe(9)
        try:
            self.store.create(gid, record, sealed=not game.over)
        except sqlite3.OperationalError as e:  # a full or read-only disk
            raise HTTPException(
                503, f"the game store cannot be written ({e}): no game was started; try again later"
            ) from None
        self._keep(gid, game, 0)
        return gid

    def _keep(self, gid: str, game: Game, version: int) -> None:
        self.cache.pop(gid, None)
        self.cache[gid] = (game, version)  # the newest last: the cache is least recently used first
        while len(self.cache) > self.cache_games:  # the least recently used live game goes; its record stays
            self.cache.pop(next(iter(self.cache)))

    def clear(self) -> None:
        """Drop every game (the store's records too)."""
        for gid in self.store.ids():
            self.store.delete(gid)
        self.cache.clear()

    def lock(self, gid: str) -> asyncio.Lock:
        return self.locks.setdefault(gid, asyncio.Lock())

    def get(self, gid: str) -> tuple[Game, dict, int]:
        """``(game, record, version)`` of the game ``gid``, or 404 (reading it does not
        keep it alive)."""
        self.expire()
        try:
            row = self.store.load(gid)
        except StoreError as e:  # sealed under another key: no server run with this key can open it
            raise HTTPException(404, f"game {gid!r} cannot be opened here: {e}") from None
        if row is None:
            self.cache.pop(gid, None)
            raise HTTPException(404, f"no game {gid!r} (it may have expired)")
        record, version = row
        cached = self.cache.get(gid)
        if cached is not None and cached[1] == version:
            self.cache[gid] = self.cache.pop(gid)  # used now
            return cached[0], record, version
        game = self.rebuild(record)
        self._keep(gid, game, version)
        return game, record, version

    def move(self, gid: str, action) -> tuple[Game, list]:
        """The person's move in game ``gid`` and the bot's replies, stored; a
        ``ValueError`` (nothing applied or stored) for an illegal one."""
        for _ in range(3):
            game, record, version = self.get(gid)
            bot_moves = game.play(action)
            moved = {**record, "actions": [*record["actions"], int(action)], "bot_actions": list(game.bot_actions)}
            try:
                saved = self.store.save(gid, moved, version, sealed=not game.over)  # the seeds shown once it is over
            except sqlite3.OperationalError as e:  # a full or read-only disk: the move is not kept
                self.cache.pop(gid, None)  # the live game moved on: the stored one is the game
                raise HTTPException(
                    503, f"the game store cannot be written ({e}): the move was not applied; try again later"
                ) from None
            if saved:
                self._keep(gid, game, version + 1)
                return game, bot_moves
            self.cache.pop(gid, None)  # another process moved first: rebuild, try again
        raise HTTPException(409, "the game moved on in another process; reload it")


def check_options(options: dict, allow_seed: bool) -> dict:
    """The create body checked key by key, type first: 400 naming the key and what is
    valid. Nothing is built before every key passed."""
    unknown = sorted(set(options) - set(GAME_KEYS))
    if unknown:
        raise HTTPException(400, f"unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(GAME_KEYS))}")
    for key, kind in GAME_KEYS.items():
        if key not in options:
            continue
        value = options[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise HTTPException(400, f"{key} must be a JSON {'integer' if kind is int else 'string'}, got {value!r}")
    valid = {
        "opponent": ("bot", "expert", *BASELINES),
        "rules": tuple(PRESETS),
        "mode": ("hand", "match"),
        "seat": (0, 1),
    }
    for key, choices in valid.items():
        if key in options and options[key] not in choices:
            raise HTTPException(400, f"{key} must be one of {', '.join(map(str, choices))}; got {options[key]!r}")
    if "seed" in options:
        if not allow_seed:
            raise HTTPException(
                400, "seed is refused: a seed is the whole deal; start the server with --allow-seed to choose deals"
            )
        if not 0 <= options["seed"] < 1 << 128:
            raise HTTPException(400, f"seed must be an integer from 0 to 2**128 - 1, got {options['seed']}")
    return options


def json_depth(body: bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in body.decode("utf-8", errors="replace"):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


async def read_json(request: Request, required: bool):
    """The request's JSON body (a mapping), at most ``MAX_BODY`` bytes and ``MAX_DEPTH``
    levels deep."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise HTTPException(413, f"the body may hold at most {MAX_BODY} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise HTTPException(413, f"the body may hold at most {MAX_BODY} bytes")
    if not body.strip():
        if required:
            raise HTTPException(400, 'the body must be JSON, e.g. {"action": 104}')
        return {}
    if json_depth(body) > MAX_DEPTH:
        raise HTTPException(400, f"the body nests deeper than {MAX_DEPTH} levels; the API takes flat JSON objects")
    try:
        data = strict_json.loads(body)
    except strict_json.DuplicateKeyError as e:
        raise HTTPException(400, f"the body is refused: {e}") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError) as e:
        raise HTTPException(400, f"the body is not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise HTTPException(400, f"the body must be a JSON object, got {type(data).__name__}")
    return data


#: How long a kept-alive connection serves before it is closed after an answer.
CONNECTION_SECONDS = 10.0


def make_app(
    bot,
    max_games: int = 1000,
    idle_seconds: float = 1800.0,
    *,
    allow_seed: bool = False,
    creates_per_minute: float = 30.0,
    store: GameStore | None = None,
    connection_seconds: float = CONNECTION_SECONDS,
) -> Starlette:
    """The app. ``connection_seconds``: a kept-alive connection older than this is closed
    after its next answer (``RecycleConnections``; 0: never)."""
    games = Games(
        bot, max_games, idle_seconds, allow_seed=allow_seed, creates_per_minute=creates_per_minute, store=store
    )

    async def create(request: Request):
        options = check_options(await read_json(request, required=False), games.allow_seed)
        games.check_room()
        games.take_token(request.client.host if request.client else "?")
        try:
            game, record = await run_in_threadpool(games.build, options)
            state = game.view()
        except ValueError as e:  # nothing was stored
            raise HTTPException(400, str(e)) from None
        games.check_room()
        gid = games.add(game, record)
        return JSONResponse({"id": gid, "state": state}, status_code=201)

    async def show(request: Request):
        gid = request.path_params["gid"]
        async with games.lock(gid):
            game, _, _ = await run_in_threadpool(games.get, gid)
            return JSONResponse({"id": gid, "state": game.view()})

    async def record(request: Request):
        gid = request.path_params["gid"]
        async with games.lock(gid):
            game, _, _ = await run_in_threadpool(games.get, gid)
            return JSONResponse({"id": gid, "record": game.record()})

    async def act(request: Request):
        gid = request.path_params["gid"]
        data = await read_json(request, required=True)
        if set(data) != {"action"}:
            raise HTTPException(400, 'the body must be {"action": <action id>}')
        async with games.lock(gid):  # one move at a time per game (across processes: the store's version)
            try:
                game, bot_moves = await run_in_threadpool(games.move, gid, data["action"])
            except ValueError as e:  # nothing applied: the game as it stands names the legal moves
                legal = (await run_in_threadpool(games.get, gid))[0].legal_actions()
                return JSONResponse({"error": str(e), "legal_actions": legal}, status_code=422)
            return JSONResponse(
                {"id": gid, "state": game.view(), "bot_moves": bot_moves, "bot_seconds": round(game.bot_seconds, 3)}
            )

    async def tip(request: Request):
        gid = request.path_params["gid"]
        if games.hinter is None:
            raise HTTPException(404, "no trained policy at hand for hints")
        flag = request.query_params.get("search", "false")
        if flag not in SEARCH_FLAGS:
            raise HTTPException(400, f"search must be true or false (or 1 or 0), got {flag!r}")
        search = games.hint_search() if SEARCH_FLAGS[flag] else None
        async with games.lock(gid):
            game, _, _ = await run_in_threadpool(games.get, gid)
            return JSONResponse({"hint": await run_in_threadpool(hint, game, games.hinter, 3, search)})

    async def error(request: Request, exc: HTTPException):
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)  # 405: Allow

    async def page(request: Request):
        return FileResponse(WEB / "index.html")

    async def text(request: Request):
        lang = request.path_params["lang"]
        if lang not in LANGUAGES:
            raise HTTPException(404, f"no language {lang!r}; the page speaks {', '.join(LANGUAGES)}")
        return JSONResponse(table(lang))

    async def favicon(request: Request):
        return FileResponse(WEB / "favicon.ico", media_type="image/x-icon")

    async def openapi(request: Request):
        return FileResponse(OPENAPI, media_type="application/json")

    routes = [
        Route("/", page),
        Route("/favicon.ico", favicon),
        Route("/api/openapi.json", openapi, methods=["GET"]),
        Route("/api/text/{lang}", text, methods=["GET"]),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{gid}", show, methods=["GET"]),
        Route("/api/games/{gid}/record", record, methods=["GET"]),
        Route("/api/games/{gid}/actions", act, methods=["POST"]),
        Route("/api/games/{gid}/hint", tip, methods=["GET"]),
        Mount("/static", StaticFiles(directory=WEB), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: error},
        middleware=[
            Middleware(RecycleConnections, max_age=connection_seconds),
            Middleware(ServedBy),
            Middleware(GZipMiddleware, minimum_size=1000),
        ],
    )
    app.state.games = games
    return app


class RecycleConnections:
    """Closes a kept-alive connection after its first answer past ``max_age`` seconds
    (``Connection: close``; the client opens a new one for its next request), like a
    proxy's or gRPC's maximum connection age. With several workers on one port the kernel
    spreads new connections among them, so this is what spreads the clients again after a
    worker restarts: without it every client of the killed worker reconnects to the
    other, the only one listening then, and stays there (the soak measured one worker
    answering 96-100% of the requests from the first kill on). A connection is known by
    its peer's address and port (the ASGI scope's ``client``); ``max_age`` 0 keeps every
    connection."""

    def __init__(self, app, max_age: float = CONNECTION_SECONDS):
        if not (isinstance(max_age, (int, float)) and 0 <= max_age < 1e9):
            raise ValueError(f"the connection's maximum age must be seconds >= 0, got {max_age!r}")
        self.app, self.max_age = app, float(max_age)
        self.born: dict = {}  # (host, port) -> when its first request came (monotonic)
        self._pruned = time.monotonic()

    async def __call__(self, scope, receive, send):
        peer = scope.get("client") if scope["type"] == "http" else None
        if not self.max_age or peer is None:
            return await self.app(scope, receive, send)
        now = time.monotonic()
        key = tuple(peer)
        born = self.born.setdefault(key, now)
        if now - self._pruned > self.max_age:  # connections that closed on their own
            self._pruned = now
            self.born = {k: t for k, t in self.born.items() if now - t <= 2 * self.max_age}
            self.born.setdefault(key, born)
        if now - born < self.max_age:
            return await self.app(scope, receive, send)
        self.born.pop(key, None)  # its last request: a new connection is a new entry

        async def send_closing(message):
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*kept, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receive, send_closing)


class ServedBy:
    """Names the process that answered (``X-Served-By``: several with ``--workers``). A
    plain ASGI middleware: Starlette's ``BaseHTTPMiddleware`` runs each request through
    a task group and a stream of its own, a cost every request paid."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_named(message):
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (b"x-served-by", str(os.getpid()).encode())]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_named)


def _app_from_settings(settings: dict) -> Starlette:
    bot = make_agent(settings["opponent"])
    if hasattr(bot, "probabilities"):  # a trained policy: torch is loaded anyway
        import torch

        torch.set_num_threads(settings["torch_threads"])
    return make_app(
        bot,
        settings["max_games"],
        settings["idle_seconds"],
        allow_seed=settings["allow_seed"],
        creates_per_minute=settings["creates_per_minute"],
        store=GameStore(settings["db"]),
        connection_seconds=settings.get("connection_seconds", CONNECTION_SECONDS),
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m agents.serve", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--opponent", default=str(SHIPPED), help="the bot: a baseline name or a checkpoint")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--db",
        default=str(default_path()),
        help="the SQLite file the games are kept in (default: %(default)s; ':memory:' keeps them in this process)",
    )
    p.add_argument("--workers", type=int, default=1, help="server processes on one port, sharing the --db file")
    p.add_argument("--max-games", type=int, default=1000, help="games held at once")
    p.add_argument("--idle-minutes", type=float, default=30.0, help="a game with no move for this long expires")
    p.add_argument(
        "--creates-per-minute", type=float, default=30.0, help="new games one client may start a minute (burst 10)"
    )
    p.add_argument(
        "--forwarded-allow-ips",
        default=None,
        metavar="IPS",
        help="trust X-Forwarded-For / X-Forwarded-Proto from these proxy addresses (comma-separated, or '*'); "
        "default: trust none, so the per-client limits key on the real peer",
    )
    p.add_argument(
        "--allow-seed",
        action="store_true",
        help="let clients choose a game's seed (the whole deal: for tests and practice, never for real play)",
    )
    p.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="threads each bot move may use (1: concurrent games share the cores best)",
    )
    p.add_argument(
        "--connection-seconds",
        type=float,
        default=CONNECTION_SECONDS,
        help="close a kept-alive connection after its first answer past this age, so that clients spread "
        "over the workers again after one restarts (0: never; default %(default)s)",
    )
    args = p.parse_args(argv)
    if not 0 <= args.connection_seconds < 1e9:
        p.error(f"--connection-seconds must be seconds >= 0, got {args.connection_seconds:g}")
    if (
        args.max_games < 1
        or not 0 < args.idle_minutes < 1e6
        or not 0 <= args.port < 65536
        or not 0 < args.creates_per_minute < 1e9
    ):
        p.error("--max-games must be >= 1, --idle-minutes and --creates-per-minute > 0, and --port 0..65535")
    if args.torch_threads < 1 or not 1 <= args.workers <= 64:
        p.error("--torch-threads must be >= 1 and --workers from 1 to 64")
    if args.workers > 1 and args.db == ":memory:":
        p.error("--workers > 1 share the games through a --db file, not ':memory:'")
    settings = {
        "opponent": args.opponent,
        "max_games": args.max_games,
        "idle_seconds": args.idle_minutes * 60,
        "allow_seed": args.allow_seed,
        "creates_per_minute": args.creates_per_minute,
        "torch_threads": args.torch_threads,
        "db": args.db,
        "forwarded_allow_ips": args.forwarded_allow_ips,
        "connection_seconds": args.connection_seconds,
    }
    try:
        app = _app_from_settings(settings)  # every problem found here, before any worker starts
    except StoreError as e:
        p.error(f"--db {args.db}: {e}")
    except (ValueError, ImportError, OSError, sqlite3.Error) as e:
        p.error(str(e))
    try:
        sock = _listener(args.host, args.port)  # the address is usable, before a URL is printed
    except OSError as e:
        p.error(_bind_problem(args.host, args.port, e))
    print(f"playing {args.opponent} at http://{args.host}:{args.port}/ (games in {args.db})", flush=True)
    if args.workers == 1:
        server = uvicorn_server(app, settings)
        server.run(sockets=[sock])
        return 0
    sock.close()  # each worker binds its own (SO_REUSEPORT)
    return serve_workers(settings, args.host, args.port, args.workers)


def _bind_problem(host: str, port: int, e: OSError) -> str:
    """One line saying why ``host:port`` cannot be served."""
    import errno
    import socket

    if isinstance(e, socket.gaierror):
        return f"--host {host}: not an address of this machine or a name that resolves ({e.strerror})"
    if e.errno == errno.EADDRINUSE:
        return f"--port {port}: the port is in use on {host} (stop what holds it, or choose another --port)"
    if e.errno == errno.EADDRNOTAVAIL:
        return f"--host {host}: not an address of this machine ({e.strerror})"
    if e.errno == errno.EACCES:
        return f"--port {port}: not allowed to listen there ({e.strerror}; ports below 1024 need privileges)"
    return f"cannot listen on {host}:{port}: {e.strerror or e}"


def uvicorn_server(app, settings: dict):
    """A uvicorn server for ``app``. Proxy headers are read only from the proxies named by
    ``--forwarded-allow-ips``: with uvicorn's defaults any local process could set its
    own client address with ``X-Forwarded-For`` and walk past the per-client limits."""
    import uvicorn

    trusted = settings.get("forwarded_allow_ips")
    config = uvicorn.Config(
        app, log_level="warning", proxy_headers=bool(trusted), forwarded_allow_ips=trusted or "", server_header=False
    )
    return uvicorn.Server(config)


def _listener(host: str, port: int):
    """A TCP listening socket that other processes may bind too (SO_REUSEPORT: the
    kernel spreads the connections), made as a TCP socket so that asyncio sets
    TCP_NODELAY on its connections (uvicorn's own --workers socket has proto 0, and its
    answers then wait ~40 ms on delayed ACKs)."""
    import socket

    info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)[0]
    sock = socket.socket(info[0], socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(info[4])
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def _worker(settings: dict, host: str, port: int) -> None:
    """One server process: the app built and warmed up first, then the port bound, so
    the kernel hands a (re)started worker no connection before it can answer at speed."""
    app = _app_from_settings(settings)
    warm_up(app)
    sock = _listener(host, port)
    uvicorn_server(app, settings).run(sockets=[sock])


def warm_up(app) -> None:
    """A throwaway game played a few moves in memory (nothing stored): the imports, the
    compiled engine and the bot's first moves happen here, not in a client's request."""
    games = app.state.games
    game, _ = games.build({"mode": "match"})
    for _ in range(4):
        if game.over:
            break
        game.play(game.legal_actions()[0]["id"])
    if games.hinter is not None and not game.over:
        hint(game, games.hinter)


#: A worker that dies is started again, unless workers died this often in the last minute.
MAX_RESTARTS_PER_MINUTE = 5


def serve_workers(settings: dict, host: str, port: int, workers: int) -> int:
    """``workers`` server processes on one port, sharing the games through the store. A
    worker that dies (a crash, a kill -9) is started again and the event printed; if
    workers die more than ``MAX_RESTARTS_PER_MINUTE`` times a minute, all stop and the
    exit status is 1. SIGINT or SIGTERM stops them all (status 0)."""
    import multiprocessing
    import signal
    from multiprocessing.connection import wait

    ctx = multiprocessing.get_context("spawn")
    stopping = []

    def start():
        proc = ctx.Process(target=_worker, args=(settings, host, port), daemon=True)
        proc.start()
        return proc

    def stop(signum, frame):
        stopping.append(signum)
        for proc in procs:
            proc.terminate()

    procs = [start() for _ in range(workers)]
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    deaths: list = []
    while not stopping:
        wait([proc.sentinel for proc in procs], timeout=1.0)
        for k, proc in enumerate(procs):
            if proc.is_alive() or stopping:
                continue
            now = time.monotonic()
            deaths = [t for t in deaths if now - t < 60] + [now]
            if len(deaths) > MAX_RESTARTS_PER_MINUTE:
                print(
                    f"worker {proc.pid} exited ({proc.exitcode}); workers died {len(deaths)} times in a minute: "
                    "stopping the server",
                    file=sys.stderr,
                    flush=True,
                )
                stop(None, None)
                for other in procs:
                    other.join(timeout=10)
                return 1
            procs[k] = start()
            print(
                f"worker {proc.pid} exited ({proc.exitcode}); started worker {procs[k].pid} in its place",
                file=sys.stderr,
                flush=True,
            )
    for proc in procs:
        proc.join(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
