"""What every environment checks alike: the mode and the reward rule's numbers
(``core.rewards``), and a player's move in a one-game state."""

from __future__ import annotations

import math

import numpy as np

from ginenv import core
from ginenv.actions import NUM_ACTIONS, as_action, describe
from ginenv.core import MODES


def env_options(mode, reward_scale, match_win_reward) -> tuple[str, float, float]:
    """``(mode, reward_scale, match_win_reward)`` checked: ``ValueError`` naming the
    option and what is valid."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    out = []
    for name, value in (("reward_scale", reward_scale), ("match_win_reward", match_win_reward)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        out.append(float(value))
    return mode, out[0], out[1]


def checked_move(state: core.State, who: str, action) -> int:
    """``action`` as an int if it is legal for the mover of one-game ``state``, else a
    ``ValueError`` naming the action, the phase and the legal moves (nothing applied)."""
    a = as_action(action)
    mask = core.legal_action_mask(state)[0]
    if not (0 <= a < NUM_ACTIONS and mask[a]):
        legal = ", ".join(describe(x) for x in np.flatnonzero(mask))
        what = describe(a) if 0 <= a < NUM_ACTIONS else "out of range"
        raise ValueError(
            f"{who}: illegal action {a} ({what}) in phase {core.PHASE_NAMES[state.phase[0]]}; legal: {legal}"
        )
    return a
