"""The compiled engine: the per-game work of ``ginenv.core`` as numba functions, one
game's step a compiled function and the batch a compiled loop over games.

``core`` chooses it once at import when numba is there (``GINENV_ENGINE=numpy`` keeps
the numpy engine; ``core.set_engine`` switches, for tests and benches). Both engines
update the same ``State`` arrays and agree bit for bit on every field, mask and
observation (the differential tests play them side by side).

What is compiled: the meld maths of one hand (the knock test: the deadwood after each
discard, with every set option), the deal and the cut, draws, the upcard offer,
discards, knocks and big gin scored with lay-offs (the knocker's best arrangement
against the defender's best reply, as ``ginenv.scoring``), dead and truncated hands,
the end-of-match bonuses, the next dealer, auto-reset, the legal mask and the
observation planes and scalars. What stays numpy: ``init`` with scripted ``decks``,
``from_view``'s bookkeeping, and ``scoring.score_hand``'s laid-out melds for display.

``step`` does the moves that do not end a hand in one call; the few games whose move
ends a hand go to ``finish`` in a second call (once a hand), so a common step pays
numba's per-call cost once.

Every function is compiled once and cached on disk (``cache=True``): the first import
in a fresh install compiles (a few seconds), later processes load the cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ginenv import actions as A
from ginenv import scoring as _scoring
from ginenv.cards import CARD_VALUES, NUM_CARDS, NUM_RANKS, NUM_SUITS
from ginenv.melds import DISCARD_DELTA, NOT_IN_HAND, SUIT_DEADWOOD

# Phases (core's), repeated as plain ints for the compiled code; core asserts they agree.
OFFER, FORCED_DRAW, DRAW, DISCARD, DONE = 0, 1, 2, 3, 4
DEAD_STOCK = 2
SKIP = -1
_DISCARD, _KNOCK, _DRAW, _TAKE, _PASS, _BIG_GIN, _N = (
    A.DISCARD,
    A.KNOCK,
    A.DRAW_STOCK,
    A.TAKE_DISCARD,
    A.PASS,
    A.BIG_GIN,
    A.NUM_ACTIONS,
)
# Small tables stay in cache (the uint8 deltas are 106 KB, the int64 ones 852 KB).
_DW = SUIT_DEADWOOD.astype(np.int16)
_DELTA = DISCARD_DELTA.astype(np.uint8)
_VALUES = CARD_VALUES.astype(np.int64)
_NOT = int(NOT_IN_HAND)

# Status of a game in the compiled step: moved, untouched (skipped or finished), or left
# for ``finish`` (a knock, big gin, or a discard that ends the hand).
MOVED, UNTOUCHED, FINISH = 0, 1, 2


def left_for_finish(actions, phase, stock_pos, turn, max_turns) -> np.ndarray:
    """The games ``step`` left for ``finish`` (their state is as before the step)."""
    live = (actions != SKIP) & (phase != DONE)
    knock = ((actions >= _KNOCK) & (actions < _DRAW)) | (actions == _BIG_GIN)
    ends = (actions < _KNOCK) & ((stock_pos >= NUM_CARDS - DEAD_STOCK) | (turn >= max_turns))
    return np.flatnonzero(live & (knock | ends))


# ------------------------------------------------------------------ meld maths
@njit(cache=True)
def _options4(m0, m1, m2, m3, opts):
    """Fill ``opts`` (k, 4) with the run masks of every set option of the hand (no set
    first); returns k. A rank held three times: no set or the set; four times: no set,
    all four, or the three that spare one suit (as ``melds.set_options``). No
    allocation: the digits of option o are decoded over the set ranks in rank order."""
    ab = m0 & m1
    cd = m2 & m3
    three = (ab & (m2 | m3)) | (cd & (m0 | m1))
    four = ab & cd
    total = 1
    for r in range(NUM_RANKS):
        if (three >> r) & 1:
            total *= 6 if (four >> r) & 1 else 2
    for o in range(total):
        set_ranks = 0
        spared0 = spared1 = spared2 = spared3 = 0
        x = o
        for r in range(NUM_RANKS):
            if (three >> r) & 1:
                radix = 6 if (four >> r) & 1 else 2
                d = x % radix
                x //= radix
                bit = 1 << r
                if d >= 1:
                    set_ranks |= bit
                if d == 2:
                    spared0 |= bit
                elif d == 3:
                    spared1 |= bit
                elif d == 4:
                    spared2 |= bit
                elif d == 5:
                    spared3 |= bit
        opts[o, 0] = m0 & ~(set_ranks & ~spared0)
        opts[o, 1] = m1 & ~(set_ranks & ~spared1)
        opts[o, 2] = m2 & ~(set_ranks & ~spared2)
        opts[o, 3] = m3 & ~(set_ranks & ~spared3)
    return total


@njit(cache=True)
def _masks_of(hand):
    m0 = m1 = m2 = m3 = 0
    for r in range(NUM_RANKS):  # branch-free: a card adds its bit or nothing
        m0 |= np.int64(hand[r]) << r
        m1 |= np.int64(hand[NUM_RANKS + r]) << r
        m2 |= np.int64(hand[2 * NUM_RANKS + r]) << r
        m3 |= np.int64(hand[3 * NUM_RANKS + r]) << r
    return m0, m1, m2, m3


@njit(cache=True)
def _has_set_rank(m0, m1, m2, m3) -> bool:
    ab = m0 & m1
    cd = m2 & m3
    return ((ab & (m2 | m3)) | (cd & (m0 | m1))) != 0


@njit(cache=True)
def workspace():
    """Room for the set options of any hand of up to 16 cards (6**4: four quads)."""
    return np.empty((1296, NUM_SUITS), np.int64)


@njit(cache=True)
def _fill_options(hand, opts) -> int:
    """The set options of ``hand`` into ``opts``; returns how many (1 without a set rank)."""
    m0, m1, m2, m3 = _masks_of(hand)
    if not _has_set_rank(m0, m1, m2, m3):
        opts[0, 0], opts[0, 1], opts[0, 2], opts[0, 3] = m0, m1, m2, m3
        return 1
    return _options4(m0, m1, m2, m3, opts)


@njit(cache=True)
def _options_of(masks):
    """The set options of a hand's suit masks: ``(opts, k)`` (for the tests)."""
    opts = workspace()
    return opts, _options4(masks[0], masks[1], masks[2], masks[3], opts)


