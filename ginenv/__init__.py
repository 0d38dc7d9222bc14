"""ginenv: exact, fast Gin Rummy for reinforcement learning.

Layers, bottom up: ``cards`` (ids and notation), ``melds`` (deadwood maths, batched),
``rules`` (the presets as data), ``scoring`` (end of a hand and of a match), ``actions``
(action ids) and ``core`` (the batched game engine).
"""

import gymnasium

from ginenv.cards import format_cards, parse_cards, to_hand
from ginenv.gin_rummy_v0 import env, raw_env  # noqa: E402
from ginenv.melds import best_melds, deadwood, deadwood_after_discard
from ginenv.rules import PRESETS, Rules
from ginenv.scoring import score_hand, score_hands, score_match
from ginenv.single import SingleAgentEnv  # noqa: E402
from ginenv.vector import VectorEnv  # noqa: E402

if "ginenv/GinRummy-v0" not in gymnasium.registry:
    gymnasium.register(
        id="ginenv/GinRummy-v0",
        entry_point="ginenv.single:SingleAgentEnv",
        vector_entry_point="ginenv.vector_env:GinRummyVectorEnv",
    )

# PettingZoo's registry (PettingZoo 1.27 has one; older versions are served by
# ``ginenv.env()`` and the table modules directly): pettingzoo.make("aec", "ginenv/GinRummy-v0").
#: The AEC environments this package registers with PettingZoo: id -> (entry point,
#: default keyword arguments). Each is the env with PettingZoo's standard wrappers.
PETTINGZOO_ENVS = {
    "ginenv/GinRummy-v0": ("ginenv.gin_rummy_v0:env", {}),
    "ginenv/GinRummyTable-v0": ("ginenv.gin_rummy_table_v0:env", {"num_players": 3}),
    "ginenv/GinRummyTeams-v0": ("ginenv.gin_rummy_table_v0:env", {"num_players": 4}),
}


def _register_pettingzoo() -> None:
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # PettingZoo before 1.27: no registry
        return
    for env_id, (entry_point, kwargs) in PETTINGZOO_ENVS.items():
        if env_id not in aec_registry:
            register("aec", env_id, entry_point=entry_point, kwargs=kwargs)


_register_pettingzoo()

from ginenv import core as _core  # noqa: E402

if _core._announced and _core._announced[0]:  # the first run here: the whole compile now, once
    _core.warm_up()

__all__ = [
    "SingleAgentEnv",
    "VectorEnv",
    "env",
    "raw_env",
    "PRESETS",
    "Rules",
    "best_melds",
    "deadwood",
    "deadwood_after_discard",
    "format_cards",
    "parse_cards",
    "score_hand",
    "score_hands",
    "score_match",
    "to_hand",
]
