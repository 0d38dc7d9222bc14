"""The PPO update: the optimizer, the clipped losses over minibatches, the statistics.

The belief net's cross-entropy (``belief`` actor) is added to the loss; its gradients
are clipped apart from the policy's and the critic's, so that neither loss scales the
other's steps down.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from torch import nn

from agents.training.config import Config
from agents.training.network import ActorCritic, MaskedCategorical, belief_loss, knock_entropy
from agents.training.rollout import Rollout
from ginenv import melds
from ginenv.actions import DRAW_STOCK, PASS


def make_optimizer(model: ActorCritic, config: Config) -> tuple[torch.optim.Optimizer, list]:
    """Adam over every parameter, and the parameter groups whose gradient norms are
    clipped apart: the policy and critic, then the belief net (if any). Lists in the
    model's order (a set's order would vary between processes). Adam's step is torch's
    fused kernel on a CPU or a GPU (one kernel for every parameter where the default
    runs a dozen small operations for each: 4x faster here, the same update to float
    rounding)."""
    params = list(model.parameters())
    groups = [params]
    if model.has_belief:
        belief = {id(p) for p in model.actor.belief_net.parameters()}
        groups = [[p for p in params if id(p) not in belief], [p for p in params if id(p) in belief]]
    fused = params[0].device.type in ("cpu", "cuda")
    return torch.optim.Adam(params, lr=config.learning_rate, eps=1e-5, fused=fused), groups


def flatten(b: Rollout, adv: np.ndarray, returns: np.ndarray, device, opponent_deadwood: bool = False) -> dict:
    """The learner's decisions of a rollout as flat tensors, named ``b_...``; with
    ``opponent_deadwood``, the deadwood head's target too (the opponent's deadwood / 100)."""
    v = b.valid
    t = {
        "obs": b.obs[v],
        "mask": b.mask[v],
        "opp": b.opp[v],
        "actions": b.actions[v],
        "logprobs": b.logprobs[v],
        "adv": adv[v],
        "returns": returns[v],
        "values": b.values[v],
    }
    if opponent_deadwood:
        t["opp_deadwood"] = melds.deadwood(t["opp"] > 0.5).astype(np.float32) / 100
    return {f"b_{k}": torch.from_numpy(x).to(device) for k, x in t.items()}


class SplitWorker:
    """A second thread for ``update``: the critic's forward and backward run on it while
    the actor's run on the caller's (and a belief actor's belief net, whose output the
    actor reads detached: its forward first, its loss last). The losses share no
    parameter, so each one's gradients are what the summed loss would give; the clipping
    and the optimizer's step then see them all. Torch's kernels release the GIL, and each
    thread runs its kernels with ``threads`` intra-op threads of its own (no OpenMP team
    spins across the two), so two cores work at once and a shared core only time-slices."""

    def __init__(self, threads: int):
        self.pool = ThreadPoolExecutor(
            1, thread_name_prefix="critic", initializer=torch.set_num_threads, initargs=(threads,)
        )

    @classmethod
    def for_config(cls, config: Config, device) -> SplitWorker | None:
        """A worker when ``split_update`` asks for one and the network is on the CPU."""
        return cls(config.torch_threads) if config.split_update and torch.device(device).type == "cpu" else None

    def submit(self, fn, *args):
        return self.pool.submit(fn, *args)

    def close(self):
        self.pool.shutdown()


def precision(config: Config, device):
    """The context the update's forward passes run in (per thread: entered where each
    runs): torch's autocast to ``update_dtype`` where that is not float32."""
    if config.update_dtype == "float32":
        return contextlib.nullcontext()
    return torch.autocast(torch.device(device).type, dtype=getattr(torch, config.update_dtype))


def _critic_loss(model: ActorCritic, batch: dict, mb: torch.Tensor, c: Config) -> torch.Tensor:
    """The clipped value loss on minibatch ``mb``, back-propagated (times ``vf_coef``)."""
    opp = batch["b_opp"].index_select(0, mb) if model.privileged_critic else None
    with precision(c, mb.device):
        newvalue = model.get_value(batch["b_obs"].index_select(0, mb), opp).float()
    mb_returns, mb_values = batch["b_returns"][mb], batch["b_values"][mb]
    if c.clip_vloss:
        v_unclipped = (newvalue - mb_returns) ** 2
        v_clipped = mb_values + torch.clamp(newvalue - mb_values, -c.clip_coef, c.clip_coef)
        v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - mb_returns) ** 2).mean()
    else:
        v_loss = 0.5 * ((newvalue - mb_returns) ** 2).mean()
    (v_loss * c.vf_coef).backward()
    return v_loss.detach()


def _belief_forward(model: ActorCritic, batch: dict, mb: torch.Tensor, c: Config) -> torch.Tensor:
    """The belief net's logits on minibatch ``mb`` (the actor reads them detached)."""
    with precision(c, mb.device):
        return model.actor.belief_net(batch["b_obs"].index_select(0, mb)).float()


def _belief_loss(ahead, batch: dict, mb: torch.Tensor, c: Config) -> torch.Tensor:
    """The belief net's cross-entropy on ``mb`` (``ahead``: its forward's future),
    back-propagated (times ``belief_coef``): only the belief net has a gradient from it."""
    b_loss = belief_loss(ahead.result(), batch["b_obs"].index_select(0, mb), batch["b_opp"].index_select(0, mb))
    (c.belief_coef * b_loss).backward()
    return b_loss.detach()


