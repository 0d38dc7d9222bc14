"""The third audit's defects, one test each (each failed before its fix): the game store
kept the live deal, the rate limit fell to a header, duplicate JSON keys, ``--workers``,
the resume hint, ``--engine openspiel`` with other rules, signals at start-up and a
table of bad input. (The search worlds' ``_game_key`` is in tests/test_worlds.py, the
league's resume hint in tests/test_league.py.)"""

import json
import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import free_port, live_server, serve_cmd, wait_up

from agents import make_agent
from ginenv import core

ROOT = Path(__file__).parent.parent


# ---------------------------------------------------------- 1. the store's live deal
def test_the_store_file_of_a_live_game_holds_no_seed_and_is_private(tmp_path):
    pytest.importorskip("starlette")
    from agents.play.server import Games
    from agents.play.store import GameStore

    db = tmp_path / "new" / "games.sqlite3"
    games = Games(make_agent("knock_early"), allow_seed=True, store=GameStore(db))
    seed = (0x1234_5678_9ABC_DEF0 << 64) | 0x0FED_CBA9_8765_4321
    gid = games.add(*games.build({"mode": "match", "seed": seed}))
    game = games.get(gid)[0]
    for _ in range(4):  # a few moves: the record is rewritten
        game = games.get(gid)[0]
        games.move(gid, game.legal_actions()[0]["id"])
    assert not games.get(gid)[0].over
    # Everything on disk: the database and its WAL, as bytes.
    raw = b"".join(p.read_bytes() for p in db.parent.iterdir())
    agent_seed = str(games.get(gid)[1]["agent_seed"]).encode()
    for secret in (str(seed).encode(), str(seed & ((1 << 64) - 1)).encode(), str(seed >> 64).encode(), agent_seed):
        assert secret not in raw
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute("SELECT record FROM games WHERE id = ?", (gid,)).fetchone()
    stored = json.loads(text)
    assert set(stored) == {"opponent", "rules", "mode", "seat", "actions", "sealed"}
    # No integer anywhere in the stored record deals the bot's hand.
    bot_hand = game.state.hands_of(1)[0]
    numbers = [int(x) for x in re.findall(rb"\d+", text.encode())]
    for n in numbers:
        if n < 1 << 128:
            assert not (core.init(1, "standard", seed=n, mode="match").hands_of(1)[0] == bot_hand).all()
    # Private: the folder 0700, the database, -wal and -shm 0600.
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
    assert all(p.exists() for p in files)
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files), [oct(p.stat().st_mode) for p in files]
    # The same file opens in another process with the key; the seed comes back in the
    # clear only once the game is over.
    again = Games(make_agent("knock_early"), store=GameStore(db))
    assert again.get(gid)[0].view() == games.get(gid)[0].view()
    rng = np.random.default_rng(0)
    while not again.get(gid)[0].over:
        again.move(gid, int(rng.choice([a["id"] for a in again.get(gid)[0].legal_actions()])))
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute("SELECT record FROM games WHERE id = ?", (gid,)).fetchone()
    assert json.loads(text)["seed"] == str(seed) and "sealed" not in json.loads(text)


def test_a_store_sealed_under_another_key_opens_nothing(tmp_path, monkeypatch):
    pytest.importorskip("starlette")
    from agents.play.server import Games
    from agents.play.store import KEY_ENV, GameStore, StoreError

    db = tmp_path / "games.sqlite3"
    games = Games(make_agent("knock_early"), store=GameStore(db, key=b"k" * 32))
    gid = games.add(*games.build({}))
    with pytest.raises(StoreError, match="do not open with this store's key"):
        GameStore(db, key=b"x" * 32).load(gid)
    monkeypatch.setenv(KEY_ENV, "zz")
    with pytest.raises(StoreError, match=f"{KEY_ENV} must hold 64 hex digits"):
        GameStore(db)


