"""Action ids, named once.

Layout (``NUM_ACTIONS`` = 108)::

    0   .. 51    DISCARD + c   discard card c face up (then the turn passes)
    52  .. 103   KNOCK + c     knock: discard card c face down and end the hand
                               (a knock at 0 deadwood is gin)
    104          DRAW_STOCK    draw the top card of the stock
    105          TAKE_DISCARD  take the top card of the discard pile (in the first-turn
                               offer: take the upcard)
    106          PASS          decline the upcard in the first-turn offer
    107          BIG_GIN       declare big gin with 11 melded cards, no discard
                               (only where the rules allow it)

Card ids are those of ``ginenv.cards`` (``suit * 13 + rank``).
"""

from __future__ import annotations

import numpy as np

from ginenv.cards import NUM_CARDS, format_card

DISCARD = 0
KNOCK = DISCARD + NUM_CARDS
DRAW_STOCK = KNOCK + NUM_CARDS
TAKE_DISCARD = DRAW_STOCK + 1
PASS = TAKE_DISCARD + 1
BIG_GIN = PASS + 1
NUM_ACTIONS = BIG_GIN + 1


def discard(card: int) -> int:
    return DISCARD + int(card)


def knock(card: int) -> int:
    return KNOCK + int(card)


def is_discard(actions):
    a = np.asarray(actions)
    return (a >= DISCARD) & (a < KNOCK)


def is_knock(actions):
    a = np.asarray(actions)
    return (a >= KNOCK) & (a < DRAW_STOCK)


def card_of(actions):
    """The card a discard or knock action names (-1 for other actions)."""
    a = np.asarray(actions)
    return np.where(a < KNOCK, a - DISCARD, np.where(a < DRAW_STOCK, a - KNOCK, -1))


def describe(action: int) -> str:
    """A person's reading of an action id: ``'discard 7h'``, ``'knock with Ks'``, ..."""
    a = int(action)
    if DISCARD <= a < KNOCK:
        return f"discard {format_card(a - DISCARD)}"
    if KNOCK <= a < DRAW_STOCK:
        return f"knock with {format_card(a - KNOCK)}"
    names = {
        DRAW_STOCK: "draw from the stock",
        TAKE_DISCARD: "take the discard",
        PASS: "pass",
        BIG_GIN: "declare big gin",
    }
    if a in names:
        return names[a]
    raise ValueError(f"action {a} is out of range 0..{NUM_ACTIONS - 1}")


def as_action(action) -> int:
    """One action as an int: a Python or numpy integer, or an integer array holding one
    value (what vectorised samplers hand back). Anything else (a float, a string,
    ``None``, a bool, several values) is a ``ValueError`` naming what is valid; the
    range and legality are the caller's to check."""
    a = np.asarray(action) if isinstance(action, np.ndarray) else action
    if isinstance(a, np.ndarray):
        if a.size != 1 or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"action must be one integer in 0..{NUM_ACTIONS - 1}, got an array {a!r}")
        a = a.reshape(()).item()
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
        raise ValueError(f"action must be an integer in 0..{NUM_ACTIONS - 1}, got {action!r}")
    return int(a)
