"""Everything that chooses actions: the agent interface, baselines and trained policies.

``make_agent(spec, seed)`` turns a baseline name or a checkpoint path into an agent.
"""

from __future__ import annotations

from pathlib import Path

from agents.base import Agent
from agents.baselines import BASELINES, GinHunter, KnockEarly, Patient, RandomAgent


def make_agent(spec, seed: int = 0):
    """A baseline name (``random``, ``knock_early``, ``gin_hunter``, ``patient``), a checkpoint
    directory or file, or an object that already has ``act``."""
    if hasattr(spec, "act"):
        return spec
    if isinstance(spec, str) and spec in BASELINES:
        return BASELINES[spec](seed=seed)
    path = Path(str(spec))
    if path.exists():
        from agents.policy import load_policy

        return load_policy(path)
    raise ValueError(f"unknown agent {spec!r}: not a baseline ({', '.join(BASELINES)}) "
                     f"and no checkpoint at {path.resolve()}")


__all__ = ["Agent", "BASELINES", "GinHunter", "KnockEarly", "Patient", "RandomAgent", "make_agent"]
