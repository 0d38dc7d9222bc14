"""Env steps per second of the vector APIs against ``SingleAgentEnv``, in one run.

Each env plays the learner's side with uniformly random legal moves against
``--opponent`` (default random); a step is one learner decision in one game (the
opponent's replies included). Times ``SingleAgentEnv`` one game at a time, then
``GinRummyVectorEnv`` and the SB3 ``GinRummyVecEnv`` with ``--num-envs`` games a call;
prints each rate (median of ``--repeats``) and its ratio to ``SingleAgentEnv``.
Run: ``python bench/bench_vector_env.py [--num-envs 256] [--opponent knock_early]``.
"""

import argparse
import statistics
import time

import numpy as np

from ginenv import SingleAgentEnv
from ginenv.vector_env import GinRummyVectorEnv


def single_rate(opponent: str, steps: int, rng) -> float:
    env = SingleAgentEnv(opponent=opponent)
    obs, info = env.reset(seed=0)
    t = time.perf_counter()
    for _ in range(steps):
        mask = info["action_mask"]
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term or trunc:
            obs, info = env.reset()
    return steps / (time.perf_counter() - t)


def batch_rate(step, masks, n: int, calls: int, rng) -> float:
    t = time.perf_counter()
    for _ in range(calls):
        m = masks()
        step((rng.random(m.shape) * m).argmax(1))
    return n * calls / (time.perf_counter() - t)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--opponent", default="random")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--calls", type=int, default=100)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    rates = {"SingleAgentEnv": [], "GinRummyVectorEnv": [], "SB3 GinRummyVecEnv": []}
    venv = GinRummyVectorEnv(args.num_envs, opponent=args.opponent)
    venv.reset(seed=0)
    sb3 = None
    try:
        from agents.bridges.sb3 import GinRummyVecEnv

        sb3 = GinRummyVecEnv(args.num_envs, opponent=args.opponent)
        sb3.reset()
    except ImportError:
        del rates["SB3 GinRummyVecEnv"]
    for _ in range(args.repeats):
        rates["SingleAgentEnv"].append(single_rate(args.opponent, 3000, rng))
        rates["GinRummyVectorEnv"].append(batch_rate(venv.step, venv.action_masks, args.num_envs, args.calls, rng))
        if sb3 is not None:
            rates["SB3 GinRummyVecEnv"].append(
                batch_rate(
                    lambda a: (sb3.step_async(a), sb3.step_wait()), sb3.action_masks, args.num_envs, args.calls, rng
                )
            )
    base = statistics.median(rates["SingleAgentEnv"])
    print(f"opponent {args.opponent}, {args.num_envs} games a call, medians of {args.repeats}:")
    for name, r in rates.items():
        print(f"  {name:20s} {statistics.median(r):10,.0f} env steps/s   x{statistics.median(r) / base:6.1f}")


if __name__ == "__main__":
    main()
