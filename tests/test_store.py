"""The game store: a record rebuilds its game exactly; a real server restarted, or
killed with SIGKILL mid-match, loses no game and leaves a readable store; two worker
processes serve one game; the record shows only what the person has seen until the
game is over."""

import signal
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import free_port, serve_cmd, wait_up

from agents import make_agent

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
