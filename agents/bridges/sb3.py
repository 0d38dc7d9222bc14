"""Stable-Baselines3's ``VecEnv`` over the batched core: ``GinRummyVecEnv(num_envs,
opponent=..., ...)`` runs the N games of ``ginenv.vector_env.GinRummyVectorEnv`` as one
batch, so sb3-contrib's ``MaskablePPO`` trains on it as it is (it reads the masks through
``env_method("action_masks")``, writable arrays). Needs the ``sb3`` extra.

Episodes end with the hand (or the match); a game is dealt anew in the same step, so the
observation returned for a finished game is its next episode's first one, as SB3's own
vector envs do. ``infos[i]["terminal_observation"]`` is that same observation: the
engine keeps none after a hand's end, where nothing is left to decide, and it matters to
SB3 only for an episode cut by the turn cap (``TimeLimit.truncated``), which is rare.
"""

from __future__ import annotations

from agents.extras import require

require("sb3", what="the Stable-Baselines3 VecEnv (agents.bridges.sb3)", main=__name__ == "__main__")

import numpy as np  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv  # noqa: E402

from ginenv.vector_env import GinRummyVectorEnv  # noqa: E402


class GinRummyVecEnv(VecEnv):
    def __init__(self, num_envs: int = 8, **kwargs):
        self.env = GinRummyVectorEnv(num_envs, **kwargs)
        super().__init__(num_envs, self.env.single_observation_space, self.env.single_action_space)
        self._actions = None

    def reset(self):
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        obs, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        return obs

    def step_async(self, actions) -> None:
        self._actions = np.asarray(actions).astype(np.int64).reshape(self.num_envs)

    def step_wait(self):
        obs, rewards, terminated, truncated, _ = self.env.step(self._actions)
        dones = terminated | truncated
        infos = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i] = {"terminal_observation": obs[i].copy(), "TimeLimit.truncated": bool(truncated[i])}
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs):
        idx = self._get_indices(indices)
        if method_name == "action_masks":
            masks = self.env.action_masks()
            return [masks[i] for i in idx]
        raise AttributeError(f"GinRummyVecEnv has no per-game method {method_name!r} (it has action_masks)")

    def get_attr(self, attr_name: str, indices=None):
        return [getattr(self.env, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        setattr(self.env, attr_name, value)

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._get_indices(indices))

    def close(self) -> None:
        pass
