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
import math
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from agents.extras import require

require("train", what="training (train.py)", main=__name__ == "__main__")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from agents import opponents as O  # noqa: E402
from agents import ppo, rollout, warmstart  # noqa: E402
from agents.checkpoint import CheckpointError, read_training_meta, resolve_checkpoint, restore_training, save_training  # noqa: E402
from agents.config import Config, from_saved, make_config  # noqa: E402
from agents.evaluate import play  # noqa: E402
from agents.network import ActorCritic  # noqa: E402
from agents.policy import Policy  # noqa: E402
from ginenv import VectorEnv  # noqa: E402
from ginenv.baselines import BASELINES  # noqa: E402
from ginenv.rules import Rules  # noqa: E402

DEFAULT_CONFIG = Path(__file__).parent / "configs" / "default.yaml"
EVAL_OPPONENTS = ("knock_early", "gin_hunter")
EVAL_SEED = 10_000  # evaluation k plays the games of seed EVAL_SEED + update


def resumed_config(resume, given: Config, overrides=()) -> tuple[Path, Config]:
    """The step directory to resume from and the config saved with it, with the keys
    ``overrides`` (and where logs and checkpoints go, and the device) taken from
    ``given``. The thread count is the saved one unless ``overrides`` names it: a run
    resumed with other threads would not equal the uninterrupted run."""
    step_dir = resolve_checkpoint(resume)
    try:
        saved = from_saved(read_training_meta(step_dir)["config"])
        for key in ("log_dir", "checkpoint_dir", "device", *overrides):
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
    run can checkpoint before it stops, in any phase; a second signal stops at once."""

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
        name = signal.Signals(signum).name
        say(f"\n{name}: stopping at the end of this update or imitation chunk (again to stop at once)")

    def is_set(self) -> bool:
        return self.signum is not None

    def restore(self) -> None:
        for s, handler in self.previous.items():
            signal.signal(s, handler)
        self.previous = {}


def say(*parts) -> None:
    """Print a line; a closed stdout (``| tee log`` ended by the same Ctrl-C) does not
    stop the run: the rest is not printed."""
    try:
        print(*parts, flush=True)
    except (BrokenPipeError, OSError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process


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


@dataclass
class Run:
    """Everything one training run holds: what the parts below read and change."""

    c: Config
    run_dir: Path
    rules: Rules
    device: torch.device
    rng: np.random.Generator
    env: VectorEnv
    model: ActorCritic
    optimizer: torch.optim.Optimizer
    clip_groups: list
    opponents: O.Opponents
    writer: object = None
    say: object = say
    progress: dict = field(default_factory=lambda: {"update": 0, "decisions": 0, "learner_decisions": 0})
    last_eval: dict = field(default_factory=dict)


def plan_run(config, resume, resume_overrides, overrides) -> tuple[Config, Path | None, Path]:
    """The config (a resumed run's own, but for the keys given again), the step to
    resume from, and the run's directory."""
    c = config or make_config(overrides)
    step_dir = None
    if resume is not None:
        step_dir, c = resumed_config(resume, c, resume_overrides)
    if not c.run_name:
        c.run_name = f"gin__{c.exp_name}__{c.seed}__{int(time.time())}"
    run_dir = Path(c.checkpoint_dir) / c.run_name
    if step_dir is not None and "checkpoint_dir" not in resume_overrides:
        run_dir = step_dir.parent  # a resumed run continues in its own directory
    return c, step_dir, run_dir


def check_writable(directory: Path, what: str) -> None:
    """Create ``directory`` and write a file there, or ``ValueError`` naming it: found
    before any training, not at the first checkpoint."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write_test_{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise ValueError(f"{what} {directory} is not writable: {e.strerror or e}") from None


def build_run(c: Config, run_dir: Path, step_dir: Path | None, quiet: bool) -> tuple[Run, tuple | None]:
    """Seeding, the envs, the agent, its optimizer and the opponents; restored from
    ``step_dir`` when resuming. Returns the run and a saved unfinished imitation."""
    torch.set_num_threads(c.torch_threads)
    device = torch.device(c.device)
    torch.manual_seed(c.seed)
    rng = np.random.default_rng(c.seed)
    rules = Rules.preset(c.rules)
    env = VectorEnv(
        c.num_envs, rules, seed=c.seed, mode=c.mode, reward_scale=c.reward_scale, match_win_reward=c.match_win_reward
    )
    model = ActorCritic(c.network_spec()).to(device)
    if c.init_from and step_dir is None:
        warmstart.load_initial_weights(model, c.init_from, quiet)
    optimizer, clip_groups = ppo.make_optimizer(model, c)
    run = Run(c, run_dir, rules, device, rng, env, model, optimizer, clip_groups, O.make_opponents(c, rng))
    run.say = (lambda *a: None) if quiet else say
    if step_dir is None:
        return run, None
    saved = restore_training(
        step_dir,
        model,
        optimizer=optimizer,
        env=env,
        opponents=run.opponents,
        rng=rng,
        device=device,
        new_model=lambda: ActorCritic(c.network_spec()).to(device),
    )
    run.last_eval = saved.pop("last_eval")
    imitation = saved.pop("imitation")
    run.progress.update(saved)
    return run, imitation


def open_logs(run: Run, fresh: bool) -> None:
    from torch.utils.tensorboard import SummaryWriter

    c = run.c
    run.writer = SummaryWriter(str(Path(c.log_dir) / c.run_name))
    if fresh:
        table = "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(c).items())
        run.writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{table}")
    run.say(f"run {c.run_name}: TensorBoard logs in {Path(c.log_dir) / c.run_name}, checkpoints in {run.run_dir}")


def log_eval(run: Run, ev: dict) -> str:
    """Record an evaluation (TensorBoard, the next checkpoint); returns its summary."""
    p = run.progress
    run.last_eval = {"update": p["update"], "decisions": p["decisions"], **ev}
    for name, e in ev.items():
        run.writer.add_scalar(f"eval/{name}_win_rate", e["win_rate"], p["decisions"])
        run.writer.add_scalar(f"eval/{name}_win_rate_ci_low", e["ci95"][0], p["decisions"])
        run.writer.add_scalar(f"eval/{name}_win_rate_ci_high", e["ci95"][1], p["decisions"])
        run.writer.add_scalar(f"eval/{name}_points_per_hand", e["points_per_hand"], p["decisions"])
    return "  ".join(f"vs {k} {v['win_rate']:.3f}" for k, v in ev.items())


def checkpoint(run: Run, imitation=None) -> Path:
    """Save the run at ``progress["update"]`` (with an unfinished imitation, if any)."""
    c = run.c
    meta = {
        "network": c.network_spec().to_dict(),
        "rules": run.rules.to_dict(),
        "config": dataclasses.asdict(c),
        "update": run.progress["update"],
        "decisions": run.progress["decisions"],
        "evaluation": run.last_eval,
    }
    return save_training(
        run.run_dir,
        run.model,
        meta,
        optimizer=run.optimizer,
        env_state=run.env.state,
        opponents=run.opponents,
        rng=run.rng,
        progress=run.progress,
        config=dataclasses.asdict(c),
        device=run.device,
        imitation=None if imitation is None or imitation.done else imitation,
    )


def warm_start(run: Run, saved, stop: StopSignal) -> warmstart.Imitation | None:
    """Imitate ``bc_teacher`` before PPO (going on from a saved unfinished imitation);
    returns the imitation, unfinished if ``stop`` came first."""
    c = run.c
    if run.progress["update"] > 0 or not (c.bc_teacher and c.bc_decisions):
        return None
    if saved is None and run.progress.get("imitated"):
        return None  # finished before the checkpoint this run resumed from
    imitation = warmstart.Imitation(run.model, c, run.device)
    if saved is not None:
        imitation.restore(*saved)
    imitation.run(run.rng, stop.is_set, log=run.writer.add_scalar, say=run.say)
    if imitation.done:
        run.progress["imitated"] = True
        if c.eval_every:
            run.say("after imitation: " + log_eval(run, evaluate(run.model, c, run.rules, 0)))
    return imitation


def ppo_iteration(run: Run) -> str:
    """One update: rollout, advantages, the PPO update, snapshots, logging, evaluation.
    Returns the update's progress line."""
    c, p = run.c, run.progress
    frac = p["update"] / c.num_updates
    if c.anneal_lr:
        run.optimizer.param_groups[0]["lr"] = c.learning_rate * (1.0 - frac)
    t0 = time.time()
    buf, learner_decisions = rollout.collect(run.env, run.model, run.opponents, run.rng, c.num_steps, run.device)
    p["decisions"] += c.batch_size
    p["learner_decisions"] += learner_decisions
    t1 = time.time()
    adv, returns = rollout.advantages(buf, c.gamma, c.gae_lambda)
    stats = ppo.update(
        run.model,
        run.optimizer,
        run.clip_groups,
        ppo.flatten(buf, adv, returns, run.device),
        c,
        c.ent_coef + (c.ent_coef_final - c.ent_coef) * frac,
        critic_only=p["update"] < c.critic_warmup_updates,
        rng=run.rng,
        device=run.device,
    )
    t2 = time.time()
    p["update"] += 1
    if p["update"] % c.snapshot_every == 0:
        O.add_snapshot(run.opponents, run.model, c.pool_size, run.device)
    stats.update(
        {
            "charts/learning_rate": run.optimizer.param_groups[0]["lr"],
            "charts/decisions_per_second": c.batch_size / max(t2 - t0, 1e-9),
            "charts/rollout_seconds": t1 - t0,
            "charts/update_seconds": t2 - t1,
            "charts/mean_reward_per_decision": float(buf.rewards[buf.valid].mean()),
        }
    )
    for k, v in stats.items():
        run.writer.add_scalar(k, v, p["decisions"])
    line = (
        f"update {p['update']}/{c.num_updates}  decisions {p['decisions'] / 1e6:.2f}M  "
        f"{stats['charts/decisions_per_second'] / 1e3:.1f}k dec/s  entropy {stats['losses/entropy']:.2f}  "
        f"value loss {stats['losses/value_loss']:.4f}"
    )
    if c.eval_every and (p["update"] % c.eval_every == 0 or p["update"] == c.num_updates):
        line += "  " + log_eval(run, evaluate(run.model, c, run.rules, p["update"]))
    return line


def stopped(run: Run, path: Path, why: str) -> Path:
    say(f"stopping {why}, at update {run.progress['update']}: checkpoint {path}; continue with --resume {run.run_dir}")
    return path


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
    that ends ``time_limit`` seconds or more after the start, or until SIGINT / SIGTERM;
    then checkpoint (a run stopped early continues with ``resume``). Returns the last
    checkpoint."""
    # ------------------------------------------------- config, outputs checked first
    c, step_dir, run_dir = plan_run(config, resume, resume_overrides, overrides)
    check_writable(run_dir, "checkpoint_dir")
    check_writable(Path(c.log_dir) / c.run_name, "log_dir")
    # ----------------------------------------- seeding, envs, agent, opponents
    run, saved_imitation = build_run(c, run_dir, step_dir, quiet)
    resumed_at = run.progress["update"]
    open_logs(run, fresh=step_dir is None)
    stop = StopSignal()  # Ctrl-C or SIGTERM: checkpoint at the next boundary, then stop
    try:
        # ---------------------------------------------------------- warm start
        imitation = warm_start(run, saved_imitation, stop)
        if stop.is_set():
            why = f"on {signal.Signals(stop.signum).name} while imitating"
            return stopped(run, checkpoint(run, imitation), why)
        # ------------------------------------------------------------ the loop
        start, path = time.time(), None
        end = c.num_updates if stop_after is None else min(c.num_updates, resumed_at + stop_after)
        while run.progress["update"] < end:
            run.say(ppo_iteration(run))
            update = run.progress["update"]
            out_of_time = time_limit is not None and time.time() - start >= time_limit
            if update % c.checkpoint_every == 0 or update == end or out_of_time or stop.is_set():
                path = checkpoint(run)
            if out_of_time or stop.is_set():
                why = f"after {time_limit / 60:g} minutes" if out_of_time else f"on {signal.Signals(stop.signum).name}"
                return stopped(run, path, why)
    finally:
        stop.restore()
        run.writer.close()
    if path is None and step_dir is not None and run.progress["update"] == resumed_at:
        run.say(f"nothing to do: {step_dir} is at update {resumed_at} of {c.num_updates}")
        return step_dir  # a resume with nothing to do changes nothing
    return path if path is not None else checkpoint(run)


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
    minutes = args.stop_after_minutes
    if minutes is not None and not (math.isfinite(minutes) and minutes >= 0):
        p.error(f"--stop-after-minutes must be a finite number >= 0, got {minutes}")
    if args.config and args.resume:
        p.error("--config and --resume: a resumed run keeps its own config; change keys with --set KEY=VALUE")
    try:
        config = make_config(config_file=None if args.resume else args.config or DEFAULT_CONFIG, sets=args.set)
    except ValueError as e:
        p.error(str(e))
    overrides = tuple(item.split("=", 1)[0].strip() for item in args.set)
    limit = None if minutes is None else minutes * 60
    try:
        path = train(config, resume=args.resume, resume_overrides=overrides, time_limit=limit)
    except CheckpointError as e:
        p.error(f"--resume {args.resume}: {e}" if args.resume and not e.args[0].startswith("init_from") else str(e))
    except ValueError as e:  # an output directory that cannot be written, found before any work
        p.error(str(e))
    say(f"done: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
