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

``camper`` (after the EAAI-2021 winner's published strategy, the MARJJ player)
    Upcard offer and draw: take the face-up card only if it joins a meld *and* lowers the
    best deadwood reachable this turn. Discard: the card that minimises
    ``deadwood after + w(turn) x lookahead + 4 x danger``: the lookahead is the expected
    deadwood after one more draw from the unseen cards (each equally likely) and the best
    discard then, weighted down as the hand goes on (``w`` falls from 1 at its first turn
    to 0 at its tenth); the danger is how much the card fits the opponent's known hand (a
    card of a rank the opponent took, or one or two steps from a card it took in the same
    suit, counts; one of a rank or next to a card it threw or passed counts against), read
    from the planes every seat sees. Knock: as soon as it may in its first three turns (its
    first three discards of the hand); after that only for gin or big gin: it camps, keeps
    its deadwood low and waits to undercut a knock. The published player also chose which
    melds to lay out; here the engine lays out the arrangement that scores best for the
    knocker, for every player alike.

``marjj`` (the EAAI-2021 winner's own decision code, ``MARJJ_v5`` by its authors, ported)
    A port of the published Java player's decisions with its constants (docs/training.md,
    "Baselines and evaluation", says where it differs and how it plays). Upcard offer
    and draw: take the face-up card only if it joins a meld and lowers the best deadwood
    reachable this turn (camper's rule). Discard: the candidates are the cards left out of
    the melds by at least one least-deadwood arrangement, within 5 points of the most
    valuable of them (every legal card if none); one candidate is thrown at once, one that
    leaves gin likewise; the rest within 5 deadwood of the best are scored
    ``deadwood after + 18 x 0.9^(turn - 1) x (mean of the 7 best deadwoods over the unseen
    draws) + the source's danger score`` (bonuses of -10 / -5 / -3 for a card whose suited
    neighbours or rank the opponent cannot have, penalties of +20 / +5 / +3 for one whose
    neighbours the opponent took; the source's quirks kept: a queen counts as at the end of
    its suit, a card alone of its rank costs 4), and the lowest goes. Knock: it chooses the
    discard first, then knocks with it if that is legal in its first three turns, else
    only if it leaves gin; big gin when it may, like every baseline here.
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
    pure = True  # its move depends on the observation alone (agents.base)

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

    def discard_key(self, obs, discards, after):
        """``(B, 52)``: lower is the better card to discard (illegal cards highest)."""
        return _discard_key(discards, after, self.scores(obs))

    def _discard(self, obs, mask):
        after = deadwood_after(obs)
        discards, knocks = mask[:, A.DISCARD : A.KNOCK], mask[:, A.KNOCK : A.DRAW_STOCK]
        best_discard = np.argmin(self.discard_key(obs, discards, after), 1)
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


class Camper(_Heuristic):
    name = "camper"
    #: Turns (its own discards of the hand) in which it knocks as soon as it may.
    early_turns = 3
    #: The lookahead's weight falls linearly from 1 at its first turn to 0 at this one.
    lookahead_turns = 10
    #: Points of deadwood one unit of danger is worth.
    danger_weight = 4.0

    def wants(self, joins, lowers):
        return joins & lowers

    def knocks(self, obs, knocks, after):
        gin = (knocks & (after == 0)).any(1)
        return gin | (knocks.any(1) & (own_turn(obs) <= self.early_turns))

    def discard_key(self, obs, discards, after):
        weight = np.clip(1.0 - (own_turn(obs) - 1) / (self.lookahead_turns - 1), 0.0, 1.0)
        hand = plane(obs, "own_hand") > 0.5
        unseen = plane(obs, "unseen") > 0.5
        key = after + weight[:, None] * lookahead(hand, unseen, discards) + self.danger_weight * danger(obs)
        return np.where(discards, key - _VALUES * 1e-3, np.inf)  # ties: the highest value goes


def own_turn(obs) -> np.ndarray:
    """``(B,)`` int64: which of its turns of the hand the seat is in at a discard, 1 for
    its first (its face-up discards so far, plus one)."""
    return np.rint(plane(obs, "own_discards").sum(1)).astype(np.int64) + 1


