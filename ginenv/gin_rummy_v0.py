"""Gin Rummy for PettingZoo (AEC), over the batched engine at batch 1.

Environment card
----------------

| | |
|---|---|
| import | ``from ginenv import gin_rummy_v0`` (or ``ginenv.env()`` / ``ginenv.raw_env()``) |
| agents | ``player_0``, ``player_1`` |
| action space | ``Discrete(108)`` |
| observation space | ``Dict(observation=Box(487,) float32, action_mask=Box(108,) int8)`` (539 if perfect info) |
| rewards | zero-sum; see below |
| rules | ``rules=`` a preset name or a ``ginenv.Rules`` (default ``standard``) |

Actions (``ginenv.actions``): 0-51 discard card c; 52-103 knock by discarding card c
face down (gin is a knock at 0 deadwood); 104 draw from the stock; 105 take the discard
(in the first-turn offer, take the upcard); 106 pass the upcard; 107 declare big gin.
Card c is ``suit * 13 + rank``, suits ``shdc``, rank 0 = ace.

Observation: ``ginenv.observation`` (``OBS_VERSION`` 1): 9 planes of 52 cards (own hand,
top discard, rest of the pile, cards the opponent took from the pile and holds, cards the
opponent discarded or passed, unseen cards, the card that may not be discarded, own
deadwood after each discard (or after taking the face-up card), own discards) and 19
scalars. It depends only on what that
player has seen. ``action_mask`` is all zeros for the agent not on move.

Rewards: ``reward_scale`` (default 0.01) times (own points - opponent's points). In
``mode="hand"`` (default) an episode is one hand and the reward comes at its end (0 for
a dead hand). In ``mode="match"`` each hand's points come as the hand ends, and at the
end of the match the end-of-match bonuses the same way, so an episode's return is the
final score difference times the scale; ``match_win_reward`` adds +/- that much to the
winner / loser at the end.

Episodes end with ``terminations`` for both agents; a hand cut short by the turn cap
(``rules.max_turns``, in hand mode) ends with ``truncations`` instead. Illegal actions:
``raw_env`` raises ``ValueError`` naming the action, phase and reason; ``env()`` follows
PettingZoo's convention (the game ends, the offender gets -1).

Seeding: ``reset(seed=s)`` deals from seed s; each later ``reset()`` without a seed plays
the next game of the same stream (seed s + k for the k-th). Seeding changes the deal and
nothing else.

Version history: v0 (OBS_VERSION 1), the first release.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from pettingzoo import AECEnv

from ginenv import core
from ginenv.actions import NUM_ACTIONS
from ginenv.observation import obs_size, observe
from ginenv.options import check_render_mode, checked_move, env_options, flag, keyword_options, standard_wrappers
from ginenv.render import render_text
from ginenv.rules import Rules, resolve


def env(**kwargs):
    """The AEC env with PettingZoo's standard wrappers (illegal moves end the game, -1)."""
    return standard_wrappers(raw_env(**keyword_options(raw_env.__init__, kwargs)))


class raw_env(AECEnv):
    metadata = {
        "name": "gin_rummy_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        rules: Rules | str | None = None,
        mode: str = "hand",
        reward_scale: float = 0.01,
        render_mode: str | None = None,
        perfect_information: bool = False,
        match_win_reward: float = 0.0,
        render_viewer: str | None = "player_0",
    ):
        super().__init__()
        self.rules = resolve(rules)
        self.mode, self.reward_scale, self.match_win_reward = env_options(mode, reward_scale, match_win_reward)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.perfect_information = flag("perfect_information", perfect_information)
        self.possible_agents = ["player_0", "player_1"]
        self.agents = list(self.possible_agents)
        if render_viewer is not None and render_viewer not in self.possible_agents:
            raise ValueError(f"render_viewer must be player_0, player_1 or None (both hands), got {render_viewer!r}")
        self.render_viewer = render_viewer
        size = obs_size(perfect_information)
        obs_space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(0.0, np.inf, (size,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: gymnasium.spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._seed, self._episode, self._state = None, 0, None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed=None, options=None):
        seed = core.check_reset(seed, options)
        if seed is not None:
            self._seed, self._episode = seed, 0
        elif self._seed is None:
            self._seed, self._episode = int(np.random.SeedSequence().entropy % (1 << 63)), 0
        else:
            self._episode += 1
        self._state = core.init(1, self.rules, seed=self._seed + self._episode, mode=self.mode)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[int(self._state.current[0])]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent):
        p = self.possible_agents.index(agent)
        obs = observe(self._state, p, self.perfect_information)[0]
        mask = np.zeros(NUM_ACTIONS, np.int8)
        if self._state.current[0] == p and not self._state.done[0]:
            mask[:] = core.legal_action_mask(self._state)[0]
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        s = self._state
        action = checked_move(s, agent, action)
        self._cumulative_rewards[agent] = 0.0
        core.step(s, np.array([int(action)]))
        r = core.rewards(s, self.reward_scale, self.match_win_reward)[0] if s.hand_ended[0] else (0.0, 0.0)
        self.rewards = {a: float(r[i]) for i, a in enumerate(self.possible_agents)}
        if s.game_ended[0]:
            truncated = bool(core.truncated(s)[0])
            for a in self.agents:
                self.truncations[a] = truncated
                self.terminations[a] = not truncated
                self.infos[a] = {
                    "hand_kind": core.HAND_KIND_NAMES[s.hand_kind[0]],
                    "hand_points": s.hand_points[0].tolist(),
                    "final_scores": s.final_scores[0].tolist(),
                }
        else:
            self.agent_selection = self.possible_agents[int(s.current[0])]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if self.render_mode == "rgb_array":  # the table as render_viewer sees it
            from ginenv.picture import frame

            viewer = None if self.render_viewer is None else self.possible_agents.index(self.render_viewer)
            return frame(self._state, 0, viewer)
        text = render_text(self._state, 0)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self):
        pass
