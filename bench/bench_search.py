"""Search at decision time: seconds per move, one game at a time (what the server asks
of the bot), for the plain policy and for ``+search=W``.

Positions come from games of the shipped bot against itself (every decision of the
first ``--games`` games, seeded); each is timed alone (batch 1), the plain policy and
the searching one on the same positions, interleaved. Prints the median, the 90th and 99th
percentiles and the most per move, how many of the searched moves differ from the policy's, and
the worlds a searched move dealt (a deepening budget ``W-M`` deals from W to M).
Run: ``python bench/bench_search.py [--search 16 | --search 0.5s | --search 64:patient | --search 64-512]
[--games 4]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from agents import SHIPPED, load_policy
from agents.training.search import SearchAgent, parse_search
from ginenv import core
from ginenv.observation import observe
from ginenv.rules import Rules


def positions(policy, games: int, seed: int):
    s = core.init(games, Rules(), seed, mode="hand")
    out = []
    while not s.done.all():
        idx = np.flatnonzero(~s.done)
        out += [s.select([i]) for i in idx]
        a = np.full(games, core.SKIP, np.int64)
        a[idx] = policy.act(observe(s, s.current)[idx], core.legal_action_mask(s)[idx])
        core.step(s, a)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--search", default="16", help="the budget as in +search=...: W worlds, 0.5s, and :patient")
    p.add_argument("--games", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    policy = load_policy(SHIPPED)
    parsed = parse_search(f"shipped+search={args.search}")
    search = SearchAgent(policy, seed=args.seed, **parsed[1])
    plain_s, search_s, differ, worlds = [], [], 0, []
    for s in positions(policy, args.games, args.seed):
        obs, mask = observe(s, s.current), core.legal_action_mask(s)
        t0 = time.perf_counter()
        a = policy.act(obs, mask)
        t1 = time.perf_counter()
        search.last_worlds = 0
        b = search.act(obs, mask, state=s, seats=s.current)
        t2 = time.perf_counter()
        if search.last_worlds:
            worlds.append(search.last_worlds)
        plain_s.append(t1 - t0)
        search_s.append(t2 - t1)
        differ += int(a[0] != b[0])

    def line(name, xs):
        xs = sorted(xs)
        return (
            f"{name:18s} median {statistics.median(xs) * 1e3:7.2f} ms  p90 {xs[int(0.9 * len(xs))] * 1e3:7.2f} ms  "
            f"p99 {xs[int(0.99 * len(xs))] * 1e3:7.2f} ms  max {xs[-1] * 1e3:7.2f} ms"
        )

    print(f"{len(plain_s)} positions, batch 1, 1 thread")
    print(line("policy", plain_s))
    print(line(f"+search={args.search}", search_s))
    print(f"search moves that differ from the policy's: {differ} of {len(search_s)}")
    if worlds:
        counts = ", ".join(f"{w}: {worlds.count(w)}" for w in sorted(set(worlds)))
        mean = statistics.mean(worlds)
        print(f"searched moves: {len(worlds)}, worlds dealt a searched move: mean {mean:.1f} ({counts})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
