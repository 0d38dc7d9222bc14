"""Gin rummy for language models: TextArena environments over the exact engine (the
``textarena`` extra).

``register()`` adds them to TextArena's registry (``import agents.play.textarena`` does
it once), so ``ta.make("GinRummy-v0")`` gives a two-player game between text players,
``GinRummy-v0-<preset>`` the same under another preset (``pagat``, ``casual``,
``wikihow``, ``oklahoma``, ``openspiel``), and ``GinRummyVsBot-v0`` one text player
against a bot in the other seat (``opponent=``: any agent spec, ``knock_early`` by
default; ``camper``, ``marjj``, ``shipped``, ``shipped+search``). Keyword arguments:
``rules``, ``mode`` (``match``: to the preset's target, the default; ``hand``: one
hand), ``opponent``, ``seat`` (the text player's seat against a bot), ``error_allowance``.

It follows TextArena's conventions: ``reset(num_players, seed)``, ``get_observation()``
-> (the player on move, its new messages), ``step(action: str)`` -> ``(done, info)``,
``close()`` -> (rewards, game info): +1 to the winner of the match (of the hand in hand
mode), -1 to the loser, 0 each for a draw or a dead hand. A move is the terminal's words,
read by the terminal's own parser (``agents.play.game.parse_move``): ``draw``, ``take``,
``pass``, a card to discard (``7h``), ``knock 7h``, ``big gin``, in square brackets as
TextArena's agents answer (``[knock 7h]``; the registered envs add them when missing).
An unreadable or illegal move gets the parser's message with the legal moves, and
counts against ``error_allowance`` as TextArena's invalid moves do.

What a seat reads is built from what it has seen (its hand, the face-up cards, what the
opponent took from the pile and still holds, threw or passed, the public record, the
scores): a card it has not seen is never named (tested by dealing the hidden cards anew).
"""

from __future__ import annotations

import re
import secrets

import numpy as np

from agents.extras import require

require("textarena", what="the TextArena environments (agents.play.textarena)")

import textarena as ta  # noqa: E402

from agents.base import choose  # noqa: E402
from agents.play.game import arrangement, cards, parse_move  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from ginenv import actions as A  # noqa: E402
from ginenv import core  # noqa: E402
from ginenv.cards import format_card  # noqa: E402
from ginenv.observation import observe  # noqa: E402
from ginenv.rules import PRESETS, resolve  # noqa: E402

#: The registered ids: the two-player game, one per other preset, one against a bot.
ENV_ID, VS_BOT_ID = "GinRummy-v0", "GinRummyVsBot-v0"
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")


def move_words(action: int) -> str:
    """The words the parser reads back as ``action``: ``draw``, ``take``, ``pass``,
    ``7h``, ``knock 7h``, ``big gin``."""
    a = int(action)
    if A.is_discard(a):
        return format_card(A.card_of(a))
    if A.is_knock(a):
        return f"knock {format_card(A.card_of(a))}"
    return {A.DRAW_STOCK: "draw", A.TAKE_DISCARD: "take", A.PASS: "pass", A.BIG_GIN: "big gin"}[a]


def rules_text(rules, mode: str) -> str:
    """The first message: the preset's rules in a few lines, and how to answer."""
    r = resolve(rules)
    name = rules if isinstance(rules, str) else "custom"
    goal = f"a match to {r.target} points" if mode == "match" else "one hand"
    lines = [
        f"You are playing gin rummy ({name} rules), {goal}, against one opponent.",
        "Each turn: take the face-up card or draw from the stock, then discard one card. Melds are "
        "sets (3-4 cards of a rank) and runs (3+ cards in a row of one suit); the rest is deadwood "
        "(A=1, 2-10 face value, J Q K = 10).",
        f"You may knock (end the hand) when your deadwood after the discard is at most {r.knock_limit}"
        + (" (the first upcard's value under Oklahoma rules)" if r.oklahoma else "")
        + f"; gin (no deadwood) scores a {r.gin_bonus}-point bonus"
        + (f", big gin (all 11 cards melded, no discard) {r.big_gin_bonus}" if r.big_gin else "")
        + ". If the defender's deadwood is "
        + ("as low as or lower than" if r.knock_tie == "undercut" else "lower than")
        + f" the knocker's, it undercuts for a {r.undercut_bonus}-point bonus.",
        "Card names: rank A 2-9 T J Q K then suit s h d c (7h = seven of hearts, Td = ten of diamonds).",
        "Answer with exactly one of the legal moves listed, in square brackets: [draw], [take], [pass], "
        "[7h] (discard 7h), [knock 7h] (discard 7h face down and knock), [big gin].",
    ]
    return "\n".join(lines)


