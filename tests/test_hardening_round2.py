"""The second audit's defects, one test each (each failed before its fix): the deal seed,
the API's bad bodies and squatting, lost work, the hand cap, bad input and installs."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import live_server

from agents import make_agent
from agents.play.game import HUMAN, Game
from ginenv import actions as A
from ginenv import core
from ginenv.rules import Rules

ROOT = Path(__file__).parent.parent


# ------------------------------------------------------------------ the deal seed
def first_view_matches(seeds: np.ndarray, view: dict, seat: int) -> np.ndarray:
    """Which of the candidate 64-bit ``seeds`` deal the person's first hand and dealer:
    the audit's attack (its C search covered every seed below 2**31)."""
    from ginenv.cards import parse_cards

    s = core.init(len(seeds), "standard", game_seeds_=core.splitmix64(core.splitmix64(seeds)), mode="match")
    hand = np.zeros(52, bool)
    hand[parse_cards(" ".join(view["hand"]))] = True
    dealer = seat if view["dealer"] == HUMAN else 1 - seat
    return (s.hands_of(seat) == hand).all(1) & (s.dealer == dealer)


def test_the_64_bit_search_recovers_nothing_from_a_first_view(monkeypatch):
    import agents.play.game

    candidates = np.arange(1 << 17, dtype=np.uint64)
    # The attack works on a game dealt from a small seed (as every web game was) ...
    weak = Game(make_agent("knock_early"), seed=123_456, seat=0)
    assert np.flatnonzero(first_view_matches(candidates, weak.view(), 0)).tolist() == [123_456]
    # ... and finds nothing when the seed has 128 bits, its low 64 bits that same small seed.
    true_seed = (0xA5A5_5A5A_DEAD_BEEF << 64) | 123_456
    monkeypatch.setattr(agents.play.game.secrets, "randbits", lambda bits: true_seed if bits == 128 else 0)
    game = Game(make_agent("knock_early"), seat=0)  # no seed: 128 bits of OS randomness
    assert game._seed == true_seed and game.seed is None and "seed" not in game.view()
    assert not first_view_matches(candidates, game.view(), 0).any()
    again = core.init(1, "standard", seed=true_seed, mode="match")  # the whole seed deals it
    assert (again._deck[0] == game.state._deck[0]).all()


def test_a_seed_below_2_64_deals_as_before_and_the_high_bits_change_the_deal():
    old = core.init(64, "pagat", seed=7, mode="match")
    assert (old._game_key == 0).all()
    high = core.init(64, "pagat", seed=7 | (1 << 100), mode="match")
    assert (high._game_seed == old._game_seed).all() and (high._game_key != 0).all()
    assert (high._deck != old._deck).any(1).mean() > 0.95
    # Game i of a 128-bit seed, alone in a batch of 1 with its seed and key.
    one = core.init(
        1, "pagat", game_seeds_=high._game_seed[[9]], game_keys_=high._game_key[[9]], mode="match", dealers=None
    )
    assert (one._deck[0] == high._deck[9]).all() and one.dealer[0] == high.dealer[9]
    for bad in (-1, 1 << 128, 2.0, "3", True):
        with pytest.raises(ValueError, match="seed must be an integer from 0 to 2"):
            core.init(1, seed=bad)


