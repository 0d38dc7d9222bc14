"""Checkpoints and trained policies, with no pickle anywhere.

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

``load_policy(path)`` accepts a run directory, a step directory or a ``policy.*`` file
and returns a ``Policy`` with ``act(observation, action_mask, deterministic=True)``.
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

from agents.network import ActorCritic
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


def save_checkpoint(run_dir, step: int, model: ActorCritic, meta: dict, trainer_tensors: dict | None = None,
                    trainer_meta: dict | None = None) -> Path:
    """Write ``run_dir/step_<step>/`` atomically and point ``run_dir/LATEST`` at it."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    final = run_dir / f"step_{step:010d}"
    tmp = run_dir / f".tmp_step_{step:010d}_{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    save_file({k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}, str(tmp / "policy.safetensors"))
    (tmp / "policy.json").write_text(json.dumps({"spec": SPEC, **meta}, indent=2))
    if trainer_tensors is not None:
        save_file({k: v.detach().cpu().contiguous() for k, v in trainer_tensors.items()}, str(tmp / "trainer.safetensors"))
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
        raise CheckpointError(f"{step_dir} was made for spec {spec}; this version of ginenv needs {SPEC} "
                              "(observation version, sizes and checkpoint format must match)")
    return meta


def build_model(meta: dict) -> ActorCritic:
    net = meta.get("network") or {}
    return ActorCritic(tuple(net.get("hidden_sizes", (256, 256))), net.get("activation", "relu"),
                       bool(net.get("privileged_critic", False)), net.get("architecture", "cards"),
                       int(net.get("critic_lookahead", 0)))


def load_tensors(path: Path) -> dict:
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{path} is corrupted or not a safetensors file: {e}") from None


class Policy:
    """A trained policy, for frontends and for the evaluator.

    ``act(observation, action_mask, deterministic=True)`` takes one observation
    ``(OBS_SIZE,)`` with its mask ``(108,)`` and returns an int, or a batch and returns
    an array. Illegal actions are never chosen.
    """

    def __init__(self, model: ActorCritic, meta: dict | None = None, name: str = "policy", seed: int = 0):
        self.model = model.eval()
        self.meta = meta or {}
        self.name = name
        self.generator = torch.Generator().manual_seed(seed)

    @torch.no_grad()
    def act(self, observation, action_mask, deterministic: bool = True):
        device = next(self.model.parameters()).device
        obs = torch.as_tensor(np.asarray(observation, np.float32), device=device)
        mask = torch.as_tensor(np.asarray(action_mask).astype(bool), device=device)
        single = obs.ndim == 1
        if single:
            obs, mask = obs[None], mask[None]
        if obs.shape[-1] != OBS_SIZE or mask.shape[-1] != NUM_ACTIONS or len(obs) != len(mask):
            raise ValueError(f"expected observations (B, {OBS_SIZE}) and masks (B, {NUM_ACTIONS}); "
                             f"got {tuple(obs.shape)} and {tuple(mask.shape)}")
        if not mask.any(1).all():
            raise ValueError("every observation needs at least one legal action")
        if deterministic:
            actions = self.model.act_greedy(obs, mask)
        else:
            probs = self.model.action_dist(obs, mask).probs.cpu()
            actions = torch.multinomial(probs, 1, generator=self.generator).squeeze(-1)
        out = actions.cpu().numpy().astype(np.int64)
        return int(out[0]) if single else out


def load_policy(path, seed: int = 0) -> Policy:
    """Load a checkpoint (run dir, step dir or policy file) as a ``Policy``."""
    step_dir = resolve_checkpoint(path)
    meta = read_meta(step_dir)
    model = build_model(meta)
    weights = load_tensors(step_dir / "policy.safetensors")
    try:
        model.load_state_dict(weights)
    except RuntimeError as e:
        raise CheckpointError(f"{step_dir / 'policy.safetensors'} does not fit the network in policy.json: {e}") from None
    name = f"{Path(step_dir).parent.name}/{Path(step_dir).name}"
    return Policy(model, meta, name=name, seed=seed)
