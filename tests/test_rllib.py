"""Ray RLlib: self-play PPO on the PettingZoo env trains, and its saved policy reloads as
an agent that plays legal moves in this project's evaluator."""

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")

from agents import make_agent  # noqa: E402
from agents.bridges.rllib import RLlibKeys, load_rllib_policy, make_algo, save_policy  # noqa: E402
from agents.evaluate import play  # noqa: E402
from ginenv import gin_rummy_v0  # noqa: E402
from ginenv.rules import Rules  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_the_renamed_observation_keeps_the_envs_values():
    env = RLlibKeys(gin_rummy_v0.env())
    env.reset(seed=3)
    agent = env.agent_selection
    raw = env.env.observe(agent)
    obs = env.observe(agent)
    assert np.array_equal(obs["observations"], raw["observation"])
    assert np.array_equal(obs["action_mask"], raw["action_mask"].astype(np.float32))
    assert env.observation_space(agent).contains(obs)


def test_two_iterations_train_and_the_saved_policy_plays_in_the_evaluator(local_ray, tmp_path):
    algo = make_algo(num_env_runners=0, hidden=(32, 32), batch=600, seed=1)
    before = {k: v.clone() for k, v in algo.get_module("shared").state_dict().items()}
    for _ in range(2):
        result = algo.train()
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 1200
    after = algo.get_module("shared").state_dict()
    assert any((after[k] != before[k]).any() for k in before)  # the policy learnt something
    agent = load_rllib_policy(save_policy(algo, tmp_path / "policy"))
    r = play(agent, make_agent("random"), 30, Rules(), seed=2, mode="hand")  # play() refuses illegal moves
    assert r["games"] == 30
    saved = algo.get_module("shared").state_dict()
    reloaded = agent.module.state_dict()
    assert all(np.array_equal(saved[k].numpy(), reloaded[k].numpy()) for k in saved)
    algo.stop()
