"""How many points a hand is worth to its winner: the table behind the search's match
valuation (``HAND_POINTS`` in ``agents/training/search.py``).

Plays ``--hands`` hands (standard rules, ``--seed``) of the shipped bot against itself,
greedy, and prints the share of dead hands and of each band of the winner's points (5
points a band: 1-5, 6-10, ..., the last band everything from 96 up) as the Python table
the search holds. Run: ``python bench/hand_outcomes.py [--hands 4000] [--seed 0]``.
"""

from __future__ import annotations

import argparse

import numpy as np


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hands", type=int, default=4000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from agents import SHIPPED, load_policy
    from agents.training.search import BAND
    from ginenv import core
    from ginenv.observation import observe
    from ginenv.rules import Rules

    policy = load_policy(SHIPPED)
    s = core.init(args.hands, Rules(), args.seed, mode="hand")
    points = np.zeros(args.hands, np.int64)
    while not s.done.all():
        live = np.flatnonzero(~s.done)
        a = np.full(args.hands, core.SKIP, np.int64)
        a[live] = policy.act(observe(s, s.current)[live], core.legal_action_mask(s)[live])
        core.step(s, a)
        ended = s.hand_ended & (points == 0)
        points[ended] = s.hand_points[ended].max(1)
    bands = np.minimum((np.maximum(points, 1) - 1) // BAND, 19)
    shares = [float(np.mean(points == 0))] + [float(np.mean((points > 0) & (bands == k))) for k in range(20)]
    print(f"{args.hands} hands of the shipped bot against itself, seed {args.seed}: dead {shares[0]:.3f}")
    print("HAND_POINTS = (" + ", ".join(f"{x:.4f}" for x in shares) + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
