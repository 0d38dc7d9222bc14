"""The agent function of Kaggle's ``open_spiel_gin_rummy`` arena around any agent:
``kaggle_agent(agent)`` -> ``agent(observation, configuration) -> {"submission": action}``.

Kaggle hands each agent ``serializedGameAndState``, the whole OpenSpiel state; the
function rebuilds it and plays through ``OpenSpielAgent``, which reads only the seat's
own hand and what is public (``seat_view``), so the bot sees what a person in that seat
would. Imports only pyspiel and the OpenSpiel bot (``agents.bridges.openspiel_bot``):
the Kaggle bundle (``python -m agents.export --kaggle``) carries this module as it is.
"""

from __future__ import annotations

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
        _, state = pyspiel.deserialize_game_and_state(blob)
        state = getattr(state, "__wrapped__", state)  # Kaggle's proxy wraps OpenSpiel's own state
        player = int(observation["currentPlayer"])
        key = (str(state.get_game()), player)
        if key not in bots:
            bots[key] = OpenSpielAgent(agent, state.get_game(), player)
        return {"submission": int(bots[key].step(state))}

    return play
