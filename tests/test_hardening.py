"""Regressions of the hardening audit: each test names the defect it pins (numbers as in
the audit) and fails on the code before its fix."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from agents.training.checkpoint import json_text
from ginenv import SingleAgentEnv, core, gin_rummy_v0, melds
from ginenv.cards import parse_cards
from ginenv.rules import Rules
from ginenv.view import position
from ginenv.worlds import resample_hidden

ROOT = Path(__file__).parent.parent


def test_2_single_agent_reset_never_returns_a_finished_hand():
    env = SingleAgentEnv(opponent="knock_early", learner_seat=1)
    obs, info = env.reset(seed=169)  # knock_early knocks on its first turn of this deal
    assert info["action_mask"].any()
    skipped = info["skipped_games"]
    assert len(skipped) == 1 and skipped[0]["hand_kind"] == "knock" and skipped[0]["reward"] < 0
    # and the episode plays on normally
    done = False
    while not done:
        obs, reward, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
    for seed in range(300):
        assert env.reset(seed=seed)[1]["action_mask"].any()


def test_3_oklahoma_match_rendering_scores_the_hand_with_its_own_knock_limit():
    env = gin_rummy_v0.raw_env(rules="oklahoma", mode="match", render_mode="ansi")
    rng = np.random.default_rng(0)
    renders = 0
    for seed in range(30):
        env.reset(seed=seed)
        while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            mask = env.observe(env.agent_selection)["action_mask"]
            legal = np.flatnonzero(mask)
            knocks = legal[(legal >= 52) & (legal < 104)]
            env.step(int(knocks[0]) if knocks.size else int(rng.choice(legal)))
            if env._state.hand_ended[0]:
                assert "hand over" in env.render()
                renders += 1
    assert renders > 30


def test_4_a_kill_while_a_step_is_replaced_leaves_latest_naming_a_whole_step(tmp_path):
    from agents.training.checkpoint import resolve_checkpoint, save_checkpoint
    from agents.training.network import ActorCritic, NetworkSpec

    model = ActorCritic(NetworkSpec((8,)))
    run = tmp_path / "run"
    step = save_checkpoint(run, 3, model, {"network": model.spec.to_dict()})
    # A kill after the old step was moved aside and before the new one took its place:
    os.replace(step, run / f".old_{step.name}")
    (run / ".tmp_step_0000000003_999").mkdir()  # and a half-written step of a dead process
    assert resolve_checkpoint(run) == step and (step / "policy.safetensors").is_file()
    save_checkpoint(run, 4, model, {"network": model.spec.to_dict()})
    assert sorted(p.name for p in run.iterdir()) == ["LATEST", "step_0000000003", "step_0000000004"]


def test_5_dealing_anew_what_the_mover_cannot_see_leaves_no_trace_in_the_state():
    rng = np.random.default_rng(3)
    state = core.init(256, "standard", seed=2)
    for _ in range(9):
        mask = core.legal_action_mask(state)
        core.step(state, np.where(mask.any(1), (rng.random(mask.shape) * mask).argmax(1), 0))
    drawing = np.flatnonzero(np.isin(state.phase, (core.DRAW, core.OFFER, core.FORCED_DRAW)))
    assert drawing.size > 50
    # The last discarder's deadwood table is gone once its turn is over ...
    assert (state._after_discard[drawing] == melds.NOT_IN_HAND).all()
    # ... and the seed that dealt the hands is private, and replaced in a resampled world.
    assert "game_seed" not in {f for f in vars(state)}
    other = resample_hidden(state, state.current.astype(np.int64), rng)
    assert (other._game_seed != state._game_seed).all()


def test_6_position_takes_every_engine_position_and_refuses_impossible_ones():
    hand = "As 2s 3s 7h 7d 7c Jd Qd Kd 9c 4c"
    deck = [c for c in range(52) if c not in parse_cards(hand)]
    pile = deck[:29]  # 11 in hand, 29 in the pile, 10 for the opponent: 2 left in the stock
    s = position(hand, pile, phase="discard")
    assert s.stock_size[0] == 2 and core.legal_action_mask(s)[0].any()
    base = dict(hand="As 2s 3s 7h 7d 7c Jd Qd Kd 9c", pile="5c 3c")
    for bad, message in (
        (dict(phase="discard", hand=hand, taken="5d"), "taken must be a card of the hand"),
        (dict(knock_limit=50), "knock_limit must be an integer from 0"),
        (dict(pile=[60]), "pile must hold card ids 0..51"),
        (dict(scores=(2**40, 0)), "scores must be two integers"),
        (dict(turn=-3), "turn must be"),
    ):
        with pytest.raises(ValueError, match=message):
            position(**{**base, **bad})


@pytest.mark.parametrize("action", [105.9, "105", None, np.array([1, 2]), True, np.array([0.5])])
def test_7_single_agent_step_refuses_what_is_not_one_integer(action):
    env = SingleAgentEnv(opponent="random")
    env.reset(seed=1)
    before = env._state.copy()
    with pytest.raises(ValueError, match="action must be"):
        env.step(action)
    assert all((a == b).all() for a, b in zip(before.arrays().values(), env._state.arrays().values()))


def test_7_a_one_element_integer_array_is_one_action():
    env = SingleAgentEnv(opponent="random")
    obs, info = env.reset(seed=1)
    env.step(np.array([int(np.flatnonzero(info["action_mask"])[0])]))


def test_9_rules_refuse_what_the_engine_cannot_count():
    for bad in ({"max_turns": 40000}, {"target": 10**12}, {"gin_bonus": 10**9}):
        with pytest.raises(ValueError, match=f"rule {next(iter(bad))} must be"):
            Rules(**bad)


def test_10_engine_and_cards_name_the_bad_input():
    for kwargs, message in (
        ({"dealers": np.array([2])}, "dealers must be 1 values, each 0 or 1"),
        ({"seed": None}, "seed must be an integer"),
        ({"seed": 1.7}, "seed must be an integer"),
        ({"decks": np.zeros((1, 5), int)}, r"decks must be a \(1, 52\) array"),
    ):
        with pytest.raises(ValueError, match=message):
            core.init(1, "standard", **kwargs)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        core.init(True, "standard")
    with pytest.raises(ValueError, match="player must be 0, 1"):
        resample_hidden(core.init(2, "standard"), 2, np.random.default_rng(0))
    for bad in (None, 123, ["As", 5]):
        with pytest.raises(ValueError, match="cards must be text|bad card 5"):
            parse_cards(bad)
    with pytest.raises(ValueError, match="reward_scale must be a finite number"):
        gin_rummy_v0.raw_env(reward_scale="a")


def test_10_policy_files_of_the_wrong_shape_are_refused_by_name(tmp_path):
    from agents.training.checkpoint import CheckpointError
    from agents.training.policy import load_policy

    src = ROOT / "checkpoints" / "champion"
    for name, edit, message in (
        ("list", lambda p: p.write_text("[1, 2]"), "should hold the policy's spec"),
        ("typed", lambda p: p.write_text(json_text({**json.loads(p.read_text()), "network": [128]})), "network spec"),
    ):
        run = tmp_path / name
        shutil.copytree(src, run)
        edit(run / "step_0000001525" / "policy.json")
        with pytest.raises(CheckpointError, match=message):
            load_policy(run)
    for content in (b"\xff\xfe\x00binary", b""):
        run = tmp_path / f"latest{len(content)}"
        shutil.copytree(src, run)
        (run / "LATEST").write_bytes(content)
        with pytest.raises(CheckpointError, match="LATEST"):
            load_policy(run)


def test_10_resume_of_a_missing_or_broken_run_is_a_clean_cli_error(tmp_path, capsys):
    import train

    with pytest.raises(SystemExit):
        train.main(["--resume", str(tmp_path / "missing")])
    assert "no checkpoint at" in capsys.readouterr().err
    broken = tmp_path / "broken"
    shutil.copytree(ROOT / "checkpoints" / "champion", broken)
    trainer = broken / "step_0000001525" / "trainer.json"
    trainer.write_text(
        json.dumps({k: v for k, v in json.loads(trainer.read_text()).items() if k not in ("optimizer", "json_sha256")})
    )
    with pytest.raises(SystemExit):
        train.main(["--resume", str(broken)])
    assert "lacks optimizer" in capsys.readouterr().err


def test_10_evaluator_and_demo_refuse_bad_input_before_any_work(tmp_path, capsys):
    from agents.evaluate import main as evaluate
    from ginenv.demo import main as demo

    for argv, message in (
        (["random", "random", "--seed", "-1"], "--seed must be a non-negative integer"),
        (["random", "random", "--json", str(tmp_path / "no" / "x.json")], "cannot write there"),
    ):
        with pytest.raises(SystemExit):
            evaluate(argv)
        assert message in capsys.readouterr().err
    for argv, message in (
        (["Zz 2s", "As"], "bad card 'Zz'"),
        (["As 2s"], "give both hands"),
        (["As 2s 3s 4s 5s 6s 7s 8s 9s Ts", "As 2h 3h 4h 5h 6h 7h 8h 9h Th"], "in both hands"),
    ):
        with pytest.raises(SystemExit):
            demo(argv)
        assert message in capsys.readouterr().err
    demo([])
    assert "under standard" in capsys.readouterr().out


def test_11_a_flipped_byte_in_the_weights_is_refused(tmp_path):
    from agents.training.checkpoint import CheckpointError
    from agents.training.policy import load_policy

    run = tmp_path / "champion"
    shutil.copytree(ROOT / "checkpoints" / "champion", run)
    weights = run / "step_0000001525" / "policy.safetensors"
    data = bytearray(weights.read_bytes())
    data[-100] ^= 0x01  # one bit of one weight
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="does not match the checksum"):
        load_policy(run)


def test_12_weights_are_written_with_the_usual_file_mode(tmp_path):
    from agents.training.checkpoint import save_checkpoint
    from agents.training.network import ActorCritic, NetworkSpec

    step = save_checkpoint(tmp_path, 1, ActorCritic(NetworkSpec((8,))), {})
    modes = {p.name: p.stat().st_mode & 0o777 for p in step.iterdir()}
    assert modes["policy.safetensors"] == modes["policy.json"]
