"""Training speed: decisions per second of the whole PPO loop (rollout, GAE, update).

Builds the trainer's parts from a config (default: the shipped recipe,
``configs/champion.yaml``) as ``train.py`` does, with no imitation and no evaluation,
runs one update to warm up, then times
``--updates`` more and prints the median rollout and update seconds and the decisions
per second, both seats counted. ``--device cuda`` runs the network on a GPU (the games
stay in numpy on one CPU core). Run: ``python bench/bench_train_speed.py [--device cuda]
[--set num_envs=2048 ...]``.
"""

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from agents.training import ppo, rollout
from agents.training.config import make_config
from agents.training.network import ActorCritic
from agents.training.opponents import make_opponents
from ginenv import VectorEnv

ROOT = Path(__file__).parent.parent


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default=str(ROOT / "configs" / "champion.yaml"))
    p.add_argument("--device", default="cpu")
    p.add_argument("--updates", type=int, default=5)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    args = p.parse_args(argv)
    sets = [f"device={args.device}", "bc_decisions=0", "eval_every=0"] + args.set
    config = make_config(config_file=args.config, sets=sets)
    torch.set_num_threads(config.torch_threads)
    device = torch.device(config.device)
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    env = VectorEnv(config.num_envs, config.rules, seed=config.seed, mode=config.mode)
    model = ActorCritic(config.network_spec()).to(device)
    optimizer, clip_groups = ppo.make_optimizer(model, config)
    opp = make_opponents(config, rng)
    rollout_s, update_s = [], []
    for i in range(args.updates + 1):
        t0 = time.perf_counter()
        buf, _ = rollout.collect(env, model, opp, rng, config.num_steps, device)
        t1 = time.perf_counter()
        adv, returns = rollout.advantages(buf, config.gamma, config.gae_lambda)
        ppo.update(
            model,
            optimizer,
            clip_groups,
            ppo.flatten(buf, adv, returns, device),
            config,
            config.ent_coef,
            critic_only=False,
            rng=rng,
            device=device,
        )
        if device.type == "cuda":
            torch.cuda.synchronize()
        t2 = time.perf_counter()
        if i:  # the first update warms up (allocations, kernels)
            rollout_s.append(t1 - t0)
            update_s.append(t2 - t1)
    r, u = statistics.median(rollout_s), statistics.median(update_s)
    total = statistics.median(a + b for a, b in zip(rollout_s, update_s))
    print(
        f"device {config.device}  architecture {config.architecture}  hidden {config.hidden_sizes}  "
        f"{config.num_envs} games x {config.num_steps} steps = {config.batch_size} decisions an update"
    )
    print(
        f"median of {args.updates}: rollout {r:.2f} s  update {u:.2f} s  "
        f"-> {config.batch_size / total:,.0f} decisions/s"
    )


if __name__ == "__main__":
    main()
