"""An agent for kaggle-environments' ``open_spiel_gin_rummy`` arena that plays any agent spec.

``make_kaggle_agent(spec)`` returns ``agent(observation, configuration) -> {"submission":
action}``. Kaggle hands each agent ``serializedGameAndState``, the whole OpenSpiel state;
the agent rebuilds it and plays through ``agents.bridges.openspiel.OpenSpielAgent``, which reads
only the seat's own hand and what is public (``seat_view``), so the bot sees what a
person in that seat would. Needs the ``kaggle`` extra (kaggle-environments, open_spiel).

In a Kaggle notebook: ``env.run([make_kaggle_agent("checkpoints/champion"), "random"])``
with ``configuration={"includeLegalActions": True}`` (Kaggle's random agent reads them).
"""

from __future__ import annotations

from agents.extras import require

require("kaggle", what="the Kaggle agent (agents.bridges.kaggle)", main=__name__ == "__main__")

import pyspiel  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.bridges.openspiel import OpenSpielAgent  # noqa: E402

NO_ACTION = -1  # the arena's default action, for the calls that come with no state


def make_kaggle_agent(spec="checkpoints/champion", seed: int = 0):
    """A Kaggle agent function playing ``spec`` (a baseline name or a checkpoint)."""
    agent = make_agent(spec, seed=seed)
    bots: dict = {}

    def kaggle_agent(observation, configuration=None):
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

    return kaggle_agent
