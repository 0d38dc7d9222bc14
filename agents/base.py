"""The one interface of everything that chooses actions.

An agent acts on a batch: ``act(observations, action_masks) -> actions``, with
``observations`` ``(B, OBS_SIZE)`` float32 (``ginenv.observation``) and ``action_masks``
``(B, 108)`` bool; it returns ``(B,)`` int64 legal actions. It sees only what the
observation shows, never the hidden state. The baselines (``ginenv.baselines``) and the
trained policies (``agents.training.policy``) implement it.

An agent that searches (``reads_state = True``, ``agents.training.search``) also takes
the games' state and the seats it plays, which it reads only through
``ginenv.worlds.resample_hidden``; ``choose`` calls either kind.

An agent with ``pure = True`` chooses from what it is given alone (no state of its own
that its moves advance, as a seeded random agent's generator): asked the same question
twice it answers the same, so a stored game may replay its recorded moves instead of
asking it again (``agents.play.game.Game``'s ``bot_actions``). The deterministic
baselines, the greedy trained policies and the search (which seeds itself from the
observation) are pure; ``random`` is not.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Agent(Protocol):
    name: str

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray: ...


def choose(agent, observations, action_masks, state=None, seats=None) -> np.ndarray:
    """``agent.act``, given the games' ``state`` and ``seats`` where it searches them."""
    if getattr(agent, "reads_state", False):
        return agent.act(observations, action_masks, state=state, seats=seats)
    return agent.act(observations, action_masks)
