"""The game store: a record rebuilds its game exactly; a real server restarted, or
killed with SIGKILL mid-match, loses no game and leaves a readable store; two worker
processes serve one game; the record shows only what the person has seen until the
game is over."""

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import free_port, serve_cmd, wait_up

from agents import make_agent
from agents.play.game import Game
from ginenv import core

ROOT = Path(__file__).parent.parent
pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from agents.play.server import Games  # noqa: E402
from agents.play.store import GameStore  # noqa: E402


def random_moves(games, gid, rng, n):
    for _ in range(n):
        game = games.get(gid)[0]
        if game.over:
            return
        games.move(gid, int(rng.choice([a["id"] for a in game.legal_actions()])))


@pytest.mark.parametrize("opponent", ["bot", "random", "gin_hunter"])
def test_a_record_rebuilds_its_game_in_another_process_exactly(tmp_path, opponent):
    bot = make_agent(str(ROOT / "checkpoints" / "champion")) if opponent == "bot" else make_agent("knock_early")
    store = GameStore(tmp_path / "games.sqlite3")
    first = Games(bot, store=store)
    rng = np.random.default_rng(3)
    gid = first.add(*first.build({"opponent": opponent, "mode": "match"}))
    random_moves(first, gid, rng, 60)
    view = first.get(gid)[0].view()
    # A new process over the same file: nothing in memory, everything rebuilt.
    second = Games(bot, store=GameStore(tmp_path / "games.sqlite3"))
    assert second.get(gid)[0].view() == view
    random_moves(second, gid, np.random.default_rng(4), 5)
    assert first.get(gid)[0].view() == second.get(gid)[0].view()  # the first sees the second's moves


class Counting:
    """knock_early, counting the times it is asked to move."""

    name, pure = "counting", True

    def __init__(self):
        self.inner, self.calls = make_agent("knock_early"), 0

    def act(self, observations, action_masks):
        self.calls += 1
        return self.inner.act(observations, action_masks)


def test_a_rebuild_plays_a_pure_bots_recorded_moves_and_never_asks_it(tmp_path):
    """A pure bot's moves are kept in the record (sealed), so a rebuild (another worker,
    a restart) replays them without the bot: no inference. The reference is the rebuild
    that asks the bot for every move again (a record from before they were kept)."""
    store = GameStore(tmp_path / "games.sqlite3")
    first = Games(Counting(), store=store, allow_seed=True)
    gid = first.add(*first.build({"mode": "match", "seed": 21}))
    person = make_agent("knock_early")  # a match that lasts some hands
    while len(first.get(gid)[0].history) < 2 and not first.get(gid)[0].over:
        obs, mask = first.get(gid)[0].observation()
        first.move(gid, int(person.act(obs[None], mask[None])[0]))
    game, record, _ = first.get(gid)
    assert len(record["bot_actions"]) == len(game.bot_actions) > 20  # every bot move of every hand so far
    assert len(game.history) >= 2 and not game.over  # across hands, and still in play
    asked = Counting()
    second = Games(asked, store=GameStore(tmp_path / "games.sqlite3"))
    assert second.get(gid)[0].view() == game.view() and asked.calls == 0
    # the reference: the same record without the bot's moves, every one asked again
    old = {k: v for k, v in record.items() if k != "bot_actions"}
    reference = Games(Counting(), allow_seed=True).rebuild(old)
    assert reference.view() == game.view() and reference.agent.calls == len(game.bot_actions)
    # and it plays on alike in both processes
    random_moves(second, gid, np.random.default_rng(8), 10)
    assert first.get(gid)[0].view() == second.get(gid)[0].view()


