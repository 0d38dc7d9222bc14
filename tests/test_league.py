"""Prioritised fictitious self-play (``pfsp``): the learner meets more often the opponents
it loses to; each opponent's win rate follows the episodes it finishes."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.training import opponents as O  # noqa: E402
from agents.training.config import OPPONENT_KINDS, make_config  # noqa: E402
from agents.training.network import ActorCritic, NetworkSpec  # noqa: E402

K = {name: i for i, name in enumerate(OPPONENT_KINDS)}


def make(mix: str, pfsp: float, n: int = 8):
    c = make_config(sets=[f"opponents={mix}", f"pfsp={pfsp}", f"num_envs={n}"])
    return O.make_opponents(c, np.random.default_rng(0))


def reference_shares(mix: dict, win: dict, p: float) -> dict:
    """By hand: every kind but self gets share * (1 - w)**p, rescaled to the total that
    those kinds had; self keeps its share."""
    others = {k: v for k, v in mix.items() if k != "self"}
    weights = {k: v * max(1 - win[k], 1e-3) ** p for k, v in others.items()}
    total = sum(weights.values())
    out = {k: w / total * sum(others.values()) for k, w in weights.items()}
    out["self"] = mix.get("self", 0.0)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_shares_match_a_reference_for_random_mixes_and_win_rates(seed):
    rng = np.random.default_rng(seed)
    names = ["self", "knock_early", "gin_hunter", "patient", "random"]
    raw = rng.random(len(names)) * (rng.random(len(names)) < 0.8)
    raw[1] = max(raw[1], 0.1)
    mix = {k: float(v) / raw.sum() for k, v in zip(names, raw)}
    p = float(rng.choice([0.5, 1.0, 2.0, 3.0]))
    opp = make("{" + ", ".join(f"{k}: {v}" for k, v in mix.items()) + "}", p)
    win = {k: float(rng.choice([rng.random(), 1.0, 0.0])) for k in names}
    for k, w in win.items():
        opp.win_rate[K[k]] = w
    got = O.prioritised(opp.mix, opp)
    want = reference_shares(mix, win, p)
    for k in names:
        assert got[K[k]] == pytest.approx(want[k], abs=1e-12), k
    assert got.sum() == pytest.approx(1.0)


def test_draws_follow_the_prioritised_shares():
    opp = make("{self: 0.5, knock_early: 0.25, gin_hunter: 0.25}", 1.0, n=40_000)
    opp.win_rate[K["knock_early"]], opp.win_rate[K["gin_hunter"]] = 0.9, 0.1
    O.assign(opp, np.arange(40_000), np.random.default_rng(1))
    shares = np.bincount(opp.kind, minlength=len(OPPONENT_KINDS)) / 40_000
    # by hand: 0.25 * 0.1 and 0.25 * 0.9, rescaled to 0.5: 0.05 and 0.45
    assert shares[K["self"]] == pytest.approx(0.5, abs=0.015)
    assert shares[K["knock_early"]] == pytest.approx(0.05, abs=0.01)
    assert shares[K["gin_hunter"]] == pytest.approx(0.45, abs=0.015)


def test_without_pfsp_the_shares_stay_as_given():
    opp = make("{self: 0.5, knock_early: 0.25, gin_hunter: 0.25}", 0.0, n=40_000)
    opp.win_rate[K["knock_early"]] = 0.99
    O.assign(opp, np.arange(40_000), np.random.default_rng(1))
    shares = np.bincount(opp.kind, minlength=len(OPPONENT_KINDS)) / 40_000
    assert shares[K["knock_early"]] == pytest.approx(0.25, abs=0.015)


def test_snapshots_are_weighted_among_themselves():
    opp = make("{snapshot: 1.0}", 2.0, n=30_000)
    for _ in range(3):
        O.add_snapshot(opp, ActorCritic(NetworkSpec(hidden_sizes=(8,))), 3, "cpu")
    opp.pool_win_rate[:] = [0.2, 0.5, 0.8]  # weights 0.64, 0.25, 0.04
    O.assign(opp, np.arange(30_000), np.random.default_rng(2))
    got = np.bincount(opp.snapshot, minlength=3) / 30_000
    want = np.array([0.64, 0.25, 0.04]) / 0.93
    assert np.abs(got - want).max() < 0.015


def test_records_move_each_win_rate_toward_the_results_and_skip_self():
    opp = make("{self: 0.5, knock_early: 0.25, random: 0.25}", 1.0, n=6)
    opp.kind[:] = [K["random"]] * 3 + [K["knock_early"]] * 2 + [K["self"]]
    O.record(opp, np.arange(6), np.array([True, True, True, False, False, True]))
    step3, step2 = 1 - (1 - O.WIN_RATE_STEP) ** 3, 1 - (1 - O.WIN_RATE_STEP) ** 2
    assert opp.win_rate[K["random"]] == pytest.approx(0.5 + step3 * 0.5)
    assert opp.win_rate[K["knock_early"]] == pytest.approx(0.5 - step2 * 0.5)
    assert opp.win_rate[K["self"]] == 0.5
    for _ in range(2000):  # always won: the rate goes to 1, yet the share never to 0
        O.record(opp, np.array([0]), np.array([True]))
    assert opp.win_rate[K["random"]] > 1 - 1e-6
    assert 0 < O.prioritised(opp.mix, opp)[K["random"]] < 0.01


# ------------------------------------------------------------------- exploiters
def _league_config(tmp_path, **extra):
    """test_train's tiny run with a league: PFSP and an exploiter every two updates."""
    from test_train import tiny_config

    league = {
        "opponents": "{self: 0.3, snapshot: 0.2, exploiter: 0.3, gin_hunter: 0.2}",
        "exploiter_every": 2,
        "exploiter_decisions": 256,
        "exploiter_pool_size": 2,
        "pfsp": 1.0,
        "eval_every": 0,
        "torch_threads": 1,
        "run_name": "league",
    }
    return tiny_config(tmp_path, **(league | extra))


