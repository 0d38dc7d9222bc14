"""When to knock: knock_early's draws and discards with other knock rules, played against
knock_early and gin_hunter (matches to 100, standard rules).

Each row is ``Patient(early_stock, endgame_stock, late_limit)``: any legal knock while the
stock holds ``early_stock`` cards or more (31 at the deal) or ``endgame_stock`` or fewer;
in between only knocks leaving ``late_limit`` deadwood or less. Row one (early_stock 32)
is knock_early itself; the default row is the ``patient`` baseline.
Run: ``python bench/bench_knock_rules.py [--matches N] [--seed S]``.
"""

import argparse

from agents import make_agent
from agents.baselines import Patient
from agents.evaluate import play
from ginenv.rules import Rules

RULES = [  # (early_stock, endgame_stock, late_limit)
    (32, 4, 10),  # knocks whenever it can: knock_early
    (32, 4, 6),
    (32, 4, 4),
    (32, 4, 2),
    (32, 4, 0),  # gin only (until the endgame)
    (28, 4, 0),
    (25, 4, 0),  # the patient baseline
    (22, 4, 0),
    (25, 4, 5),
    (25, 12, 0),
]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--matches", type=int, default=1000)
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args()
    opponents = [make_agent("knock_early"), make_agent("gin_hunter")]
    print(f"{args.matches} matches per cell, seed {args.seed}; match win rate (95% CI), undercuts per hand")
    print(f"{'early_stock':>11} {'endgame':>7} {'late_limit':>10} | {'vs knock_early':>28} | {'vs gin_hunter':>28}")
    for early, endgame, limit in RULES:
        cells = []
        for opp in opponents:
            r = play(Patient(early_stock=early, endgame_stock=endgame, late_limit=limit), opp,
                     args.matches, Rules(), seed=args.seed)
            lo, hi = r["win_rate_a_ci95"]
            cells.append(f"{r['win_rate_a']:.3f} ({lo:.3f}-{hi:.3f}) uc {r['undercut_rate']:.2f}")
        print(f"{early:>11} {endgame:>7} {limit:>10} | {cells[0]:>28} | {cells[1]:>28}", flush=True)


if __name__ == "__main__":
    main()
