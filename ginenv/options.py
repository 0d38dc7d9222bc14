"""The options every environment shares, checked once: the mode and the reward rule's
numbers (``core.rewards``)."""

from __future__ import annotations

import math

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
