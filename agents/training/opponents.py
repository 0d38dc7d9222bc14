"""Who sits opposite the learner in each training game, and how they move.

Each episode draws, by the config's ``opponents`` shares, one of ``OPPONENT_KINDS``:
the learner itself (both seats train), a snapshot from the pool of past learners, a
baseline, one of the ``frozen`` checkpoints or one of the league's exploiters; and the
learner's seat, 0 or 1. Only the learner's decisions train it. With ``pfsp``, the
learner's recent win rate against each opponent (each network of a group too) weights
the draws towards the ones it loses to.
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
    frozen: list = field(default_factory=list)  # the config's frozen checkpoints' networks (never trained)
    pfsp: float = 0.0  # the config's pfsp exponent (0: the fixed shares)
    win_rate: np.ndarray = None  # (len(OPPONENT_KINDS),) the learner's recent share of episodes won
    pool_win_rate: np.ndarray = None  # (len(pool),) the same against each snapshot
    episode_return: np.ndarray = None  # (N,) the learner's return so far in each game's episode
    exploiters: list = field(default_factory=list)  # the league's exploiters' networks, oldest first
    exploiter: np.ndarray = None  # (N,) index into exploiters, where kind is exploiter
    exploiter_win_rate: np.ndarray = None  # (len(exploiters),) the learner's rate against each
    frozen_member: np.ndarray = None  # (N,) index into frozen, where kind is frozen
    frozen_win_rate: np.ndarray = None  # (len(frozen),) the learner's rate against each

    def __post_init__(self):
        n = len(self.kind)
        self.win_rate = np.full(len(OPPONENT_KINDS), 0.5) if self.win_rate is None else self.win_rate
        self.episode_return = np.zeros(n) if self.episode_return is None else self.episode_return
        for nets, pick, rates in GROUPS.values():
            if getattr(self, pick) is None:
                setattr(self, pick, np.zeros(n, np.int64))
            if getattr(self, rates) is None:
                setattr(self, rates, np.full(len(getattr(self, nets)), 0.5))


#: The kinds whose episodes are shared among several networks: the attribute holding the
#: networks, the ``(N,)`` index of each game's, and the learner's win rate against each.
GROUPS = {
    SNAPSHOT: ("pool", "snapshot", "pool_win_rate"),
    FROZEN: ("frozen", "frozen_member", "frozen_win_rate"),
    EXPLOITER: ("exploiters", "exploiter", "exploiter_win_rate"),
}


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
    for kind, (nets, pick, rates) in GROUPS.items():
        # the snapshot is drawn always, the others only where there is a choice (so that
        # runs without them draw as they did before they existed)
        count = len(getattr(opp, nets))
        if kind != SNAPSHOT and count < 2:
            continue
        if opp.pfsp and count:  # PFSP among the group's networks too
            w = _priority(getattr(opp, rates), opp.pfsp)
            getattr(opp, pick)[games] = rng.choice(count, size=len(games), p=w / w.sum())
        else:
            getattr(opp, pick)[games] = rng.integers(0, max(count, 1), size=len(games))


def _priority(win_rate: np.ndarray, p: float) -> np.ndarray:
    return np.maximum(1.0 - win_rate, 1e-3) ** p  # never 0: an opponent beaten for now comes back


def prioritised(mix: np.ndarray, opp: Opponents) -> np.ndarray:
    """PFSP: the shares of every kind but ``self`` reweighted by ``(1 - w)**pfsp`` (the
    rate of a group, the pool say, is its networks' mean), their total kept."""
    w = opp.win_rate.copy()
    for kind, (nets, _, rates) in GROUPS.items():
        if len(getattr(opp, nets)):
            w[kind] = getattr(opp, rates).mean()
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
        if k in GROUPS:
            _, pick, rates = GROUPS[k]
            members, rate = getattr(opp, pick)[games][opp.kind[games] == k], getattr(opp, rates)
            for m in np.unique(members):
                rate[m] = _moved(rate[m], x[members == m])


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
        elif k in GROUPS:
            nets, pick, _ = GROUPS[k]
            members = getattr(opp, pick)[idx]
            for m in np.unique(members):
                _sample(getattr(opp, nets)[m], idx[members == m], obs, mask, actions, device)
        else:
            actions[idx] = opp.baselines[kind].act(obs[idx], mask[idx])


def add_exploiter(opp: Opponents, net: ActorCritic, pool_size: int) -> None:
    """A trained exploiter joins the league (the oldest leaves past ``pool_size``)."""
    opp.exploiters = (opp.exploiters + [net.eval()])[-pool_size:]
    opp.exploiter_win_rate = np.append(opp.exploiter_win_rate, 0.5)[-pool_size:]


def set_frozen(opp: Opponents, nets: list) -> None:
    """The config's frozen checkpoints' networks, each at a win rate of 0.5."""
    opp.frozen = [net.eval() for net in nets]
    opp.frozen_win_rate = np.full(len(nets), 0.5)


def load_frozen(paths: list, device="cpu") -> list:
    """The networks of the ``frozen`` checkpoints (an error names the one that fails)."""
    from agents.training.checkpoint import CheckpointError
    from agents.training.policy import load_policy

    nets = []
    for path in paths:
        try:
            nets.append(load_policy(path).model.to(device))
        except CheckpointError as e:
            raise CheckpointError(f"frozen {path}: {e}") from None
    return nets


def add_snapshot(opp: Opponents, model: ActorCritic, pool_size: int, device: torch.device) -> None:
    """A frozen copy of ``model`` joins the pool; the oldest leaves past ``pool_size``."""
    snap = ActorCritic(model.spec).to(device)
    snap.load_state_dict(model.state_dict())
    opp.pool = (opp.pool + [snap])[-pool_size:]
    opp.pool_win_rate = np.append(opp.pool_win_rate, 0.5)[-pool_size:]
