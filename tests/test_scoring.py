"""End-of-hand and end-of-match scoring: the rule book's worked examples, scripted
stories, and the batched scorer against the exhaustive reference."""

import numpy as np
import pytest
import reference as R

from ginenv import melds
from ginenv.cards import parse_cards, to_hand
from ginenv.rules import Rules
from ginenv.scoring import KIND_NAMES, score_hand, score_hands, score_match

STANDARD, PAGAT, WIKIHOW = Rules.preset("standard"), Rules.preset("pagat"), Rules.preset("wikihow")


def hand(text):
    return to_hand(parse_cards(text))


# ------------------------------------------------------------ worked examples (RULES.md)
def test_example_1_knock_3_against_21_scores_18():
    # Knocker: As-2s-3s, 7h-7d-7c, Jd-Qd-Kd, deadwood 3c. Defender: 8c-9c-Tc, 5h-5d-5c,
    # deadwood Ah 4d 6h Qc = 21, none of which fits a knocker meld.
    r = score_hand(hand("As 2s 3s 7h 7d 7c Jd Qd Kd 3c"), hand("8c 9c Tc 5h 5d 5c Ah 4d 6h Qc"), STANDARD)
    assert (r.kind, r.knocker_deadwood, r.defender_deadwood, r.knocker_points, r.defender_points) == (
        "knock",
        3,
        21,
        18,
        0,
    )


def test_example_2_knock_by_discarding_the_9_leaves_8():
    # After drawing: As-2s-3s-4s, 7h-7d-7c-7s, deadwood 3h 5c 9d.
    eleven = hand("As 2s 3s 4s 7h 7d 7c 7s 3h 5c 9d")
    after = melds.deadwood_after_discard(eleven)
    assert after[parse_cards("9d")[0]] == 8
    assert after.min() == 8  # the best discard, and <= 10: a legal knock


def test_example_3_pagat_knock_6_against_14_scores_8():
    # The defender lays 3h and 7h on 4h-5h-6h and 9h on the three nines: 14 remain.
    r = score_hand(hand("4h 5h 6h 9s 9c 9d Jc Qc Kc 6d"), hand("3h 7h 9h 2c 2d 2s Ad 3c 4s 6s"), PAGAT)
    assert (r.kind, r.knocker_deadwood, r.defender_deadwood, r.knocker_points) == ("knock", 6, 14, 8)


def test_example_3_pagat_defender_4_undercuts_for_12():
    r = score_hand(hand("4h 5h 6h 9s 9c 9d Jc Qc Kc 6d"), hand("2h 3h 7h 9h 8s 8d 8c 8h Ad 3c"), PAGAT)
    assert (r.kind, r.defender_deadwood, r.knocker_points, r.defender_points) == ("undercut", 4, 0, 2 + 10)


def test_example_3_pagat_6_against_6_is_an_undercut_for_10():
    r = score_hand(hand("4h 5h 6h 9s 9c 9d Jc Qc Kc 6d"), hand("2h 3h 7h 9h 8s 8d 8c 8h Ad 5c"), PAGAT)
    assert (r.kind, r.defender_deadwood, r.defender_points) == ("undercut", 6, 10)


def test_example_4_run_set_ace_king_is_11_and_no_knock():
    ten = hand("3h 4h 5h 6h 9s 9h 9d 9c As Kd")
    assert melds.deadwood(ten) == 11
    with pytest.raises(ValueError, match="illegal knock"):
        score_hand(ten, hand("2c 3c 5d 6d 7d Ts Js 2s 4c Qh"), STANDARD)


def test_example_5_wikihow_knocker_9_defender_2_scores_32():
    # Defender: 4s and 5s onto As-2s-3s, 7s onto the sevens, 5h-5d-5c, Ah-2h-3h; 2c left.
    r = score_hand(hand("As 2s 3s 7h 7d 7c Jd Qd Kd 9c"), hand("4s 5s 7s 5h 5d 5c Ah 2h 3h 2c"), WIKIHOW)
    assert (r.kind, r.knocker_deadwood, r.defender_deadwood, r.defender_points) == ("undercut", 9, 2, 7 + 25)


def test_example_6_gin_against_zero_scores_the_bonus_and_is_not_undercut():
    r = score_hand(hand("As 2s 3s 7h 7d 7c Td Jd Qd Kd"), hand("4h 5h 6h 8s 8d 8c 2c 3c 4c 5c"), PAGAT)
    assert (r.kind, r.defender_deadwood, r.knocker_points, r.defender_points) == ("gin", 0, 20, 0)


