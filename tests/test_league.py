"""Prioritised fictitious self-play (``pfsp``): the learner meets more often the opponents
it loses to; each opponent's win rate follows the episodes it finishes."""

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.training import opponents as O  # noqa: E402
from agents.training.checkpoint import prefixed  # noqa: E402
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


#: Each kind whose episodes several networks share: the mix that gives it all, the extra
#: settings that mix needs, and how a network joins it.
GROUPS = {
    "snapshot": ("{snapshot: 1.0}", [], lambda opp, net: O.add_snapshot(opp, net, 3, "cpu")),
    "frozen": ("{frozen: 1.0}", ["frozen=[a, b, c]"], None),
    "exploiter": ("{exploiter: 1.0}", ["exploiter_every=5"], lambda opp, net: O.add_exploiter(opp, net, 3)),
}


def make_group(kind: str, pfsp: float, n: int, mix: str = ""):
    """Opponents that give ``kind`` its episodes (all of them, or its share of ``mix``),
    with three tiny networks in it."""
    whole, extra, add = GROUPS[kind]
    c = make_config(sets=[f"opponents={mix or whole}", f"pfsp={pfsp}", f"num_envs={n}", *extra])
    opp = O.make_opponents(c, np.random.default_rng(0))
    nets = [ActorCritic(NetworkSpec(hidden_sizes=(8,))) for _ in range(3)]
    if add is None:
        O.set_frozen(opp, nets)
    else:
        for net in nets:
            add(opp, net)
    return opp


@pytest.mark.parametrize("kind", GROUPS)
def test_the_networks_of_a_group_are_weighted_among_themselves(kind):
    nets, pick, rates = O.GROUPS[K[kind]]
    opp = make_group(kind, 2.0, 30_000)
    getattr(opp, rates)[:] = [0.2, 0.5, 0.8]  # weights 0.64, 0.25, 0.04
    O.assign(opp, np.arange(30_000), np.random.default_rng(2))
    assert (opp.kind == K[kind]).all()
    got = np.bincount(getattr(opp, pick), minlength=3) / 30_000
    want = np.array([0.64, 0.25, 0.04]) / 0.93
    assert np.abs(got - want).max() < 0.015
    flat = make_group(kind, 0.0, 30_000)  # without PFSP: alike
    getattr(flat, rates)[:] = [0.2, 0.5, 0.8]
    O.assign(flat, np.arange(30_000), np.random.default_rng(2))
    assert np.abs(np.bincount(getattr(flat, pick), minlength=3) / 30_000 - 1 / 3).max() < 0.015


@pytest.mark.parametrize("kind", GROUPS)
def test_each_network_of_a_group_keeps_its_own_rate_and_the_group_weighs_by_their_mean(kind):
    nets, pick, rates = O.GROUPS[K[kind]]
    opp = make_group(kind, 1.0, 6)
    opp.kind[:] = K[kind]
    getattr(opp, pick)[:] = [0, 0, 2, 2, 2, 1]
    O.record(opp, np.arange(6), np.array([True, True, False, False, True, False]))
    step = {k: 1 - (1 - O.WIN_RATE_STEP) ** k for k in (1, 2, 3)}
    want = [0.5 + step[2] * 0.5, 0.5 - step[1] * 0.5, 0.5 + step[3] * (1 / 3 - 0.5)]
    assert getattr(opp, rates) == pytest.approx(want)
    # the kind's share moves by the group's mean rate (here 0.3), against a baseline at 0.5
    mixed = make_group(kind, 1.0, 6, mix="{self: 0.2, knock_early: 0.4, " + kind + ": 0.4}")
    getattr(mixed, rates)[:] = [0.0, 0.6, 0.3]
    got = O.prioritised(mixed.mix, mixed)
    want = reference_shares({"self": 0.2, "knock_early": 0.4, kind: 0.4}, {"knock_early": 0.5, kind: 0.3}, 1.0)
    for k in ("self", "knock_early", kind):
        assert got[K[k]] == pytest.approx(want[k]), k


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

    c = _league_config(tmp_path, total_decisions=16 * 24 * 14, exploiter_every=4, num_steps=24, knock_ent_coef=0.0)
    last = train.train(c, quiet=True)
    meta = json.loads((last / "trainer.json").read_text())
    assert meta["exploiter_at"] == 12 and len(meta["exploiters"]) == 2  # trained at 4, 8, 12; two kept
    league = last.parent / "league"
    # each exploiter is a train.py run against the learner of its update, frozen
    for u in (4, 8, 12):
        run = league / f"league_exploiter_{u}"
        cfg = json.loads((run / (run / "LATEST").read_text().strip() / "policy.json").read_text())
        assert cfg["config"]["opponents"] == {"frozen": 1.0}
        assert cfg["config"]["frozen"] == [str(league / f"learner_{u}" / f"step_{u:010d}")]
        assert cfg["config"]["knock_ent_coef"] == 0.0  # the run's knock bonus, not the default's 0.5
    t = load_file(str(last / "trainer.safetensors"))
    kinds = t["opponents.kind"].numpy()
    assert (kinds == K["exploiter"]).any()  # games against them in progress
    assert any(k.startswith("exploiters.1.") for k in t)
    assert t["opponents.win_rate"].numpy()[K["exploiter"]] != 0.5  # their episodes were recorded


