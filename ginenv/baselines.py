"""Heuristic baselines. Each acts on a batch of observations and masks (no hidden state).

They are pure numpy and live beside the environments (as pgx's baselines do), so the
Gymnasium env can name its opponent without importing the trainer's packages;
``agents`` re-exports them with the trained policies.

Strategies, phase by phase:

``random``
    Every phase: a uniformly random legal action (seeded).

``knock_early`` (the classic "simple player")
    Upcard offer and draw: take the face-up card only if it lowers the best deadwood
    reachable this turn (discarding anything but that card) or joins a meld; otherwise
    pass / draw from the stock. Discard: declare big gin if it can; else knock as soon as
    any knock is legal, with the card that leaves the least deadwood; else discard the
    card that leaves the least deadwood, ties to the highest value, never the card just
    taken.

``gin_hunter``
    Upcard offer and draw: take the face-up card only if it joins a meld. Discard: keep
    melded cards, then pairs and run draws (cards of the same rank, or of the same suit
    one or two ranks away); throw the least connected card, ties to the highest value.
    It does not knock before gin (it declares gin or big gin when it can). As the stock
    runs out (6 cards or fewer left, the hand about to die as a dead hand) it knocks as
    soon as it legally can, like knock_early.

``patient``
    Draws and discards like knock_early. It knocks as soon as it can only in the first
    turns of a hand (while the stock still holds 25 cards or more, before the opponent's
    hand has taken shape); after that it waits for gin, unless the stock is nearly out
    (4 cards or fewer), when it knocks as soon as it can again. Against knock_early it
    lives off undercuts: knock_early knocks with up to 10 deadwood, and a hand that
    keeps its deadwood low for gin is often lower still.
"""

from __future__ import annotations

import numpy as np

from ginenv import actions as A
from ginenv import core, melds
from ginenv.cards import CARD_VALUES, NUM_CARDS
from ginenv.core import DISCARD, DRAW, check_seed
from ginenv.observation import deadwood_after, phase, plane, stock_size

_VALUES = CARD_VALUES.astype(np.int64)


def check_batch(observations, action_masks):
    """``(observations, masks)`` as a float32 and a bool batch (a single row becomes a
    batch of one); refuses shapes that do not pair up and rows with no legal action."""
    obs = np.asarray(observations, dtype=np.float32)
    mask = np.asarray(action_masks).astype(bool)
    if obs.ndim == 1:
        obs, mask = obs[None], mask[None]
    if mask.ndim != 2 or len(obs) != len(mask):
        raise ValueError(f"observations {obs.shape} and action masks {mask.shape} do not pair up")
    if not mask.any(1).all():
        raise ValueError("every row needs at least one legal action (was an off-move mask passed?)")
    return obs, mask


def _deadwood(hands: np.ndarray) -> np.ndarray:
    """``(n,)`` int64: the least deadwood of each boolean hand ``(n, 52)``, on the engine
    in use (the compiled one, or the numpy meld maths it is tested against)."""
    if core._compiled is None:
        return melds.deadwood(hands).astype(np.int64)
    out = np.empty(len(hands), np.int64)
    core._compiled.hands_deadwood(np.ascontiguousarray(hands), out)
    return out


def _after_discard(hands: np.ndarray) -> np.ndarray:
    """``(n, 52)`` int64: each hand's least deadwood without each card it holds
    (``NOT_IN_HAND`` for the others), on the engine in use."""
    if core._compiled is None:
        return melds.deadwood_after_discard(hands).astype(np.int64)
    out = np.empty(hands.shape, np.uint8)
    core._compiled.hands_after_discard(np.ascontiguousarray(hands), out)
    return out.astype(np.int64)


def _discard_key(mask52, after, score=None):
    """Lower is better: least deadwood after (then lowest connection score), then
    the highest value. Illegal cards get a huge key."""
    key = after * 1000 + (10 - _VALUES)
    if score is not None:
        key = score * 100000 + key
    return np.where(mask52, key, 1 << 40)


