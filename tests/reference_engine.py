"""One game of gin rummy written plainly: lists, sets and ifs, with the brute-force
meld maths of ``reference``. The batched engine (``ginenv.core``) is compared with it.

The deal is the same function of the game seed as in the engine (splitmix64 in Python
integers), so the same seed gives the same cards here and there.
"""

from __future__ import annotations

import reference as R

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15

DISCARD, KNOCK, DRAW_STOCK, TAKE_DISCARD, PASS, BIG_GIN = 0, 52, 104, 105, 106, 107


def splitmix64(x: int) -> int:
    z = (x + GOLDEN) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def game_seed(seed: int, i: int) -> int:
    return splitmix64((splitmix64(seed % (1 << 64)) + i) & M64)


def stream(seed: int, game_no: int, hand_no: int) -> int:
    g = splitmix64((seed + game_no * 0xD1B54A32D192ED03) & M64)
    return splitmix64((g + hand_no + 1) & M64)


def deck(seed: int, game_no: int, hand_no: int) -> list[int]:
    key = stream(seed, game_no, hand_no)
    keys = [splitmix64(key ^ ((c * GOLDEN) & M64)) for c in range(52)]
    return sorted(range(52), key=lambda c: (keys[c], c))


class Game:
    """A whole game (one hand or a match) for one seed."""

    def __init__(self, rules, seed: int, mode: str = "match", deck0=None, dealer0=None):
        self.rules, self.seed, self.mode = rules, seed, mode
        self.scores, self.won, self.played, self.dead = [0, 0], [0, 0], 0, 0
        self.hand_no, self.done, self.history = 0, False, []
        self.final, self.winner = None, None
        self.dealer = (stream(seed, 0, -1) >> 63) if dealer0 is None else dealer0
        self.deal(deck0)

    def deal(self, cards=None):
        cards = deck(self.seed, 0, self.hand_no) if cards is None else list(cards)
        self.hand_no += 1
        nd = 1 - self.dealer
        self.hands = [set(), set()]
        self.hands[nd] = set(cards[0:20:2])
        self.hands[self.dealer] = set(cards[1:20:2])
        self.upcard = cards[20]
        self.pile = [cards[20]]
        self.stock = cards[21:]
        self.phase, self.current, self.turn, self.taken = "offer", nd, 0, None
        value = R.value(self.upcard)
        self.limit = (
            (0 if value == 1 else min(value, self.rules.knock_limit)) if self.rules.oklahoma else self.rules.knock_limit
        )

    def after_discard(self):
        return R.deadwood_after_discard(self.hands[self.current])

    def legal_actions(self) -> list[int]:
        if self.done:
            return []
        if self.phase == "offer":
            return [TAKE_DISCARD, PASS]
        if self.phase == "forced_draw":
            return [DRAW_STOCK]
        if self.phase == "draw":
            return [DRAW_STOCK, TAKE_DISCARD]
        hand = self.hands[self.current]
        after = self.after_discard()
        out = [DISCARD + c for c in sorted(hand) if c != self.taken]
        out += [KNOCK + c for c in sorted(hand) if c != self.taken and after[c] <= self.limit]
        if self.rules.big_gin and R.deadwood(hand) == 0:
            out.append(BIG_GIN)
        return out

    def step(self, a: int):
        assert a in self.legal_actions(), a
        p = self.current
        if a == PASS:
            if p != self.dealer:
                self.current = self.dealer
            else:
                self.current, self.phase = 1 - self.dealer, "forced_draw"
        elif a in (DRAW_STOCK, TAKE_DISCARD):
            card = self.stock.pop(0) if a == DRAW_STOCK else self.pile.pop()
            self.taken = None if a == DRAW_STOCK else card
            self.hands[p].add(card)
            self.turn += 1
            self.phase = "discard"
        elif a < KNOCK:
            self.hands[p].remove(a)
            self.pile.append(a)
            self.taken = None
            if len(self.stock) == 2:
                self.end_hand(None, "dead")
            elif self.turn >= self.rules.max_turns:
                self.end_hand(None, "truncated")
            else:
                self.current, self.phase = 1 - p, "draw"
        else:
            big = a == BIG_GIN
            if not big:
                self.hands[p].remove(a - KNOCK)
                self.pile.append(a - KNOCK)
            kind, _, _, kp, dp = R.score(
                self.hands[p], self.hands[1 - p], self.rules, big_gin=big, knock_limit=self.limit
            )
            points = [0, 0]
            points[p], points[1 - p] = kp, dp
            self.end_hand(points, kind)

    def end_hand(self, points, kind):
        self.history.append((points, kind))
        self.played += 1
        winner = None
        if points is None:
            self.dead += 1
        else:
            for j in (0, 1):
                self.scores[j] += points[j]
                if points[j] > 0:
                    self.won[j] += 1
                    winner = j
        if self.mode == "hand" or max(self.scores) >= self.rules.target:
            self.done = True
            if self.mode == "match":
                from ginenv.scoring import score_match

                m = score_match([None if pt is None else tuple(pt) for pt, _ in self.history], self.rules)
                self.final, self.winner = list(m.final), m.winner
            return
        if winner is not None:
            rule = self.rules.next_dealer
            self.dealer = {"alternate": 1 - self.dealer, "loser": 1 - winner, "winner": winner}[rule]
        self.deal()
