"""Text rendering of one game for a person: hands grouped into melds with their
deadwood, the top discard, the stock, the scores, and at the end of a hand both hands,
the lay-offs and the points."""

from __future__ import annotations

import sys

from ginenv import core
from ginenv.cards import format_cards
from ginenv.melds import best_melds
from ginenv.scoring import score_hand


def supports_symbols(stream=None) -> bool:
    """Whether the stream's encoding can print the suit symbols."""
    encoding = getattr(stream or sys.stdout, "encoding", None) or "ascii"
    try:
        "\u2660\u2665\u2666\u2663".encode(encoding)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def _grouped(hand_bool, symbols):
    groups, dead = best_melds(hand_bool)
    parts = [f"[{format_cards(g, symbols)}]" for g in groups]
    if len(dead):
        parts.append(format_cards(dead, symbols))
    from ginenv.cards import CARD_VALUES

    return " ".join(parts) or "-", int(CARD_VALUES[dead].sum())


def render_text(s: core.State, game: int = 0, viewer: int | None = None, symbols: bool | None = None) -> str:
    """A text picture of game ``game``. ``viewer`` (0 or 1) hides the other hand while
    the hand is in play; ``None`` shows both (for debugging and spectators)."""
    symbols = supports_symbols() if symbols is None else symbols
    g = game
    lines = []
    phase = core.PHASE_NAMES[s.phase[g]]
    lines.append(
        f"hand {s.hand_no[g]}  dealer player_{s.dealer[g]}  scores {s.scores[g, 0]}-{s.scores[g, 1]}"
        f" (target {s.rules.target})  stock {s.stock_size[g]}  phase {phase}"
    )
    top = s.pile[g, s.pile_size[g] - 1] if s.pile_size[g] else -1
    lines.append(f"discard pile top: {format_cards([top], symbols) if top >= 0 else '-'}  ({s.pile_size[g]} cards)")
    over = s.hand_ended[g] or s.phase[g] == core.DONE
    hands = s.last_hands[g] if over and s.hand_kind[g] >= 0 else s._hands[g]
    for p in (0, 1):
        if viewer is not None and p != viewer and not over:
            lines.append(f"player_{p}: {int(hands[p].sum())} cards")
            continue
        text, dead = _grouped(hands[p], symbols)
        mark = " <- to move" if s.current[g] == p and not over else ""
        lines.append(f"player_{p}: {text}  (deadwood {dead}){mark}")
    if over and s.hand_kind[g] >= 0:
        kind = core.HAND_KIND_NAMES[s.hand_kind[g]]
        lines.append(f"hand over: {kind}, points {s.hand_points[g, 0]}-{s.hand_points[g, 1]}")
        k = s.last_knocker[g]
        if k >= 0 and kind in ("knock", "undercut", "tie"):
            r = score_hand(hands[k], hands[1 - k], s.rules, knock_limit=int(s.hand_knock_limit[g]))
            laid = [c for c, _ in r.layoffs]
            lines.append(
                f"player_{k} knocked with {r.knocker_deadwood}; player_{1 - k} laid off "
                f"{format_cards(laid, symbols) if laid else 'nothing'} and kept {r.defender_deadwood}"
            )
        if s.game_ended[g] and s.mode == "match":
            lines.append(
                f"match over: final {s.final_scores[g, 0]}-{s.final_scores[g, 1]}, "
                f"winner {('player_' + str(s.winner[g])) if s.winner[g] >= 0 else 'none (draw)'}"
            )
    return "\n".join(lines)
