"""Self-play PPO for gin rummy: ``python train.py --config configs/<name>.yaml [--set key=value ...]``.

Reads like CleanRL's ppo.py: config, seeding, envs, agent, rollout, GAE, PPO update,
logging, evaluation, checkpointing. Differences that the game needs:

- **Two players per game.** Each step one player moves in each game. Every decision of
  the learner is stored with its seat; its reward is what that seat receives until its
  next decision in the same game, and GAE follows each seat's own chain of decisions.
- **Opponents.** Each episode draws who sits opposite the learner: the learner itself
  (both seats train), a past snapshot from the pool, or a baseline, with the mix set in
  the config. Only the learner's decisions train the learner.
- **Masks.** Illegal logits are filled with -1e8 before the softmax.
- **Privileged critic** (optional): the critic also sees the opponent's hand; the actor
  never does, so the trained policy stays fair.

``python train.py`` with no arguments trains with ``configs/default.yaml``. TensorBoard
logs go to ``runs/<run>/``, checkpoints to ``checkpoints/<run>/``; ``--resume
checkpoints/<run>`` continues a run exactly where its last checkpoint left it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import typing
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import yaml

from agents import BASELINES, make_agent
from agents.evaluate import play
from agents.network import ARCHITECTURES, ActorCritic, aux_losses, lookahead_size, masked_logits, state_lookahead
from agents.policy import Policy, load_policy, load_tensors, read_meta, resolve_checkpoint, save_checkpoint
from ginenv import VectorEnv, core, melds
from ginenv.actions import NUM_ACTIONS, TAKE_DISCARD
from ginenv.observation import OBS_SIZE, observe
from ginenv.rules import PRESETS, Rules

DEFAULT_CONFIG = Path(__file__).parent / "configs" / "default.yaml"


# ==================================================================== config
@dataclass
class Config:
    """Every setting of a training run; YAML files and ``--set`` override the defaults."""

    exp_name: str = "ppo"
    """Experiment name, part of the run name."""
    run_name: str = ""
    """Run name (default ``gin__{exp_name}__{seed}__{time}``)."""
    seed: int = 1
    """Seeds the games, the sampling and the minibatches."""
    rules: str = "standard"
    """Rules preset."""
    mode: str = "hand"
    """``hand``: an episode is one hand; ``match``: a match to the target."""
    reward_scale: float = 0.01
    """Rewards are (own - opponent) points times this."""
    match_win_reward: float = 0.0
    """In match mode, +/- this to the winner / loser at the end of a match."""
    feed_penalty: float = 0.0
    """Shaping: points (times reward_scale) taken from a player's reward when the opponent
    takes its discard from the pile. Only the training reward; nothing is scored."""
    total_decisions: int = 20_000_000
    """Decisions to play in all, both seats (num_envs x num_steps per update)."""
    num_envs: int = 512
    """Games played at once."""
    num_steps: int = 64
    """Steps per rollout (each step, one move in every game)."""
    learning_rate: float = 3e-4
    """Adam's learning rate."""
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0."""
    gamma: float = 0.995
    """Discount per decision of the same seat."""
    gae_lambda: float = 0.95
    """GAE's lambda."""
    num_minibatches: int = 4
    """Minibatches per epoch."""
    update_epochs: int = 2
    """Epochs over each rollout."""
    clip_coef: float = 0.2
    """PPO's clip."""
    clip_vloss: bool = True
    """Clip the value loss too."""
    ent_coef: float = 0.01
    """Entropy bonus at the start."""
    ent_coef_final: float = 0.001
    """Entropy bonus at the end (linear schedule)."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient norm clip."""
    target_kl: float = 0.0
    """Stop an update's epochs early above this KL (0: never)."""
    hidden_sizes: list = field(default_factory=lambda: [128, 128])
    """Hidden layer widths of the actor and of the critic."""
    activation: str = "relu"
    """relu, tanh or gelu."""
    architecture: str = "cards"
    """Actor: ``cards`` (a head shared by the 52 cards), ``relational`` (that head also
    reads each card's neighbours in rank and suit, plane by plane), ``belief``
    (``relational`` plus a learnt belief over the opponent's unseen cards), ``danger``
    (``belief`` plus a learnt danger: the chance that each card would join a meld of
    the opponent's) or ``mlp``."""
    belief_coef: float = 1.0
    """Weight of the belief net's cross-entropy (``belief``, ``danger``; its gradients
    are clipped apart from the policy's and the critic's)."""
    danger_coef: float = 1.0
    """Weight of the danger net's cross-entropy (``danger`` only; clipped apart too)."""
    danger_learning_rate: float = 0.0
    """Learning rate of the danger net, constant (0: ``learning_rate``, annealed with the
    rest). A fresh danger net added to a trained actor (``init_from``) learns from the
    opponent's real hand, and can learn faster than the policy may move."""
    privileged_critic: bool = True
    """The critic also sees the opponent's hand (training only)."""
    critic_lookahead: int = 0
    """The privileged critic also sees what each of the next k stock cards would do to
    each hand (each player's best deadwood if it drew the card; training only): most of
    a hand's outcome that the two hands leave unexplained is in the stock, so the
    advantages get less noisy."""
    opponent_self: float = 0.6
    """Share of episodes the learner plays against itself."""
    opponent_snapshot: float = 0.2
    """Share against a past snapshot from the pool."""
    opponent_knock_early: float = 0.1
    """Share against the knock_early baseline."""
    opponent_gin_hunter: float = 0.1
    """Share against the gin_hunter baseline."""
    opponent_random: float = 0.0
    """Share against the random baseline."""
    init_from: str = ""
    """Start from the network weights of this checkpoint (a run or step directory) instead
    of fresh ones; its actor (architecture, sizes) must be this config's, except that a
    ``belief`` actor may start a ``danger`` one (the danger net fresh, the head's weights
    on it at 0). If the critic's inputs differ, the critic is kept (lookahead inputs
    added at weight 0) or started fresh (give it ``critic_warmup_updates``)."""
    bc_teacher: str = ""
    """Warm start: a baseline whose moves the actor imitates before PPO ("" for none)."""
    bc_decisions: int = 0
    """Decisions of the teacher (playing both seats) to imitate, each seen once."""
    bc_learning_rate: float = 1e-3
    """Adam's learning rate while imitating."""
    critic_warmup_updates: int = 0
    """First updates train the critic only (the actor stays as the warm start left it)."""
    snapshot_every: int = 20
    """Updates between snapshots added to the pool."""
    pool_size: int = 5
    """Snapshots kept in the pool (oldest dropped)."""
    eval_every: int = 20
    """Updates between evaluations against knock_early and gin_hunter (0: never)."""
    eval_matches: int = 200
    """Matches (or hands, in hand mode evaluation) per evaluation."""
    eval_mode: str = "match"
    """Evaluate on whole matches (``match``) or single hands (``hand``)."""
    checkpoint_every: int = 20
    """Updates between checkpoints (one is always written at the end)."""
    torch_threads: int = 2
    """Threads torch may use."""
    device: str = "cpu"
    """Where the network runs: ``cpu``, ``cuda`` or ``cuda:<n>`` (the games always run
    on the CPU, in numpy). Runs are bit-for-bit reproducible on the CPU; on a GPU they
    are reproducible only as far as its kernels are."""
    log_dir: str = "runs"
    """TensorBoard logs go to log_dir/run_name."""
    checkpoint_dir: str = "checkpoints"
    """Checkpoints go to checkpoint_dir/run_name."""

    def __post_init__(self):
        problems = []
        if self.rules not in PRESETS:
            problems.append(f"rules must be one of {', '.join(PRESETS)}")
        if self.mode not in core.MODES or self.eval_mode not in core.MODES:
            problems.append(f"mode and eval_mode must be one of {', '.join(core.MODES)}")
        for name in ("num_envs", "num_steps", "num_minibatches", "update_epochs", "total_decisions",
                     "snapshot_every", "pool_size", "eval_matches", "checkpoint_every", "torch_threads"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1")
        if (self.eval_every < 0 or self.bc_decisions < 0 or self.critic_warmup_updates < 0 or self.belief_coef < 0
                or self.danger_coef < 0 or self.danger_learning_rate < 0 or self.feed_penalty < 0):
            problems.append("eval_every, bc_decisions, critic_warmup_updates, belief_coef, danger_coef, "
                            "danger_learning_rate and feed_penalty must be >= 0")
        if self.bc_teacher and self.bc_teacher not in BASELINES:
            problems.append(f"bc_teacher must be empty or a baseline name ({', '.join(BASELINES)})")
        mix = self.opponent_mix()
        if any(v < 0 for v in mix.values()) or sum(mix.values()) <= 0:
            problems.append("the opponent_* shares must be >= 0 and not all 0")
        if self.activation not in ("relu", "tanh", "gelu"):
            problems.append("activation must be relu, tanh or gelu")
        if self.architecture not in ARCHITECTURES:
            problems.append(f"architecture must be one of {', '.join(ARCHITECTURES)}")
        if not self.hidden_sizes or any(int(h) < 1 for h in self.hidden_sizes):
            problems.append("hidden_sizes must be a non-empty list of positive widths")
        if self.critic_lookahead < 0 or self.critic_lookahead > core.NUM_CARDS - core.STOCK_START:
            problems.append(f"critic_lookahead must be between 0 and {core.NUM_CARDS - core.STOCK_START}")
        if self.critic_lookahead and not self.privileged_critic:
            problems.append("critic_lookahead needs privileged_critic: true")
        problems += _device_problems(self.device)
        if problems:
            raise ValueError("bad config: " + "; ".join(problems))

    def opponent_mix(self) -> dict:
        return {"self": self.opponent_self, "snapshot": self.opponent_snapshot,
                "knock_early": self.opponent_knock_early, "gin_hunter": self.opponent_gin_hunter,
                "random": self.opponent_random}

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps


def _device_problems(name: str) -> list:
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        return [f"device must be cpu, cuda or cuda:<n>, got {name!r}"]
    if device.type not in ("cpu", "cuda"):
        return [f"device must be cpu, cuda or cuda:<n>, got {name!r}"]
    if device.type == "cuda" and not torch.cuda.is_available():
        return [f"device {name!r} asks for a GPU but torch sees none here (torch {torch.__version__}); use device=cpu"]
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        return [f"device {name!r}: torch sees only {torch.cuda.device_count()} GPU(s)"]
    return []


def _coerce(name: str, text, kind):
    origin = typing.get_origin(kind) or kind
    if isinstance(text, str) and kind in ("bool", bool):
        if text.lower() in ("true", "1", "yes"):
            return True
        if text.lower() in ("false", "0", "no"):
            return False
        raise ValueError(f"{name} must be true or false, got {text!r}")
    if isinstance(text, str):
        value = yaml.safe_load(text)
    else:
        value = text
    expected = {"int": int, "float": float, "str": str, "bool": bool, "list": list}.get(kind, origin)
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if expected is str and not isinstance(value, str):
        value = str(value)
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise ValueError(f"{name} must be a {expected.__name__}, got {text!r}")
    return value


def make_config(overrides: dict | None = None, config_file=None, sets=()) -> Config:
    """Defaults, then a YAML file, then ``key=value`` strings; unknown keys are errors."""
    fields = {f.name: f.type for f in dataclasses.fields(Config)}
    values = {}

    def merge(source, items):
        for key, value in items:
            if key not in fields:
                raise ValueError(f"unknown config key {key!r} in {source}; valid keys: {', '.join(fields)}")
            values[key] = _coerce(key, value, fields[key])

    if config_file is not None:
        path = Path(config_file)
        if not path.is_file():
            raise ValueError(f"config file {path} not found")
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as e:
            raise ValueError(f"config file {path} is not valid YAML: {e}") from None
        if not isinstance(data, dict):
            raise ValueError(f"config file {path} must hold a mapping of keys to values")
        merge(str(path), data.items())
    merge("overrides", (overrides or {}).items())
    for item in sets:
        if "=" not in item:
            raise ValueError(f"--set takes key=value, got {item!r}")
        key, value = item.split("=", 1)
        merge("--set", [(key.strip(), value)])
    return Config(**values)


# ================================================================== training
def _grow_into(module: torch.nn.Module, old: dict, fresh: str = "", widened=(), rows: bool = True) -> None:
    """Copy the tensors ``old`` into ``module``'s: those whose names start with ``fresh``
    keep their new initialisation; the ``widened`` ones are larger here (more rows, or
    with ``rows=False`` more columns): the old values fill the first ones, the rest are
    0. Every other tensor must match in shape."""
    with torch.no_grad():
        for name, p in module.state_dict().items():
            if fresh and name.startswith(fresh):
                continue
            if name in widened:
                p.zero_()
                if rows:
                    p[:old[name].shape[0]] = old[name]
                else:
                    p[:, :old[name].shape[1]] = old[name]
            else:
                p.copy_(old[name])


def _without(params, *groups) -> list:
    """``params`` in order, less those in ``groups``."""
    apart = {id(p) for group in groups for p in group}
    return [p for p in params if id(p) not in apart]


class Trainer:
    """State of one run: built fresh from a config, or restored from a checkpoint."""

    def __init__(self, config: Config, resume_dir=None, quiet: bool = False, resume_overrides=()):
        step_dir = None
        if resume_dir is not None:  # the run's own config, but for the keys given again
            step_dir = resolve_checkpoint(resume_dir)
            config = _saved_config(step_dir, config, tuple(resume_overrides))
        self.config, self.quiet = config, quiet
        c = config
        if not c.run_name:
            c.run_name = f"gin__{c.exp_name}__{c.seed}__{int(time.time())}"
        torch.set_num_threads(c.torch_threads)
        self.device = torch.device(c.device)
        # ------------------------------------------------------------ seeding
        torch.manual_seed(c.seed)
        self.rng = np.random.default_rng(c.seed)
        # --------------------------------------------------------------- envs
        self.rules = Rules.preset(c.rules)
        self.env = VectorEnv(c.num_envs, self.rules, seed=c.seed, mode=c.mode, reward_scale=c.reward_scale,
                             match_win_reward=c.match_win_reward)
        # -------------------------------------------------------------- agent
        self.model = self._new_model()
        if c.init_from and step_dir is None:
            self._load_initial_weights(c.init_from)
        # The belief and danger nets: their gradients clipped apart, the danger net's
        # learning rate its own if set. Lists in the model's order (a set's would vary by run).
        aux = {k: list(getattr(self.model.actor, f"{k}_net").parameters()) for k, has in
               (("belief", self.model.has_belief), ("danger", self.model.has_danger)) if has}
        self.clip_groups = [g for g in [_without(self.model.parameters(), *aux.values()), *aux.values()] if g]
        groups = [{"params": list(self.model.parameters())}]
        if c.danger_learning_rate and "danger" in aux:  # the first group's rate is annealed, not this one's
            groups = [{"params": _without(self.model.parameters(), aux["danger"])},
                      {"params": aux["danger"], "lr": c.danger_learning_rate}]
        self.optimizer = torch.optim.Adam(groups, lr=c.learning_rate, eps=1e-5)
        self.pool: list[ActorCritic] = []
        self.baselines = {name: make_agent(name, seed=c.seed + i) for i, name in
                          enumerate(("knock_early", "gin_hunter", "random"))}
        self.kinds = ["self", "snapshot", "knock_early", "gin_hunter", "random"]
        mix = np.array([c.opponent_mix()[k] for k in self.kinds], np.float64)
        self.mix = mix / mix.sum()
        self.update, self.decisions, self.learner_decisions = 0, 0, 0
        self.last_eval: dict = {}
        self.opponent = np.zeros(c.num_envs, np.int64)  # index into self.kinds
        self.learner_seat = np.zeros(c.num_envs, np.int8)
        self.snapshot_index = np.zeros(c.num_envs, np.int64)
        self._assign_opponents(np.arange(c.num_envs))
        # A resumed run continues in its own directory unless checkpoint_dir is given again.
        self.run_dir = Path(c.checkpoint_dir) / c.run_name
        if step_dir is not None and "checkpoint_dir" not in resume_overrides:
            self.run_dir = step_dir.parent
        if step_dir is not None:
            self._restore(step_dir)
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(Path(c.log_dir) / c.run_name))
        if resume_dir is None:
            table = "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(c).items())
            self.writer.add_text("hyperparameters", f"|param|value|\n|-|-|\n{table}")

    def _new_model(self) -> ActorCritic:
        c = self.config
        return ActorCritic(tuple(c.hidden_sizes), c.activation, c.privileged_critic, c.architecture,
                           c.critic_lookahead).to(self.device)

    def network_spec(self) -> dict:
        """The network's shape, as ``policy.json`` records it."""
        c = self.config
        return {"hidden_sizes": list(c.hidden_sizes), "activation": c.activation,
                "privileged_critic": c.privileged_critic, "architecture": c.architecture,
                "critic_lookahead": c.critic_lookahead}

    CRITIC_ONLY = ("privileged_critic", "critic_lookahead")
    #: ``init_from`` may add these to a loaded actor (from, to): the new parts start
    #: untrained and the head's weights on their card features at 0.
    ACTOR_GROWS = (("belief", "danger"),)

    def _load_initial_weights(self, path) -> None:
        """``init_from``: the network weights of another run's checkpoint (not its optimizer,
        counters or opponents: the run starts at update 0). The actor must match, but a
        ``belief`` actor may be loaded into a ``danger`` one: its danger net starts fresh,
        and the card head's weights on the danger feature at 0, so the policy starts
        exactly as it was. If the critic's inputs differ (``privileged_critic``,
        ``critic_lookahead``), the critic is kept when it only gains lookahead inputs
        (their weights start at 0, so its values start as they were), and starts fresh
        otherwise (give it ``critic_warmup_updates``)."""
        policy = load_policy(path)  # clear errors for a missing or broken checkpoint
        theirs = {"critic_lookahead": 0, **policy.meta["network"]}
        differ = {k: (theirs.get(k), v) for k, v in self.network_spec().items() if theirs.get(k) != v}
        actor_differ = {k: d for k, d in differ.items() if k not in self.CRITIC_ONLY}
        grows = set(actor_differ) == {"architecture"} and actor_differ["architecture"] in self.ACTOR_GROWS
        if actor_differ and not grows:
            raise ValueError(f"init_from {path}: its actor does not match this config's: "
                             + "; ".join(f"{k} is {a!r} there, {b!r} here" for k, (a, b) in actor_differ.items())
                             + " (only the critic's inputs, privileged_critic and critic_lookahead, may differ, "
                             "and a belief actor may be loaded into a danger one)")
        if not differ:
            self.model.load_state_dict(policy.model.state_dict())
            return
        notes = []
        if grows:
            _grow_into(self.model.actor, policy.model.actor.state_dict(), fresh="danger_net.",
                       widened=("plane_weights.weight", "plane_weights.bias"))
            notes.append("the actor is loaded, its danger net starts fresh and the head's weights on it at 0")
        else:
            self.model.actor.load_state_dict(policy.model.actor.state_dict())
            notes.append("the actor is loaded")
        if not set(differ) & set(self.CRITIC_ONLY):
            self.model.critic.load_state_dict(policy.model.critic.state_dict())
        elif "privileged_critic" not in differ and theirs["critic_lookahead"] == 0:
            # The inputs are [observation, opponent's hand, lookahead]: the old critic's are a
            # prefix of the new one's, so it is kept and the new inputs start at weight 0.
            _grow_into(self.model.critic, policy.model.critic.state_dict(), widened=("0.weight",), rows=False)
            notes.append("the critic is kept, its new lookahead inputs start at weight 0")
        else:
            notes.append("the critic starts fresh")
        if not self.quiet:
            print(f"init_from {path}: " + "; ".join(notes) + " ("
                  + "; ".join(f"{k} {a!r} there, {b!r} here" for k, (a, b) in differ.items()) + ")")

    @property
    def _aux_coef(self) -> dict:
        return {"belief": self.config.belief_coef, "danger": self.config.danger_coef}

    def _joins(self, opponent_hand: np.ndarray) -> torch.Tensor | None:
        """The danger net's target, ``melds.joins_meld`` of the opponent's hands (``None``
        without a danger net)."""
        if not self.model.has_danger:
            return None
        return self._tensor(melds.joins_meld(opponent_hand > 0.5).astype(np.float32))

    def _tensor(self, array) -> torch.Tensor:
        """A numpy batch as a tensor on the network's device."""
        return torch.from_numpy(array).to(self.device)

    @property
    def num_updates(self) -> int:
        return max(1, self.config.total_decisions // self.config.batch_size)

    def _assign_opponents(self, games) -> None:
        """Draw who sits opposite the learner in the given games, and the learner's seat."""
        if not len(games):
            return
        mix = self.mix.copy()
        if not self.pool:  # no snapshot yet: play itself instead
            mix[0] += mix[1]
            mix[1] = 0.0
        self.opponent[games] = self.rng.choice(len(self.kinds), size=len(games), p=mix)
        self.learner_seat[games] = self.rng.integers(0, 2, size=len(games))
        self.snapshot_index[games] = self.rng.integers(0, max(len(self.pool), 1), size=len(games))

    # ------------------------------------------------------------------ rollout
    def rollout(self):
        c, env = self.config, self.env
        T, N = c.num_steps, c.num_envs
        obs_buf = np.zeros((T, N, OBS_SIZE), np.float32)
        mask_buf = np.zeros((T, N, NUM_ACTIONS), bool)
        opp_buf = np.zeros((T, N, 52), np.float32)
        look_buf = np.zeros((T, N, lookahead_size(c.critic_lookahead)), np.float32)
        actions = np.zeros((T, N), np.int64)
        logprobs = np.zeros((T, N), np.float32)
        values = np.zeros((T, N), np.float32)
        rewards = np.zeros((T, N), np.float32)
        dones = np.zeros((T, N), bool)
        valid = np.zeros((T, N), bool)
        next_t = np.full((T, N), -1, np.int64)
        boot = np.zeros((T, N), np.float32)
        pending = np.full((N, 2), -1, np.int64)  # last decision of each seat awaiting its successor
        rows = np.arange(N)
        state = env.state
        obs, mask = env.observe(), core.legal_action_mask(state)
        for t in range(T):
            mover = state.current.astype(np.int64)
            learner = (self.opponent == 0) | (mover == self.learner_seat)
            act = np.zeros(N, np.int64)
            L = np.flatnonzero(learner)
            obs_buf[t], mask_buf[t] = obs, mask
            opp_buf[t] = state._hands[rows, 1 - mover]
            if c.critic_lookahead:
                look_buf[t, L] = self._lookahead(state, L, mover[L])
            with torch.no_grad():
                a, lp, _, v = self.model.get_action_and_value(
                    self._tensor(obs[L]), self._tensor(mask[L]), **self._privileged(opp_buf[t, L], look_buf[t, L]))
            act[L], logprobs[t, L], values[t, L] = a.cpu().numpy(), lp.cpu().numpy(), v.cpu().numpy()
            valid[t, L] = True
            prev = pending[L, mover[L]]
            linked = prev >= 0
            next_t[prev[linked], L[linked]] = t
            pending[L, mover[L]] = t
            self._opponents_act(np.flatnonzero(~learner), obs, mask, act)
            actions[t] = act
            fed = np.flatnonzero((state.phase == core.DRAW) & (act == TAKE_DISCARD)) if c.feed_penalty else ()
            out = env.step(act)
            if len(fed):  # the mover took the other seat's discard
                out.rewards[fed, 1 - mover[fed]] -= c.feed_penalty * c.reward_scale
            self.decisions += N
            self.learner_decisions += L.size
            for seat in (0, 1):
                has = np.flatnonzero(pending[:, seat] >= 0)
                rewards[pending[has, seat], has] += out.rewards[has, seat]
            ended = np.flatnonzero(out.terminated | out.truncated)
            for seat in (0, 1):
                has = ended[pending[ended, seat] >= 0]
                dones[pending[has, seat], has] = True
            pending[ended] = -1
            self._assign_opponents(ended)
            obs, mask = out.obs, out.action_mask
        # Decisions still waiting for their successor: bootstrap from the seat's view now.
        for seat in (0, 1):
            has = np.flatnonzero(pending[:, seat] >= 0)
            if has.size:
                with torch.no_grad():
                    view = self._tensor(observe(state, seat)[has])
                    boot[pending[has, seat], has] = self.model.get_value(view, **self._privileged(
                        state._hands[has, 1 - seat].astype(np.float32),
                        self._lookahead(state, has, np.full(has.size, seat)))).cpu().numpy()
        return dict(obs=obs_buf, mask=mask_buf, opp=opp_buf, lookahead=look_buf, actions=actions, logprobs=logprobs,
                    values=values, rewards=rewards, dones=dones, valid=valid, next_t=next_t, boot=boot)

    def _privileged(self, opponent_hand: np.ndarray, lookahead: np.ndarray) -> dict:
        """The critic's training-only inputs, as keyword arguments of the network's calls."""
        c = self.config
        return {"opponent_hand": self._tensor(opponent_hand) if c.privileged_critic else None,
                "lookahead": self._tensor(lookahead) if c.critic_lookahead else None}

    def _lookahead(self, state, games: np.ndarray, me: np.ndarray) -> np.ndarray:
        """``lookahead_features`` of the given games, seen by player ``me`` (empty without
        ``critic_lookahead``)."""
        k = self.config.critic_lookahead
        if not k:
            return np.zeros((len(games), 0), np.float32)
        return state_lookahead(state, games, me, k)

    def _opponents_act(self, games, obs, mask, act) -> None:
        for k, kind in enumerate(self.kinds):
            idx = games[self.opponent[games] == k]
            if not idx.size or kind == "self":
                continue
            if kind == "snapshot":
                for s in np.unique(self.snapshot_index[idx]):
                    sub = idx[self.snapshot_index[idx] == s]
                    with torch.no_grad():  # the snapshot's actor only: its critic is not needed
                        dist = self.pool[s].action_dist(self._tensor(obs[sub]), self._tensor(mask[sub]))
                        act[sub] = dist.sample().cpu().numpy()
            else:
                act[idx] = self.baselines[kind].act(obs[idx], mask[idx])

    # ----------------------------------------------------------------------- GAE
    def advantages(self, b):
        c = self.config
        T, N = b["rewards"].shape
        adv = np.zeros((T, N), np.float32)
        cols = np.arange(N)
        for t in reversed(range(T)):
            nt = b["next_t"][t]
            has_next = nt >= 0
            safe = np.where(has_next, nt, 0)
            next_value = np.where(b["dones"][t], 0.0,
                                  np.where(has_next, b["values"][safe, cols], b["boot"][t]))
            next_adv = np.where(b["dones"][t] | ~has_next, 0.0, adv[safe, cols])
            delta = b["rewards"][t] + c.gamma * next_value - b["values"][t]
            adv[t] = np.where(b["valid"][t], delta + c.gamma * c.gae_lambda * next_adv, 0.0)
        return adv, adv + b["values"]

    # ---------------------------------------------------------------- PPO update
    def ppo_update(self, b, adv, returns, frac_done: float) -> dict:
        c = self.config
        v = b["valid"]
        b_obs = self._tensor(b["obs"][v])
        b_mask = self._tensor(b["mask"][v])
        b_opp = self._tensor(b["opp"][v])
        b_joins = self._joins(b["opp"][v])
        b_look = self._tensor(b["lookahead"][v]) if c.critic_lookahead else None
        b_actions = self._tensor(b["actions"][v])
        b_logprobs = self._tensor(b["logprobs"][v])
        b_adv = self._tensor(adv[v])
        b_returns = self._tensor(returns[v])
        b_values = self._tensor(b["values"][v])
        n = len(b_obs)
        ent_coef = c.ent_coef + (c.ent_coef_final - c.ent_coef) * frac_done
        clipfracs, stats = [], {}
        for _ in range(c.update_epochs):
            for part in np.array_split(self.rng.permutation(n), c.num_minibatches):
                mb = self._tensor(part)
                newlogprob, entropy, newvalue, aux = self.model.evaluate_actions(
                    b_obs[mb], b_mask[mb], b_actions[mb], b_opp[mb] if c.privileged_critic else None,
                    b_look[mb] if c.critic_lookahead else None)
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > c.clip_coef).float().mean().item())
                mb_adv = b_adv[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio,
                                    -mb_adv * torch.clamp(ratio, 1 - c.clip_coef, 1 + c.clip_coef)).mean()
                if c.clip_vloss:
                    v_unclipped = (newvalue - b_returns[mb]) ** 2
                    v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -c.clip_coef, c.clip_coef)
                    v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - b_returns[mb]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - ent_coef * entropy_loss + v_loss * c.vf_coef
                if self.update < c.critic_warmup_updates:
                    loss = v_loss * c.vf_coef  # the critic catches up with the warm-started actor
                for name, aux_loss in aux_losses(aux, b_obs[mb], b_opp[mb],
                                                 None if b_joins is None else b_joins[mb]).items():
                    loss = loss + self._aux_coef[name] * aux_loss
                    stats[f"losses/{name}_cross_entropy"] = aux_loss.item()
                self.optimizer.zero_grad()
                loss.backward()
                self._clip_gradients()
                self.optimizer.step()
            if c.target_kl and approx_kl > c.target_kl:
                break
        y_pred, y_true = b["values"][v], returns[v]
        var_y = np.var(y_true)
        stats.update({
            "losses/value_loss": v_loss.item(), "losses/policy_loss": pg_loss.item(),
            "losses/entropy": entropy_loss.item(), "losses/old_approx_kl": old_approx_kl.item(),
            "losses/approx_kl": approx_kl.item(), "losses/clipfrac": float(np.mean(clipfracs)),
            "losses/explained_variance": float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y),
            "charts/entropy_coef": ent_coef,
        })
        return stats

    def _clip_gradients(self) -> None:
        """Clip the gradient norm of the policy and critic, and apart from them the
        belief net's and the danger net's, so that no loss scales another's steps down."""
        for group in self.clip_groups:
            torch.nn.utils.clip_grad_norm_(group, self.config.max_grad_norm)

    # ------------------------------------------------------------ warm start
    def behavior_clone(self) -> None:
        """Imitate ``bc_teacher`` playing both seats: cross-entropy of the masked logits
        against the teacher's moves, on fresh games, each decision seen once."""
        c = self.config
        teacher = make_agent(c.bc_teacher, seed=c.seed)
        env = VectorEnv(c.num_envs, self.rules, seed=c.seed + 1_000_003, mode=c.mode)
        obs, mask, _ = env.reset()
        opt = torch.optim.Adam(self.model.actor.parameters(), lr=c.bc_learning_rate)
        chunk, seen, start = 16, 0, time.time()
        buf_obs, buf_mask, buf_act, buf_opp = [], [], [], []
        rows = np.arange(c.num_envs)
        while seen < c.bc_decisions:
            act = teacher.act(obs, mask)
            buf_obs.append(obs.copy())
            buf_mask.append(mask.copy())
            buf_act.append(act)
            buf_opp.append(env.state._hands[rows, 1 - env.state.current.astype(np.int64)].astype(np.float32))
            out = env.step(act)
            obs, mask = out.obs, out.action_mask
            if len(buf_obs) == chunk:
                x = self._tensor(np.concatenate(buf_obs))
                m = self._tensor(np.concatenate(buf_mask))
                y = self._tensor(np.concatenate(buf_act))
                opp_np = np.concatenate(buf_opp)
                opp, joins = self._tensor(opp_np), self._joins(opp_np)
                buf_obs, buf_mask, buf_act, buf_opp = [], [], [], []
                for part in np.array_split(self.rng.permutation(len(x)), c.num_minibatches):
                    idx = self._tensor(part)
                    raw, aux = self.model.actor_with_aux(x[idx])
                    logits = masked_logits(raw, m[idx])
                    loss = torch.nn.functional.cross_entropy(logits, y[idx])
                    # The belief and danger nets learn from the teacher's games too.
                    for name, aux_loss in aux_losses(aux, x[idx], opp[idx],
                                                     None if joins is None else joins[idx]).items():
                        loss = loss + self._aux_coef[name] * aux_loss
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                accuracy = (logits.argmax(-1) == y[idx]).float().mean().item()
                seen += len(x)
                self.writer.add_scalar("bc/loss", loss.item(), seen)
                self.writer.add_scalar("bc/accuracy", accuracy, seen)
                if not self.quiet:
                    print(f"imitating {c.bc_teacher}: {seen / 1e6:.2f}M decisions  loss {loss.item():.3f}  "
                          f"accuracy {accuracy:.3f}  {seen / (time.time() - start) / 1e3:.1f}k/s", flush=True)

    # ---------------------------------------------------------------- evaluation
    def evaluate(self) -> dict:
        c = self.config
        me = Policy(self.model, name="learner")
        out = {}
        for name in ("knock_early", "gin_hunter"):
            r = play(me, make_agent(name, seed=0), c.eval_matches, self.rules, seed=10_000 + self.update,
                     mode=c.eval_mode)
            out[name] = {"win_rate": r["win_rate_a"], "ci95": r["win_rate_a_ci95"],
                         "points_per_hand": r["points_per_hand_a"] - r["points_per_hand_b"],
                         "hand_win_rate": r["hands_won_a"] / max(r["hands"], 1), "games": r["games"]}
            self.writer.add_scalar(f"eval/{name}_win_rate", r["win_rate_a"], self.decisions)
            self.writer.add_scalar(f"eval/{name}_win_rate_ci_low", r["win_rate_a_ci95"][0], self.decisions)
            self.writer.add_scalar(f"eval/{name}_win_rate_ci_high", r["win_rate_a_ci95"][1], self.decisions)
            self.writer.add_scalar(f"eval/{name}_points_per_hand", out[name]["points_per_hand"], self.decisions)
        self.last_eval = {"update": self.update, "decisions": self.decisions, **out}
        return out

    # ------------------------------------------------------------- checkpointing
    def meta(self) -> dict:
        c = self.config
        return {"network": self.network_spec(),
                "rules": self.rules.to_dict(), "config": dataclasses.asdict(c), "update": self.update,
                "decisions": self.decisions, "evaluation": self.last_eval}

    def checkpoint(self) -> Path:
        tensors = {f"opt.{k}": v for k, v in _flatten_optimizer(self.optimizer).items()}
        tensors["rng.torch"] = torch.get_rng_state()
        if self.device.type == "cuda":
            tensors["rng.cuda"] = torch.cuda.get_rng_state(self.device)
        for k, model in enumerate(self.pool):
            for name, value in model.state_dict().items():
                tensors[f"pool.{k}.{name}"] = value
        for f in dataclasses.fields(self.env.state):
            value = getattr(self.env.state, f.name)
            if isinstance(value, np.ndarray):
                tensors[f"env.{f.name}"] = torch.from_numpy(np.ascontiguousarray(value).view(
                    np.int64 if value.dtype == np.uint64 else value.dtype).copy())
        for name in ("opponent", "learner_seat", "snapshot_index"):
            tensors[f"trainer.{name}"] = torch.from_numpy(getattr(self, name).copy())
        trainer_meta = {"update": self.update, "decisions": self.decisions, "learner_decisions": self.learner_decisions,
                        "numpy_rng": _jsonable(self.rng.bit_generator.state), "pool_size": len(self.pool),
                        "optimizer": _optimizer_meta(self.optimizer), "config": dataclasses.asdict(self.config)}
        return save_checkpoint(self.run_dir, self.update, self.model, self.meta(), tensors, trainer_meta)

    def _restore(self, step_dir: Path) -> None:
        meta = read_meta(step_dir)
        tmeta = json.loads((step_dir / "trainer.json").read_text())
        self.model.load_state_dict(load_tensors(step_dir / "policy.safetensors"))
        t = load_tensors(step_dir / "trainer.safetensors")
        _restore_optimizer(self.optimizer, {k[4:]: v for k, v in t.items() if k.startswith("opt.")}, tmeta["optimizer"])
        self.pool = []
        for k in range(tmeta["pool_size"]):
            m = self._new_model()
            m.load_state_dict({n[len(f"pool.{k}."):]: v for n, v in t.items() if n.startswith(f"pool.{k}.")})
            self.pool.append(m)
        fields = {}
        for f in dataclasses.fields(self.env.state):
            key = f"env.{f.name}"
            if key in t:
                old = getattr(self.env.state, f.name)
                fields[f.name] = t[key].numpy().view(old.dtype).reshape(old.shape).copy()
        self.env.state = dataclasses.replace(self.env.state, **fields)
        self.env.state.legal.flags.writeable = False
        for name in ("opponent", "learner_seat", "snapshot_index"):
            setattr(self, name, t[f"trainer.{name}"].numpy().copy())
        self.rng.bit_generator.state = tmeta["numpy_rng"]
        self.update, self.decisions, self.learner_decisions = tmeta["update"], tmeta["decisions"], tmeta["learner_decisions"]
        self.last_eval = meta.get("evaluation", {})
        torch.set_rng_state(t["rng.torch"])  # last: building the pool's networks draws from it
        if self.device.type == "cuda" and "rng.cuda" in t:
            torch.cuda.set_rng_state(t["rng.cuda"], self.device)

    # ------------------------------------------------------------------ the loop
    def train(self, stop_after: int | None = None, time_limit: float | None = None) -> Path:
        """Train to the end, or for ``stop_after`` more updates, or until the first update
        that ends ``time_limit`` seconds or more after the start; then checkpoint (a run
        stopped early continues with ``--resume``)."""
        c = self.config
        start, start_decisions = time.time(), self.decisions
        path = None
        end = self.num_updates if stop_after is None else min(self.num_updates, self.update + stop_after)
        if self.update == 0 and c.bc_teacher and c.bc_decisions:
            self.behavior_clone()
            if c.eval_every:
                ev = self.evaluate()
                if not self.quiet:
                    print("after imitation: " + "  ".join(f"vs {k} {v['win_rate']:.3f}" for k, v in ev.items()))
        while self.update < end:
            frac = self.update / self.num_updates
            if c.anneal_lr:
                self.optimizer.param_groups[0]["lr"] = c.learning_rate * (1.0 - frac)
            t0 = time.time()
            batch = self.rollout()
            t1 = time.time()
            adv, returns = self.advantages(batch)
            stats = self.ppo_update(batch, adv, returns, frac)
            t2 = time.time()
            self.update += 1
            if self.update % c.snapshot_every == 0:
                snap = self._new_model()
                snap.load_state_dict(self.model.state_dict())
                self.pool = (self.pool + [snap])[-c.pool_size:]
            # ------------------------------------------------------------ logging
            sps = (self.decisions - start_decisions) / max(time.time() - start, 1e-9)
            stats.update({"charts/learning_rate": self.optimizer.param_groups[0]["lr"],
                          "charts/decisions_per_second": sps,
                          "charts/rollout_seconds": t1 - t0, "charts/update_seconds": t2 - t1,
                          "charts/mean_reward_per_decision": float(batch["rewards"][batch["valid"]].mean())})
            for k, v in stats.items():
                self.writer.add_scalar(k, v, self.decisions)
            line = (f"update {self.update}/{self.num_updates}  decisions {self.decisions / 1e6:.2f}M  "
                    f"{sps / 1e3:.1f}k dec/s  entropy {stats['losses/entropy']:.2f}  "
                    f"value loss {stats['losses/value_loss']:.4f}")
            # --------------------------------------------------------- evaluation
            if c.eval_every and (self.update % c.eval_every == 0 or self.update == self.num_updates):
                ev = self.evaluate()
                line += "  " + "  ".join(f"vs {k} {v['win_rate']:.3f}" for k, v in ev.items())
            if not self.quiet:
                print(line, flush=True)
            # ------------------------------------------------------ checkpointing
            out_of_time = time_limit is not None and time.time() - start >= time_limit
            if self.update % c.checkpoint_every == 0 or self.update == end or out_of_time:
                path = self.checkpoint()
            if out_of_time:
                if not self.quiet:
                    print(f"stopping after {time_limit / 60:g} minutes, at update {self.update}; "
                          f"continue with --resume {self.run_dir}", flush=True)
                break
        self.writer.close()
        return path if path is not None else self.checkpoint()