def test_league_exploiters_train_against_the_whole_league_from_the_learner(tmp_path):
    from safetensors.torch import load_file

    import train

    c = _league_config(
        tmp_path,
        exploiter_every=2,
        league_exploiter_every=3,
        exploiter_from="learner",
        exploiter_pool_size=5,
        learning_rate=1e-4,
        checkpoint_every=1,
        exploiter_decisions=16 * 8 * 16,  # long enough to finish hands
        mode="hand",
    )
    last = train.train(c, quiet=True)  # 6 updates: main exploiters at 2 and 4, league ones at 3
    meta = json.loads((last / "trainer.json").read_text())
    assert meta["league_exploiter_at"] == 3 and meta["exploiter_at"] == 4 and len(meta["exploiters"]) == 3
    run_dir, league = last.parent, last.parent / "league"
    sub_dir = league / "league_league_exploiter_3"
    sub_step = sub_dir / (sub_dir / "LATEST").read_text().strip()
    sub = json.loads((sub_step / "policy.json").read_text())["config"]
    learner = str(league / "learner_3" / f"step_{3:010d}")
    members = [learner] + [str(league / "league_3" / f"snapshot_{k}" / f"step_{3:010d}") for k in range(2)]
    members.append(str(league / "league_3" / "exploiter_0" / f"step_{3:010d}"))  # the main exploiter of 2
    assert sub["frozen"] == members  # the learner, its pool of two, the exploiter so far
    assert sub["opponents"] == pytest.approx({"frozen": 0.8, "gin_hunter": 0.2})  # self+snapshot+exploiter's
    assert sub["pfsp"] == 1.0 and sub["init_from"] == learner and sub["learning_rate"] == 1e-4
    # the members are the league as it stood after update 3, each one's weights saved
    state = load_file(str(run_dir / f"step_{3:010d}" / "trainer.safetensors"))
    policy = load_file(str(run_dir / f"step_{3:010d}" / "policy.safetensors"))
    saved = [load_file(str(Path(m) / "policy.safetensors")) for m in members]
    assert all((saved[0][k] == policy[k]).all() for k in policy)
    for k in range(2):
        assert all((saved[1 + k][n] == v).all() for n, v in prefixed(state, f"pool.{k}.").items())
    assert all((saved[3][n] == v).all() for n, v in prefixed(state, "exploiters.0.").items())
    # started from the learner: after its short run it is nearer the learner than a fresh net is
    exploiter = load_file(str(sub_step / "policy.safetensors"))
    fresh = ActorCritic(c.network_spec()).state_dict()
    gap = sum(float((exploiter[k] - policy[k]).abs().sum()) for k in policy)
    assert gap < 0.1 * sum(float((fresh[k] - policy[k]).abs().sum()) for k in policy)
    sub_meta = json.loads((sub_step / "trainer.json").read_text())
    assert sub_meta["update"] >= 1
    frozen_rates = load_file(str(sub_step / "trainer.safetensors"))["opponents.frozen_win_rate"].numpy()
    assert len(frozen_rates) == 4 and (frozen_rates != 0.5).any()  # PFSP's record of each member