@njit(cache=True)
def deadwood_ws(hand, opts) -> int:
    """The least deadwood of one boolean hand (52,), ``opts`` a ``workspace()``."""
    k = _fill_options(hand, opts)
    best = 1 << 30
    for o in range(k):
        d = np.int64(_DW[opts[o, 0]]) + _DW[opts[o, 1]] + _DW[opts[o, 2]] + _DW[opts[o, 3]]
        if d < best:
            best = d
    return best


@njit(cache=True)
def hand_deadwood(hand) -> int:
    """The least deadwood of one boolean hand (52,)."""
    return deadwood_ws(hand, workspace())


@njit(cache=True)
def after_discard_ws(hand, out, opts):
    """``out`` (52,) uint8: the least deadwood of the hand without each card it holds
    (``NOT_IN_HAND`` for the others), as ``melds.deadwood_after_discard``; ``opts`` a
    ``workspace()``. A rank not in an option's run mask has delta ``NOT_IN_HAND``, so
    ``min(base + delta, NOT_IN_HAND)`` needs no branch on whether the card is held; the
    first option is written, the others (hands with a rank held three times) lower it."""
    k = _fill_options(hand, opts)
    base = np.int64(_DW[opts[0, 0]]) + _DW[opts[0, 1]] + _DW[opts[0, 2]] + _DW[opts[0, 3]]
    for s in range(NUM_SUITS):
        m = opts[0, s]
        for r in range(NUM_RANKS):
            out[s * NUM_RANKS + r] = min((base + np.int64(_DELTA[m, r])) & 255, _NOT)
    for o in range(1, k):
        base = np.int64(_DW[opts[o, 0]]) + _DW[opts[o, 1]] + _DW[opts[o, 2]] + _DW[opts[o, 3]]
        for s in range(NUM_SUITS):
            m = opts[o, s]
            for r in range(NUM_RANKS):
                v = min((base + np.int64(_DELTA[m, r])) & 255, _NOT)
                if v < out[s * NUM_RANKS + r]:
                    out[s * NUM_RANKS + r] = v


@njit(cache=True)
def after_discard(hand, out):
    """``after_discard_ws`` with a workspace of its own."""
    after_discard_ws(hand, out, workspace())


@njit(cache=True)
def hands_deadwood(hands, out):
    """``out[i]``: the least deadwood of the boolean hand ``hands[i]`` (n, 52), as
    ``melds.deadwood``, for a batch in one call."""
    opts = workspace()
    for i in range(len(hands)):
        out[i] = deadwood_ws(hands[i], opts)


@njit(cache=True)
def hands_after_discard(hands, out):
    """``out[i]`` (n, 52) uint8: ``after_discard`` of each hand, as
    ``melds.deadwood_after_discard``, for a batch in one call."""
    opts = workspace()
    for i in range(len(hands)):
        after_discard_ws(hands[i], out[i], opts)


