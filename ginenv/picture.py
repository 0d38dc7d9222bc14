"""Pictures of the table for ``render_mode="rgb_array"``: an ``(H, W, 3)`` uint8 frame,
drawn with Pillow (the ``render`` extra), for PettingZoo's and Gymnasium's
``RecordVideo`` or any image viewer.

``frame(state, game, viewer)`` draws one game as ``viewer`` (0 or 1) sees it: its own
hand face up, grouped into melds and deadwood, the other hand face down while the hand is
in play (both laid out face up once it is over), the discard pile (its top card face up,
the cards under it as a fanned edge), the stock's count, the scores and the phase.
``viewer=None`` shows both hands (a spectator). Only what the viewer may see is drawn:
the picture is made from the same fields as the text render.
"""

from __future__ import annotations

import numpy as np

from ginenv import core
from ginenv.cards import NUM_RANKS, format_card
from ginenv.melds import best_melds

WIDTH, HEIGHT = 720, 420
CARD_W, CARD_H = 44, 64
FELT, LINE, TEXT = (22, 96, 56), (235, 235, 235), (245, 245, 245)
FACE, BACK, BACK_LINE = (250, 250, 246), (38, 70, 140), (200, 210, 235)
RED, BLACK = (200, 30, 40), (20, 20, 20)
SUIT_GLYPHS = {"s": "S", "h": "H", "d": "D", "c": "C"}


def _pillow():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as e:
        raise ImportError('render_mode="rgb_array" needs Pillow: pip install -e ".[render]"') from e
    return Image, ImageDraw, ImageFont


_FONTS: dict = {}


def _font(size: int):
    if size not in _FONTS:
        _, _, ImageFont = _pillow()
        try:
            _FONTS[size] = ImageFont.load_default(size=size)
        except TypeError:  # Pillow before 10.1: one bitmap size
            _FONTS[size] = ImageFont.load_default()
    return _FONTS[size]


def _card(draw, x: int, y: int, card: int | None) -> None:
    """A card at (x, y): its face (rank and suit, red or black) or, for None, its back."""
    if card is None:
        draw.rounded_rectangle([x, y, x + CARD_W, y + CARD_H], 5, fill=BACK, outline=BACK_LINE, width=2)
        draw.rectangle([x + 6, y + 6, x + CARD_W - 6, y + CARD_H - 6], outline=BACK_LINE, width=1)
        return
    name = format_card(int(card))  # e.g. "Td", "As"
    rank, suit = name[:-1], name[-1]
    colour = RED if suit in "hd" else BLACK
    draw.rounded_rectangle([x, y, x + CARD_W, y + CARD_H], 5, fill=FACE, outline=(90, 90, 90), width=1)
    draw.text((x + 5, y + 3), "10" if rank == "T" else rank, fill=colour, font=_font(18))
    draw.text((x + 5, y + 24), SUIT_GLYPHS[suit], fill=colour, font=_font(16))
    draw.text((x + CARD_W - 16, y + CARD_H - 22), SUIT_GLYPHS[suit], fill=colour, font=_font(14))


def _ordered(hand: np.ndarray) -> tuple[list, int]:
    """A hand's cards, melds first (each in order), then the deadwood by suit and rank,
    and where the deadwood starts."""
    cards = np.flatnonzero(hand)
    melds = best_melds(hand)[0] if len(cards) <= core.HAND_SIZE else []
    in_melds = [int(c) for m in melds for c in m]
    rest = sorted((int(c) for c in cards if int(c) not in in_melds), key=lambda c: (c // NUM_RANKS, c % NUM_RANKS))
    return in_melds + rest, len(in_melds)


def _row(draw, y: int, hand: np.ndarray, face_up: bool, label: str) -> None:
    draw.text((20, y - 22), label, fill=TEXT, font=_font(16))
    if not face_up:
        for k in range(int(hand.sum())):
            _card(draw, 20 + k * (CARD_W + 6), y, None)
        return
    cards, melded = _ordered(hand)
    x = 20
    for k, c in enumerate(cards):
        if k == melded and melded:
            x += 14  # a gap between the melds and the deadwood
        _card(draw, x, y, c)
        x += CARD_W + 6


def frame(s: core.State, game: int = 0, viewer: int | None = 0) -> np.ndarray:
    """``(HEIGHT, WIDTH, 3)`` uint8: game ``game`` as ``viewer`` sees it (module docstring)."""
    Image, ImageDraw, _ = _pillow()
    if viewer not in (0, 1, None):
        raise ValueError(f"viewer must be 0, 1 or None (both hands shown), got {viewer!r}")
    g = game
    img = Image.new("RGB", (WIDTH, HEIGHT), FELT)
    draw = ImageDraw.Draw(img)
    over = bool(s.hand_ended[g] or s.phase[g] == core.DONE)
    hands = s.last_hands[g] if over and s.hand_kind[g] >= 0 else s._hands[g]
    me = 0 if viewer is None else viewer
    other = 1 - me
    show_other = viewer is None or over
    _row(draw, 40, hands[other], show_other, f"player_{other}" + ("" if show_other else " (face down)"))
    _row(draw, HEIGHT - CARD_H - 24, hands[me], True, f"player_{me}" + (" (you)" if viewer is not None else ""))
    # The middle: the stock, the pile, the scores and the phase.
    mid = HEIGHT // 2 - CARD_H // 2
    stock = int(s.stock_size[g])
    if stock:
        _card(draw, 40, mid, None)
    draw.text((40, mid + CARD_H + 4), f"stock {stock}", fill=TEXT, font=_font(14))
    size = int(s.pile_size[g])
    for k in range(min(size - 1, 6)):  # the cards under the top, as an edge
        draw.rounded_rectangle([120 + 3 * k, mid, 120 + 3 * k + CARD_W, mid + CARD_H], 5, fill=(225, 225, 215))
    if size:
        _card(draw, 120 + 3 * min(size - 1, 6), mid, int(s.pile[g, size - 1]))
    draw.text((120, mid + CARD_H + 4), f"pile {size}", fill=TEXT, font=_font(14))
    info = [
        f"scores {int(s.scores[g, 0])} - {int(s.scores[g, 1])}  (to {s.rules.target})",
        f"hand {int(s.hand_no[g])}   dealer player_{int(s.dealer[g])}",
    ]
    if over and s.hand_kind[g] >= 0:
        kind = core.HAND_KIND_NAMES[s.hand_kind[g]]
        info.append(f"hand over: {kind}, points {int(s.hand_points[g, 0])} - {int(s.hand_points[g, 1])}")
    else:
        info.append(f"player_{int(s.current[g])} to {core.PHASE_NAMES[s.phase[g]].lower().replace('_', ' ')}")
    for k, line in enumerate(info):
        draw.text((330, mid + 2 + 22 * k), line, fill=TEXT, font=_font(16))
    return np.asarray(img, dtype=np.uint8)
