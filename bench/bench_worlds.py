"""Are the search's worlds as strong as the real opponent? Its deadwood, dealt and true.

The shipped bot plays ``--hands`` single hands against ``--opponent`` (a baseline, or
``self``: the bot itself). At each of the bot's decisions where it may knock, the
opponent's true deadwood is set beside the mean deadwood it gets in ``--worlds`` worlds
of ``ginenv.worlds.resample_hidden`` by the belief net's odds (as the search deals them),
for each ``lean`` (the least-deadwood deal of M). A knock is undercut by low deadwood, so
worlds whose opponent holds more than the real one value knocks too well.
Run: ``python bench/bench_worlds.py [--opponent marjj] [--hands 300] [--worlds 16]``.
"""

from __future__ import annotations

import argparse

import numpy as np


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--opponent", default="marjj", help="a baseline name, or self (the shipped bot)")
    p.add_argument("--hands", type=int, default=300)
    p.add_argument("--worlds", type=int, default=16)
    p.add_argument("--leans", default="1,2,3,4,6", help="the leans to compare, comma-separated")
    p.add_argument("--seed", type=int, default=11)
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from agents import SHIPPED, load_policy
    from ginenv import actions as A
    from ginenv import core
    from ginenv.baselines import make_baseline
    from ginenv.observation import observe
    from ginenv.worlds import resample_hidden

    leans = [int(x) for x in args.leans.split(",")]
    bot = load_policy(SHIPPED)
    opponent = bot if args.opponent == "self" else make_baseline(args.opponent)
    n, w = args.hands, args.worlds
    s = core.init(n, "standard", args.seed, mode="hand")
    bot_seat = (np.arange(n) % 2).astype(np.int8)
    rng = np.random.default_rng(args.seed)
    true, dealt = [], {m: [] for m in leans}
    while not s.done.all():
        live = ~s.done
        mask, obs = core.legal_action_mask(s), observe(s, s.current)
        acts = np.zeros(n, np.int64)
        mine = live & (s.current == bot_seat)
        for agent, idx in ((bot, np.flatnonzero(mine)), (opponent, np.flatnonzero(live & ~mine))):
            if idx.size:
                acts[idx] = agent.act(obs[idx], mask[idx])
        may = np.flatnonzero(mine & mask[:, A.KNOCK : A.DRAW_STOCK].any(1))
        if may.size:
            seats = s.current[may].astype(np.int64)
            per = np.repeat(np.arange(may.size), w)
            b = np.clip(bot.belief(obs[may]), 1e-3, 1 - 1e-3)
            true += list(s._deadwood[may, 1 - seats])
            for m in leans:
                worlds = resample_hidden(s.select(may[per]), seats[per], rng, (b / (1 - b))[per], lean=m)
                dw = worlds._deadwood[np.arange(per.size), 1 - seats[per]]
                dealt[m] += list(dw.reshape(-1, w).mean(1))
        core.step(s, acts)
    t = np.array(true, np.float64)
    print(f"the shipped bot against {args.opponent}: {t.size} decisions where it may knock ({n} hands)")
    print(f"  the opponent's true deadwood: mean {t.mean():.1f}, median {np.median(t):.1f}")
    for m in leans:
        d = np.array(dealt[m])
        print(
            f"  worlds, lean {m}: mean {d.mean():.1f}, median {np.median(d):.1f}, "
            f"mean excess over the truth {np.mean(d - t):+.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