def test_the_terminal_game_shows_no_seed_until_the_game_is_over():
    out = subprocess.run(
        [sys.executable, "-m", "agents.play", "--opponent", "knock_early"],
        input="quit\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "seed" not in out.stdout and not re.search(r"\d{6,}", out.stdout)


# ------------------------------------------------------------------ the HTTP API
@pytest.fixture(scope="module")
def strict_server():
    """A server as started by default (no client seeds), tight limits to test them."""
    pytest.importorskip("uvicorn")
    pytest.importorskip("starlette")
    from agents.play.server import make_app

    app = make_app(make_agent("knock_early"), max_games=5, idle_seconds=600, creates_per_minute=6000)
    with live_server(app) as url:
        yield url, app


def test_a_client_chosen_seed_is_refused_unless_the_server_allows_it(strict_server):
    httpx = pytest.importorskip("httpx")
    url, app = strict_server
    with httpx.Client(base_url=url, timeout=30) as client:
        r = client.post("/api/games", json={"seed": 204532836})
        assert r.status_code == 400 and "--allow-seed" in r.json()["error"]
        r = client.post("/api/games", json={"mode": "hand"})
        assert r.status_code == 201 and "seed" not in r.json()["state"]
        gid = r.json()["id"]
        state = r.json()["state"]
        while not state["over"]:
            state = client.post(f"/api/games/{gid}/actions", json={"action": state["legal_actions"][0]["id"]}).json()[
                "state"
            ]
        game = app.state.games.get(gid)[0]
        assert state["seed"] == str(game._seed) and int(state["seed"]) >= 0  # the record, once it is over
        app.state.games.clear()


BAD_CREATES = [
    {"opponent": ["bot"]},
    {"opponent": {"a": 1}},
    {"rules": ["standard"]},
    {"rules": {"x": 1}},
    {"seat": 1.0},
    {"seat": 0.0},
    {"seat": True},
    {"seat": "1"},
    {"mode": 3},
    {"mode": "tournament"},
    {"opponent": "../checkpoints/champion"},
]


def test_a_bad_create_answers_400_and_stores_nothing(strict_server):
    httpx = pytest.importorskip("httpx")
    url, app = strict_server
    with httpx.Client(base_url=url, timeout=30) as client:
        for body in BAD_CREATES * 2:  # twice the server's room: nothing may be stored
            r = client.post("/api/games", json=body)
            assert r.status_code == 400, (body, r.text)
            assert next(iter(body)) in r.json()["error"], (body, r.text)
        assert app.state.games.store.count() == 0
        deep = b"[" * 2000 + b"]" * 2000
        for body in (deep, b'{"mode": ' + deep + b"}"):
            r = client.post("/api/games", content=body, headers={"content-type": "application/json"})
            assert r.status_code == 400 and "nests deeper" in r.json()["error"]
        gid = client.post("/api/games", json={}).json()["id"]
        r = client.post(
            f"/api/games/{gid}/actions",
            content=b'{"action": ' + deep + b"}",
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 400 and "nests deeper" in r.json()["error"]
        app.state.games.clear()


def test_the_api_never_answers_5xx_to_any_body_and_a_refusal_changes_nothing(strict_server):
    httpx = pytest.importorskip("httpx")
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    url, app = strict_server
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**130), 2**130), st.floats(allow_nan=False), st.text(max_size=12)
    )
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8,
    )
    keys = st.sampled_from(["opponent", "rules", "mode", "seed", "seat", "action", "x"])
    bodies = st.one_of(st.dictionaries(keys, values, max_size=4), values)
    with httpx.Client(base_url=url, timeout=30) as client:
        app.state.games.clear()
        gid = client.post("/api/games", json={"mode": "match"}).json()["id"]

        @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
        @given(body=bodies, target=st.sampled_from(["create", "act"]))
        def check(body, target):
            before = {g: app.state.games.store.load(g) for g in app.state.games.store.ids()}
            path = "/api/games" if target == "create" else f"/api/games/{gid}/actions"
            r = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
            assert r.status_code < 500, (body, r.text)
            assert "error" in r.json() or r.status_code in (200, 201)
            after = {g: app.state.games.store.load(g) for g in app.state.games.store.ids()}
            if r.status_code >= 400:
                assert after == before, body
            elif r.status_code == 201:  # a valid create: keep the room free
                app.state.games.store.delete(r.json()["id"])

        check()
        app.state.games.clear()


def test_creates_are_rate_limited_per_client_and_reads_do_not_keep_a_game():
    pytest.importorskip("starlette")
    from starlette.exceptions import HTTPException

    from agents.play.server import Games

    games = Games(make_agent("random"), max_games=1000, idle_seconds=0.5, creates_per_minute=60, burst=3)
    for _ in range(3):
        games.take_token("10.0.0.1")
    with pytest.raises(HTTPException) as e:
        games.take_token("10.0.0.1")
    assert e.value.status_code == 429 and "try again" in e.value.detail
    games.take_token("10.0.0.2")  # another client still may
    gid = games.add(*games.build({}))
    for _ in range(3):  # polling: a read every 0.1 s
        time.sleep(0.1)
        games.get(gid)
    time.sleep(0.35)  # 0.35 s since the last read, 0.65 s since the last move (the idle limit 0.5 s)
    with pytest.raises(HTTPException) as e:
        games.get(gid)
    assert e.value.status_code == 404


