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

``agents.training.policy.load_policy`` reads a policy from one; ``agents.training.run`` writes
and reads the trainer's part.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from agents import strict_json
from agents.bots import checkpoint_path
from agents.training.config import OPPONENT_KINDS
from ginenv.actions import NUM_ACTIONS
from ginenv.observation import OBS_SIZE, OBS_VERSION

CHECKPOINT_FORMAT = 1
#: The files of a step directory (a path to one of them names its checkpoint).
CHECKPOINT_FILES = ("policy.json", "policy.safetensors", "trainer.json", "trainer.safetensors")
SPEC = {"format": CHECKPOINT_FORMAT, "obs_version": OBS_VERSION, "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS}


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupted or made for another spec."""


class CheckpointWriteError(RuntimeError):
    """A checkpoint that could not be written (a full disk, a read-only one, a folder
    gone): one line naming the run's folder and the cause, and the last good checkpoint,
    which stays as it was (nothing half-written is left beside it)."""

    def __init__(self, run_dir: Path, step: int, error: OSError):
        self.run_dir, self.step, self.error = run_dir, step, error
        cause = error.strerror or str(error)
        code = errno.errorcode.get(error.errno or 0)
        last = _latest_name(run_dir)
        kept = (
            f"the last good checkpoint, {run_dir / last}, is kept: resume from {run_dir} once the folder can be written"
            if last
            else "no checkpoint of this run was written before"
        )
        super().__init__(
            f"cannot write the checkpoint of update {step} to {run_dir}: {cause}{f' ({code})' if code else ''}; {kept}"
        )


def _latest_name(run_dir: Path) -> str | None:
    try:
        name = (run_dir / "LATEST").read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if (run_dir / name).is_dir() else None


def _fsync(path: Path) -> None:
    """Flush a file's or a folder's content (a folder: the names in it) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_text(path: Path, text: str) -> None:
    """Write ``text`` and flush it to the disk before anything renames it into place."""
    with open(path, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        _write_text(tmp, text)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    _fsync(path.parent)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


#: The key under which a checkpoint's JSON file records the sha256 of its own content
#: (every other key, canonically written), so a changed digit is refused on load.
JSON_SUM = "json_sha256"


def _canonical_sha256(data: dict) -> str:
    body = {k: v for k, v in data.items() if k != JSON_SUM}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def json_text(data: dict) -> str:
    """``data`` as a checkpoint's JSON text, with its own checksum."""
    return json.dumps({**data, JSON_SUM: _canonical_sha256(data)}, indent=2)


def _save_tensors(tensors: dict, path: Path) -> str:
    """Write ``tensors`` as safetensors with the usual file mode (the umask's, as for
    the JSON beside it) and return the file's sha256."""
    try:
        save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, str(path))
    except SafetensorError as e:  # its writer's I/O errors, as the OSError they are ("os error 28")
        code = re.search(r"os error (\d+)", str(e))
        code = int(code.group(1)) if code else errno.EIO
        raise OSError(code, os.strerror(code), str(path)) from e
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)
    _fsync(path)
    return _sha256(path)


def _recover(run_dir: Path) -> None:
    """Finish what a killed save left: a step moved aside and not yet replaced comes
    back; half-written steps go."""
    for old in run_dir.glob(".old_step_*"):
        final = run_dir / old.name[len(".old_") :]
        if final.exists():
            shutil.rmtree(old)
        else:
            os.replace(old, final)
    for tmp in run_dir.glob(".tmp_step_*"):
        shutil.rmtree(tmp)


