"""Stages: a config that lists runs to make one after another, each starting from the
one before, from one command (``python train.py --config configs/<name>.yaml``).

A stages config is an ordinary config (its keys are every stage's defaults) with a
``stages`` list; each stage is a mapping of config keys for that stage alone (its
length is its ``total_decisions``) and may have a ``name``::

    exp_name: past_marjj
    hidden_sizes: [128, 128]
    ...
    stages:
      - {name: scratch, total_decisions: 36000000, opponents: {self: 0.6, ...}}
      - {name: mix, total_decisions: 24000000, learning_rate: 0.0001, opponents: {...}}
      - {name: wide, bc_teacher: previous, init_from: "", hidden_sizes: [256, 256], ...}

Stage 1 starts as its keys say (from nothing, or its ``init_from``). Every later stage
starts from the weights of the one before (``init_from`` that stage's last checkpoint,
with its network's shape), unless the stage names ``init_from`` or ``bc_teacher``
itself; there ``previous`` stands for the stage before's checkpoint (``bc_teacher:
previous`` with new ``hidden_sizes``: distil it into a wider network). Each stage is a
run of the existing trainer, in ``<checkpoint_dir>/<run_name>/stage<k>_<name>/``; the
run's ``stages.json`` holds the plan, so ``--resume <checkpoint_dir>/<run_name>``
continues exactly where it stopped, in the middle of any stage, and the run directory
loads as its newest stage's checkpoint anywhere a checkpoint is taken. TensorBoard gets
one log, ``<log_dir>/<run_name>``, its steps the decisions since stage 1 began.
``--stop-after-minutes`` counts over the stages; Ctrl-C stops in any of them.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from agents.training.checkpoint import CheckpointError, read_meta, resolve_checkpoint
from agents.training.config import Config, make_config, read_config_file, set_item
from agents.training.loop import train
from agents.training.run import say
from agents.training.stopping import StopSignal
from agents.training.warmstart import NETWORK_KEYS

PLAN = "stages.json"
#: What ``previous`` may stand in: the keys that start a stage from a checkpoint.
STARTS = ("init_from", "bc_teacher")
#: Keys the stages run owns (where each stage is written), never a stage's own.
OWNED = ("run_name", "checkpoint_dir", "log_dir")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def is_stages_file(config_file) -> bool:
    """Whether a config file lists stages (a missing or broken file is not: the ordinary
    path reports it)."""
    try:
        return "stages" in read_config_file(config_file)
    except ValueError:
        return False


def is_stages_run(path) -> bool:
    return (Path(path) / PLAN).is_file()


def read_plan(config_file, sets=()) -> dict:
    """The stages of ``config_file`` with the ``--set`` items for every stage, checked
    before anything trains: every stage must make a valid config."""
    data = dict(read_config_file(config_file))
    stages = data.pop("stages")
    where = f"config file {config_file}"
    if not isinstance(stages, list) or not stages:
        raise ValueError(f"{where}: stages must be a non-empty list of mappings of config keys, got {stages!r}")
    names = []
    for k, stage in enumerate(stages, 1):
        if not isinstance(stage, dict):
            raise ValueError(f"{where}: stage {k} must be a mapping of config keys, got {stage!r}")
        name = stage.get("name", "")
        if name != "" and not (isinstance(name, str) and _NAME.match(name)):
            raise ValueError(f"{where}: stage {k}'s name must be letters, digits, _ or - (at most 64), got {name!r}")
        owned = [key for key in OWNED if key in stage]
        if owned:
            raise ValueError(
                f"{where}: stage {k} sets {', '.join(owned)}, which the stages run owns (set them at the top level)"
            )
        if "total_decisions" not in stage:
            raise ValueError(f"{where}: stage {k} needs its length, total_decisions")
        names.append(f"stage{k}_{name}" if name else f"stage{k}")
        if k == 1 and "previous" in (stage.get(key) for key in STARTS):
            raise ValueError(f"{where}: stage 1 has no stage before it, so 'previous' means nothing there")
    plan = {"config_file": str(config_file), "base": data, "stages": stages, "dirs": names, "sets": list(sets)}
    for k in range(len(stages)):  # every stage's keys checked now, not hours from now
        try:
            stage_config(plan, k, previous=None if k == 0 else "previous", check_only=True)
        except ValueError as e:
            raise ValueError(f"{where}, stage {k + 1}: {e}") from None
    return plan


def stage_config(plan: dict, k: int, previous, check_only: bool = False) -> Config:
    """Stage ``k``'s config (0-based): the top-level keys, the stage's own, the start
    from ``previous`` (the stage before's run directory), then the ``--set`` items."""
    stage = {key: v for key, v in plan["stages"][k].items() if key != "name"}
    values = dict(plan["base"]) | stage
    if k > 0:
        if not any(key in stage for key in STARTS):
            values["init_from"] = str(previous)
            if not check_only:  # the network's shape comes with the weights
                network = read_meta(resolve_checkpoint(previous)).get("network") or {}
                values |= {key: network[key] for key in NETWORK_KEYS if key in network}
        else:
            values["init_from"] = stage.get("init_from", "")  # the top level's start is stage 1's alone
        for key in STARTS:  # checked before the stage before exists: a baseline's name stands in
            if values.get(key) == "previous":
                values[key] = ("knock_early" if key == "bc_teacher" else "") if check_only else str(previous)
    run = plan.get("run_dir", "run")
    sets = [*plan["sets"], set_item("run_name", plan["dirs"][k]), set_item("checkpoint_dir", str(run))]
    return make_config(values, sets=sets)


def _write_plan(run_dir: Path, plan: dict) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / f".{PLAN}.{os.getpid()}"
    tmp.write_text(json.dumps(plan, indent=1) + "\n")
    os.replace(tmp, run_dir / PLAN)


def load_plan(run_dir) -> dict:
    path = Path(run_dir) / PLAN
    try:
        plan = json.loads(path.read_text())
        if not isinstance(plan, dict) or not {"base", "stages", "dirs", "sets", "run_dir"} <= plan.keys():
            raise ValueError("a key is missing")
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path} is corrupted: {e}") from None
    return plan