def seat_text(state: core.State, seat: int, taken=None) -> str:
    """What ``seat`` sees of the game in play (game 0 of ``state``), in words, ending with
    its legal moves when it is on move. Built from its own hand and the public record only."""
    s, opp = state, 1 - seat
    hand = s.hands_of(seat)[0]
    a = arrangement(hand)
    melds = " ".join(f"[{' '.join(m)}]" for m in a["melds"]) or "none"
    pile = [format_card(c) for c in s.pile[0, : s.pile_size[0]]]
    took = s.took[0, opp] & s.hands_of(opp)[0]  # taken from the pile and still held: seen by all
    threw = s.discarded[0, opp] | s.passed[0, opp]
    lines = [
        f"Hand {int(s.hand_no[0])}. Scores: you {int(s.scores[0, seat])}, opponent {int(s.scores[0, opp])} "
        f"(to {s.rules.target}). Stock: {int(s.stock_size[0])} cards. Knock limit: {int(s.knock_limit[0])}.",
        f"Your hand: {' '.join(cards(hand))}",
        f"  melds: {melds}; deadwood: {' '.join(a['deadwood_cards']) or 'none'} ({a['deadwood']} points)",
        f"Discard pile (top last): {' '.join(pile) if pile else 'empty'}"
        + (f"; the face-up card is {pile[-1]}" if pile else ""),
        f"The opponent holds {int(s.hands_of(opp)[0].sum())} cards; of them you know: "
        f"{' '.join(cards(took)) or 'none'} (taken from the pile). It threw or passed: "
        f"{' '.join(cards(threw)) or 'nothing yet'}.",
    ]
    if int(s.current[0]) == seat and not s.done[0]:
        legal = np.flatnonzero(core.legal_action_mask(s)[0])
        if taken is not None:
            lines.append(f"You just took {taken}: you may not discard it this turn.")
        lines.append("Your legal moves: " + ", ".join(f"[{move_words(x)}]" for x in legal))
    return "\n".join(lines)


def _public(action: int) -> str:
    """A move as the other seat sees it (a knock's card lies face down)."""
    a = int(action)
    if A.is_discard(a):
        return f"discarded {format_card(A.card_of(a))}"
    if A.is_knock(a):
        return "knocked (its discard face down)"
    return {
        A.DRAW_STOCK: "drew from the stock",
        A.TAKE_DISCARD: "took the face-up card",
        A.PASS: "passed",
        A.BIG_GIN: "declared big gin",
    }[a]


