"""Checkpoint files, with no pickle anywhere: writing, finding and reading them.

A checkpoint is a directory ``checkpoints/<run>/step_<n>/`` holding

- ``policy.safetensors``: the network's weights;
- ``policy.json``: what a frontend needs to rebuild and trust them: the spec
  (observation version and size, number of actions), the network's shape, the rules,
  the training config, the step and the last evaluation;
- ``trainer.safetensors`` / ``trainer.json``: what ``train.py --resume`` needs on top
  (optimizer, random states, the games in progress, the opponent pool).

Each step directory is written under a temporary name and renamed into place, and the
run's ``LATEST`` file (also replaced atomically) names the newest one, so a kill never
leaves a broken latest checkpoint.

``agents.policy.load_policy`` reads a policy from one; ``agents.trainer_state`` writes
and reads the trainer's part.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from ginenv.actions import NUM_ACTIONS
from ginenv.observation import OBS_SIZE, OBS_VERSION

CHECKPOINT_FORMAT = 1
SPEC = {"format": CHECKPOINT_FORMAT, "obs_version": OBS_VERSION, "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS}


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupted or made for another spec."""


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def save_checkpoint(
    run_dir,
    step: int,
    model: torch.nn.Module,
    meta: dict,
    trainer_tensors: dict | None = None,
    trainer_meta: dict | None = None,
) -> Path:
    """Write ``run_dir/step_<step>/`` atomically and point ``run_dir/LATEST`` at it."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    final = run_dir / f"step_{step:010d}"
    tmp = run_dir / f".tmp_step_{step:010d}_{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    save_file(
        {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}, str(tmp / "policy.safetensors")
    )
    (tmp / "policy.json").write_text(json.dumps({"spec": SPEC, **meta}, indent=2))
    if trainer_tensors is not None:
        save_file(
            {k: v.detach().cpu().contiguous() for k, v in trainer_tensors.items()}, str(tmp / "trainer.safetensors")
        )
        (tmp / "trainer.json").write_text(json.dumps(trainer_meta or {}, indent=2))
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    _atomic_write_text(run_dir / "LATEST", final.name + "\n")
    return final


def resolve_checkpoint(path) -> Path:
    """A run directory, a step directory or a file in one -> the step directory."""
    p = Path(path)
    if p.is_file():
        p = p.parent
    if not p.exists():
        raise CheckpointError(f"no checkpoint at {p.resolve()}")
    if (p / "LATEST").is_file():
        name = (p / "LATEST").read_text().strip()
        p = p / name
        if not p.is_dir():
            raise CheckpointError(f"LATEST in {p.parent} names {name}, which is missing")
    for name in ("policy.json", "policy.safetensors"):
        if not (p / name).is_file():
            raise CheckpointError(f"checkpoint {p.resolve()} has no {name}")
    return p


def read_meta(step_dir: Path) -> dict:
    try:
        meta = json.loads((step_dir / "policy.json").read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{step_dir / 'policy.json'} is corrupted: {e}") from None
    spec = meta.get("spec")
    if spec != SPEC:
        raise CheckpointError(
            f"{step_dir} was made for spec {spec}; this version of ginenv needs {SPEC} "
            "(observation version, sizes and checkpoint format must match)"
        )
    return meta


def load_tensors(path: Path) -> dict:
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{path} is corrupted or not a safetensors file: {e}") from None


# ------------------------------------------------------------------ trainer state
#: Engine state fields renamed since a checkpoint was written: old name -> new name.
_RENAMED_STATE_FIELDS = {"game_seed": "_game_seed", "after_discard": "_after_discard", "big_gin_ok": "_big_gin_ok"}


def _state_tensors(state) -> dict:
    """The engine state's arrays as tensors (uint64 viewed as int64: safetensors'
    torch side has no uint64)."""
    return {
        f"env.{name}": torch.from_numpy(
            np.ascontiguousarray(a).view(np.int64 if a.dtype == np.uint64 else a.dtype).copy()
        )
        for name, a in state.arrays().items()
    }


def _state_from_tensors(state, tensors: dict):
    arrays = {}
    for key, t in tensors.items():
        if key.startswith("env."):
            name = _RENAMED_STATE_FIELDS.get(key[4:], key[4:])
            arrays[name] = t.numpy()
    mine = state.arrays()
    for name, a in list(arrays.items()):
        if name in mine:
            arrays[name] = a.view(mine[name].dtype).reshape(mine[name].shape)
    return state.with_arrays(arrays)


def _optimizer_tensors(opt) -> dict:
    return {
        f"opt.{pid}.{k}": v if torch.is_tensor(v) else torch.tensor(v)
        for pid, st in opt.state_dict()["state"].items()
        for k, v in st.items()
    }


def _optimizer_meta(opt) -> dict:
    sd = opt.state_dict()
    return {"param_groups": sd["param_groups"], "state_keys": {str(p): sorted(st) for p, st in sd["state"].items()}}


def _restore_optimizer(opt, tensors: dict, meta: dict) -> None:
    state = {int(p): {k: tensors[f"opt.{p}.{k}"] for k in keys} for p, keys in meta["state_keys"].items()}
    opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    return int(x) if isinstance(x, np.integer) else x


def save_training(
    run_dir,
    model,
    meta: dict,
    *,
    optimizer,
    env_state,
    opponents,
    rng: np.random.Generator,
    progress: dict,
    config: dict,
    device,
) -> Path:
    """A checkpoint of a training run at ``progress["update"]``: the policy files plus
    everything ``--resume`` needs, as named tensors and JSON: the optimizer, the random
    states (torch, numpy, each baseline's), the games in progress, the opponents."""
    tensors = _optimizer_tensors(optimizer)
    tensors["rng.torch"] = torch.get_rng_state()
    if device.type == "cuda":
        tensors["rng.cuda"] = torch.cuda.get_rng_state(device)
    for k, snap in enumerate(opponents.pool):
        for name, value in snap.state_dict().items():
            tensors[f"pool.{k}.{name}"] = value
    tensors.update(_state_tensors(env_state))
    for name in ("kind", "learner_seat", "snapshot"):
        tensors[f"opponents.{name}"] = torch.from_numpy(getattr(opponents, name).copy())
    baseline_rngs = {
        name: _jsonable(agent.rng.bit_generator.state)
        for name, agent in opponents.baselines.items()
        if hasattr(agent, "rng")
    }
    trainer_meta = {
        **progress,
        "numpy_rng": _jsonable(rng.bit_generator.state),
        "baseline_rngs": baseline_rngs,
        "pool_size": len(opponents.pool),
        "optimizer": _optimizer_meta(optimizer),
        "config": config,
    }
    return save_checkpoint(run_dir, progress["update"], model, meta, tensors, trainer_meta)


#: Names of the opponents' arrays in checkpoints written before the trainer was split.
_OLD_OPPONENT_NAMES = {
    "kind": "trainer.opponent",
    "learner_seat": "trainer.learner_seat",
    "snapshot": "trainer.snapshot_index",
}


def read_training_meta(step_dir: Path) -> dict:
    path = step_dir / "trainer.json"
    if not path.is_file():
        raise CheckpointError(f"{step_dir} holds a policy only, not a resumable training state")
    try:
        meta = json.loads(path.read_text())
        meta["config"], meta["update"]  # noqa: B018  (both must be there)
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as e:
        raise CheckpointError(f"{path} is corrupted: {e!r}") from None
    return meta


def restore_training(
    step_dir: Path, model, *, optimizer, env, opponents, rng: np.random.Generator, device, new_model
) -> dict:
    """Restore what ``save_training`` wrote into the given objects (``new_model()`` builds
    each snapshot's network); returns the saved progress counters."""
    tmeta = read_training_meta(step_dir)
    meta = read_meta(step_dir)
    model.load_state_dict(load_tensors(step_dir / "policy.safetensors"))
    t = load_tensors(step_dir / "trainer.safetensors")
    _restore_optimizer(optimizer, t, tmeta["optimizer"])
    opponents.pool = []
    for k in range(tmeta["pool_size"]):
        snap = new_model()
        snap.load_state_dict({n[len(f"pool.{k}.") :]: v for n, v in t.items() if n.startswith(f"pool.{k}.")})
        opponents.pool.append(snap)
    env.state = _state_from_tensors(env.state, t)
    for name, old in _OLD_OPPONENT_NAMES.items():
        setattr(opponents, name, t.get(f"opponents.{name}", t.get(old)).numpy().copy())
    for name, state in tmeta.get("baseline_rngs", {}).items():
        opponents.baselines[name].rng.bit_generator.state = state
    rng.bit_generator.state = tmeta["numpy_rng"]
    torch.set_rng_state(t["rng.torch"])  # last: building the pool's networks draws from it
    if device.type == "cuda" and "rng.cuda" in t:
        torch.cuda.set_rng_state(t["rng.cuda"], device)
    return {
        "update": tmeta["update"],
        "decisions": tmeta["decisions"],
        "learner_decisions": tmeta["learner_decisions"],
        "last_eval": meta.get("evaluation", {}),
    }
