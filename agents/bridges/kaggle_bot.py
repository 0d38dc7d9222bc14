"""The agent function of Kaggle's ``open_spiel_gin_rummy`` arena around any agent:
``kaggle_agent(agent)`` -> ``agent(observation, configuration) -> {"submission": action}``.

Kaggle hands each agent ``serializedGameAndState``, the whole OpenSpiel state; the
function rebuilds it and plays through ``OpenSpielAgent``, which reads only the seat's
own hand and what is public (``seat_view``), so the bot sees what a person in that seat
would. Imports only pyspiel and the OpenSpiel bot (``agents.bridges.openspiel_bot``):
the Kaggle bundle (``python -m agents.export --kaggle``) carries this module as it is.
Whatever the agent raises, the function answers a legal move (``fallback``, logged on
stderr and kept in ``FALLBACKS``): a bug costs a move, never the arena's game.
"""

from __future__ import annotations

import sys

import pyspiel

from agents.bridges.openspiel_bot import OpenSpielAgent

NO_ACTION = -1  # the arena's default action, for the calls that come with no state


def kaggle_agent(agent):
    """A Kaggle agent function playing ``agent`` (anything with ``act``)."""
    bots: dict = {}

    def play(observation, configuration=None):
        blob = observation.get("serializedGameAndState")
        if not blob:  # the arena's first call comes before any state: nothing to play yet
            return {"submission": NO_ACTION}
        state = None
        try:
            _, state = pyspiel.deserialize_game_and_state(blob)
            state = getattr(state, "__wrapped__", state)  # Kaggle's proxy wraps OpenSpiel's own state
            player = int(observation["currentPlayer"])
            key = (str(state.get_game()), player)
            if key not in bots:
                bots[key] = OpenSpielAgent(agent, state.get_game(), player)
            action = int(bots[key].step(state))
            if action not in state.legal_actions():  # the arena forfeits an illegal move: never send one
                raise ValueError(f"the agent chose {action}, not a legal action here")
            return {"submission": action}
        except Exception as e:  # never forfeit the arena's game: a legal move instead, logged
            return {"submission": fallback(observation, state, e)}

    return play


def fallback(observation, state, error: Exception) -> int:
    """A legal move when the agent raised: the first of the state's legal actions (or of
    the observation's, when the state itself could not be read), ``NO_ACTION`` if none is
    known; the error is logged on stderr (the arena keeps each agent's log)."""
    legal = []
    try:
        if state is not None:
            legal = list(state.legal_actions())
    except Exception:  # the fallback must not raise either
        legal = []
    legal = legal or list(observation.get("legalActions") or [])
    action = int(legal[0]) if legal else NO_ACTION
    print(f"ginbot: the agent raised {type(error).__name__}: {error}; playing legal action {action}", file=sys.stderr)
    FALLBACKS.append((type(error).__name__, str(error), action))
    return action


#: Every fallback taken in this process: ``(error type, message, action played)``.
FALLBACKS: list = []
