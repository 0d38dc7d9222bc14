"""How many 11-card hands per second ``deadwood_after_discard`` handles (all 11 values).

Single process, 100k hands a call, median of several calls; also one hand per call,
for the per-call overhead a scalar caller pays. Run: ``python bench/bench_melds.py``.
"""

import argparse
import time

import numpy as np

from ginenv.cards import to_hand
from ginenv.melds import deadwood, deadwood_after_discard


def random_hands(rng, n, size=11):
    return to_hand(np.argsort(rng.random((n, 52)), axis=1)[:, :size])


def dense_hands(rng, n, size=11, n_ranks=6):
    lo = rng.integers(0, 14 - n_ranks, size=n)
    pick = np.argsort(rng.random((n, 4 * n_ranks)), axis=1)[:, :size]
    return to_hand((pick // n_ranks) * 13 + lo[:, None] + pick % n_ranks)


def rate(fn, hands, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(hands)
        times.append(time.perf_counter() - t)
    return len(hands) / float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for name, hands in (("random", random_hands(rng, args.hands)), ("meld-dense", dense_hands(rng, args.hands))):
        after = rate(deadwood_after_discard, hands, args.repeats)
        dw = rate(deadwood, hands, args.repeats)
        single = rate(lambda h: [deadwood_after_discard(x) for x in h], hands[:2000], 3)
        print(
            f"{name:10s} deadwood_after_discard: {after / 1e6:6.2f} M hands/s   "
            f"deadwood: {dw / 1e6:6.2f} M hands/s   one hand a call: {single / 1e3:6.1f} k hands/s "
            f"(batching x{after / single:.0f})"
        )


if __name__ == "__main__":
    main()
