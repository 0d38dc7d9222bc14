"""A position seen by one player, for frontends that keep their own game state.

``position(...)`` turns what a player knows (own hand, the discard pile, what the
opponent took and threw, the phase, the scores) into a one-game ``core.State`` with
that player as player 0 and on move. The cards the player cannot see are filled in
arbitrarily: the observation never depends on them (the tests check that), so
``observe(state, 0)`` and ``legal_action_mask(state)`` are exactly what this
project's env would give. Use it to ask a trained policy for a move::

    from agents import load_policy
    from ginenv.view import position, observe_position
    obs, mask = observe_position(position("As 2s 3s 7h 7d 7c Jd Qd Kd 9c", pile="5c Qh", phase="draw"))
    move = load_policy("checkpoints/champion").act(obs, mask)
"""

from __future__ import annotations

import numpy as np

from ginenv import core
from ginenv.cards import NUM_CARDS, parse_cards
from ginenv.observation import observe
from ginenv.rules import resolve

PHASES = {"offer": core.OFFER, "forced_draw": core.FORCED_DRAW, "draw": core.DRAW, "discard": core.DISCARD}


def _cards(x):
    if isinstance(x, str):
        return [int(c) for c in parse_cards(x)]
    return [int(c) for c in x]


def position(hand, pile, *, phase: str = "draw", taken=None, opponent_took=(), opponent_discarded=(),
             opponent_passed=(), my_discards=(), dealer: bool = False, scores=(0, 0), turn: int = 0,
             rules=None, knock_limit: int | None = None) -> core.State:
    """The position of a player (as player 0, on move). Cards are card ids or text.

    ``hand``: 10 cards (11 in the discard phase); ``pile``: the discard pile, bottom
    first; ``taken``: in the discard phase, the card just taken from the pile (it is
    then in the hand); ``opponent_took``: cards the opponent took from the pile and
    still holds; ``opponent_discarded`` / ``opponent_passed`` / ``my_discards``: cards
    thrown face up (or the upcard passed) so far this hand; ``knock_limit``: this
    hand's limit (needed under Oklahoma rules, where the upcard set it)."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}; got {phase!r}")
    rules = resolve(rules)
    hand, pile, took = _cards(hand), _cards(pile), _cards(opponent_took)
    want = 11 if phase == "discard" else 10
    if len(hand) != want:
        raise ValueError(f"in phase {phase} the hand holds {want} cards, got {len(hand)}")
    if not pile and phase != "discard":
        raise ValueError("the discard pile is empty: there is always a face-up card before a draw")
    seen = hand + pile + took
    if len(set(seen)) != len(seen):
        raise ValueError("a card is in two places among the hand, the pile and the opponent's known cards")
    unseen = [c for c in range(NUM_CARDS) if c not in set(seen)]
    opp_hand = took + unseen[:10 - len(took)]
    stock = unseen[10 - len(took):]
    if len(stock) <= core.DEAD_STOCK:
        raise ValueError(f"the stock would hold {len(stock)} cards; the hand is over at {core.DEAD_STOCK}")
    s = core.init(1, rules, mode="hand")
    s._hands[:] = False
    s._hands[0, 0, hand] = True
    s._hands[0, 1, opp_hand] = True
    s._deck[0] = np.array(pile + hand + opp_hand + stock, np.int8)[:NUM_CARDS]
    s.stock_pos[0] = NUM_CARDS - len(stock)
    s._deck[0, s.stock_pos[0]:] = stock
    s.pile[0] = -1
    s.pile[0, :len(pile)] = pile
    s.pile_size[0] = len(pile)
    s.pile_mask[0] = False
    s.pile_mask[0, pile] = True
    for field, cards in ((s.took[0, 1], took), (s.discarded[0, 1], _cards(opponent_discarded)),
                         (s.passed[0, 1], _cards(opponent_passed)), (s.discarded[0, 0], _cards(my_discards))):
        field[:] = False
        field[cards] = True
    s.took[0, 0] = False
    s.passed[0, 0] = False
    s.phase[0], s.current[0], s.dealer[0] = PHASES[phase], 0, 0 if dealer else 1
    s.scores[0] = scores
    s.turn[0] = turn
    s.taken[0] = -1 if taken is None else _cards([taken] if not isinstance(taken, str) else taken)[0]
    if rules.oklahoma and knock_limit is None:
        raise ValueError("under Oklahoma rules give the hand's knock_limit (the upcard's value; 0 for an ace)")
    s.knock_limit[0] = rules.knock_limit if knock_limit is None else knock_limit
    s._deadwood[0] = 0
    if phase == "discard":
        core._prepare_discard(s, np.array([0]), np.zeros(1, np.int64))
    else:
        from ginenv.melds import deadwood

        s._deadwood[0, 0] = deadwood(s._hands[0, 0])
    core._update_legal(s)
    return s


def observe_position(state: core.State):
    """(observation (OBS_SIZE,), action mask (108,)) of player 0 in a ``position``."""
    return observe(state, 0)[0], core.legal_action_mask(state)[0]
