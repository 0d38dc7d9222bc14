"""The Gymnasium vector env and the SB3 VecEnv over the batched core: registration,
batched play equal to a plain per-game loop, masks, seats, autoreset, and MaskablePPO
training on it."""

import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from ginenv import core
from ginenv.baselines import KnockEarly
from ginenv.observation import observe
from ginenv.vector_env import GinRummyVectorEnv

ROOT = Path(__file__).parent.parent


def test_make_and_make_vec_work_without_importing_ginenv_first():
    script = """
import gymnasium
env = gymnasium.make("ginenv:ginenv/GinRummy-v0", opponent="knock_early")
venv = gymnasium.make_vec("ginenv:ginenv/GinRummy-v0", num_envs=4, vectorization_mode="vector_entry_point",
                          opponent="knock_early")
obs, info = venv.reset(seed=1)
print(type(venv.unwrapped).__name__, obs.shape, info["action_mask"].shape)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["GinRummyVectorEnv", "(4,", "487)", "(4,", "108)"]


def reference_game(game_seed, i, steps, choose, mode):
    """Game i of the batch alone, plainly: its game seed, the learner in seat (episode +
    i) % 2, knock_early answering until the learner's turn. Per learner step: the
    observation, the mask, the learner's reward up to its next move, and whether the
    episode ended."""
    s = core.init(1, "standard", game_seeds_=np.array([game_seed], np.uint64), mode=mode, auto_reset=True)
    opp, rows, episode, moved, pending = KnockEarly(), [], 0, False, 0.0
    while True:
        learner = (episode + i) % 2
        if s.current[0] != learner:  # the opponent's move
            core.step(s, opp.act(observe(s, 1 - learner), core.legal_action_mask(s)))
            r = core.rewards(s, 0.01)[0, learner]
            if moved:
                rows[-1][2] += r
            elif not s.game_ended[0]:
                pending += r  # owed to the learner's first move (a skipped game's is dropped)
            if s.game_ended[0]:
                if moved:
                    rows[-1][3] = True
                episode, moved, pending = episode + 1, False, 0.0
            continue
        if len(rows) == steps:
            return rows
        obs, mask = observe(s, learner)[0], core.legal_action_mask(s)[0].copy()
        core.step(s, np.array([choose(i, len(rows), mask)]))
        rows.append([obs, mask, core.rewards(s, 0.01)[0, learner] + pending, bool(s.game_ended[0])])
        pending, moved = 0.0, True
        if s.game_ended[0]:
            episode, moved = episode + 1, False


def reference_games(seed, n, steps, choose, mode="hand"):
    seeds = core.game_seeds(seed, n)
    return [reference_game(seeds[i], i, steps, choose, mode) for i in range(n)]


def chooser(seed):
    rngs = {}

    def choose(i, t, mask):
        rng = rngs.setdefault(i, np.random.default_rng(seed * 1000 + i))
        return int(rng.choice(np.flatnonzero(mask)))

    return choose


@pytest.mark.parametrize("mode", ["hand", "match"])
def test_the_batch_plays_exactly_the_games_a_per_game_loop_plays(mode):
    n, steps = 12, 80
    ref = reference_games(5, n, steps, chooser(1), mode)
    env = GinRummyVectorEnv(n, opponent="knock_early", mode=mode)
    obs, info = env.reset(seed=5)
    choose = chooser(1)
    for t in range(steps):
        mask = env.action_masks()
        for i in range(n):
            assert np.array_equal(obs[i], ref[i][t][0]) and np.array_equal(mask[i], ref[i][t][1]), (i, t)
        actions = np.array([choose(i, t, mask[i]) for i in range(n)])
        obs, rewards, term, trunc, info = env.step(actions)
        for i in range(n):
            assert rewards[i] == pytest.approx(ref[i][t][2], abs=1e-6), (i, t)
            assert bool(term[i] | trunc[i]) == ref[i][t][3], (i, t)


def test_masks_are_writable_seats_alternate_and_episode_ends_are_reported():
    env = GinRummyVectorEnv(16, opponent="random")
    obs, info = env.reset(seed=2)
    assert list(info["seat"]) == [i % 2 for i in range(16)]
    mask = env.action_masks()
    assert mask.flags.writeable and mask.any(1).all()
    mask[:] = False  # a copy: the env's own state is untouched
    assert env.action_masks().any(1).all()
    rng = np.random.default_rng(0)
    ends, first_seat = 0, info["seat"].copy()
    returns = np.zeros(16)
    for _ in range(400):
        m = env.action_masks()
        obs, r, term, trunc, info = env.step((rng.random(m.shape) * m).argmax(1))
        returns += r
        done = term | trunc
        if done.any():
            assert info["_final_info"][done].all()
            for i in np.flatnonzero(done):
                assert info["final_info"][i]["seat"] != info["seat"][i]  # the next episode, the other seat
                ends += 1
    assert ends > 50 and (info["seat"] != first_seat).any()
    assert obs.shape == (16, 487) and obs.dtype == np.float32


def test_bad_actions_are_refused_and_change_nothing():
    env = GinRummyVectorEnv(4, opponent="random")
    env.reset(seed=3)
    before = env.versus.state.copy()
    for bad in (np.full(4, 999), np.zeros(3, int), np.full(4, 0.5)):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    assert all(np.array_equal(a, b) for a, b in zip(before.arrays().values(), env.versus.state.arrays().values()))
    with pytest.raises(ValueError, match="num_envs"):
        GinRummyVectorEnv(0)


def test_the_sb3_vecenv_speaks_sb3s_api():
    pytest.importorskip("stable_baselines3")
    from agents.bridges.sb3 import GinRummyVecEnv

    venv = GinRummyVecEnv(8, opponent="knock_early")
    venv.seed(4)
    obs = venv.reset()
    masks = np.stack(venv.env_method("action_masks"))
    assert obs.shape == (8, 487) and masks.shape == (8, 108) and masks.flags.writeable
    venv.step_async(masks.argmax(1))
    obs, rewards, dones, infos = venv.step_wait()
    assert rewards.dtype == np.float32 and len(infos) == 8 and dones.dtype == bool
    assert venv.env_is_wrapped(gymnasium.Wrapper) == [False] * 8


def test_maskable_ppo_trains_on_the_batch_and_beats_random_in_most_hands():
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from agents.bridges.sb3 import GinRummyVecEnv

    torch.manual_seed(0)
    venv = GinRummyVecEnv(64, opponent="random")
    venv.seed(0)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=64,
        batch_size=1024,
        n_epochs=4,
        learning_rate=1e-3,
        gamma=0.99,
        ent_coef=0.01,
        seed=0,
        verbose=0,
        device="cpu",
    )
    model.learn(total_timesteps=400_000)  # about 50 s here; 300k reach 0.80 of hands, 500k 0.97
    test = GinRummyVectorEnv(64, opponent="random")
    obs, info = test.reset(seed=123)
    won = lost = 0
    while won + lost < 300:
        actions, _ = model.predict(obs, action_masks=test.action_masks(), deterministic=True)
        obs, r, term, trunc, info = test.step(actions)
        done = term | trunc
        won += int((r[done] > 0).sum())
        lost += int((r[done] <= 0).sum())
    assert won / (won + lost) > 0.6, (won, lost)
