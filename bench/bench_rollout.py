"""Search's rollouts: decisions per second and where the time goes (engine, observation,
legal mask, forward pass), one thread.

A batch as the search builds it: ``--games`` positions of the shipped bot against itself
(after ``--moves`` moves, seeded), each dealt ``--worlds`` worlds by the belief net's odds
(``ginenv.worlds.resample_hidden``) times ``--candidates`` first moves (the policy's
likeliest), played to the end of the hand by ``agents.training.search.rollout``. Each part
is timed by wrapping the functions ``rollout`` calls; the figures are medians over
``--repeats`` runs. Besides, the forward pass alone at the same batch, in float32 and
under bfloat16 autocast (not used by the search: it changes a few choices), with how
often their greedy moves agree.
Run: ``python bench/bench_rollout.py [--games 1] [--worlds 64] [--candidates 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--worlds", type=int, default=64)
    p.add_argument("--candidates", type=int, default=3)
    p.add_argument("--moves", type=int, default=6, help="moves played before the search (from the deal)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--patient", action="store_true", help="patient rollouts (the expert level's)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from agents import SHIPPED, load_policy
    from agents.training import search
    from ginenv import core
    from ginenv.observation import observe
    from ginenv.rules import Rules
    from ginenv.worlds import resample_hidden

    policy = load_policy(SHIPPED)
    model = policy.model
    s = core.init(args.games, Rules(), args.seed, mode="hand")
    for _ in range(args.moves):
        live = np.flatnonzero(~(s.hand_ended | s.done))
        a = np.full(args.games, core.SKIP, np.int64)
        a[live] = policy.act(observe(s, s.current)[live], core.legal_action_mask(s)[live])
        core.step(s, a)
    if (s.hand_ended | s.done).any():
        raise SystemExit("a hand ended before the search: fewer --moves")
    obs, mask = observe(s, s.current), core.legal_action_mask(s)
    probs = policy.probabilities(obs, mask)
    k = args.candidates
    cand = np.argsort(-np.where(mask, probs, -1), 1, kind="stable")[:, :k]
    cand = np.where(np.take_along_axis(mask, cand, 1), cand, cand[:, :1])
    w, g = args.worlds, args.games
    rng = np.random.default_rng(args.seed)
    with torch.no_grad():
        b = model.actor.belief(torch.as_tensor(obs)).clamp(1e-3, 1 - 1e-3).numpy()
    per_world = np.repeat(np.arange(g), w)
    worlds = resample_hidden(s.select(per_world), s.current[per_world], rng, (b / (1 - b))[per_world])
    batch = worlds.select(np.repeat(np.arange(g * w), k))
    first = np.tile(cand, (1, w)).reshape(-1)
    seat = np.repeat(s.current, w * k).astype(np.int64)

    parts = {"engine": 0.0, "observation": 0.0, "legal mask": 0.0, "forward pass": 0.0}
    counted = {"decisions": 0}

    def timed(name, fn, count=False):
        def run(*a, **kw):
            t = time.perf_counter()
            out = fn(*a, **kw)
            parts[name] += time.perf_counter() - t
            if count:
                counted["decisions"] += len(out)
            return out

        return run

    real = (core.step, search.observe, core.legal_action_mask, policy.greedy)
    core.step = timed("engine", real[0])
    search.observe = timed("observation", real[1])
    core.legal_action_mask = timed("legal mask", real[2])
    policy.greedy = timed("forward pass", real[3], count=True)
    runs = []
    try:
        for _ in range(args.repeats):
            for key in parts:
                parts[key] = 0.0
            counted["decisions"] = 0
            t = time.perf_counter()
            search.rollout(policy, batch.copy(), first, seat, patient=args.patient)
            wall = time.perf_counter() - t
            runs.append((wall, counted["decisions"], dict(parts)))
    finally:
        core.step, search.observe, core.legal_action_mask, policy.greedy = real
    wall = statistics.median(r[0] for r in runs)
    decisions = runs[0][1]
    print(
        f"{g} position(s) x {w} worlds x {k} candidates = {batch.batch_size} rollouts, "
        f"{decisions} decisions a run, {args.repeats} runs, 1 thread"
    )
    print(f"rollout decisions per second: {decisions / wall:,.0f} (median run {wall * 1e3:.1f} ms)")
    for key in parts:
        share = statistics.median(r[2][key] / r[0] for r in runs)
        print(f"  {key:13s} {share:6.1%}")
    print(f"  {'the rest':13s} {1 - sum(statistics.median(r[2][k] / r[0] for r in runs) for k in parts):6.1%}")

    # The forward pass alone at the batch's size: float32 (the search's) and bfloat16.
    o = torch.from_numpy(np.array(observe(batch, batch.current)))
    m = torch.from_numpy(np.array(core.legal_action_mask(batch)))
    with torch.no_grad():
        greedy32 = model.act_greedy(o, m)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            greedy16 = model.act_greedy(o, m)
        times = {"float32": [], "bfloat16": []}
        for _ in range(7):
            for name in times:
                t = time.perf_counter()
                if name == "bfloat16":
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        model.act_greedy(o, m)
                else:
                    model.act_greedy(o, m)
                times[name].append(time.perf_counter() - t)
    rate = {name: len(o) / statistics.median(ts) for name, ts in times.items()}
    print(
        f"forward pass alone, {len(o)} rows: float32 {rate['float32']:,.0f} rows/s, bfloat16 autocast "
        f"{rate['bfloat16']:,.0f} rows/s ({rate['bfloat16'] / rate['float32']:.2f}x), greedy moves agree "
        f"{(greedy32 == greedy16).float().mean().item():.2%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
