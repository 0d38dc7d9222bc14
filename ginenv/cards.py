"""Cards: ids, notation, values, and conversions between id arrays and boolean hands.

A card id is ``suit * 13 + rank`` with rank 0 = ace, 1 = two, ..., 12 = king and the
suits in the order spades, hearts, diamonds, clubs (``shdc``). So ids 0..12 are the
spades A..K, 13..25 the hearts, 26..38 the diamonds and 39..51 the clubs. This order
makes a boolean hand of shape ``(..., 52)`` reshape to ``(..., 4, 13)``: one row per
suit, one column per rank, which is what the meld tables in ``ginenv.melds`` index.

Notation: a card is its rank letter then its suit letter, ``As 2s Td Kh``; ranks
``A23456789TJQK`` (``10`` is accepted for ``T``), suits ``shdc``, case-insensitive.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

NUM_CARDS = 52
NUM_RANKS = 13
NUM_SUITS = 4
RANKS = "A23456789TJQK"
SUITS = "shdc"
SUIT_SYMBOLS = "\u2660\u2665\u2666\u2663"  # the same order as SUITS

# Deadwood value of each rank: A = 1, 2..10 face value, J/Q/K = 10.
RANK_VALUES = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10], dtype=np.int16)
# Deadwood value of each card id.
CARD_VALUES = np.tile(RANK_VALUES, NUM_SUITS)


def card_id(rank: int, suit: int) -> int:
    """The id of the card of ``rank`` (0 = ace) and ``suit`` (0 = spades)."""
    return suit * NUM_RANKS + rank


def rank_of(cards):
    """Rank (0 = ace ... 12 = king) of card id(s)."""
    return np.asarray(cards) % NUM_RANKS


def suit_of(cards):
    """Suit (0 = spades, 1 = hearts, 2 = diamonds, 3 = clubs) of card id(s)."""
    return np.asarray(cards) // NUM_RANKS


def _parse_one(token) -> int:
    if not isinstance(token, str):
        raise ValueError(f"bad card {token!r}: expected text such as 'As' or '10h'")
    text = token.strip()
    if len(text) < 2:
        raise ValueError(f"bad card {token!r}: expected a rank from {RANKS} (or 10) then a suit from {SUITS}")
    rank_text, suit_text = text[:-1].upper(), text[-1].lower()
    if rank_text == "10":
        rank_text = "T"
    if len(rank_text) != 1 or rank_text not in RANKS:
        raise ValueError(f"bad card {token!r}: rank {text[:-1]!r} is not one of {RANKS} (or 10)")
    if suit_text not in SUITS:
        raise ValueError(f"bad card {token!r}: suit {text[-1]!r} is not one of {SUITS}")
    return card_id(RANKS.index(rank_text), SUITS.index(suit_text))


def parse_cards(text: str | Iterable[str]) -> np.ndarray:
    """Parse ``"As 2s Td Kh"`` (or a list of such tokens) into an int array of card ids.

    Raises ``ValueError`` naming the bad token, or the repeated card.
    """
    if isinstance(text, str):
        tokens = text.replace(",", " ").split()
    elif isinstance(text, Iterable) and not isinstance(text, (bytes, dict)):
        tokens = list(text)
    else:
        raise ValueError(f"cards must be text such as 'As 2s Td' or a list of such tokens, got {text!r}")
    ids = [_parse_one(t) for t in tokens]
    seen: set[int] = set()
    for token, c in zip(tokens, ids):
        if c in seen:
            raise ValueError(f"card {format_card(c)} appears twice (token {token!r})")
        seen.add(c)
    return np.array(ids, dtype=np.int64)


def format_card(card: int, symbols: bool = False) -> str:
    """``12 -> 'Ks'``; with ``symbols=True`` the suit is drawn as its symbol."""
    if isinstance(card, np.ndarray) and card.ndim == 0 and np.issubdtype(card.dtype, np.integer):
        card = card.item()
    if isinstance(card, (bool, np.bool_)) or not isinstance(card, (int, np.integer)):
        hint = " (to read notation such as 'As', use parse_cards)" if isinstance(card, str) else ""
        raise ValueError(f"card must be an integer card id 0..{NUM_CARDS - 1}, got {card!r}{hint}")
    card = int(card)
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card} is out of range 0..51")
    suits = SUIT_SYMBOLS if symbols else SUITS
    return RANKS[card % NUM_RANKS] + suits[card // NUM_RANKS]


def format_cards(cards, symbols: bool = False) -> str:
    """Card ids, or a boolean hand of 52, as ``'As 2s Td'`` in the given (or id) order."""
    arr = np.asarray(cards)
    if arr.dtype == np.bool_:
        if arr.shape != (NUM_CARDS,):
            raise ValueError(f"a boolean hand must have shape (52,), got {arr.shape}")
        arr = np.flatnonzero(arr)
    return " ".join(format_card(c, symbols) for c in arr.ravel())


def to_hand(cards) -> np.ndarray:
    """Card ids -> boolean hand of shape ``(52,)``.

    ``cards`` may also be a 2-D int array ``(B, k)``, giving ``(B, 52)``.
    """
    arr = np.asarray(cards, dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= NUM_CARDS):
        raise ValueError("card ids must lie in 0..51")
    hand = np.zeros(arr.shape[:-1] + (NUM_CARDS,) if arr.ndim > 1 else (NUM_CARDS,), dtype=bool)
    if arr.ndim <= 1:
        hand[arr] = True
    else:
        np.put_along_axis(hand, arr, True, axis=-1)
    return hand


def from_hand(hand) -> np.ndarray:
    """Boolean hand ``(52,)`` -> sorted card ids."""
    hand = np.asarray(hand, dtype=bool)
    if hand.shape != (NUM_CARDS,):
        raise ValueError(f"a boolean hand must have shape (52,), got {hand.shape}")
    return np.flatnonzero(hand)


def hand_value(hands) -> np.ndarray:
    """Total deadwood value of all cards in boolean hand(s) ``(..., 52)``."""
    return (np.asarray(hands, dtype=bool) * CARD_VALUES).sum(-1)