def _saved_config(step_dir: Path, given: Config, overrides: tuple) -> Config:
    """The config saved with a checkpoint, with ``overrides`` (and where logs and
    checkpoints go) taken from ``given``."""
    path = step_dir / "trainer.json"
    if not path.is_file():
        raise ValueError(f"{step_dir} holds a policy only, not a resumable training state")
    try:
        saved = dict(json.loads(path.read_text())["config"])
    except (json.JSONDecodeError, KeyError) as e:
        raise ValueError(f"{path} is corrupted: {e}") from None
    for key in ("log_dir", "checkpoint_dir", "torch_threads", "device") + overrides:
        saved[key] = getattr(given, key)
    return Config(**saved)


def _flatten_optimizer(opt) -> dict:
    out = {}
    for pid, st in opt.state_dict()["state"].items():
        for k, v in st.items():
            out[f"{pid}.{k}"] = v if torch.is_tensor(v) else torch.tensor(v)
    return out


def _optimizer_meta(opt) -> dict:
    sd = opt.state_dict()
    return {"param_groups": sd["param_groups"], "state_keys": {str(p): sorted(st) for p, st in sd["state"].items()}}


def _restore_optimizer(opt, tensors: dict, meta: dict) -> None:
    state = {int(p): {k: tensors[f"{p}.{k}"] for k in keys} for p, keys in meta["state_keys"].items()}
    opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (np.integer,)):
        return int(x)
    return x