def test_a_move_keeps_a_game_alive():
    pytest.importorskip("starlette")
    from agents.play.server import Games

    games = Games(make_agent("random"), idle_seconds=0.3)
    gid = games.add(*games.build({"mode": "match"}))
    for _ in range(5):
        time.sleep(0.1)
        game = games.get(gid)[0]
        games.move(gid, game.legal_actions()[0]["id"])
    assert games.store.load(gid) is not None


# ------------------------------------------------------------------ the hand cap
class NeverKnocks:
    """Discards (never knocks), draws from the stock, passes the upcard: every hand dead."""

    order = np.r_[np.arange(A.KNOCK), A.DRAW_STOCK, A.PASS, A.TAKE_DISCARD]
    rank = np.full(A.NUM_ACTIONS, -1.0)
    rank[order] = np.arange(len(order), 0, -1)

    def act(self, obs, mask):
        mask = np.asarray(mask, bool).reshape(-1, A.NUM_ACTIONS)
        return np.where(mask, self.rank, -2.0).argmax(1)


CAPPED = Rules(max_hands=3)


def test_a_match_nobody_ends_is_truncated_by_the_hand_cap_in_the_core():
    s = core.init(8, CAPPED, seed=1, mode="match")
    agent, steps = NeverKnocks(), 0
    while not s.done.all():
        core.step(s, agent.act(None, core.legal_action_mask(s)))
        steps += 1
        if s.game_ended.any():
            assert core.truncated(s)[s.game_ended].all()
    assert (s.hands_played == 3).all() and (s.dead_hands == 3).all() and (s.winner == -1).all()
    assert (s.final_scores == 0).all() and steps < 8 * 3 * 100


def test_every_env_truncates_a_match_at_the_hand_cap():
    import gymnasium

    import ginenv
    from ginenv import gin_rummy_table_v0
    from ginenv.single import SingleAgentEnv
    from ginenv.vector import VectorEnv

    agent = NeverKnocks()

    def aec(env):
        env.reset(seed=2)
        for _ in env.agent_iter(max_iter=100_000):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                return term, trunc
            env.step(int(agent.act(None, obs["action_mask"])[0]))
        raise AssertionError("no end")

    assert aec(ginenv.env(rules=CAPPED, mode="match")) == (False, True)
    assert aec(gin_rummy_table_v0.env(num_players=3, rules=CAPPED)) == (False, True)
    assert aec(gin_rummy_table_v0.env(num_players=4, rules=CAPPED)) == (False, True)

    single = SingleAgentEnv(opponent=agent, rules=CAPPED, mode="match")
    obs, info = single.reset(seed=3)
    for _ in range(100_000):
        obs, r, term, trunc, info = single.step(int(agent.act(None, info["action_mask"])[0]))
        if term or trunc:
            break
    assert (term, trunc) == (False, True)

    venv = gymnasium.make_vec(
        "ginenv/GinRummy-v0",
        num_envs=4,
        vectorization_mode="vector_entry_point",
        opponent=agent,
        rules=CAPPED,
        mode="match",
    )
    venv.reset(seed=4)
    seen_trunc = np.zeros(4, bool)
    for _ in range(3000):
        _, _, term, trunc, _ = venv.step(agent.act(None, venv.unwrapped.action_masks()))
        assert not term.any()
        seen_trunc |= trunc
        if seen_trunc.all():
            break
    assert seen_trunc.all()

    vec = VectorEnv(4, CAPPED, seed=5, mode="match")
    _, mask, _ = vec.reset()
    cut = np.zeros(4, bool)
    for _ in range(3000):
        out = vec.step(agent.act(None, mask))
        mask = out.action_mask
        assert not out.terminated.any()
        cut |= out.truncated
        if cut.all():
            break
    assert cut.all()


# ------------------------------------------------------------------ lost work
TINY = [
    "num_envs=16",
    "num_steps=8",
    "num_minibatches=2",
    "hidden_sizes=[16]",
    "eval_every=0",
    "torch_threads=1",
]


def tiny(tmp_path, *sets):
    import train

    return train.make_config(
        sets=[*TINY, f"log_dir={tmp_path / 'runs'}", f"checkpoint_dir={tmp_path / 'ck'}", "run_name=r", *sets]
    )