def test_the_league_trains_exploiters_of_the_learner_and_plays_them(tmp_path):
    import json

    from safetensors.torch import load_file

    import train

    c = _league_config(tmp_path, total_decisions=16 * 24 * 14, exploiter_every=4, num_steps=24)
    last = train.train(c, quiet=True)
    meta = json.loads((last / "trainer.json").read_text())
    assert meta["exploiter_at"] == 12 and len(meta["exploiters"]) == 2  # trained at 4, 8, 12; two kept
    league = last.parent / "league"
    # each exploiter is a train.py run against the learner of its update, frozen
    for u in (4, 8, 12):
        run = league / f"league_exploiter_{u}"
        cfg = json.loads((run / (run / "LATEST").read_text().strip() / "policy.json").read_text())
        assert cfg["config"]["opponents"] == {"frozen": 1.0}
        assert cfg["config"]["frozen"].startswith(str(league / f"learner_{u}"))
    t = load_file(str(last / "trainer.safetensors"))
    kinds = t["opponents.kind"].numpy()
    assert (kinds == K["exploiter"]).any()  # games against them in progress
    assert any(k.startswith("exploiters.1.") for k in t)
    assert t["opponents.win_rate"].numpy()[K["exploiter"]] != 0.5  # their episodes were recorded


def test_a_resumed_league_run_matches_an_uninterrupted_one(tmp_path):
    """Stopped between exploiters; the resumed run trains the next one alike."""
    from safetensors.torch import load_file

    import train

    whole = train.train(_league_config(tmp_path / "a"), quiet=True)
    half = train.train(_league_config(tmp_path / "b"), quiet=True, stop_after=3)
    resumed = train.train(_league_config(tmp_path / "b"), resume=half.parent, quiet=True)
    assert resumed.name == whole.name
    for name in ("policy.safetensors", "trainer.safetensors"):
        a, b = load_file(str(whole / name)), load_file(str(resumed / name))
        assert a.keys() == b.keys()
        assert all((a[k] == b[k]).all() for k in a), name


def test_exploiter_shares_need_exploiters():
    with pytest.raises(ValueError, match="opponents give episodes to exploiter, but exploiter_every is 0"):
        make_config(sets=["opponents={self: 0.5, exploiter: 0.5}"])


def test_ctrl_c_while_an_exploiter_trains_then_resume_equals_the_uninterrupted_run(tmp_path):
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from safetensors.torch import load_file

    import train

    root = Path(train.__file__).resolve().parent
    sets = {
        "num_envs": 16,
        "num_steps": 8,
        "total_decisions": 16 * 8 * 4,
        "num_minibatches": 2,
        "hidden_sizes": "[16, 16]",
        "opponents": "{self: 0.5, exploiter: 0.3, gin_hunter: 0.2}",
        "exploiter_every": 2,
        "exploiter_decisions": 16 * 8 * 60,  # long enough to be interrupted
        "eval_every": 0,
        "checkpoint_every": 100,
        "torch_threads": 1,
        "run_name": "league",
    }
    items = [f"{k}={v}" for k, v in sets.items()]
    where = [f"log_dir={tmp_path / 'b' / 'runs'}", f"checkpoint_dir={tmp_path / 'b' / 'ck'}"]
    argv = [a for s in items + where for a in ("--set", s)]
    proc = subprocess.Popen(
        [sys.executable, str(root / "train.py"), *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("league: training an exploiter"):
            proc.send_signal(signal.SIGINT)
            break
    out = "".join(lines) + proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, out
    assert "stopping while training an exploiter, at update 2" in out
    run_dir = tmp_path / "b" / "ck" / "league"
    step = run_dir / (run_dir / "LATEST").read_text().strip()
    assert json.loads((step / "trainer.json").read_text())["exploiter_at"] == 0  # not yet in the league
    resumed = train.train(train.make_config(sets=items + where), resume=run_dir, quiet=True)
    whole_sets = [f"log_dir={tmp_path / 'a' / 'runs'}", f"checkpoint_dir={tmp_path / 'a' / 'ck'}"]
    whole = train.train(train.make_config(sets=items + whole_sets), quiet=True)
    assert resumed.name == whole.name
    for name in ("policy.safetensors", "trainer.safetensors"):
        a, b = load_file(str(whole / name)), load_file(str(resumed / name))
        assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a), name
