"""Worlds for determinized search: what a player cannot see, dealt anew.

``resample_hidden(state, player, rng)`` keeps everything ``player`` has seen and deals
the rest again (OpenSpiel's ``ResampleFromInfostate``), so a search can play the hand
out in worlds consistent with the player's information.
"""

from __future__ import annotations

import numpy as np

from ginenv import melds
from ginenv.cards import NUM_CARDS
from ginenv.core import DISCARD, HAND_SIZE, State, check_players, refresh, splitmix64

MAX_LEAN = 64  # the most deals ``lean`` may draw a game


def resample_hidden(s: State, player, rng: np.random.Generator, weights=None, lean: int = 1) -> State:
    """A copy of ``s`` with what ``player`` cannot see dealt anew: the opponent's
    unknown cards and the stock's order (what OpenSpiel calls resampling from an
    information state; the worlds of a determinized search).

    ``player`` is an int or a ``(B,)`` array. The cards ``player`` has not seen (in
    neither its hand, the discard pile, nor among the cards the opponent took from the
    pile and still holds) are shuffled with ``rng``; the opponent gets as many of them
    as it held unknown, the stock the rest. Everything public stays: the pile and its
    order, who took, threw or passed what, the phase, the scores. The deck's dealt part
    (which recorded the original deal) is rewritten in card order, and each game gets a
    fresh seed for its later deals (both of its 64-bit keys, ``_game_seed`` and
    ``_game_key``), so nothing of the true hidden state survives: two
    states that differ only in what ``player`` cannot see give the same copy for the
    same ``rng`` state.

    ``weights`` (optional, ``(B, 52)``, >= 0, read on the unseen cards only) biases
    which unseen cards the opponent gets: they are drawn without replacement with
    probability proportional to the weight (successive sampling, by Gumbel top-k keys;
    odds ``p / (1 - p)`` from a belief ``p`` approximate drawing the hand from that
    belief). A card of weight 0 goes to the opponent only if there are not enough others.
    The stock's order stays uniform.

    ``lean`` (default 1): deal each game ``lean`` times and keep the deal whose opponent
    holds the least deadwood (the first of the least), so that the opponent's hands lean
    towards low deadwood as real ones do: cards drawn one by one by a belief's odds meld
    less than the hands players keep (at the shipped bot's knock decisions, its belief's
    worlds gave the opponent 18 deadwood at the median where it held 8; the least of 3
    deals, 9-11). Which deal is kept depends only on the deals, never on the true
    hidden cards.
    """
    me = check_players(player, s.batch_size)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {rng!r}")
    if isinstance(lean, bool) or not isinstance(lean, (int, np.integer)) or not 1 <= lean <= MAX_LEAN:
        raise ValueError(f"lean must be an integer from 1 to {MAX_LEAN} (the deals to keep the best of), got {lean!r}")
    if lean > 1:
        b = s.batch_size
        many = np.tile(np.arange(b), lean)
        w = None if weights is None else np.tile(np.asarray(weights, np.float64), (lean, 1))
        deals = resample_hidden(s.select(many), me[many], rng, w)
        dw = deals._deadwood[np.arange(b * lean), 1 - me[many]].reshape(lean, b)
        return deals.select(dw.argmin(0) * b + np.arange(b))
    s = s.copy()
    b = s.batch_size
    rows = np.arange(b)
    opp = 1 - me
    opp_hand = s._hands[rows, opp]
    known = s.took[rows, opp] & opp_hand
    unseen = ~(s._hands[rows, me] | s.pile_mask | known)
    k = (opp_hand.sum(1) - known.sum(1)).astype(np.int64)
    pos = s.stock_pos.astype(np.int64)[:, None]
    keys = rng.random((b, NUM_CARDS))
    if weights is not None:
        keys = _weighted_keys(unseen, k, weights, keys, rng)
    # Unseen cards in random order first, then the others in card order.
    order = np.argsort(np.where(unseen, keys, 2.0 + np.arange(NUM_CARDS) / NUM_CARDS), axis=1, kind="stable")
    rank = np.empty_like(order)
    rank[rows[:, None], order] = np.arange(NUM_CARDS)
    new_opp = known | (unseen & (rank < k[:, None]))
    p = np.arange(NUM_CARDS)[None]
    stock_cards = np.take_along_axis(order, np.clip(k[:, None] + p - pos, 0, NUM_CARDS - 1), 1)
    in_stock = unseen & (rank >= k[:, None])
    dealt = np.argsort(np.where(in_stock, NUM_CARDS + p, p), axis=1, kind="stable")  # the rest, in card order
    s._deck[...] = np.where(p >= pos, stock_cards, dealt)
    s._hands[rows, opp] = new_opp
    # Fresh deal keys for the later hands: both halves of the 128-bit seed, so that no
    # field of the true deal survives.
    fresh = splitmix64(rng.integers(0, 1 << 63, (2, b), dtype=np.int64).astype(np.uint64))
    s._game_seed[...], s._game_key[...] = fresh[0], fresh[1]
    ten = new_opp.sum(1) <= HAND_SIZE
    s._deadwood[rows[ten], opp[ten]] = melds.masks_deadwood(melds.suit_masks(new_opp[ten]))
    moving = np.flatnonzero((s.current == opp) & (s.phase == DISCARD))
    refresh(s, moving)
    s._deadwood[moving, opp[moving]] = s._after_discard[moving].min(1)
    return s


def _weighted_keys(unseen, k, weights, keys, rng):
    """Keys in [-1, 0) for the k unseen cards the opponent gets, drawn by ``weights``
    (Gumbel top-k), and the uniform ``keys`` in [0, 1) for the rest, so that sorting by
    key deals the opponent first and leaves the stock's order uniform."""
    w = np.asarray(weights, np.float64)
    if w.shape != unseen.shape or not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"weights must be finite and >= 0, of shape {unseen.shape}; got shape {w.shape}")
    with np.errstate(divide="ignore"):
        score = np.log(w) + rng.gumbel(size=w.shape)
    order = np.argsort(np.where(unseen, -score, np.inf), axis=1, kind="stable")
    rank = np.empty_like(order)
    rank[np.arange(len(w))[:, None], order] = np.arange(w.shape[1])
    return np.where(unseen & (rank < k[:, None]), keys - 1.0, keys)