def test_example_7_layoffs_fourth_nine_and_hearts_on_both_ends():
    r = score_hand(hand("4h 5h 6h 9s 9c 9d Jc Qc Kc 6d"), hand("3h 7h 9h 2c 2d 2s Ad 3c 4s 6s"), PAGAT)
    laid = {card for card, _ in r.layoffs}
    assert laid == set(parse_cards("3h 7h 9h").tolist())
    for card, i in r.layoffs:
        target = r.knocker_melds[i]
        if card == parse_cards("9h")[0]:
            assert sorted(target % 13) == [8, 8, 8]
        else:
            assert set(target.tolist()) == set(parse_cards("4h 5h 6h").tolist())


# --------------------------------------------------------------------- scripted stories
def test_gin_cannot_be_undercut_and_allows_no_layoffs():
    # The defender's 8h would fit the knocker's run, but gin allows no lay-offs:
    # D = 8h + 2d + Ad + 3c = 14.
    r = score_hand(hand("4h 5h 6h 7h 9s 9c 9d Jc Qc Kc"), hand("8h 2d 5s 5d 5c Ts Js Qs Ad 3c"), STANDARD)
    assert (r.kind, r.defender_deadwood, r.knocker_points, r.layoffs) == ("gin", 14, 14 + 25, [])


def test_big_gin_scores_the_big_gin_bonus():
    r = score_hand(
        hand("As 2s 3s 7h 7d 7c Td Jd Qd Kd 9d"), hand("4h 8h 5s 5d 2c Ts Js Qh 3d 4c"), STANDARD, big_gin=True
    )
    assert (r.kind, r.knocker_points) == ("big_gin", R.deadwood(parse_cards("4h 8h 5s 5d 2c Ts Js Qh 3d 4c")) + 31)
    with pytest.raises(ValueError, match="not allowed"):
        score_hand(hand("As 2s 3s 7h 7d 7c Td Jd Qd Kd 9d"), hand("4h 8h 5s 5d 2c Ts Js Qh 3d 4c"), PAGAT, big_gin=True)


def test_knocker_may_show_more_deadwood_to_deny_layoffs():
    # Showing 4h-5h-6h-7h (deadwood Ac Ad = 2) lets the defender lay 8h and 9h off:
    # 5 - 2 = 3 points. Showing 4h-5h-6h with 7h as deadwood (9, still a knock) leaves
    # 8h and 9h stranded: 22 - 9 = 13 points. The knocker takes the better one.
    r = score_hand(hand("4h 5h 6h 7h Ks Kd Kc Kh Ac Ad"), hand("8h 9h 5s 5d 5c 8c 9c Tc 2s 3c"), STANDARD)
    assert (r.kind, r.knocker_deadwood, r.defender_deadwood, r.knocker_points) == ("knock", 9, 22, 13)
    assert r.layoffs == []


def test_wikihow_tie_scores_nothing_but_standard_tie_is_an_undercut():
    k, d = hand("4h 5h 6h 9s 9c 9d Jc Qc Kc 6d"), hand("2h 3h 7h 9h 8s 8d 8c 8h Ad 5c")
    tie = score_hand(k, d, WIKIHOW)
    assert (tie.kind, tie.knocker_points, tie.defender_points, tie.winner) == ("tie", 0, 0, None)
    under = score_hand(k, d, STANDARD)
    assert (under.kind, under.defender_points, under.winner) == ("undercut", 25, "defender")


def test_oklahoma_hand_limit_is_enforced():
    k, d = hand("As 2s 3s 7h 7d 7c Jd Qd Kd 3c"), hand("8c 9c Tc 5h 5d 5c Ah 4d 6h Qc")
    assert score_hand(k, d, PAGAT, knock_limit=3).knocker_points == 18
    with pytest.raises(ValueError, match="knock limit is 2"):
        score_hand(k, d, PAGAT, knock_limit=2)


def test_score_hands_refuses_bad_input():
    k, d = hand("As 2s 3s 7h 7d 7c Jd Qd Kd 3c"), hand("8c 9c Tc 5h 5d 5c Ah 4d 6h Qc")
    with pytest.raises(ValueError, match="in common"):
        score_hands(k[None], k[None], STANDARD)
    with pytest.raises(ValueError, match="10"):
        score_hands(k[None], (d | hand("Ks"))[None], STANDARD)


# ------------------------------------------------------------- against the reference
def knock_deals(rng, count, limit=10, n_ranks=6):
    """Deals from a narrow window of ranks (many melds and lay-offs) where the first
    ten cards are a legal knock."""
    out = []
    while len(out) < count:
        lo = rng.integers(0, 14 - n_ranks)
        window = np.array([s * 13 + lo + r for s in range(4) for r in range(n_ranks)])
        deck = rng.permutation(window)
        if R.deadwood(deck[:10]) <= limit:
            out.append((deck[:10], deck[10:20]))
    return out