# ------------------------------------------------------------------------ dealing
_U = np.uint64
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_GAME_MIX = np.uint64(0xD1B54A32D192ED03)
_SM1 = np.uint64(0xBF58476D1CE4E5B9)
_SM2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True)
def _splitmix64(x):
    z = x + _GOLDEN
    z = (z ^ (z >> _U(30))) * _SM1
    z = (z ^ (z >> _U(27))) * _SM2
    return z ^ (z >> _U(31))


@njit(cache=True)
def _stream(seed, game_no, hand_no):
    """``core._stream`` for one game: the key of one deal (hand_no >= 0) or cut (-1)."""
    g = _splitmix64(seed + _U(game_no) * _GAME_MIX)
    return _splitmix64(g + _U(hand_no + 1))


@njit(cache=True)
def first_dealer(seed, key, game_no) -> int:
    """``core.first_dealers`` for one game."""
    bits = _stream(seed, game_no, -1)
    if key != _U(0):
        bits ^= _stream(key, game_no, -1)
    return int(bits >> _U(63))


@njit(cache=True)
def shuffled_deck(seed, key, game_no, hand_no, out):
    """``core.shuffled_decks`` for one deal, into ``out`` (52,) int8."""
    k = _stream(seed, game_no, hand_no)
    card_keys = np.empty(NUM_CARDS, np.uint64)
    for i in range(NUM_CARDS):
        card_keys[i] = _splitmix64(k ^ (_U(i) * _GOLDEN))
    if key != _U(0):
        second = _stream(key, game_no, hand_no)
        for i in range(NUM_CARDS):
            card_keys[i] = _splitmix64(card_keys[i] ^ second)
    order = np.argsort(card_keys, kind="mergesort")
    for i in range(NUM_CARDS):
        out[i] = order[i]


@njit(cache=True)
def deal(
    rows,
    game_seed,
    game_key,
    game_no,
    hand_no,
    deck,
    hands,
    pile,
    pile_size,
    pile_mask,
    deadwood,
    stock_pos,
    took,
    discarded,
    passed,
    taken,
    phase,
    current,
    turn,
    knock_limit,
    big_gin_ok,
    after,
    dealer,
    rule_knock_limit,
    oklahoma,
):
    """``core._deal`` from the games' seeds, for the games ``rows`` (dealer set)."""
    opts = workspace()
    for g in rows:
        shuffled_deck(game_seed[g], game_key[g], game_no[g], hand_no[g], deck[g])
        nondealer = 1 - dealer[g]
        for c in range(NUM_CARDS):
            hands[g, 0, c] = False
            hands[g, 1, c] = False
            pile[g, c] = -1
            pile_mask[g, c] = False
            after[g, c] = _NOT
            for p in range(2):
                took[g, p, c] = False
                discarded[g, p, c] = False
                passed[g, p, c] = False
        for i in range(10):  # alternate dealing: the non-dealer first
            hands[g, nondealer, deck[g, 2 * i]] = True
            hands[g, 1 - nondealer, deck[g, 2 * i + 1]] = True
        upcard = deck[g, 20]
        pile[g, 0] = upcard
        pile_size[g] = 1
        pile_mask[g, upcard] = True
        deadwood[g, 0] = deadwood_ws(hands[g, 0], opts)
        deadwood[g, 1] = deadwood_ws(hands[g, 1], opts)
        stock_pos[g] = 21
        taken[g] = -1
        phase[g] = OFFER
        current[g] = nondealer
        turn[g] = 0
        if oklahoma:  # the upcard's value; an ace means gin only
            value = _VALUES[upcard]
            knock_limit[g] = 0 if value == 1 else min(value, rule_knock_limit)
        else:
            knock_limit[g] = rule_knock_limit
        big_gin_ok[g] = False
        hand_no[g] += 1


# ------------------------------------------------------------------------ scoring
_RC_START = _scoring._RC_START.astype(np.int64)
_RC_SUB = _scoring._RC_SUB.astype(np.int64)
_RC_LEFT = _scoring._RC_LEFT.astype(np.int64)
KNOCK_KIND, GIN_KIND, BIG_GIN_KIND, UNDERCUT_KIND, TIE_KIND = (
    _scoring.KNOCK,
    _scoring.GIN,
    _scoring.BIG_GIN,
    _scoring.UNDERCUT,
    _scoring.TIE,
)


