"""Starting a run from something better than random weights.

- ``imitate``: the actor imitates a baseline (``bc_teacher``) playing both seats:
  cross-entropy of the masked logits against the teacher's moves, on fresh games, each
  decision seen once (the belief net learns from those games too).
- ``load_initial_weights``: ``init_from``, another checkpoint's network weights.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from agents.config import Config
from agents.network import ActorCritic, belief_loss, masked_logits
from agents.policy import load_policy
from ginenv import VectorEnv
from ginenv.baselines import BASELINES

IMITATION_SEED_OFFSET = 1_000_003  # the imitation games' seed, apart from the training games'
CHUNK_STEPS = 16  # steps of all games gathered before each pass over them


def imitate(model: ActorCritic, config: Config, rng: np.random.Generator, device, log=None, quiet=False) -> None:
    """Imitate ``config.bc_teacher`` for ``config.bc_decisions`` decisions; ``log(tag,
    value, step)`` receives the loss and accuracy."""
    c = config
    teacher = BASELINES[c.bc_teacher](seed=c.seed)
    env = VectorEnv(c.num_envs, c.rules, seed=c.seed + IMITATION_SEED_OFFSET, mode=c.mode)
    obs, mask, _ = env.reset()
    opt = torch.optim.Adam(model.actor.parameters(), lr=c.bc_learning_rate)
    seen, start = 0, time.time()
    buf_obs, buf_mask, buf_act, buf_opp = [], [], [], []
    while seen < c.bc_decisions:
        act = teacher.act(obs, mask)
        buf_obs.append(obs.copy())
        buf_mask.append(mask.copy())
        buf_act.append(act)
        buf_opp.append(env.state.hands_of(1 - env.state.current.astype(np.int64)).astype(np.float32))
        out = env.step(act)
        obs, mask = out.obs, out.action_mask
        if len(buf_obs) < CHUNK_STEPS:
            continue
        x, m, y, opp = (torch.from_numpy(np.concatenate(b)).to(device) for b in (buf_obs, buf_mask, buf_act, buf_opp))
        buf_obs, buf_mask, buf_act, buf_opp = [], [], [], []
        for part in np.array_split(rng.permutation(len(x)), c.num_minibatches):
            idx = torch.from_numpy(part).to(device)
            raw, aux = model.actor_with_aux(x[idx])
            logits = masked_logits(raw, m[idx])
            loss = torch.nn.functional.cross_entropy(logits, y[idx])
            if "belief" in aux:
                loss = loss + c.belief_coef * belief_loss(aux["belief"], x[idx], opp[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        accuracy = (logits.argmax(-1) == y[idx]).float().mean().item()
        seen += len(x)
        if log is not None:
            log("bc/loss", loss.item(), seen)
            log("bc/accuracy", accuracy, seen)
        if not quiet:
            print(
                f"imitating {c.bc_teacher}: {seen / 1e6:.2f}M decisions  loss {loss.item():.3f}  "
                f"accuracy {accuracy:.3f}  {seen / (time.time() - start) / 1e3:.1f}k/s",
                flush=True,
            )


def load_initial_weights(model: ActorCritic, path, quiet: bool = False) -> None:
    """``init_from``: the network weights of another run's checkpoint (not its optimizer,
    counters or opponents: the run starts at update 0). The actor must match this
    model's; if only the critic's inputs differ (``privileged_critic``), the critic
    starts fresh."""
    theirs = load_policy(path).model  # clear errors for a missing or broken checkpoint
    differ = {k: (a, b) for k, a in theirs.spec.to_dict().items() if a != (b := model.spec.to_dict()[k])}
    actor_differ = {k: d for k, d in differ.items() if k != "privileged_critic"}
    if actor_differ:
        raise ValueError(
            f"init_from {path}: its actor does not match this config's: "
            + "; ".join(f"{k} is {a!r} there, {b!r} here" for k, (a, b) in actor_differ.items())
            + " (only privileged_critic may differ)"
        )
    if not differ:
        model.load_state_dict(theirs.state_dict())
        return
    model.actor.load_state_dict(theirs.actor.state_dict())
    if not quiet:
        print(
            f"init_from {path}: the actor is loaded, the critic starts fresh (privileged_critic "
            f"{differ['privileged_critic'][0]} there, {differ['privileged_critic'][1]} here)"
        )