@pytest.mark.parametrize("preset", ["standard", "pagat", "wikihow"])
def test_batched_scoring_matches_exhaustive_search(preset):
    rules = Rules.preset(preset)
    deals = knock_deals(np.random.default_rng(len(preset)), 120)
    got = score_hands(to_hand(np.array([k for k, _ in deals])), to_hand(np.array([d for _, d in deals])), rules)
    for i, (k, d) in enumerate(deals):
        expected = R.score(k, d, rules)
        actual = (
            KIND_NAMES[got["kind"][i]],
            got["knocker_deadwood"][i],
            got["defender_deadwood"][i],
            got["knocker_points"][i],
            got["defender_points"][i],
        )
        assert actual == expected, (k, d)


def test_shown_melds_and_layoffs_account_for_the_score():
    rules = STANDARD
    for k, d in knock_deals(np.random.default_rng(9), 60):
        r = score_hand(k, d, rules)
        shown = sorted(np.concatenate(r.knocker_melds + [r.knocker_deadwood_cards]).tolist())
        assert shown == sorted(k.tolist())
        assert R.value_sum(r.knocker_deadwood_cards) == r.knocker_deadwood
        laid = [c for c, _ in r.layoffs]
        d_shown = sorted(np.concatenate(r.defender_melds + [r.defender_deadwood_cards]).tolist() + laid)
        assert d_shown == sorted(d.tolist())
        assert R.value_sum(r.defender_deadwood_cards) == r.defender_deadwood
        assert R.layable(laid, [frozenset(m.tolist()) for m in r.knocker_melds])


# ---------------------------------------------------------------------------- matches
def test_standard_shutout_doubles_hand_points_before_the_line_bonus():
    m = score_match([(30, 0), (40, 0), (35, 0)], STANDARD)
    assert m.final == (2 * 105 + 100 + 3 * 25, 0) and m.winner == 0


def test_standard_no_shutout_after_a_dead_hand():
    m = score_match([(30, 0), None, (80, 0)], STANDARD)
    assert m.final == (110 + 100 + 2 * 25, 0)


def test_pagat_shutout_game_bonus_is_200_when_loser_has_no_points():
    assert score_match([(60, 0), (50, 0)], PAGAT).final == (110 + 200 + 2 * 20, 0)
    assert score_match([(60, 0), (0, 15), (50, 0)], PAGAT).final == (110 + 100 + 2 * 20, 15 + 20)


def test_wikihow_shutout_adds_100_when_loser_won_no_hand():
    assert score_match([(100, 0)], WIKIHOW).final == (100 + 100 + 100 + 25, 0)


def test_casual_has_no_end_of_match_bonuses():
    assert score_match([(0, 40), (70, 0), (35, 0)], Rules.preset("casual")).final == (105, 40)


def test_line_bonuses_can_decide_the_match():
    # Under pagat the player who reached 100 in one hand loses to nine won hands.
    m = score_match([(0, 10)] * 9 + [(100, 0)], PAGAT)
    assert m.final == (100 + 100 + 20, 90 + 9 * 20) and m.winner == 1


def test_equal_final_totals_are_a_draw():
    casual = Rules.preset("casual", target=50)
    m = score_match([(0, 49), (50, 0)], casual.replace(line_bonus=1, game_bonus=0))
    assert m.final == (51, 50) and m.winner == 0
    m = score_match([(0, 50)], casual.replace(target=50, game_bonus=0, line_bonus=0))
    assert m.winner == 1
    m = score_match([(0, 40), (50, 0)], casual.replace(target=50, game_bonus=0, line_bonus=10))
    assert m.final == (60, 50)
    m = score_match([(0, 49), (50, 0)], casual.replace(target=50, game_bonus=0, line_bonus=0))
    assert m.winner == 0
    m = score_match([(0, 45), (50, 0)], casual.replace(target=50, game_bonus=0, line_bonus=0, shutout="none"))
    assert m.final == (50, 45)
    m = score_match([(0, 40), (50, 0)], casual.replace(target=50, game_bonus=0, line_bonus=0))
    assert m.winner == 0


def test_match_input_errors():
    with pytest.raises(ValueError, match="after the match ended"):
        score_match([(100, 0), (5, 0)], STANDARD)
    with pytest.raises(ValueError, match="only one player"):
        score_match([(5, 5)], STANDARD)
    with pytest.raises(ValueError, match="not over"):
        score_match([(5, 0)], STANDARD)
