"""What every environment checks alike: the mode and the reward rule's numbers
(``core.rewards``), and a player's move in a one-game state."""

from __future__ import annotations

import math

import numpy as np
from pettingzoo.utils import wrappers
from pettingzoo.utils.wrappers import BaseWrapper

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


def flag(name: str, value) -> bool:
    """A True/False option, or ``ValueError``: ``"no"``, ``2`` or ``None`` are not flags."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_render_mode(value, modes) -> str | None:
    """``value`` if it is None or one of ``modes``, else ``ValueError`` naming them."""
    if value is not None and value not in modes:
        raise ValueError(f"render_mode must be None or one of {', '.join(map(repr, modes))}; got {value!r}")
    return value


def finite(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def keyword_options(factory, kwargs: dict) -> dict:
    """``kwargs`` if ``factory`` takes every one of them, else ``ValueError`` naming the
    unknown ones and the valid options."""
    import inspect

    valid = [p for p in inspect.signature(factory).parameters if p not in ("self", "args", "kwargs")]
    unknown = sorted(set(kwargs) - set(valid))
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(unknown)}; valid options: {', '.join(valid)}")
    return kwargs


class ActionCheck(BaseWrapper):
    """In place of PettingZoo's ``AssertOutOfBoundsWrapper``: an action that is not an
    integer in the action space is a ``ValueError`` naming what is valid, not an
    ``AssertionError`` (which ``python -O`` would drop)."""

    def step(self, action):
        agent = self.agent_selection
        if action is None and (self.terminations[agent] or self.truncations[agent]):
            return super().step(action)
        a = as_action(action)
        if not 0 <= a < NUM_ACTIONS:
            raise ValueError(f"{agent}: action {a} is out of range: actions are integers 0..{NUM_ACTIONS - 1}")
        return super().step(a)


#: The attributes every step reads (``last``, ``agent_iter``, the wrappers' own steps).
_HOT = ("agent_selection", "agents", "rewards", "terminations", "truncations", "infos", "_cumulative_rewards")
#: What ``OrderEnforcingWrapper`` refuses before ``reset``.
_BEFORE_RESET = {"rewards", "terminations", "truncations", "infos", "agent_selection", "agents"}


def _forward(name: str, before_reset: bool = False):
    if before_reset:  # as OrderEnforcingWrapper: refused before reset

        def get(self):
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self._raw, name)
    else:

        def get(self):
            return getattr(self._raw, name)

    return property(get)


class _Fast:
    """Reads the per-step attributes straight from the raw env: PettingZoo's
    ``BaseWrapper.__getattr__`` costs a Python call per attribute per wrapper (36 a
    decision through three wrappers, most of the time of a step on the compiled engine).
    The wrappers' behaviour is theirs, unchanged."""

    def __init__(self, env, *args, **kwargs):
        super().__init__(env, *args, **kwargs)
        self._raw = env.unwrapped

    locals().update({name: _forward(name) for name in _HOT})


class _TerminateIllegal(_Fast, wrappers.TerminateIllegalWrapper):
    pass


class _ActionCheck(_Fast, ActionCheck):
    pass


class _OrderEnforcing(_Fast, wrappers.OrderEnforcingWrapper):
    locals().update({name: _forward(name, name in _BEFORE_RESET) for name in _HOT})


def standard_wrappers(env):
    """PettingZoo's usual wrappers: an illegal move ends the episode (-1 to the offender),
    a malformed action is a ``ValueError``, the order of calls is enforced."""
    env = _TerminateIllegal(env, illegal_reward=-1)
    env = _ActionCheck(env)
    return _OrderEnforcing(env)


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
