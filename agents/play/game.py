"""One game between a person and an agent, behind every frontend (terminal, web, API).

``Game(opponent, rules, mode, seed, seat)`` holds one engine game (batch 1): the person
sits in ``seat``, the agent in the other. Without a seed the deal comes from 128 bits of
OS randomness (``secrets``): a seed is the whole deal, the agent's hand and the stock
included, so it is kept private while the game is in play (``view()`` shows it once the
game is over), and no search over a small seed space can find it from what the person
sees. ``play(action)`` applies the person's move
(an action id of ``ginenv.actions``; anything illegal is refused with the legal moves
named, nothing applied), then the agent's replies up to the person's next decision or
the end of the game. A hand that ends on the way is recorded in full (both hands, melds,
lay-offs, points), and in a match the next hand is dealt and played on to the person's
first decision. ``view()`` is what the person may see, as JSON-ready data: never a card
of the agent's hand or of the stock while a hand is in play.

``parse_move(text, legal)`` reads the terminal's move words (``draw``, ``take``,
``pass``, ``7h``, ``knock 7h``, ``gin 7h``, ``big gin``) into an action id.
"""

from __future__ import annotations

import secrets
import time

import numpy as np

from agents.base import choose
from agents.play.lang import move_label, phrase
from agents.registry import SHIPPED, make_agent
from ginenv import actions as A
from ginenv import core
from ginenv.cards import CARD_VALUES, RANKS, format_card, parse_cards
from ginenv.melds import best_melds
from ginenv.observation import observe
from ginenv.rules import resolve
from ginenv.scoring import score_hand

HUMAN, BOT = "human", "bot"


def cards(ids) -> list:
    """Card ids (or a bool hand of 52) as notation, sorted by suit then rank."""
    ids = np.flatnonzero(ids) if np.asarray(ids).dtype == bool else np.asarray(ids, np.int64)
    return [format_card(c) for c in sorted(int(c) for c in ids)]


def arrangement(hand) -> dict:
    """A hand sorted into its best melds, with the deadwood cards and count."""
    groups, dead = best_melds(hand)
    return {
        "melds": [cards(g) for g in groups],
        "deadwood_cards": cards(dead),
        "deadwood": int(CARD_VALUES[dead].sum()),
    }


def label(action: int) -> str:
    return A.describe(action)


