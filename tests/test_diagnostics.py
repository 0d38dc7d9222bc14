"""What the trainer logs to explain a run (how its hands end, who ends them, their length,
the knock rate, the entropy by phase) against slow references, and the time-to-strength
script against the evaluator."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.training import rollout
from agents.training.config import OPPONENT_KINDS, make_config
from agents.training.network import ActorCritic
from agents.training.opponents import SELF, make_opponents
from ginenv import VectorEnv, core

ROOT = Path(__file__).parent.parent


class RecordingEnv(VectorEnv):
    """A VectorEnv that keeps, after every step, what the reference needs."""

    def step(self, actions):
        out = super().step(actions)
        s = self.state
        self.record.append((out.hand_ended.copy(), out.hand_kind.copy(), s.last_knocker.copy(), s.hand_turns.copy()))
        return out


def test_hand_stats_match_a_game_by_game_count():
    config = make_config(
        sets=["num_envs=24", "num_steps=200", "hidden_sizes=[16]", "opponents={self: 0.4, knock_early: 0.6}"]
    )
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    env = RecordingEnv(config.num_envs, config.rules, seed=3)
    env.record = []
    opp = make_opponents(config, rng)
    kinds_before = []
    model = ActorCritic(config.network_spec())

    # The opponents' kind and seat change as episodes end: keep them per step.
    real_assign = rollout.O.assign

    def assign(o, ended, r):
        kinds_before.append((o.kind.copy(), o.learner_seat.copy()))
        real_assign(o, ended, r)

    rollout.O.assign = assign
    try:
        buf, _ = rollout.collect(env, model, opp, rng, config.num_steps, torch.device("cpu"))
    finally:
        rollout.O.assign = real_assign
    # The slow reference: game by game, step by step.
    kinds = [0] * len(core.HAND_KIND_NAMES)
    turns, by_learner, by_opponent = [], 0, 0
    ends = np.zeros((len(OPPONENT_KINDS), 3, len(core.HAND_KIND_NAMES)), np.int64)
    for (ended, kind, knocker, hand_turns), (opp_kind, seat) in zip(env.record, kinds_before):
        for g in range(config.num_envs):
            if not ended[g]:
                continue
            kinds[kind[g]] += 1
            turns.append(int(hand_turns[g]))
            if opp_kind[g] != SELF:
                ends[opp_kind[g], 2 if knocker[g] < 0 else int(knocker[g] != seat[g]), kind[g]] += 1
            if knocker[g] >= 0 and opp_kind[g] != SELF:
                if knocker[g] == seat[g]:
                    by_learner += 1
                else:
                    by_opponent += 1
    assert sum(kinds) > 20
    assert buf.hands["kinds"].tolist() == kinds
    assert buf.hands["turns"].tolist() == turns
    assert (buf.hands["by_learner"], buf.hands["by_opponent"]) == (by_learner, by_opponent)
    stats = rollout.hand_stats(buf)
    assert stats["hands/mean_draws"] == pytest.approx(np.mean(turns))
    assert stats["hands/ended_by_learner"] == pytest.approx(by_learner / (by_learner + by_opponent))
    # Against each opponent kind: how the learner won its hands, its knocks' undercut rate.
    assert (buf.hands["ends"] == ends).all()
    k = OPPONENT_KINDS.index("knock_early")
    col = {name: j for j, name in enumerate(core.HAND_KIND_NAMES)}
    played = ends[k].sum()
    assert stats["hands_vs_knock_early/won_by_gin"] == pytest.approx(ends[k, 0, col["gin"]] / played)
    assert stats["hands_vs_knock_early/won_by_undercut"] == pytest.approx(ends[k, 1, col["undercut"]] / played)
    learner_knocks = ends[k, 0, col["knock"]] + ends[k, 0, col["undercut"]] + ends[k, 0, col["tie"]]
    if learner_knocks:
        rate = stats["hands_vs_knock_early/undercut_rate_of_knocks"]
        assert rate == pytest.approx(ends[k, 0, col["undercut"]] / learner_knocks)
    assert not any(key.startswith("hands_vs_self") for key in stats)
    # The knock rate: the learner's discard decisions where a knock was legal, one by one.
    legal = knocked = 0
    for t in range(config.num_steps):
        for g in range(config.num_envs):
            if buf.valid[t, g] and buf.mask[t, g, 52:104].any():
                legal += 1
                knocked += 52 <= buf.actions[t, g] < 104
    assert legal > 0 and stats["decisions/knock_rate_when_legal"] == pytest.approx(knocked / legal)
    both = took = 0
    for t in range(config.num_steps):
        for g in range(config.num_envs):
            if buf.valid[t, g] and buf.mask[t, g, 104] and buf.mask[t, g, 105]:
                both += 1
                took += buf.actions[t, g] == 105
    assert both > 0 and stats["decisions/take_rate_when_legal"] == pytest.approx(took / both)


def test_the_update_logs_entropy_by_phase_as_a_per_decision_mean():
    from agents.training import ppo

    config = make_config(sets=["num_envs=16", "num_steps=32", "hidden_sizes=[16]", "update_epochs=1"])
    torch.manual_seed(1)
    rng = np.random.default_rng(1)
    env = VectorEnv(config.num_envs, config.rules, seed=5)
    model = ActorCritic(config.network_spec())
    opp = make_opponents(config, rng)
    buf, _ = rollout.collect(env, model, opp, rng, config.num_steps, torch.device("cpu"))
    adv, returns = rollout.advantages(buf, config.gamma, config.gae_lambda)
    batch = ppo.flatten(buf, adv, returns, torch.device("cpu"))
    # The reference: the entropy of each decision under the weights the last epoch starts from.
    with torch.no_grad():
        ent = model.action_dist(batch["b_obs"], batch["b_mask"]).entropy()
    draw = batch["b_mask"][:, 104:107].any(1)
    optimizer, groups = ppo.make_optimizer(model, config)
    # A learning rate of ~0 keeps the weights as they are through the minibatches.
    optimizer.param_groups[0]["lr"] = 1e-30
    stats = ppo.update(model, optimizer, groups, batch, config, 0.0, False, rng, torch.device("cpu"))
    assert stats["losses/entropy_draw"] == pytest.approx(ent[draw].mean().item(), rel=1e-4)
    assert stats["losses/entropy_discard"] == pytest.approx(ent[~draw].mean().item(), rel=1e-4)


def test_time_to_strength_reports_the_evaluators_figures(tmp_path):
    import train
    from agents import make_agent
    from agents.evaluate import play
    from ginenv.rules import Rules

    sets = [
        "num_envs=16",
        "num_steps=8",
        f"total_decisions={16 * 8 * 3}",
        "hidden_sizes=[16]",
        "eval_every=0",
        "checkpoint_every=1",
        "opponents={random: 1}",
        "run_name=tts",
        f"checkpoint_dir={tmp_path / 'ck'}",
        f"log_dir={tmp_path / 'runs'}",
    ]
    run = train.train(train.make_config(sets=sets), quiet=True).parent
    r = subprocess.run(
        # knock_early ends the matches quickly (an untrained net against random play
        # plays mostly dead hands, and a match to 100 lasts long)
        [sys.executable, "bench/time_to_strength.py", str(run), "--opponent", "knock_early", "--matches", "20"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = [line for line in r.stdout.splitlines() if line.startswith("step_")]
    assert len(lines) == 3
    rates = []
    for k, line in enumerate(lines, start=1):
        step = run / f"step_{k:010d}"
        want = play(make_agent(str(step)), make_agent("knock_early", seed=2026), 20, Rules.preset("standard"), 2026)
        rates.append(want["win_rate_a"])
        assert f"win rate {want['win_rate_a']:.3f}" in line, line
        assert f"{16 * 8 * k / 1e6:.2f}M decisions" in line
    first = next((k for k, rate in enumerate(rates) if rate >= 0.5), None)
    if first is None:
        assert "never reached 0.50" in r.stdout
    else:
        assert f"first reached 0.50 against knock_early: step_{first + 1:010d}" in r.stdout


def test_the_knock_bonus_keeps_the_knock_open_and_logs_its_entropy():
    """With ``knock_ent_coef`` the update raises the knock-or-not entropy (a gradient
    step on it alone, everything else at 0), and logs it per knock decision."""
    from agents.training import ppo
    from agents.training.network import knock_entropy

    config = make_config(
        sets=[
            "num_envs=32",
            "num_steps=64",
            "hidden_sizes=[16]",
            "update_epochs=1",
            "num_minibatches=1",
            "vf_coef=0",
            "opponents={self: 1.0}",
        ]
    )
    torch.manual_seed(2)
    rng = np.random.default_rng(2)
    env = VectorEnv(config.num_envs, config.rules, seed=7)
    model = ActorCritic(config.network_spec())
    buf, _ = rollout.collect(env, model, make_opponents(config, rng), rng, config.num_steps, torch.device("cpu"))
    adv, returns = rollout.advantages(buf, config.gamma, config.gae_lambda)
    batch = ppo.flatten(buf, adv, returns, torch.device("cpu"))
    batch["b_adv"][:] = 1.0  # normalised to 0: no policy gradient
    # Random play seldom comes down to 10 points: in every other discard turn, let one
    # card be knocked (the knock then has about 1/12 of the mass: a low entropy).
    turns = batch["b_mask"][:, :52].any(1).nonzero().flatten()[::2]
    batch["b_mask"][turns, 52 + batch["b_mask"][turns, :52].int().argmax(1)] = True
    with torch.no_grad():
        before, rows = knock_entropy(model.actor(batch["b_obs"]), batch["b_mask"])
    assert rows.sum() > 5
    optimizer, groups = ppo.make_optimizer(model, config)
    optimizer.param_groups[0]["lr"] = 1e-2
    stats = ppo.update(
        model, optimizer, groups, batch, config, 0.0, False, rng, torch.device("cpu"), knock_ent_coef=1.0
    )
    assert stats["losses/entropy_knock"] == pytest.approx(before.mean().item(), rel=1e-4)
    with torch.no_grad():
        after, _ = knock_entropy(model.actor(batch["b_obs"]), batch["b_mask"])
    assert after.mean() > before.mean() + 1e-3


def test_the_knock_bonus_falls_to_zero_over_its_own_horizon():
    from agents.training.loop import knock_bonus

    whole = make_config(sets=["total_decisions=3276800", "num_envs=512", "num_steps=64"])  # 100 updates
    assert [knock_bonus(whole, u) for u in (0, 50, 100)] == [0.5, 0.25, 0.0]
    short = make_config(sets=["total_decisions=3276800", "num_envs=512", "num_steps=64", "knock_ent_decisions=655360"])
    assert [knock_bonus(short, u) for u in (0, 10, 20, 60)] == [0.5, 0.25, 0.0, 0.0]  # 20 updates, then 0
    with pytest.raises(ValueError, match="knock_ent_decisions must be >= 0"):
        make_config(sets=["knock_ent_decisions=-1"])


def test_compare_pairs_each_figure_with_the_same_one_of_the_other_tree():
    """``bench/compare.py`` reads both trees' outputs: a line only the newer prints (a
    figure added since) leaves the others paired, by label and occurrence."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("compare", ROOT / "bench" / "compare.py")
    compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare)
    new = dict((k, v) for k, _, v in compare.figures("a: 1 s, 2,000/s\ncores 1.5\na: 3 s, 4,000/s\n"))
    old = dict((k, v) for k, _, v in compare.figures("a: 10 s, 20,000/s\na: 30 s, 40,000/s\n"))
    pairs = sorted((new[k], old[k]) for k in new.keys() & old.keys())
    assert pairs == [(1.0, 10.0), (3.0, 30.0), (2000.0, 20000.0), (4000.0, 40000.0)]