def save_checkpoint(
    run_dir,
    step: int,
    model: torch.nn.Module,
    meta: dict,
    trainer_tensors: dict | None = None,
    trainer_meta: dict | None = None,
) -> Path:
    """Write ``run_dir/step_<step>/`` atomically and point ``run_dir/LATEST`` at it.

    The step is written under a temporary name, each file flushed to the disk (fsync),
    and renamed into place; a step of the same number already there is first moved aside
    and deleted only after, so a kill or a power cut at any moment leaves LATEST naming a
    whole step (``_recover`` puts back one moved aside). A write that fails (``OSError``:
    a full disk, a read-only one) removes what it had written and raises
    ``CheckpointWriteError`` naming the folder, the cause and the last good checkpoint.
    Each JSON file records the sha256 of the weights beside it and of its own content
    (``json_sha256``)."""
    run_dir = Path(run_dir)
    final = run_dir / f"step_{step:010d}"
    tmp = run_dir / f".tmp_{final.name}_{os.getpid()}"
    old = run_dir / f".old_{final.name}"
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        _recover(run_dir)
        tmp.mkdir()
        files = {"policy.safetensors": _save_tensors(model.state_dict(), tmp / "policy.safetensors")}
        _write_text(tmp / "policy.json", json_text({"spec": SPEC, **meta, "sha256": files}))
        if trainer_tensors is not None:
            files = {"trainer.safetensors": _save_tensors(trainer_tensors, tmp / "trainer.safetensors")}
            _write_text(tmp / "trainer.json", json_text({**(trainer_meta or {}), "sha256": files}))
        _fsync(tmp)
        if final.exists():
            os.replace(final, old)
        os.replace(tmp, final)
        _fsync(run_dir)
        _atomic_write_text(run_dir / "LATEST", final.name + "\n")
    except OSError as e:  # a full or read-only disk: the steps before stay as they were
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not final.exists():
            os.replace(old, final)
        raise CheckpointWriteError(run_dir, step, e) from e
    if old.exists():
        shutil.rmtree(old)
    return final


def command_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """``python -m agents.export``'s one parser, for both its forms: the checkpoint, then
    ``--onnx FILE`` or ``--kaggle OUT`` (one of them); ``doc`` is the description."""
    p = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", help="a run directory, step directory or policy file (or shipped: the shipped bot)")
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("--onnx", metavar="FILE", help="write the policy as one ONNX file (the onnx extra)")
    out.add_argument("--kaggle", metavar="OUT", help="write a Kaggle submission: a .tar.gz file or a new folder")
    p.add_argument(
        "--search",
        metavar="BUDGET",
        help="with --kaggle: the bot searches at decision time at this budget, as in +search=BUDGET "
        "(64, 64:patient, 0.5s; the expert level's is 64:patient:lean=3:match)",
    )
    return p


def resolve_checkpoint(path) -> Path:
    """A run directory, a step directory or a file in one (or ``shipped``, the shipped
    bot) -> the step directory."""
    p = checkpoint_path(path)
    if p.is_file():
        if p.name not in CHECKPOINT_FILES:
            raise CheckpointError(
                f"{p.resolve()} is a file, not a checkpoint: give a run directory, a step directory "
                f"or one of its files ({', '.join(CHECKPOINT_FILES)})"
            )
        p = p.parent
    if not p.exists():
        raise CheckpointError(f"no checkpoint at {p.resolve()}")
    if (p / "stages.json").is_file() and not (p / "LATEST").is_file():
        p = _newest_stage(p)
    if (p / "LATEST").is_file():
        if any(p.glob(".old_step_*")):
            _recover(p)
        try:
            name = (p / "LATEST").read_text().strip()
        except UnicodeDecodeError:
            raise CheckpointError(f"{p / 'LATEST'} is corrupted: it should name a step directory") from None
        if not name.startswith("step_") or "/" in name or not (p / name).is_dir():
            raise CheckpointError(
                f"LATEST in {p} names {name!r}, which is not a step directory there "
                f"(steps there: {', '.join(sorted(x.name for x in p.glob('step_*'))) or 'none'})"
            )
        p = p / name
    for name in ("policy.json", "policy.safetensors"):
        if not (p / name).is_file():
            raise CheckpointError(f"checkpoint {p.resolve()} has no {name}")
    return p


