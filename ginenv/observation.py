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
#: The 52-card planes, in order: plane k is ``obs[..., k * 52:(k + 1) * 52]``.
PLANE_NAMES = (
    "own_hand",
    "top_discard",
    "rest_of_pile",
    "opponent_took",
    "opponent_discarded",
    "unseen",
    "may_not_discard",
    "deadwood_after_discard",
    "own_discards",
)
#: The scalars after the planes, in order. ``SCALAR_SCALES`` gives the divisor of each
#: scaled one (``decode`` multiplies it back); the scores are over the rules' target,
#: the turn over ``max_turns``, the rest 0/1.
SCALAR_NAMES = (
    "phase_offer",
    "phase_forced_draw",
    "phase_draw",
    "phase_discard",
    "phase_done",
    "stock_size",
    "is_dealer",
    "own_deadwood",
    "own_score",
    "opponent_score",
    "target",
    "knock_limit",
    "gin_bonus",
    "undercut_bonus",
    "big_gin_allowed",
    "big_gin_now",
    "turn",
    "on_move",
    "take_best_deadwood",
)
SCALAR_SCALES = {
    "stock_size": 31.0,
    "own_deadwood": 100.0,
    "target": 100.0,
    "knock_limit": 10.0,
    "gin_bonus": 100.0,
    "undercut_bonus": 100.0,
    "take_best_deadwood": 100.0,
}
PLANE = {name: k for k, name in enumerate(PLANE_NAMES)}
NUM_PLANES = len(PLANE_NAMES)  # 9
SCALARS_START = NUM_PLANES * NUM_CARDS  # 468
SCALAR = {name: SCALARS_START + k for k, name in enumerate(SCALAR_NAMES)}
PHASE_SCALARS = slice(SCALAR["phase_offer"], SCALAR["phase_done"] + 1)  # the phase one-hot, core's order
NUM_SCALARS = len(SCALAR_NAMES)  # 5 + 14
OBS_SIZE = NUM_PLANES * NUM_CARDS + NUM_SCALARS  # 9 planes of 52 + 19 scalars = 487
PERFECT_OBS_SIZE = OBS_SIZE + NUM_CARDS  # + the opponent's hand = 539
DEADWOOD_SCALE = 100.0  # plane deadwood_after_discard holds deadwood / 100
_COL = {name: k for k, name in enumerate(SCALAR_NAMES)}  # column within the scalars
_DEADWOOD = slice(PLANE["deadwood_after_discard"] * NUM_CARDS, (PLANE["deadwood_after_discard"] + 1) * NUM_CARDS)


def plane(obs: np.ndarray, name: str) -> np.ndarray:
    """``(B, 52)``: the plane ``name`` of a batch of observations (a view)."""
    k = PLANE[name]
    return obs[..., k * NUM_CARDS : (k + 1) * NUM_CARDS]


def scalar(obs: np.ndarray, name: str) -> np.ndarray:
    """``(B,)``: the scalar ``name`` as written (scaled)."""
    return obs[..., SCALAR[name]]


def decode(obs: np.ndarray, name: str) -> np.ndarray:
    """``(B,)``: the scalar ``name`` in its own units (a count, points, or 0/1); the
    score scalars stay fractions of the target."""
    return scalar(obs, name) * SCALAR_SCALES.get(name, 1.0)


def phase(obs: np.ndarray) -> np.ndarray:
    """``(B,)`` int: the phase (``core.OFFER`` .. ``core.DONE``) from the one-hot."""
    return obs[..., PHASE_SCALARS].argmax(-1)


def stock_size(obs: np.ndarray) -> np.ndarray:
    """``(B,)`` int64: cards in the stock."""
    return np.rint(decode(obs, "stock_size")).astype(np.int64)


def deadwood_after(obs: np.ndarray) -> np.ndarray:
    """``(B, 52)`` int64: own deadwood after discarding each card (plane
    ``deadwood_after_discard``), 0 for cards that cannot be discarded."""
    return np.rint(plane(obs, "deadwood_after_discard") * DEADWOOD_SCALE).astype(np.int64)


def obs_size(perfect_information: bool = False) -> int:
    return PERFECT_OBS_SIZE if perfect_information else OBS_SIZE