@njit(cache=True)
def _points(K, D, tie_undercuts, undercut_bonus):
    """``scoring._points`` for one knock: (knocker points, defender points, kind)."""
    tie = D == K
    undercut = D < K or (tie and tie_undercuts)
    kind = UNDERCUT_KIND if undercut else (TIE_KIND if tie else KNOCK_KIND)
    kp = D - K if D > K else 0
    dp = K - D + undercut_bonus if undercut else 0
    return kp, dp, kind


@njit(cache=True)
def _best_reply(r0, r1, r2, r3, f0, f1, f2, f3, dopts, nd) -> int:
    """The defender's least deadwood against the knocker's run masks ``r`` when it may
    lay off the free fourth cards ``f`` of the knocker's sets (each kept or laid off)."""
    free_ranks = f0 | f1 | f2 | f3
    n_free = 0
    x = free_ranks
    while x:
        n_free += 1
        x &= x - 1
    best = 1 << 30
    for choice in range(1 << n_free):
        chosen = 0
        x = free_ranks
        i = 0
        while x:
            low = x & -x
            if (choice >> i) & 1:
                chosen |= low
            x ^= low
            i += 1
        for d in range(nd):
            dead = (
                np.int64(_DW[(dopts[d, 0] & ~(f0 & chosen)) | r0])
                + _DW[(dopts[d, 1] & ~(f1 & chosen)) | r1]
                + _DW[(dopts[d, 2] & ~(f2 & chosen)) | r2]
                + _DW[(dopts[d, 3] & ~(f3 & chosen)) | r3]
            )
            if dead < best:
                best = dead
    return best


@njit(cache=True)
def score_one(khand, dhand, limit, big, rule):
    """``scoring.score_hands`` for one ended hand (knocker ``khand``, 10 cards after the
    knock or 11 for big gin; defender ``dhand``): (kind, K, D, knocker points, defender
    points). ``rule``: gin bonus, big gin bonus, undercut bonus, ties undercut (0/1).
    The knocker's arrangement is the best for it against the defender's best reply (the
    largest net score, then the least deadwood, then the first in ``scoring``'s order)."""
    kopts = workspace()
    dopts = workspace()
    nk = _fill_options(khand, kopts)
    nd = _fill_options(dhand, dopts)
    k_dead = 1 << 30
    for o in range(nk):
        v = np.int64(_DW[kopts[o, 0]]) + _DW[kopts[o, 1]] + _DW[kopts[o, 2]] + _DW[kopts[o, 3]]
        k_dead = min(k_dead, v)
    d_own = 1 << 30
    for o in range(nd):
        v = np.int64(_DW[dopts[o, 0]]) + _DW[dopts[o, 1]] + _DW[dopts[o, 2]] + _DW[dopts[o, 3]]
        d_own = min(d_own, v)
    if big:
        return BIG_GIN_KIND, 0, d_own, d_own + rule[1], 0
    if k_dead == 0:
        return GIN_KIND, 0, d_own, d_own + rule[0], 0
    km0, km1, km2, km3 = _masks_of(khand)
    dm0, dm1, dm2, dm3 = _masks_of(dhand)
    best_net, best_K, best_D = -(1 << 40), 0, 0
    for o in range(nk):
        o0, o1, o2, o3 = kopts[o, 0], kopts[o, 1], kopts[o, 2], kopts[o, 3]
        c0 = _RC_START[o0 + 1] - _RC_START[o0]
        c1 = _RC_START[o1 + 1] - _RC_START[o1]
        c2 = _RC_START[o2 + 1] - _RC_START[o2]
        c3 = _RC_START[o3 + 1] - _RC_START[o3]
        # The knocker's set cards, and the fourth card of each set of three.
        s0, s1, s2, s3 = km0 & ~o0, km1 & ~o1, km2 & ~o2, km3 & ~o3
        ab, cd = s0 & s1, s2 & s3
        three = (ab & (s2 | s3)) | (cd & (s0 | s1))
        lone = three & ~(ab & cd)
        f0, f1, f2, f3 = lone & ~s0 & dm0, lone & ~s1 & dm1, lone & ~s2 & dm2, lone & ~s3 & dm3
        for local in range(c0 * c1 * c2 * c3):
            x = local
            i0 = _RC_START[o0] + x % c0
            x //= c0
            i1 = _RC_START[o1] + x % c1
            x //= c1
            i2 = _RC_START[o2] + x % c2
            x //= c2
            i3 = _RC_START[o3] + x % c3
            K = _RC_LEFT[i0] + _RC_LEFT[i1] + _RC_LEFT[i2] + _RC_LEFT[i3]
            if K > limit:
                continue
            D = _best_reply(_RC_SUB[i0], _RC_SUB[i1], _RC_SUB[i2], _RC_SUB[i3], f0, f1, f2, f3, dopts, nd)
            kp, dp, kind = _points(K, D, rule[3] == 1, rule[2])
            net = kp - dp
            if net > best_net or (net == best_net and K < best_K):
                best_net, best_K, best_D = net, K, D
    kp, dp, kind = _points(best_K, best_D, rule[3] == 1, rule[2])
    return kind, best_K, best_D, kp, dp