def train(config: Config | None = None, resume=None, quiet: bool = False, **overrides) -> Path:
    """Train (as a function, for tests and notebooks); returns the last checkpoint."""
    config = config or make_config(overrides)
    return Trainer(config, resume_dir=resume, quiet=quiet).train()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default=None, help=f"YAML config (default {DEFAULT_CONFIG.relative_to(Path.cwd()) if DEFAULT_CONFIG.is_relative_to(Path.cwd()) else DEFAULT_CONFIG})")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    p.add_argument("--resume", default=None, help="continue the run in this checkpoint directory (its own "
                   "config; keys given with --set, e.g. total_decisions or learning_rate, replace the saved ones; "
                   "new checkpoints go to that directory unless checkpoint_dir is given)")
    p.add_argument("--stop-after-minutes", type=float, default=None, metavar="M",
                   help="checkpoint and stop after the first update that ends M minutes or more after the "
                   "start (continue later with --resume)")
    args = p.parse_args(argv)
    if args.stop_after_minutes is not None and args.stop_after_minutes < 0:
        p.error(f"--stop-after-minutes must be >= 0, got {args.stop_after_minutes}")
    try:
        if args.resume:
            config = make_config(sets=args.set)
        else:
            config = make_config(config_file=args.config or DEFAULT_CONFIG, sets=args.set)
    except ValueError as e:
        p.error(str(e))
    overrides = tuple(item.split("=", 1)[0].strip() for item in args.set)
    trainer = Trainer(config, resume_dir=args.resume, resume_overrides=overrides)
    print(f"run {trainer.config.run_name}: TensorBoard logs in {Path(trainer.config.log_dir) / trainer.config.run_name}, "
          f"checkpoints in {trainer.run_dir}", flush=True)
    limit = None if args.stop_after_minutes is None else args.stop_after_minutes * 60
    path = trainer.train(time_limit=limit)
    print(f"done: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
