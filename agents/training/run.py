"""A training run's state and bookkeeping, apart from the algorithm: ``Run`` (everything
one run holds), planning and building it (fresh or resumed), its outputs checked before
any work, TensorBoard, checkpoints, and the signals that stop it cleanly. ``train.py``
reads as the algorithm over these parts."""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from agents.evaluate import play
from agents.training import opponents as O
from agents.training import ppo, warmstart
from agents.training.checkpoint import (
    CheckpointError,
    read_training_meta,
    resolve_checkpoint,
    restore_training,
    save_training,
)
from agents.training.config import Config, from_saved, make_config
from agents.training.network import ActorCritic, NetworkSpec
from agents.training.policy import Policy
from agents.training.stopping import StopSignal, say  # noqa: F401 - the run's signals and printing
from ginenv import VectorEnv
from ginenv.baselines import BASELINES
from ginenv.rules import Rules


def resumed_config(resume, given: Config, overrides=(), trainer: str = "train.py") -> tuple[Path, Config]:
    """The step directory to resume from and the config saved with it, with the keys
    ``overrides`` (and where logs and checkpoints go, and the device) taken from
    ``given``. The thread count is the saved one unless ``overrides`` names it: a run
    resumed with other threads would not equal the uninterrupted run."""
    step_dir = resolve_checkpoint(resume)
    try:
        saved = from_saved(read_training_meta(step_dir, trainer)["config"])
        for key in ("log_dir", "checkpoint_dir", "device", *overrides):
            saved[key] = getattr(given, key)
        return step_dir, Config(**saved)
    except (TypeError, ValueError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(
            f"the config saved in {step_dir / 'trainer.json'} is not one this version runs: {e}"
        ) from None


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
    split: ppo.SplitWorker | None = None  # the update's second thread (``split_update``)
    say: object = say
    progress: dict = field(
        default_factory=lambda: {
            "update": 0,
            "decisions": 0,
            "learner_decisions": 0,
            "exploiter_at": 0,
            "league_exploiter_at": 0,
            "seconds": 0.0,  # wall time of the updates so far, resumes included (time to strength)
        }
    )
    last_eval: dict = field(default_factory=dict)
    resume_hint: Path | None = None  # what --resume takes to go on (a stages run: the whole run)


def plan_run(
    config, resume, resume_overrides, overrides, trainer: str = "train.py"
) -> tuple[Config, Path | None, Path]:
    """The config (a resumed run's own, but for the keys given again), the step to
    resume from, and the run's directory."""
    c = config or make_config(overrides)
    step_dir = None
    if resume is not None:
        step_dir, c = resumed_config(resume, c, resume_overrides, trainer)
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
    O.set_frozen(run.opponents, O.load_frozen(c.frozen, device))  # the fixed opponents, on the run's device
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
        new_model=lambda spec=None: ActorCritic(NetworkSpec.from_dict(spec) if spec else c.network_spec()).to(device),
    )
    run.last_eval = saved.pop("last_eval")
    imitation = saved.pop("imitation")
    run.progress.update(saved)
    return run, imitation


class OffsetWriter:
    """A TensorBoard writer whose steps start at ``offset``: a stage of a stages run
    writes into the run's one log, after the decisions of the stages before it."""

    def __init__(self, writer, offset: int):
        self.writer, self.offset = writer, offset

    def add_scalar(self, tag, value, step):
        self.writer.add_scalar(tag, value, step + self.offset)

    def add_text(self, tag, text, step=0):
        self.writer.add_text(tag, text, step + self.offset)

    def close(self):
        self.writer.close()


def log_path(c: Config, tensorboard) -> Path:
    """Where the run's TensorBoard logs go: ``log_dir/run_name``, or a stages run's one
    log (``tensorboard``: its directory and the stage's first step)."""
    return Path(c.log_dir) / c.run_name if tensorboard is None else Path(tensorboard[0])


def open_logs(run: Run, fresh: bool, tensorboard=None) -> None:
    from torch.utils.tensorboard import SummaryWriter

    c = run.c
    where = log_path(c, tensorboard)
    run.writer = OffsetWriter(SummaryWriter(str(where)), 0 if tensorboard is None else int(tensorboard[1]))
    if fresh:
        table = "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(c).items())
        run.writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{table}")
    run.say(f"run {c.run_name}: TensorBoard logs in {where}, checkpoints in {run.run_dir}")


EVAL_SEED = 10_000  # evaluation k plays the games of seed EVAL_SEED + update


def evaluate(model: ActorCritic, config: Config, rules: Rules, update: int, frozen=()) -> dict:
    """Match win rates against ``config.eval_opponents`` (baselines, or ``frozen``: the
    first of the frozen checkpoints' networks ``frozen``); the model back in train mode
    after."""
    out = {}
    for name in config.eval_opponents:
        opponent = Policy(frozen[0], name="frozen") if name == "frozen" else BASELINES[name](seed=0)
        r = play(
            Policy(model, name="learner"),
            opponent,
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
        "seconds": round(run.progress["seconds"], 3),
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


def stopped(run: Run, path: Path, why: str) -> Path:
    run.say(
        f"stopping {why}, at update {run.progress['update']}: checkpoint {path}; "
        f"continue with --resume {run.resume_hint or run.run_dir}"
    )
    return path
