"""The page's and the terminal's words in English, Dutch and Norwegian (agents/play/lang.py)."""

import re

import pytest

from agents.play.lang import LANGUAGES, TEXT, move_label, phrase, table
from ginenv import actions as A


def test_every_phrase_is_in_every_language_with_the_same_fields():
    assert LANGUAGES == ("en", "nl", "no")
    for key, texts in TEXT.items():
        assert len(texts) == 3 and all(t.strip() for t in texts), key
        fields = [sorted(re.findall(r"\{(\w+)\}", t)) for t in texts]
        assert fields[0] == fields[1] == fields[2], (key, fields)


def test_the_english_move_names_are_the_actions_own():
    for action in range(A.NUM_ACTIONS):
        assert move_label("en", action) == A.describe(action)


def test_the_other_languages_name_each_move_differently_and_keep_the_card():
    for lang in ("nl", "no"):
        names = {move_label(lang, a) for a in range(A.NUM_ACTIONS)}
        assert len(names) == A.NUM_ACTIONS  # no two moves share a name
        assert "7h" in move_label(lang, A.discard(6 + 13)) and "7h" in move_label(lang, A.knock(6 + 13))
    assert move_label("nl", A.KNOCK + 3) == "klop met 4s" and move_label("no", A.DRAW_STOCK) == "trekk fra trekkbunken"


def test_an_unknown_language_is_refused_naming_the_valid_ones():
    with pytest.raises(ValueError, match="unknown language 'de'; choose one of en, nl, no"):
        phrase("de", "stock")
    assert table("nl")["stock"] == "trekstapel" and phrase("no", "deadwood", n=7) == "restkort 7"


def test_typed_moves_in_dutch_and_norwegian_read_as_the_english_commands():
    from agents.play.lang import to_english

    cases = {
        ("nl", "Klop 7h"): "knock 7h",
        ("nl", "trek"): "draw",
        ("nl", "pak"): "take",
        ("no", "bank 7h"): "knock 7h",
        ("no", "stor gin"): "big gin",
        ("no", "trekk"): "draw",
        ("no", "7h"): "7h",  # a card is a card in every language
        ("en", " Draw "): "draw",
    }
    for (lang, line), want in cases.items():
        assert to_english(lang, line) == want, (lang, line)