def _newest_stage(run_dir: Path) -> Path:
    """A stages run (``agents.training.stages``) -> its newest stage's run directory."""
    try:
        dirs = json.loads((run_dir / "stages.json").read_text())["dirs"]
        started = [run_dir / d for d in dirs if (run_dir / d / "LATEST").is_file()]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CheckpointError(f"{run_dir / 'stages.json'} is corrupted: {e}") from None
    if not started:
        raise CheckpointError(f"the stages run {run_dir} has no checkpoint yet (its stages: {', '.join(dirs)})")
    return started[-1]


def read_json(path: Path, what: str) -> dict:
    """A checkpoint's JSON file as a mapping, or a ``CheckpointError`` that says why not:
    not JSON, a key twice, or content that does not match its own checksum (files
    written before checksums have none)."""
    try:
        data = strict_json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError, OSError, RecursionError) as e:
        raise CheckpointError(f"{path} is corrupted: {e}") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} is corrupted: it should hold {what}, got a {type(data).__name__}")
    if JSON_SUM in data and data[JSON_SUM] != _canonical_sha256(data):
        raise CheckpointError(
            f"{path} does not match its own checksum ({JSON_SUM}): the file was changed or corrupted; "
            "restore it or train again"
        )
    return data


def read_meta(step_dir: Path) -> dict:
    meta = read_json(step_dir / "policy.json", "the policy's spec, network and config")
    spec = meta.get("spec")
    if spec != SPEC:
        raise CheckpointError(
            f"{step_dir} was made for spec {spec}; this version of ginenv needs {SPEC} "
            "(observation version, sizes and checkpoint format must match)"
        )
    return meta


def load_tensors(path: Path, meta: dict | None = None) -> dict:
    """The tensors of a safetensors file; with ``meta`` (the JSON beside it), checked
    against the sha256 it records (files written before checksums have none)."""
    sums = (meta or {}).get("sha256")
    expected = sums.get(path.name) if isinstance(sums, dict) else None
    if expected is not None and path.is_file() and _sha256(path) != expected:
        raise CheckpointError(
            f"{path} does not match the checksum in {path.with_suffix('.json').name}: the file is corrupted "
            "or was replaced; restore it or train again"
        )
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{path} is corrupted or not a safetensors file: {e}") from None


# ------------------------------------------------------------------ trainer state
#: Engine state fields renamed since a checkpoint was written: old name -> new name.
_RENAMED_STATE_FIELDS = {
    "game_seed": "_game_seed",
    "after_discard": "_after_discard",
    "big_gin_ok": "_big_gin_ok",
    "legal": "_legal",
}
#: Engine state fields added since: events of a finished hand, read only when the next
#: one ends, and the second seed key (0 for every seed a trainer uses), so an older
#: checkpoint takes them from a fresh state.
_ADDED_STATE_FIELDS = ("hand_knock_limit", "_game_key", "game_truncated")


def state_tensors(state, prefix: str = "env.") -> dict:
    """The engine state's arrays as tensors (uint64 viewed as int64: safetensors'
    torch side has no uint64)."""
    return {
        f"{prefix}{name}": torch.from_numpy(
            np.ascontiguousarray(a).view(np.int64 if a.dtype == np.uint64 else a.dtype).copy()
        )
        for name, a in state.arrays().items()
    }


def state_from_tensors(state, tensors: dict, prefix: str = "env."):
    """A copy of ``state`` with the arrays ``state_tensors`` wrote under ``prefix``."""
    arrays = {}
    for key, t in tensors.items():
        if key.startswith(prefix):
            name = _RENAMED_STATE_FIELDS.get(key[len(prefix) :], key[len(prefix) :])
            arrays[name] = t.numpy()
    mine = state.arrays()
    for name in _ADDED_STATE_FIELDS:
        arrays.setdefault(name, mine[name])
    for name, a in list(arrays.items()):
        if name in mine:
            arrays[name] = a.view(mine[name].dtype).reshape(mine[name].shape)
    return state.with_arrays(arrays)


