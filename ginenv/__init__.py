"""ginenv: exact, fast Gin Rummy for reinforcement learning.

Layers, bottom up: ``cards`` (ids and notation), ``melds`` (deadwood maths, batched),
``rules`` (the presets as data), ``scoring`` (end of a hand and of a match), ``actions``
(action ids) and ``core`` (the batched game engine).
"""

from ginenv.cards import format_cards, parse_cards, to_hand
from ginenv.melds import best_melds, deadwood, deadwood_after_discard
from ginenv.rules import PRESETS, Rules
from ginenv.scoring import score_hand, score_hands, score_match

__all__ = [
    "PRESETS", "Rules", "best_melds", "deadwood", "deadwood_after_discard", "format_cards",
    "parse_cards", "score_hand", "score_hands", "score_match", "to_hand",
]
