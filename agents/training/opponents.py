"""Who sits opposite the learner in each training game, and how they move.

Each episode draws, by the config's ``opponents`` shares, one of ``OPPONENT_KINDS``:
the learner itself (both seats train), a snapshot from the pool of past learners, or a
baseline; and the learner's seat, 0 or 1. Only the learner's decisions train it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from agents.training.config import OPPONENT_KINDS, Config
from agents.training.network import ActorCritic
from ginenv.baselines import BASELINES

SELF, SNAPSHOT, FROZEN = (OPPONENT_KINDS.index(k) for k in ("self", "snapshot", "frozen"))


@dataclass
class Opponents:
    """The opponent of each game (``(N,)`` arrays) and what they need to move."""

    mix: np.ndarray  # (len(OPPONENT_KINDS),) float64: the shares, normalised
    baselines: dict  # name -> baseline agent, one per baseline (seeded apart)
    kind: np.ndarray  # (N,) int64: index into OPPONENT_KINDS
    learner_seat: np.ndarray  # (N,) int8: the learner's seat where the opponent is not itself
    snapshot: np.ndarray  # (N,) int64: index into pool, where kind is snapshot
    pool: list = field(default_factory=list)  # past learners' networks, oldest first
    frozen: object = None  # the config's frozen checkpoint's network (never trained), if any


def make_opponents(config: Config, rng: np.random.Generator) -> Opponents:
    """Opponents for ``config.num_envs`` games, the first draw made with ``rng``."""
    n = config.num_envs
    opp = Opponents(
        mix=np.array(config.opponent_mix(), np.float64),
        baselines={name: cls(seed=config.seed + i) for i, (name, cls) in enumerate(BASELINES.items())},
        kind=np.zeros(n, np.int64),
        learner_seat=np.zeros(n, np.int8),
        snapshot=np.zeros(n, np.int64),
    )
    assign(opp, np.arange(n), rng)
    return opp


def assign(opp: Opponents, games: np.ndarray, rng: np.random.Generator) -> None:
    """Draw the opponent and the learner's seat of the games ``games`` (new episodes)."""
    if not len(games):
        return
    mix = opp.mix.copy()
    if not opp.pool:  # no snapshot yet: play itself instead
        mix[SELF] += mix[SNAPSHOT]
        mix[SNAPSHOT] = 0.0
    opp.kind[games] = rng.choice(len(OPPONENT_KINDS), size=len(games), p=mix)
    opp.learner_seat[games] = rng.integers(0, 2, size=len(games))
    opp.snapshot[games] = rng.integers(0, max(len(opp.pool), 1), size=len(games))


def learner_moves(opp: Opponents, mover: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: the learner makes this move (it plays both seats against itself)."""
    return (opp.kind == SELF) | (mover == opp.learner_seat)


def _sample(net: ActorCritic, rows, obs, mask, actions, device) -> None:
    """``actions[rows]`` sampled from ``net``'s actor (its critic is not needed)."""
    with torch.no_grad():
        dist = net.action_dist(torch.from_numpy(obs[rows]).to(device), torch.from_numpy(mask[rows]).to(device))
        actions[rows] = dist.sample().cpu().numpy()


def act(
    opp: Opponents, games: np.ndarray, obs: np.ndarray, mask: np.ndarray, actions: np.ndarray, device: torch.device
) -> None:
    """Fill ``actions[games]`` with the opponents' moves (games the learner does not move)."""
    for k, kind in enumerate(OPPONENT_KINDS):
        idx = games[opp.kind[games] == k]
        if not idx.size or k == SELF:
            continue
        if k == FROZEN:
            _sample(opp.frozen, idx, obs, mask, actions, device)
        elif k == SNAPSHOT:
            for s in np.unique(opp.snapshot[idx]):
                _sample(opp.pool[s], idx[opp.snapshot[idx] == s], obs, mask, actions, device)
        else:
            actions[idx] = opp.baselines[kind].act(obs[idx], mask[idx])


def add_snapshot(opp: Opponents, model: ActorCritic, pool_size: int, device: torch.device) -> None:
    """A frozen copy of ``model`` joins the pool; the oldest leaves past ``pool_size``."""
    snap = ActorCritic(model.spec).to(device)
    snap.load_state_dict(model.state_dict())
    opp.pool = (opp.pool + [snap])[-pool_size:]