def _progress(stage_dir: Path) -> tuple[int, int] | None:
    """(update, decisions) of a stage's newest checkpoint, or None before its first."""
    if not (stage_dir / "LATEST").is_file():
        return None
    meta = read_meta(resolve_checkpoint(stage_dir))
    return int(meta.get("update", 0)), int(meta.get("decisions", 0))


def run_stages(
    config_file=None,
    sets=(),
    resume=None,
    time_limit: float | None = None,
    stop: StopSignal | None = None,
    quiet: bool = False,
) -> Path | None:
    """Run every stage of ``config_file`` (or go on with the stages run ``resume``) to
    its end, or until ``time_limit`` seconds have passed (at the first update boundary
    after) or a signal; returns the last checkpoint written (None if none was)."""
    speak = (lambda *a: None) if quiet else say
    start = time.time()
    if resume is not None:
        run_dir = Path(resume)
        plan = load_plan(run_dir)
        plan["sets"] = [*plan["sets"], *sets]  # keys given again apply from here on
        overrides = tuple(item.split("=", 1)[0].strip() for item in sets)
    else:
        plan = read_plan(config_file, sets)
        first = make_config(plan["base"] | {k: v for k, v in plan["stages"][0].items() if k != "name"}, sets=sets)
        name = first.run_name or f"gin__{first.exp_name}__{first.seed}__{int(time.time())}"
        run_dir = Path(first.checkpoint_dir) / name
        if is_stages_run(run_dir):
            raise ValueError(
                f"{run_dir} holds a stages run already: continue it with --resume {run_dir}, or give another run_name"
            )
        plan["run_dir"] = str(run_dir)
        plan["log_dir"] = str(Path(first.log_dir) / name)
        _write_plan(run_dir, plan)
        overrides = ()
    plan["run_dir"] = str(run_dir)  # a run directory moved since keeps working
    path, previous, offset, n, ran = None, None, 0, len(plan["stages"]), False
    for k in range(n):
        stage_dir = run_dir / plan["dirs"][k]
        done = _progress(stage_dir)
        c = stage_config(plan, k, previous)
        if done is not None and done[0] >= c.num_updates:
            previous, offset = stage_dir, offset + done[1]
            path = resolve_checkpoint(stage_dir)
            continue
        left = None if time_limit is None else max(0.0, time_limit - (time.time() - start))
        out_of_time = ran and left is not None and left <= 0  # the first stage run here trains an update at least
        why = "on a signal" if stop is not None and stop.is_set() else "out of time" if out_of_time else ""
        if why:
            speak(f"stages: stopping {why} before stage {k + 1}/{n}; continue with --resume {run_dir}")
            return path
        speak(
            f"stages: stage {k + 1}/{n} ({plan['dirs'][k]}, {c.total_decisions:,} decisions)"
            + (f", from update {done[0]}" if done else (f", from {previous}" if previous else ""))
        )
        tensorboard = (plan.get("log_dir", str(Path(c.log_dir) / run_dir.name)), offset)
        resume_at = stage_dir if done is not None else None
        path = train(
            c,
            resume=resume_at,
            resume_overrides=overrides,
            quiet=quiet,
            time_limit=left,
            stop=stop,
            tensorboard=tensorboard,
            resume_hint=run_dir,
        )
        ran = True
        reached = _progress(stage_dir)
        if reached is None or reached[0] < c.num_updates:
            return path
        previous, offset = stage_dir, offset + reached[1]
    speak(f"stages: all {n} done; the bot is {path} (or give {run_dir})")
    return path