# ------------------------------------------------------------ the end of a hand
DEAD_KIND, TRUNCATED_KIND = len(_scoring.KIND_NAMES), len(_scoring.KIND_NAMES) + 1
SHUTOUTS = ("none", "double_hand_points", "loser_scoreless", "loser_won_no_hand")
NEXT_DEALERS = ("alternate", "loser", "winner")


@njit(cache=True)
def _match_final(run0, run1, won0, won1, played, dead, shutout, shutout_bonus, game_bonus, line_bonus):
    """``scoring.match_final`` for one two-player match: (final 0, final 1, winner)."""
    leader = 0 if run0 >= run1 else 1
    lead_run = run0 if leader == 0 else run1
    lead_won = won0 if leader == 0 else won1
    other_run = run1 if leader == 0 else run0
    other_won = won1 if leader == 0 else won0
    extra = 0
    if shutout == 1:
        if lead_won == played and dead == 0:
            extra = lead_run
    elif shutout == 2:
        if other_run == 0:
            extra = shutout_bonus
    elif shutout == 3:
        if other_won == 0:
            extra = shutout_bonus
    f0 = run0 + won0 * line_bonus
    f1 = run1 + won1 * line_bonus
    if leader == 0:
        f0 += extra + game_bonus
    else:
        f1 += extra + game_bonus
    winner = -1 if f0 == f1 else (0 if f0 > f1 else 1)
    return f0, f1, winner