class _Heuristic:
    def __init__(self, seed: int = 0):
        pass  # deterministic; ``seed`` keeps one constructor for every baseline

    def act(self, observations, action_masks):
        obs, mask = check_batch(observations, action_masks)
        out = np.zeros(len(obs), np.int64)
        ph = phase(obs)
        pick = np.flatnonzero(ph <= DRAW)  # offer, forced draw, draw
        if pick.size:
            out[pick] = self._draw(obs[pick], mask[pick])
        disc = np.flatnonzero(ph == DISCARD)
        if disc.size:
            out[disc] = self._discard(obs[disc], mask[disc])
        return out

    def _draw(self, obs, mask):
        hand = plane(obs, "own_hand") > 0.5
        top = np.argmax(plane(obs, "top_discard"), 1)
        rows = np.arange(len(obs))
        with_top = hand.copy()
        with_top[rows, top] = True
        now = _deadwood(hand)
        joins = _deadwood(with_top) < now + _VALUES[top]
        after = _after_discard(with_top)
        after[rows, top] = 1 << 20  # the card taken may not be discarded
        lowers = after.min(1) < now
        take = self.wants(joins, lowers)
        take &= mask[:, A.TAKE_DISCARD]
        other = np.where(mask[:, A.PASS], A.PASS, A.DRAW_STOCK)
        return np.where(take, A.TAKE_DISCARD, other)

    def _discard(self, obs, mask):
        after = deadwood_after(obs)
        discards, knocks = mask[:, A.DISCARD : A.KNOCK], mask[:, A.KNOCK : A.DRAW_STOCK]
        score = self.scores(obs)
        best_discard = np.argmin(_discard_key(discards, after, score), 1)
        best_knock = np.argmin(_discard_key(knocks, after), 1)
        knock = self.knocks(obs, knocks, after)
        out = np.where(knock, A.KNOCK + best_knock, A.DISCARD + best_discard)
        return np.where(mask[:, A.BIG_GIN], A.BIG_GIN, out)


class KnockEarly(_Heuristic):
    name = "knock_early"

    def wants(self, joins, lowers):
        return joins | lowers

    def scores(self, obs):
        return None

    def knocks(self, obs, knocks, after):
        return knocks.any(1)


class GinHunter(_Heuristic):
    name = "gin_hunter"
    endgame_stock = 6

    def wants(self, joins, lowers):
        return joins

    def scores(self, obs):
        """Connection score per card: 3 melded, else the number of pair / run-draw
        partners held (capped at 2)."""
        hand = (plane(obs, "own_hand") > 0.5).reshape(-1, 4, 13)
        after = deadwood_after(obs)
        whole = _deadwood(hand.reshape(-1, NUM_CARDS))
        melded = (after.reshape(-1, 4, 13) > (whole[:, None, None] - _VALUES.reshape(4, 13))) & hand
        same_rank = hand.sum(1, keepdims=True) - hand
        padded = np.pad(hand, ((0, 0), (0, 0), (2, 2)))
        near = sum(padded[:, :, 2 + d : 15 + d] for d in (-2, -1, 1, 2))
        partners = np.minimum(same_rank + near, 2)
        return np.where(melded, 3, partners).reshape(-1, NUM_CARDS)

    def knocks(self, obs, knocks, after):
        gin = (knocks & (after == 0)).any(1)
        endgame = stock_size(obs) <= self.endgame_stock
        return gin | (endgame & knocks.any(1))


class Patient(KnockEarly):
    """knock_early with a knock rule that waits: any knock while the stock holds
    ``early_stock`` cards or more, or ``endgame_stock`` or fewer; in between, only a knock
    leaving ``late_limit`` deadwood or less (0: gin)."""

    name = "patient"

    def __init__(self, seed: int = 0, early_stock: int = 25, endgame_stock: int = 4, late_limit: int = 0):
        super().__init__(seed)
        self.early_stock, self.endgame_stock, self.late_limit = early_stock, endgame_stock, late_limit

    def knocks(self, obs, knocks, after):
        stock = stock_size(obs)
        anytime = (stock >= self.early_stock) | (stock <= self.endgame_stock)
        return (knocks & ((after <= self.late_limit) | anytime[:, None])).any(1)


class RandomAgent:
    name = "random"

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def act(self, observations, action_masks):
        _, mask = check_batch(observations, action_masks)
        return (self.rng.random(mask.shape) * mask).argmax(1)


#: Every baseline by name, in the order the trainer's opponent mix lists them.
BASELINES = {"knock_early": KnockEarly, "gin_hunter": GinHunter, "random": RandomAgent, "patient": Patient}


def make_baseline(spec, seed: int = 0):
    """A baseline by name (``BASELINES``), or ``spec`` itself if it already has ``act``
    (a trained policy: ``agents.load_policy(path)``)."""
    if hasattr(spec, "act"):
        return spec
    if isinstance(spec, str) and spec in BASELINES:
        return BASELINES[spec](seed=check_seed(seed))
    raise ValueError(
        f"unknown agent {spec!r}: give a baseline name ({', '.join(BASELINES)}) or an object "
        "with act(observations, action_masks), e.g. agents.load_policy(checkpoint)"
    )
