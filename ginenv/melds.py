"""Melds and deadwood, batched over any leading shape of boolean hands ``(..., 52)``.

This module knows nothing of turns: it is the card maths the game engine and the
scorer stand on.

How it is fast and exact
------------------------
A hand is four 13-bit suit masks (``suit_masks``). Within one suit, runs are all a hand
can form, and since a run may have any length >= 3 the best run cover of a suit is
simply every block of 3+ consecutive ranks. So the deadwood of a suit mask, counting
runs only, is a lookup in a table of 8192 entries (``SUIT_DEADWOOD``) built at import.

Sets cut across suits. A rank can join a set only if the hand holds 3 or 4 of it, and
11 cards hold at most three such ranks. For each hand we enumerate the *set options*:
for every such rank, no set, the whole set, or (for four of a kind) the set of three
that leaves one named card free for a run. Removing the chosen set cards from the suit
masks leaves runs only, so the deadwood of an option is four table lookups, and the
hand's deadwood is the minimum over its options. Most hands have no rank held three
times; they need just the base option, and the batch never loops in Python.

``deadwood_after_discard`` uses a second table, ``DISCARD_DELTA[mask, rank]``: how the
suit's deadwood changes when that rank is removed. For an option whose set cards do not
include the discard, the deadwood after discarding card c is the option's deadwood plus
one delta; the minimum over options is exact, because every arrangement of the hand
without c is an option of the full hand that does not use c in a set.
"""

from __future__ import annotations

import numpy as np

from ginenv.cards import CARD_VALUES, NUM_CARDS, NUM_RANKS, NUM_SUITS, RANK_VALUES

#: Value in ``deadwood_after_discard`` for a card that is not in the hand. It is larger
#: than any deadwood of up to 12 cards, so a minimum over the 52 entries ignores it.
NOT_IN_HAND = 128
#: ``deadwood_after_discard`` takes hands of at most this many cards (its uint8
#: arithmetic is exact up to there); ``deadwood`` takes any size.
MAX_AFTER_DISCARD_CARDS = 12

_NUM_MASKS = 1 << NUM_RANKS
_RANK_BITS = (1 << np.arange(NUM_RANKS)).astype(np.uint16)
# Refuse hands whose set options would explode (only hands far larger than 11 cards).
_MAX_OPTIONS = 50_000_000


def _blocks(mask: int) -> list[tuple[int, int]]:
    """Maximal runs of consecutive ranks in a 13-bit mask as (first rank, length)."""
    out, r = [], 0
    while r < NUM_RANKS:
        if (mask >> r) & 1:
            start = r
            while r < NUM_RANKS and (mask >> r) & 1:
                r += 1
            out.append((start, r - start))
        else:
            r += 1
    return out


def _build_tables():
    run_melded = np.zeros(_NUM_MASKS, dtype=np.uint16)  # ranks covered by runs
    for m in range(_NUM_MASKS):
        for start, length in _blocks(m):
            if length >= 3:
                run_melded[m] |= ((1 << length) - 1) << start
    every = np.arange(_NUM_MASKS)
    bits = ((every[:, None] >> np.arange(NUM_RANKS)) & 1).astype(bool)
    values = (bits * RANK_VALUES).sum(1).astype(np.int16)
    suit_deadwood = values[~run_melded.astype(np.int64) & every]
    without = every[:, None] & ~(1 << np.arange(NUM_RANKS))[None, :]
    # uint8 arithmetic modulo 256: a hand's deadwood plus the (possibly negative) change
    # is exact while the true result lies in 0..127 (hands of <= 12 cards: <= 120). A
    # rank not in the mask adds NOT_IN_HAND, so the sum lands in 128..255, and one
    # np.minimum pins it to exactly NOT_IN_HAND.
    delta = np.where(bits, suit_deadwood[without] - suit_deadwood[:, None], NOT_IN_HAND)
    return values, run_melded, suit_deadwood, (delta % 256).astype(np.uint8), bits.sum(1)