def lookahead(hand: np.ndarray, unseen: np.ndarray, discards: np.ndarray, best: int | None = None) -> np.ndarray:
    """``(n, 52)`` float64: for each card ``c`` the seat may discard (``discards``), the
    expected least deadwood after discarding ``c``, drawing one of the ``unseen`` cards
    (each equally likely) and discarding the best card then; 0 elsewhere. ``hand`` holds
    the 11 cards of a discard turn. With ``best``, the mean is over the ``best`` draws
    that leave the least deadwood (all of them if fewer are unseen), as marjj reckons."""
    out = np.zeros(hand.shape)
    rows, cards = np.nonzero(discards & hand)
    counts = unseen.sum(1)
    if not rows.size or not counts.max():
        return out
    width = int(counts.max())
    order = np.argsort(~unseen, axis=1, kind="stable")[:, :width]  # each row's unseen cards first
    valid = np.arange(width)[None, :] < counts[:, None]
    kept = hand[rows].copy()
    kept[np.arange(rows.size), cards] = False
    tried = np.repeat(kept[:, None, :], width, axis=1)  # (pairs, width, 52)
    drawn = order[rows]
    p_idx, u_idx = np.nonzero(valid[rows])
    tried[p_idx, u_idx, drawn[p_idx, u_idx]] = True
    least = _after_discard(tried[p_idx, u_idx]).min(1).astype(np.float64)
    if best is None:
        total = np.zeros(rows.size)
        np.add.at(total, p_idx, least)
        out[rows, cards] = total / np.maximum(counts[rows], 1)
        return out
    grid = np.full((rows.size, width), np.inf)
    grid[p_idx, u_idx] = least
    k = min(best, width)
    lowest = np.sort(grid, axis=1)[:, :k]
    taken = np.minimum(counts[rows], k)
    out[rows, cards] = np.where(np.isfinite(lowest), lowest, 0.0).sum(1) / np.maximum(taken, 1)
    return out


def danger(obs) -> np.ndarray:
    """``(B, 52)`` float64, at least 0: how much each card fits the opponent's known hand,
    from what every seat sees (the cards it took from the pile and still holds, and the
    cards it threw or passed). A card of a rank it took scores 1 for each such card; one
    step from a card it took in the same suit 1, two steps 0.5; a card of a rank it threw
    or passed -0.5, one step from one in the same suit -0.25."""
    took = plane(obs, "opponent_took").reshape(-1, 4, 13).astype(np.float64)
    threw = plane(obs, "opponent_discarded").reshape(-1, 4, 13).astype(np.float64)

    def fit(cards, rank_w, near_w):
        same_rank = cards.sum(1, keepdims=True) - cards
        padded = np.pad(cards, ((0, 0), (0, 0), (2, 2)))
        near = sum(w * padded[:, :, 2 + d : 15 + d] for d, w in near_w.items())
        return rank_w * same_rank + near

    score = fit(took, 1.0, {-2: 0.5, -1: 1.0, 1: 1.0, 2: 0.5}) - fit(threw, 0.5, {-1: 0.25, 1: 0.25})
    return np.maximum(score, 0.0).reshape(-1, NUM_CARDS)


