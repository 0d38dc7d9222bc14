"""An agent for kaggle-environments' ``open_spiel_gin_rummy`` arena that plays any agent spec.

``make_kaggle_agent(spec)`` returns ``agent(observation, configuration) -> {"submission":
action}`` (``agents.bridges.kaggle_bot``: the seat sees only what a person in it would).
Needs the ``kaggle`` extra (kaggle-environments, open_spiel). To submit a checkpoint to
Kaggle, bundle it: ``python -m agents.export CHECKPOINT --kaggle submission.tar.gz``.

In a Kaggle notebook: ``env.run([make_kaggle_agent(), "random"])`` (the shipped bot)
with ``configuration={"includeLegalActions": True}`` (Kaggle's random agent reads them).
"""

from __future__ import annotations

from agents.extras import require

require("kaggle", what="the Kaggle agent (agents.bridges.kaggle)", main=__name__ == "__main__")

from agents.bridges.kaggle_bot import NO_ACTION, kaggle_agent  # noqa: E402, F401 (NO_ACTION re-exported)
from agents.registry import SHIPPED, make_agent  # noqa: E402


def make_kaggle_agent(spec=SHIPPED, seed: int = 0):
    """A Kaggle agent function playing ``spec`` (a baseline name or a checkpoint; the
    shipped bot by default)."""
    return kaggle_agent(make_agent(spec, seed=seed))
