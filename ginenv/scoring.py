"""Scoring: the end of a hand (knock, gin, big gin, undercut, lay-offs) and of a match.

How the end of a hand is arranged (a house rule, see the README): the program arranges
both hands. The defender's melds and lay-offs minimise the defender's deadwood; the
knocker's arrangement is, among all arrangements of the knocker's 10 cards whose
deadwood is within the knock limit, the one that scores best for the knocker given that
reply (it may leave more deadwood to offer fewer lay-off spots). Gin and big gin allow
no lay-offs.

How it is computed, batched: a knocker's arrangement is a set option (``melds``) and,
per suit, which cards go into runs (any union of 3+ blocks). For a given arrangement,
lay-offs onto the knocker's runs are the same as letting the defender use the knocker's
run cards in runs of the defender's own (the merged runs can always absorb whole
knocker runs, and the defender can never put a knocker card into a set), and the only
other lay-off is the fourth card of a knocker's set of three, which the defender may set
aside or keep. So the defender's best reply is again table lookups over a few options.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ginenv import melds
from ginenv.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from ginenv.melds import SUIT_DEADWOOD, SUIT_VALUE, expand, set_options, suit_masks
from ginenv.rules import MAX_KNOCK_LIMIT, Rules

# Kinds of a scored hand.
KNOCK, GIN, BIG_GIN, UNDERCUT, TIE = 0, 1, 2, 3, 4
KIND_NAMES = ("knock", "gin", "big_gin", "undercut", "tie")


def _build_run_choices():
    """For each suit mask, every way to meld part of it in runs leaving <= 10 points.

    Returns CSR arrays: ``start[m]:start[m+1]`` index ``sub`` (the ranks put in runs) and
    ``left`` (the value of the rest)."""
    every = np.arange(1 << NUM_RANKS)
    valid = np.array([m for m in every if all(n >= 3 for _, n in melds._blocks(int(m)))])
    small = every[SUIT_VALUE <= MAX_KNOCK_LIMIT]
    vi, li = np.nonzero((valid[:, None] & small[None, :]) == 0)
    full = valid[vi] | small[li]
    order = np.argsort(full, kind="stable")
    start = np.searchsorted(full[order], np.arange((1 << NUM_RANKS) + 1))
    return start, valid[vi][order].astype(np.uint16), SUIT_VALUE[small[li][order]].astype(np.int16)


_RC_START, _RC_SUB, _RC_LEFT = _build_run_choices()
_RC_COUNT = np.diff(_RC_START)


def _lowest_bit(x):
    return x & (~x + np.uint16(1))


def _knock_candidates(kmasks, dmasks, limits):
    """Every knocker arrangement within its limit, with the defender's best reply.

    ``kmasks``, ``dmasks``: ``(n, 4)`` suit masks; ``limits``: ``(n,)``. Returns a dict
    of per-arrangement arrays: ``hand``, ``K``, ``D``, the knocker's ``run`` masks and
    ``set_cards`` masks, and the defender's ``d_sets`` and ``laid`` masks.
    """
    n = len(kmasks)
    k_owner, kopt, _ = set_options(kmasks, include_base=True)
    counts = _RC_COUNT[kopt]  # (ko, 4)
    a_opt, local, _ = expand(counts.prod(1))
    runs = np.empty((a_opt.size, NUM_SUITS), np.uint16)
    left = np.zeros(a_opt.size, np.int16)
    for s in range(NUM_SUITS):  # decode the mixed-radix choice, one suit at a time
        c = counts[a_opt, s]
        idx = _RC_START[kopt[a_opt, s]] + local % c
        local = local // c
        runs[:, s] = _RC_SUB[idx]
        left += _RC_LEFT[idx]
    hand = k_owner[a_opt]
    keep = left <= limits[hand]
    a_opt, hand, runs, left = a_opt[keep], hand[keep], runs[keep], left[keep]
    set_cards = kmasks[hand] & ~kopt[a_opt]

    # The fourth card of each knocker set of three, where the defender holds it.
    three, four = melds.rank_counts_at_least_3(set_cards)
    free = (three & ~four)[:, None] & ~set_cards & dmasks[hand]
    free_ranks = np.bitwise_or.reduce(free, axis=1)

    # Pair every arrangement with every defender set option and lay-off choice.
    d_owner, dopt, d_starts = set_options(dmasks, include_base=True)
    d_count = np.bincount(d_owner, minlength=n)
    n_free = np.zeros(len(hand), np.int64)
    x = free_ranks.copy()
    while x.any():
        n_free += x != 0
        x &= x - (x != 0)
    p_arr, p_local, p_starts = expand(d_count[hand] << n_free)
    choice = p_local >> np.int64(0)
    d_index = d_starts[hand[p_arr]] + p_local % d_count[hand[p_arr]]
    choice = p_local // d_count[hand[p_arr]]
    chosen = np.zeros(p_arr.size, np.uint16)
    x = free_ranks[p_arr].copy()
    i = 0
    while x.any():
        low = _lowest_bit(x)
        chosen |= np.where((choice >> i) & 1 == 1, low, np.uint16(0)).astype(np.uint16)
        x ^= low
        i += 1
    laid = free[p_arr] & chosen[:, None]
    combined = (dopt[d_index] & ~laid) | runs[p_arr]
    d_dead = SUIT_DEADWOOD.take(combined).sum(1)
    # Best reply per arrangement: smallest deadwood, then the first such pair.
    key = d_dead.astype(np.int64) << 32 | np.arange(p_arr.size)
    best = np.minimum.reduceat(key, p_starts) & 0xFFFFFFFF
    return {
        "hand": hand,
        "K": left.astype(np.int64),
        "D": d_dead[best].astype(np.int64),
        "run": runs,
        "set_cards": set_cards,
        "d_sets": dmasks[hand] & ~dopt[d_index[best]],
        "laid": laid[best],
    }


def _points(K, D, rules: Rules):
    """Points (knocker, defender) and kind of a knock (not gin) with deadwoods K and D."""
    tie = D == K
    undercut = (D < K) | (tie & (rules.knock_tie == "undercut"))
    kind = np.where(undercut, UNDERCUT, np.where(tie, TIE, KNOCK))
    kp = np.where(D > K, D - K, 0)
    dp = np.where(undercut, K - D + rules.undercut_bonus, 0)
    return kp, dp, kind


def score_hands(knocker_hands, defender_hands, rules: Rules, knock_limits=None, big_gin=None, explain=False):
    """Score B ended hands at once.

    ``knocker_hands`` ``(B, 52)`` bool: 10 cards after the knock discard, or 11 for a big
    gin; ``defender_hands`` ``(B, 52)`` bool, 10 cards; ``knock_limits`` ``(B,)`` (default:
    the rules' limit; Oklahoma passes each hand's); ``big_gin`` ``(B,)`` bool.

    Returns a dict of ``(B,)`` arrays: ``kind`` (see ``KIND_NAMES``), ``knocker_deadwood``,
    ``defender_deadwood`` (after lay-offs), ``knocker_points``, ``defender_points``. With
    ``explain``, also ``candidates`` (see ``_knock_candidates``) and ``chosen``: per hand,
    the index of its arrangement there (-1 for gin).
    """
    kh, dh = melds.check_hands(knocker_hands), melds.check_hands(defender_hands)
    if kh.shape != dh.shape:
        raise ValueError(f"knocker and defender hands differ in shape: {kh.shape} vs {dh.shape}")
    n = len(kh)
    limits = (
        np.full(n, rules.knock_limit, np.int64)
        if knock_limits is None
        else np.broadcast_to(np.asarray(knock_limits, np.int64), (n,))
    )
    big = np.zeros(n, bool) if big_gin is None else np.broadcast_to(np.asarray(big_gin, bool), (n,))
    if (kh & dh).any():
        raise ValueError("the knocker and the defender hold a card in common")
    kmasks, dmasks = suit_masks(kh), suit_masks(dh)
    k_dead = melds.masks_deadwood(kmasks).astype(np.int64)
    size = kh.sum(1)
    expected = np.where(big, 11, 10)
    bad = np.flatnonzero((size != expected) | (dh.sum(1) != 10))
    if bad.size:
        i = bad[0]
        raise ValueError(
            f"hand {i}: the knocker must hold {expected[i]} cards and the defender 10; got {size[i]} and {dh[i].sum()}"
        )
    if big.any() and not rules.big_gin:
        raise ValueError("big gin is not allowed under these rules")
    illegal = np.flatnonzero(np.where(big, k_dead != 0, k_dead > limits))
    if illegal.size:
        i = illegal[0]
        what = "a big gin needs all 11 cards melded" if big[i] else f"the knock limit is {limits[i]}"
        raise ValueError(f"hand {i}: illegal knock, the knocker's deadwood is {k_dead[i]} and {what}")

    d_own = melds.masks_deadwood(dmasks).astype(np.int64)
    gin = k_dead == 0
    bonus = np.where(big, rules.big_gin_bonus, rules.gin_bonus)
    out = {
        "kind": np.where(big, BIG_GIN, GIN),
        "knocker_deadwood": np.zeros(n, np.int64),
        "defender_deadwood": d_own.copy(),
        "knocker_points": d_own + bonus,
        "defender_points": np.zeros(n, np.int64),
    }
    knocks = np.flatnonzero(~gin)
    chosen = np.full(n, -1, np.int64)
    cand = None
    if knocks.size:
        cand = _knock_candidates(kmasks[knocks], dmasks[knocks], limits[knocks])
        kp, dp, _ = _points(cand["K"], cand["D"], rules)
        # Best for the knocker: the largest net score, then the lowest deadwood, then first.
        net = kp - dp
        key = ((net + 4096) << 40) | ((1024 - cand["K"]) << 28) | (np.int64((1 << 28) - 1) - np.arange(net.size))
        starts = np.searchsorted(cand["hand"], np.arange(knocks.size))
        pick = ((1 << 28) - 1) - (np.maximum.reduceat(key, starts) & ((1 << 28) - 1))
        K, D = cand["K"][pick], cand["D"][pick]
        kp, dp, kind = _points(K, D, rules)
        out["kind"][knocks], out["knocker_deadwood"][knocks], out["defender_deadwood"][knocks] = kind, K, D
        out["knocker_points"][knocks], out["defender_points"][knocks] = kp, dp
        chosen[knocks] = pick
        cand["hand"] = knocks[cand["hand"]]
    if explain:
        out["candidates"], out["chosen"] = cand, chosen
    return out


@dataclass(frozen=True)
class HandResult:
    """The end of one hand, with what the players showed."""

    kind: str
    knocker_deadwood: int
    defender_deadwood: int
    knocker_points: int
    defender_points: int
    knocker_melds: list
    knocker_deadwood_cards: np.ndarray
    defender_melds: list
    defender_deadwood_cards: np.ndarray
    layoffs: list
    """(card, index into ``knocker_melds``) for each card the defender laid off."""

    @property
    def winner(self):
        """'knocker', 'defender', or None (a tie that scores nothing)."""
        if self.knocker_points > 0 or self.kind in ("gin", "big_gin"):
            return "knocker"
        if self.kind == "undercut":
            return "defender"
        return None


def _runs_of(mask_row):
    """Runs (card-id arrays) of ``(4,)`` suit masks, one per maximal block of 3+."""
    runs = []
    for s in range(NUM_SUITS):
        for start, length in melds._blocks(int(mask_row[s])):
            if length >= 3:
                runs.append(s * NUM_RANKS + np.arange(start, start + length))
    return runs


def _sets_of(mask_row):
    ids = np.flatnonzero(melds.masks_to_hands(np.asarray(mask_row)[None])[0])
    return [ids[ids % NUM_RANKS == r] for r in np.unique(ids % NUM_RANKS)]


def score_hand(
    knocker_hand, defender_hand, rules: Rules | None = None, big_gin: bool = False, knock_limit: int | None = None
) -> HandResult:
    """Score one ended hand (boolean ``(52,)`` hands or card-id arrays), with the melds."""
    from ginenv.cards import to_hand

    rules = rules or Rules()
    kh, dh = (np.asarray(h) if np.asarray(h).dtype == bool else to_hand(h) for h in (knocker_hand, defender_hand))
    res = score_hands(kh[None], dh[None], rules, None if knock_limit is None else [knock_limit], [big_gin], True)
    kind = KIND_NAMES[int(res["kind"][0])]
    k_melds, k_dead = melds.best_melds(kh)
    d_melds, d_dead, layoffs = *melds.best_melds(dh), []
    if res["chosen"][0] >= 0:
        c, i = res["candidates"], int(res["chosen"][0])
        k_melds = _sets_of(c["set_cards"][i]) + _runs_of(c["run"][i])
        in_melds = np.zeros(NUM_CARDS, bool)
        for m in k_melds:
            in_melds[m] = True
        k_dead = np.flatnonzero(kh & ~in_melds)
        # The defender: own sets, cards laid on knocker sets, and runs over the union of
        # the defender's remaining cards with the knocker's run cards.
        d_melds = _sets_of(c["d_sets"][i])
        used = np.zeros(NUM_CARDS, bool)
        for m in d_melds:
            used[m] = True
        for card in np.flatnonzero(melds.masks_to_hands(c["laid"][i][None])[0]):
            meld = next(j for j, m in enumerate(k_melds) if len(m) == 3 and (m % NUM_RANKS == card % NUM_RANKS).all())
            layoffs.append((int(card), meld))
            used[card] = True
        k_run_cards = melds.masks_to_hands(c["run"][i][None])[0]
        rest = melds.suit_masks((dh & ~used)[None])[0] | c["run"][i]
        for run in _runs_of(rest):
            mine = run[dh[run]]
            if k_run_cards[run].any():
                for card in mine:
                    meld = next(
                        j
                        for j, m in enumerate(k_melds)
                        if np.isin(m, run).all() and len(m) >= 3 and (m // NUM_RANKS == card // NUM_RANKS).all()
                    )
                    layoffs.append((int(card), meld))
            else:
                d_melds.append(run)
            used[mine] = True
        d_dead = np.flatnonzero(dh & ~used)
    return HandResult(
        kind=kind,
        knocker_deadwood=int(res["knocker_deadwood"][0]),
        defender_deadwood=int(res["defender_deadwood"][0]),
        knocker_points=int(res["knocker_points"][0]),
        defender_points=int(res["defender_points"][0]),
        knocker_melds=k_melds,
        knocker_deadwood_cards=k_dead,
        defender_melds=d_melds,
        defender_deadwood_cards=d_dead,
        layoffs=layoffs,
    )


# ------------------------------------------------------------------------------ match
def match_final(running, hands_won, hands_played, dead_hands, rules: Rules):
    """End-of-match totals for B finished matches of P players (2, or 3 at a table where
    the dealer sits out; see ``ginenv.table``).

    ``running`` ``(B, P)``: running totals (one reached the target); ``hands_won``
    ``(B, P)``; ``hands_played`` ``(B,)`` including dead hands; ``dead_hands`` ``(B,)``.
    A hand is won by the player who scored points in it. The leader (the player who
    reached the target: one player scores per hand) gets the game bonus; each player a
    line bonus per hand won; the shutouts read "the loser" as every other player.
    Returns ``(final (B, P), winner (B,))`` with winner -1 where the best final total is
    shared (a draw).
    """
    running = np.asarray(running, np.int64)
    won = np.asarray(hands_won, np.int64)
    rows = np.arange(len(running))
    leader = np.argmax(running, axis=1)  # only one player scores per hand: one reached it
    others = np.ones(running.shape, bool)
    others[rows, leader] = False
    final = running.copy()
    if rules.shutout == "double_hand_points":
        clean = (won[rows, leader] == np.asarray(hands_played)) & (np.asarray(dead_hands) == 0)
        final[rows, leader] += np.where(clean, running[rows, leader], 0)
    elif rules.shutout == "loser_scoreless":
        final[rows, leader] += np.where(((running == 0) | ~others).all(1), rules.shutout_bonus, 0)
    elif rules.shutout == "loser_won_no_hand":
        final[rows, leader] += np.where(((won == 0) | ~others).all(1), rules.shutout_bonus, 0)
    final[rows, leader] += rules.game_bonus
    final += won * rules.line_bonus
    best = final.max(1, keepdims=True)
    winner = np.where((final == best).sum(1) > 1, -1, np.argmax(final, axis=1))
    return final, winner


@dataclass(frozen=True)
class MatchResult:
    running: tuple
    """Running totals when the target was reached (hand points only)."""
    hands_won: tuple
    final: tuple
    """Totals with every end-of-match bonus."""
    winner: int | None
    """0 or 1, or None for a draw."""
    hands_played: int


def score_match(hands, rules: Rules | None = None) -> MatchResult:
    """Score a match from its hands in order: each ``(points_0, points_1)``, or ``None``
    for a dead (or truncated) hand. Play stops at the hand that reaches the target;
    more hands after it, or a hand where both players score, raise ``ValueError``."""
    rules = rules or Rules()
    running, won, dead = [0, 0], [0, 0], 0
    for i, hand in enumerate(hands):
        if max(running) >= rules.target:
            raise ValueError(f"hand {i} comes after the match ended at {running}")
        if hand is None:
            dead += 1
            continue
        p = [int(hand[0]), int(hand[1])]
        if min(p) < 0 or (p[0] > 0 and p[1] > 0):
            raise ValueError(f"hand {i}: points {p} are invalid (only one player scores, never negative)")
        for j in (0, 1):
            running[j] += p[j]
            won[j] += p[j] > 0
    if max(running) < rules.target:
        raise ValueError(f"the match is not over: running totals {running}, target {rules.target}")
    final, winner = match_final([running], [won], [len(hands)], [dead], rules)
    w = int(winner[0])
    return MatchResult(tuple(running), tuple(won), tuple(int(x) for x in final[0]), None if w < 0 else w, len(hands))
