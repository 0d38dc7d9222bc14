"""Decisions per second of the batched engine playing uniformly random legal actions.

Batch 4096, single process, the full legal mask computed every step, auto-reset in
match mode. Prints the whole loop's rate and the engine's share (mask + step) apart
from the random player's; then ``VectorEnv`` with observations and masks; then the
PettingZoo AEC env, one game at a time. Run: ``python bench/bench_core.py``.
"""

import argparse
import time

import numpy as np

from ginenv import VectorEnv, core, gin_rummy_v0


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--rules", default="standard")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    state = core.init(args.batch, args.rules, seed=0, mode="match", auto_reset=True)
    rng = np.random.default_rng(0)
    rates, engine_rates, hand_rates = [], [], []
    for _ in range(args.repeats):
        engine = player = 0.0
        hands = 0
        for _ in range(args.steps):
            t0 = time.perf_counter()
            mask = core.legal_action_mask(state)
            t1 = time.perf_counter()
            acts = (rng.random(mask.shape, dtype=np.float32) * mask).argmax(1)
            t2 = time.perf_counter()
            core.step(state, acts)
            t3 = time.perf_counter()
            engine += (t1 - t0) + (t3 - t2)
            player += t2 - t1
            hands += int(state.hand_ended.sum())
        decisions = args.batch * args.steps
        rates.append(decisions / (engine + player))
        engine_rates.append(decisions / engine)
        hand_rates.append(hands / (engine + player))
    print(
        f"batch {args.batch}, {args.rules}: {np.median(rates) / 1e6:.3f} M decisions/s with the random player, "
        f"{np.median(engine_rates) / 1e6:.3f} M decisions/s engine only (mask + step), "
        f"{np.median(hand_rates) / 1e3:.1f} k hands/s  (median of {args.repeats} x {args.steps} steps)"
    )

    env = VectorEnv(args.batch, args.rules, seed=0, mode="match")
    obs, mask, _ = env.reset()
    vec_rates, vec_env_rates = [], []
    for _ in range(args.repeats):
        total = env_time = 0.0
        for _ in range(args.steps):
            t0 = time.perf_counter()
            acts = (rng.random(mask.shape, dtype=np.float32) * mask).argmax(1)
            t1 = time.perf_counter()
            out = env.step(acts)
            t2 = time.perf_counter()
            mask = out.action_mask
            total += t2 - t0
            env_time += t2 - t1
        vec_rates.append(args.batch * args.steps / total)
        vec_env_rates.append(args.batch * args.steps / env_time)
    print(
        f"VectorEnv batch {args.batch} with observations and masks: {np.median(vec_rates) / 1e6:.3f} M decisions/s "
        f"with the random player, {np.median(vec_env_rates) / 1e6:.3f} M decisions/s env.step only"
    )

    aec = gin_rummy_v0.raw_env(rules=args.rules, mode="match")
    aec.reset(seed=0)
    aec_rates = []
    for _ in range(args.repeats):
        t, n = time.perf_counter(), 0
        while n < 3000:
            agent = aec.agent_selection
            if aec.terminations[agent] or aec.truncations[agent]:
                aec.reset()
                continue
            legal = np.flatnonzero(aec.observe(agent)["action_mask"])
            aec.step(int(legal[rng.integers(len(legal))]))
            n += 1
        aec_rates.append(n / (time.perf_counter() - t))
    print(f"AEC env, one game, observe + step: {np.median(aec_rates) / 1e3:.1f} k steps/s")


if __name__ == "__main__":
    main()
