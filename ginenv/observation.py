"""What a player sees: ``observe(state, player)`` -> float32 features, batched.

The observation depends only on what that player has seen: its own hand, the discard
pile, which cards the opponent took from the pile or discarded or passed, and public
counts. The stock's order and the opponent's other cards never enter it (the tests
swap them and compare). ``perfect_information=True`` appends the opponent's hand, for
oracle critics and debugging only.

Layout (``OBS_VERSION`` 1), 9 planes of 52 (card ids of ``ginenv.cards``) then scalars:

    plane 0   own hand
    plane 1   top card of the discard pile (a knock card lies face down on it and shows
              here only once the hand is over, when every hand is laid out anyway)
    plane 2   the rest of the discard pile
    plane 3   cards the opponent took from the discard pile and still holds
    plane 4   cards the opponent discarded face up, and the upcard the opponent passed
    plane 5   cards this player has not seen: the stock and the opponent's unknown cards
    plane 6   the card this player may not discard this turn (just taken from the pile)
    plane 7   own deadwood after discarding each card / 100: in this player's discard
              turn, for the cards held; in its draw turn or upcard offer, the same for
              the hand with the face-up card taken (which may then not be discarded);
              0 elsewhere and for other cards
    plane 8   cards this player discarded face up (what the opponent knows it threw)
    scalars   phase one-hot (5: offer, forced draw, draw, discard, done); stock size / 31;
              is dealer; own deadwood / 100 (of the 10 cards kept; in this player's discard
              turn, the least after a discard); own and opponent
              match totals / target; target / 100; hand's knock limit / 10; gin bonus /
              100; undercut bonus / 100; big gin allowed; big gin can be declared now;
              turns this hand / max_turns; player is on move; least deadwood after taking
              the face-up card and discarding / 100 (draw turn or offer; else 0)
    (perfect information) plane 9: the opponent's hand
"""

from __future__ import annotations

import numpy as np

from ginenv import core, melds
from ginenv.cards import NUM_CARDS

OBS_VERSION = 1
NUM_PLANES = 9
NUM_SCALARS = 5 + 14
OBS_SIZE = NUM_PLANES * NUM_CARDS + NUM_SCALARS  # 487
PERFECT_OBS_SIZE = OBS_SIZE + NUM_CARDS  # 539
PLANE_NAMES = ("own_hand", "top_discard", "rest_of_pile", "opponent_took", "opponent_discarded",
               "unseen", "may_not_discard", "deadwood_after_discard", "own_discards")


def obs_size(perfect_information: bool = False) -> int:
    return PERFECT_OBS_SIZE if perfect_information else OBS_SIZE


def observe(s: core.State, player, perfect_information: bool = False, out: np.ndarray | None = None) -> np.ndarray:
    """``(B, OBS_SIZE)`` float32 observations of ``player`` (an int or a ``(B,)`` array).

    ``out`` (a ``(B, obs_size)`` float32 array) is filled instead of a new array."""
    b = s.batch_size
    rows = np.arange(b)
    me = np.broadcast_to(np.asarray(player, np.int64), (b,))
    opp = 1 - me
    n_planes = NUM_PLANES + perfect_information
    if out is None:
        out = np.empty((b, n_planes * NUM_CARDS + NUM_SCALARS), np.float32)
    elif out.shape != (b, n_planes * NUM_CARDS + NUM_SCALARS) or out.dtype != np.float32:
        raise ValueError(f"out must be a float32 array of shape {(b, n_planes * NUM_CARDS + NUM_SCALARS)}")
    # The 0/1 planes are built as bytes, then cast to float32 in one contiguous pass.
    planes = np.zeros((b, n_planes, NUM_CARDS), bool)
    own = s._hands[rows, me]
    planes[:, 0] = own
    size = s.pile_size.astype(np.int64)
    has_pile = size > 0
    top = s.pile[rows, np.maximum(size - 1, 0)].astype(np.int64)
    # A knock card is face down only while the hand is scored: the hand is over, every
    # hand is laid out, and it shows as the top card like any other.
    planes[rows[has_pile], 1, top[has_pile]] = True
    in_pile = s.pile_mask
    planes[:, 2] = in_pile
    planes[rows[has_pile], 2, top[has_pile]] = False
    opp_known = s.took[rows, opp] & s._hands[rows, opp]  # taken from the pile, still held
    planes[:, 3] = opp_known
    np.logical_or(s.discarded[rows, opp], s.passed[rows, opp], out=planes[:, 4])
    np.logical_not(own | in_pile | opp_known, out=planes[:, 5])
    mine_to_move = (s.current == me) & (s.phase == core.DISCARD)
    t = np.flatnonzero(mine_to_move & (s.taken >= 0))
    planes[t, 6, s.taken[t]] = True
    planes[:, 8] = s.discarded[rows, me]
    if perfect_information:
        planes[:, NUM_PLANES] = s._hands[rows, opp]
    out[:, :n_planes * NUM_CARDS] = planes.reshape(b, -1)
    d = np.flatnonzero(mine_to_move)
    after = s.after_discard[d]
    out[d, 7 * NUM_CARDS:8 * NUM_CARDS] = np.where(after < melds.NOT_IN_HAND, after, 0) * np.float32(0.01)
    # Draw turn or upcard offer: what taking the face-up card would allow.
    w = np.flatnonzero((s.current == me) & ((s.phase == core.DRAW) | (s.phase == core.OFFER)) & has_pile)
    take_best = np.zeros(b, np.float32)
    if w.size:
        with_top = own[w]
        with_top[np.arange(w.size), top[w]] = True
        look = melds.masks_after_discard(melds.suit_masks(with_top))
        look[np.arange(w.size), top[w]] = melds.NOT_IN_HAND  # a card taken stays this turn
        out[w, 7 * NUM_CARDS:8 * NUM_CARDS] = np.where(look < melds.NOT_IN_HAND, look, 0) * np.float32(0.01)
        take_best[w] = look.min(1) / 100.0
    scalars = out[:, n_planes * NUM_CARDS:]
    scalars[:, :5] = 0.0
    scalars[rows, s.phase] = 1.0
    rules = s.rules
    own_dead = s._deadwood[rows, me].astype(np.float32)
    if d.size:
        own_dead[d] = after.min(1)
    x = scalars[:, 5:]
    x[:, 0] = s.stock_size / 31.0
    x[:, 1] = s.dealer == me
    x[:, 2] = own_dead / 100.0
    x[:, 3] = s.scores[rows, me] / rules.target
    x[:, 4] = s.scores[rows, opp] / rules.target
    x[:, 5] = rules.target / 100.0
    x[:, 6] = s.knock_limit / 10.0
    x[:, 7] = rules.gin_bonus / 100.0
    x[:, 8] = rules.undercut_bonus / 100.0
    x[:, 9] = float(rules.big_gin)
    x[:, 10] = s.big_gin_ok & mine_to_move
    x[:, 11] = s.turn / rules.max_turns
    x[:, 12] = (s.current == me) & (s.phase != core.DONE)
    x[:, 13] = take_best
    return out

