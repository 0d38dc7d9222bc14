"""The one interface of everything that chooses actions.

An agent acts on a batch: ``act(observations, action_masks) -> actions``, with
``observations`` ``(B, OBS_SIZE)`` float32 (``ginenv.observation``) and ``action_masks``
``(B, 108)`` bool; it returns ``(B,)`` int64 legal actions. It sees only what the
observation shows, never the hidden state. The baselines (``ginenv.baselines``) and the
trained policies (``agents.training.policy``) implement it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Agent(Protocol):
    name: str

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray: ...