@pytest.mark.parametrize("kind", ["missing_parent", "directory", "text_file"])
def test_a_bad_store_path_is_one_clear_error(tmp_path, kind):
    pytest.importorskip("starlette")
    from agents.play.store import GameStore, StoreError

    if kind == "missing_parent":
        blocker = tmp_path / "file"
        blocker.write_text("x")
        path, match = blocker / "sub" / "games.sqlite3", "cannot make the store"
    elif kind == "directory":
        path, match = tmp_path, "is a folder"
    else:
        path, match = tmp_path / "notes.txt", "is not a game store"
        path.write_text("hello, this is not a database " * 40)
    with pytest.raises(StoreError, match=match):
        GameStore(path)
    if kind == "text_file":  # nothing already there was lost
        assert path.read_text().startswith("hello, this is not a database")
        r = subprocess.run(
            serve_cmd(free_port(), path), cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
        )
        assert r.returncode == 2 and f"--db {path}: " in r.stderr and "Traceback" not in r.stderr


# --------------------------------------------------- 2. the rate limit and its header
def test_the_create_limit_holds_with_a_new_x_forwarded_for_each_time(tmp_path):
    pytest.importorskip("uvicorn")  # the server: the serve extra
    httpx = pytest.importorskip("httpx")
    port = free_port()
    # one create a minute after the burst of 10: a slow machine's 14 requests cannot
    # earn a token back (the default's 30 a minute did, once, under load)
    cmd = serve_cmd(port, tmp_path / "g.sqlite3", "--creates-per-minute", "1")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(proc, url)
        codes = [
            httpx.post(url + "/api/games", headers={"X-Forwarded-For": f"10.0.{k}.{k}"}).status_code for k in range(14)
        ]
        assert codes[:10] == [201] * 10 and codes[10:] == [429] * 4, codes
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_named_trusted_proxy_keys_the_limit_on_its_forwarded_client(tmp_path):
    pytest.importorskip("uvicorn")  # the server: the serve extra
    httpx = pytest.importorskip("httpx")
    port = free_port()
    cmd = serve_cmd(port, tmp_path / "g.sqlite3", "--forwarded-allow-ips", "127.0.0.1")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(proc, url)
        codes = [
            httpx.post(url + "/api/games", headers={"X-Forwarded-For": f"10.1.{k}.1"}).status_code for k in range(14)
        ]
        assert codes == [201] * 14  # each forwarded client has its own bucket behind a trusted proxy
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# ------------------------------------------------------------- 3. duplicate JSON keys
def test_duplicate_json_keys_are_refused_in_every_body():
    pytest.importorskip("starlette")
    httpx = pytest.importorskip("httpx")
    from agents.play.server import make_app

    app = make_app(make_agent("knock_early"), allow_seed=True)
    headers = {"content-type": "application/json"}
    with live_server(app) as url:
        r = httpx.post(url + "/api/games", content=b'{"seed": 1, "seed": 2}', headers=headers)
        assert r.status_code == 400 and "duplicate key" in r.json()["error"] and "'seed'" in r.json()["error"]
        assert app.state.games.store.count() == 0
        r = httpx.post(url + "/api/games", json={"mode": "hand", "seed": 3})
        gid, state = r.json()["id"], r.json()["state"]
        legal = [a["id"] for a in state["legal_actions"]]
        body = f'{{"action": {legal[0]}, "action": {legal[-1]}}}'.encode()
        r = httpx.post(f"{url}/api/games/{gid}/actions", content=body, headers=headers)
        assert r.status_code == 400 and "'action'" in r.json()["error"]
        assert httpx.get(f"{url}/api/games/{gid}").json()["state"] == state  # nothing applied


