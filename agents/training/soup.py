"""Experiment: a model soup, the weights of several checkpoints of one network averaged.

``python -m agents.training.soup OUT CKPT [CKPT ...] [--weights W ...]`` writes ``OUT``
(a run directory with one step) whose policy's every tensor is the weighted mean of the
checkpoints' (equal weights unless given). The checkpoints must share the network's
shape (``network`` in their metadata); soups of fine-tunings from one start are the
case measured (docs/experiments.md, "Model soups"). The first checkpoint's metadata is
kept, with the members and weights under ``soup``.
"""

from __future__ import annotations

import argparse

import torch

from agents.training.checkpoint import load_tensors, read_meta, resolve_checkpoint, save_checkpoint
from agents.training.policy import build_model


def soup(paths, weights=None) -> tuple[dict, dict]:
    """``(tensors, meta)``: the weighted mean of the checkpoints' policy tensors, and the
    first one's metadata with ``soup`` added. ``ValueError`` if the networks differ."""
    if not paths:
        raise ValueError("a soup needs at least one checkpoint")
    weights = [1.0] * len(paths) if weights is None else [float(w) for w in weights]
    if len(weights) != len(paths) or min(weights) < 0 or sum(weights) <= 0:
        raise ValueError(f"one non-negative weight per checkpoint, not all zero; got {weights} for {len(paths)}")
    dirs = [resolve_checkpoint(p) for p in paths]
    metas = [read_meta(d) for d in dirs]
    for d, m in zip(dirs[1:], metas[1:]):
        if m.get("network") != metas[0].get("network"):
            raise ValueError(f"{d} has another network ({m.get('network')}) than {dirs[0]} ({metas[0].get('network')})")
    total = sum(weights)
    tensors = [load_tensors(d / "policy.safetensors", m) for d, m in zip(dirs, metas)]
    mean = {k: sum((w / total) * t[k].to(torch.float64) for w, t in zip(weights, tensors)).float() for k in tensors[0]}
    meta = {k: v for k, v in metas[0].items() if k not in ("spec", "sha256", "json_sha256")}
    meta["soup"] = {"members": [str(d) for d in dirs], "weights": [w / total for w in weights]}
    return mean, meta


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.training.soup", description=__doc__.split("\n\n")[1])
    p.add_argument("out", help="the new run directory")
    p.add_argument("checkpoints", nargs="+", help="run or step directories of one network's shape")
    p.add_argument("--weights", nargs="+", type=float, help="one weight each (equal if left out)")
    args = p.parse_args(argv)
    tensors, meta = soup(args.checkpoints, args.weights)
    model = build_model(meta)
    model.load_state_dict(tensors)
    print(save_checkpoint(args.out, 1, model, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
