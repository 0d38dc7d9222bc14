"""A learner against an opponent over N games of the batched core: the one implementation
behind ``SingleAgentEnv`` (N = 1) and the vector envs (``ginenv.vector_env``).

``Versus`` holds the games, the learner's seat in each, and the opponent (any agent with
the batch ``act``). After the learner's moves it lets the opponent move, batched, in
every game where it is to move, until each game waits for the learner again or is over;
a game's reward is the learner's share of ``core.rewards`` over those moves. An episode
the opponent ends before the learner's first move in it (a first-turn knock) is
skipped: its reward goes to no step, and it is reported; with ``auto_reset`` the next
game is dealt and played on to the learner's move.
"""

from __future__ import annotations

import numpy as np

from ginenv import core
from ginenv.actions import NUM_ACTIONS
from ginenv.baselines import make_baseline
from ginenv.observation import observe
from ginenv.options import env_options, flag


class Versus:
    def __init__(
        self,
        opponent="random",
        mode: str = "hand",
        learner_seat="alternate",
        reward_scale: float = 0.01,
        match_win_reward: float = 0.0,
        perfect_information: bool = False,
    ):
        if learner_seat not in ("alternate", 0, 1) or isinstance(learner_seat, bool):
            raise ValueError(f"learner_seat must be 'alternate', 0 or 1; got {learner_seat!r}")
        self.mode, self.reward_scale, self.match_win_reward = env_options(mode, reward_scale, match_win_reward)
        self.opponent = make_baseline(opponent)
        self.learner_seat = learner_seat
        self.perfect_information = flag("perfect_information", perfect_information)
        self.state: core.State | None = None

    def seats(self, games=None) -> np.ndarray:
        """The learner's seat in the current episode of the given games: alternating
        with the episode (``game_no`` plus the game's offset), or fixed."""
        games = np.arange(self.state.batch_size) if games is None else games
        if self.learner_seat == "alternate":
            return (self.state.game_no[games].astype(np.int64) + self.offset[games]) % 2
        return np.full(len(games), int(self.learner_seat), np.int64)

    def begin(self, state: core.State, offset) -> list:
        """Take over ``state``, the learner seated by ``seats`` (episode k of game i at
        seat ``(k + offset[i]) % 2``); the opponent moves first where it is to. Returns the
        skipped games."""
        self.state = state
        self.offset = np.broadcast_to(np.asarray(offset, np.int64), (state.batch_size,)).copy()
        self.seat = self.new_episodes(np.arange(state.batch_size))
        self.moved = np.zeros(state.batch_size, bool)  # the learner has moved in this episode
        self.carry = np.zeros(state.batch_size)  # its rewards from before its first move
        self.finished: list = []
        return self._opponent_moves(np.zeros(state.batch_size))[1]

    def new_episodes(self, games) -> np.ndarray:
        """The learner's seats in the episodes just dealt in ``games`` (``seats``); a
        subclass that draws an opponent per episode does it here."""
        return self.seats(games)

    # ------------------------------------------------------------------- views
    def waiting(self) -> np.ndarray:
        """``(N,)`` bool: the game waits for the learner's move."""
        s = self.state
        return (s.current == self.seat) & ~s.done

    def mask(self) -> np.ndarray:
        """``(N, 108)`` bool, a fresh writable array: the learner's legal actions (none
        where it is not to move)."""
        return core.legal_action_mask(self.state) & self.waiting()[:, None]

    def observe(self, out: np.ndarray | None = None) -> np.ndarray:
        return observe(self.state, self.seat, self.perfect_information, out=out)

    # ------------------------------------------------------------------- moves
    def play(self, actions, hold=None) -> tuple[np.ndarray, list]:
        """The learner's actions (read only where it is to move), then the opponent's
        replies. Returns the learner's rewards and the skipped games; the episodes that
        ended are in ``self.finished`` until the next call. An illegal action raises
        ``ValueError`` before anything is applied. ``hold``: ``(N,)`` bool, games left
        as they are this call (their actions not read)."""
        s = self.state
        a = np.asarray(actions)
        if a.shape != (s.batch_size,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {s.batch_size} integers, one per game; got {a.dtype} {a.shape}")
        waiting = self.waiting() if hold is None else self.waiting() & ~hold
        a = np.where(waiting, a.astype(np.int64), core.SKIP)
        legal = core.legal_action_mask(s)[np.arange(s.batch_size), np.clip(a, 0, NUM_ACTIONS - 1)]
        bad = np.flatnonzero(waiting & ((a < 0) | (a >= NUM_ACTIONS) | ~legal))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"game {i}: action {int(a[i])} is not legal; legal: {np.flatnonzero(self.mask()[i]).tolist()}"
            )
        self.finished = []
        rewards = np.where(waiting, self.carry, 0.0)
        self.carry[waiting] = 0.0
        self.moved |= waiting
        skipped = self._apply(a, rewards)
        more_rewards, more_skipped = self._opponent_moves(rewards)
        return more_rewards, skipped + more_skipped

    def _apply(self, actions: np.ndarray, rewards: np.ndarray) -> list:
        s = core.step(self.state, actions)
        r = core.rewards(s, self.reward_scale, self.match_win_reward)[np.arange(s.batch_size), self.seat]
        skipped = []
        for i in np.flatnonzero(s.game_ended):
            info = {
                "game": int(i),
                "seat": int(self.seat[i]),
                "reward": float(r[i]),
                "hand_kind": core.HAND_KIND_NAMES[int(s.hand_kind[i])],
                "final_scores": s.final_scores[i].tolist(),
                "truncated": bool(core.truncated(s)[i]),
            }
            if self.moved[i]:
                self.finished.append(info)
            else:
                skipped.append(info)
                r[i] = 0.0
        self.carry += np.where(~self.moved & ~s.game_ended, r, 0.0)
        rewards += np.where(self.moved, r, 0.0)
        over = np.flatnonzero(s.game_ended)
        if s.auto_reset and over.size:  # dealt anew: a new episode, the learner seated anew
            self.moved[over] = False
            self.carry[over] = 0.0
            self.seat[over] = self.new_episodes(over)
        return skipped

    def _opponent_moves(self, rewards: np.ndarray) -> tuple[np.ndarray, list]:
        s = self.state
        skipped = []
        while True:
            theirs = np.flatnonzero((s.current != self.seat) & ~s.done)
            if not theirs.size:
                return rewards, skipped
            acts = np.full(s.batch_size, core.SKIP, np.int64)
            acts[theirs] = self.opponent_act(theirs)
            skipped += self._apply(acts, rewards)

    def opponent_act(self, games: np.ndarray) -> np.ndarray:
        """The opponent's moves in ``games`` (where it is to move), from its view."""
        s = self.state
        return self.opponent.act(observe(s, 1 - self.seat)[games], core.legal_action_mask(s)[games])