def test_recorded_bot_moves_must_fit_the_game_and_belong_to_a_pure_bot():
    """A record whose bot moves do not fit its game is refused by name, and a bot with a
    state of its own (random's generator) is always asked again."""
    games = Games(make_agent("knock_early"), allow_seed=True)
    game, record = games.build({"mode": "hand", "seed": 11, "seat": 1})  # the bot moves first
    assert record["bot_actions"] and record["bot_actions"] == game.bot_actions
    illegal = [a for a in range(108) if not core.legal_action_mask(core.init(1, seed=11))[0, a]][0]
    with pytest.raises(ValueError, match=f"recorded move {illegal} is not legal"):
        games.rebuild({**record, "bot_actions": [illegal]})
    with pytest.raises(ValueError, match="1 recorded bot moves were never reached"):
        games.rebuild({**record, "bot_actions": [*record["bot_actions"], 104]})
    with pytest.raises(ValueError, match="an action id"):
        games.rebuild({**record, "bot_actions": ["104"]})
    with pytest.raises(ValueError, match="only a pure agent"):
        Game(make_agent("random"), "standard", "hand", 11, 1, bot_actions=record["bot_actions"])
    # random is asked again on a rebuild: its generator moves on as in the game never rebuilt
    rnd = Games(make_agent("knock_early"), allow_seed=True)
    gid = rnd.add(*rnd.build({"mode": "match", "opponent": "random", "seed": 12}))
    random_moves(rnd, gid, np.random.default_rng(9), 40)
    live = rnd.get(gid)[0]
    rebuilt = rnd.rebuild(rnd.get(gid)[1])
    assert rebuilt.view() == live.view() and rebuilt.bot_actions == live.bot_actions


def test_a_live_games_bot_moves_are_sealed_on_disk(tmp_path):
    """The bot's moves (a knock's card lies face down until the hand ends) are sealed
    with the seeds while the game is in play: the file holds none of them in the clear."""
    games = Games(make_agent("knock_early"), store=GameStore(tmp_path / "games.sqlite3"), allow_seed=True)
    gid = games.add(*games.build({"mode": "match", "seed": 13}))
    random_moves(games, gid, np.random.default_rng(1), 30)
    with sqlite3.connect(tmp_path / "games.sqlite3") as db:
        (text,) = db.execute("SELECT record FROM games WHERE id = ?", (gid,)).fetchone()
    raw = json.loads(text)
    assert "bot_actions" not in raw and "sealed" in raw and raw["actions"] == games.get(gid)[0].actions
    assert games.get(gid)[1]["bot_actions"] == games.get(gid)[0].bot_actions  # opened with the key


def test_the_record_shows_the_seed_and_every_hand_only_once_the_game_is_over():
    games = Games(make_agent("knock_early"), allow_seed=True)
    gid = games.add(*games.build({"mode": "hand", "seed": 5}))
    game = games.get(gid)[0]
    rec = game.record()
    assert rec["seed"] is None and rec["hands"] == [] and rec["in_play"] is not None
    random_moves(games, gid, np.random.default_rng(0), 500)
    rec = games.get(gid)[0].record()
    assert rec["over"] and rec["seed"] == "5" and len(rec["hands"]) == 1
    result = rec["hands"][0]["result"]
    assert set(result["hands"]) == {"human", "bot"}  # both hands laid out


