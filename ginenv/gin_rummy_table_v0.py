"""Three-player Gin Rummy for PettingZoo (AEC): the wikiHow source's table where the
dealer sits each hand out (``ginenv.table`` has the rules and the house choices).

| | |
|---|---|
| import | ``from ginenv import gin_rummy_table_v0``; ``gin_rummy_table_v0.env(num_players=3)`` (or 4: teams) |
| agents | ``player_0``, ``player_1``, ``player_2`` |
| action space | ``Discrete(108)`` (``ginenv.actions``) |
| observation space | ``Dict(observation=Box(491,) float32, action_mask=Box(108,) int8)`` |
| episode | a match to the target (hands in order, the dealer's seat moving on after each scored hand) |
| rewards | zero-sum over the three (see below) |

Rewards: after each hand, ``reward_scale`` times (own hand points minus the mean of the
other two players'), and at the match's end the same of the end-of-match bonuses.

Observation (``OBS_VERSION`` 2): the two-player observation of version 1 (487 values,
``ginenv.observation``) for the player's part in the hand, then 4 scalars: sitting out
this hand (1 or 0), and the three players' running totals over the target, the
player's own first, then the next seats in order. The player sitting out sees nothing
of either hand: its first 487 values are 0 and its mask is empty. An agent of version
1 (the shipped bot) plays from the first 487 values.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from pettingzoo import AECEnv

from ginenv import core
from ginenv.actions import NUM_ACTIONS
from ginenv.observation import OBS_SIZE, observe
from ginenv.options import checked_move, env_options, keyword_options, standard_wrappers
from ginenv.rules import Rules, resolve
from ginenv.scoring import match_final
from ginenv.table import PLAYERS

OBS_VERSION = 2
TABLE_SCALARS = 1 + PLAYERS  # sitting out, then the three totals over the target
TABLE_OBS_SIZE = OBS_SIZE + TABLE_SCALARS  # 491


class _Table(AECEnv):
    """What the table envs share: spaces, the episode's bookkeeping, the move check."""

    def __init__(self, players: int, obs_size: int, rules, reward_scale: float, render_mode):
        super().__init__()
        self.rules = resolve(rules)
        _, self.reward_scale, _ = env_options("match", reward_scale, 0.0)
        if render_mode is not None:
            raise ValueError(f"render_mode must be None here; got {render_mode!r}")
        self.render_mode = None
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.agents = list(self.possible_agents)
        space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(0.0, np.inf, (obs_size,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: gymnasium.spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._seed, self._episode = None, 0

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def _new_episode(self, seed) -> int:
        """The episode's bookkeeping; returns the seed its deals come from."""
        if seed is not None:
            self._seed, self._episode = int(seed), 0
        elif self._seed is None:
            self._seed, self._episode = int(np.random.SeedSequence().entropy % (1 << 62)), 0
        else:
            self._episode += 1
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        return self._seed + self._episode

    def _checked(self, s: core.State, agent: str, action) -> int:
        """The action as an int, or ``ValueError`` naming the legal moves."""
        action = checked_move(s, agent, action)
        self._cumulative_rewards[agent] = 0.0
        return action

    def render(self):
        gymnasium.logger.warn("the table envs have no render mode")

    def close(self):
        pass


class raw_env(_Table):
    metadata = {"name": "gin_rummy_table_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(
        self, rules: Rules | str | None = None, reward_scale: float = 0.01, render_mode=None, num_players: int = PLAYERS
    ):
        if num_players != PLAYERS:
            raise ValueError(
                f"num_players must be {PLAYERS} here (four players play as teams: team_env or "
                f"env(num_players=4)); got {num_players!r}"
            )
        super().__init__(PLAYERS, TABLE_OBS_SIZE, rules, reward_scale, render_mode)

    # ------------------------------------------------------------------ episode
    def reset(self, seed=None, options=None):
        self._match_seed = core.game_seeds(self._new_episode(core.check_reset(seed, options)), 1)[0]
        self.dealer = int(self._match_seed % np.uint64(PLAYERS))  # the cut for the first dealer
        self.totals = np.zeros(PLAYERS, np.int64)
        self.won = np.zeros(PLAYERS, np.int64)
        self.played = self.dead = 0
        self._deal()

    def _deal(self) -> None:
        """The next hand: the dealer sits out, the player after it plays first."""
        d = self.dealer
        self.parts = ((d + 1) % PLAYERS, (d + 2) % PLAYERS)  # the hand's non-dealer, then its dealer
        seed = core.splitmix64(np.array([self._match_seed + np.uint64(self.played)], np.uint64))
        self.state = core.init(1, self.rules, mode="hand", game_seeds_=seed, dealers=np.array([1]))
        self.state.scores[0] = self.totals[list(self.parts)]
        self.agent_selection = self.possible_agents[self.parts[int(self.state.current[0])]]

    def observe(self, agent):
        i = self.possible_agents.index(agent)
        out = np.zeros(TABLE_OBS_SIZE, np.float32)
        mask = np.zeros(NUM_ACTIONS, np.int8)
        if i in self.parts:
            part = self.parts.index(i)
            out[:OBS_SIZE] = observe(self.state, part)[0]
            if int(self.state.current[0]) == part and not self.state.done[0]:
                mask[:] = core.legal_action_mask(self.state)[0]
        else:
            out[OBS_SIZE] = 1.0  # sitting out
        order = [(i + k) % PLAYERS for k in range(PLAYERS)]
        out[OBS_SIZE + 1 :] = self.totals[order] / self.rules.target
        return {"observation": out, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        s = self.state
        action = self._checked(s, agent, action)
        core.step(s, np.array([action]))
        points = np.zeros(PLAYERS)
        if s.hand_ended[0]:
            for part, player in enumerate(self.parts):
                points[player] = s.hand_points[0, part]
            self.totals += points.astype(np.int64)
            self.played += 1
            if s.winner[0] >= 0:
                self.won[self.parts[int(s.winner[0])]] += 1
                self.dealer = (self.dealer + 1) % PLAYERS
            else:
                self.dead += 1  # a dead hand keeps the dealer
            reached = self.totals.max() >= self.rules.target
            if reached or self.played >= self.rules.max_hands:  # the hand cap: truncated, no bonuses
                final, winner = match_final(self.totals[None], self.won[None], [self.played], [self.dead], self.rules)
                if not reached:
                    final, winner = self.totals[None], [-1]
                points += final[0] - self.totals  # the bonuses
                for a in self.agents:
                    self.terminations[a] = bool(reached)
                    self.truncations[a] = not reached
                    self.infos[a] = {
                        "final_scores": final[0].tolist(),
                        "winner": int(winner[0]),
                        "hands_played": self.played,
                    }
            else:
                self._deal()
        else:
            self.agent_selection = self.possible_agents[self.parts[int(s.current[0])]]
        share = points - (points.sum() - points) / (PLAYERS - 1)
        self.rewards = {a: float(share[k] * self.reward_scale) for k, a in enumerate(self.possible_agents)}
        self._accumulate_rewards()


#: Four players in two teams: team 0 is player_0 and player_1, team 1 player_2 and
#: player_3. Table A seats player_0 against player_2, table B player_3 against player_1
#: (partners at different tables, each team in both seats).
TABLES = ((0, 2), (3, 1))
TEAM = (0, 0, 1, 1)
TEAM_OBS_SIZE = OBS_SIZE + 4  # + own, partner, own table's opponent, other table's opponent totals


class team_env(_Table):
    """Four players, two teams, two simultaneous two-player matches (``ginenv.table``'s
    team format): the tables move in turn while both play; an episode ends when both
    matches are over, and the team whose partners' final totals add up higher wins.
    Rewards: each hand's points (and the bonuses at a match's end) as the team's minus
    the other team's, times ``reward_scale``, to both partners. Observation (version 2):
    the player's two-player observation at its table, then four totals over the target:
    its own, its partner's, its opponent's at its table, and the other opponent's."""

    metadata = {"name": "gin_rummy_teams_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, rules: Rules | str | None = None, reward_scale: float = 0.01, render_mode=None):
        super().__init__(4, TEAM_OBS_SIZE, rules, reward_scale, render_mode)

    def reset(self, seed=None, options=None):
        seeds = core.game_seeds(self._new_episode(core.check_reset(seed, options)), 2)
        self.tables = [core.init(1, self.rules, mode="match", game_seeds_=seeds[[t]]) for t in (0, 1)]
        self.cut = [False, False]  # a table's match ended by the hand cap
        self.turn = 0  # the table that moves next while both play
        self._select()

    def _select(self) -> None:
        live = [t for t in (0, 1) if not self.tables[t].done[0]]
        t = self.turn if self.turn in live else live[0]
        self.agent_selection = self.possible_agents[TABLES[t][int(self.tables[t].current[0])]]
        self.turn = t

    def _seat(self, player: int) -> tuple[int, int]:
        return next((t, TABLES[t].index(player)) for t in (0, 1) if player in TABLES[t])

    def _total(self, player: int) -> int:
        t, seat = self._seat(player)
        s = self.tables[t]
        return int(s.final_scores[0, seat] if s.done[0] else s.scores[0, seat])

    def observe(self, agent):
        i = self.possible_agents.index(agent)
        t, seat = self._seat(i)
        s = self.tables[t]
        out = np.zeros(TEAM_OBS_SIZE, np.float32)
        out[:OBS_SIZE] = observe(s, seat)[0]
        mask = np.zeros(NUM_ACTIONS, np.int8)
        if int(s.current[0]) == seat and not s.done[0]:
            mask[:] = core.legal_action_mask(s)[0]
        partner = next(p for p in range(4) if TEAM[p] == TEAM[i] and p != i)
        rival = TABLES[t][1 - seat]
        other = next(p for p in range(4) if TEAM[p] != TEAM[i] and p != rival)
        out[OBS_SIZE:] = [self._total(p) / self.rules.target for p in (i, partner, rival, other)]
        return {"observation": out, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        i = self.possible_agents.index(agent)
        t, seat = self._seat(i)
        s = self.tables[t]
        action = self._checked(s, agent, action)
        core.step(s, np.array([action]))
        self.cut[t] |= bool(core.truncated(s)[0])
        team_points = np.zeros(2)
        if s.hand_ended[0]:
            pts = s.hand_points[0] + s.bonus_points[0]
            for k, player in enumerate(TABLES[t]):
                team_points[TEAM[player]] += pts[k]
        diff = (team_points[0] - team_points[1]) * self.reward_scale
        self.rewards = {a: float(diff if TEAM[k] == 0 else -diff) for k, a in enumerate(self.possible_agents)}
        if all(x.done[0] for x in self.tables):
            teams = [sum(self._total(p) for p in range(4) if TEAM[p] == team) for team in (0, 1)]
            cut = any(self.cut)
            winner = -1 if teams[0] == teams[1] or cut else int(np.argmax(teams))
            for a in self.agents:
                self.terminations[a] = not cut
                self.truncations[a] = cut
                self.infos[a] = {"team_totals": teams, "winner_team": winner}
        else:
            if s.current[0] != seat or s.done[0] or s.hand_ended[0]:  # the table's turn is over: the other moves
                self.turn = 1 - t
            self._select()
        self._accumulate_rewards()


def env(num_players: int = PLAYERS, **kwargs):
    """The table env for ``num_players`` 3 (``raw_env``) or 4 (``team_env``), with
    PettingZoo's standard wrappers (an illegal move ends the episode, -1 to the offender)."""
    if isinstance(num_players, bool) or num_players not in (3, 4):
        raise ValueError(f"num_players must be 3 or 4 (two players: ginenv.gin_rummy_v0); got {num_players!r}")
    factory = raw_env if num_players == 3 else team_env
    return standard_wrappers(factory(**keyword_options(factory.__init__, kwargs)))
