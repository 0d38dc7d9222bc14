"""Probes of a trained bot against the baselines (standard rules), to see where its points
come from and what it ignores. Run: ``python bench/bench_probes.py [CHECKPOINT]``.

1. **Where the points go**: single hands against gin_hunter and knock_early, split by
   who ended the hand and how (knock, gin, big gin, undercut), with the share of hands,
   the mean points (bot minus opponent) and the mean number of draws it lasted.
2. **Forced knocks**: the bot's own play, except that it knocks whenever a knock leaving
   at most ``k`` deadwood is legal (with the card that leaves the least); matches to 100.
3. **Knocks held back**: the other direction: the bot's own play, except that a knock
   leaving more than ``k`` deadwood is taken out of its legal actions (it plays its
   most probable remaining action instead); matches to 100.
4. **Match scores ignored?**: the bot with both match totals zeroed in its observation;
   matches to 100 against the unmodified bot's figure on the same seed.
"""

import argparse

import numpy as np

from agents import make_agent
from agents.baselines import _STOCK, _deadwood_after, _discard_key
from agents.evaluate import play
from ginenv import actions as A
from ginenv.rules import Rules

SCORES = _STOCK + 3  # own match total / target, then the opponent's
OPPONENTS = ("gin_hunter", "knock_early")


class ForcedKnock:
    """``base``'s actions, but a knock whenever one leaving at most ``limit`` deadwood is
    legal (and big gin is not): the legal knock leaving the least, ties to the highest
    card value."""

    def __init__(self, base, limit: int):
        self.base, self.limit = base, limit

    def act(self, obs, mask):
        out = np.asarray(self.base.act(obs, mask)).copy()
        after = _deadwood_after(obs)
        knocks = mask[:, A.KNOCK:A.DRAW_STOCK]
        force = (knocks & (after <= self.limit)).any(1) & ~mask[:, A.BIG_GIN]
        best = np.argmin(_discard_key(knocks, after), 1)
        return np.where(force, A.KNOCK + best, out)


class HeldBackKnock:
    """``base``'s actions with every knock leaving more than ``limit`` deadwood taken out
    of its mask, so it plays what it prefers among the rest (gin and big gin stay)."""

    def __init__(self, base, limit: int):
        self.base, self.limit = base, limit

    def act(self, obs, mask):
        mask = np.array(mask, copy=True)
        mask[:, A.KNOCK:A.DRAW_STOCK] &= _deadwood_after(obs) <= self.limit
        return self.base.act(obs, mask)


class ScoresZeroed:
    def __init__(self, base):
        self.base = base

    def act(self, obs, mask):
        obs = obs.copy()
        obs[:, SCORES:SCORES + 2] = 0.0
        return self.base.act(obs, mask)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("bot", nargs="?", default="checkpoints/champion")
    p.add_argument("--hands", type=int, default=4000)
    p.add_argument("--matches", type=int, default=1000)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--limits", default="10,6,4,2", help="forced knocks at these deadwood limits")
    p.add_argument("--held-back", default="8,6,4", help="knocks above these deadwood limits held back")
    args = p.parse_args()
    bot = make_agent(args.bot)

    for name in OPPONENTS:
        r = play(bot, make_agent(name), args.hands, Rules(), seed=1, mode="hand")
        print(f"\n{args.hands} hands against {name} (seed 1): who ended it (bot, opp, -), how, "
              "share, mean points bot-opp, mean draws")
        for key, c in sorted(r["hands_by_ender"].items()):
            who, kind = key.split("/")
            who = {"a": "bot", "b": "opp"}.get(who, who)
            print(f"  {who:>3} {kind:<9} {c['hands'] / r['hands']:6.3f} {c['net_points_a'] / c['hands']:+8.2f} "
                  f"{c['draws'] / c['hands']:6.1f}")
        print(f"  net points a hand: {r['points_per_hand_a'] - r['points_per_hand_b']:+.2f}")

    def scan(title, wrapper, limits, label):
        print(f"\n{title}, {args.matches} matches per cell (seed {args.seed}): match win rate")
        for limit in (int(x) for x in limits.split(",")):
            rates = [play(wrapper(bot, limit), make_agent(n), args.matches, Rules(), seed=args.seed)["win_rate_a"]
                     for n in OPPONENTS]
            print(f"  {label} {limit:>2}: " + "  ".join(f"vs {n} {r:.3f}" for n, r in zip(OPPONENTS, rates)),
                  flush=True)

    scan("forced knocks", ForcedKnock, args.limits, "knock at <=")
    scan("knocks held back", HeldBackKnock, args.held_back, "no knock above")

    print(f"\nmatch scores zeroed, {args.matches} matches (seed {args.seed}): as is -> zeroed")
    for name in OPPONENTS:
        a = play(bot, make_agent(name), args.matches, Rules(), seed=args.seed)["win_rate_a"]
        z = play(ScoresZeroed(bot), make_agent(name), args.matches, Rules(), seed=args.seed)["win_rate_a"]
        print(f"  vs {name}: {a:.3f} -> {z:.3f}", flush=True)


if __name__ == "__main__":
    main()
