"""Rules as data: one frozen dataclass holding every parameter that differs between the
source texts, and the named presets (one per source text, plus Oklahoma).

``Rules.preset("pagat", gin_bonus=25)`` gives pagat's rules with one parameter changed.
Every field is validated; an unknown preset or field, or a bad value, raises
``ValueError`` naming what would be valid.

House choices (the sources are silent; see the README):
- ``standard`` deals first to a random cut (seeded) and then alternates the deal; the
  other presets let the loser of a hand deal next (``pagat``: the winner).
- After a dead hand (or a truncated one), the same dealer deals again in every preset.
- A hand ends as a truncated dead hand (no score) after ``max_turns`` draws.
- A match ends truncated (no bonuses, no winner) after ``max_hands`` hands, so a match
  nobody ends (two players that never knock) still ends; no real match comes near it.
- A match whose final totals are equal is a draw.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

MAX_KNOCK_LIMIT = 10
MAX_POINTS = 10_000  # the most a target or a bonus may be
MAX_TURNS = 10_000  # the most draws a hand may be capped at
MAX_HANDS = 10_000  # the most hands a match may be capped at

TIE_RULES = ("undercut", "knocker_zero")
SHUTOUT_RULES = ("none", "double_hand_points", "loser_scoreless", "loser_won_no_hand")
DEALER_RULES = ("alternate", "loser", "winner")


@dataclass(frozen=True)
class Rules:
    """Every parameter of a game of gin rummy that the presets set (defaults: ``standard``)."""

    knock_limit: int = 10
    """A player may knock when the 10 cards kept have deadwood <= this (0..10)."""
    oklahoma: bool = False
    """Oklahoma gin: the upcard's value sets the hand's knock limit (an ace: gin only)."""
    gin_bonus: int = 25
    """Points added to the defender's deadwood for a gin."""
    big_gin: bool = True
    """Whether 11 melded cards may be declared big gin, without a discard."""
    big_gin_bonus: int = 31
    """Points added to the defender's deadwood for a big gin."""
    undercut_bonus: int = 25
    """Points added to the deadwood difference for an undercut."""
    knock_tie: str = "undercut"
    """When the defender's deadwood equals the knocker's: ``undercut`` (the defender
    undercuts, scoring the bonus) or ``knocker_zero`` (nobody scores)."""
    target: int = 100
    """A match ends when a running total reaches this."""
    game_bonus: int = 100
    """Added at the end of a match to the player who reached the target."""
    line_bonus: int = 25
    """Added at the end of a match to each player for every hand that player won."""
    shutout: str = "double_hand_points"
    """``none``; ``double_hand_points`` (the winner won every hand and none was dead: the
    winner's hand points count twice); ``loser_scoreless`` (the loser has no points:
    ``shutout_bonus`` more to the winner); ``loser_won_no_hand`` (likewise if the loser
    won no hand)."""
    shutout_bonus: int = 0
    """Extra points to the winner for a ``loser_scoreless`` or ``loser_won_no_hand`` shutout."""
    next_dealer: str = "alternate"
    """Who deals the hand after a scored hand: ``alternate``, the ``loser`` or the ``winner``
    of that hand. After a dead or truncated hand the same dealer deals again."""
    max_turns: int = 100
    """A hand with this many draws and no knock ends as a truncated dead hand."""
    max_hands: int = 500
    """A match still short of the target after this many hands ends truncated: no
    bonuses, no winner (match mode; a real match takes a few dozen hands at most)."""

    def __post_init__(self):
        # The engine counts turns in int16 and points in int32: these bounds keep every
        # count and total of a match far inside them.
        ints = {
            "knock_limit": (0, MAX_KNOCK_LIMIT),
            "gin_bonus": (0, MAX_POINTS),
            "big_gin_bonus": (0, MAX_POINTS),
            "undercut_bonus": (0, MAX_POINTS),
            "target": (1, MAX_POINTS),
            "game_bonus": (0, MAX_POINTS),
            "line_bonus": (0, MAX_POINTS),
            "shutout_bonus": (0, MAX_POINTS),
            "max_turns": (1, MAX_TURNS),
            "max_hands": (1, MAX_HANDS),
        }
        for name, (lo, hi) in ints.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"rule {name} must be an integer, got {value!r}")
            if value < lo or (hi is not None and value > hi):
                span = f"{lo}..{hi}" if hi is not None else f">= {lo}"
                raise ValueError(f"rule {name} must be {span}, got {value}")
        for name in ("oklahoma", "big_gin"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"rule {name} must be True or False, got {getattr(self, name)!r}")
        for name, choices in (("knock_tie", TIE_RULES), ("shutout", SHUTOUT_RULES), ("next_dealer", DEALER_RULES)):
            if getattr(self, name) not in choices:
                raise ValueError(f"rule {name} must be one of {', '.join(choices)}; got {getattr(self, name)!r}")

    @classmethod
    def preset(cls, name: str = "standard", **overrides) -> Rules:
        """The named preset, with any fields overridden."""
        if name not in PRESETS:
            raise ValueError(f"unknown rules preset {name!r}; valid presets: {', '.join(PRESETS)}")
        return PRESETS[name].replace(**overrides)

    def replace(self, **overrides) -> Rules:
        """A copy with the given fields changed; unknown fields raise ``ValueError``."""
        valid = [f.name for f in dataclasses.fields(self)]
        unknown = sorted(set(overrides) - set(valid))
        if unknown:
            raise ValueError(f"unknown rule(s) {', '.join(unknown)}; valid rules: {', '.join(valid)}")
        return dataclasses.replace(self, **overrides)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Rules:
        return cls().replace(**data)


def resolve(rules: Rules | str | None) -> Rules:
    """A ``Rules``, a preset name, or None (``standard``) -> ``Rules``."""
    if rules is None:
        return PRESETS["standard"]
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        return Rules.preset(rules)
    raise ValueError(f"rules must be a Rules object or a preset name ({', '.join(PRESETS)}), got {rules!r}")


_PAGAT = Rules(
    gin_bonus=20,
    big_gin=False,
    undercut_bonus=10,
    line_bonus=20,
    shutout="loser_scoreless",
    shutout_bonus=100,
    next_dealer="winner",
)

#: The presets, one per source text (docs/rules.md), plus Oklahoma gin on pagat's rules.
PRESETS: dict[str, Rules] = {
    "standard": Rules(),
    "pagat": _PAGAT,
    "casual": Rules(big_gin=False, game_bonus=0, line_bonus=0, shutout="none", next_dealer="loser"),
    "wikihow": Rules(
        big_gin=False,
        knock_tie="knocker_zero",
        shutout="loser_won_no_hand",
        shutout_bonus=100,
        next_dealer="loser",
    ),
    "oklahoma": dataclasses.replace(_PAGAT, oklahoma=True),
    # OpenSpiel's gin_rummy (one hand a game): no big gin, and a knock that ties scores 0.
    "openspiel": Rules(big_gin=False, knock_tie="knocker_zero"),
}
