"""The agent for Kaggle's open_spiel_gin_rummy arena: whole episodes against Kaggle's own
random agent, in either seat."""

import pytest

ke = pytest.importorskip("kaggle_environments")
pytest.importorskip("pyspiel")

from agents.bridges.kaggle import make_kaggle_agent  # noqa: E402


@pytest.mark.parametrize("seat", [0, 1])
def test_a_full_episode_against_kaggles_random_agent(seat):
    env = ke.make("open_spiel_gin_rummy", configuration={"includeLegalActions": True, "seed": 3 + seat}, debug=True)
    agents = [make_kaggle_agent("knock_early"), "random"]
    steps = env.run(agents if seat == 0 else agents[::-1])
    last = steps[-1]
    assert all(s["status"] == "DONE" for s in last), [s["status"] for s in last]
    assert last[seat]["observation"]["isTerminal"]
    assert last[seat]["reward"] is not None and last[seat]["reward"] == -last[1 - seat]["reward"]
    assert len(steps) > 10  # a real hand was played, not a forfeit


def test_the_agent_answers_the_stateless_first_call_with_the_default_action():
    assert make_kaggle_agent("random")({"step": 0, "remainingOverageTime": 60}, {}) == {"submission": -1}