def test_an_unwritable_checkpoint_or_log_dir_is_refused_before_any_training(tmp_path):
    import train

    blocker = tmp_path / "a_file"
    blocker.write_text("")
    for key in ("checkpoint_dir", "log_dir"):
        config = tiny(tmp_path, f"{key}={blocker / 'sub'}", "total_decisions=100000000")
        start = time.time()
        with pytest.raises(ValueError, match=f"{key} .* is not writable"):
            train.train(config, quiet=True)
        assert time.time() - start < 30  # refused at once, not after the updates
    assert not (tmp_path / "ck").exists() or not any((tmp_path / "ck").rglob("step_*"))


def test_a_resume_keeps_the_runs_thread_count_unless_given(tmp_path):
    import train
    from agents.training.run import resumed_config

    half = train.train(tiny(tmp_path, "total_decisions=512", "torch_threads=2"), quiet=True, stop_after=1)
    _, config = resumed_config(half.parent, train.make_config())  # the default config has 1 thread
    assert train.make_config().torch_threads == 1 and config.torch_threads == 2
    _, config = resumed_config(half.parent, train.make_config(sets=["torch_threads=1"]), overrides=("torch_threads",))
    assert config.torch_threads == 1


def test_the_checksums_cover_the_json_files(tmp_path):
    import shutil

    import train
    from agents.training.checkpoint import CheckpointError
    from agents.training.policy import load_policy

    half = train.train(tiny(tmp_path, "total_decisions=1024"), quiet=True, stop_after=1)
    for name, old, new in (
        ("trainer.json", '"update": 1', '"update": 2'),
        ("policy.json", '"ent_coef_final": 0.001', '"ent_coef_final": 0.002'),
    ):
        run = tmp_path / f"flip_{name}"
        shutil.copytree(half.parent, run)
        path = run / half.name / name
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))
        with pytest.raises(CheckpointError, match="does not match its own checksum"):
            load_policy(run) if name == "policy.json" else train.train(
                tiny(tmp_path, "total_decisions=1024"), resume=run, quiet=True
            )
    text = (half / "policy.json").read_text()
    (tmp_path / "dup").mkdir()
    shutil.copytree(half.parent, tmp_path / "dup" / "r")
    (tmp_path / "dup" / "r" / half.name / "policy.json").write_text(text.replace("{", '{"spec": 1, ', 1))
    with pytest.raises(CheckpointError, match="duplicate key"):
        load_policy(tmp_path / "dup" / "r")


@pytest.mark.parametrize("teacher", ["knock_early", "checkpoint"])
def test_ctrl_c_while_imitating_checkpoints_and_the_resume_equals_an_uninterrupted_run(tmp_path, teacher):
    """A baseline's moves, or a checkpoint's sampled moves and probabilities (its
    sampling generator saved with the imitation)."""
    from safetensors.torch import load_file
    from test_train import interrupt_train

    import train

    if teacher == "checkpoint":
        teacher = str(train.train(tiny(tmp_path / "teacher", "total_decisions=256"), quiet=True).parent)
    sets = [*TINY, f"bc_teacher={teacher}", "bc_decisions=100000", "total_decisions=256"]
    dirs = [f"log_dir={tmp_path / 'runs'}", f"checkpoint_dir={tmp_path / 'ck'}", "run_name=cut"]
    code, _, err = interrupt_train(sets + dirs, f"imitating {teacher}", cwd=tmp_path)
    assert code == 0, err
    run = tmp_path / "ck" / "cut"
    step = run / (run / "LATEST").read_text().strip()
    meta = json.loads((step / "trainer.json").read_text())
    assert meta["update"] == 0 and 0 < meta["imitation"]["seen"] < 100_000
    resumed = train.train(train.make_config(sets=dirs[:1]), resume=run, quiet=True)
    whole = train.train(
        train.make_config(
            sets=[*sets, f"log_dir={tmp_path / 'runs'}", f"checkpoint_dir={tmp_path / 'w'}", "run_name=w"]
        ),
        quiet=True,
    )
    a, b = load_file(str(resumed / "policy.safetensors")), load_file(str(whole / "policy.safetensors"))
    assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)
    assert "imitation" not in json.loads((resumed / "trainer.json").read_text())


def test_ctrl_c_with_a_closed_stdout_still_checkpoints(tmp_path):
    from test_train import interrupt_train

    sets = [*TINY, "total_decisions=100000000", "checkpoint_every=100000"]
    dirs = [f"log_dir={tmp_path / 'runs'}", f"checkpoint_dir={tmp_path / 'ck'}", "run_name=tee"]
    code, _, err = interrupt_train(sets + dirs, "update 2/", cwd=tmp_path, close_stdout=True)
    assert code == 0, err
    assert "BrokenPipeError" not in err and "Traceback" not in err
    run = tmp_path / "ck" / "tee"
    step = run / (run / "LATEST").read_text().strip()
    assert json.loads((step / "trainer.json").read_text())["update"] >= 2