def observe(s: core.State, player, perfect_information: bool = False, out: np.ndarray | None = None) -> np.ndarray:
    """``(B, OBS_SIZE)`` float32 observations of ``player`` (an int or a ``(B,)`` array).

    ``out`` (a ``(B, obs_size)`` float32 array) is filled instead of a new array."""
    b = len(s.phase)
    if perfect_information is not False and perfect_information is not True:
        if not isinstance(perfect_information, np.bool_):
            raise ValueError(f"perfect_information must be True or False, got {perfect_information!r}")
        perfect_information = bool(perfect_information)
    # One seat for every game (an env's one game, most often): its rows made once.
    me = _SEATS.get((player, b)) if type(player) is int else None
    if me is None:
        me = core.check_players(player, b)
        if type(player) is int and b <= 64:
            me.flags.writeable = False
            _SEATS[player, b] = me
    size = obs_size(perfect_information)
    if out is None:
        out = np.empty((b, size), np.float32)
    elif out.shape != (b, size) or out.dtype != np.float32:
        raise ValueError(f"out must be a float32 array of shape {(b, size)}")
    if core._compiled is not None:
        core._compiled.observe(out, me, perfect_information, s._games, core._rule_vector(s), _SCALES)
        return out
    n_planes = NUM_PLANES + perfect_information
    rows = np.arange(b)
    opp = 1 - me
    # The 0/1 planes are built as bytes, then cast to float32 in one contiguous pass.
    planes = np.zeros((b, n_planes, NUM_CARDS), bool)
    own = s._hands[rows, me]
    planes[:, PLANE["own_hand"]] = own
    size = s.pile_size.astype(np.int64)
    has_pile = size > 0
    top = s.pile[rows, np.maximum(size - 1, 0)].astype(np.int64)
    # A knock card is face down only while the hand is scored: the hand is over, every
    # hand is laid out, and it shows as the top card like any other.
    planes[rows[has_pile], PLANE["top_discard"], top[has_pile]] = True
    in_pile = s.pile_mask
    planes[:, PLANE["rest_of_pile"]] = in_pile
    planes[rows[has_pile], PLANE["rest_of_pile"], top[has_pile]] = False
    opp_known = s.took[rows, opp] & s._hands[rows, opp]  # taken from the pile, still held
    planes[:, PLANE["opponent_took"]] = opp_known
    np.logical_or(s.discarded[rows, opp], s.passed[rows, opp], out=planes[:, PLANE["opponent_discarded"]])
    np.logical_not(own | in_pile | opp_known, out=planes[:, PLANE["unseen"]])
    mine_to_move = (s.current == me) & (s.phase == core.DISCARD)
    t = np.flatnonzero(mine_to_move & (s.taken >= 0))
    planes[t, PLANE["may_not_discard"], s.taken[t]] = True
    planes[:, PLANE["own_discards"]] = s.discarded[rows, me]
    if perfect_information:
        planes[:, NUM_PLANES] = s._hands[rows, opp]
    out[:, : n_planes * NUM_CARDS] = planes.reshape(b, -1)
    d = np.flatnonzero(mine_to_move)
    after = s._after_discard[d]
    out[d, _DEADWOOD] = np.where(after < melds.NOT_IN_HAND, after, 0) * np.float32(1 / DEADWOOD_SCALE)
    # Draw turn or upcard offer: what taking the face-up card would allow.
    w = np.flatnonzero((s.current == me) & ((s.phase == core.DRAW) | (s.phase == core.OFFER)) & has_pile)
    take_best = np.zeros(b, np.float32)
    if w.size:
        with_top = own[w]
        with_top[np.arange(w.size), top[w]] = True
        look = melds.masks_after_discard(melds.suit_masks(with_top))
        look[np.arange(w.size), top[w]] = melds.NOT_IN_HAND  # a card taken stays this turn
        out[w, _DEADWOOD] = np.where(look < melds.NOT_IN_HAND, look, 0) * np.float32(1 / DEADWOOD_SCALE)
        take_best[w] = look.min(1) / SCALAR_SCALES["take_best_deadwood"]
    x = out[:, n_planes * NUM_CARDS :]  # the scalars, in SCALAR_NAMES order
    x[:, _COL["phase_offer"] : _COL["phase_done"] + 1] = 0.0
    x[rows, _COL["phase_offer"] + s.phase] = 1.0
    rules = s.rules
    own_dead = s._deadwood[rows, me].astype(np.float32)
    if d.size:
        own_dead[d] = after.min(1)
    x[:, _COL["stock_size"]] = s.stock_size / SCALAR_SCALES["stock_size"]
    x[:, _COL["is_dealer"]] = s.dealer == me
    x[:, _COL["own_deadwood"]] = own_dead / SCALAR_SCALES["own_deadwood"]
    x[:, _COL["own_score"]] = s.scores[rows, me] / rules.target
    x[:, _COL["opponent_score"]] = s.scores[rows, opp] / rules.target
    x[:, _COL["target"]] = rules.target / SCALAR_SCALES["target"]
    x[:, _COL["knock_limit"]] = s.knock_limit / SCALAR_SCALES["knock_limit"]
    x[:, _COL["gin_bonus"]] = rules.gin_bonus / SCALAR_SCALES["gin_bonus"]
    x[:, _COL["undercut_bonus"]] = rules.undercut_bonus / SCALAR_SCALES["undercut_bonus"]
    x[:, _COL["big_gin_allowed"]] = float(rules.big_gin)
    x[:, _COL["big_gin_now"]] = s._big_gin_ok & mine_to_move
    x[:, _COL["turn"]] = s.turn / rules.max_turns
    x[:, _COL["on_move"]] = (s.current == me) & (s.phase != core.DONE)
    x[:, _COL["take_best_deadwood"]] = take_best
    return out


#: The rows of one seat for every game of a batch (a read-only ``(b,)`` int64), by
#: ``(seat, b)``, for batches of up to 64 games.
_SEATS: dict = {}
_SCALES = np.array(
    [SCALAR_SCALES[k] for k in ("stock_size", "own_deadwood", "target", "knock_limit", "gin_bonus", "undercut_bonus")]
    + [SCALAR_SCALES["take_best_deadwood"]]
)