class Game:
    """One game of a person (``seat``) against ``agent`` (anything with ``act``).

    ``bot_actions``: the agent's moves recorded by an earlier run of the same game
    (``Game.bot_actions``), played in order instead of asking the agent while they last,
    each checked legal: a stored game rebuilt without the agent's inference. Only for a
    ``pure`` agent (``agents.base``), whose moves the record then equals."""

    def __init__(
        self, agent, rules=None, mode: str = "match", seed: int | None = None, seat: int = 0, bot_actions=None
    ):
        if not callable(getattr(agent, "act", None)):
            raise ValueError(
                f"agent must have act(observations, action_masks): e.g. agents.make_agent('knock_early'), got {agent!r}"
            )
        if isinstance(seat, bool) or not isinstance(seat, int) or seat not in (0, 1):
            raise ValueError(f"seat must be the integer 0 or 1, got {seat!r}")
        if not isinstance(mode, str) or mode not in core.MODES:
            raise ValueError(f"mode must be one of {', '.join(core.MODES)}, got {mode!r}")
        seed = secrets.randbits(core.SEED_BITS) if seed is None else core.check_seed(seed)
        self.agent, self.rules, self.mode, self._seed, self.seat = agent, resolve(rules), mode, seed, seat
        self.rules_name = rules if isinstance(rules, str) else None
        self.actions: list = []  # the person's moves, in order: with the seeds, the whole game
        self.bot_actions: list = []  # the agent's moves, in order (a pure agent's are the seeds' and actions')
        if bot_actions is not None and not getattr(agent, "pure", False):
            raise ValueError(f"recorded bot moves replay only a pure agent (agents.base); {agent!r} is not")
        self._script = [] if bot_actions is None else [_action_id(a) for a in reversed(list(bot_actions))]
        self.history: list = []  # each finished hand: its moves and its result
        self.state = core.init(1, self.rules, seed=seed, mode=mode)
        self.upcard = format_card(self.state.pile[0, 0])  # this hand's first face-up card
        self.drawn = None  # the card the person just drew from the stock, until it discards
        self.results: list = []  # every finished hand, in order
        self.moves: list = []  # every move of this hand so far: {"player", "action", "label"}
        self.last_bot_moves: list = []
        self.bot_seconds = 0.0
        self.last_bot_moves = self._bot_moves()

    # ------------------------------------------------------------------- state
    @property
    def seed(self):
        """The deal's seed, once the game is over (None while it is in play)."""
        return self._seed if self.over else None

    @property
    def over(self) -> bool:
        return bool(self.state.done[0])

    @property
    def to_move(self) -> str | None:
        if self.over:
            return None
        return HUMAN if int(self.state.current[0]) == self.seat else BOT

    def legal_actions(self) -> list:
        """The person's legal moves as ``{"id", "label"}`` (none when it is not to move)."""
        if self.to_move != HUMAN:
            return []
        return [{"id": int(a), "label": label(a)} for a in np.flatnonzero(core.legal_action_mask(self.state)[0])]

    def observation(self):
        """The person's observation and mask (for a hint from a policy)."""
        return observe(self.state, self.seat)[0], core.legal_action_mask(self.state)[0]

    # ------------------------------------------------------------------- moves
    def play(self, action) -> list:
        """Apply the person's move, then the agent's replies; returns the agent's moves.
        ``ValueError`` (nothing applied) for an action that is not legal now."""
        legal = {a["id"] for a in self.legal_actions()}
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or int(action) not in legal:
            if self.to_move != HUMAN:
                raise ValueError("it is not your move: the game is over" if self.over else "it is not your move")
            names = ", ".join(f"{a['id']} ({a['label']})" for a in self.legal_actions())
            raise ValueError(f"illegal action {action!r}; legal actions: {names}")
        self._step(int(action), HUMAN)
        self.last_bot_moves = self._bot_moves()
        return self.last_bot_moves

    def _step(self, action: int, who: str) -> None:
        s = self.state
        self.moves.append({"player": who, "action": action, "label": label(action), "hand": int(s.hand_no[0])})
        before = s.hands_of(self.seat)[0].copy() if who == HUMAN and action == A.DRAW_STOCK else None
        core.step(s, np.array([action]))
        # The card the person drew from the stock (its own card: shown until it discards).
        self.drawn = int(np.flatnonzero(s.hands_of(self.seat)[0] & ~before)[0]) if before is not None else None
        (self.actions if who == HUMAN else self.bot_actions).append(action)
        if s.hand_ended[0]:
            self.results.append(self._result())
            self.history.append({"upcard": self.upcard, "moves": self.moves, "result": self.results[-1]})
            self.moves = []
            if not s.done[0]:  # the next hand is dealt
                self.upcard = format_card(s.pile[0, 0])

    def _bot_moves(self) -> list:
        out = []
        start = time.perf_counter()
        while self.to_move == BOT:
            s = self.state
            other = 1 - self.seat
            mask = core.legal_action_mask(s)
            if self._script:  # a rebuilt game: the agent's recorded move
                action = self._script.pop()
                if not mask[0, action]:
                    raise ValueError(f"replay: the bot's recorded move {action} is not legal here")
            else:
                chosen = choose(self.agent, observe(s, other), mask, s, np.array([other]))
                action = int(np.asarray(chosen).reshape(-1)[0])
            shown = self._public_label(action)
            hand = int(s.hand_no[0])
            self._step(action, BOT)
            out.append({"action": action if not A.is_knock(action) else None, "label": shown, "hand": hand})
        self.bot_seconds = time.perf_counter() - start  # how long the bot thought over these moves
        return out

    def _public_label(self, action: int) -> str:
        """What the person sees of the agent's move: a knock's card lies face down until
        the hand is laid out, which the hand's result then shows."""
        return "knock" if A.is_knock(action) else label(action)

    # ------------------------------------------------------------------ results
    def _result(self) -> dict:
        """The hand that just ended, laid out: both hands, melds, lay-offs, points."""
        s = self.state
        kind = core.HAND_KIND_NAMES[int(s.hand_kind[0])]
        hands = s.last_hands[0]
        me, bot = self.seat, 1 - self.seat
        who = {me: HUMAN, bot: BOT}
        out = {
            "hand": int(s.hand_no[0]) - (0 if s.game_ended[0] else 1),
            "kind": kind,
            "points": {HUMAN: int(s.hand_points[0, me]), BOT: int(s.hand_points[0, bot])},
            "hands": {who[p]: arrangement(hands[p]) for p in (0, 1)},
            "knocker": None,
            "layoffs": [],
        }
        knocker = int(s.last_knocker[0])
        if knocker >= 0:
            r = score_hand(
                hands[knocker],
                hands[1 - knocker],
                self.rules,
                big_gin=kind == "big_gin",
                knock_limit=int(s.hand_knock_limit[0]),
            )
            out["knocker"] = who[knocker]
            out["knock_card"] = format_card(s.knock_card[0]) if s.knock_card[0] >= 0 else None
            out["hands"][who[knocker]] = {
                "melds": [cards(m) for m in r.knocker_melds],
                "deadwood_cards": cards(r.knocker_deadwood_cards),
                "deadwood": int(r.knocker_deadwood),
            }
            # The house rule: the knocker's cards are arranged for its best score against
            # the defender's lay-offs, which may differ from the least-deadwood one shown
            # during play; say so where it does.
            shown = arrangement(hands[knocker])
            out["rearranged"] = sorted(map(tuple, shown["melds"])) != sorted(
                map(tuple, out["hands"][who[knocker]]["melds"])
            )
            out["hands"][who[1 - knocker]] = {
                "melds": [cards(m) for m in r.defender_melds],
                "deadwood_cards": cards(r.defender_deadwood_cards),
                "deadwood": int(r.defender_deadwood),
            }
            out["layoffs"] = [{"card": format_card(c), "onto": cards(r.knocker_melds[m])} for c, m in r.layoffs]
        if s.game_ended[0] and self.mode == "match":
            out["match"] = {
                "final": {HUMAN: int(s.final_scores[0, me]), BOT: int(s.final_scores[0, bot])},
                "bonuses": {HUMAN: int(s.bonus_points[0, me]), BOT: int(s.bonus_points[0, bot])},
                "winner": None if s.winner[0] < 0 else who[int(s.winner[0])],
            }
            out["match"]["bonus_parts"] = self._bonus_parts(out)
        return out

    def _bonus_parts(self, last: dict) -> dict:
        """The end-of-match bonuses by kind, as the rule texts list them: the game bonus
        (to whoever reached the target), a line bonus for each hand won, and the shutout
        (the rest of the engine's bonus, for the preset's kind of shutout)."""
        sheet = [r["points"] for r in [*self.results, last]]
        scores = {p: sum(x[p] for x in sheet) for p in (HUMAN, BOT)}
        leader = max((HUMAN, BOT), key=lambda p: scores[p])
        parts = {}
        for p in (HUMAN, BOT):
            game = self.rules.game_bonus if p == leader else 0
            line = self.rules.line_bonus * sum(x[p] > 0 for x in sheet)
            parts[p] = {"game": game, "line": line, "shutout": last["match"]["bonuses"][p] - game - line}
        return parts

    # ------------------------------------------------------------------- record
    def record(self) -> dict:
        """The game's record, JSON-ready: every finished hand's moves and result (both
        hands laid out), the hand in play as the person has seen it, and once the game
        is over its seed (which replays the deal)."""
        return {
            "rules": self.rules_name or self.rules.to_dict(),
            "mode": self.mode,
            "seat": self.seat,
            "hands": self.history,
            "in_play": None if self.over else {"moves": [dict(m) for m in self.moves]},
            "over": self.over,
            "seed": str(self._seed) if self.over else None,
        }

    def replay(self, actions) -> None:
        """Play the person's ``actions`` (action ids) in order (a stored game rebuilt);
        ``ValueError`` naming the first that is not an action id or not legal then, or
        if recorded bot moves (``bot_actions``) are left over at the end."""
        for k, a in enumerate(actions):
            try:
                self.play(a)
            except ValueError as e:
                raise ValueError(f"replay: move {k} ({a!r}) cannot be played: {e}") from None
        if self._script:
            raise ValueError(f"replay: {len(self._script)} recorded bot moves were never reached")

    # ---------------------------------------------------------------------- view
    def view(self) -> dict:
        """What the person may see now, JSON-ready. Built only from the person's own
        hand, the face-up cards, the public record of the hand and the scores."""
        s = self.state
        me, bot = self.seat, 1 - self.seat
        pile = [format_card(c) for c in s.pile[0, : s.pile_size[0]]]
        hand = s.hands_of(me)[0]
        took = s.took[0, bot] & s.hands_of(bot)[0]  # taken from the pile and still held: seen by all
        taken = int(s.taken[0])
        out = {
            "mode": self.mode,
            "seat": me,
            "phase": core.PHASE_NAMES[int(s.phase[0])],
            "to_move": self.to_move,
            "hand_no": int(s.hand_no[0]),
            "dealer": HUMAN if int(s.dealer[0]) == me else BOT,
            "hand": cards(hand),
            "arrangement": arrangement(hand),
            "taken": format_card(taken) if taken >= 0 and self.to_move == HUMAN else None,
            "drawn": format_card(self.drawn) if self.drawn is not None and self.to_move == HUMAN else None,
            "stock_size": int(s.stock_size[0]),
            "discard_pile": pile,
            "opponent_took": cards(took),
            "opponent_discarded": cards(s.discarded[0, bot] | s.passed[0, bot]),
            "opponent_cards": int(s.hands_of(bot)[0].sum()),
            "knock_limit": int(s.knock_limit[0]),
            "scores": {HUMAN: int(s.scores[0, me]), BOT: int(s.scores[0, bot])},
            "target": self.rules.target,
            "legal_actions": self.legal_actions(),
            "moves": list(self.moves),  # this hand's moves (a knock ends the hand)
            "bot_moves": self.last_bot_moves,
            "over": self.over,
        }
        if self.over:  # the whole deal is known now: the seed may be shown (a string: 128 bits)
            out["seed"] = str(self._seed)
        if self.results:
            out["result"] = self.results[-1]
            out["hands_played"] = len(self.results)
        # The score sheet: each finished hand's points (public once the hand is over).
        out["sheet"] = [{"hand": r["hand"], "kind": r["kind"], **r["points"]} for r in self.results]
        return out