# ------------------------------------------------------------------ bad input
def _raises(fn, message):
    with pytest.raises(ValueError, match=message):
        fn()


def test_the_audits_unclear_and_silent_inputs_are_clear_errors(tmp_path):
    import ginenv
    from agents.play.game import parse_move
    from agents.training.config import make_config
    from ginenv.cards import format_card
    from ginenv.single import SingleAgentEnv
    from ginenv.vector import VectorEnv

    env = ginenv.env()
    env.reset(seed=1)
    cases = [
        (lambda: ginenv.env(foo=1), r"unknown option\(s\) foo; valid options: rules, mode"),
        (lambda: env.step(108), "out of range: actions are integers 0..107"),
        (lambda: env.step(1.5), "action must be an integer in 0..107"),
        (lambda: env.step("104"), "action must be an integer in 0..107"),
        (lambda: format_card("As"), "use parse_cards"),
        (lambda: format_card(1.7), "card must be an integer card id"),
        (lambda: format_card(True), "card must be an integer card id"),
        (lambda: make_agent(""), "agent spec must be a baseline name"),
        (lambda: parse_move("knock", [{"id": 104, "label": "draw"}]), "knock needs the card"),
        (lambda: parse_move("drwa", [{"id": 104, "label": "draw"}]), "unknown command 'drwa'"),
        (lambda: core.init(1, seed=-1), "seed must be an integer from 0 to 2"),
        (lambda: core.init(1, seed=2**130), "seed must be an integer from 0 to 2"),
        (lambda: ginenv.env(perfect_information="no"), "perfect_information must be True or False"),
        (lambda: ginenv.env(perfect_information=2), "perfect_information must be True or False"),
        (lambda: VectorEnv(2, perfect_information="yes"), "perfect_information must be True or False"),
        (lambda: SingleAgentEnv(perfect_information=1), "perfect_information must be True or False"),
        (lambda: SingleAgentEnv(illegal_reward=float("nan")), "illegal_reward must be a finite number"),
        (lambda: SingleAgentEnv(render_mode="rgb"), "render_mode must be None or one of"),
        (lambda: make_config(sets=["vf_coef=1e308"]), "vf_coef must be a number from 0 to 1000"),
        (lambda: make_config(sets=["num_envs=100000000"]), "num_envs must be from 1 to 65,536"),
        (lambda: make_config(sets=["torch_threads=100000"]), "torch_threads must be from 1 to 256"),
        (lambda: make_config(sets=["seed=-1"]), "seed must be from 0 to 2"),
        (lambda: make_config(sets=[f"seed={2**80}"]), "seed must be from 0 to 2"),
        (lambda: make_config(sets=["exp_name=../../escape"]), "exp_name may hold only letters"),
        (lambda: make_config(sets=["bc_decisions=1000"]), "bc_decisions needs bc_teacher"),
    ]
    for fn, message in cases:
        _raises(fn, message)
    quoted, dup = tmp_path / "q.yaml", tmp_path / "d.yaml"
    quoted.write_text("gamma: '0.9'\n")
    dup.write_text("gamma: 0.9\nseed: 3\nseed: 4\n")
    _raises(lambda: make_config(config_file=quoted), "gamma must be a float, got the string '0.9'")
    _raises(lambda: make_config(config_file=dup), "seed given twice")


def test_a_policy_refuses_a_nan_observation_and_an_empty_mask():
    policy = make_agent(str(ROOT / "checkpoints" / "champion"))
    obs, mask = np.zeros(487, np.float32), np.zeros(A.NUM_ACTIONS, bool)
    mask[A.DRAW_STOCK] = True
    assert policy.act(obs, mask) == A.DRAW_STOCK
    bad = obs.copy()
    bad[3] = np.nan
    _raises(lambda: policy.act(bad, mask), "observations must be finite")
    _raises(lambda: policy.probabilities(bad, mask), "observations must be finite")
    _raises(lambda: policy.probabilities(obs, np.zeros(A.NUM_ACTIONS, bool)), "mask is all false")


