"""How long 1000 full matches (to 100) of knock_early against gin_hunter take.

All matches run at once on the batched engine; the baselines act on the whole batch.
Run: ``python bench/bench_eval.py [--matches N]``.
"""

import argparse
import time

from agents import make_agent
from agents.evaluate import format_report, play
from ginenv.rules import Rules


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--matches", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    times = []
    for i in range(args.repeats):
        t = time.perf_counter()
        r = play(make_agent("knock_early"), make_agent("gin_hunter"), args.matches, Rules(), seed=i)
        times.append(time.perf_counter() - t)
    times.sort()
    median = times[len(times) // 2]
    r["seconds"] = median
    print(format_report(r))
    print(
        f"{args.matches} matches: median {median:.1f} s over {args.repeats} runs "
        f"({args.matches / median:.0f} matches/s)"
    )


if __name__ == "__main__":
    main()
