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

SELF, SNAPSHOT, FROZEN, EXPLOITER = (OPPONENT_KINDS.index(k) for k in ("self", "snapshot", "frozen", "exploiter"))


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
    pfsp: float = 0.0  # the config's pfsp exponent (0: the fixed shares)
    win_rate: np.ndarray = None  # (len(OPPONENT_KINDS),) the learner's recent share of episodes won
    pool_win_rate: np.ndarray = None  # (len(pool),) the same against each snapshot
    episode_return: np.ndarray = None  # (N,) the learner's return so far in each game's episode
    exploiters: list = field(default_factory=list)  # the league's exploiters' networks, oldest first
    exploiter: np.ndarray = None  # (N,) index into exploiters, where kind is exploiter

    def __post_init__(self):
        n = len(self.kind)
        self.win_rate = np.full(len(OPPONENT_KINDS), 0.5) if self.win_rate is None else self.win_rate
        self.pool_win_rate = np.full(len(self.pool), 0.5) if self.pool_win_rate is None else self.pool_win_rate
        self.episode_return = np.zeros(n) if self.episode_return is None else self.episode_return
        self.exploiter = np.zeros(n, np.int64) if self.exploiter is None else self.exploiter


#: Weight of each finished episode in the win rates (an exponential average over ~100).
WIN_RATE_STEP = 0.01


def make_opponents(config: Config, rng: np.random.Generator) -> Opponents:
    """Opponents for ``config.num_envs`` games, the first draw made with ``rng``."""
    n = config.num_envs
    opp = Opponents(
        mix=np.array(config.opponent_mix(), np.float64),
        baselines={name: cls(seed=config.seed + i) for i, (name, cls) in enumerate(BASELINES.items())},
        kind=np.zeros(n, np.int64),
        learner_seat=np.zeros(n, np.int8),
        snapshot=np.zeros(n, np.int64),
        pfsp=config.pfsp,
    )
    assign(opp, np.arange(n), rng)
    return opp


def assign(opp: Opponents, games: np.ndarray, rng: np.random.Generator) -> None:
    """Draw the opponent and the learner's seat of the games ``games`` (new episodes)."""
    if not len(games):
        return
    mix = opp.mix.copy()
    for kind, there in ((SNAPSHOT, opp.pool), (EXPLOITER, opp.exploiters)):
        if not there:  # no snapshot (exploiter) yet: play itself instead
            mix[SELF] += mix[kind]
            mix[kind] = 0.0
    if opp.pfsp:
        mix = prioritised(mix, opp)
    opp.kind[games] = rng.choice(len(OPPONENT_KINDS), size=len(games), p=mix)
    opp.learner_seat[games] = rng.integers(0, 2, size=len(games))
    if opp.pfsp and opp.pool:
        w = _priority(opp.pool_win_rate, opp.pfsp)
        opp.snapshot[games] = rng.choice(len(opp.pool), size=len(games), p=w / w.sum())
    else:
        opp.snapshot[games] = rng.integers(0, max(len(opp.pool), 1), size=len(games))
    if opp.exploiters:  # drawn only once there is one: runs without a league draw as before
        opp.exploiter[games] = rng.integers(0, len(opp.exploiters), size=len(games))


def _priority(win_rate: np.ndarray, p: float) -> np.ndarray:
    return np.maximum(1.0 - win_rate, 1e-3) ** p  # never 0: an opponent beaten for now comes back


def prioritised(mix: np.ndarray, opp: Opponents) -> np.ndarray:
    """PFSP: the shares of every kind but ``self`` reweighted by ``(1 - w)**pfsp`` (the
    pool's rate is its snapshots' mean), their total kept."""
    w = opp.win_rate.copy()
    if len(opp.pool):
        w[SNAPSHOT] = opp.pool_win_rate.mean()
    others = np.arange(len(mix)) != SELF
    moved = np.where(others, mix * _priority(w, opp.pfsp), 0.0)
    if moved.sum() <= 0:
        return mix
    out = mix.copy()
    out[others] = moved[others] / moved.sum() * mix[others].sum()
    return out


def record(opp: Opponents, games: np.ndarray, won: np.ndarray) -> None:
    """Finished episodes of ``games`` (before new opponents are drawn): ``won`` moves each
    opponent's win rate (``WIN_RATE_STEP`` an episode; ``self`` has none)."""
    for k in np.unique(opp.kind[games]):
        if k == SELF:
            continue
        x = won[opp.kind[games] == k]
        opp.win_rate[k] = _moved(opp.win_rate[k], x)
        if k == SNAPSHOT:
            snaps = opp.snapshot[games][opp.kind[games] == k]
            for s in np.unique(snaps):
                opp.pool_win_rate[s] = _moved(opp.pool_win_rate[s], x[snaps == s])


def _moved(rate: float, won: np.ndarray) -> float:
    """``rate`` after the episodes ``won`` (finished on one step, so they weigh alike)."""
    keep = (1.0 - WIN_RATE_STEP) ** len(won)
    return keep * rate + (1.0 - keep) * won.mean()


def learner_moves(opp: Opponents, mover: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: the learner makes this move (it plays both seats against itself)."""
    return (opp.kind == SELF) | (mover == opp.learner_seat)


def _sample(net: ActorCritic, rows, obs, mask, actions, device) -> None:
    """``actions[rows]`` sampled from ``net``'s actor (its critic is not needed)."""
    with torch.no_grad():
        dist = net.action_dist(torch.from_numpy(obs[rows]).to(device), torch.from_numpy(mask[rows]).to(device))
        actions[rows] = dist.sample().cpu().numpy()


def act(
    opp: Opponents,
    games: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    actions: np.ndarray,
    device: torch.device,
    current: ActorCritic | None = None,
) -> None:
    """Fill ``actions[games]`` with the opponents' moves (games the learner does not move).
    The ``self`` opponent moves only where ``current`` is given (a copy of the learner
    playing the other seat, as in the RLlib trainer); in ``train.py`` the learner makes
    those moves itself."""
    for k, kind in enumerate(OPPONENT_KINDS):
        idx = games[opp.kind[games] == k]
        if not idx.size or (k == SELF and current is None):
            continue
        if k == SELF:
            _sample(current, idx, obs, mask, actions, device)
        elif k == FROZEN:
            _sample(opp.frozen, idx, obs, mask, actions, device)
        elif k == EXPLOITER:
            for e in np.unique(opp.exploiter[idx]):
                _sample(opp.exploiters[e], idx[opp.exploiter[idx] == e], obs, mask, actions, device)
        elif k == SNAPSHOT:
            for s in np.unique(opp.snapshot[idx]):
                _sample(opp.pool[s], idx[opp.snapshot[idx] == s], obs, mask, actions, device)
        else:
            actions[idx] = opp.baselines[kind].act(obs[idx], mask[idx])


def add_exploiter(opp: Opponents, net: ActorCritic, pool_size: int) -> None:
    """A trained exploiter joins the league (the oldest leaves past ``pool_size``)."""
    opp.exploiters = (opp.exploiters + [net.eval()])[-pool_size:]


def add_snapshot(opp: Opponents, model: ActorCritic, pool_size: int, device: torch.device) -> None:
    """A frozen copy of ``model`` joins the pool; the oldest leaves past ``pool_size``."""
    snap = ActorCritic(model.spec).to(device)
    snap.load_state_dict(model.state_dict())
    opp.pool = (opp.pool + [snap])[-pool_size:]
    opp.pool_win_rate = np.append(opp.pool_win_rate, 0.5)[-pool_size:]
