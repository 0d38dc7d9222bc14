"""Experiment probe: a checkpoint with a constant added to its knock logits, against marjj.

``python bench/knock_bias.py CKPT --seed 2026 --matches 1000 --bias 0 0.5 1 2`` prints
the win rate, knocks and gins for each bias: does the policy gain from knocking more
often and nothing else? (docs/experiments.md, "Model soups").
"""

from __future__ import annotations

import argparse

from agents import make_agent
from agents.evaluate import play
from ginenv.actions import DRAW_STOCK, KNOCK
from ginenv.rules import PRESETS


def biased(checkpoint: str, bias: float):
    """The checkpoint's policy with ``bias`` added to every knock logit."""
    agent = make_agent(checkpoint)
    actor = agent.model.actor
    forward = actor.forward

    def shifted(*args, **kwargs):
        out = forward(*args, **kwargs).clone()
        out[..., KNOCK:DRAW_STOCK] += bias
        return out

    actor.forward = shifted
    return agent


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint")
    p.add_argument("--opponent", default="marjj")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--matches", type=int, default=1000)
    p.add_argument("--bias", type=float, nargs="+", default=[0.0, 0.5, 1.0, 2.0])
    args = p.parse_args()
    for b in args.bias:
        agent = biased(args.checkpoint, b)
        r = play(agent, make_agent(args.opponent), args.matches, PRESETS["standard"], seed=args.seed)
        ends = r["hand_ends"]["a"]
        print(f"bias {b:+.2f}  win rate {r['win_rate_a']:.3f}  knocks {ends['knocks']}  gins {ends['won_by_gin']}")


if __name__ == "__main__":
    main()