class MoveError(ValueError):
    """A typed move that cannot be played, with why, in the language it was asked in."""


def _action_id(a) -> int:
    if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not 0 <= int(a) < A.NUM_ACTIONS:
        raise ValueError(f"replay: a recorded bot move must be an action id 0..{A.NUM_ACTIONS - 1}, got {a!r}")
    return int(a)


def parse_move(text: str, legal: list, taken: str | None = None, lang: str = "en") -> int:
    """A typed move as an action id among ``legal`` (``{"id", "label"}``): ``draw``,
    ``take``, ``pass``, a card (``7h``: discard it), ``knock 7h`` or ``gin 7h``, ``big gin``
    (English words: the terminal turns ``lang``'s into them first). ``taken`` is the card
    just taken from the pile (it may not be discarded). A ``MoveError`` (a ``ValueError``)
    says in ``lang`` what was wrong (an unknown command, a missing card, why a move is not
    legal) and what is legal."""

    def error(key, **fields):
        return MoveError(phrase(lang, key, **fields))

    words = text.strip().lower().split()
    ids = {a["id"] for a in legal}
    named = {"draw": A.DRAW_STOCK, "stock": A.DRAW_STOCK, "take": A.TAKE_DISCARD, "pass": A.PASS}
    commands = phrase(lang, "t_type")
    if not words:
        raise error("e_empty")
    if len(words) == 1 and words[0] in named:
        action = named[words[0]]
    elif words in (["big", "gin"], ["biggin"]):
        action = A.BIG_GIN
    elif words[0] in ("knock", "gin") and len(words) != 2:
        raise error("e_needs_card", word=phrase(lang, "c_knock") if words[0] == "knock" else "gin")
    elif len(words) == 2 and words[0] in ("knock", "gin"):
        action = A.knock(_one_card(words[1], lang))
    elif len(words) == 1:
        if not _looks_like_card(words[0]):
            raise error("e_unknown", word=words[0], commands=commands)
        action = A.discard(_one_card(words[0], lang))
    else:
        raise error("e_unreadable", text=text.strip(), commands=commands)
    if action not in ids:
        legal_moves = ", ".join(move_label(lang, a["id"]) for a in legal)
        raise error("e_illegal", why=_why_not(action, legal, taken, lang), legal=legal_moves)
    return action


