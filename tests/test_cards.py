import numpy as np
import pytest

from ginenv.cards import (
    CARD_VALUES,
    format_card,
    format_cards,
    from_hand,
    hand_value,
    parse_cards,
    rank_of,
    suit_of,
    to_hand,
)


def test_card_id_is_suit_times_13_plus_rank():
    assert parse_cards("As").tolist() == [0]
    assert parse_cards("Ks").tolist() == [12]
    assert parse_cards("Ah").tolist() == [13]
    assert parse_cards("2d").tolist() == [27]
    assert parse_cards("Kc").tolist() == [51]
    assert rank_of(27) == 1 and suit_of(27) == 2


def test_parse_is_case_insensitive_and_accepts_10():
    assert parse_cards("tD 10d".replace("10d", "9D")).tolist() == parse_cards("Td 9d").tolist()
    assert parse_cards("10h").tolist() == parse_cards("TH").tolist()


def test_format_round_trips_every_card():
    text = format_cards(np.arange(52))
    assert parse_cards(text).tolist() == list(range(52))
    assert format_card(12, symbols=True) == "K\u2660"


@pytest.mark.parametrize("bad, word", [("Xs", "rank"), ("Ax", "suit"), ("A", "bad card"), ("11s", "rank")])
def test_parse_rejects_bad_cards_naming_them(bad, word):
    with pytest.raises(ValueError, match=word):
        parse_cards(f"2s {bad}")


def test_parse_rejects_a_repeated_card():
    with pytest.raises(ValueError, match="twice"):
        parse_cards("As 2s as")


def test_values_ace_one_faces_ten():
    assert CARD_VALUES[parse_cards("As 9h Td Jc Qs Kh")].tolist() == [1, 9, 10, 10, 10, 10]
    assert hand_value(to_hand(parse_cards("As Kh 5d"))) == 16


def test_hand_conversions_round_trip():
    ids = parse_cards("As 5h Kc 7d")
    hand = to_hand(ids)
    assert hand.dtype == bool and hand.shape == (52,) and hand.sum() == 4
    assert from_hand(hand).tolist() == sorted(ids.tolist())
    batch = to_hand(np.array([[0, 1], [50, 51]]))
    assert batch.shape == (2, 52) and batch[1, 51] and not batch[0, 51]
    with pytest.raises(ValueError):
        to_hand([52])
