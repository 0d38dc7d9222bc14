"""A frontend's own position gives exactly the observation and mask of the env."""

import numpy as np
import pytest

from agents import make_agent
from ginenv import core
from ginenv.observation import observe
from ginenv.view import PHASES, observe_position, position


def view_of(s, g):
    p = int(s.current[g])
    o = 1 - p
    names = {v: k for k, v in PHASES.items()}
    return position(
        s.hand(g, p),
        s.pile[g, : s.pile_size[g]].tolist(),
        phase=names[int(s.phase[g])],
        taken=None if s.taken[g] < 0 else int(s.taken[g]),
        opponent_took=np.flatnonzero(s.took[g, o] & s._hands[g, o]),
        opponent_discarded=np.flatnonzero(s.discarded[g, o]),
        opponent_passed=np.flatnonzero(s.passed[g, o]),
        my_discards=np.flatnonzero(s.discarded[g, p]),
        dealer=bool(s.dealer[g] == p),
        scores=(int(s.scores[g, p]), int(s.scores[g, o])),
        turn=int(s.turn[g]),
        rules=s.rules,
        knock_limit=int(s.knock_limit[g]),
    )


@pytest.mark.parametrize("preset", ["standard", "oklahoma"])
def test_position_reproduces_the_envs_observation_and_mask(preset):
    s = core.init(48, preset, seed=2, mode="match")
    agent = make_agent("knock_early")
    checked = 0
    for t in range(60):
        if t % 3 == 0:
            obs, mask = observe(s, s.current), core.legal_action_mask(s)
            for g in np.flatnonzero(~s.done):
                if s.stock_size[g] <= 2:
                    continue
                o, m = observe_position(view_of(s, g))
                assert (o == obs[g]).all(), (t, g)
                assert (m == mask[g]).all(), (t, g)
                checked += 1
        core.step(s, agent.act(observe(s, s.current), core.legal_action_mask(s)))
    assert checked > 500


def test_position_refuses_inconsistent_input():
    with pytest.raises(ValueError, match="10 cards"):
        position("As 2s", "5c")
    with pytest.raises(ValueError, match="two places"):
        position("As 2s 3s 7h 7d 7c Jd Qd Kd 9c", "As")
    with pytest.raises(ValueError, match="knock_limit"):
        position("As 2s 3s 7h 7d 7c Jd Qd Kd 9c", "5c", rules="oklahoma")
    with pytest.raises(ValueError, match="phase"):
        position("As 2s 3s 7h 7d 7c Jd Qd Kd 9c", "5c", phase="bidding")
