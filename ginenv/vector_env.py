"""Gymnasium's vector API over the batched core: ``GinRummyVectorEnv``, N games of the
learner against an opponent as one batch (the opponent acts on the whole batch too).

``gymnasium.make_vec("ginenv:ginenv/GinRummy-v0", num_envs=N,
vectorization_mode="vector_entry_point", opponent=...)`` builds it (the ``module:id``
form imports ``ginenv`` first, so no import is needed beforehand).

- spaces: ``single_observation_space`` ``Box(487,)`` float32, ``single_action_space``
  ``Discrete(108)``; ``observation_space`` and ``action_space`` are their batches.
- ``action_masks()``: ``(N, 108)`` bool, a fresh writable array (what sb3-contrib's
  MaskablePPO reads); also in ``infos["action_mask"]``.
- autoreset: ``AutoresetMode.SAME_STEP``. The step that ends a game's episode returns the
  first observation of its next episode (the engine deals it inside the step), with the
  ended episode's outcome in ``infos["final_info"]`` (``hand_kind``, ``final_scores``,
  ``seat``; masked by ``infos["_final_info"]``). The final observation itself is not
  kept: an episode ends with the hand, where nothing is left to decide.
- the learner's seat alternates by episode, game i starting in seat ``i % 2``; a game the
  opponent ends before the learner's first move is skipped and counted in
  ``infos["skipped_games"]``.
- rewards and modes are those of ``gin_rummy_v0``, from the learner's side (``core.rewards``).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ginenv import core
from ginenv.actions import NUM_ACTIONS
from ginenv.observation import obs_size
from ginenv.render import render_text
from ginenv.rules import resolve
from ginenv.versus import Versus


class GinRummyVectorEnv(VectorEnv):
    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int = 8,
        opponent="random",
        rules=None,
        mode: str = "hand",
        learner_seat="alternate",
        reward_scale: float = 0.01,
        match_win_reward: float = 0.0,
        render_mode: str | None = None,
        perfect_information: bool = False,
    ):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi'; got {render_mode!r}")
        self.num_envs, self.rules, self.render_mode = int(num_envs), resolve(rules), render_mode
        self.versus = Versus(opponent, mode, learner_seat, reward_scale, match_win_reward, perfect_information)
        self.single_observation_space = gymnasium.spaces.Box(0.0, np.inf, (obs_size(perfect_information),), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._next_seed = None

    def reset(self, *, seed=None, options=None):
        seed = core.check_reset(seed, options)
        if seed is not None:
            self._next_seed = seed
        elif self._next_seed is None:
            self._next_seed = int(np.random.SeedSequence().entropy % (1 << 62))
        else:  # a reset without a seed deals the next batch of the stream
            self._next_seed += self.num_envs
        state = core.init(self.num_envs, self.rules, self._next_seed, mode=self.versus.mode, auto_reset=True)
        skipped = self.versus.begin(state, np.arange(self.num_envs))
        return self.versus.observe(), self._infos(skipped)

    def step(self, actions):
        actions = np.asarray(actions)
        rewards, skipped = self.versus.play(actions)
        terminations = np.zeros(self.num_envs, bool)
        truncations = np.zeros(self.num_envs, bool)
        final = [None] * self.num_envs
        for info in self.versus.finished:
            i = info["game"]
            cut = info["truncated"]
            truncations[i], terminations[i] = cut, not cut
            final[i] = {k: v for k, v in info.items() if k != "game"}
        infos = self._infos(skipped)
        if any(f is not None for f in final):
            infos["final_info"] = np.array(final, dtype=object)
            infos["_final_info"] = np.array([f is not None for f in final])
        return self.versus.observe(), rewards.astype(np.float32), terminations, truncations, infos

    def _infos(self, skipped) -> dict:
        infos = {"action_mask": self.versus.mask(), "seat": self.versus.seat.copy()}
        if skipped:
            infos["skipped_games"] = len(skipped)
        return infos

    def action_masks(self) -> np.ndarray:
        return self.versus.mask()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        return render_text(self.versus.state, 0, viewer=int(self.versus.seat[0]))