def test_the_cli_refuses_bad_arguments_before_any_work(tmp_path, capsys):
    import train
    from agents.evaluate import main as evaluate

    for argv, message in (
        (["random", "random", "--matches", str(10**9)], "--matches must be from 1 to 10,000,000"),
        (["random", "random", "--matches", "10", "--hands", "10"], "not both"),
        (["random", "random", "knock_early", "--engine", "openspiel"], "--engine openspiel plays two agents"),
        (["random", "random", "knock_early", "--json", str(tmp_path / "no" / "x.json")], "cannot write there"),
        (
            ["random", "random", "knock_early", "random", "--teams", "--json", str(tmp_path / "no" / "x.json")],
            "cannot write there",
        ),
    ):
        start = time.time()
        with pytest.raises(SystemExit):
            evaluate(argv)
        assert message in capsys.readouterr().err
        assert time.time() - start < 10
    for argv, message in (
        (["--stop-after-minutes", "nan"], "--stop-after-minutes must be a finite number"),
        (["--resume", str(tmp_path), "--config", "configs/smoke.yaml"], "a resumed run keeps its own config"),
        (["--set", "init_from=/nonexistent", "--set", "total_decisions=1024"], "init_from /nonexistent: no checkpoint"),
    ):
        with pytest.raises(SystemExit):
            train.main([*argv, "--set", f"checkpoint_dir={tmp_path / 'ck'}", "--set", f"log_dir={tmp_path / 'runs'}"])
        err = capsys.readouterr().err
        assert message in err and "--resume None" not in err, err


# ------------------------------------------------------------------ installs
def run_without(modules, code):
    """``code`` in a fresh interpreter where importing any of ``modules`` fails."""
    script = f"import sys\nfor m in {list(modules)!r}:\n    sys.modules[m] = None\n{code}"
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "blocked, command, extra",
    [
        (["starlette", "uvicorn"], "agents.serve", "serve"),
        (["torch"], "agents.play", "train"),
        (["torch"], "agents.export", "train"),
        (["onnx"], "agents.export", "onnx"),
        (["ray"], "agents.rllib", "rllib"),
        (["torch"], "agents.evaluate checkpoints/champion random --matches 2", "train"),
        (["torch"], "train.py", "train"),
    ],
)
def test_every_command_of_an_extra_names_the_extra_to_install(blocked, command, extra):
    name, *args = command.split()
    run = (
        f"runpy.run_path({name!r}, run_name='__main__')"
        if name.endswith(".py")
        else f"runpy.run_module({name!r}, run_name='__main__', alter_sys=True)"
    )
    out = run_without(blocked, f"import runpy\nsys.argv = [{name!r}, *{args!r}]\n{run}")
    assert out.returncode != 0
    assert f'".[{extra}' in out.stderr or f",{extra}]" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr, out.stderr


def test_the_evaluator_of_baselines_runs_without_the_train_extra():
    out = run_without(
        ["torch", "tqdm"], "from agents.evaluate import main\nmain(['knock_early', 'random', '--matches', '20'])"
    )
    assert out.returncode == 0, out.stderr
    assert "knock_early vs random" in out.stdout or "knock_early" in out.stdout


def test_agents_imports_after_kaggle_environments_from_another_folder(tmp_path):
    pytest.importorskip("kaggle_environments")
    code = "import kaggle_environments, agents, agents.play.game; print(agents.__file__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve() == (ROOT / "agents" / "__init__.py").resolve()


def test_a_run_resumed_without_its_thread_flag_equals_the_uninterrupted_run(tmp_path):
    # The audit's case: started with one thread count, resumed with no flag (the default
    # is the other). One thread or two give different float sums, so before the fix the
    # weights differed from the first update after the resume on.
    import torch
    from safetensors.torch import load_file

    import train

    sets = ["torch_threads=2", "total_decisions=2048", "hidden_sizes=[64, 64]"]
    whole = train.train(tiny(tmp_path / "a", *sets), quiet=True)
    half = train.train(tiny(tmp_path / "b", *sets), quiet=True, stop_after=2)
    resumed = train.train(train.make_config(sets=[f"log_dir={tmp_path / 'runs'}"]), resume=half.parent, quiet=True)
    assert torch.get_num_threads() == 2  # the run's own count, restored
    a, b = load_file(str(whole / "policy.safetensors")), load_file(str(resumed / "policy.safetensors"))
    assert all((a[k] == b[k]).all() for k in a)
