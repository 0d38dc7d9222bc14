"""Self-play PPO on Ray RLlib over the batched engine: ``python -m agents.rllib [--config
YAML] [--set KEY=VALUE ...] [--init-from CHECKPOINT] [--num-env-runners K] [--address
ADDR] [--resume RUN] [--stop-after-minutes M]`` (the ``rllib`` extra).

The same config as ``train.py`` (``configs/*.yaml``, ``--set``), the same network and
the same checkpoints, trained by RLlib's PPO (its new API stack):

- **Env runners step the batch.** Each env runner steps one ``RLlibGinEnv``, a
  Gymnasium ``VectorEnv`` of ``num_envs`` games on the batched engine (RLlib's
  ``gym_env_vectorize_mode="vector_entry_point"``), the opponents batched inside it.
  Its observation is one flat row a game: the player's observation (``OBS_SIZE``), then
  its legal-action mask (108, as 0/1), then, where the critic is privileged or the actor
  has a belief net, the opponent's hand (52): training data for the critic and the
  belief net, which the actor never reads. Autoreset is Gymnasium's ``NEXT_STEP``
  (RLlib's): the step after an episode ends returns the next deal's first observation.
- **Opponents as in train.py.** Each episode draws its opponent by the config's
  ``opponents`` shares: ``self`` is the env runner's own copy of the learner (RLlib
  sends it the learner's weights after every update, as it does for sampling; in
  train.py both seats learn, here the copy's moves do not train), ``snapshot`` a pool of
  past learners (the driver sends each new snapshot to every env runner, every
  ``snapshot_every`` updates), the baselines and ``frozen``.
- **The project's network.** ``GinRLModule`` holds ``agents.training.network.ActorCritic``
  built from any ``NetworkSpec``; illegal logits are filled with -1e8 as in train.py, the
  belief net's cross-entropy joins PPO's loss (``GinPPOLearner``), the learning rate and
  entropy coefficient follow train.py's schedules, Adam as train.py's; the deadwood
  shaping (``deadwood_shaping``) is added to the env's rewards along the learner's
  decisions, as train.py adds it along each seat's. Gradients are
  clipped by their global norm (train.py clips the belief net's apart).
- **Checkpoints** are train.py's (``checkpoints/<run>/step_<n>/``, safetensors and JSON):
  ``load_policy``, the evaluator, the ONNX export, the terminal and the server load them
  as they are; ``--init-from`` starts from any checkpoint (``checkpoints/champion``);
  ``--resume`` continues a run from its weights, optimizer, counters and snapshot pool.
  RLlib's own sampling state (episodes in progress, env runners' random streams) is not
  saved: a resumed run deals fresh games, so it does not equal the uninterrupted run bit
  for bit, as train.py's resume does.

It runs on one machine with ``--num-env-runners K`` sampling processes (0: sample in the
driver), or on a Ray cluster: ``ray start --head`` on one machine, ``ray start
--address=HEAD:6379`` on the others, then ``--address auto`` (or ``RAY_ADDRESS``).
Decisions here are the learner's (the env steps RLlib samples); the opponents' moves are
played inside the env and not counted.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import signal
import sys
import time
from pathlib import Path

from agents.extras import require

require("rllib", "train", what="the RLlib trainer (python -m agents.rllib)", main=__name__ == "__main__")

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from gymnasium.vector import AutoresetMode, VectorEnv  # noqa: E402
from gymnasium.vector.utils import batch_space  # noqa: E402
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.apis import ValueFunctionAPI  # noqa: E402
from ray.rllib.core.rl_module.torch import TorchRLModule  # noqa: E402

from agents.training import opponents as O  # noqa: E402
from agents.training import warmstart  # noqa: E402
from agents.training.checkpoint import (  # noqa: E402
    CheckpointError,
    load_tensors,
    optimizer_meta,
    optimizer_tensors,
    prefixed,
    read_meta,
    read_training_meta,
    restore_optimizer,
    save_checkpoint,
)
from agents.training.config import Config, make_config  # noqa: E402
from agents.training.loop import knock_bonus  # noqa: E402
from agents.training.network import ActorCritic, NetworkSpec, belief_loss, knock_entropy, masked_logits  # noqa: E402
from agents.training.rollout import deadwood_potential  # noqa: E402
from agents.training.run import StopSignal, check_writable, evaluate, log_eval, plan_run, say, stopped  # noqa: E402
from ginenv import core  # noqa: E402
from ginenv.actions import NUM_ACTIONS  # noqa: E402
from ginenv.cards import NUM_CARDS  # noqa: E402
from ginenv.observation import OBS_SIZE, SCALAR, observe  # noqa: E402
from ginenv.rules import Rules  # noqa: E402
from ginenv.versus import Versus  # noqa: E402

MODULE = "default_policy"  # RLlib's single-agent module id
TRAINER = "rllib"  # trainer.json's ``trainer``
MASK_AT, HAND_AT = OBS_SIZE, OBS_SIZE + NUM_ACTIONS  # where the env's row holds the mask, the hand
CPU = torch.device("cpu")
DEFAULT_CONFIG = Path(__file__).resolve().parent.parent.parent / "configs" / "default.yaml"


def needs_hand(spec: NetworkSpec) -> bool:
    """The opponent's hand is in the env's rows: for a privileged critic or a belief net."""
    return spec.privileged_critic or spec.architecture == "belief"


def split(rows: torch.Tensor):
    """An env row batch -> ``(observation, mask, opponent hand or None)``."""
    hand = rows[:, HAND_AT:] if rows.shape[1] > HAND_AT else None
    return rows[:, :MASK_AT], rows[:, MASK_AT:HAND_AT] > 0.5, hand


# ---------------------------------------------------------------------------- the env
class _League(Versus):
    """``Versus`` with an opponent drawn per episode (``agents.training.opponents``)."""

    def __init__(self, c: Config, opponents: O.Opponents, rng: np.random.Generator):
        super().__init__("random", c.mode, "alternate", c.reward_scale, c.match_win_reward)
        self.opp, self.rng, self.current = opponents, rng, None

    def new_episodes(self, games) -> np.ndarray:
        O.assign(self.opp, games, self.rng)
        return self.opp.learner_seat[games].astype(np.int64)

    def opponent_act(self, games: np.ndarray) -> np.ndarray:
        if self.current is None and (self.opp.kind[games] == O.SELF).any():
            raise RuntimeError("the self opponent has no network: call attach_current on each env runner first")
        s = self.state
        acts = np.full(s.batch_size, core.SKIP, np.int64)
        O.act(self.opp, games, observe(s, 1 - self.seat), core.legal_action_mask(s), acts, CPU, self.current)
        return acts[games]


class RLlibGinEnv(VectorEnv):
    """``num_envs`` games of the learner against the config's opponent mix, as RLlib's
    env runners step them (see the module docstring). ``env_config``: ``config``, a
    train.py config as a dict, ``num_envs``, and ``torch_threads`` for its process."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, env_config: dict):
        self.c = c = Config(**env_config["config"])
        self.num_envs = n = int(env_config.get("num_envs", c.num_envs))
        torch.set_num_threads(int(env_config.get("torch_threads", c.torch_threads)))
        self.rules = Rules.preset(c.rules)
        self.network = c.network_spec()
        rng = np.random.default_rng(c.seed)
        self.league = _League(c, O.make_opponents(dataclasses.replace(c, num_envs=n), rng), rng)
        O.set_frozen(self.league.opp, O.load_frozen(c.frozen))
        size = HAND_AT + (NUM_CARDS if needs_hand(self.network) else 0)
        self.single_observation_space = gymnasium.spaces.Box(0.0, np.inf, (size,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self._hold = np.zeros(n, bool)
        self._seed = c.seed
        self.steps = 0  # calls of step, for the curious (which runner sampled)

    def attach_current(self, net: ActorCritic) -> None:
        """The ``self`` opponent plays with ``net`` (the env runner's module, whose weights
        RLlib keeps at the learner's)."""
        self.league.current = net

    def add_snapshot(self, weights: dict) -> None:
        """A past learner's weights join the snapshot pool (the oldest leaves past
        ``pool_size``)."""
        net = ActorCritic(self.network)
        net.load_state_dict(weights)
        O.add_snapshot(self.league.opp, net, self.c.pool_size, CPU)

    def pool_size(self) -> int:
        return len(self.league.opp.pool)

    def reset(self, *, seed=None, options=None):
        """Deal ``num_envs`` games: env runner k of a run seeded s deals from seed
        (s + k) * 2**32, its opponents drawn from a generator seeded s + k."""
        if seed is not None:
            self.league.rng = np.random.default_rng(seed)
            self._seed = seed
        state = core.init(self.num_envs, self.rules, self._seed << 32, mode=self.c.mode, auto_reset=True)
        self._seed += 1  # a later reset without a seed deals other games
        self.league.begin(state, 0)
        self._hold[:] = False
        rows = self._rows()
        self._phi = self._potential(rows)
        return rows, {}

    def step(self, actions):
        rewards, _ = self.league.play(np.asarray(actions).astype(np.int64), hold=self._hold)
        self.steps += 1
        terminated, truncated = np.zeros(self.num_envs, bool), np.zeros(self.num_envs, bool)
        for info in self.league.finished:
            (truncated if info["truncated"] else terminated)[info["game"]] = True
        rows = self._rows()
        if self.c.deadwood_shaping:  # train.py's shaping, along the learner's decisions
            phi = self._potential(rows)
            after = np.where(terminated, 0.0, self.c.gamma * phi)  # a truncation bootstraps
            rewards = rewards + np.where(self._hold, 0.0, after - self._phi)  # held: a new deal
            self._phi = phi
        self._hold = terminated | truncated  # NEXT_STEP: the next step starts their new episode
        return rows, rewards.astype(np.float32), terminated, truncated, {}

    def _potential(self, rows: np.ndarray) -> np.ndarray:
        return deadwood_potential(rows[:, SCALAR["own_deadwood"]], self.c.deadwood_shaping, self.c.reward_scale)

    def _rows(self) -> np.ndarray:
        lg = self.league
        parts = [lg.observe(), lg.mask().astype(np.float32)]
        if needs_hand(self.network):
            parts.append(lg.state.hands_of(1 - lg.seat).astype(np.float32))
        return np.concatenate(parts, 1)


# ------------------------------------------------------------------- module, learner
class GinRLModule(TorchRLModule, ValueFunctionAPI):
    """``ActorCritic`` (``model_config["network"]``, a ``NetworkSpec`` as a dict) as an
    RLModule: the actor reads the observation alone, the critic the hand too where it is
    privileged."""

    def setup(self):
        self.net = ActorCritic(NetworkSpec.from_dict(self.model_config["network"]))

    def _forward(self, batch, **kwargs):
        obs, mask, _ = split(batch[Columns.OBS])
        return {Columns.ACTION_DIST_INPUTS: masked_logits(self.net.actor(obs), mask)}

    def _forward_train(self, batch, **kwargs):
        obs, mask, _ = split(batch[Columns.OBS])
        logits, aux = self.net.actor_with_aux(obs)
        out = {Columns.ACTION_DIST_INPUTS: masked_logits(logits, mask)}
        if "belief" in aux:
            out["belief_logits"] = aux["belief"]
        return out

    def compute_values(self, batch, embeddings=None):
        obs, _, hand = split(batch[Columns.OBS])
        return self.net.get_value(obs, hand if self.net.privileged_critic else None)


class GinPPOLearner(PPOTorchLearner):
    """RLlib's PPO loss plus the belief net's cross-entropy; Adam as train.py's; the
    learning rate and entropy coefficient the run sets each update (``set_schedule``,
    train.py's schedules, which go on where a resumed run left them)."""

    belief_coef = 1.0
    knock_coef = 0.0

    def set_schedule(self, lr: float, ent_coef: float, belief_coef: float, knock_coef: float = 0.0) -> None:
        from ray.rllib.utils.schedules.scheduler import Scheduler

        self.belief_coef, self.knock_coef = belief_coef, knock_coef
        for module_id in self.module.keys():
            self.entropy_coeff_schedulers_per_module[module_id] = Scheduler(ent_coef, framework="torch")
            for _, opt in self.get_optimizers_for_module(module_id):
                self._optimizer_lr_schedules[opt] = Scheduler(lr, framework="torch")
                for g in opt.param_groups:
                    g["lr"] = lr

    def configure_optimizers_for_module(self, module_id, config=None):
        params = self.get_parameters(self._module[module_id])
        opt = torch.optim.Adam(params, lr=config.lr, eps=1e-5)
        self.register_optimizer(module_id=module_id, optimizer=opt, params=params, lr_or_lr_schedule=config.lr)

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        loss = super().compute_loss_for_module(module_id=module_id, config=config, batch=batch, fwd_out=fwd_out)
        rows, logits = batch[Columns.OBS], fwd_out[Columns.ACTION_DIST_INPUTS]
        belief = fwd_out.get("belief_logits")
        keep = batch.get(Columns.LOSS_MASK)
        if keep is not None:
            rows, logits = rows[keep], logits[keep]
            belief = None if belief is None else belief[keep]
        obs, mask, hand = split(rows)
        if self.knock_coef > 0:  # train.py's knock bonus, per decision of the minibatch
            k_ent, k_rows = knock_entropy(logits, mask)
            if k_rows.any():
                loss = loss - self.knock_coef * k_ent.sum() / len(rows)
                self.metrics.log_value((module_id, "entropy_knock"), k_ent.mean().item(), window=1)
        if belief is None:
            return loss
        b_loss = belief_loss(belief, obs, hand)
        self.metrics.log_value((module_id, "belief_cross_entropy"), b_loss.item(), window=1)
        return loss + self.belief_coef * b_loss


def ppo_config(c: Config, num_env_runners: int = 0, cpus_per_runner: float = 1.0, runner_resources=None):
    """RLlib's PPOConfig for train.py's config ``c``: one update a ``batch_size`` of
    learner decisions, its minibatches, epochs, discount, clip and coefficients."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    if c.pfsp or c.exploiter_every or c.league_exploiter_every:
        raise ValueError(
            "pfsp, exploiter_every and league_exploiter_every are train.py's league: the RLlib trainer "
            "draws opponents by the fixed shares (set them to 0)"
        )
    if c.players != 2 or c.deadwood_aux_coef or c.opponent_deadwood_shaping or c.undercut_penalty:
        raise ValueError(
            "players, deadwood_aux_coef, opponent_deadwood_shaping and undercut_penalty are train.py's: "
            "the RLlib trainer pays two-player hands by their score, has no deadwood head and shapes by the "
            f"own deadwood only (got players={c.players}, deadwood_aux_coef={c.deadwood_aux_coef}, "
            f"opponent_deadwood_shaping={c.opponent_deadwood_shaping}, undercut_penalty={c.undercut_penalty})"
        )
    batch = c.batch_size
    # An env runner of its own process uses the cores Ray gives it; sampling in the
    # driver, the run's torch_threads.
    threads = max(1, int(cpus_per_runner)) if num_env_runners else c.torch_threads
    return (
        PPOConfig()
        .environment(
            env=RLlibGinEnv,
            env_config={"config": dataclasses.asdict(c), "torch_threads": threads},
            disable_env_checking=True,
            normalize_actions=False,
            clip_actions=False,
        )
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=c.num_envs,
            gym_env_vectorize_mode="vector_entry_point",
            rollout_fragment_length="auto",
            num_cpus_per_env_runner=cpus_per_runner,
            custom_resources_per_env_runner=runner_resources or {},
        )
        .rl_module(
            rl_module_spec=RLModuleSpec(module_class=GinRLModule, model_config={"network": c.network_spec().to_dict()})
        )
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=max(2, batch // c.num_minibatches),
            num_epochs=c.update_epochs,
            lr=c.learning_rate,
            gamma=c.gamma,
            lambda_=c.gae_lambda,
            clip_param=c.clip_coef,
            vf_clip_param=1e6,
            vf_loss_coeff=c.vf_coef,
            entropy_coeff=c.ent_coef,
            use_kl_loss=False,
            grad_clip=c.max_grad_norm,
            grad_clip_by="global_norm",
        )
        .learners(learner_class=GinPPOLearner)
        .debugging(seed=c.seed, log_level="ERROR")
    )


# ------------------------------------------------------------- driver-side helpers
def on_learners(algo, func) -> list:
    """``func(learner)`` on every learner (a learner's error raised here)."""
    return [r.get() for r in algo.learner_group.foreach_learner(func)]


def learner_weights(algo) -> dict:
    """The learner's network weights (CPU tensors)."""
    return on_learners(
        algo, lambda lr: {k: v.detach().cpu().clone() for k, v in lr.module[MODULE].net.state_dict().items()}
    )[0]


def on_env_runners(algo, func) -> list:
    """``func(env_runner)`` on every env runner that steps an env (the driver's own one
    too when it samples); returns their results."""
    return [
        x
        for x in algo.env_runner_group.foreach_env_runner(
            lambda r: func(r) if getattr(r, "env", None) is not None else None, local_env_runner=True
        )
        if x is not None
    ]


def push_weights(algo, weights: dict) -> None:
    """The learner's weights into the learner and every env runner's module."""

    def set_learner(lr):
        lr.module[MODULE].net.load_state_dict(weights)

    on_learners(algo, set_learner)
    on_env_runners(algo, lambda r: r.module.net.load_state_dict(weights) or True)


def attach_current(algo) -> None:
    on_env_runners(algo, lambda r: r.env.unwrapped.attach_current(r.module.net) or True)


def push_snapshot(algo, weights: dict) -> float:
    """A snapshot joins every env runner's pool; returns the seconds it took."""
    t = time.perf_counter()
    on_env_runners(algo, lambda r: r.env.unwrapped.add_snapshot(weights) or True)
    return time.perf_counter() - t


def optimizer_state(algo) -> tuple[dict, dict]:
    def get(lr):
        opt = lr.get_optimizer(module_id=MODULE)
        return optimizer_tensors(opt), optimizer_meta(opt)

    return on_learners(algo, get)[0]


def restore_optimizer_state(algo, tensors: dict, meta: dict) -> None:
    on_learners(algo, lambda lr: restore_optimizer(lr.get_optimizer(module_id=MODULE), tensors, meta))


def set_schedule(algo, c: Config, update: int) -> None:
    """train.py's schedules at ``update``: the learning rate annealed to 0, the entropy
    coefficient from ``ent_coef`` to ``ent_coef_final``, the knock bonus (``knock_bonus``)."""
    frac = update / c.num_updates
    lr = c.learning_rate * (1.0 - frac) if c.anneal_lr else c.learning_rate
    ent = c.ent_coef + (c.ent_coef_final - c.ent_coef) * frac
    knock = knock_bonus(c, update)
    on_learners(algo, lambda learner: learner.set_schedule(lr, ent, c.belief_coef, knock))


# ----------------------------------------------------------------------- the run
@dataclasses.dataclass
class RLlibRun:
    c: Config
    run_dir: Path
    algo: object
    model: ActorCritic  # the driver's copy of the learner's network (checkpoints, evaluation)
    rules: Rules
    pool: list = dataclasses.field(default_factory=list)  # snapshot weights, oldest first
    progress: dict = dataclasses.field(default_factory=lambda: {"update": 0, "decisions": 0, "learner_decisions": 0})
    last_eval: dict = dataclasses.field(default_factory=dict)
    frozen: list = dataclasses.field(default_factory=list)  # the frozen checkpoints' networks
    writer: object = None  # TensorBoard (what run.log_eval writes to, as for train.py's Run)


def save(run: RLlibRun) -> Path:
    c = run.c
    run.model.load_state_dict(learner_weights(run.algo))
    tensors, opt_meta = optimizer_state(run.algo)
    tensors = dict(tensors)
    tensors["rng.torch"] = torch.get_rng_state()
    for k, snap in enumerate(run.pool):
        tensors.update({f"pool.{k}.{name}": v for name, v in snap.items()})
    config = dataclasses.asdict(c)
    meta = {
        "network": c.network_spec().to_dict(),
        "rules": run.rules.to_dict(),
        "config": config,
        "update": run.progress["update"],
        "decisions": run.progress["decisions"],
        "evaluation": run.last_eval,
        "trainer": TRAINER,
    }
    trainer_meta = {
        **run.progress,
        "trainer": TRAINER,
        "numpy_rng": None,
        "pool_size": len(run.pool),
        "optimizer": opt_meta,
        "config": config,
    }
    return save_checkpoint(run.run_dir, run.progress["update"], run.model, meta, tensors, trainer_meta)


def restore(run: RLlibRun, step_dir: Path) -> None:
    """What ``save`` wrote: the weights (learner and env runners), the optimizer, the
    counters, the snapshot pool."""
    tmeta = read_training_meta(step_dir, TRAINER)
    meta = read_meta(step_dir)
    run.model.load_state_dict(load_tensors(step_dir / "policy.safetensors", meta))
    t = load_tensors(step_dir / "trainer.safetensors", tmeta)
    push_weights(run.algo, run.model.state_dict())
    restore_optimizer_state(run.algo, t, tmeta["optimizer"])
    run.pool = [prefixed(t, f"pool.{k}.") for k in range(tmeta["pool_size"])]
    for snap in run.pool:
        push_snapshot(run.algo, snap)
    torch.set_rng_state(t["rng.torch"])
    run.progress.update({k: tmeta[k] for k in ("update", "decisions", "learner_decisions")})
    run.last_eval = meta.get("evaluation", {})


def build(
    c: Config, run_dir: Path, step_dir, num_env_runners=0, cpus_per_runner=1.0, runner_resources=None, quiet=False
):
    torch.set_num_threads(c.torch_threads)
    torch.manual_seed(c.seed)
    algo = ppo_config(c, num_env_runners, cpus_per_runner, runner_resources).build_algo()
    run = RLlibRun(c, run_dir, algo, ActorCritic(c.network_spec()), Rules.preset(c.rules))
    run.frozen = O.load_frozen(c.frozen)
    attach_current(algo)
    if step_dir is not None:
        restore(run, step_dir)
    else:
        run.model.load_state_dict(learner_weights(algo))
        if c.init_from:
            warmstart.load_initial_weights(run.model, c.init_from, quiet)
            push_weights(algo, run.model.state_dict())
    return run


def _stat(result: dict, *keys, default=float("nan")):
    for k in keys:
        if not isinstance(result, dict) or k not in result:
            return default
        result = result[k]
    return float(result)


def train_rllib(
    config: Config | None = None,
    resume=None,
    resume_overrides=(),
    num_env_runners: int = 0,
    cpus_per_runner: float = 1.0,
    runner_resources=None,
    stop_after: int | None = None,
    time_limit: float | None = None,
    quiet: bool = False,
) -> Path:
    """train.py's ``train`` on RLlib: to the end, or ``stop_after`` more updates, or the
    first update ending ``time_limit`` seconds after the start, or SIGINT / SIGTERM;
    then a checkpoint. Ray must be initialised. Returns the last checkpoint."""
    from torch.utils.tensorboard import SummaryWriter

    c, step_dir, run_dir = plan_run(config, resume, resume_overrides, (), trainer=TRAINER)
    check_writable(run_dir, "checkpoint_dir")
    check_writable(Path(c.log_dir) / c.run_name, "log_dir")
    log = (lambda *a: None) if quiet else say
    run = build(c, run_dir, step_dir, num_env_runners, cpus_per_runner, runner_resources, quiet)
    logs = Path(c.log_dir) / c.run_name
    run.writer = SummaryWriter(str(logs))
    log(f"run {c.run_name} on RLlib, {num_env_runners} env runner(s): logs in {logs}, checkpoints in {run_dir}")
    p, start, path = run.progress, time.time(), None
    end = c.num_updates if stop_after is None else min(c.num_updates, p["update"] + stop_after)
    resumed_at = p["update"]
    stop = StopSignal()
    try:
        while p["update"] < end:
            set_schedule(run.algo, c, p["update"])
            t0 = time.time()
            result = run.algo.train()
            seconds = time.time() - t0
            sampled = int(_stat(result, "env_runners", "num_env_steps_sampled", default=c.batch_size))
            p["update"] += 1
            p["decisions"] += sampled
            p["learner_decisions"] += sampled
            stats = {
                "charts/decisions_per_second": sampled / max(seconds, 1e-9),
                "charts/update_seconds": seconds,
                "losses/policy_loss": _stat(result, "learners", MODULE, "policy_loss"),
                "losses/value_loss": _stat(result, "learners", MODULE, "vf_loss"),
                "losses/entropy": _stat(result, "learners", MODULE, "entropy"),
                "losses/explained_variance": _stat(result, "learners", MODULE, "vf_explained_var"),
                "losses/entropy_knock": _stat(result, "learners", MODULE, "entropy_knock"),
                "charts/episode_return_mean": _stat(result, "env_runners", "episode_return_mean"),
            }
            if p["update"] % c.snapshot_every == 0:
                snap = learner_weights(run.algo)
                run.pool = (run.pool + [snap])[-c.pool_size :]
                stats["charts/snapshot_push_seconds"] = push_snapshot(run.algo, snap)
            for k, v in stats.items():
                run.writer.add_scalar(k, v, p["decisions"])
            line = (
                f"update {p['update']}/{c.num_updates}  decisions {p['decisions'] / 1e6:.2f}M  "
                f"{stats['charts/decisions_per_second'] / 1e3:.1f}k dec/s  entropy {stats['losses/entropy']:.2f}"
            )
            if c.eval_every and (p["update"] % c.eval_every == 0 or p["update"] == c.num_updates):
                run.model.load_state_dict(learner_weights(run.algo))
                line += "  " + log_eval(run, evaluate(run.model, c, run.rules, p["update"], run.frozen))
            log(line)
            out_of_time = time_limit is not None and time.time() - start >= time_limit
            if p["update"] % c.checkpoint_every == 0 or p["update"] == end or out_of_time or stop.is_set():
                path = save(run)
            if out_of_time or stop.is_set():
                why = f"after {time_limit / 60:g} minutes" if out_of_time else f"on {signal.Signals(stop.signum).name}"
                return stopped(run, path, why)
    finally:
        stop.restore()
        run.writer.close()
        run.algo.stop()
    if path is None and step_dir is not None and p["update"] == resumed_at:
        log(f"nothing to do: {step_dir} is at update {resumed_at} of {c.num_updates}")
        return step_dir
    return path if path is not None else save(run)


def _reachable(address: str, timeout: float = 5.0) -> bool:
    """Something answers at ``host:port`` (``ray://`` or a bare host: not checked here)."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return True
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            return True
    except OSError:
        return False


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m agents.rllib", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--config", default=None, help="YAML config, as train.py's (default configs/default.yaml)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    p.add_argument("--init-from", default=None, metavar="CHECKPOINT", help="start from this checkpoint's network")
    p.add_argument("--resume", default=None, help="continue the RLlib run in this checkpoint directory")
    p.add_argument("--num-env-runners", type=int, default=0, help="sampling processes (0: sample in the driver)")
    p.add_argument("--cpus-per-runner", type=float, default=1.0, help="CPUs Ray reserves for each env runner")
    p.add_argument(
        "--address", default=None, help="a Ray cluster's address (e.g. auto; default: RAY_ADDRESS, else a local Ray)"
    )
    p.add_argument("--stop-after-minutes", type=float, default=None, metavar="M")
    args = p.parse_args(argv)
    if args.num_env_runners < 0 or args.num_env_runners > 10_000:
        p.error(f"--num-env-runners must be 0 to 10000, got {args.num_env_runners}")
    if not (math.isfinite(args.cpus_per_runner) and 0 < args.cpus_per_runner <= 256):
        p.error(f"--cpus-per-runner must be above 0 and at most 256, got {args.cpus_per_runner}")
    minutes = args.stop_after_minutes
    if minutes is not None and not (math.isfinite(minutes) and minutes >= 0):
        p.error(f"--stop-after-minutes must be a finite number >= 0, got {minutes}")
    if args.config and args.resume:
        p.error("--config and --resume: a resumed run keeps its own config; change keys with --set KEY=VALUE")
    if args.init_from and args.resume:
        p.error("--init-from and --resume: a resumed run goes on from its own weights")
    sets = list(args.set)
    try:
        if args.init_from:
            sets = warmstart.init_sets(args.init_from) + sets
        config = make_config(config_file=None if args.resume else args.config or DEFAULT_CONFIG, sets=sets)
    except (CheckpointError, ValueError) as e:
        p.error(f"--init-from {args.init_from}: {e}" if isinstance(e, CheckpointError) else str(e))
    import os

    import ray

    address = args.address or os.environ.get("RAY_ADDRESS")
    local = {} if address else {"num_cpus": max(2, math.ceil(args.num_env_runners * args.cpus_per_runner))}
    if address and address not in ("auto", "local") and not _reachable(address):
        p.error(f"--address {address}: no Ray cluster to join there (nothing answers); start one with ray start --head")
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, **local)
    except (ConnectionError, RuntimeError, ValueError) as e:
        p.error(f"--address {address}: no Ray cluster to join there ({e}); start one with ray start --head")
    try:
        path = train_rllib(
            config,
            resume=args.resume,
            resume_overrides=tuple(item.split("=", 1)[0].strip() for item in args.set),
            num_env_runners=args.num_env_runners,
            cpus_per_runner=args.cpus_per_runner,
            time_limit=None if minutes is None else minutes * 60,
        )
    except CheckpointError as e:
        p.error(f"--resume {args.resume}: {e}" if args.resume else str(e))
    except ValueError as e:
        p.error(str(e))
    finally:
        ray.shutdown()
    say(f"done: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
