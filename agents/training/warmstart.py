"""Starting a run from something better than random weights.

- ``Imitation``: the actor imitates a baseline (``bc_teacher``) playing both seats:
  cross-entropy of the masked logits against the teacher's moves, on fresh games, each
  decision seen once (the belief net learns from those games too). A checkpoint as the
  teacher (``PolicyTeacher``) is distilled instead: it samples its own moves and the
  targets are its probabilities. It stops between chunks on a signal and checkpoints,
  and a resume goes on exactly there.
- ``load_initial_weights``: ``init_from``, another checkpoint's network weights.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from agents.training import checkpoint
from agents.training.config import Config, set_item
from agents.training.network import ActorCritic, belief_loss, masked_logits
from agents.training.policy import load_policy
from ginenv import VectorEnv, core
from ginenv.baselines import BASELINES

IMITATION_SEED_OFFSET = 1_000_003  # the imitation games' seed, apart from the training games'
CHUNK_STEPS = 16  # steps of all games gathered before each pass over them


class PolicyTeacher:
    """A checkpoint as the teacher: ``targets`` are its probabilities of every action
    (the soft targets of distillation), ``sample`` draws a move from them with ``rng`` (a
    numpy generator, saved with the imitation so that a resume plays the same games)."""

    def __init__(self, path, seed: int):
        try:
            self.policy = load_policy(path)
        except checkpoint.CheckpointError as e:
            raise checkpoint.CheckpointError(f"bc_teacher {path}: {e}") from None
        self.rng = np.random.default_rng(seed)

    def targets(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.policy.probabilities(obs, mask).astype(np.float32)

    def sample(self, probs: np.ndarray) -> np.ndarray:
        """One action a row of ``probs``, by the inverse of the cumulative distribution."""
        cdf = np.cumsum(probs, 1, dtype=np.float64)
        u = self.rng.random(len(probs)) * cdf[:, -1]
        drawn = (cdf <= u[:, None]).sum(1)
        return np.minimum(drawn, (cdf < cdf[:, -1:]).sum(1)).astype(np.int64)  # u at the total: the last legal


def make_teacher(name: str, seed: int):
    """``bc_teacher``: a baseline by name, else a checkpoint (``PolicyTeacher``)."""
    return BASELINES[name](seed=seed) if name in BASELINES else PolicyTeacher(name, seed)


class Imitation:
    """The actor imitates ``config.bc_teacher`` for ``config.bc_decisions`` decisions, in
    chunks of ``CHUNK_STEPS`` steps of every game; ``run(stop)`` returns early (between
    chunks) once ``stop()`` is true, and ``tensors()`` / ``meta()`` hold what a
    checkpoint needs to go on exactly there (``restore``)."""

    def __init__(self, model: ActorCritic, config: Config, device):
        c = self.config = config
        self.model, self.device = model, device
        self.teacher = make_teacher(c.bc_teacher, c.seed)
        self.env = VectorEnv(c.num_envs, c.rules, seed=c.seed + IMITATION_SEED_OFFSET, mode=c.mode)
        self.env.reset()
        self.opt = torch.optim.Adam(model.actor.parameters(), lr=c.bc_learning_rate)
        self.seen = 0

    @property
    def done(self) -> bool:
        return self.seen >= self.config.bc_decisions

    def run(self, rng: np.random.Generator, stop=lambda: False, log=None, say=print) -> None:
        """Imitate until done or ``stop()``; ``log(tag, value, step)`` receives the loss
        and accuracy, ``say`` a progress line per chunk."""
        c, env, start, seen0 = self.config, self.env, time.time(), self.seen
        obs, mask = env.observe(), core.legal_action_mask(env.state)
        while not self.done and not stop():
            chunk = [], [], [], []
            for _ in range(CHUNK_STEPS):
                if isinstance(self.teacher, PolicyTeacher):
                    target = self.teacher.targets(obs, mask)
                    act = self.teacher.sample(target)
                else:
                    target = act = self.teacher.act(obs, mask)
                for buf, x in zip(chunk, (obs.copy(), mask.copy(), target, self._opponent_hands())):
                    buf.append(x)
                out = env.step(act)
                obs, mask = out.obs, out.action_mask
            loss, accuracy, n = self._learn(rng, *(np.concatenate(b) for b in chunk))
            self.seen += n
            if log is not None:
                log("bc/loss", loss, self.seen)
                log("bc/accuracy", accuracy, self.seen)
            rate = (self.seen - seen0) / max(time.time() - start, 1e-9)
            say(
                f"imitating {c.bc_teacher}: {self.seen / 1e6:.2f}M decisions  loss {loss:.3f}  "
                f"accuracy {accuracy:.3f}  {rate / 1e3:.1f}k/s"
            )

    def _opponent_hands(self) -> np.ndarray:
        s = self.env.state
        return s.hands_of(1 - s.current.astype(np.int64)).astype(np.float32)

    def _learn(self, rng, obs, mask, act, opp) -> tuple[float, float, int]:
        c, device = self.config, self.device
        x, m, y, opp = (torch.from_numpy(b).to(device) for b in (obs, mask, act, opp))
        for part in np.array_split(rng.permutation(len(x)), c.num_minibatches):
            idx = torch.from_numpy(part).to(device)
            raw, aux = self.model.actor_with_aux(x[idx])
            logits = masked_logits(raw, m[idx])
            loss = torch.nn.functional.cross_entropy(logits, y[idx])  # y: moves, or probabilities
            if "belief" in aux:
                loss = loss + c.belief_coef * belief_loss(aux["belief"], x[idx], opp[idx])
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        best = y[idx] if y.ndim == 1 else y[idx].argmax(-1)
        accuracy = (logits.argmax(-1) == best).float().mean().item()
        return loss.item(), accuracy, len(x)

    # ------------------------------------------------------------ checkpoints
    def tensors(self) -> dict:
        """The imitation's optimizer and games, as named tensors (prefix ``bc.``)."""
        out = {f"bc.{k}": v for k, v in checkpoint.optimizer_tensors(self.opt).items()}
        out.update(checkpoint.state_tensors(self.env.state, prefix="bc.env."))
        return out

    def meta(self) -> dict:
        rng = getattr(self.teacher, "rng", None)
        return {
            "seen": self.seen,
            "optimizer": checkpoint.optimizer_meta(self.opt),
            "teacher_rng": None if rng is None else checkpoint.jsonable(rng.bit_generator.state),
        }

    def restore(self, tensors: dict, meta: dict) -> None:
        self.seen = int(meta["seen"])
        opt = {k[len("bc.") :]: v for k, v in tensors.items() if k.startswith("bc.opt.")}
        checkpoint.restore_optimizer(self.opt, opt, meta["optimizer"])
        self.env.state = checkpoint.state_from_tensors(self.env.state, tensors, prefix="bc.env.")
        if meta.get("teacher_rng") is not None:
            self.teacher.rng.bit_generator.state = meta["teacher_rng"]