def _looks_like_card(token: str) -> bool:
    """A rank then one more letter (``7h``, ``10d``, ``9z``): read as a card (and told if
    it is a bad one), anything else as a command."""
    return len(token) >= 2 and token[:-1] in {r.lower() for r in RANKS} | {"10"}


def _why_not(action: int, legal: list, taken: str | None, lang: str = "en") -> str:
    """Why ``action`` is not legal now, in words of ``lang``."""
    ids = {a["id"] for a in legal}
    if A.is_discard(action) or A.is_knock(action):
        card = format_card(A.card_of(action))
        if not ids & set(range(A.DRAW_STOCK)):
            return phrase(lang, "e_draw_first", move=move_label(lang, action))
        if taken is not None and card == taken:
            return phrase(lang, "e_just_taken", card=card)
        if A.is_knock(action) and A.discard(A.card_of(action)) in ids:
            return phrase(lang, "e_over_limit", card=card)
        return phrase(lang, "e_not_held", card=card)
    return phrase(lang, "e_not_now", move=move_label(lang, action))


def _one_card(token: str, lang: str = "en") -> int:
    ids = parse_cards(token)
    if len(ids) != 1:
        raise MoveError(phrase(lang, "e_one_card", token=token))
    return int(ids[0])


def hint_policy(opponent):
    """The policy whose probabilities give hints: the opponent if it is a trained policy,
    else the shipped bot (None if neither is at hand)."""
    if hasattr(opponent, "probabilities"):
        return opponent
    try:
        return make_agent(str(SHIPPED))
    except (ValueError, ImportError):
        return None


