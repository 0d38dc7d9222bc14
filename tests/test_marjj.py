"""marjj, the EAAI-2021 winner's decision code as a baseline: hand-worked positions for
each branch of its take, discard and knock rules, and a slow step-by-step reference of
the source's discard logic compared with the batched port over self-play positions."""

import numpy as np
import reference as R
from test_agents import self_play

from agents import make_agent
from ginenv import actions as A
from ginenv import core, melds
from ginenv.cards import parse_cards
from ginenv.observation import observe, plane


def ids(text):
    return [int(c) for c in parse_cards(text)]


def act(hand, pile, *, phase=core.DISCARD, taken=-1, my_discards=(), opponent_took=(), opponent_discarded=()):
    state = core.from_view(
        ids(hand),
        ids(pile),
        phase=phase,
        taken=taken if taken == -1 else ids(taken)[0],
        my_discards=ids(my_discards) if my_discards else (),
        opponent_took=ids(opponent_took) if opponent_took else (),
        opponent_discarded=ids(opponent_discarded) if opponent_discarded else (),
    )
    return int(make_agent("marjj").act(observe(state, 0), core.legal_action_mask(state))[0])


# 3c 4c 5c and 9d 9h 9s melded; Ks 4h 3d As 2h unmelded (20 points). Only the king is
# within 5 points of the most valuable unmelded card, so it is the one candidate; without
# it the deadwood is 10, a legal knock.
WINDOW_HAND = "3c 4c 5c 9d 9h 9s Ks 4h 3d As 2h"


def test_a_single_candidate_is_thrown_and_knocked_with_in_the_first_three_turns():
    # Its second turn (one discard before this one): it knocks, throwing the king.
    assert act(WINDOW_HAND, "7h 8d", my_discards="8d") == A.KNOCK + ids("Ks")[0]
    # Its third turn: still at will.
    assert act(WINDOW_HAND, "7h 8d Jc Qd", my_discards="8d Qd") == A.KNOCK + ids("Ks")[0]


def test_after_its_third_turn_it_knocks_only_for_gin():
    # Its fourth turn: the same hand only discards the king (knock_early would knock).
    pile = "7h 8d Jc Qd 6s Th"
    assert act(WINDOW_HAND, pile, my_discards="8d Qd Th") == A.DISCARD + ids("Ks")[0]
    # A hand whose one unmelded card leaves gin: it goes gin in any turn.
    gin_hand = "3c 4c 5c 9d 9h 9s Ah 2h 3h 4h Kd"
    assert act(gin_hand, pile, my_discards="8d Qd Th") == A.KNOCK + ids("Kd")[0]


def test_melded_cards_stay_and_the_card_just_taken_is_not_a_candidate():
    # It took the jack of clubs: Jc is unmelded but may not go; the king is the candidate.
    hand = "3c 4c 5c 9d 9h 9s Ks 4h 3d Jc 2h"
    assert act(hand, "7h 8d 6d Ts", my_discards="8d Ts 6d", taken="Jc") == A.DISCARD + ids("Ks")[0]


def test_the_danger_score_throws_the_king_the_opponent_cannot_use():
    # Two unmelded kings of equal use to its own hand (the same draws make gin either
    # way); the opponent took the queen and jack of hearts from its discards. The source
    # scores Kh -5 (the suit's end) +5 (the card below held by the opponent) +3 (two
    # below held) -4 (two kings unavailable) = -1, and Ks -5 -4 = -9, so Ks goes. Its
    # fourth turn: the 10 points left are a legal knock it does not make.
    hand = "2c 3c 4c 6d 7d 8d 9s 9h 9c Ks Kh"
    move = act(hand, "5s 2d", my_discards="Qh Jh 5s", opponent_took="Qh Jh", opponent_discarded="2d")
    assert move == A.DISCARD + ids("Ks")[0]


def test_it_takes_the_face_up_card_only_when_it_joins_a_meld_and_lowers_the_deadwood():
    hand = "7h 8h Kd Qs 2c 5s 9d Jc 3d 4s"
    assert act(hand, "9h", phase=core.DRAW) == A.TAKE_DISCARD  # 7h 8h 9h, and Kd goes
    assert act(hand, "Kc", phase=core.DRAW) == A.DRAW_STOCK  # joins nothing
    assert act(hand, "9h", phase=core.OFFER) == A.TAKE_DISCARD
    assert act(hand, "Kc", phase=core.OFFER) == A.PASS


# The source's logic, one step at a time, over plain sets of card ids.


def _unmelded_somewhere(hand):
    best = R.deadwood(hand)
    out = set()
    for arrangement in R.arrangements(hand):
        melded = frozenset().union(*arrangement)
        if sum(R.value(c) for c in set(hand) - melded) == best:
            out |= set(hand) - melded
    return out


