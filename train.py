"""Self-play PPO for gin rummy: ``python train.py --config configs/<name>.yaml [--set key=value ...]``.

Reads like CleanRL's ppo.py, top to bottom: config, seeding, envs, agent, opponents,
rollout, advantages, update, logging, evaluation, checkpoints. Its parts are plain
functions in ``agents/`` (``config``, ``rollout``, ``ppo``, ``opponents``,
``warmstart``, ``checkpoint``). What the game adds to PPO:

- **Two players per game.** Each step one player moves in each game. Every decision of
  the learner is stored with its seat; its reward is what that seat receives until its
  next decision in the same game, and GAE follows each seat's own chain of decisions.
- **Opponents.** Each episode draws who sits opposite the learner: the learner itself
  (both seats train), a past snapshot from the pool, or a baseline, with the mix set in
  the config. Only the learner's decisions train the learner.
- **Masks.** Illegal logits are filled with -1e8 before the softmax.
- **Privileged critic** (optional): the critic also sees the opponent's hand; the actor
  never does, so the trained policy stays fair.

``python train.py`` with no arguments trains with ``configs/default.yaml``. TensorBoard
logs go to ``runs/<run>/``, checkpoints to ``checkpoints/<run>/``; ``--resume
checkpoints/<run>`` continues a run exactly where its last checkpoint left it.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import torch

from agents import opponents as O
from agents import ppo, rollout, warmstart
from agents.checkpoint import CheckpointError, read_training_meta, resolve_checkpoint, restore_training, save_training
from agents.config import Config, from_saved, make_config
from agents.evaluate import play
from agents.network import ActorCritic
from agents.policy import Policy
from ginenv import VectorEnv
from ginenv.baselines import BASELINES
from ginenv.rules import Rules

DEFAULT_CONFIG = Path(__file__).parent / "configs" / "default.yaml"
EVAL_OPPONENTS = ("knock_early", "gin_hunter")
EVAL_SEED = 10_000  # evaluation k plays the games of seed EVAL_SEED + update


def resumed_config(resume, given: Config, overrides=()) -> tuple[Path, Config]:
    """The step directory to resume from and the config saved with it, with the keys
    ``overrides`` (and where logs and checkpoints go, the threads and the device) taken
    from ``given``."""
    step_dir = resolve_checkpoint(resume)
    try:
        saved = from_saved(read_training_meta(step_dir)["config"])
        for key in ("log_dir", "checkpoint_dir", "torch_threads", "device", *overrides):
            saved[key] = getattr(given, key)
        return step_dir, Config(**saved)
    except (TypeError, ValueError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(
            f"the config saved in {step_dir / 'trainer.json'} is not one this version runs: {e}"
        ) from None


class StopSignal:
    """Catches SIGINT and SIGTERM (in the main thread) until ``restore``, so that the
    loop can checkpoint before it stops; a second signal stops at once."""

    def __init__(self):
        self.signum = None
        self.previous = {}
        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.signal(s, self._catch) for s in (signal.SIGINT, signal.SIGTERM)}

    def _catch(self, signum, frame):
        if self.signum is not None:  # asked twice: stop now
            self.restore()
            signal.raise_signal(signum)
        self.signum = signum
        print(
            f"\n{signal.Signals(signum).name}: stopping at the end of this update (again to stop at once)", flush=True
        )

    def is_set(self) -> bool:
        return self.signum is not None

    def restore(self) -> None:
        for s, handler in self.previous.items():
            signal.signal(s, handler)
        self.previous = {}


def evaluate(model: ActorCritic, config: Config, rules: Rules, update: int) -> dict:
    """Match win rates against the baselines (the model back in train mode after)."""
    out = {}
    for name in EVAL_OPPONENTS:
        r = play(
            Policy(model, name="learner"),
            BASELINES[name](seed=0),
            config.eval_matches,
            rules,
            seed=EVAL_SEED + update,
            mode=config.eval_mode,
        )
        out[name] = {
            "win_rate": r["win_rate_a"],
            "ci95": r["win_rate_a_ci95"],
            "points_per_hand": r["points_per_hand_a"] - r["points_per_hand_b"],
            "hand_win_rate": r["hands_won_a"] / max(r["hands"], 1),
            "games": r["games"],
        }
    model.train()
    return out


def train(
    config: Config | None = None,
    resume=None,
    resume_overrides=(),
    quiet: bool = False,
    stop_after: int | None = None,
    time_limit: float | None = None,
    **overrides,
) -> Path:
    """Train to the end, or for ``stop_after`` more updates, or until the first update
    that ends ``time_limit`` seconds or more after the start; then checkpoint (a run
    stopped early continues with ``resume``). Returns the last checkpoint."""
    # ---------------------------------------------------------------- config
    c = config or make_config(overrides)
    step_dir = None
    if resume is not None:  # the run's own config, but for the keys given again
        step_dir, c = resumed_config(resume, c, resume_overrides)
    if not c.run_name:
        c.run_name = f"gin__{c.exp_name}__{c.seed}__{int(time.time())}"
    run_dir = Path(c.checkpoint_dir) / c.run_name
    if step_dir is not None and "checkpoint_dir" not in resume_overrides:
        run_dir = step_dir.parent  # a resumed run continues in its own directory
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    # --------------------------------------------------------------- seeding
    torch.set_num_threads(c.torch_threads)
    device = torch.device(c.device)
    torch.manual_seed(c.seed)
    rng = np.random.default_rng(c.seed)
    # ------------------------------------------------------------------ envs
    rules = Rules.preset(c.rules)
    env = VectorEnv(
        c.num_envs, rules, seed=c.seed, mode=c.mode, reward_scale=c.reward_scale, match_win_reward=c.match_win_reward
    )
    # ----------------------------------------------------------------- agent
    spec = c.network_spec()
    model = ActorCritic(spec).to(device)
    if c.init_from and step_dir is None:
        warmstart.load_initial_weights(model, c.init_from, quiet)
    optimizer, clip_groups = ppo.make_optimizer(model, c)
    opponents = O.make_opponents(c, rng)
    progress = {"update": 0, "decisions": 0, "learner_decisions": 0}
    last_eval: dict = {}
    if step_dir is not None:
        saved = restore_training(
            step_dir,
            model,
            optimizer=optimizer,
            env=env,
            opponents=opponents,
            rng=rng,
            device=device,
            new_model=lambda: ActorCritic(spec).to(device),
        )
        last_eval = saved.pop("last_eval")
        progress.update(saved)
    resumed_at = progress["update"]
    # --------------------------------------------------------------- logging
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(Path(c.log_dir) / c.run_name))
    if step_dir is None:
        table = "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(c).items())
        writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{table}")
    say(f"run {c.run_name}: TensorBoard logs in {Path(c.log_dir) / c.run_name}, checkpoints in {run_dir}")

    def log_eval(ev: dict) -> str:
        nonlocal last_eval
        last_eval = {"update": progress["update"], "decisions": progress["decisions"], **ev}
        for name, e in ev.items():
            writer.add_scalar(f"eval/{name}_win_rate", e["win_rate"], progress["decisions"])
            writer.add_scalar(f"eval/{name}_win_rate_ci_low", e["ci95"][0], progress["decisions"])
            writer.add_scalar(f"eval/{name}_win_rate_ci_high", e["ci95"][1], progress["decisions"])
            writer.add_scalar(f"eval/{name}_points_per_hand", e["points_per_hand"], progress["decisions"])
        return "  ".join(f"vs {k} {v['win_rate']:.3f}" for k, v in ev.items())

    def checkpoint() -> Path:
        meta = {
            "network": spec.to_dict(),
            "rules": rules.to_dict(),
            "config": dataclasses.asdict(c),
            "update": progress["update"],
            "decisions": progress["decisions"],
            "evaluation": last_eval,
        }
        return save_training(
            run_dir,
            model,
            meta,
            optimizer=optimizer,
            env_state=env.state,
            opponents=opponents,
            rng=rng,
            progress=progress,
            config=dataclasses.asdict(c),
            device=device,
        )

    # ------------------------------------------------------------ warm start
    if progress["update"] == 0 and c.bc_teacher and c.bc_decisions:
        warmstart.imitate(model, c, rng, device, log=writer.add_scalar, quiet=quiet)
        if c.eval_every:
            say("after imitation: " + log_eval(evaluate(model, c, rules, progress["update"])))
    # -------------------------------------------------------------- the loop
    stop = StopSignal()  # Ctrl-C or SIGTERM: checkpoint at the end of the update, then stop
    start, start_decisions, path = time.time(), progress["decisions"], None
    end = c.num_updates if stop_after is None else min(c.num_updates, progress["update"] + stop_after)
    while progress["update"] < end:
        frac = progress["update"] / c.num_updates
        if c.anneal_lr:
            optimizer.param_groups[0]["lr"] = c.learning_rate * (1.0 - frac)
        # ----------------------------------------------------------- rollout
        t0 = time.time()
        buf, learner_decisions = rollout.collect(env, model, opponents, rng, c.num_steps, device)
        progress["decisions"] += c.batch_size
        progress["learner_decisions"] += learner_decisions
        t1 = time.time()
        # ------------------------------------------------ advantages, update
        adv, returns = rollout.advantages(buf, c.gamma, c.gae_lambda)
        ent_coef = c.ent_coef + (c.ent_coef_final - c.ent_coef) * frac
        stats = ppo.update(
            model,
            optimizer,
            clip_groups,
            ppo.flatten(buf, adv, returns, device),
            c,
            ent_coef,
            critic_only=progress["update"] < c.critic_warmup_updates,
            rng=rng,
            device=device,
        )
        t2 = time.time()
        progress["update"] += 1
        update = progress["update"]
        if update % c.snapshot_every == 0:
            O.add_snapshot(opponents, model, c.pool_size, device)
        # ----------------------------------------------------------- logging
        sps = (progress["decisions"] - start_decisions) / max(time.time() - start, 1e-9)
        stats.update(
            {
                "charts/learning_rate": optimizer.param_groups[0]["lr"],
                "charts/decisions_per_second": sps,
                "charts/rollout_seconds": t1 - t0,
                "charts/update_seconds": t2 - t1,
                "charts/mean_reward_per_decision": float(buf.rewards[buf.valid].mean()),
            }
        )
        for k, v in stats.items():
            writer.add_scalar(k, v, progress["decisions"])
        line = (
            f"update {update}/{c.num_updates}  decisions {progress['decisions'] / 1e6:.2f}M  "
            f"{sps / 1e3:.1f}k dec/s  entropy {stats['losses/entropy']:.2f}  "
            f"value loss {stats['losses/value_loss']:.4f}"
        )
        # -------------------------------------------------------- evaluation
        if c.eval_every and (update % c.eval_every == 0 or update == c.num_updates):
            line += "  " + log_eval(evaluate(model, c, rules, update))
        say(line)
        # ----------------------------------------------------- checkpointing
        out_of_time = time_limit is not None and time.time() - start >= time_limit
        if update % c.checkpoint_every == 0 or update == end or out_of_time or stop.is_set():
            path = checkpoint()
        if out_of_time or stop.is_set():
            why = f"after {time_limit / 60:g} minutes" if out_of_time else f"on {signal.Signals(stop.signum).name}"
            print(
                f"stopping {why}, at update {update}: checkpoint {path}; continue with --resume {run_dir}", flush=True
            )
            break
    stop.restore()
    writer.close()
    if path is None and step_dir is not None and progress["update"] == resumed_at:
        say(f"nothing to do: {step_dir} is at update {resumed_at} of {c.num_updates}")
        return step_dir  # a resume with nothing to do changes nothing
    return path if path is not None else checkpoint()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default=None, help="YAML config (default configs/default.yaml)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    p.add_argument(
        "--resume",
        default=None,
        help="continue the run in this checkpoint directory (its own "
        "config; keys given with --set, e.g. total_decisions or learning_rate, replace the saved ones; "
        "new checkpoints go to that directory unless checkpoint_dir is given)",
    )
    p.add_argument(
        "--stop-after-minutes",
        type=float,
        default=None,
        metavar="M",
        help="checkpoint and stop after the first update that ends M minutes or more after the "
        "start (continue later with --resume)",
    )
    args = p.parse_args(argv)
    if args.stop_after_minutes is not None and args.stop_after_minutes < 0:
        p.error(f"--stop-after-minutes must be >= 0, got {args.stop_after_minutes}")
    try:
        config = make_config(config_file=None if args.resume else args.config or DEFAULT_CONFIG, sets=args.set)
    except ValueError as e:
        p.error(str(e))
    overrides = tuple(item.split("=", 1)[0].strip() for item in args.set)
    limit = None if args.stop_after_minutes is None else args.stop_after_minutes * 60
    try:
        path = train(config, resume=args.resume, resume_overrides=overrides, time_limit=limit)
    except CheckpointError as e:
        p.error(f"--resume {args.resume}: {e}")
    print(f"done: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
