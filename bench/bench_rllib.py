"""train.py against the RLlib trainer on the same cores: decisions per second and per
CPU-second of the whole PPO loop (sampling, advantages, update), torch threads 1.

Each setup runs in a fresh process, one after the other on the same machine: train.py's
parts as ``train.py`` runs them, and ``python -m agents.rllib``'s (``agents.bridges.rllib``)
with 0 env runners (sampling in the driver), 1 and 2 (sampling processes; the learner
stays in the driver). The same config for all (default: ``configs/default.yaml``). One
update warms up, then ``--updates`` more are timed; figures are medians over them.

- learner decisions/s: the decisions that train the learner (train.py: both seats of a
  game against itself, one seat against the others; RLlib: every env step, its opponent's
  moves played inside the env), per second of wall time;
- moves/s (train.py only): every move played, both seats;
- sampling decisions/s (RLlib): learner decisions per second of RLlib's sampling timer,
  the part env runners share out;
- weights: RLlib's sync of the learner's weights to the env runners after each update
  (its `synch_weights` timer), and the push of one snapshot to every env runner's pool;
- CPU-seconds: the driver's process CPU time plus each env runner's, over the timed
  updates (Ray's own daemons not counted).

Run: ``python bench/bench_rllib.py [--updates 5] [--set KEY=VALUE ...]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUPS = ("train.py", "rllib-0", "rllib-1", "rllib-2")


def _config(sets):
    from agents.training.config import make_config

    base = ["torch_threads=1", "eval_every=0", "bc_decisions=0", "checkpoint_every=1000000"]
    return make_config(config_file=ROOT / "configs" / "default.yaml", sets=base + list(sets))


def bench_train_py(updates: int, sets) -> dict:
    import numpy as np
    import torch

    from agents.training import ppo, rollout
    from agents.training.network import ActorCritic
    from agents.training.opponents import make_opponents
    from ginenv import VectorEnv

    c = _config(sets)
    torch.set_num_threads(1)
    torch.manual_seed(c.seed)
    rng = np.random.default_rng(c.seed)
    env = VectorEnv(c.num_envs, c.rules, seed=c.seed, mode=c.mode)
    model = ActorCritic(c.network_spec())
    optimizer, groups = ppo.make_optimizer(model, c)
    opp = make_opponents(c, rng)
    device = torch.device("cpu")
    rates, moves, cpu0 = [], [], None
    learned = 0
    for i in range(updates + 1):
        if i == 1:
            cpu0 = time.process_time()
        t0 = time.perf_counter()
        buf, n = rollout.collect(env, model, opp, rng, c.num_steps, device)
        adv, ret = rollout.advantages(buf, c.gamma, c.gae_lambda)
        ppo.update(model, optimizer, groups, ppo.flatten(buf, adv, ret, device), c, c.ent_coef, False, rng, device)
        dt = time.perf_counter() - t0
        if i:
            rates.append(n / dt)
            moves.append(c.batch_size / dt)
            learned += n
    cpu = time.process_time() - cpu0
    return {
        "setup": "train.py",
        "learner_decisions_per_s": statistics.median(rates),
        "moves_per_s": statistics.median(moves),
        "learner_decisions_per_cpu_s": learned / cpu,
        "cpu_seconds": cpu,
    }


def bench_rllib(runners: int, updates: int, sets) -> dict:
    import ray

    from agents.bridges.rllib import build, learner_weights, on_env_runners, push_snapshot, set_schedule

    c = _config(sets)
    ray.init(num_cpus=max(2, runners), include_dashboard=False, log_to_driver=False)
    run = build(c, ROOT / "runs" / "bench_rllib", None, num_env_runners=runners, quiet=True)
    algo = run.algo
    rates, sampling, sync, learned, cpu0, runners0 = [], [], [], 0, None, None
    for i in range(updates + 1):
        if i == 1:
            cpu0 = time.process_time()
            runners0 = sum(on_env_runners(algo, lambda r: time.process_time())) if runners else 0.0
        set_schedule(algo, c, i)
        t0 = time.perf_counter()
        result = algo.train()
        dt = time.perf_counter() - t0
        n = int(result["env_runners"]["num_env_steps_sampled"])
        if i:
            rates.append(n / dt)
            sampling.append(n / result["timers"]["env_runner_sampling_timer"])
            sync.append(result["timers"].get("synch_weights", float("nan")))
            learned += n
    runners_cpu = (sum(on_env_runners(algo, lambda r: time.process_time())) - runners0) if runners else 0.0
    cpu = time.process_time() - cpu0 + runners_cpu
    snapshot = statistics.median(push_snapshot(algo, learner_weights(algo)) for _ in range(3))
    algo.stop()
    ray.shutdown()
    return {
        "setup": f"rllib-{runners}",
        "learner_decisions_per_s": statistics.median(rates),
        "sampling_decisions_per_s": statistics.median(sampling),
        "learner_decisions_per_cpu_s": learned / cpu,
        "cpu_seconds": cpu,
        "weights_sync_s": statistics.median(sync),
        "snapshot_push_s": snapshot,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--updates", type=int, default=5)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--one", choices=SETUPS, help=argparse.SUPPRESS)  # one setup, in this process
    args = p.parse_args(argv)
    if args.one:
        if args.one == "train.py":
            out = bench_train_py(args.updates, args.set)
        else:
            out = bench_rllib(int(args.one.split("-")[1]), args.updates, args.set)
        print("RESULT " + json.dumps(out))
        return 0
    c = _config(args.set)
    print(f"config: {c.num_envs} games x {c.num_steps} steps an update, {c.architecture} {c.hidden_sizes}, 1 thread")
    results = {}
    for setup in SETUPS:
        cmd = [sys.executable, __file__, "--one", setup, "--updates", str(args.updates)]
        for s in args.set:
            cmd += ["--set", s]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        line = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
        if not line:
            print(f"{setup}: failed\n{out.stderr[-3000:]}")
            return 1
        r = results[setup] = json.loads(line[0][len("RESULT ") :])
        extra = ""
        if "sampling_decisions_per_s" in r:
            extra = (
                f"  sampling {r['sampling_decisions_per_s']:,.0f}/s  weights to runners "
                f"{r['weights_sync_s'] * 1e3:.1f} ms an update, a snapshot {r['snapshot_push_s'] * 1e3:.1f} ms"
            )
        extra += f"  moves {r['moves_per_s']:,.0f}/s" if "moves_per_s" in r else ""
        print(
            f"{setup:9s} learner decisions {r['learner_decisions_per_s']:8,.0f}/s  "
            f"{r['learner_decisions_per_cpu_s']:8,.0f} per CPU-second{extra}",
            flush=True,
        )
    base = results["train.py"]["learner_decisions_per_s"]
    one = results["rllib-1"]
    print(f"RLlib (0 env runners) / train.py: {results['rllib-0']['learner_decisions_per_s'] / base:.2f}x")
    for k in ("rllib-1", "rllib-2"):
        print(f"RLlib ({k[-1]} env runner(s)) / train.py: {results[k]['learner_decisions_per_s'] / base:.2f}x")
    r2 = results["rllib-2"]
    print(
        f"2 env runners / 1: {r2['learner_decisions_per_s'] / one['learner_decisions_per_s']:.2f}x whole loop, "
        f"{r2['sampling_decisions_per_s'] / one['sampling_decisions_per_s']:.2f}x sampling"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