def update(
    model: ActorCritic,
    optimizer,
    clip_groups: list,
    batch: dict,
    config: Config,
    ent_coef: float,
    critic_only: bool,
    rng: np.random.Generator,
    device,
    knock_ent_coef: float = 0.0,
    split: SplitWorker | None = None,
) -> dict:
    """``update_epochs`` epochs of minibatch PPO on ``batch`` (``flatten``); returns the
    statistics, TensorBoard-named. ``critic_only``: the value loss alone (a warm-started
    actor waits for its critic). ``split``: the critic's loss, and a belief net's forward
    and loss, on that worker's thread (the same gradients, on a second core); else one
    after the other. Each forward pass runs in ``precision`` (``update_dtype``), its
    outputs back in float32 for the losses."""
    c = config
    n = len(batch["b_obs"])
    clipfracs, stats = [], {}
    # Entropy by phase (draw or take: 104-106 legal; discard or knock: the rest), summed
    # over the last epoch's minibatches.
    drawing = batch["b_mask"][:, DRAW_STOCK : PASS + 1].any(1)
    phase_entropy = torch.zeros(2, dtype=torch.float64)
    offload_belief = split is not None and model.has_belief
    for epoch in range(c.update_epochs):
        # Fewer minibatches when the learner made few decisions: none may hold fewer than
        # two (an advantage's standard deviation needs two).
        for part in np.array_split(rng.permutation(n), max(1, min(c.num_minibatches, n // 2))):
            mb = torch.from_numpy(part).to(device)
            optimizer.zero_grad()
            # Queued on the worker, in order: the belief net's forward, the critic, the belief loss.
            ahead = split.submit(_belief_forward, model, batch, mb, c) if offload_belief else None
            critic = split.submit(_critic_loss, model, batch, mb, c) if split is not None else None
            trained_belief = split.submit(_belief_loss, ahead, batch, mb, c) if offload_belief else None
            mb_obs, mb_mask = batch["b_obs"].index_select(0, mb), batch["b_mask"].index_select(0, mb)
            # With the belief offloaded, the actor waits for it after its trunk.
            with precision(c, device):
                logits, aux = model.actor_with_aux(mb_obs, ahead.result if ahead is not None else None)
            logits, aux = logits.float(), {k: v.float() for k, v in aux.items()}
            dist = MaskedCategorical(logits, mb_mask)
            newlogprob, entropy = dist.log_prob(batch["b_actions"][mb]), dist.entropy()
            logratio = newlogprob - batch["b_logprobs"][mb]
            ratio = logratio.exp()
            with torch.no_grad():
                old_approx_kl = (-logratio).mean()
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs.append(((ratio - 1.0).abs() > c.clip_coef).float().mean().item())
            mb_adv = batch["b_adv"][mb]
            mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - c.clip_coef, 1 + c.clip_coef)).mean()
            entropy_loss = entropy.mean()
            if epoch == c.update_epochs - 1:
                with torch.no_grad():
                    d = drawing[mb]
                    phase_entropy += torch.stack([entropy[d].sum(), entropy[~d].sum()]).double().cpu()
            loss = None if critic_only else pg_loss - ent_coef * entropy_loss
            if knock_ent_coef > 0 and not critic_only:
                k_ent, k_rows = knock_entropy(logits, mb_mask)
                if k_rows.any():  # summed over the rows with a knock, per decision (as the entropy above)
                    loss = loss - knock_ent_coef * k_ent.sum() / len(mb)
                    stats["losses/entropy_knock"] = k_ent.mean().item()
            if model.deadwood_head is not None and not critic_only:
                d_loss = ((model.opponent_deadwood(aux["context"]) - batch["b_opp_deadwood"][mb]) ** 2).mean()
                loss = loss + c.deadwood_aux_coef * d_loss
                stats["losses/opponent_deadwood_mse"] = d_loss.item()
            if "belief" in aux and not offload_belief:
                b_loss = belief_loss(aux["belief"], mb_obs, batch["b_opp"].index_select(0, mb))
                loss = c.belief_coef * b_loss if loss is None else loss + c.belief_coef * b_loss
                stats["losses/belief_cross_entropy"] = b_loss.item()
            if loss is not None:
                loss.backward()
            v_loss = critic.result() if critic is not None else _critic_loss(model, batch, mb, c)
            if trained_belief is not None:
                stats["losses/belief_cross_entropy"] = trained_belief.result().item()
            for group in clip_groups:
                nn.utils.clip_grad_norm_(group, c.max_grad_norm)
            optimizer.step()
        if c.target_kl and approx_kl > c.target_kl:
            phase_entropy.fill_(float("nan"))  # the last epoch did not run
            break
    y_pred, y_true = batch["b_values"].cpu().numpy(), batch["b_returns"].cpu().numpy()
    var_y = np.var(y_true)
    stats.update(
        {
            "losses/value_loss": v_loss.item(),
            "losses/policy_loss": pg_loss.item(),
            "losses/entropy": entropy_loss.item(),
            "losses/old_approx_kl": old_approx_kl.item(),
            "losses/approx_kl": approx_kl.item(),
            "losses/clipfrac": float(np.mean(clipfracs)),
            "losses/explained_variance": float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y),
            "charts/entropy_coef": ent_coef,
        }
    )
    counts = torch.stack([drawing.sum(), (~drawing).sum()]).double().cpu()
    for k, name in enumerate(("draw", "discard")):
        if counts[k] > 0:
            stats[f"losses/entropy_{name}"] = float(phase_entropy[k] / counts[k])
    return stats
