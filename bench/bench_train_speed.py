"""Training speed and its roofline: decisions per second of the whole PPO loop (rollout,
GAE, update), and how far the network's work is from what this machine's matrix
products can do.

For each recipe (``--recipes``, default ``default,champion,league``: the files in
``configs/``) it builds the trainer's parts as ``train.py`` does, with no imitation and
no evaluation, runs one update to warm up, then times ``--updates`` more and prints:

- the median seconds of the rollout (split into the policy's forward on the main
  thread, the critic's being on the second thread with ``split_update``, and the rest:
  the engine, the observations, the opponents, the bookkeeping), of GAE and of the update,
  and the decisions per second, both seats counted;
- the cores the rollout and the update keep at work (the process's CPU seconds per
  second of each: 2.0 is both cores all the time);
- the network's floating-point work per decision, counted by
  ``torch.utils.flop_counter.FlopCounterMode`` (matrix products; element-wise work is
  not counted): the rollout's forward, and the update's forward and backward times its
  epochs;
- the limit: the same matrix products timed alone at the same shapes, thread count and
  precision (the update's ``update_dtype``)
  (each linear layer's forward and backward products at the update's minibatch size, the
  forward ones at the rollout's batch), and the fraction of it that the update, the
  rollout's forward and the whole loop reach.

``--device cuda`` runs the network on a GPU (the games stay in numpy on the CPU).
``--busy K`` runs K CPU-bound neighbour processes during the timing (a shared machine).
``--versus KEY=VALUE --rounds R`` times each recipe also with that override, the two
alternating R times in one process, and prints the ratio of their median decisions per
second (``--versus update_dtype=bfloat16``: the update in bfloat16).
Run: ``python bench/bench_train_speed.py [--recipes default] [--set torch_threads=1]``.
"""

import argparse
import multiprocessing
import statistics
import threading
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from agents.training import ppo, rollout
from agents.training.config import make_config
from agents.training.network import ActorCritic
from agents.training.opponents import make_opponents
from ginenv import VectorEnv

ROOT = Path(__file__).parent.parent


def _burn(stop):
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def flops(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def linear_shapes(model: nn.Module, fn) -> list:
    """``(in, out)`` of every linear layer ``fn`` calls (the card head's small batched
    products are left out of the limit: it is the linear layers' speed)."""
    shapes, hooks = [], []
    for m in model.modules():
        if isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(lambda mod, i, o: shapes.append((mod.in_features, mod.out_features))))
    fn()
    for h in hooks:
        h.remove()
    return shapes


