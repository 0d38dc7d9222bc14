"""Trained policies: ``load_policy(path)`` and the ``Policy`` agent.

``load_policy(path)`` accepts a run directory, a step directory or a ``policy.*`` file
(``agents.training.checkpoint``) and returns a ``Policy`` with ``act(observation, action_mask,
deterministic=True)``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from agents.training.checkpoint import CheckpointError, load_tensors, read_meta, resolve_checkpoint
from agents.training.network import ActorCritic, NetworkSpec
from ginenv.actions import NUM_ACTIONS
from ginenv.observation import OBS_SIZE


def network_spec(meta: dict) -> NetworkSpec:
    """``policy.json``'s ``network`` spec, or a ``CheckpointError`` saying why this version
    cannot build it."""
    try:
        return NetworkSpec.from_dict(meta.get("network") or {})
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"policy.json's network spec is not one this version builds: {e}") from None


def build_model(meta: dict) -> ActorCritic:
    """The network ``policy.json``'s ``network`` spec describes, freshly initialised."""
    return ActorCritic(network_spec(meta))


def _tensor(a: np.ndarray) -> torch.Tensor:
    """``a`` as a CPU tensor sharing its memory, or as a copy where ``a`` is read-only (the
    envs hand out read-only masks; torch warns of such an array, though nothing here writes)."""
    return torch.from_numpy(a if a.flags.writeable else a.copy())


class Policy:
    """A trained policy, for frontends and for the evaluator.

    ``act(observation, action_mask, deterministic=True)`` takes one observation
    ``(OBS_SIZE,)`` with its mask ``(108,)`` and returns an int, or a batch and returns
    an array. Illegal actions are never chosen.
    """

    #: ``act`` is greedy unless asked to sample (agents.base): a game's frontend asks
    #: for the greedy move, which depends on the observation alone.
    pure = True

    def __init__(self, model: ActorCritic, meta: dict | None = None, name: str = "policy", seed: int = 0):
        self.model = model.eval()
        self.meta = meta or {}
        self.name = name
        self.generator = torch.Generator().manual_seed(seed)

    def _inputs(self, observation, action_mask):
        """``(obs, mask, single)`` as batched tensors, checked: the shapes, finite
        observations, and at least one legal action each (``ValueError`` otherwise)."""
        device = next(self.model.parameters()).device
        o, m = np.asarray(observation, np.float32), np.asarray(action_mask)
        single = o.ndim == 1
        o, m = (o[None], m[None]) if single else (o, m)
        if o.ndim != 2 or m.ndim != 2 or o.shape[-1] != OBS_SIZE or m.shape[-1] != NUM_ACTIONS or len(o) != len(m):
            raise ValueError(
                f"expected observations (B, {OBS_SIZE}) and masks (B, {NUM_ACTIONS}); got {o.shape} and {m.shape}"
            )
        if not np.isfinite(o).all():
            raise ValueError("observations must be finite numbers (one holds NaN or infinity)")
        if not m.astype(bool).any(1).all():
            raise ValueError("every observation needs at least one legal action (a mask is all false)")
        return _tensor(o).to(device), torch.as_tensor(m.astype(bool), device=device), single

    @torch.no_grad()
    def act(self, observation, action_mask, deterministic: bool = True):
        obs, mask, single = self._inputs(observation, action_mask)
        if deterministic:
            actions = self.model.act_greedy(obs, mask)
        else:
            probs = self.model.action_dist(obs, mask).probs.cpu()
            actions = torch.multinomial(probs, 1, generator=self.generator).squeeze(-1)
        out = actions.cpu().numpy().astype(np.int64)
        return int(out[0]) if single else out

    @torch.no_grad()
    def probabilities(self, observation, action_mask) -> np.ndarray:
        """The policy's probability of each action (0 for illegal ones): ``(108,)`` for one
        observation, ``(B, 108)`` for a batch."""
        obs, mask, single = self._inputs(observation, action_mask)
        out = self.model.action_dist(obs, mask).probs.cpu().numpy()
        return out[0] if single else out

    # The search's rollouts (agents.training.search) call these on the engine's own
    # observations and masks, a batch at a time, unchecked.
    @torch.no_grad()
    def greedy(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``(B,)`` the greedy action of each of a batch of observations."""
        return self.model.act_greedy(_tensor(observations), _tensor(masks)).numpy()

    @torch.no_grad()
    def belief(self, observations: np.ndarray) -> np.ndarray | None:
        """``(B, 52)``: P(the opponent holds each card) by the belief net, ``None`` for a
        network without one."""
        if not self.model.has_belief:
            return None
        return self.model.actor.belief(_tensor(observations)).numpy()


def load_policy(path, seed: int = 0) -> Policy:
    """Load a checkpoint (run dir, step dir or policy file) as a ``Policy``."""
    step_dir = resolve_checkpoint(path)
    meta = read_meta(step_dir)
    with torch.random.fork_rng(devices=[]):  # its fresh weights are overwritten: leave torch's generator alone
        model = build_model(meta)
    weights = load_tensors(step_dir / "policy.safetensors", meta)
    try:
        model.load_state_dict(weights)
    except RuntimeError as e:
        raise CheckpointError(
            f"{step_dir / 'policy.safetensors'} does not fit the network in policy.json: {e}"
        ) from None
    name = f"{Path(step_dir).parent.name}/{Path(step_dir).name}"
    return Policy(model, meta, name=name, seed=seed)