NETWORK_KEYS = ("hidden_sizes", "activation", "architecture", "privileged_critic")


def init_sets(path) -> list:
    """``--set`` items that start a run from the checkpoint ``path``: ``init_from`` and
    its network's shape (strings as they are, the rest as YAML)."""
    network = checkpoint.read_meta(checkpoint.resolve_checkpoint(path)).get("network") or {}
    return [f"init_from={path}"] + [set_item(key, network[key]) for key in NETWORK_KEYS if key in network]


def load_initial_weights(model: ActorCritic, path, quiet: bool = False) -> None:
    """``init_from``: the network weights of another run's checkpoint (not its optimizer,
    counters or opponents: the run starts at update 0). The actor must match this
    model's; if the critic's inputs differ (``privileged_critic``), the critic starts
    fresh, and so does a deadwood head that checkpoint lacks (``deadwood_head``)."""
    try:
        theirs = load_policy(path).model
    except checkpoint.CheckpointError as e:
        raise checkpoint.CheckpointError(f"init_from {path}: {e}") from None
    differ = {k: (a, b) for k, a in theirs.spec.to_dict().items() if a != (b := model.spec.to_dict()[k])}
    actor_differ = {k: d for k, d in differ.items() if k not in ("privileged_critic", "deadwood_head")}
    if actor_differ:
        raise ValueError(
            f"init_from {path}: its actor does not match this config's: "
            + "; ".join(f"{k} is {a!r} there, {b!r} here" for k, (a, b) in actor_differ.items())
            + " (only privileged_critic and deadwood_head may differ)"
        )
    if not differ:
        model.load_state_dict(theirs.state_dict())
        return
    model.actor.load_state_dict(theirs.actor.state_dict())
    if model.deadwood_head is not None and theirs.deadwood_head is not None:
        model.deadwood_head.load_state_dict(theirs.deadwood_head.state_dict())
    if "privileged_critic" not in differ:
        model.critic.load_state_dict(theirs.critic.state_dict())
    elif not quiet:
        print(
            f"init_from {path}: the actor is loaded, the critic starts fresh (privileged_critic "
            f"{differ['privileged_critic'][0]} there, {differ['privileged_critic'][1]} here)"
        )
