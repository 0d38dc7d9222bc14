"""Search at decision time: a trained policy that looks ahead in sampled worlds.

``SearchAgent(policy, worlds=8, candidates=4)`` chooses, in each game, among the
policy's ``candidates`` likeliest legal actions: it deals ``worlds`` worlds consistent
with what the player has seen (``ginenv.worlds.resample_hidden``; the opponent's unseen
cards drawn by the belief net's odds where the policy has one), plays each candidate
in each world and then the rest of the hand with the policy, greedy, for both seats (on
the batched engine: all games x worlds x candidates in one batch), and takes the
candidate whose hands end with the best mean points, own minus opponent's (the prior
breaks ties). A game with one candidate is not searched.

It needs the game's state besides the observation (``reads_state``: the evaluator
passes it): it reads it only through ``resample_hidden``, which deals anew everything
the player cannot see, so its choice never depends on hidden cards (a test checks
that two states differing only in them give the same choices). The agent spec
``<checkpoint>+search`` (or ``+search=W`` for W worlds) builds one (``make_agent``).
"""

from __future__ import annotations

import hashlib

import numpy as np
import torch

from agents.training.policy import Policy
from ginenv import core
from ginenv.observation import observe
from ginenv.worlds import resample_hidden

MAX_MOVES = 400  # per rollout: far beyond any hand (a hand has at most ~70 moves)
MIN_PRIOR = 0.02  # a candidate the policy gives less is not searched
Z = 2.0  # the search overrides the policy only where the gain is this many standard errors


class SearchAgent:
    reads_state = True
    pure = True  # seeded from the observation at every move (agents.base)

    def __init__(self, policy: Policy, worlds: int = 16, candidates: int = 4, seed: int = 0):
        for name, v in (("worlds", worlds), ("candidates", candidates)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= 256:
                raise ValueError(f"search {name} must be an integer from 1 to 256, got {v!r}")
        self.policy, self.worlds, self.candidates = policy, int(worlds), int(candidates)
        self.seed = core.check_seed(seed, "SearchAgent's seed")
        self.name = f"{policy.name}+search={self.worlds}"

    def act(self, observations, action_masks, state: core.State | None = None, seats=None):
        if state is None or seats is None:
            raise ValueError(
                f"{self.name} searches the game: it needs act(obs, mask, state=..., seats=...) "
                "(the evaluator passes them); use the plain checkpoint where only observations are at hand"
            )
        probs = self.policy.probabilities(observations, action_masks)
        seats = core.check_players(seats, 1 if probs.ndim == 1 else len(probs), name="seats")
        # The worlds' generator: a function of the seed and the observations alone, so a
        # replayed game searches the same worlds whatever else the agent played before.
        digest = hashlib.blake2b(np.ascontiguousarray(observations, np.float32).tobytes(), digest_size=8).digest()
        self.rng = np.random.default_rng([self.seed, int.from_bytes(digest, "little")])
        single = probs.ndim == 1
        probs = probs[None] if single else probs
        k = self.candidates
        cand = np.argsort(-probs, 1, kind="stable")[:, :k]  # (B, k), likeliest first
        p = np.take_along_axis(probs, cand, 1)
        legal = (p > 0) & ((p >= MIN_PRIOR) | (np.arange(k) == 0))
        cand = np.where(legal, cand, cand[:, :1])  # fill past the candidates with the first
        choice = cand[:, 0].copy()
        todo = np.flatnonzero(legal.sum(1) > 1)
        if todo.size:
            v = self._values(state.select(todo), seats[todo], observations, todo, cand[todo])
            # Paired over the worlds: each candidate against the policy's own choice.
            d = v - v[:, :, :1]
            gain = d.mean(1)
            se = d.std(1, ddof=1) / np.sqrt(self.worlds) if self.worlds > 1 else np.full_like(gain, np.inf)
            sure = (gain > Z * se) & legal[todo]
            sure[:, 0] = True
            best = np.argmax(np.where(sure, gain, -np.inf), 1)
            choice[todo] = cand[todo, best]
        return int(choice[0]) if single else choice.astype(np.int64)

    @torch.no_grad()
    def _values(self, state: core.State, seats, observations, rows, cand) -> np.ndarray:
        """``(G, W, k)``: the points (own minus opponent's) of the hand that follows each
        candidate in each sampled world."""
        g, w, k = len(rows), self.worlds, cand.shape[1]
        model = self.policy.model
        per_world = np.repeat(np.arange(g), w)
        weights = None
        if model.has_belief:
            obs = torch.as_tensor(np.asarray(observations, np.float32).reshape(-1, observations.shape[-1])[rows])
            p = model.actor.belief(obs).clamp(1e-3, 1 - 1e-3).numpy()
            weights = (p / (1 - p))[per_world]
        worlds = resample_hidden(state.select(per_world), seats[per_world], self.rng, weights)
        s = worlds.select(np.repeat(np.arange(g * w), k))
        first = np.tile(cand, (1, w)).reshape(-1)  # row (game, world, candidate)
        seat = np.repeat(seats, w * k).astype(np.int64)
        value = rollout(model, s, first, seat)
        return value.reshape(g, w, k)


def rollout(model, s: core.State, first: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """Play ``first`` in each game of ``s``, then the policy's greedy moves for both seats
    to the end of the hand; returns each game's hand points (bonuses included), ``seat``'s
    minus the other's."""
    n = s.batch_size
    value = np.zeros(n)
    live = np.ones(n, bool)
    actions = first.astype(np.int64)
    rows = np.arange(n)
    for _ in range(MAX_MOVES):
        core.step(s, actions)
        ended = live & s.hand_ended
        if ended.any():
            pts = (s.hand_points + s.bonus_points).astype(np.float64)
            value[ended] = pts[ended, seat[ended]] - pts[ended, 1 - seat[ended]]
        live &= ~(s.hand_ended | s.done)
        idx = np.flatnonzero(live)
        if not idx.size:
            break
        obs = torch.from_numpy(observe(s, s.current)[idx])
        mask = torch.from_numpy(core.legal_action_mask(s)[idx])
        actions = np.full(n, core.SKIP, np.int64)
        actions[idx] = model.act_greedy(obs, mask).numpy()
    del rows
    return value


def parse_search(spec: str):
    """``"<path>+search"`` or ``"<path>+search=W"`` -> ``(path, worlds)``; else ``None``."""
    path, sep, option = str(spec).rpartition("+")
    if not sep or not (option == "search" or option.startswith("search=")):
        return None
    if not path.strip():
        raise ValueError(f"agent spec {spec!r}: name a checkpoint before +search, e.g. checkpoints/champion+search")
    text = option[len("search=") :] if "=" in option else "16"
    if not text.isdigit() or not 1 <= int(text) <= 256:
        raise ValueError(f"agent spec {spec!r}: +search=W needs W, the worlds, an integer from 1 to 256")
    return path, int(text)
