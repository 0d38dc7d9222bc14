"""Play the bot over HTTP: ``python -m agents.serve [--opponent SPEC] [--host 127.0.0.1]
[--port 8000]``, a JSON API and the web page at ``/`` (Starlette on uvicorn; the
``serve`` extra).

Endpoints (every body and answer is JSON):

- ``POST /api/games`` with an optional body ``{"opponent", "rules", "mode", "seed",
  "seat"}`` -> 201 ``{"id", "state"}``. ``opponent`` is ``"bot"`` (the server's
  ``--opponent``, the default) or a baseline name: never a path.
- ``GET /api/games/{id}`` -> ``{"id", "state"}``.
- ``POST /api/games/{id}/actions`` with ``{"action": <action id>}`` -> ``{"id", "state",
  "bot_moves"}``: the state after the move and the bot's replies up to the person's next
  decision or the end of the game.
- ``GET /api/games/{id}/hint`` -> ``{"hint": [{"id", "label", "probability"}, ...]}``.

A ``state`` is ``agents.game.Game.view()``: what the person may see, never a card of the
bot's hand or of the stock while a hand is in play. Errors: 404 for an unknown game, 400
for a body that is not the JSON asked for, 422 for an illegal move (the message lists
the legal ones; nothing is applied), 413 for a body over 4 KB, 503 when the server holds
``--max-games`` games (idle ones expire after ``--idle-minutes``). The bot's moves run in
a thread pool, one request at a time per game, so one slow game does not stall others.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import time
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agents import make_agent
from agents.game import Game, hint
from agents.play import SHIPPED, hint_policy
from ginenv.baselines import BASELINES
from ginenv.rules import PRESETS

WEB = Path(__file__).resolve().parent / "web"
MAX_BODY = 4096
GAME_KEYS = {"opponent", "rules", "mode", "seed", "seat"}


class Games:
    """The games in play, bounded in number; a game idle for ``idle_seconds`` expires."""

    def __init__(self, bot, max_games: int = 1000, idle_seconds: float = 1800.0):
        self.bot, self.max_games, self.idle_seconds = bot, max_games, idle_seconds
        self.hinter = hint_policy(bot)
        self.games: dict = {}  # id -> (Game, asyncio.Lock, last used)

    def expire(self) -> None:
        now = time.monotonic()
        for gid in [g for g, (_, _, used) in self.games.items() if now - used > self.idle_seconds]:
            del self.games[gid]

    def check_room(self) -> None:
        self.expire()
        if len(self.games) >= self.max_games:
            raise HTTPException(503, f"the server holds its limit of {self.max_games} games; try again later")

    def build(self, options: dict) -> Game:
        """A new game from the request's options (the bot's opening moves played)."""
        opponent = options.get("opponent", "bot")
        if opponent == "bot":
            agent = self.bot
        elif opponent in BASELINES:
            agent = make_agent(opponent)
        else:
            raise HTTPException(400, f"opponent must be 'bot' or a baseline name ({', '.join(BASELINES)})")
        rules = options.get("rules", "standard")
        if rules not in PRESETS:
            raise HTTPException(400, f"rules must be one of {', '.join(PRESETS)}")
        seed = options.get("seed", secrets.randbelow(2**31))
        try:
            return Game(agent, rules, options.get("mode", "match"), seed, options.get("seat", 0))
        except ValueError as e:
            raise HTTPException(400, str(e)) from None

    def add(self, game: Game) -> str:
        gid = secrets.token_urlsafe(9)
        self.games[gid] = (game, asyncio.Lock(), time.monotonic())
        return gid

    def get(self, gid: str) -> tuple[Game, asyncio.Lock]:
        self.expire()
        if gid not in self.games:
            raise HTTPException(404, f"no game {gid!r} (it may have expired)")
        game, lock, _ = self.games[gid]
        self.games[gid] = (game, lock, time.monotonic())
        return game, lock


async def read_json(request: Request, required: bool):
    """The request's JSON body (a mapping), at most ``MAX_BODY`` bytes."""
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
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise HTTPException(400, f"the body is not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise HTTPException(400, f"the body must be a JSON object, got {type(data).__name__}")
    return data


def make_app(bot, max_games: int = 1000, idle_seconds: float = 1800.0) -> Starlette:
    games = Games(bot, max_games, idle_seconds)

    async def create(request: Request):
        options = await read_json(request, required=False)
        unknown = sorted(set(options) - GAME_KEYS)
        if unknown:
            raise HTTPException(400, f"unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(GAME_KEYS))}")
        games.check_room()
        game = await run_in_threadpool(games.build, options)
        games.check_room()
        gid = games.add(game)
        return JSONResponse({"id": gid, "state": game.view()}, status_code=201)

    async def show(request: Request):
        gid = request.path_params["gid"]
        game, _ = games.get(gid)
        return JSONResponse({"id": gid, "state": game.view()})

    async def act(request: Request):
        gid = request.path_params["gid"]
        game, lock = games.get(gid)
        data = await read_json(request, required=True)
        if set(data) != {"action"}:
            raise HTTPException(400, 'the body must be {"action": <action id>}')
        async with lock:  # one move at a time per game
            try:
                bot_moves = await run_in_threadpool(game.play, data["action"])
            except ValueError as e:
                return JSONResponse({"error": str(e), "legal_actions": game.legal_actions()}, status_code=422)
            return JSONResponse({"id": gid, "state": game.view(), "bot_moves": bot_moves})

    async def tip(request: Request):
        game, lock = games.get(request.path_params["gid"])
        if games.hinter is None:
            raise HTTPException(404, "no trained policy at hand for hints")
        async with lock:
            return JSONResponse({"hint": await run_in_threadpool(hint, game, games.hinter)})

    async def error(request: Request, exc: HTTPException):
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

    async def page(request: Request):
        return FileResponse(WEB / "index.html")

    routes = [
        Route("/", page),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{gid}", show, methods=["GET"]),
        Route("/api/games/{gid}/actions", act, methods=["POST"]),
        Route("/api/games/{gid}/hint", tip, methods=["GET"]),
        Mount("/static", StaticFiles(directory=WEB), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: error})
    app.state.games = games
    return app


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m agents.serve", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--opponent", default=str(SHIPPED), help="the bot: a baseline name or a checkpoint")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--max-games", type=int, default=1000, help="games held at once")
    p.add_argument("--idle-minutes", type=float, default=30.0, help="a game idle this long expires")
    p.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="threads each bot move may use (1: concurrent games share the cores best)",
    )
    args = p.parse_args(argv)
    if args.max_games < 1 or args.idle_minutes <= 0 or not 0 <= args.port < 65536:
        p.error("--max-games must be >= 1, --idle-minutes > 0 and --port 0..65535")
    if args.torch_threads < 1:
        p.error("--torch-threads must be >= 1")
    try:
        bot = make_agent(args.opponent)
    except ValueError as e:
        p.error(str(e))
    import uvicorn

    if hasattr(bot, "probabilities"):  # a trained policy: torch is loaded anyway
        import torch

        torch.set_num_threads(args.torch_threads)

    print(f"playing {getattr(bot, 'name', args.opponent)} at http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(
        make_app(bot, args.max_games, args.idle_minutes * 60), host=args.host, port=args.port, log_level="warning"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
