"""Slow, obviously correct references for the meld and scoring maths.

Plain Python over lists of card ids: enumerate every meld, every collection of
disjoint melds, every subset of deadwood that could be laid off. No tables, no tricks;
the fast batched code in ``ginenv`` is compared against this.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations

VALUES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]


def value(card: int) -> int:
    return VALUES[card % 13]


def all_melds(cards) -> list[frozenset]:
    """Every set (3 or 4 cards of a rank) and every run (3+ consecutive, one suit)."""
    cards = set(cards)
    out = []
    for rank in range(13):
        same = [c for c in cards if c % 13 == rank]
        for size in (3, 4):
            out += [frozenset(x) for x in combinations(same, size)]
    for suit in range(4):
        for lo in range(13):
            for hi in range(lo + 2, 13):
                run = [suit * 13 + r for r in range(lo, hi + 1)]
                if all(c in cards for c in run):
                    out.append(frozenset(run))
    return out


def arrangements(cards):
    """Every collection of disjoint melds (including none), as lists of frozensets."""
    melds = all_melds(cards)

    def rec(i, used, chosen):
        yield list(chosen)
        for j in range(i, len(melds)):
            if not (melds[j] & used):
                chosen.append(melds[j])
                yield from rec(j + 1, used | melds[j], chosen)
                chosen.pop()

    yield from rec(0, frozenset(), [])


@cache
def _deadwood(cards: frozenset) -> int:
    return min(sum(value(c) for c in cards - frozenset().union(*a)) for a in arrangements(cards))


def deadwood(cards) -> int:
    return _deadwood(frozenset(int(c) for c in cards))


def deadwood_after_discard(cards) -> dict:
    cards = frozenset(int(c) for c in cards)
    return {c: _deadwood(cards - {c}) for c in cards}


def layable(cards, knocker_melds) -> bool:
    """Can all of ``cards`` be laid off onto ``knocker_melds`` (chains allowed)?

    Searches every order and every target: a card may fit both a set (as its fourth
    card) and a run, and only one of the two may let a later card chain on."""
    runs, sets = [], []
    for m in knocker_melds:
        ranks = sorted(c % 13 for c in m)
        if len(set(ranks)) == 1:
            sets.append((ranks[0], len(m)))
        else:
            runs.append((next(iter(m)) // 13, ranks[0], ranks[-1]))

    def search(left, runs, sets):
        if not left:
            return True
        for c in left:
            s, r = c // 13, c % 13
            rest = left - {c}
            for i, (rank, size) in enumerate(sets):
                if rank == r and size == 3 and search(rest, runs, sets[:i] + [(rank, 4)] + sets[i + 1 :]):
                    return True
            for i, (suit, lo, hi) in enumerate(runs):
                if suit == s and r in (lo - 1, hi + 1):
                    grown = runs[:i] + [(suit, min(lo, r), max(hi, r))] + runs[i + 1 :]
                    if search(rest, grown, sets):
                        return True
        return False

    return search(frozenset(cards), runs, sets)


def defender_deadwood(defender, knocker_melds) -> int:
    """The defender's least deadwood over own melds and lay-offs, jointly."""
    defender = frozenset(defender)
    best = None
    for a in arrangements(defender):
        dead = sorted(defender - frozenset().union(*a))
        total = sum(value(c) for c in dead)
        for size in range(len(dead), -1, -1):
            for sub in combinations(dead, size):
                rest = total - sum(value(c) for c in sub)
                if (best is None or rest < best) and layable(sub, knocker_melds):
                    best = rest
    return best


def score(knocker, defender, rules, big_gin=False, knock_limit=None):
    """(kind, K, D, knocker points, defender points) by exhaustive search."""
    knocker, defender = frozenset(int(c) for c in knocker), frozenset(int(c) for c in defender)
    limit = rules.knock_limit if knock_limit is None else knock_limit
    own = deadwood(defender)
    if big_gin:
        assert deadwood(knocker) == 0 and len(knocker) == 11
        return ("big_gin", 0, own, own + rules.big_gin_bonus, 0)
    if deadwood(knocker) == 0:
        return ("gin", 0, own, own + rules.gin_bonus, 0)
    best = None
    for a in arrangements(knocker):
        k = sum(value(c) for c in knocker - frozenset().union(*a))
        if k > limit:
            continue
        d = defender_deadwood(defender, a)
        if d > k:
            result = ("knock", k, d, d - k, 0)
        elif d < k or rules.knock_tie == "undercut":
            result = ("undercut", k, d, 0, k - d + rules.undercut_bonus)
        else:
            result = ("tie", k, d, 0, 0)
        net = result[3] - result[4]
        if best is None or net > best[0] or (net == best[0] and k < best[1][1]):
            best = (net, result)
    assert best is not None, "illegal knock"
    return best[1]


def value_sum(cards) -> int:
    return sum(value(int(c)) for c in cards)
