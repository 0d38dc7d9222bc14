"""A position seen by one player, for frontends that keep their own game state.

``position(...)`` turns what a player knows (own hand, the discard pile, what the
opponent took and threw, the phase, the scores) into a one-game ``core.State`` with
that player as player 0 and on move. The cards the player cannot see are filled in
arbitrarily: the observation never depends on them (the tests check that), so
``observe(state, 0)`` and ``legal_action_mask(state)`` are exactly what this
project's env would give. Use it to ask a trained policy for a move (the policy loader
lives in the ``agents`` package, above this one)::

    >>> from ginenv.view import position, observe_position
    >>> obs, mask = observe_position(position("As 2s 3s 7h 7d 7c Jd Qd Kd 9c", pile="5c Qh", phase="draw"))
    >>> move = agents.load_policy("checkpoints/champion").act(obs, mask)
"""

from __future__ import annotations

import numpy as np

from ginenv import core
from ginenv.cards import parse_cards
from ginenv.observation import observe

PHASES = {"offer": core.OFFER, "forced_draw": core.FORCED_DRAW, "draw": core.DRAW, "discard": core.DISCARD}


def _cards(name: str, x) -> list:
    """Cards given as text (``"As 2s"``) or card ids, as a list of ids."""
    if isinstance(x, str):
        try:
            return [int(c) for c in parse_cards(x)]
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    ids = np.asarray(x if isinstance(x, (list, tuple, np.ndarray)) else [None], dtype=object).reshape(-1)
    if not all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in ids):
        raise ValueError(f"{name} must be cards as text ('As 2s') or a list of card ids 0..51, got {x!r}")
    return [int(c) for c in ids]


def position(
    hand,
    pile,
    *,
    phase: str = "draw",
    taken=None,
    opponent_took=(),
    opponent_discarded=(),
    opponent_passed=(),
    my_discards=(),
    dealer: bool = False,
    scores=(0, 0),
    turn: int = 0,
    rules=None,
    knock_limit: int | None = None,
) -> core.State:
    """The position of a player (as player 0, on move). Cards are card ids or text.

    ``hand``: 10 cards (11 in the discard phase); ``pile``: the discard pile, bottom
    first; ``taken``: in the discard phase, the card just taken from the pile (it is
    then in the hand); ``opponent_took``: cards the opponent took from the pile and
    still holds; ``opponent_discarded`` / ``opponent_passed`` / ``my_discards``: cards
    thrown face up (or the upcard passed) so far this hand; ``knock_limit``: this
    hand's limit (needed under Oklahoma rules, where the upcard set it). Built by
    ``core.from_view``."""
    if not isinstance(phase, str) or phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}; got {phase!r}")
    taken_id = -1 if taken is None else (_cards("taken", [taken] if not isinstance(taken, str) else taken) + [-1])[0]
    return core.from_view(
        _cards("hand", hand),
        _cards("pile", pile),
        phase=PHASES[phase],
        taken=taken_id,
        opponent_took=_cards("opponent_took", opponent_took),
        opponent_discarded=_cards("opponent_discarded", opponent_discarded),
        opponent_passed=_cards("opponent_passed", opponent_passed),
        my_discards=_cards("my_discards", my_discards),
        dealer=dealer,
        scores=scores,
        turn=turn,
        rules=rules,
        knock_limit=knock_limit,
    )


def observe_position(state: core.State):
    """(observation (OBS_SIZE,), action mask (108,)) of player 0 in a ``position``."""
    if not isinstance(state, core.State) or state.batch_size != 1:
        raise ValueError(f"observe_position takes the one-game State that position(...) returns, got {state!r:.80}")
    return observe(state, 0)[0], core.legal_action_mask(state)[0]