# ------------------------------------------------------------------- 5. --workers
def test_a_worker_killed_with_sigkill_is_replaced(tmp_path):
    pytest.importorskip("uvicorn")  # the server: the serve extra
    httpx = pytest.importorskip("httpx")
    port = free_port()
    proc = subprocess.Popen(
        serve_cmd(port, tmp_path / "g.sqlite3", "--workers", "2"),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"

    def pids(n=60):
        seen = set()
        for _ in range(n):
            with httpx.Client() as fresh:  # a new connection: either worker may take it
                seen.add(int(fresh.get(url + "/").headers["x-served-by"]))
        return seen

    try:
        wait_up(proc, url)
        before = pids()
        assert len(before) == 2
        victim = min(before)
        os.kill(victim, signal.SIGKILL)
        deadline = time.time() + 60
        after = set()
        while time.time() < deadline:
            time.sleep(0.5)
            try:
                after = pids(30)
            except httpx.HTTPError:
                continue
            if len(after) == 2:
                break
        assert len(after) == 2 and victim not in after, (before, after)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert f"worker {victim} exited" in proc.stderr.read()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_busy_port_is_one_line_and_a_non_zero_exit(tmp_path, workers):
    pytest.importorskip("uvicorn")  # the server: the serve extra
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = subprocess.run(
            serve_cmd(port, tmp_path / "g.sqlite3", "--workers", workers),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert r.returncode == 2, r.stderr
    assert f"--port {port}: the port is in use" in r.stderr and "Traceback" not in r.stderr
    assert "playing" not in r.stdout  # no URL printed for a server that never served


def test_an_unresolvable_host_is_one_line(tmp_path):
    pytest.importorskip("uvicorn")  # the server: the serve extra
    r = subprocess.run(
        serve_cmd(free_port(), tmp_path / "g.sqlite3", "--host", "999.1.1.1"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 2 and "--host 999.1.1.1" in r.stderr and "Traceback" not in r.stderr
    assert "http://" not in r.stdout


# ----------------------------------------------------- 7. OpenSpiel's engine, its rules
def test_the_openspiel_engine_refuses_rules_it_cannot_play():
    r = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", "random", "knock_early", "--engine", "openspiel", "--rules", "pagat"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 2
    assert "--engine openspiel plays OpenSpiel's own gin_rummy rules" in r.stderr and "--rules pagat" in r.stderr


# ------------------------------------------------ 8. a signal at any moment of start-up
def _smoke_run(tmp_path):
    import train

    sets = [
        "num_envs=16",
        "num_steps=8",
        f"total_decisions={16 * 8 * 2}",
        "hidden_sizes=[16, 16]",
        "eval_every=0",
        "run_name=sig",
        f"checkpoint_dir={tmp_path / 'ck'}",
        f"log_dir={tmp_path / 'runs'}",
    ]
    return train.train(train.make_config(sets=sets), quiet=True).parent


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_in_the_first_seconds_of_a_resume_stops_it_cleanly(tmp_path, signum):
    run_dir = _smoke_run(tmp_path)
    latest = (run_dir / "LATEST").read_text()
    files = sorted(p.name for p in run_dir.iterdir())
    for delay in (0.3, 1.0, 2.0, 3.5):
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "train.py"), "--resume", str(run_dir), "--set", "total_decisions=100000000"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(delay)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, (delay, out, err)
        assert "Traceback" not in err, (delay, err)
        # Before the first update nothing is written; after it, a checkpoint. Either way
        # the line names the run to resume.
        assert f"continue with --resume {run_dir}" in out, (delay, out)
        if "before the first update" in out:
            assert (run_dir / "LATEST").read_text() == latest
            assert sorted(p.name for p in run_dir.iterdir()) == files
        latest = (run_dir / "LATEST").read_text()
        files = sorted(p.name for p in run_dir.iterdir())


# ------------------------------------------------------------------ 9. bad input
def _state(b=4):
    return core.init(b, "standard", seed=1)


def _bad_inputs():
    import ginenv
    from ginenv.observation import observe
    from ginenv.view import observe_position, position

    hand = "As 2s 3s 7h 7d 7c Jd Qd Kd 9c"
    return {
        "init game_seeds_ -1": (lambda: core.init(1, "standard", game_seeds_=[-1]), "game_seeds_"),
        "init game_keys_ 1.5": (lambda: core.init(1, "standard", game_seeds_=[1], game_keys_=[1.5]), "game_keys_"),
        "init game_seeds_ too few": (lambda: core.init(2, "standard", game_seeds_=[1]), "game_seeds_"),
        "select 0.5": (lambda: _state().select([0.5]), "games"),
        "select 9 of 4": (lambda: _state().select([9]), "from 0 to 3"),
        "select -1": (lambda: _state().select([-1]), "from 0 to 3"),
        "observe player 0.5": (lambda: observe(_state(), 0.5), "player"),
        "observe player True": (lambda: observe(_state(), True), "player"),
        "observe short players": (lambda: observe(_state(), np.array([0, 1])), "player"),
        "observe perfect_information yes": (lambda: observe(_state(), 0, perfect_information="yes"), "perfect_info"),
        "reset seed 1.5": (lambda: ginenv.raw_env().reset(seed=1.5), "seed"),
        "reset options not a dict": (lambda: ginenv.raw_env().reset(options=[1]), "options must be None or a dict"),
        "reset seed -3": (lambda: ginenv.raw_env().reset(seed=-3), "seed"),
        "single env options": (lambda: ginenv.SingleAgentEnv(opponent="random").reset(options="x"), "options"),
        "position a thrown card nowhere": (lambda: position(hand, "5c Qh", opponent_discarded="8c"), "8c"),
        "position pile overlaps hand": (lambda: position(hand, "As Qh"), "As in hand and pile"),
        "observe_position junk": (lambda: observe_position("junk"), "position(...)"),
        "make_agent +search": (lambda: make_agent("+search"), "name a checkpoint before +search"),
        "make_agent seed -1": (lambda: make_agent("random", seed=-1), "seed"),
        "make_agent seed 1.5": (lambda: make_agent("random", seed=1.5), "seed"),
        "resample_hidden rng None": (lambda: _resample(rng=None), "rng"),
        "resample_hidden short players": (lambda: _resample(player=np.array([0, 1])), "player"),
    }


def _resample(rng="default", player=0):
    from ginenv.worlds import resample_hidden

    return resample_hidden(_state(), player, np.random.default_rng(0) if rng == "default" else rng)


@pytest.mark.parametrize("case", list(_bad_inputs()))
def test_each_bad_input_is_a_value_error_naming_the_parameter(case):
    call, words = _bad_inputs()[case]
    with pytest.raises(ValueError, match=re.escape(words)):
        call()


def test_reset_options_are_not_silently_accepted():
    import ginenv

    for env in (ginenv.raw_env(), ginenv.SingleAgentEnv(opponent="random")):
        with pytest.warns(UserWarning, match="reset ignores the option\\(s\\) 'zzz'"):
            env.reset(seed=1, options={"zzz": 1})


def test_bad_input_of_the_trainer_and_its_tools(tmp_path):
    pytest.importorskip("torch")
    from agents.training.config import make_config
    from agents.training.policy import load_policy
    from agents.training.search import SearchAgent

    with pytest.raises(ValueError, match="clip_coef must be a number > 0"):
        make_config(sets=["clip_coef=0"])
    policy = load_policy(ROOT / "checkpoints" / "champion")
    with pytest.raises(ValueError, match="SearchAgent's seed"):
        SearchAgent(policy, seed="x")
    agent = SearchAgent(policy, worlds=2)
    s = core.init(2, "standard", seed=4)
    from ginenv.observation import observe

    obs, mask = observe(s, s.current), core.legal_action_mask(s)
    for seats in (np.array([0]), np.array([0, 2])):
        with pytest.raises(ValueError, match=r"seats must be 0, 1"):
            agent.act(obs, mask, state=s, seats=seats)
    stray = tmp_path / "notes.txt"
    stray.write_text("x")
    with pytest.raises(ValueError, match="is a file, not a checkpoint"):
        load_policy(stray)
    for module in ("agents.training.exploit", "agents.export"):
        extra = ["--decisions", "1000"] if module.endswith("exploit") else ["--onnx", str(tmp_path / "a.onnx")]
        r = subprocess.run(
            [sys.executable, "-m", module, str(stray), *extra],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert r.returncode == 2 and "is a file, not a checkpoint" in r.stderr, (module, r.stderr)


@pytest.mark.parametrize("where", ["folder", "unwritable"])
def test_the_onnx_export_refuses_a_bad_output_before_any_work(tmp_path, where):
    out = tmp_path if where == "folder" else tmp_path / "missing" / "policy.onnx"
    r = subprocess.run(
        [sys.executable, "-m", "agents.export", str(ROOT / "checkpoints" / "champion"), "--onnx", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 2 and f"--onnx {out}" in r.stderr and "Traceback" not in r.stderr


def test_the_play_game_refuses_no_agent_and_a_bad_replay():
    from agents.play.game import Game

    with pytest.raises(ValueError, match="agent must have act"):
        Game(None)
    game = Game(make_agent("knock_early"), seed=3)
    with pytest.raises(ValueError, match=r"replay: move 0 \('x'\)"):
        game.replay(["x"])