#: ``SUIT_VALUE[m]``: total value of the ranks in suit mask m.
#: ``RUN_MELDED[m]``: the ranks of m that runs cover (every block of 3+ consecutive ranks).
#: ``SUIT_DEADWOOD[m]``: value of the ranks of m left out of runs.
#: ``DISCARD_DELTA[m, r]``: ``SUIT_DEADWOOD[m without r] - SUIT_DEADWOOD[m]`` modulo 256
#: for r in m, else ``NOT_IN_HAND`` (uint8).
#: ``SUIT_COUNT[m]``: number of ranks in m.
SUIT_VALUE, RUN_MELDED, SUIT_DEADWOOD, DISCARD_DELTA, SUIT_COUNT = _build_tables()
_SUIT_DEADWOOD_U8 = SUIT_DEADWOOD.astype(np.uint8)  # valid while a hand's deadwood < 256


# ---------------------------------------------------------------------------- helpers
def check_hands(hands) -> np.ndarray:
    """Validate boolean hands of shape ``(..., 52)`` and return them as ``(n, 52)``."""
    arr = np.asarray(hands)
    if arr.dtype != np.bool_:
        raise ValueError(f"hands must be a boolean array of shape (..., 52), got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.shape[-1] != NUM_CARDS:
        raise ValueError(f"hands must have shape (..., 52), got {arr.shape}")
    return np.ascontiguousarray(arr.reshape(-1, NUM_CARDS))


def hand_bits(flat_hands: np.ndarray) -> np.ndarray:
    """``(n, 52)`` bool -> ``(n,)`` uint64 with bit c set for card c."""
    packed = np.zeros((len(flat_hands), 8), dtype=np.uint8)
    packed[:, :7] = np.packbits(flat_hands, axis=1, bitorder="little")
    return packed.view("<u8")[:, 0].astype(np.uint64)


_SUIT_SHIFTS = (NUM_RANKS * np.arange(NUM_SUITS)).astype(np.uint64)


def bits_to_masks(bits: np.ndarray) -> np.ndarray:
    """``(n,)`` uint64 card bits -> ``(n, 4)`` uint16 suit masks."""
    masks = np.empty((len(bits), NUM_SUITS), dtype=np.uint16)
    for s in range(NUM_SUITS):  # four columns, not a loop over the batch
        masks[:, s] = bits >> _SUIT_SHIFTS[s]  # the cast keeps the low 16 bits
    masks &= _NUM_MASKS - 1
    return masks


def suit_masks(flat_hands: np.ndarray) -> np.ndarray:
    """``(n, 52)`` bool -> ``(n, 4)`` uint16, bit r of column s = card ``s*13 + r``."""
    return bits_to_masks(hand_bits(flat_hands))


def masks_to_hands(masks: np.ndarray) -> np.ndarray:
    """``(n, 4)`` suit masks -> ``(n, 52)`` bool."""
    return ((masks[..., None] & _RANK_BITS) != 0).reshape(masks.shape[:-1] + (NUM_CARDS,))


def rank_counts_at_least_3(masks: np.ndarray):
    """Per hand, the 13-bit masks of ranks held at least 3 times and 4 times."""
    a, b, c, d = masks[:, 0], masks[:, 1], masks[:, 2], masks[:, 3]
    ab, cd = a & b, c & d
    return (ab & (c | d)) | (cd & (a | b)), ab & cd


def expand(counts: np.ndarray):
    """For per-row counts, return (owner row of each item, index of the item in its row,
    start offset of each row). Rows with count 0 own nothing."""
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    owner = np.repeat(np.arange(counts.size), counts)
    local = np.arange(owner.size) - starts[owner]
    return owner, local, starts


def set_options(masks: np.ndarray, include_base: bool = True):
    """Enumerate the set options of each hand of ``(n, 4)`` suit masks.

    Returns ``(owner, option_masks, starts)``: for every option, the hand it belongs to
    and the suit masks left for runs once its set cards are removed, and the offset of
    each hand's first option. Options of one hand are contiguous. Option 0 of each hand
    (no set) is included only if ``include_base``; hands without a rank held 3 times
    then own no option. The set cards of an option are ``masks[owner] & ~option_masks``.
    """
    three, four = rank_counts_at_least_3(masks)
    # The ranks held 3+ times, packed into slots (a hand of 11 cards has at most three).
    rows, ranks = np.nonzero((three[:, None] >> np.arange(NUM_RANKS, dtype=np.uint16)) & 1)
    n_slots = np.bincount(rows, minlength=len(masks))
    width = max(int(n_slots.max(initial=0)), 1)
    slot = np.arange(rows.size) - np.repeat(np.cumsum(n_slots) - n_slots, n_slots)
    slot_rank = np.zeros((len(masks), width), np.int32)
    slot_rank[rows, slot] = ranks
    # Choices per slot: 1 (empty slot), 2 (three of a kind: no set / the set),
    # 6 (four of a kind: no set / all four / the three that spare suit 0, 1, 2 or 3).
    radix = np.ones((len(masks), width), np.int32)
    radix[rows, slot] = 2 + 4 * ((four[rows] >> ranks.astype(np.uint16)) & 1)
    stride = np.cumprod(np.concatenate([np.ones((len(masks), 1), np.int64), radix[:, :-1]], 1), 1)
    count = stride[:, -1] * radix[:, -1]
    if count.max(initial=0) > _MAX_OPTIONS:
        raise ValueError("hand has too many ranks held 3+ times to enumerate its set options")
    first = 0 if include_base else 1
    owner, local, starts = expand(count - first)
    digit = ((local + first).astype(np.int32)[:, None] // stride[owner].astype(np.int32)) % radix[owner]
    bit = np.left_shift(1, slot_rank[owner]).astype(np.uint16)  # (k, width); distinct ranks, so
    set_ranks = (bit * (digit >= 1)).sum(1, dtype=np.uint16)  # a sum is an OR
    spared = np.zeros((len(owner), NUM_SUITS), np.uint16)  # per option, the card each quad keeps
    rows = np.arange(len(owner))
    for w in range(width):  # at most 3 slots for 11 cards
        d = digit[:, w]
        spared[rows, np.clip(d - 2, 0, NUM_SUITS - 1)] += bit[:, w] * (d >= 2)
    held = masks[owner]
    return owner, held & ~(set_ranks[:, None] & ~spared), starts


def _options_deadwood(option_masks: np.ndarray) -> np.ndarray:
    t = SUIT_DEADWOOD
    return t[option_masks[:, 0]] + t[option_masks[:, 1]] + t[option_masks[:, 2]] + t[option_masks[:, 3]]


def _after_discard(option_masks: np.ndarray) -> np.ndarray:
    """``(k, 4)`` run masks -> ``(k, 52)`` uint8: deadwood after each discard, runs only."""
    out = DISCARD_DELTA.take(option_masks.ravel(), axis=0).reshape(-1, NUM_CARDS)
    t = _SUIT_DEADWOOD_U8
    out += (t[option_masks[:, 0]] + t[option_masks[:, 1]] + t[option_masks[:, 2]] + t[option_masks[:, 3]])[:, None]
    return out


def _crowded(three: np.ndarray, four: np.ndarray) -> np.ndarray:
    """Hands with two or more ranks held 3+ times, or a rank held 4 times."""
    return np.flatnonzero((three & (three - 1)) | four)


def masks_deadwood(masks: np.ndarray) -> np.ndarray:
    """Minimum deadwood from ``(n, 4)`` suit masks -> ``(n,)`` int16."""
    three, four = rank_counts_at_least_3(masks)
    # Options: no set, and the set of the rank held three times where there is just one
    # (for the other hands that "option" is the first again and changes nothing).
    out = np.minimum(_options_deadwood(masks), _options_deadwood(masks & ~three[:, None]))
    crowded = _crowded(three, four)
    if crowded.size:
        _, opt_masks, starts = set_options(masks[crowded], include_base=False)
        best = np.minimum.reduceat(_options_deadwood(opt_masks), starts)
        out[crowded] = np.minimum(out[crowded], best)
    return out


def _group_min(values: np.ndarray, owner: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Row-wise minimum of ``values`` per owner (each owner's rows contiguous, >= 1).

    Loops over the position within a group (a handful: 3 for two ranks held three
    times, 5 for four of a kind), never over the groups: cheaper than reduceat here."""
    local = np.arange(len(owner)) - starts[owner]
    out = values[starts].copy()
    for j in range(1, int(local.max(initial=0)) + 1):
        sel = np.flatnonzero(local == j)
        rows = owner[sel]
        out[rows] = np.minimum(out[rows], values[sel])
    return out


def masks_after_discard(masks: np.ndarray) -> np.ndarray:
    """``deadwood_after_discard`` from ``(n, 4)`` suit masks -> ``(n, 52)`` uint8.

    A set card is absent from its option's run masks, so ``DISCARD_DELTA`` already gives
    it NOT_IN_HAND there: discarding a set card is never credited to that option.
    """
    three, four = rank_counts_at_least_3(masks)
    out = _after_discard(masks)
    crowded = (three & (three - 1)) | four  # two+ ranks held 3+ times, or four of a kind
    single = np.flatnonzero((three != 0) & (crowded == 0))
    if single.size:  # one rank held three times: one more option, that set
        out[single] = np.minimum(out[single], _after_discard(masks[single] & ~three[single, None]))
    crowded = np.flatnonzero(crowded)
    if crowded.size:
        owner, opt_masks, starts = set_options(masks[crowded], include_base=False)
        best = _group_min(_after_discard(opt_masks), owner, starts)
        out[crowded] = np.minimum(out[crowded], best)
    np.minimum(out, NOT_IN_HAND, out=out)
    return out


# ------------------------------------------------------------------------- public API
def deadwood(hands) -> np.ndarray:
    """Minimum deadwood of each boolean hand ``(..., 52)`` (any hand size) -> int16 ``(...)``."""
    arr = np.asarray(hands)
    return masks_deadwood(suit_masks(check_hands(arr))).reshape(arr.shape[:-1])


def deadwood_after_discard(hands) -> np.ndarray:
    """For each card of each hand, the minimum deadwood of the hand without that card.

    ``(..., 52)`` bool, at most 12 cards a hand -> ``(..., 52)`` uint8; cards not in
    the hand get ``NOT_IN_HAND`` (128). For an 11-card hand the minimum over the 52
    entries is the best deadwood after a discard, which decides whether the player may
    knock.
    """
    arr = np.asarray(hands)
    bits = hand_bits(check_hands(arr))
    if len(bits) and np.bitwise_count(bits).max() > MAX_AFTER_DISCARD_CARDS:
        raise ValueError(f"deadwood_after_discard takes hands of at most {MAX_AFTER_DISCARD_CARDS} cards")
    return masks_after_discard(bits_to_masks(bits)).reshape(arr.shape)


_EYE = np.eye(NUM_CARDS, dtype=bool)


def with_each_card(hands) -> np.ndarray:
    """``(n, 52)`` hands -> ``(n * 52, 52)``: each hand with card c added, for every c."""
    return (np.asarray(hands)[:, None, :] | _EYE[None]).reshape(-1, NUM_CARDS)


def joins_meld(hands) -> np.ndarray:
    """``(n, 52)`` bool hands -> ``(n, 52)`` bool: card c would join a meld of the hand
    (the least deadwood of the hand with c is below the hand's own plus c's value);
    False on the hand's own cards. What gin_hunter takes from the pile, and what a
    discard must not give it."""
    arr = check_hands(hands)
    n = len(arr)
    now = masks_deadwood(suit_masks(arr)).astype(np.int64)
    more = masks_deadwood(suit_masks(with_each_card(arr))).astype(np.int64).reshape(n, NUM_CARDS)
    return (more < now[:, None] + CARD_VALUES[None].astype(np.int64)) & ~arr


def best_melds(hand):
    """One optimal arrangement of a single hand: ``(melds, deadwood_cards)``.

    ``hand`` is a boolean ``(52,)`` array or card ids. ``melds`` is a list of sorted
    card-id arrays (sets first, then runs by suit); ``deadwood_cards`` a sorted array.
    """
    h = np.asarray(hand)
    if h.dtype != np.bool_:
        from ginenv.cards import to_hand

        h = to_hand(h)
    flat = check_hands(h)
    if flat.shape[0] != 1:
        raise ValueError("best_melds takes one hand")
    masks = suit_masks(flat)
    _, opt_masks, _ = set_options(masks, include_base=True)
    i = int(np.argmin(_options_deadwood(opt_masks)))
    return arrangement(opt_masks[i], masks_to_hands(masks[0] & ~opt_masks[i]))


def arrangement(run_masks: np.ndarray, set_cards: np.ndarray):
    """Melds and deadwood of one hand given its set cards and the suit masks left for runs."""
    melds = []
    ids = np.flatnonzero(set_cards)
    for r in np.unique(ids % NUM_RANKS):
        melds.append(ids[ids % NUM_RANKS == r])
    dead = []
    for s in range(NUM_SUITS):
        for start, length in _blocks(int(run_masks[s])):
            cards = s * NUM_RANKS + np.arange(start, start + length)
            (melds.append(cards) if length >= 3 else dead.extend(cards.tolist()))
    return melds, np.array(sorted(dead), dtype=np.int64)