def matmul_seconds(rows: int, shapes: list, backward: bool, repeats: int = 20, dtype=torch.float32) -> float:
    """Median seconds of the matrix products of ``shapes`` at ``rows`` rows: the forward
    product, and with ``backward`` the two of the backward pass (input and weight
    gradients), in ``dtype``."""
    mats = []
    for i, o in shapes:
        x, w, g = (torch.randn(*shape).to(dtype) for shape in ((rows, i), (i, o), (rows, o)))
        mats.append((x, w, g))

    def run():
        for x, w, g in mats:
            torch.mm(x, w)
            if backward:
                torch.mm(g, w.t())
                torch.mm(x.t(), g)

    run()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench(config, device, updates: int) -> dict:
    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    env = VectorEnv(config.num_envs, config.rules, seed=config.seed, mode=config.mode)
    model = ActorCritic(config.network_spec()).to(device)
    optimizer, clip_groups = ppo.make_optimizer(model, config)
    opp = make_opponents(config, rng)
    forward_s = [0.0]
    main = threading.main_thread()

    def timed(inner):  # the policy's forward inside the rollout, on this thread, timed apart
        def run(*a, **k):
            t = time.perf_counter()
            out = inner(*a, **k)
            if threading.current_thread() is main:  # the split's critic runs meanwhile, on its own
                forward_s[0] += time.perf_counter() - t
            return out

        return run

    model.action_dist, model.get_value = timed(model.action_dist), timed(model.get_value)
    split = ppo.SplitWorker.for_config(config, device)
    rows = {"rollout": [], "forward": [], "gae": [], "update": [], "rollout_cores": [], "update_cores": []}
    for i in range(updates + 1):
        forward_s[0] = 0.0
        t0, c0 = time.perf_counter(), time.process_time()
        buf, _ = rollout.collect(env, model, opp, rng, config.num_steps, device, split)
        t1, c1 = time.perf_counter(), time.process_time()
        adv, returns = rollout.advantages(buf, config.gamma, config.gae_lambda)
        batch = ppo.flatten(buf, adv, returns, device, opponent_deadwood=model.deadwood_head is not None)
        t2, c2 = time.perf_counter(), time.process_time()
        ppo.update(
            model,
            optimizer,
            clip_groups,
            batch,
            config,
            config.ent_coef,
            False,
            rng,
            device,
            config.knock_ent_coef,
            split,
        )
        if device.type == "cuda":
            torch.cuda.synchronize()
        t3, c3 = time.perf_counter(), time.process_time()
        if i:  # the first update warms up (allocations, kernels)
            rows["rollout"].append(t1 - t0)
            rows["forward"].append(forward_s[0])
            rows["gae"].append(t2 - t1)
            rows["update"].append(t3 - t2)
            rows["rollout_cores"].append((c1 - c0) / (t1 - t0))  # CPU seconds of all threads a second
            rows["update_cores"].append((c3 - c2) / (t3 - t2))
    del model.action_dist, model.get_value
    if split is not None:
        split.close()
    med = {k: statistics.median(v) for k, v in rows.items()}
    total = statistics.median(a + b + c for a, b, c in zip(rows["rollout"], rows["gae"], rows["update"]))
    # The work per decision, counted on the CPU copy of the network.
    cpu = ActorCritic(config.network_spec())
    learner = len(batch["b_obs"])
    n = 512
    obs = torch.zeros(n, batch["b_obs"].shape[1])
    mask = torch.ones(n, batch["b_mask"].shape[1], dtype=torch.bool)
    opp_hand = torch.zeros(n, 52) if cpu.privileged_critic else None
    with torch.no_grad():
        fwd = flops(lambda: cpu.get_action_and_value(obs, mask, opponent_hand=opp_hand)) / n

    def train_step():
        logp, ent, v, _ = cpu.evaluate_actions(obs, mask, torch.zeros(n, dtype=torch.long), opp_hand)
        (logp.mean() + ent.mean() + v.mean()).backward()

    upd = flops(train_step) / n * config.update_epochs
    shapes = linear_shapes(cpu, train_step)
    minibatch = max(1, learner // config.num_minibatches)
    # The limit: the products alone at the same shapes, per decision.
    update_dtype = getattr(torch, config.update_dtype)  # the update's products in its own precision
    limit_update = (
        matmul_seconds(minibatch, shapes, backward=True, dtype=update_dtype) / minibatch * config.update_epochs
    )
    limit_fwd = matmul_seconds(config.num_envs, shapes, backward=False) / config.num_envs
    per_decision_update = med["update"] / learner
    per_decision_forward = med["forward"] / max(1, learner)
    return {
        "med": med,
        "total": total,
        "updates": updates,
        "decisions_per_s": config.batch_size / total,
        "learner_share": learner / config.batch_size,
        "flops_forward": fwd,
        "flops_update": upd,
        "update_fraction": limit_update / per_decision_update,
        "forward_fraction": limit_fwd / per_decision_forward,
        "loop_fraction": (limit_update + limit_fwd) * learner / total,
        "gflops_update": upd * learner / med["update"] / 1e9,
        "gflops_limit": upd / limit_update / 1e9,
    }


def report(name: str, config, r: dict, busy: int) -> None:
    m = r["med"]
    print(
        f"{name}: {config.architecture} {config.hidden_sizes}, {config.num_envs} games x "
        f"{config.num_steps} steps, {config.update_epochs} epochs x {config.num_minibatches} minibatches, "
        f"{config.torch_threads} threads, device {config.device}, {busy} busy neighbours"
        + (", the update's critic on a second thread" if config.split_update and config.device == "cpu" else "")
        + (f", the update's products in {config.update_dtype}" if config.update_dtype != "float32" else "")
    )
    print(
        f"  median of {r['updates']}: rollout {m['rollout']:.3f} s (policy forward {m['forward']:.3f} s, "
        f"engine and the rest {m['rollout'] - m['forward']:.3f} s)  gae {m['gae']:.3f} s  "
        f"update {m['update']:.3f} s  -> {r['decisions_per_s']:,.0f} decisions/s"
    )
    print(
        f"  shares of a step: engine and the rest {(m['rollout'] - m['forward']) / r['total']:.0%}, "
        f"policy forward {m['forward'] / r['total']:.0%}, gae {m['gae'] / r['total']:.0%}, "
        f"update {m['update'] / r['total']:.0%}"
    )
    print(
        f"  cores at work (CPU seconds of the process a second): rollout {m['rollout_cores']:.2f}, "
        f"update {m['update_cores']:.2f}"
    )
    print(
        f"  work per learner decision: forward {r['flops_forward'] / 1e3:,.1f} kFLOP, update "
        f"{r['flops_update'] / 1e3:,.1f} kFLOP (forward and backward x {config.update_epochs} epochs); "
        f"the learner makes {r['learner_share']:.0%} of the decisions"
    )
    print(
        f"  roofline: the update runs at {r['gflops_update']:.2f} GFLOP/s, its products alone at "
        f"{r['gflops_limit']:.2f}: {r['update_fraction']:.0%} of the limit; the rollout's forward "
        f"{r['forward_fraction']:.0%}; the whole loop {r['loop_fraction']:.0%}"
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recipes", default="default,champion,league", help="configs/<name>.yaml, comma-separated")
    p.add_argument("--config", default=None, help="one config file instead of --recipes")
    p.add_argument("--device", default="cpu")
    p.add_argument("--updates", type=int, default=5)
    p.add_argument("--busy", type=int, default=0, help="CPU-bound neighbour processes during the timing")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    p.add_argument(
        "--versus", default=None, metavar="KEY=VALUE", help="each recipe also with this override, and the ratio"
    )
    p.add_argument("--rounds", type=int, default=1, help="runs of each recipe (with --versus, alternating)")
    args = p.parse_args(argv)
    files = [Path(args.config)] if args.config else [ROOT / "configs" / f"{r}.yaml" for r in args.recipes.split(",")]
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True) for _ in range(args.busy)]
    for b in burners:
        b.start()
    try:
        for path in files:
            sets = [f"device={args.device}", "bc_decisions=0", "eval_every=0", "exploiter_every=0"]
            sets += ["league_exploiter_every=0", "frozen=[]"]
            sets += args.set
            variants = [[]] + ([[args.versus]] if args.versus else [])
            speeds = [[] for _ in variants]
            for _ in range(args.rounds):  # with --versus, the two alternate
                for k, extra in enumerate(variants):
                    config = make_config(config_file=str(path), sets=sets + extra)
                    r = bench(config, torch.device(config.device), args.updates)
                    report(path.stem + (f" ({extra[0]})" if extra else ""), config, r, args.busy)
                    speeds[k].append(r["decisions_per_s"])
            if args.versus:
                a, b = statistics.median(speeds[0]), statistics.median(speeds[1])
                print(
                    f"  {args.versus}: {b:,.0f} against {a:,.0f} decisions/s, {b / a:.2f}x (medians of {args.rounds})"
                )
    finally:
        stop.set()
        for b in burners:
            b.join(timeout=5)


if __name__ == "__main__":
    main()