@njit(cache=True)
def finish(
    rows,
    actions,
    hands,
    deck,
    stock_pos,
    pile,
    pile_size,
    pile_mask,
    took,
    discarded,
    passed,
    taken,
    knock_card,
    phase,
    current,
    dealer,
    turn,
    knock_limit,
    after,
    big_gin_ok,
    deadwood,
    scores,
    hands_won,
    hands_played,
    dead_hands,
    hand_no,
    game_no,
    game_seed,
    game_key,
    hand_ended,
    game_ended,
    game_truncated,
    hand_kind,
    hand_points,
    last_hands,
    last_knocker,
    hand_turns,
    hand_knock_limit,
    final_scores,
    bonus_points,
    winner,
    rule,
):
    """The moves ``step`` left (knocks, big gin, discards that end a hand): the hand is
    scored and booked, then the match ends or the next hand is dealt (and with
    auto-reset a finished game is dealt anew). ``rule``: see ``core._finish_rule``."""
    match_mode, target, max_hands = rule[4], rule[5], rule[6]
    shutout, shutout_bonus, game_bonus, line_bonus = rule[8], rule[9], rule[10], rule[11]
    next_dealer, auto_reset, rule_knock_limit, oklahoma = rule[12], rule[13], rule[14], rule[15]
    score_rule = rule[:4]
    one = np.empty(1, np.int64)
    for g in rows:
        a = actions[g]
        p = current[g]
        pts0 = 0
        pts1 = 0
        w = -1
        if a < _DRAW:  # a discard that ends the hand, or a knock: the card goes on the pile
            card = a - _DISCARD if a < _KNOCK else a - _KNOCK
            hands[g, p, card] = False
            deadwood[g, p] = after[g, card]
            for c in range(NUM_CARDS):
                after[g, c] = _NOT
            pile[g, pile_size[g]] = card
            pile_mask[g, card] = True
            pile_size[g] += 1
            taken[g] = -1
            big_gin_ok[g] = False
        if a < _KNOCK:  # dead (the stock is down to two) or truncated (the turn cap)
            discarded[g, p, a - _DISCARD] = True
            knock_card[g] = -1
            kind = DEAD_KIND if stock_pos[g] >= NUM_CARDS - DEAD_STOCK else TRUNCATED_KIND
            last_knocker[g] = -1
        else:
            big = a == _BIG_GIN
            knock_card[g] = -1 if big else a - _KNOCK
            kind, _, _, kp, dp = score_one(hands[g, p], hands[g, 1 - p], knock_limit[g], big, score_rule)
            if p == 0:
                pts0, pts1 = kp, dp
            else:
                pts0, pts1 = dp, kp
            w = p if kp > 0 else (1 - p if dp > 0 else -1)
            last_knocker[g] = p
        # Book the hand.
        hand_ended[g] = True
        hand_kind[g] = kind
        hand_points[g, 0] = pts0
        hand_points[g, 1] = pts1
        for c in range(NUM_CARDS):
            last_hands[g, 0, c] = hands[g, 0, c]
            last_hands[g, 1, c] = hands[g, 1, c]
        hand_turns[g] = turn[g]
        hand_knock_limit[g] = knock_limit[g]
        scores[g, 0] += pts0
        scores[g, 1] += pts1
        if w >= 0:
            hands_won[g, w] += 1
        hands_played[g] += 1
        if kind == DEAD_KIND or kind == TRUNCATED_KIND:
            dead_hands[g] += 1
        if match_mode:
            reached = max(scores[g, 0], scores[g, 1]) >= target
            cut = not reached and hands_played[g] >= max_hands
            over = reached or cut
        else:
            over = True
            cut = kind == TRUNCATED_KIND
        if over:
            game_ended[g] = True
            game_truncated[g] = cut
            phase[g] = DONE
            if match_mode:
                if cut:
                    f0, f1, win = scores[g, 0], scores[g, 1], -1
                else:
                    f0, f1, win = _match_final(
                        scores[g, 0],
                        scores[g, 1],
                        hands_won[g, 0],
                        hands_won[g, 1],
                        hands_played[g],
                        dead_hands[g],
                        shutout,
                        shutout_bonus,
                        game_bonus,
                        line_bonus,
                    )
                final_scores[g, 0], final_scores[g, 1] = f0, f1
                bonus_points[g, 0] = f0 - scores[g, 0]
                bonus_points[g, 1] = f1 - scores[g, 1]
                winner[g] = win
            else:
                final_scores[g, 0], final_scores[g, 1] = pts0, pts1
                winner[g] = w
            if not auto_reset:
                continue
            game_no[g] += 1  # a new game in this slot
            scores[g, 0] = scores[g, 1] = 0
            hands_won[g, 0] = hands_won[g, 1] = 0
            hands_played[g] = 0
            dead_hands[g] = 0
            hand_no[g] = 0
            dealer[g] = first_dealer(game_seed[g], game_key[g], game_no[g])
        elif w >= 0:  # the next hand's dealer (the same after a dead, truncated or drawn hand)
            d = dealer[g]
            if next_dealer == 0:
                dealer[g] = 1 - d
            elif next_dealer == 1:
                dealer[g] = 1 - w
            else:
                dealer[g] = w
        one[0] = g
        deal(
            one,
            game_seed,
            game_key,
            game_no,
            hand_no,
            deck,
            hands,
            pile,
            pile_size,
            pile_mask,
            deadwood,
            stock_pos,
            took,
            discarded,
            passed,
            taken,
            phase,
            current,
            turn,
            knock_limit,
            big_gin_ok,
            after,
            dealer,
            rule_knock_limit,
            oklahoma,
        )


# ------------------------------------------------------------------ the legal mask
@njit(cache=True)
def _legal_one(g, phase, current, hands, taken, after, knock_limit, big_gin_ok, legal):
    """Game g's legal actions into ``legal[g]``, which holds all False."""
    ph = phase[g]
    if ph == OFFER:
        legal[g, _TAKE] = True
        legal[g, _PASS] = True
    elif ph == FORCED_DRAW:
        legal[g, _DRAW] = True
    elif ph == DRAW:
        legal[g, _DRAW] = True
        legal[g, _TAKE] = True
    elif ph == DISCARD:
        p = current[g]
        t = taken[g]
        for c in range(NUM_CARDS):
            if hands[g, p, c] and c != t:
                legal[g, _DISCARD + c] = True
                if after[g, c] <= knock_limit[g]:
                    legal[g, _KNOCK + c] = True
        legal[g, _BIG_GIN] = big_gin_ok[g]


@njit(cache=True)
def legal_mask(phase, current, hands, taken, after, knock_limit, big_gin_ok, legal):
    """Every game's legal actions into ``legal`` (B, 108), which holds all False."""
    for g in range(len(phase)):
        _legal_one(g, phase, current, hands, taken, after, knock_limit, big_gin_ok, legal)


@njit(cache=True)
def legal_rows(rows, phase, current, hands, taken, after, knock_limit, big_gin_ok, legal):
    """The legal actions of the games ``rows`` into ``legal``: those rows cleared first."""
    for g in rows:
        for a in range(_N):
            legal[g, a] = False
        _legal_one(g, phase, current, hands, taken, after, knock_limit, big_gin_ok, legal)