def start_server(db, port, *extra):
    proc = subprocess.Popen(
        serve_cmd(port, db, "--allow-seed", *extra), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    wait_up(proc, url)
    return proc, url


def test_a_restart_and_a_kill_9_lose_no_game_and_leave_the_store_readable(tmp_path):
    db, port = tmp_path / "games.sqlite3", free_port()
    proc, url = start_server(db, port)
    rng = np.random.default_rng(1)
    try:
        ids = [httpx.post(url + "/api/games", json={"mode": "match", "seed": s}).json()["id"] for s in range(3)]
        states = {}
        for gid in ids:
            for _ in range(rng.integers(3, 12)):
                state = httpx.get(f"{url}/api/games/{gid}").json()["state"]
                if state["over"]:
                    break
                action = int(rng.choice([a["id"] for a in state["legal_actions"]]))
                assert httpx.post(f"{url}/api/games/{gid}/actions", json={"action": action}).status_code == 200
            states[gid] = httpx.get(f"{url}/api/games/{gid}").json()["state"]
    finally:
        proc.send_signal(signal.SIGKILL)  # no shutdown of any kind
        proc.wait(timeout=30)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    proc, url = start_server(db, port)
    try:
        for gid, state in states.items():
            assert httpx.get(f"{url}/api/games/{gid}").json()["state"] == state  # every game, every move
        gid = ids[0]
        state = states[gid]
        while not state["over"]:  # and it plays on to the end
            action = int(rng.choice([a["id"] for a in state["legal_actions"]]))
            state = httpx.post(f"{url}/api/games/{gid}/actions", json={"action": action}).json()["state"]
        record = httpx.get(f"{url}/api/games/{gid}/record").json()["record"]
        assert record["over"] and record["seed"] == "0"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_two_workers_share_a_game_move_by_move(tmp_path):
    db, port = tmp_path / "games.sqlite3", free_port()
    proc, url = start_server(db, port, "--workers", "2")
    rng = np.random.default_rng(2)
    try:
        state = httpx.post(url + "/api/games", json={"mode": "match", "seed": 7}).json()
        gid, state = state["id"], state["state"]
        sent, pids = [], set()
        while not state["over"] and len(sent) < 80:
            action = int(rng.choice([a["id"] for a in state["legal_actions"]]))
            with httpx.Client() as fresh:  # a new connection each move: either worker may take it
                r = fresh.post(f"{url}/api/games/{gid}/actions", json={"action": action})
            assert r.status_code == 200, r.text
            pids.add(r.headers["x-served-by"])
            state = r.json()["state"]
            sent.append(action)
        stored, _ = GameStore(db).load(gid)
        assert stored["actions"] == sent  # every move once, in order, whichever worker took it
        assert len(pids) == 2, pids  # both workers served this one game
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_default_store_lives_under_the_users_data_directory(monkeypatch, tmp_path):
    from agents.play.store import default_path

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == tmp_path / "ginenv" / "games.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_path() == Path.home() / ".local" / "share" / "ginenv" / "games.sqlite3"


def http_exchange(sock, path: str = "/api/text/en") -> tuple:
    """One GET on a kept-alive socket: ``(headers as a lower-cased dict, body)``."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    headers = dict(line.split(": ", 1) for line in head.decode().lower().split("\r\n")[1:])
    while len(body) < int(headers["content-length"]):
        body += sock.recv(65536)
    return headers, body


@pytest.mark.parametrize("max_age", [0.5, 0.0])
def test_a_kept_alive_connection_is_closed_after_its_first_answer_past_the_age(max_age):
    """With several workers on one port the kernel spreads new connections, so a
    connection's age limit is what spreads the clients again after a worker restarts
    (the soak: one worker answered 96-100% of the requests from the first kill on). Past
    the age the answer says ``Connection: close`` and the server closes the socket; with
    0 the connection stays open."""
    import socket

    from conftest import live_server

    from agents.play.server import make_app

    app = make_app(make_agent("knock_early"), connection_seconds=max_age)
    with live_server(app) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            for _ in range(3):  # young: kept alive
                headers, _ = http_exchange(sock)
                assert headers.get("connection") != "close"
            time.sleep(0.7)
            headers, body = http_exchange(sock)  # answered in full, then closed
            assert body.startswith(b"{")
            sock.settimeout(1.0)
            if max_age:
                assert headers["connection"] == "close" and sock.recv(1) == b""  # the server closed it
            else:
                assert headers.get("connection") != "close"
                with pytest.raises(TimeoutError):
                    sock.recv(1)  # still open: nothing to read, no end of stream
        recycler = app.middleware_stack
        while not hasattr(recycler, "born"):
            recycler = recycler.app
        assert len(recycler.born) <= 1  # the closed connection's entry is gone


def test_the_connection_ages_of_connections_gone_are_forgotten(monkeypatch):
    """The middleware's memory of connections is pruned: peers that closed on their own
    are dropped once twice the age has passed."""
    import asyncio

    from agents.play import server

    now = [100.0]
    monkeypatch.setattr(server.time, "monotonic", lambda: now[0])

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})

    recycler = server.RecycleConnections(app, max_age=10)

    async def one(port):
        sent = []

        async def send(message):
            sent.append(message)

        await recycler({"type": "http", "client": ("127.0.0.1", port)}, None, send)
        return dict(sent[0]["headers"])

    for port in range(1000, 1100):  # a hundred clients, one request each, then gone
        asyncio.run(one(port))
    assert len(recycler.born) == 100
    now[0] += 25.0
    assert asyncio.run(one(5000)) == {}  # a new connection: kept alive
    assert list(recycler.born) == [("127.0.0.1", 5000)]
    now[0] += 11.0
    assert asyncio.run(one(5000)) == {b"connection": b"close"} and recycler.born == {}
    with pytest.raises(ValueError, match="seconds >= 0"):
        server.RecycleConnections(app, max_age=-1)