def hint(game: Game, policy, k: int = 3, search=None) -> list:
    """The ``k`` moves ``policy`` (anything with ``probabilities(obs, mask)``) likes best
    for the person's position: ``{"id", "label", "probability"}``, best first. With
    ``search`` (a ``SearchAgent`` on that policy) those moves and the search's own
    candidates are played out in sampled worlds: each also has ``"value"`` and its
    standard error ``"se"`` in ``"unit"``: ``"points"`` (the mean points of the hand after
    it, the person's minus the bot's) or, where the search values by the match (``:match``,
    the expert level's) in a match, ``"match"`` (the person's mean chance of winning the
    match after the hand, 0 to 1); the first is the search's choice (the policy's unless a
    move beats it by two standard errors)."""
    if game.to_move != HUMAN:
        return []
    obs, mask = game.observation()
    p = np.asarray(policy.probabilities(obs, mask), np.float64).reshape(-1)
    best = [int(a) for a in np.argsort(-p, kind="stable")[:k] if mask[a]]
    if search is None:
        return [{"id": a, "label": label(a), "probability": round(float(p[a]), 4)} for a in best]
    weighed = search.analyse(obs, mask, game.state, game.seat, moves=best)
    unit = search.unit(game.state)
    digits = 4 if unit == "match" else 2
    return [
        {
            "id": m["id"],
            "label": label(m["id"]),
            "probability": round(m["probability"], 4),
            "value": round(m["value"], digits),
            "se": round(min(m["se"], 999.0), digits),
            "unit": unit,
        }
        for m in weighed
    ]