def _future(hand, unseen):
    least = []
    for u in unseen:
        drawn = np.zeros(52, bool)
        drawn[list(hand) + [u]] = True
        least.append(int(melds.deadwood_after_discard(drawn[None])[0][drawn].min()))
    least.sort()
    return float(np.mean(least[:7])) if least else 0.0


def _opp_ev(card, opp, seen):
    rank, suit = card % 13, card // 13

    def state(r):  # 'opp', 'gone' (seen elsewhere or in the hand) or None
        c = suit * 13 + r
        return "opp" if c in opp else ("gone" if c in seen else None)

    o_hi = rank < 12 and state(rank + 1) == "opp"
    u_hi = rank == 12 or (rank < 12 and state(rank + 1) == "gone")
    o_lo = rank > 0 and state(rank - 1) == "opp"
    u_lo = rank == 0 or (rank > 0 and state(rank - 1) == "gone")
    o_hi2 = rank < 11 and state(rank + 2) == "opp"
    u_hi2 = rank < 11 and state(rank + 2) == "gone"
    if rank >= 11:
        u_hi = True  # the source's else branch of the second-higher card sets this flag
    o_lo2 = rank > 1 and state(rank - 2) == "opp"
    u_lo2 = rank <= 1 or (rank > 1 and state(rank - 2) == "gone")
    same = [s * 13 + rank for s in range(4)]
    o_same = sum(c in opp for c in same)
    u_same = sum(c not in opp and c in seen for c in same)
    ev = 0.0
    if (u_hi and (u_lo or u_lo2)) or (u_lo and (u_hi or u_hi2)):
        ev -= 10
    else:
        ev += -5 * u_lo - 5 * u_hi - 3 * u_lo2 - 3 * u_hi2
    if (o_hi and (o_lo or o_lo2)) or (o_lo and (o_hi or o_hi2)):
        ev += 20
    else:
        ev += 5 * o_lo + 5 * o_hi + 3 * o_lo2 + 3 * o_hi2
    if u_same >= 3:
        ev -= 10
    elif u_same == 2:
        ev -= 4
    if o_same >= 2:
        ev += 20
    elif u_same == 1:
        ev += 4
    return ev


def reference_discard(hand, legal, seen, opp, turn, knock_legal):
    """The action of the source's getDiscard then getFinalMelds for one position."""
    after = R.deadwood_after_discard(hand)
    pick = [c for c in sorted(_unmelded_somewhere(hand)) if c in legal]
    if pick:
        biggest = max(R.value(c) for c in pick)
        pick = [c for c in pick if R.value(c) >= biggest - 5]
    if not pick:
        pick = sorted(legal)
    if len(pick) > 1:
        gins = [c for c in pick if after[c] == 0]
        if gins:
            pick = gins[:1]
        else:
            least = min(after[c] for c in pick)
            pick = [c for c in pick if after[c] <= least + 5]
    if len(pick) == 1:
        card = pick[0]
    else:
        unseen = [c for c in range(52) if c not in seen]
        score = {
            c: after[c] + 18.0 * 0.9 ** (turn - 1) * _future(set(hand) - {c}, unseen) + _opp_ev(c, opp, seen)
            for c in pick
        }
        low = min(score.values())
        card = max((c for c in pick if score[c] == low), key=lambda c: (R.value(c), -c))
    knock = knock_legal[card] and (turn <= 3 or after[card] == 0)
    return (A.KNOCK if knock else A.DISCARD) + card


def test_the_port_matches_the_step_by_step_reference_over_self_play():
    checked = {"scored": 0, "single": 0, "knock": 0}

    def check(state, obs, mask, acts):
        for i in np.flatnonzero(state.phase == core.DISCARD)[:6]:
            if mask[i, A.BIG_GIN]:
                continue
            hand = [int(c) for c in np.flatnonzero(plane(obs[i], "own_hand") > 0.5)]
            legal = set(np.flatnonzero(mask[i, A.DISCARD : A.KNOCK]).tolist())
            seen = set(np.flatnonzero(plane(obs[i], "unseen") < 0.5).tolist())
            opp = set(np.flatnonzero(plane(obs[i], "opponent_took") > 0.5).tolist())
            turn = int(round(plane(obs[i], "own_discards").sum())) + 1
            want = reference_discard(hand, legal, seen, opp, turn, mask[i, A.KNOCK : A.DRAW_STOCK])
            assert acts[i] == want, (hand, sorted(legal), turn)
            checked["knock"] += int(A.is_knock(want))
            checked["scored"] += int(len(legal) > 1)

    self_play(make_agent("marjj"), steps=160, n=16, seed=5, check=check)
    assert checked["scored"] > 50 and checked["knock"] > 0, checked
