"""Everything that chooses actions, learns, evaluates and serves.

``make_agent(spec, seed)`` turns a baseline name or a checkpoint path into an agent;
``load_policy(path)`` loads a trained policy. The baselines live in ``ginenv.baselines``
(pure numpy, so the environments can name them) and are re-exported here.
"""

from __future__ import annotations

from pathlib import Path

from agents.base import Agent
from ginenv.baselines import BASELINES, GinHunter, KnockEarly, Patient, RandomAgent, make_baseline
from ginenv.core import check_seed

#: The shipped bot: what the terminal game, the server and the Kaggle agent play by
#: default (docs/champion.md). ``checkpoints/champion``, the bot shipped before it, stays
#: loadable by its path.
SHIPPED = Path(__file__).resolve().parent.parent / "checkpoints" / "anticamper_priced"


def make_agent(spec, seed: int = 0):
    """A baseline name (``knock_early``, ``gin_hunter``, ``random``, ``patient``), a checkpoint
    directory or file (``<checkpoint>+search[=W]``: with search at decision time, see
    ``agents.training.search``), or an object that already has ``act``."""
    check_seed(seed)
    if hasattr(spec, "act") or (isinstance(spec, str) and spec in BASELINES):
        return make_baseline(spec, seed)
    if not isinstance(spec, (str, Path)) or not str(spec).strip():
        raise ValueError(
            f"agent spec must be a baseline name ({', '.join(BASELINES)}) or a checkpoint path, got {spec!r}"
        )
    if "+search" in str(spec):  # "<checkpoint>+search[=W]": the policy with search at decision time
        from agents.training.search import SearchAgent, parse_search

        parsed = parse_search(spec)
        if parsed is not None:
            return SearchAgent(load_policy(parsed[0]), worlds=parsed[1], seed=seed)
    path = Path(str(spec))
    if path.exists():
        return load_policy(path)
    raise ValueError(
        f"unknown agent {spec!r}: not a baseline ({', '.join(BASELINES)}) and no checkpoint at {path.resolve()}"
    )


def load_policy(path, seed: int = 0):
    """A checkpoint (run directory, step directory or policy file) as a ``Policy``
    (``agents.training.policy.load_policy``; imports torch)."""
    from agents.extras import require

    require("train", what=f"loading the checkpoint {path}")
    from agents.training.policy import load_policy as load

    return load(path, seed=seed)


__all__ = [
    "SHIPPED",
    "Agent",
    "BASELINES",
    "GinHunter",
    "KnockEarly",
    "Patient",
    "RandomAgent",
    "load_policy",
    "make_agent",
]