# ------------------------------------------------------------------------ the step
@njit(cache=True)
def check(actions, phase, legal):
    """-1 if every game's action is legal (or SKIP, or the game is finished), else the
    first game whose action is not (nothing is changed)."""
    for g in range(len(actions)):
        a = actions[g]
        if a == SKIP or phase[g] == DONE:
            if a < SKIP or a >= _N:
                return g
            continue
        if a < 0 or a >= _N or not legal[g, a]:
            return g
    return -1


@njit(cache=True)
def _prepare_discard(g, p, hands, after, big_gin_ok, big_gin_rule, opts):
    """After a draw: the mover's knock test and, where allowed, big gin."""
    after_discard_ws(hands[g, p], after[g], opts)
    big_gin_ok[g] = False
    if big_gin_rule:
        least = _NOT
        for c in range(NUM_CARDS):
            if after[g, c] < least:
                least = after[g, c]
        if least == 0:
            big_gin_ok[g] = deadwood_ws(hands[g, p], opts) == 0


@njit(cache=True)
def prepare_rows(rows, players, hands, after, big_gin_ok, big_gin_rule):
    """``_prepare_discard`` for the games ``rows`` (the mover ``players[g]``)."""
    opts = workspace()
    for g in rows:
        _prepare_discard(g, players[g], hands, after, big_gin_ok, big_gin_rule, opts)


@njit(cache=True)
def step(
    actions,
    legal,
    hands,
    deck,
    stock_pos,
    pile,
    pile_size,
    pile_mask,
    took,
    discarded,
    passed,
    taken,
    knock_card,
    phase,
    current,
    dealer,
    turn,
    knock_limit,
    after,
    big_gin_ok,
    deadwood,
    hand_ended,
    game_ended,
    game_truncated,
    hand_points,
    bonus_points,
    legal_before,
    max_turns,
    big_gin_rule,
):
    """One action per game, in place, for the moves that do not end a hand, and the new
    legal mask of every game not left for ``finish`` into ``legal`` (all False on entry). The
    games left for ``finish`` (a knock, big gin, or a discard that ends the hand) are
    untouched, so ``left_for_finish`` finds them afterwards. Returns how many
    there are, or ``-1 - g`` for the first game g whose action is not legal (then nothing
    is changed)."""
    bad = check(actions, phase, legal_before)
    if bad >= 0:
        return -1 - bad
    opts = workspace()
    status = np.empty(len(actions), np.int8)
    left = 0
    for g in range(len(actions)):
        hand_ended[g] = False
        game_ended[g] = False
        game_truncated[g] = False
        hand_points[g, 0] = 0
        hand_points[g, 1] = 0
        bonus_points[g, 0] = 0
        bonus_points[g, 1] = 0
        a = actions[g]
        if a == SKIP or phase[g] == DONE:
            status[g] = UNTOUCHED
            continue
        p = current[g]
        if a == _DRAW or a == _TAKE:
            if a == _DRAW:
                card = deck[g, stock_pos[g]]
                stock_pos[g] += 1
                taken[g] = -1
            else:
                top = pile_size[g] - 1
                card = pile[g, top]
                pile[g, top] = -1
                pile_size[g] -= 1
                pile_mask[g, card] = False
                took[g, p, card] = True
                taken[g] = card
            hands[g, p, card] = True
            turn[g] += 1
            phase[g] = DISCARD
            _prepare_discard(g, p, hands, after, big_gin_ok, big_gin_rule, opts)
            status[g] = MOVED
        elif a == _PASS:
            upcard = pile[g, 0]
            passed[g, p, upcard] = True
            if p != dealer[g]:  # the non-dealer passed: the dealer is offered the upcard
                current[g] = dealer[g]
                phase[g] = OFFER
            else:
                current[g] = 1 - dealer[g]
                phase[g] = FORCED_DRAW
            status[g] = MOVED
        elif a < _KNOCK:
            dead = stock_pos[g] >= NUM_CARDS - DEAD_STOCK
            if dead or turn[g] >= max_turns:  # the hand ends: booked by finish
                status[g] = FINISH
                left += 1
                continue
            card = a - _DISCARD
            hands[g, p, card] = False
            deadwood[g, p] = after[g, card]
            for c in range(NUM_CARDS):
                after[g, c] = _NOT
            pile[g, pile_size[g]] = card
            pile_mask[g, card] = True
            pile_size[g] += 1
            taken[g] = -1
            big_gin_ok[g] = False
            discarded[g, p, card] = True
            knock_card[g] = -1
            current[g] = 1 - p
            phase[g] = DRAW
            status[g] = MOVED
        else:  # a knock or big gin: scored by finish
            status[g] = FINISH
            left += 1
    for g in range(len(actions)):
        if status[g] != FINISH:
            _legal_one(g, phase, current, hands, taken, after, knock_limit, big_gin_ok, legal)
    return left


