"""Probes of a trained bot against the baselines (standard rules), to see where its points
come from and what it ignores. Run: ``python bench/bench_probes.py [CHECKPOINT]``.

1. **Where the points go**: single hands against gin_hunter and knock_early, split by
   who ended the hand and how (knock, gin, big gin, undercut), with the share of hands,
   the mean points (bot minus opponent) and the mean turn it ended on.
2. **Forced knocks**: the bot's own play, except that it knocks whenever a knock leaving
   at most ``k`` deadwood is legal (with the card that leaves the least); matches to 100.
3. **Match scores ignored?**: the bot with both match totals zeroed in its observation;
   matches to 100 against the unmodified bot's figure on the same seed.
"""

import argparse
from collections import defaultdict

import numpy as np

from agents import make_agent
from agents.baselines import _discard_key, _plane
from agents.evaluate import play
from ginenv import actions as A
from ginenv import core
from ginenv.cards import NUM_CARDS
from ginenv.observation import NUM_PLANES, observe
from ginenv.rules import Rules

SCORES = NUM_PLANES * NUM_CARDS + 5 + 3  # own match total / target, then the opponent's
OPPONENTS = ("gin_hunter", "knock_early")


class ForcedKnock:
    """``base``'s actions, but a knock whenever one leaving at most ``limit`` deadwood is
    legal (and big gin is not): the legal knock leaving the least, ties to the highest
    card value."""

    def __init__(self, base, limit: int):
        self.base, self.limit = base, limit

    def act(self, obs, mask):
        out = np.asarray(self.base.act(obs, mask)).copy()
        after = np.rint(_plane(obs, 7) * 100).astype(np.int64)
        knocks = mask[:, A.KNOCK:A.DRAW_STOCK]
        force = (knocks & (after <= self.limit)).any(1) & ~mask[:, A.BIG_GIN]
        best = np.argmin(_discard_key(knocks, after), 1)
        return np.where(force, A.KNOCK + best, out)


class ScoresZeroed:
    def __init__(self, base):
        self.base = base

    def act(self, obs, mask):
        obs = obs.copy()
        obs[:, SCORES:SCORES + 2] = 0.0
        return self.base.act(obs, mask)


def hand_outcomes(bot, opponent, n: int, seed: int) -> dict:
    """{(who ended it: "bot" / "opp" / "-", kind): [hands, summed bot-minus-opp points,
    summed turns]} over n single hands, seats and dealers alternating."""
    state = core.init(n, Rules(), seed, mode="hand", dealers=((np.arange(n) // 2) % 2).astype(np.int8))
    seat = (np.arange(n) % 2).astype(np.int8)
    out = defaultdict(lambda: [0, 0, 0])
    while not state.done.all():
        live = ~state.done
        mask, obs = core.legal_action_mask(state), observe(state, state.current)
        actions = np.zeros(n, np.int64)
        for agent, who in ((bot, live & (state.current == seat)), (opponent, live & (state.current != seat))):
            idx = np.flatnonzero(who)
            if idx.size:
                actions[idx] = agent.act(obs[idx], mask[idx])
        core.step(state, actions)
        for g in np.flatnonzero(state.hand_ended):
            knocker = int(state.last_knocker[g])
            who = "-" if knocker < 0 else ("bot" if knocker == seat[g] else "opp")
            row = out[(who, core.HAND_KIND_NAMES[state.hand_kind[g]])]
            row[0] += 1
            row[1] += int(state.hand_points[g, seat[g]]) - int(state.hand_points[g, 1 - seat[g]])
            row[2] += int(state.hand_turns[g])
    return dict(out)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("bot", nargs="?", default="checkpoints/champion")
    p.add_argument("--hands", type=int, default=4000)
    p.add_argument("--matches", type=int, default=1000)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--limits", default="10,6,4,2")
    args = p.parse_args()
    bot = make_agent(args.bot)

    for name in OPPONENTS:
        rows = hand_outcomes(bot, make_agent(name), args.hands, seed=1)
        total = sum(r[0] for r in rows.values())
        print(f"\n{args.hands} hands against {name} (seed 1): who ended it, how, share, mean points bot-opp, mean turn")
        for (who, kind), (count, points, turns) in sorted(rows.items()):
            print(f"  {who:>3} {kind:<9} {count / total:6.3f} {points / count:+8.2f} {turns / count:6.1f}")
        print(f"  net points a hand: {sum(r[1] for r in rows.values()) / total:+.2f}")

    print(f"\nforced knocks, {args.matches} matches per cell (seed {args.seed}): match win rate")
    for limit in (int(x) for x in args.limits.split(",")):
        rates = [play(ForcedKnock(bot, limit), make_agent(n), args.matches, Rules(), seed=args.seed)["win_rate_a"]
                 for n in OPPONENTS]
        print(f"  knock at <= {limit:>2}: " + "  ".join(f"vs {n} {r:.3f}" for n, r in zip(OPPONENTS, rates)), flush=True)

    print(f"\nmatch scores zeroed, {args.matches} matches (seed {args.seed}): as is -> zeroed")
    for name in OPPONENTS:
        a = play(bot, make_agent(name), args.matches, Rules(), seed=args.seed)["win_rate_a"]
        z = play(ScoresZeroed(bot), make_agent(name), args.matches, Rules(), seed=args.seed)["win_rate_a"]
        print(f"  vs {name}: {a:.3f} -> {z:.3f}", flush=True)


if __name__ == "__main__":
    main()
