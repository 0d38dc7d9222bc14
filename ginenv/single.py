"""A Gymnasium single-agent env: the learner against a fixed opponent.

``SingleAgentEnv(opponent="knock_early", rules="standard")``, registered as
``ginenv/GinRummy-v0``. The opponent is a baseline name (``ginenv.baselines``) or any
object with the agents' batch ``act`` method (a trained policy:
``agents.load_policy(path)``). The learner's legal actions are in
``info["action_mask"]`` and ``action_masks()`` (what sb3-contrib's MaskablePPO reads).
An illegal action ends the episode with ``illegal_reward`` (-1) and
``info["illegal_action"]``, as PettingZoo's ``env()`` does (so unmasked samplers and
Gymnasium's env checker work); ``illegal_action="raise"`` raises ``ValueError`` instead. Rewards and modes are those of
``gin_rummy_v0``, from the learner's side. The learner's seat alternates by episode
(``learner_seat="alternate"``) or is fixed (0 or 1).
"""

from __future__ import annotations

import gymnasium
import numpy as np

from ginenv import core
from ginenv.actions import NUM_ACTIONS, as_action, describe
from ginenv.observation import obs_size
from ginenv.options import check_render_mode, finite
from ginenv.render import render_text
from ginenv.rules import resolve
from ginenv.versus import Versus


class SingleAgentEnv(gymnasium.Env):
    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        opponent="random",
        rules=None,
        mode: str = "hand",
        learner_seat="alternate",
        reward_scale: float = 0.01,
        match_win_reward: float = 0.0,
        render_mode=None,
        perfect_information: bool = False,
        illegal_action: str = "penalize",
        illegal_reward: float = -1.0,
    ):
        if illegal_action not in ("penalize", "raise"):
            raise ValueError(f"illegal_action must be 'penalize' or 'raise'; got {illegal_action!r}")
        self.illegal_action, self.illegal_reward = illegal_action, finite("illegal_reward", illegal_reward)
        self.versus = Versus(opponent, mode, learner_seat, reward_scale, match_win_reward, perfect_information)
        self.rules, self.mode, self.opponent = resolve(rules), self.versus.mode, self.versus.opponent
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.perfect_information = self.versus.perfect_information
        self.observation_space = gymnasium.spaces.Box(0.0, np.inf, (obs_size(perfect_information),), np.float32)
        self.action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self._episode, self._base_seed, self._state, self.seat = 0, None, None, 0

    def _mask(self):
        return self.versus.mask()[0]

    def action_masks(self) -> np.ndarray:
        return self._mask()

    def _obs(self):
        return self.versus.observe()[0]

    def reset(self, seed=None, options=None):
        seed = core.check_reset(seed, options)
        super().reset(seed=seed)
        if seed is not None or self._base_seed is None:
            self._base_seed = int(self.np_random.integers(1 << 62))
            self._episode = 0
        else:
            self._episode += 1
        # An episode starts at the learner's first decision: a game the opponent ends
        # before it (a first-turn knock) is skipped, and reported in the info.
        skipped = []
        while True:
            self._state = core.init(1, self.rules, seed=self._base_seed + self._episode, mode=self.mode)
            skipped += self.versus.begin(self._state, self._episode)
            self.seat = int(self.versus.seat[0])
            if not self._state.done[0]:
                break
            self._episode += 1
        info = {"action_mask": self._mask(), "seat": self.seat}
        if skipped:
            info["skipped_games"] = [{k: v for k, v in g.items() if k != "game"} for g in skipped]
        return self._obs(), info

    def step(self, action):
        s = self._state
        mask = self._mask()
        a = as_action(action)
        if not (0 <= a < NUM_ACTIONS and mask[a]):
            legal = ", ".join(describe(x) for x in np.flatnonzero(mask))
            message = f"illegal action {a} in phase {core.PHASE_NAMES[s.phase[0]]}; legal: {legal}"
            if self.illegal_action == "raise" or s.done[0]:
                raise ValueError(message)
            s.phase[0] = core.DONE  # the game ends here
            info = {"action_mask": np.zeros(NUM_ACTIONS, bool), "seat": self.seat, "illegal_action": message}
            return self._obs(), self.illegal_reward, True, False, info
        rewards, _ = self.versus.play(np.array([a]))
        done = bool(s.done[0])
        truncated = done and bool(core.truncated(s)[0])
        info = {"action_mask": self._mask(), "seat": self.seat}
        if done:
            info.update(hand_kind=core.HAND_KIND_NAMES[s.hand_kind[0]], final_scores=s.final_scores[0].tolist())
        if self.render_mode == "human":
            self.render()
        return self._obs(), float(rewards[0]), done and not truncated, truncated, info

    def render(self):
        if self.render_mode is None:
            return None
        if self.render_mode == "rgb_array":  # the table as the learner sees it
            from ginenv.picture import frame

            return frame(self._state, 0, int(self.seat))
        text = render_text(self._state, 0, viewer=self.seat)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text
