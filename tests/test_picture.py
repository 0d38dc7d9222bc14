"""Pictures of the table (``render_mode="rgb_array"``) and where users already are:
PettingZoo's registry, its ``RecordVideo`` and Gymnasium's."""

import numpy as np
import pytest

import ginenv
from ginenv import core

pytest.importorskip("PIL")
from ginenv.picture import frame  # noqa: E402


def random_play(env, rng, steps=None):
    n = 0
    for _agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        n += 1
        if steps is not None and n >= steps:
            break
    return n


def test_a_frame_shows_nothing_the_viewer_cannot_see():
    from test_env import reshuffle_hidden

    rng = np.random.default_rng(0)
    state = core.init(8, "standard", seed=11, mode="match")
    for steps in (0, 7, 19):
        for _ in range(steps):
            mask = core.legal_action_mask(state)
            core.step(state, (rng.random(mask.shape) * mask).argmax(1))
        for viewer in (0, 1):
            other = reshuffle_hidden(state, viewer, rng)
            for g in range(8):
                if state.hand_ended[g] or state.phase[g] == core.DONE:
                    continue
                a, b = frame(state, g, viewer), frame(other, g, viewer)
                assert a.shape == (420, 720, 3) and a.dtype == np.uint8
                assert np.array_equal(a, b), (steps, viewer, g)
                if (other._hands[g, 1 - viewer] != state._hands[g, 1 - viewer]).any():
                    # A spectator's picture shows both hands: the reshuffle shows there.
                    assert not np.array_equal(frame(state, g, None), frame(other, g, None))


def test_a_frame_draws_the_viewers_hand_and_the_pile():
    state = core.init(1, "standard", seed=5)
    a = frame(state, 0, 0)
    b = state.copy()
    b.pile[0, 0] = (b.pile[0, 0] + 1) % 52  # another upcard: the picture changes
    assert not np.array_equal(a, frame(b, 0, 0))
    with pytest.raises(ValueError, match="viewer must be 0, 1 or None"):
        frame(state, 0, 2)


def test_the_aec_env_renders_rgb_array_for_its_viewer():
    env = ginenv.raw_env(render_mode="rgb_array", render_viewer="player_1")
    env.reset(seed=3)
    picture = env.render()
    assert np.array_equal(picture, frame(env._state, 0, 1))
    with pytest.raises(ValueError, match="render_viewer must be"):
        ginenv.raw_env(render_mode="rgb_array", render_viewer="player_7")


def test_pettingzoo_make_builds_each_registered_env():
    pettingzoo = pytest.importorskip("pettingzoo")
    if not hasattr(pettingzoo, "make"):
        pytest.skip("this PettingZoo has no registry (1.27 brings it)")
    for env_id, players in (("ginenv/GinRummy-v0", 2), ("ginenv/GinRummyTable-v0", 3), ("ginenv/GinRummyTeams-v0", 4)):
        env = pettingzoo.make("aec", env_id)
        env.reset(seed=1)
        assert len(env.possible_agents) == players, env_id
        assert random_play(env, np.random.default_rng(0), steps=30) == 30
    env = pettingzoo.make("aec", "ginenv/GinRummy-v0", rules="pagat")
    assert env.unwrapped.rules == ginenv.Rules.preset("pagat")


def test_pettingzoos_record_video_writes_a_video(tmp_path):
    pettingzoo = pytest.importorskip("pettingzoo")
    pytest.importorskip("moviepy")
    wrappers = pytest.importorskip("pettingzoo.utils.wrappers")
    if not hasattr(wrappers, "RecordVideo"):
        pytest.skip("this PettingZoo has no RecordVideo (1.27 brings it)")
    RecordVideo = wrappers.RecordVideo

    env = RecordVideo(ginenv.raw_env(render_mode="rgb_array"), str(tmp_path), episode_trigger=lambda k: True)
    env.reset(seed=2)
    random_play(env, np.random.default_rng(1))
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert videos and all(v.stat().st_size > 1000 for v in videos), list(tmp_path.iterdir())
    assert pettingzoo  # imported for the skip


def test_gymnasiums_record_video_writes_a_video(tmp_path):
    gymnasium = pytest.importorskip("gymnasium")
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(
        ginenv.SingleAgentEnv(opponent="knock_early", render_mode="rgb_array"),
        str(tmp_path),
        episode_trigger=lambda k: True,
    )
    obs, info = env.reset(seed=4)
    rng = np.random.default_rng(2)
    done = False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert videos and videos[0].stat().st_size > 1000
    assert gymnasium
