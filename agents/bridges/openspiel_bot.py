"""Any agent of this project as a bot in OpenSpiel's ``gin_rummy``: the seat's view and the
moves' translation (``agents.bridges.openspiel`` adds the evaluator and the checks).

Imports only numpy, pyspiel and ``ginenv`` (never torch or the rest of ``agents``): the
Kaggle bundle (``python -m agents.export --kaggle``) carries this module as it is.

``OpenSpielAgent(agent, game, player)`` is a ``pyspiel.Bot``. Each turn it builds the
seat's position from what that seat has seen (``seat_view``: its own hand, the upcard
and the discard pile, the stock's size, the cards the opponent took from the pile and
still holds, the cards each player threw and the upcards passed) through
``ginenv.view``'s engine builder, never from the opponent's hidden cards, and asks the
agent for a move. OpenSpiel's phases map as follows:

- FirstUpcard, Draw, Discard: the agent's move, translated (card ids differ: OpenSpiel
  orders suits s c d h, this project s h d c). A knock with card c is OpenSpiel's Knock
  then c. OpenSpiel's knock test counts the 11 cards' deadwood, which can refuse a knock
  this project's rules allow: the bot then discards c face up (``refused_knocks`` counts
  these).
- Knock (after the knock): the knocker lays its arrangement of least deadwood
  (``melds.best_melds``; runs longer than 5 split into OpenSpiel's melds of 3-5 cards),
  or, where OpenSpiel does not offer those melds, the one a search over its legal melds
  finds with the least deadwood.
- Layoff (the defender): a search over OpenSpiel's legal lay-offs and melds for the
  least deadwood left. The search applies OpenSpiel's own actions to copies of the
  state, and what it compares (the defender's remaining cards) depends only on the
  defender's hand and the melds laid face up.
- Wall (two stock cards left): this project's rules end the hand there as a dead hand,
  so the agent passes (OpenSpiel would let it take the upcard to knock).

OpenSpiel also lets a player discard the card it just took; this project's agents never
do (their mask forbids it). ``rules_for(params)`` maps the game's parameters to a
``Rules`` (the ``openspiel`` preset: no big gin, a tied knock scores 0).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from ginenv import actions as A
from ginenv import core
from ginenv.cards import CARD_VALUES, NUM_RANKS, parse_cards, to_hand
from ginenv.melds import best_melds, deadwood
from ginenv.observation import observe
from ginenv.rules import Rules

DRAW_UPCARD, DRAW_STOCK, PASS, KNOCK, MELD_BASE = 52, 53, 54, 55, 56
Phase = pyspiel.gin_rummy.Phase
_OS_SUIT_TO_OURS = (0, 3, 2, 1)  # OpenSpiel's suits s c d h; ours s h d c


def to_ours(card: int) -> int:
    """An OpenSpiel card id as this project's."""
    return _OS_SUIT_TO_OURS[card // NUM_RANKS] * NUM_RANKS + card % NUM_RANKS


def to_os(card: int) -> int:
    """This project's card id as OpenSpiel's."""
    return _OS_SUIT_TO_OURS.index(card // NUM_RANKS) * NUM_RANKS + card % NUM_RANKS


def rules_for(params: dict) -> Rules:
    """The ``Rules`` of an OpenSpiel gin_rummy game's parameters."""
    for name, want in (("num_ranks", 13), ("num_suits", 4), ("hand_size", 10)):
        if params.get(name, want) != want:
            raise ValueError(
                f"only the 52-card game with 10-card hands maps to this project's rules; {name} is {params[name]}"
            )
    return Rules.preset("openspiel").replace(
        knock_limit=int(params.get("knock_card", 10)),
        gin_bonus=int(params.get("gin_bonus", 25)),
        undercut_bonus=int(params.get("undercut_bonus", 25)),
        oklahoma=bool(params.get("oklahoma", False)),
    )


_INITIAL: dict = {}


def _initial_state(game):
    """A game's initial state, made once (OpenSpiel builds its meld tables each time)."""
    key = str(game)
    if key not in _INITIAL:
        _INITIAL[key] = game.new_initial_state()
    return _INITIAL[key]


_MELDS: dict = {}


def meld_ids(game) -> dict:
    """This project's meld (a frozenset of card ids) -> OpenSpiel's meld action."""
    key = str(game)
    if key not in _MELDS:
        state = _initial_state(game)
        out = {}
        for action in range(MELD_BASE, game.num_distinct_actions()):
            text = state.action_to_string(0, action).split("Action: ")[1]
            out[frozenset(int(c) for c in parse_cards([text[i : i + 2] for i in range(0, len(text), 2)]))] = action
        _MELDS[key] = out
    return _MELDS[key]


def seat_view(state, player: int, rules: Rules) -> core.State:
    """The position of ``player`` at an OpenSpiel decision (FirstUpcard, Draw or
    Discard), as a one-game engine state with that player on move, built only from what
    the seat has seen."""
    replay = _initial_state(state.get_game()).clone()
    mine, theirs, passed = [], [], []
    taken, turn = -1, 0
    for step in state.full_history():
        phase, upcard = replay.current_phase(), replay.upcard()
        if step.player >= 0:  # the players' moves are public; the chance draws are not read
            if step.action in (DRAW_UPCARD, DRAW_STOCK) and phase in (Phase.DRAW, Phase.FIRST_UPCARD):
                turn += 1
                taken = to_ours(upcard) if step.action == DRAW_UPCARD and step.player == player else -1
            elif phase == Phase.FIRST_UPCARD and step.action == PASS and step.player != player:
                passed.append(to_ours(upcard))
            elif phase == Phase.DISCARD and step.action < DRAW_UPCARD:
                (mine if step.player == player else theirs).append(to_ours(step.action))
                taken = -1
        replay.apply_action(step.action)
    phase = state.current_phase()
    upcard = state.upcard()
    pile = [to_ours(c) for c in state.discard_pile()] + ([to_ours(upcard)] if upcard is not None else [])
    if phase == Phase.FIRST_UPCARD:
        ours = core.FORCED_DRAW if all(state.pass_on_first_upcard()) else core.OFFER
    elif phase in (Phase.DRAW, Phase.DISCARD):
        ours = core.DRAW if phase == Phase.DRAW else core.DISCARD
    else:
        raise ValueError(f"no decision of this project's rules in OpenSpiel's phase {phase.name}")
    return core.from_view(
        [to_ours(c) for c in state.hands()[player]],
        pile,
        phase=ours,
        taken=taken,
        opponent_took=[to_ours(c) for c in state.known_cards()[1 - player]],
        opponent_discarded=theirs,
        opponent_passed=passed,
        my_discards=mine,
        dealer=player == 1,
        turn=turn,
        rules=rules,
        knock_limit=int(state.knock_card()),
    )


def least_deadwood_plan(state, player: int, phase) -> list:
    """OpenSpiel actions for ``player`` in ``phase`` (Knock after the discard, or Layoff)
    that leave it the least deadwood: a search over its legal actions, memoised on what
    is left in the hand."""
    memo = {}

    def search(st):
        if st.is_terminal() or st.current_phase() != phase or st.current_player() != player:
            return int(sum(CARD_VALUES[to_ours(c)] for c in st.hands()[player])), []
        key = (st.finished_layoffs(), tuple(sorted(st.hands()[player])))
        if key not in memo:
            best = None
            for action in st.legal_actions():
                value, rest = search(st.child(action))
                if best is None or value < best[0]:
                    best = (value, [action] + rest)
            memo[key] = best
        return memo[key]

    return search(state)[1]


def split_run(cards: list) -> list:
    """A meld as OpenSpiel's melds: sets whole, runs longer than 5 cut into 3-5 cards."""
    cards = sorted(cards)
    n = len(cards)
    if n <= 5:
        return [cards]
    first = 5 if n - 5 >= 3 else n - 3  # 6: 3+3, 7: 4+3, 8: 5+3, 9: 5+4, 10: 5+5
    return [cards[:first]] + split_run(cards[first:])


class OpenSpielAgent(pyspiel.Bot):
    """``agent`` (anything with ``act``) playing seat ``player`` of OpenSpiel's game."""

    def __init__(self, agent, game, player: int):
        pyspiel.Bot.__init__(self)
        self.agent, self.game, self.player = agent, game, player
        self.rules = rules_for(game.get_parameters())
        self.melds = meld_ids(game)
        self.refused_knocks = 0
        self.plan: list = []
        self.knock_card = None
        self.last = None

    def restart_at(self, state):
        self.plan, self.knock_card = [], None

    def step(self, state) -> int:
        phase = state.current_phase()
        legal = state.legal_actions()
        if phase in (Phase.FIRST_UPCARD, Phase.DRAW, Phase.DISCARD):
            return self._agent_move(state, legal)
        if phase == Phase.WALL:
            return PASS
        if phase == Phase.KNOCK and len(state.hands()[self.player]) == 11:
            card = to_os(self.knock_card) if self.knock_card is not None else None
            self.plan = []
            return card if card in legal else min(legal, key=lambda c: self._deadwood_without(state, c))
        if not self.plan or self.plan[0] not in legal:
            self.plan = self._knocker_plan(state) if phase == Phase.KNOCK else []
            if not self.plan or self.plan[0] not in legal:
                self.plan = least_deadwood_plan(state, self.player, phase)
        return self.plan.pop(0)

    def _agent_move(self, state, legal) -> int:
        position = seat_view(state, self.player, self.rules)
        obs, mask = observe(position, 0), core.legal_action_mask(position)
        # A searching agent reads the seat's position (never the hidden cards: it deals them anew).
        seen = {"state": position, "seats": np.zeros(1, np.int64)} if getattr(self.agent, "reads_state", False) else {}
        action = int(np.asarray(self.agent.act(obs, mask, **seen)).reshape(-1)[0])
        self.last = (obs[0], mask[0], action)  # the decision, as this project's engine would see it
        if A.is_knock(action):
            if KNOCK in legal:
                self.knock_card = A.card_of(action)
                return KNOCK
            self.refused_knocks += 1
            self.last = (obs[0], mask[0], A.discard(A.card_of(action)))
            return to_os(A.card_of(action))
        if action < A.KNOCK:
            return to_os(A.card_of(action))
        return {A.DRAW_STOCK: DRAW_STOCK, A.TAKE_DISCARD: DRAW_UPCARD, A.PASS: PASS}[action]

    def _deadwood_without(self, state, card: int) -> int:
        return int(deadwood(to_hand([to_ours(c) for c in state.hands()[self.player] if c != card])))

    def _knocker_plan(self, state) -> list:
        """The knocker's arrangement of least deadwood (``melds.best_melds``), as
        OpenSpiel's meld actions, then the pass that ends the laying."""
        groups, _ = best_melds(to_hand([to_ours(c) for c in state.hands()[self.player]]))
        plan = [self.melds.get(frozenset(part)) for m in groups for part in split_run([int(c) for c in m])]
        return plan + [PASS] if None not in plan else []
