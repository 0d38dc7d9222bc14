"""The one interface of everything that chooses actions.

An agent acts on a batch: ``act(observations, action_masks) -> actions``, with
``observations`` ``(B, OBS_SIZE)`` float32 (``ginenv.observation``) and ``action_masks``
``(B, 108)`` bool; it returns ``(B,)`` int64 legal actions. It sees only what the
observation shows, never the hidden state. Trained policies implement the same method.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Agent(Protocol):
    name: str

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray: ...


def check_batch(observations, action_masks):
    obs = np.asarray(observations, dtype=np.float32)
    mask = np.asarray(action_masks).astype(bool)
    if obs.ndim == 1:
        obs, mask = obs[None], mask[None]
    if mask.ndim != 2 or len(obs) != len(mask):
        raise ValueError(f"observations {obs.shape} and action masks {mask.shape} do not pair up")
    if not mask.any(1).all():
        raise ValueError("every row needs at least one legal action (was an off-move mask passed?)")
    return obs, mask