# ------------------------------------------------------------------ observations
@njit(cache=True)
def observe(
    out,
    me_of,
    perfect,
    hands,
    pile,
    pile_size,
    pile_mask,
    took,
    discarded,
    passed,
    taken,
    phase,
    current,
    dealer,
    turn,
    knock_limit,
    after,
    big_gin_ok,
    deadwood,
    scores,
    stock_pos,
    target,
    gin_bonus,
    undercut_bonus,
    big_gin_rule,
    max_turns,
    scales,
):
    """``observation.observe`` for every game: ``out`` (B, size) float32 filled.
    ``scales``: stock, deadwood, target, knock limit, gin bonus, undercut bonus, take best."""
    n_planes = 9 + perfect
    look = np.empty(NUM_CARDS, np.uint8)
    with_top = np.empty(NUM_CARDS, np.bool_)
    opts = workspace()
    f100 = np.float32(1 / 100)  # as observation's np.float32(1 / DEADWOOD_SCALE)
    for g in range(out.shape[0]):
        me = me_of[g]
        opp = 1 - me
        row = out[g]
        for i in range(n_planes * NUM_CARDS):
            row[i] = 0.0
        size = pile_size[g]
        top = pile[g, size - 1] if size > 0 else -1
        for c in range(NUM_CARDS):
            own = hands[g, me, c]
            opp_known = took[g, opp, c] and hands[g, opp, c]
            if own:
                row[c] = 1.0
            if pile_mask[g, c] and c != top:
                row[2 * NUM_CARDS + c] = 1.0
            if opp_known:
                row[3 * NUM_CARDS + c] = 1.0
            if discarded[g, opp, c] or passed[g, opp, c]:
                row[4 * NUM_CARDS + c] = 1.0
            if not (own or pile_mask[g, c] or opp_known):
                row[5 * NUM_CARDS + c] = 1.0
            if discarded[g, me, c]:
                row[8 * NUM_CARDS + c] = 1.0
            if perfect and hands[g, opp, c]:
                row[9 * NUM_CARDS + c] = 1.0
        if top >= 0:
            row[NUM_CARDS + top] = 1.0
        on_move = current[g] == me
        mine_to_move = on_move and phase[g] == DISCARD
        if mine_to_move and taken[g] >= 0:
            row[6 * NUM_CARDS + taken[g]] = 1.0
        own_dead = np.float32(deadwood[g, me])
        take_best = np.float32(0.0)
        if mine_to_move:
            least = _NOT
            for c in range(NUM_CARDS):
                v = after[g, c]
                if v < _NOT:
                    row[7 * NUM_CARDS + c] = np.float32(v) * f100
                if v < least:
                    least = v
            own_dead = np.float32(least)
        elif on_move and (phase[g] == DRAW or phase[g] == OFFER) and size > 0:
            for c in range(NUM_CARDS):
                with_top[c] = hands[g, me, c]
            with_top[top] = True
            after_discard_ws(with_top, look, opts)
            look[top] = _NOT  # a card taken stays this turn
            least = _NOT
            for c in range(NUM_CARDS):
                v = look[c]
                if v < _NOT:
                    row[7 * NUM_CARDS + c] = np.float32(v) * f100
                if v < least:
                    least = v
            take_best = np.float32(least / scales[6])
        x = n_planes * NUM_CARDS
        for k in range(5):
            row[x + k] = 0.0
        row[x + phase[g]] = 1.0
        row[x + 5] = (NUM_CARDS - stock_pos[g]) / scales[0]
        row[x + 6] = 1.0 if dealer[g] == me else 0.0
        row[x + 7] = own_dead / np.float32(scales[1])
        row[x + 8] = scores[g, me] / target
        row[x + 9] = scores[g, opp] / target
        row[x + 10] = target / scales[2]
        row[x + 11] = knock_limit[g] / scales[3]
        row[x + 12] = gin_bonus / scales[4]
        row[x + 13] = undercut_bonus / scales[5]
        row[x + 14] = 1.0 if big_gin_rule else 0.0
        row[x + 15] = 1.0 if (big_gin_ok[g] and mine_to_move) else 0.0
        row[x + 16] = turn[g] / max_turns
        row[x + 17] = 1.0 if (on_move and phase[g] != DONE) else 0.0
        row[x + 18] = take_best
