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

The state is one record array (``core.GAME_DTYPE``: a record per game holding every
field of ``core.State`` but the legal mask, each a named field), so a step is one call
of five arguments: the actions, the records, the legal mask before and after, and the
rule vector. Numba checks and unboxes every argument of a call from Python, about 0.2
µs each, which the state passed as its 40 arrays one by one paid on every step.
Booleans are stored as uint8 in the records (numba's records hold no nested booleans);
``State`` shows them as bool views.

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

# The rule vector (``rule_vector``): the rules and settings the compiled step reads, as
# int64, by these indices (the first four are ``score_one``'s ``rule``).
(
    R_GIN_BONUS,
    R_BIG_GIN_BONUS,
    R_UNDERCUT_BONUS,
    R_TIE_UNDERCUTS,
    R_MATCH,
    R_TARGET,
    R_MAX_HANDS,
    R_MAX_TURNS,
    R_SHUTOUT,
    R_SHUTOUT_BONUS,
    R_GAME_BONUS,
    R_LINE_BONUS,
    R_NEXT_DEALER,
    R_AUTO_RESET,
    R_KNOCK_LIMIT,
    R_OKLAHOMA,
    R_BIG_GIN,
) = range(17)


def rule_vector(rules, match: bool, auto_reset: bool) -> np.ndarray:
    """The rule vector of ``rules`` (a ``Rules``) in match or hand mode."""
    r = rules
    return np.array(
        [
            r.gin_bonus,
            r.big_gin_bonus,
            r.undercut_bonus,
            r.knock_tie == "undercut",
            match,
            r.target,
            r.max_hands,
            r.max_turns,
            SHUTOUTS.index(r.shutout),
            r.shutout_bonus,
            r.game_bonus,
            r.line_bonus,
            NEXT_DEALERS.index(r.next_dealer),
            auto_reset,
            r.knock_limit,
            r.oklahoma,
            r.big_gin,
        ],
        np.int64,
    )


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
def _deal_one(g, games, rule, opts):
    """``core._deal`` from game g's seeds (its dealer set). ``rule``: ``core``'s rule
    vector (the knock limit and Oklahoma's upcard rule)."""
    deck, hands, pile, pile_mask, after = games.deck, games.hands, games.pile, games.pile_mask, games.after_discard
    took, discarded, passed = games.took, games.discarded, games.passed
    shuffled_deck(games.game_seed[g], games.game_key[g], games.game_no[g], games.hand_no[g], deck[g])
    nondealer = 1 - games.dealer[g]
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
    games.pile_size[g] = 1
    pile_mask[g, upcard] = True
    games.deadwood[g, 0] = deadwood_ws(hands[g, 0], opts)
    games.deadwood[g, 1] = deadwood_ws(hands[g, 1], opts)
    games.stock_pos[g] = 21
    games.taken[g] = -1
    games.phase[g] = OFFER
    games.current[g] = nondealer
    games.turn[g] = 0
    rule_knock_limit = rule[R_KNOCK_LIMIT]
    if rule[R_OKLAHOMA]:  # the upcard's value; an ace means gin only
        value = _VALUES[upcard]
        games.knock_limit[g] = 0 if value == 1 else min(value, rule_knock_limit)
    else:
        games.knock_limit[g] = rule_knock_limit
    games.big_gin_ok[g] = False
    games.hand_no[g] += 1


@njit(cache=True)
def deal(rows, games, rule):
    """``core._deal`` from the games' seeds, for the games ``rows`` (dealer set)."""
    opts = workspace()
    for g in rows:
        _deal_one(g, games, rule, opts)


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
def _finish_one(g, a, games, rule, opts):
    """A move ``step`` left for the end of a hand (a knock, big gin, or a discard that
    ends the hand) in game g: the hand is scored and booked, then the match ends or the
    next hand is dealt (and with auto-reset a finished game is dealt anew)."""
    hands, after, pile, pile_mask = games.hands, games.after_discard, games.pile, games.pile_mask
    scores, hands_won = games.scores, games.hands_won
    p = games.current[g]
    pts0 = 0
    pts1 = 0
    w = -1
    if a < _DRAW:  # a discard that ends the hand, or a knock: the card goes on the pile
        card = a - _DISCARD if a < _KNOCK else a - _KNOCK
        hands[g, p, card] = False
        games.deadwood[g, p] = after[g, card]
        for c in range(NUM_CARDS):
            after[g, c] = _NOT
        pile[g, games.pile_size[g]] = card
        pile_mask[g, card] = True
        games.pile_size[g] += 1
        games.taken[g] = -1
        games.big_gin_ok[g] = False
    if a < _KNOCK:  # dead (the stock is down to two) or truncated (the turn cap)
        games.discarded[g, p, a - _DISCARD] = True
        games.knock_card[g] = -1
        kind = DEAD_KIND if games.stock_pos[g] >= NUM_CARDS - DEAD_STOCK else TRUNCATED_KIND
        games.last_knocker[g] = -1
    else:
        big = a == _BIG_GIN
        games.knock_card[g] = -1 if big else a - _KNOCK
        kind, _, _, kp, dp = score_one(hands[g, p], hands[g, 1 - p], games.knock_limit[g], big, rule[:4])
        if p == 0:
            pts0, pts1 = kp, dp
        else:
            pts0, pts1 = dp, kp
        w = p if kp > 0 else (1 - p if dp > 0 else -1)
        games.last_knocker[g] = p
    # Book the hand.
    games.hand_ended[g] = True
    games.hand_kind[g] = kind
    games.hand_points[g, 0] = pts0
    games.hand_points[g, 1] = pts1
    last_hands = games.last_hands
    for c in range(NUM_CARDS):
        last_hands[g, 0, c] = hands[g, 0, c]
        last_hands[g, 1, c] = hands[g, 1, c]
    games.hand_turns[g] = games.turn[g]
    games.hand_knock_limit[g] = games.knock_limit[g]
    scores[g, 0] += pts0
    scores[g, 1] += pts1
    if w >= 0:
        hands_won[g, w] += 1
    games.hands_played[g] += 1
    if kind == DEAD_KIND or kind == TRUNCATED_KIND:
        games.dead_hands[g] += 1
    if rule[R_MATCH]:
        reached = max(scores[g, 0], scores[g, 1]) >= rule[R_TARGET]
        cut = not reached and games.hands_played[g] >= rule[R_MAX_HANDS]
        over = reached or cut
    else:
        over = True
        cut = kind == TRUNCATED_KIND
    if over:
        games.game_ended[g] = True
        games.game_truncated[g] = cut
        games.phase[g] = DONE
        if rule[R_MATCH]:
            if cut:
                f0, f1, win = scores[g, 0], scores[g, 1], -1
            else:
                f0, f1, win = _match_final(
                    scores[g, 0],
                    scores[g, 1],
                    hands_won[g, 0],
                    hands_won[g, 1],
                    games.hands_played[g],
                    games.dead_hands[g],
                    rule[R_SHUTOUT],
                    rule[R_SHUTOUT_BONUS],
                    rule[R_GAME_BONUS],
                    rule[R_LINE_BONUS],
                )
            games.final_scores[g, 0], games.final_scores[g, 1] = f0, f1
            games.bonus_points[g, 0] = f0 - scores[g, 0]
            games.bonus_points[g, 1] = f1 - scores[g, 1]
            games.winner[g] = win
        else:
            games.final_scores[g, 0], games.final_scores[g, 1] = pts0, pts1
            games.winner[g] = w
        if not rule[R_AUTO_RESET]:
            return
        games.game_no[g] += 1  # a new game in this slot
        scores[g, 0] = scores[g, 1] = 0
        hands_won[g, 0] = hands_won[g, 1] = 0
        games.hands_played[g] = 0
        games.dead_hands[g] = 0
        games.hand_no[g] = 0
        games.dealer[g] = first_dealer(games.game_seed[g], games.game_key[g], games.game_no[g])
    elif w >= 0:  # the next hand's dealer (the same after a dead, truncated or drawn hand)
        d = games.dealer[g]
        if rule[R_NEXT_DEALER] == 0:
            games.dealer[g] = 1 - d
        elif rule[R_NEXT_DEALER] == 1:
            games.dealer[g] = 1 - w
        else:
            games.dealer[g] = w
    _deal_one(g, games, rule, opts)


# ------------------------------------------------------------------ the legal mask
@njit(cache=True)
def _legal_one(g, games, legal):
    """Game g's legal actions into ``legal[g]``, which holds all False."""
    ph = games.phase[g]
    if ph == OFFER:
        legal[g, _TAKE] = True
        legal[g, _PASS] = True
    elif ph == FORCED_DRAW:
        legal[g, _DRAW] = True
    elif ph == DRAW:
        legal[g, _DRAW] = True
        legal[g, _TAKE] = True
    elif ph == DISCARD:
        hands, after = games.hands, games.after_discard
        p = games.current[g]
        t = games.taken[g]
        limit = games.knock_limit[g]
        for c in range(NUM_CARDS):
            if hands[g, p, c] and c != t:
                legal[g, _DISCARD + c] = True
                if after[g, c] <= limit:
                    legal[g, _KNOCK + c] = True
        legal[g, _BIG_GIN] = games.big_gin_ok[g]


@njit(cache=True)
def legal_mask(games, legal):
    """Every game's legal actions into ``legal`` (B, 108), which holds all False."""
    for g in range(len(games)):
        _legal_one(g, games, legal)


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
def _prepare_discard(g, p, games, big_gin_rule, opts):
    """After a draw: the mover's knock test and, where allowed, big gin."""
    hands, after = games.hands, games.after_discard
    after_discard_ws(hands[g, p], after[g], opts)
    games.big_gin_ok[g] = False
    if big_gin_rule:
        least = _NOT
        for c in range(NUM_CARDS):
            if after[g, c] < least:
                least = after[g, c]
        if least == 0:
            games.big_gin_ok[g] = deadwood_ws(hands[g, p], opts) == 0


@njit(cache=True)
def prepare_rows(rows, players, games, big_gin_rule):
    """``_prepare_discard`` for the games ``rows`` (the mover ``players[g]``)."""
    opts = workspace()
    for g in rows:
        _prepare_discard(g, players[g], games, big_gin_rule, opts)


@njit(cache=True)
def step(actions, games, legal_before, legal, rule):
    """One action per game, in place: draws, the upcard offer, discards, and the moves
    that end a hand (a knock, big gin, or a discard that leaves the stock dead or reaches
    the turn cap: scored, booked, the next hand dealt, or the match ended and with
    auto-reset dealt anew). The new legal mask of every game goes into ``legal`` (all
    False on entry). Returns 0, or ``-1 - g`` for the first game g whose action is not
    legal under ``legal_before`` (then nothing is changed). ``rule``: ``rule_vector``."""
    phase = games.phase
    bad = check(actions, phase, legal_before)
    if bad >= 0:
        return -1 - bad
    opts = workspace()
    hands, deck, pile, pile_mask, after = games.hands, games.deck, games.pile, games.pile_mask, games.after_discard
    stock_pos, pile_size, taken = games.stock_pos, games.pile_size, games.taken
    current, turn = games.current, games.turn
    hand_points, bonus_points = games.hand_points, games.bonus_points
    max_turns, big_gin_rule = rule[R_MAX_TURNS], rule[R_BIG_GIN]
    for g in range(len(actions)):
        games.hand_ended[g] = False
        games.game_ended[g] = False
        games.game_truncated[g] = False
        hand_points[g, 0] = 0
        hand_points[g, 1] = 0
        bonus_points[g, 0] = 0
        bonus_points[g, 1] = 0
        a = actions[g]
        if a == SKIP or phase[g] == DONE:
            _legal_one(g, games, legal)
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
                games.took[g, p, card] = True
                taken[g] = card
            hands[g, p, card] = True
            turn[g] += 1
            phase[g] = DISCARD
            _prepare_discard(g, p, games, big_gin_rule, opts)
        elif a == _PASS:
            upcard = pile[g, 0]
            games.passed[g, p, upcard] = True
            dealer = games.dealer[g]
            if p != dealer:  # the non-dealer passed: the dealer is offered the upcard
                current[g] = dealer
                phase[g] = OFFER
            else:
                current[g] = 1 - dealer
                phase[g] = FORCED_DRAW
        elif a < _KNOCK and stock_pos[g] < NUM_CARDS - DEAD_STOCK and turn[g] < max_turns:
            card = a - _DISCARD
            hands[g, p, card] = False
            games.deadwood[g, p] = after[g, card]
            for c in range(NUM_CARDS):
                after[g, c] = _NOT
            pile[g, pile_size[g]] = card
            pile_mask[g, card] = True
            pile_size[g] += 1
            taken[g] = -1
            games.big_gin_ok[g] = False
            games.discarded[g, p, card] = True
            games.knock_card[g] = -1
            current[g] = 1 - p
            phase[g] = DRAW
        else:  # a knock, big gin, or a discard that ends the hand
            _finish_one(g, a, games, rule, opts)
        _legal_one(g, games, legal)
    return 0


# ------------------------------------------------------------------ observations
@njit(cache=True)
def observe(out, me_of, perfect, games, rule, scales):
    """``observation.observe`` for every game: ``out`` (B, size) float32 filled.
    ``rule``: ``rule_vector``; ``scales``: stock, deadwood, target, knock limit, gin
    bonus, undercut bonus, take best."""
    hands, pile, pile_size, pile_mask = games.hands, games.pile, games.pile_size, games.pile_mask
    took, discarded, passed, taken = games.took, games.discarded, games.passed, games.taken
    phase, current, dealer, turn = games.phase, games.current, games.dealer, games.turn
    knock_limit, after, big_gin_ok, deadwood = games.knock_limit, games.after_discard, games.big_gin_ok, games.deadwood
    scores, stock_pos = games.scores, games.stock_pos
    target, gin_bonus, undercut_bonus = rule[R_TARGET], rule[R_GIN_BONUS], rule[R_UNDERCUT_BONUS]
    big_gin_rule, max_turns = rule[R_BIG_GIN], rule[R_MAX_TURNS]
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


#: The entry points whose cached machine code tells whether this machine compiled the
#: engine before (numba writes an index file beside each when it caches it).
_ENTRY_POINTS = ("step", "legal_mask", "observe", "deal", "hands_after_discard")


def cold_cache() -> bool:
    """Whether numba has no cached build of the engine's entry points here yet (the first
    run on this machine, or after ginenv changed): they compile at their first call."""
    import os

    try:
        return not all(os.path.exists(globals()[name]._cache._cache_file._index_path) for name in _ENTRY_POINTS)
    except AttributeError:  # another numba's internals: say nothing rather than guess
        return False


def announce_compile(stream=None) -> bool:
    """One line on ``stream`` (stderr) when the engine is about to compile for the first
    time here: what and about how long, and that it is cached after. Returns whether it spoke."""
    import os
    import sys

    if os.environ.get("GINENV_QUIET") or not cold_cache():
        return False
    print(
        "ginenv: compiling the game engine for this machine with numba (first run only, about a minute; cached after)",
        file=stream or sys.stderr,
        flush=True,
    )
    return True