def optimizer_tensors(opt) -> dict:
    return {
        f"opt.{pid}.{k}": v if torch.is_tensor(v) else torch.tensor(v)
        for pid, st in opt.state_dict()["state"].items()
        for k, v in st.items()
    }


def optimizer_meta(opt) -> dict:
    sd = opt.state_dict()
    return {"param_groups": sd["param_groups"], "state_keys": {str(p): sorted(st) for p, st in sd["state"].items()}}


def restore_optimizer(opt, tensors: dict, meta: dict) -> None:
    state = {int(p): {k: tensors[f"opt.{p}.{k}"] for k in keys} for p, keys in meta["state_keys"].items()}
    opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})


def jsonable(x):
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
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
    imitation=None,
) -> Path:
    """A checkpoint of a training run at ``progress["update"]``: the policy files plus
    everything ``--resume`` needs, as named tensors and JSON: the optimizer, the random
    states (torch, numpy, each baseline's), the games in progress, the opponents, and an
    unfinished imitation warm start (``imitation``: its ``tensors()`` and ``meta()``)."""
    tensors = optimizer_tensors(optimizer)
    tensors["rng.torch"] = torch.get_rng_state()
    if device.type == "cuda":
        tensors["rng.cuda"] = torch.cuda.get_rng_state(device)
    for k, snap in enumerate(opponents.pool):
        for name, value in snap.state_dict().items():
            tensors[f"pool.{k}.{name}"] = value
    for k, net in enumerate(opponents.exploiters):
        for name, value in net.state_dict().items():
            tensors[f"exploiters.{k}.{name}"] = value
    tensors.update(state_tensors(env_state))
    if imitation is not None:
        tensors.update(imitation.tensors())
    for name in _OPPONENT_ARRAYS:
        tensors[f"opponents.{name}"] = torch.from_numpy(np.asarray(getattr(opponents, name)).copy())
    baseline_rngs = {
        name: jsonable(agent.rng.bit_generator.state)
        for name, agent in opponents.baselines.items()
        if hasattr(agent, "rng")
    }
    trainer_meta = {
        **progress,
        "numpy_rng": jsonable(rng.bit_generator.state),
        "baseline_rngs": baseline_rngs,
        "pool_size": len(opponents.pool),
        "exploiters": [net.spec.to_dict() for net in opponents.exploiters],
        "optimizer": optimizer_meta(optimizer),
        "config": config,
    }
    if imitation is not None:
        trainer_meta["imitation"] = imitation.meta()
    return save_checkpoint(run_dir, progress["update"], model, meta, tensors, trainer_meta)


#: The opponents' arrays a training state holds (``opponents.<name>``).
_OPPONENT_ARRAYS = (
    "kind",
    "learner_seat",
    "snapshot",
    "win_rate",
    "pool_win_rate",
    "episode_return",
    "exploiter",
    "exploiter_win_rate",
    "frozen_member",
    "frozen_win_rate",
)


#: Names of the opponents' arrays in checkpoints written before the trainer was split.
_OLD_OPPONENT_NAMES = {
    "kind": "trainer.opponent",
    "learner_seat": "trainer.learner_seat",
    "snapshot": "trainer.snapshot_index",
}


TRAINER_KEYS = ("update", "decisions", "learner_decisions", "numpy_rng", "pool_size", "optimizer", "config")


#: Which trainer wrote a training state (``trainer.json``'s ``trainer``; files without
#: one are train.py's), and the command that resumes it.
TRAINERS = {"train.py": "python train.py --resume", "rllib": "python -m agents.rllib --resume"}


