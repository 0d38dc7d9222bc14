"""The fast path for training: ``VectorEnv``, N games stepped together with auto-reset.

Each step returns, per game, the observation and action mask of the player to move,
that player's id, the rewards of both seats, and termination / truncation flags, so a
self-play loop can route each game to the right policy. No per-game Python objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ginenv import core
from ginenv.observation import obs_size, observe
from ginenv.options import env_options, flag
from ginenv.rules import Rules, resolve


@dataclass
class VectorStep:
    """What one ``VectorEnv.step`` returns (all arrays have N rows)."""

    obs: np.ndarray  # (N, D) float32: observation of the player to move (of the new game after a reset)
    action_mask: np.ndarray  # (N, 108) bool: that player's legal actions
    player: np.ndarray  # (N,) int8: the player to move, 0 or 1
    rewards: np.ndarray  # (N, 2) float32: rewards of seat 0 and seat 1 from this step
    terminated: np.ndarray  # (N,) bool: an episode (hand or match) ended
    truncated: np.ndarray  # (N,) bool: a hand-mode episode hit the turn cap
    hand_ended: np.ndarray  # (N,) bool: a hand ended (in match mode, also mid-episode)
    hand_kind: np.ndarray  # (N,) int8: how it ended (``core.HAND_KIND_NAMES``)
    hand_points: np.ndarray  # (N, 2) int32
    final_scores: np.ndarray  # (N, 2) int32: of an episode that ended
    winner: np.ndarray  # (N,) int8: of an episode that ended; -1 none / draw


class VectorEnv:
    """N games over the batched core, with auto-reset.

    ``mode``: ``"hand"`` (an episode is a hand) or ``"match"``; rewards as in
    ``gin_rummy_v0`` (``reward_scale`` times own minus opponent points; in match mode the
    end-of-match bonuses at the end, plus ``match_win_reward`` to the winner).
    ``perfect_information`` appends the opponent's hand (for a privileged critic only).

    For speed, the observations of ``step`` are written into one buffer that the next
    ``step`` overwrites: copy ``obs`` to keep it (a rollout buffer does anyway).
    """

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | None = None,
        seed: int = 0,
        mode: str = "hand",
        reward_scale: float = 0.01,
        perfect_information: bool = False,
        match_win_reward: float = 0.0,
    ):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs, self.rules, self.seed = int(num_envs), resolve(rules), seed
        self.mode, self.reward_scale, self.match_win_reward = env_options(mode, reward_scale, match_win_reward)
        self.perfect_information = flag("perfect_information", perfect_information)
        self.obs_size = obs_size(perfect_information)
        self.state = core.init(self.num_envs, self.rules, self.seed, mode=mode, auto_reset=True)
        self._obs = np.empty((self.num_envs, self.obs_size), np.float32)

    def observe(self, player=None) -> np.ndarray:
        """Observations of ``player`` (default: the player to move in each game)."""
        who = self.state.current if player is None else player
        return observe(self.state, who, self.perfect_information)

    def reset(self, seed: int | None = None):
        """Deal all games anew; returns (obs, action_mask, player) of the players to move."""
        if seed is not None:
            self.seed = seed
        self.state = core.init(self.num_envs, self.rules, self.seed, mode=self.mode, auto_reset=True)
        return self.observe(), core.legal_action_mask(self.state), self.state.current.copy()

    def step(self, actions) -> VectorStep:
        s = core.step(self.state, actions)
        rewards = core.rewards(s, self.reward_scale, self.match_win_reward).astype(np.float32)
        ended = s.game_ended.copy()
        truncated = ended & core.truncated(s)
        return VectorStep(
            obs=observe(s, s.current, self.perfect_information, out=self._obs),
            action_mask=core.legal_action_mask(s),
            player=s.current.copy(),
            rewards=rewards,
            terminated=ended & ~truncated,
            truncated=truncated,
            hand_ended=s.hand_ended.copy(),
            hand_kind=s.hand_kind.copy(),
            hand_points=s.hand_points.copy(),
            final_scores=s.final_scores.copy(),
            winner=s.winner.copy(),
        )