@pytest.mark.parametrize("extra", [{}, {"league_exploiter_every": 3, "exploiter_from": "learner"}])
def test_a_resumed_league_run_matches_an_uninterrupted_one(tmp_path, extra):
    """Stopped between exploiters; the resumed run trains the next one alike."""
    from safetensors.torch import load_file

    import train

    whole = train.train(_league_config(tmp_path / "a", **extra), quiet=True)
    half = train.train(_league_config(tmp_path / "b", **extra), quiet=True, stop_after=3)
    resumed = train.train(_league_config(tmp_path / "b", **extra), resume=half.parent, quiet=True)
    assert resumed.name == whole.name
    for name in ("policy.safetensors", "trainer.safetensors"):
        a, b = load_file(str(whole / name)), load_file(str(resumed / name))
        assert a.keys() == b.keys()
        assert all((a[k] == b[k]).all() for k in a), name


def test_exploiter_shares_need_exploiters():
    with pytest.raises(
        ValueError, match="opponents give episodes to exploiter, but exploiter_every and league_exploiter_every are 0"
    ):
        make_config(sets=["opponents={self: 0.5, exploiter: 0.5}"])


def test_ctrl_c_while_an_exploiter_trains_then_resume_equals_the_uninterrupted_run(tmp_path):
    from safetensors.torch import load_file
    from test_train import interrupt_train

    import train

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
    code, out, err = interrupt_train(items + where, "league: training an exploiter")
    assert code == 0, out + err
    assert "stopping while training an exploiter, at update 2" in out
    run_dir = tmp_path / "b" / "ck" / "league"
    # The only resume hint names the run the user started, not the exploiter's sub-run.
    hints = [line for line in out.splitlines() if "--resume" in line]
    assert hints and all(line.endswith(f"--resume {run_dir}") for line in hints), hints
    step = run_dir / (run_dir / "LATEST").read_text().strip()
    assert json.loads((step / "trainer.json").read_text())["exploiter_at"] == 0  # not yet in the league
    resumed = train.train(train.make_config(sets=items + where), resume=run_dir, quiet=True)
    whole_sets = [f"log_dir={tmp_path / 'a' / 'runs'}", f"checkpoint_dir={tmp_path / 'a' / 'ck'}"]
    whole = train.train(train.make_config(sets=items + whole_sets), quiet=True)
    assert resumed.name == whole.name
    for name in ("policy.safetensors", "trainer.safetensors"):
        a, b = load_file(str(whole / name)), load_file(str(resumed / name))
        assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a), name


def test_frozen_takes_one_checkpoint_or_a_list(tmp_path):
    from agents.training.config import Config

    assert make_config(sets=["frozen=checkpoints/champion"]).frozen == ["checkpoints/champion"]
    assert make_config(sets=["frozen=[a, b/c]"]).frozen == ["a", "b/c"]
    assert make_config().frozen == []
    assert Config(frozen="x").frozen == ["x"] and Config(frozen="").frozen == []  # configs saved before lists
    yaml_file = tmp_path / "c.yaml"
    yaml_file.write_text('frozen: "checkpoints/champion"\nopponents: {frozen: 1.0}\n')
    assert make_config(config_file=yaml_file).frozen == ["checkpoints/champion"]
    for bad, says in (("frozen=[1, 2]", "frozen must be a checkpoint or a list"), ("exploiter_from=best", "scratch")):
        with pytest.raises(ValueError, match=says):
            make_config(sets=[bad])
