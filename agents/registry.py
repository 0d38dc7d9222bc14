"""The ground floor of ``agents``: an agent spec -> an agent, the baselines' names, the
checkpoint loader and where the shipped bot lives. Every room imports these from here
(never from the package's ``__init__``, which only hands them on).

An agent spec is a baseline name (``BASELINES``), ``shipped`` (the shipped bot, which
travels inside the package), ``expert`` (the shipped bot searching at decision time),
a checkpoint directory or file, either of those with
``+search[=W]`` (the policy with search at decision time; ``+search`` alone at the
expert level's budget), or an object with ``act``.

The shipped bot's location and name are ``agents.bots``'s, handed on here.
"""

from __future__ import annotations

from pathlib import Path

from agents.bots import SHIPPED, SHIPPED_NAME, checkpoint_path
from ginenv.baselines import BASELINES, make_baseline
from ginenv.core import check_seed

#: The expert level's name as an agent spec: the shipped bot with search at decision time.
EXPERT_NAME = "expert"


def with_search(agent, seed: int = 0, budget: str | None = None):
    """``agent`` (a trained policy) with search at decision time at ``budget`` (as in
    ``+search=...``; default the expert level's); ``ValueError`` for an agent that is no
    trained policy."""
    if not hasattr(agent, "probabilities") or not hasattr(agent, "model"):
        raise ValueError(f"search needs a trained policy to search with, not {getattr(agent, 'name', agent)!r}")
    from agents.training.search import EXPERT_BUDGET, SearchAgent, parse_search

    _, options = parse_search(f"policy+search={budget or EXPERT_BUDGET}")
    return SearchAgent(agent, seed=seed, **options)


def make_agent(spec, seed: int = 0):
    """An agent from a spec (the module docstring): a baseline name (``knock_early``,
    ``gin_hunter``, ``random``, ``patient``, ``camper``, ``marjj``), ``shipped``, a
    checkpoint directory or file (``<checkpoint>+search[=W]``: with search at decision
    time, see ``agents.training.search``), or an object that already has ``act``."""
    check_seed(seed)
    if hasattr(spec, "act") or (isinstance(spec, str) and spec in BASELINES):
        return make_baseline(spec, seed)
    if not isinstance(spec, (str, Path)) or not str(spec).strip():
        raise ValueError(
            f"agent spec must be a baseline name ({', '.join(BASELINES)}), {SHIPPED_NAME!r} or a checkpoint "
            f"path, got {spec!r}"
        )
    if str(spec) == EXPERT_NAME:  # the shipped bot, searching at the expert level's budget
        return with_search(load_policy(SHIPPED), seed=seed)
    if "+search" in str(spec):  # "<checkpoint>+search[=W]": the policy with search at decision time
        from agents.training.search import SearchAgent, parse_search

        parsed = parse_search(spec)
        if parsed is not None:
            return SearchAgent(load_policy(parsed[0]), seed=seed, **parsed[1])
    path = checkpoint_path(spec)
    if path.exists():
        return load_policy(path)
    raise ValueError(
        f"unknown agent {spec!r}: not a baseline ({', '.join(BASELINES)}), not {SHIPPED_NAME!r} and no "
        f"checkpoint at {path.resolve()}"
    )


def load_policy(path, seed: int = 0):
    """A checkpoint (run directory, step directory, policy file, or ``shipped``) as a
    ``Policy`` (``agents.training.policy.load_policy``; imports torch)."""
    from agents.extras import require

    require("train", what=f"loading the checkpoint {path}")
    from agents.training.policy import load_policy as load

    return load(checkpoint_path(path), seed=seed)


__all__ = [
    "BASELINES",
    "EXPERT_NAME",
    "SHIPPED",
    "SHIPPED_NAME",
    "checkpoint_path",
    "load_policy",
    "make_agent",
    "with_search",
]