class Marjj(_Heuristic):
    """The EAAI-2021 winner's decision code (``MARJJ_v5``), ported to batches of
    observations; the module docstring and docs/baselines.md say where it differs."""

    name = "marjj"
    #: Turns (its own discards of the hand) in which it knocks as soon as it may.
    early_turns = 3
    #: Discard candidates: unmelded cards within this many points of the most valuable
    #: one, then within this much deadwood of the best candidate (MAX_DEADWOOD_DIFFERENCE).
    window = 5
    #: The future term: INIT_WEIGHT x DECAY ** (turn - 1) x the mean of the best
    #: MAX_CARDS_TO_CONSIDER deadwoods over the unseen draws.
    init_weight, decay, best_draws = 18.0, 0.9, 7
    #: The danger score's constants (its bonuses are negative, its penalties positive).
    sequence_bonus, adj_bonus, adj2_bonus = -10.0, -5.0, -3.0
    sequence_penalty, adj_penalty, adj2_penalty = 20.0, 5.0, 3.0
    set_bonus, rank_bonus, set_penalty, rank_penalty = -10.0, -4.0, 20.0, 4.0

    def wants(self, joins, lowers):
        return joins & lowers

    def candidates(self, obs, discards, after):
        """``(B, 52)`` bool: the cards its score chooses among, or the one card it throws
        without scoring (a single candidate, or a discard that leaves gin)."""
        hand = plane(obs, "own_hand") > 0.5
        whole = _deadwood(hand)
        # Unmelded in at least one least-deadwood arrangement of the 11 cards: leaving it
        # out of the melds costs nothing over the best arrangement.
        unmelded = hand & discards & (after + _VALUES == whole[:, None])
        biggest = np.where(unmelded, _VALUES, 0).max(1)
        pick = unmelded & (_VALUES >= biggest[:, None] - self.window)
        pick = np.where(pick.any(1)[:, None], pick, discards)  # none left: every legal card
        several = pick.sum(1) > 1
        gin = pick & (after == 0)
        first_gin = gin & (np.cumsum(gin, 1) == 1)
        least = np.where(pick, after, 1 << 20).min(1)
        near = pick & (after <= least[:, None] + self.window)
        return np.where((several & gin.any(1))[:, None], first_gin, np.where(several[:, None], near, pick))

    def discard_key(self, obs, discards, after):
        pick = self.candidates(obs, discards, after)
        turn = own_turn(obs)
        hand = plane(obs, "own_hand") > 0.5
        unseen = plane(obs, "unseen") > 0.5
        scored = pick & (pick.sum(1) > 1)[:, None]
        future = lookahead(hand, unseen, scored, best=self.best_draws)
        weight = self.init_weight * self.decay ** (turn - 1).astype(np.float64)
        key = after + weight[:, None] * future + self.opponent_score(obs)
        return np.where(pick, key - _VALUES * 1e-6, np.inf)  # ties (a coin in the source): the highest value

    def opponent_score(self, obs) -> np.ndarray:
        """``(B, 52)`` float64: the source's score of what each card gives the opponent
        (its bonuses and penalties over the suited neighbours and the rank), from the
        cards the opponent took and still holds and the cards this seat has seen."""
        opp = (plane(obs, "opponent_took") > 0.5).reshape(-1, 4, 13)
        seen = (plane(obs, "unseen") < 0.5).reshape(-1, 4, 13) & ~opp
        rank = np.arange(13)

        def at(cards, d):  # cards[..., r + d], False off the suit's ends
            padded = np.pad(cards, ((0, 0), (0, 0), (2, 2)))
            return padded[:, :, 2 + d : 15 + d]

        o_hi, o_lo, o_hi2, o_lo2 = (at(opp, d) for d in (1, -1, 2, -2))
        u_hi, u_lo, u_hi2, u_lo2 = (at(seen, d) for d in (1, -1, 2, -2))
        u_hi = u_hi | (rank >= 11)  # the King's end; the source also marks a Queen's here
        u_lo = u_lo | (rank == 0)
        u_lo2 = u_lo2 | (rank <= 1)
        w = np.float64
        bonus = np.where(
            (u_hi & (u_lo | u_lo2)) | (u_lo & (u_hi | u_hi2)),
            self.sequence_bonus,
            self.adj_bonus * (u_lo.astype(w) + u_hi) + self.adj2_bonus * (u_lo2.astype(w) + u_hi2),
        )
        penalty = np.where(
            (o_hi & (o_lo | o_lo2)) | (o_lo & (o_hi | o_hi2)),
            self.sequence_penalty,
            self.adj_penalty * (o_lo.astype(w) + o_hi) + self.adj2_penalty * (o_lo2.astype(w) + o_hi2),
        )
        o_rank = opp.sum(1, keepdims=True)
        u_rank = seen.sum(1, keepdims=True)  # the card itself included, as in the source
        by_rank = np.where(u_rank >= 3, self.set_bonus, np.where(u_rank == 2, self.rank_bonus, 0.0))
        by_rank = by_rank + np.where(o_rank >= 2, self.set_penalty, np.where(u_rank == 1, self.rank_penalty, 0.0))
        return (bonus + penalty + by_rank).reshape(-1, NUM_CARDS)

    def _discard(self, obs, mask):
        after = deadwood_after(obs)
        discards, knocks = mask[:, A.DISCARD : A.KNOCK], mask[:, A.KNOCK : A.DRAW_STOCK]
        card = np.argmin(self.discard_key(obs, discards, after), 1)
        rows = np.arange(len(obs))
        # It chooses its discard first, then whether to knock with it: at will in its
        # first three turns, otherwise only for gin.
        knock = knocks[rows, card] & ((own_turn(obs) <= self.early_turns) | (after[rows, card] == 0))
        out = np.where(knock, A.KNOCK + card, A.DISCARD + card)
        return np.where(mask[:, A.BIG_GIN], A.BIG_GIN, out)


class RandomAgent:
    name = "random"
    pure = False  # its generator moves on with every move

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def act(self, observations, action_masks):
        _, mask = check_batch(observations, action_masks)
        return (self.rng.random(mask.shape) * mask).argmax(1)


#: Every baseline by name (the trainer's opponent kinds keep the first four where they
#: were and add later ones after its league kinds: ``agents.training.config``).
BASELINES = {
    "knock_early": KnockEarly,
    "gin_hunter": GinHunter,
    "random": RandomAgent,
    "patient": Patient,
    "camper": Camper,
    "marjj": Marjj,
}


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