class GinRummyEnv(ta.Env):
    """Gin rummy in TextArena: two text players, or one against ``opponent`` (the module
    docstring)."""

    def __init__(
        self,
        rules="standard",
        mode: str = "match",
        opponent=None,
        seat: int = 0,
        error_allowance: int = 1,
    ):
        super().__init__()
        if not isinstance(rules, str) or rules not in PRESETS:
            raise ValueError(f"rules must be one of {', '.join(PRESETS)}, got {rules!r}")
        if mode not in core.MODES:
            raise ValueError(f"mode must be one of {', '.join(core.MODES)}, got {mode!r}")
        if isinstance(seat, bool) or seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, got {seat!r}")
        self.rules, self.mode, self.seat, self.error_allowance = rules, mode, seat, error_allowance
        self.opponent_spec = opponent
        self.bot = None if opponent is None else make_agent(opponent)
        self.players = 2 if opponent is None else 1

    # --------------------------------------------------------------- TextArena
    def reset(self, num_players: int, seed: int | None = None):
        if num_players != self.players:
            want = "2 (two text players)" if self.bot is None else f"1 (one text player against {self.opponent_spec})"
            raise ValueError(f"this gin rummy env takes num_players={want}, got {num_players}")
        if self.bot is None:
            self.state = ta.TwoPlayerState(num_players=2, seed=seed, error_allowance=self.error_allowance)
        else:
            self.state = ta.SinglePlayerState(num_players=1, seed=seed, error_allowance=self.error_allowance)
        self.state.reset(game_state={"moves": 0}, player_prompt_function=self._prompt)
        deal = secrets.randbits(core.SEED_BITS) if seed is None else core.check_seed(seed)
        self.game = core.init(1, self.rules, seed=deal, mode=self.mode)
        self._bot_moves()
        self._announce()

    def step(self, action: str):
        seat = self._text_seat()
        text = action if isinstance(action, str) else str(action)
        self.state.add_observation(
            from_id=self.state.current_player_id, message=text, observation_type=ta.ObservationType.PLAYER_ACTION
        )
        found = _BRACKETS.findall(text)
        words = found[-1] if found else text
        legal = [{"id": int(a), "label": move_words(a)} for a in np.flatnonzero(core.legal_action_mask(self.game)[0])]
        taken = int(self.game.taken[0])
        try:
            move = parse_move(words, legal, format_card(taken) if taken >= 0 else None)
        except ValueError as e:  # the parser's MoveError, or a card it cannot read (7q)
            self.state.set_invalid_move(reason=str(e))
            return self._finish_step()
        self._play(move, seat)
        self._bot_moves()
        if self.game.done[0]:
            self._outcome()
        else:
            self._announce()
        return self._finish_step()

    # ----------------------------------------------------------------- helpers
    def _prompt(self, player_id: int, game_state) -> str:
        return rules_text(self.rules, self.mode)

    def _text_id(self, seat: int) -> int:
        """TextArena's player id of an engine seat (a bot's seat has none)."""
        return 0 if self.bot is not None else seat

    def _text_seat(self) -> int:
        return int(self.game.current[0])

    def _finish_step(self):
        if self.bot is None:
            return self.state.step(rotate_player=False)
        return self.state.step()

    def _tell(self, seat: int, message: str) -> None:
        if self.bot is not None and seat != self.seat:
            return  # the bot reads its observation, not words
        self.state.add_observation(
            to_id=self._text_id(seat), message=message, observation_type=ta.ObservationType.GAME_MESSAGE
        )

    def _play(self, action: int, seat: int) -> None:
        g = self.game
        before = g.hands_of(seat)[0].copy()
        hand_no = int(g.hand_no[0])
        core.step(g, np.array([action]))
        mine = _public(action)
        if action == A.DRAW_STOCK:
            new = np.flatnonzero(g.hands_of(seat)[0] & ~before)
            mine = f"drew {format_card(new[0])} from the stock" if new.size else mine
        elif A.is_knock(action):
            mine = f"knocked, discarding {format_card(A.card_of(action))} face down"
        self._tell(seat, f"You {mine}.")
        self._tell(1 - seat, f"The opponent {_public(action)}.")
        if g.hand_ended[0]:
            self._hand_over(hand_no)

    def _hand_over(self, hand_no: int) -> None:
        g = self.game
        kind = core.HAND_KIND_NAMES[int(g.hand_kind[0])]
        hands = g.last_hands[0]
        for seat in (0, 1):
            opp = 1 - seat
            yours, theirs = arrangement(hands[seat]), arrangement(hands[opp])
            pts = int(g.hand_points[0, seat]) - int(g.hand_points[0, opp])
            self._tell(
                seat,
                f"Hand {hand_no} is over ({kind.replace('_', ' ')}): you score {int(g.hand_points[0, seat])}, "
                f"the opponent {int(g.hand_points[0, opp])} ({'+' if pts >= 0 else ''}{pts}). Your hand was "
                f"{' '.join(cards(hands[seat]))} ({yours['deadwood']} deadwood); the opponent's "
                f"{' '.join(cards(hands[opp]))} ({theirs['deadwood']} deadwood). Scores: you "
                f"{int(g.scores[0, seat])}, opponent {int(g.scores[0, opp])}.",
            )

    def _bot_moves(self) -> None:
        """The bot's moves until the text player's turn (or the end)."""
        g = self.game
        while self.bot is not None and not g.done[0] and int(g.current[0]) != self.seat:
            other = 1 - self.seat
            chosen = choose(self.bot, observe(g, other), core.legal_action_mask(g), g, np.array([other]))
            self._play(int(np.asarray(chosen).reshape(-1)[0]), other)

    def _announce(self) -> None:
        """The position and the legal moves to the text player now on move."""
        seat = self._text_seat()
        taken = int(self.game.taken[0])
        self._tell(seat, seat_text(self.game, seat, format_card(taken) if taken >= 0 else None))
        if self.bot is None:
            self.state.manually_set_current_player_id(seat)

    def _outcome(self) -> None:
        g = self.game
        final = g.final_scores[0] if self.mode == "match" else g.hand_points[0]
        a, b = int(final[0]), int(final[1])
        what = "match" if self.mode == "match" else "hand"
        reason = f"The {what} is over: {a} to {b} (seat 0 to seat 1)."
        winner = int(g.winner[0]) if self.mode == "match" else (0 if a > b else 1 if b > a else -1)
        if self.bot is None:
            if winner < 0:
                self.state.set_draw(reason=reason)
            else:
                self.state.set_winner(player_id=winner, reason=reason)
        else:
            reward = 0.0 if winner < 0 else (1.0 if winner == self.seat else -1.0)
            self.state.set_outcome(reward=reward, reason=reason)


def register() -> list:
    """Add the gin rummy envs to TextArena's registry (once); returns their ids."""
    from textarena.envs.registration import ENV_REGISTRY
    from textarena.wrappers import ActionFormattingWrapper, LLMObservationWrapper

    wrappers = [LLMObservationWrapper, ActionFormattingWrapper]
    ids = {ENV_ID: {}, VS_BOT_ID: {"opponent": "knock_early"}}
    ids |= {f"{ENV_ID}-{p}": {"rules": p} for p in PRESETS if p != "standard"}
    for env_id, kwargs in ids.items():
        if env_id not in ENV_REGISTRY:
            ta.register(id=env_id, entry_point=GinRummyEnv, default_wrappers=wrappers, **kwargs)
    return list(ids)


register()