def read_training_meta(step_dir: Path, trainer: str = "train.py") -> dict:
    """``trainer.json``, checked: written by ``trainer``, with every counter it needs."""
    path = step_dir / "trainer.json"
    if not path.is_file():
        raise CheckpointError(f"{step_dir} holds a policy only, not a resumable training state")
    meta = read_json(path, "the trainer's state")
    wrote = meta.get("trainer", "train.py")
    if wrote != trainer:
        raise CheckpointError(
            f"{step_dir} is a training state of {wrote}, not of {trainer}: resume it with "
            f"{TRAINERS.get(wrote, wrote)} (any trainer can start from its policy with init_from)"
        )
    missing = [k for k in TRAINER_KEYS if k not in meta]
    if missing:
        raise CheckpointError(f"{path} is corrupted: it lacks {', '.join(missing)}")
    return meta


def prefixed(tensors: dict, prefix: str) -> dict:
    """The tensors saved under ``prefix``, by their names after it (one network's weights)."""
    return {n[len(prefix) :]: v for n, v in tensors.items() if n.startswith(prefix)}


def restore_training(
    step_dir: Path, model, *, optimizer, env, opponents, rng: np.random.Generator, device, new_model
) -> dict:
    """Restore what ``save_training`` wrote into the given objects (``new_model()`` builds
    each snapshot's network, ``new_model(spec)`` each exploiter's); returns the saved
    progress counters."""
    tmeta = read_training_meta(step_dir)
    meta = read_meta(step_dir)
    model.load_state_dict(load_tensors(step_dir / "policy.safetensors", meta))
    t = load_tensors(step_dir / "trainer.safetensors", tmeta)
    restore_optimizer(optimizer, t, tmeta["optimizer"])
    opponents.pool = []
    for k in range(tmeta["pool_size"]):
        snap = new_model()
        snap.load_state_dict(prefixed(t, f"pool.{k}."))
        opponents.pool.append(snap)
    opponents.exploiters = []
    for k, spec in enumerate(tmeta.get("exploiters", [])):
        net = new_model(spec)
        net.load_state_dict(prefixed(t, f"exploiters.{k}."))
        opponents.exploiters.append(net.eval())
    env.state = state_from_tensors(env.state, t)
    for name, old in _OLD_OPPONENT_NAMES.items():
        setattr(opponents, name, t.get(f"opponents.{name}", t.get(old)).numpy().copy())
    # PFSP's records and the league's arrays: older checkpoints lack them
    opponents.pool_win_rate = np.full(len(opponents.pool), 0.5)
    opponents.exploiter_win_rate = np.full(len(opponents.exploiters), 0.5)
    opponents.frozen_win_rate = np.full(len(opponents.frozen), 0.5)
    for name in ("win_rate", "pool_win_rate", "episode_return", "exploiter_win_rate", "frozen_win_rate"):
        if f"opponents.{name}" in t:
            setattr(opponents, name, t[f"opponents.{name}"].numpy().astype(np.float64).copy())
    # kinds added since (new baselines go last) start at the neutral rate
    opponents.win_rate = np.concatenate(
        [opponents.win_rate, np.full(len(OPPONENT_KINDS) - len(opponents.win_rate), 0.5)]
    )
    for name in ("exploiter", "frozen_member"):
        if f"opponents.{name}" in t:
            setattr(opponents, name, t[f"opponents.{name}"].numpy().copy())
    if len(opponents.frozen_win_rate) != len(opponents.frozen):
        raise CheckpointError(
            f"{step_dir} was trained against {len(opponents.frozen_win_rate)} frozen checkpoint(s); "
            f"this config names {len(opponents.frozen)}"
        )
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
        "imitation": (t, tmeta["imitation"]) if "imitation" in tmeta else None,
        "imitated": bool(tmeta.get("imitated", False)),
        "exploiter_at": int(tmeta.get("exploiter_at", 0)),
        "league_exploiter_at": int(tmeta.get("league_exploiter_at", 0)),
        "seconds": float(tmeta.get("seconds", 0.0)),  # runs saved before it have none
    }
