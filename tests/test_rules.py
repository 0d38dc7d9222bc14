import pytest

from ginenv.rules import PRESETS, Rules, resolve


def test_presets_follow_the_rule_book_table():
    s, p, c, w = (PRESETS[k] for k in ("standard", "pagat", "casual", "wikihow"))
    assert [r.gin_bonus for r in (s, p, c, w)] == [25, 20, 25, 25]
    assert [r.undercut_bonus for r in (s, p, c, w)] == [25, 10, 25, 25]
    assert [r.big_gin for r in (s, p, c, w)] == [True, False, False, False] and s.big_gin_bonus == 31
    assert [r.knock_tie for r in (s, p, c, w)] == ["undercut", "undercut", "undercut", "knocker_zero"]
    assert [r.game_bonus for r in (s, p, c, w)] == [100, 100, 0, 100]
    assert [r.line_bonus for r in (s, p, c, w)] == [25, 20, 0, 25]
    assert [r.shutout for r in (s, p, c, w)] == ["double_hand_points", "loser_scoreless", "none", "loser_won_no_hand"]
    assert [r.next_dealer for r in (p, c, w)] == ["winner", "loser", "loser"]
    assert all(r.knock_limit == 10 and r.target == 100 for r in (s, p, c, w))
    assert PRESETS["oklahoma"] == p.replace(oklahoma=True)


def test_standard_is_the_default():
    assert Rules() == PRESETS["standard"] == resolve(None) == resolve("standard")


def test_a_preset_with_an_override():
    r = Rules.preset("pagat", gin_bonus=25)
    assert r.gin_bonus == 25 and r.undercut_bonus == 10


def test_unknown_preset_names_the_valid_ones():
    with pytest.raises(ValueError, match="standard, pagat, casual, wikihow, oklahoma"):
        Rules.preset("vegas")


def test_unknown_rule_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown rule.*valid rules: knock_limit"):
        Rules.preset("standard", knocklimit=5)


@pytest.mark.parametrize(
    "field, value",
    [
        ("knock_limit", 11),
        ("knock_limit", -1),
        ("gin_bonus", -5),
        ("target", 0),
        ("max_turns", 0),
        ("knock_tie", "coin"),
        ("shutout", "x"),
        ("next_dealer", "random"),
        ("oklahoma", 1),
        ("gin_bonus", 2.5),
    ],
)
def test_invalid_values_are_refused(field, value):
    with pytest.raises(ValueError, match=field):
        Rules(**{field: value})


def test_rules_round_trip_through_a_dict():
    r = Rules.preset("wikihow", gin_bonus=30)
    assert Rules.from_dict(r.to_dict()) == r
