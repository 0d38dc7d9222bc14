"""Denying the opponent its melds: the patient baseline with a defensive discard rule,
played against gin_hunter and knock_early (matches to 100, standard rules).

gin_hunter takes a face-up card only when it joins a meld, so every card it took and
still holds sits in (or next to) a meld. A card is *dangerous* to discard when it shares
a rank with such a card or lies next to one in the same suit. ``Denier(tolerance)``
discards as patient does unless that card is dangerous; then it discards the best safe
card instead, if one leaves at most ``tolerance`` more deadwood. Row one is patient
itself. Run: ``python bench/bench_denial.py [--matches N] [--seed S]``.
"""

import argparse

import numpy as np

from agents import make_agent
from agents.baselines import Patient, _deadwood_after, _discard_key, _plane
from agents.evaluate import play
from ginenv import actions as A
from ginenv.rules import Rules

TOLERANCES = [None, 0, 3, 6, 100]  # None: patient itself; 100: always a safe card if any


def dangerous(obs):
    """``(n, 52)`` bool: cards of the same rank as, or next in suit to, a card the
    opponent took from the pile and still holds (plane 3)."""
    took = (_plane(obs, 3) > 0.5).reshape(-1, 4, 13)
    same_rank = took.any(1, keepdims=True)
    padded = np.pad(took, ((0, 0), (0, 0), (1, 1)))
    next_in_suit = padded[:, :, :-2] | padded[:, :, 2:]
    return (same_rank | next_in_suit).reshape(-1, 52)


class Denier(Patient):
    def __init__(self, seed: int = 0, tolerance: int = 0):
        super().__init__(seed)
        self.tolerance = tolerance

    def _discard(self, obs, mask):
        out = super()._discard(obs, mask)
        rows = np.arange(len(obs))
        after = _deadwood_after(obs)
        discards = mask[:, A.DISCARD:A.KNOCK]
        is_discard = (out >= A.DISCARD) & (out < A.KNOCK)
        chosen = np.where(is_discard, out - A.DISCARD, 0)
        danger = dangerous(obs)
        allowed = discards & ~danger & (after <= after[rows, chosen][:, None] + self.tolerance)
        safe = np.argmin(_discard_key(allowed, after), 1)
        swap = is_discard & danger[rows, chosen] & allowed.any(1)
        return np.where(swap, A.DISCARD + safe, out)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--matches", type=int, default=1000)
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args()
    opponents = [make_agent("gin_hunter"), make_agent("knock_early")]
    print(f"{args.matches} matches per cell, seed {args.seed}; match win rate (95% CI)")
    print(f"{'tolerance':>10} | {'vs gin_hunter':>20} | {'vs knock_early':>20}")
    for tol in TOLERANCES:
        agent = Patient() if tol is None else Denier(tolerance=tol)
        cells = []
        for opp in opponents:
            r = play(agent, opp, args.matches, Rules(), seed=args.seed)
            lo, hi = r["win_rate_a_ci95"]
            cells.append(f"{r['win_rate_a']:.3f} ({lo:.3f}-{hi:.3f})")
        label = "patient" if tol is None else str(tol)
        print(f"{label:>10} | {cells[0]:>20} | {cells[1]:>20}", flush=True)


if __name__ == "__main__":
    main()
