"""Training speed: decisions per second of the whole PPO loop (rollout, GAE, update).

Builds the trainer from a config (default: the shipped recipe, ``configs/champion.yaml``)
with no imitation and no evaluation, runs one update to warm up, then times
``--updates`` more and prints the median rollout and update seconds and the decisions
per second, both seats counted. ``--device cuda`` runs the network on a GPU (the games
stay in numpy on one CPU core). Run: ``python bench/bench_train_speed.py [--device cuda]
[--set num_envs=2048 ...]``.
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import train


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default=str(Path(train.__file__).parent / "configs" / "champion.yaml"))
    p.add_argument("--device", default="cpu")
    p.add_argument("--updates", type=int, default=5)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        sets = [f"device={args.device}", "bc_decisions=0", "eval_every=0", f"log_dir={tmp}",
                f"checkpoint_dir={tmp}", "run_name=speed"] + args.set
        config = train.make_config(config_file=args.config, sets=sets)
        trainer = train.Trainer(config, quiet=True)
        rollout, update = [], []
        for i in range(args.updates + 1):
            t0 = time.perf_counter()
            batch = trainer.rollout()
            t1 = time.perf_counter()
            adv, returns = trainer.advantages(batch)
            trainer.ppo_update(batch, adv, returns, 0.0)
            if config.device.startswith("cuda"):
                import torch
                torch.cuda.synchronize()
            t2 = time.perf_counter()
            if i:  # the first update warms up (allocations, kernels)
                rollout.append(t1 - t0)
                update.append(t2 - t1)
        trainer.writer.close()
    r, u = statistics.median(rollout), statistics.median(update)
    total = statistics.median(a + b for a, b in zip(rollout, update))
    print(f"device {config.device}  architecture {config.architecture}  hidden {config.hidden_sizes}  "
          f"{config.num_envs} games x {config.num_steps} steps = {config.batch_size} decisions an update")
    print(f"median of {args.updates}: rollout {r:.2f} s  update {u:.2f} s  "
          f"-> {config.batch_size / total:,.0f} decisions/s")


if __name__ == "__main__":
    main()
