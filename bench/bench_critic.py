"""How much of a hand's outcome does a checkpoint's critic explain?

PPO's advantages are only as good as its critic. This bench plays single hands of the
first checkpoint's policy against a baseline (seats alternating, ``agents.evaluate.play``),
and at each of the policy's decisions asks each checkpoint's critic for its value,
giving it what it was trained with: the observation, the opponent's hand
(``privileged_critic``) and the lookahead features of the next stock cards
(``critic_lookahead``). It prints the explained variance of the hand's final net points
for the policy, 1 - Var(outcome - value) / Var(outcome), in points. The values are
those of the Monte Carlo return (gamma 1, whole hands), so critics trained with
different ``gae_lambda`` compare fairly.

    python bench/bench_critic.py checkpoints/champion <run with critic_lookahead> --hands 4000
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import numpy as np
import torch

from agents import make_agent
from agents.network import state_lookahead
from agents.policy import load_policy
from ginenv.observation import observe
from ginenv.rules import Rules

_spec = importlib.util.spec_from_file_location("bench_search", Path(__file__).resolve().parent / "bench_search.py")
bench_search = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_search)


def explained(values: np.ndarray, outcome: np.ndarray) -> float:
    return float(1 - np.var(outcome - values) / np.var(outcome))


@torch.no_grad()
def critic_values(models, state, idx) -> list:
    """Each model's value (in points) at the decisions ``idx`` of ``state``, seen by the
    player to move, with the inputs its critic was trained on."""
    me = state.current[idx].astype(np.int64)
    obs = torch.as_tensor(observe(state.select(idx), me))
    opp = state._hands[idx, 1 - me]
    out = []
    for model, scale in models:
        extra = {}
        if model.privileged_critic:
            extra["opponent_hand"] = torch.as_tensor(opp.astype(np.float32))
        if model.critic_lookahead:
            extra["lookahead"] = torch.as_tensor(state_lookahead(state, idx, me, model.critic_lookahead))
        out.append(model.get_value(obs, **extra).double().numpy() / scale)
    return out


def critic_fit(checkpoints, opponent, hands: int, seed: int) -> list:
    """The explained variance of each checkpoint's critic over the first one's decisions
    in ``hands`` single hands against ``opponent``."""
    policies = [load_policy(c) for c in checkpoints]
    models = [(p.model, float(p.meta["config"]["reward_scale"])) for p in policies]
    games, values = [], []

    def watch(state, idx, actions):
        games.append(idx)
        values.append(critic_values(models, state, idx))

    net = bench_search.play_hands(policies[0], opponent, hands, Rules.preset("standard"), seed, watch=watch)
    outcome = net[np.concatenate(games)]
    return [explained(np.concatenate([v[m] for v in values]), outcome) for m in range(len(models))]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", nargs="+", help="the first one plays; every one's critic is scored")
    p.add_argument("--opponents", nargs="+", default=["gin_hunter", "knock_early"])
    p.add_argument("--hands", type=int, default=4000)
    p.add_argument("--seed", type=int, default=11)
    args = p.parse_args(argv)
    torch.set_num_threads(2)
    for name in args.opponents:
        scores = critic_fit(args.checkpoints, make_agent(name), args.hands, args.seed)
        for checkpoint, score in zip(args.checkpoints, scores):
            print(f"{args.hands} hands vs {name}, seed {args.seed}: {checkpoint}: explained variance {score:.3f}")


if __name__ == "__main__":
    main()