def test_compare_copies_a_newer_benchmark_into_the_other_tree():
    """``--copy FILE`` puts this tree's FILE into the other tree before running: a
    benchmark written after REV runs against REV's code (without it the command fails
    there: the file is not in REV)."""
    probe = ROOT / "bench" / "_copy_probe_for_test.txt"
    probe.write_text("x" * 37)
    try:
        cmd = [sys.executable, "-c", "print(len(open('bench/_copy_probe_for_test.txt').read()), 'chars')"]
        copy = ["--copy", "bench/_copy_probe_for_test.txt"]
        out = subprocess.run(
            [sys.executable, "bench/compare.py", "HEAD", "--rounds", "1", *copy, "--"] + cmd,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        row = next(line for line in out.stdout.splitlines() if "ratio" in line)
        assert row.split()[:4] == ["37.000", "37.000", "ratio", "1.000"], out.stdout
        bare = subprocess.run(
            [sys.executable, "bench/compare.py", "HEAD", "--rounds", "1", "--"] + cmd,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert bare.returncode != 0
    finally:
        probe.unlink()


def test_the_scorecard_gives_the_evaluators_figures_and_says_which_targets_are_met(tmp_path):
    """bench/scorecard.py against the evaluation CLI's own JSON, opponent by opponent: the
    win rate, the undercut rate of the bot's knocks, and met / missed from the targets."""
    out = tmp_path / "card.json"
    r = subprocess.run(
        [sys.executable, "bench/scorecard.py", "patient", "--opponents", "camper,knock_early"]
        + ["--reference", "gin_hunter", "--matches", "30", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    rows = json.loads(out.read_text())["rows"]
    assert [row["opponent"] for row in rows] == ["camper", "knock_early", "gin_hunter"]
    lines = [line for line in r.stdout.splitlines() if "knocks undercut" in line]
    for row, line, target in zip(rows, lines, (0.62, 0.80, 0.55)):
        cli = tmp_path / f"{row['opponent']}.json"
        subprocess.run(
            [sys.executable, "-m", "agents.evaluate", "patient", row["opponent"]]
            + ["--matches", "30", "--seed", "2026", "--json", str(cli)],
            cwd=ROOT,
            capture_output=True,
            check=True,
            timeout=300,
        )
        want = json.loads(cli.read_text())["results"][0]
        assert row["win_rate"] == want["win_rate_a"] and row["undercut_rate"] == want["hand_ends"]["a"]["undercut_rate"]
        assert line.split()[0] == row["opponent"] and f"{want['win_rate_a']:.3f}" in line
        assert f"target {target:g}  {'met' if want['win_rate_a'] >= target else 'missed'}" in line
