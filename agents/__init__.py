"""Everything that chooses actions, learns, evaluates and serves.

``make_agent(spec, seed)`` turns a baseline name, ``shipped`` or a checkpoint path into
an agent; ``load_policy(path)`` loads a trained policy. Both live in ``agents.registry``
(the ground floor every room imports from); the baselines live in ``ginenv.baselines``
(pure numpy, so the environments can name them). This file only hands them on.
"""

from __future__ import annotations

from agents.base import Agent
from agents.registry import SHIPPED, SHIPPED_NAME, load_policy, make_agent
from ginenv.baselines import BASELINES, GinHunter, KnockEarly, Marjj, Patient, RandomAgent

__all__ = [
    "SHIPPED",
    "SHIPPED_NAME",
    "Agent",
    "BASELINES",
    "GinHunter",
    "KnockEarly",
    "Marjj",
    "Patient",
    "RandomAgent",
    "load_policy",
    "make_agent",
]
