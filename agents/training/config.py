"""The trainer's settings: ``Config``, one field per setting with its docstring, and
``make_config`` (defaults, then a YAML file, then ``key=value`` overrides; unknown
keys and bad values are errors that name the key and what is valid)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from agents.training.network import NetworkSpec
from ginenv import core
from ginenv.baselines import BASELINES
from ginenv.rules import PRESETS

#: The update's precisions (``Config.update_dtype``).
UPDATE_DTYPES = ("float32", "bfloat16")

#: The baselines there were when the league's kinds were added after them.
_FIRST_BASELINES = ("knock_early", "gin_hunter", "random", "patient")
#: Who may sit opposite the learner: itself, a past snapshot, any baseline, a frozen
#: checkpoint or one of the league's exploiters. The order is the one the trainer draws
#: in; new kinds (camper) go last, so that saved draws keep their meaning.
OPPONENT_KINDS = (
    "self",
    "snapshot",
    *_FIRST_BASELINES,
    "frozen",
    "exploiter",
    *(name for name in BASELINES if name not in _FIRST_BASELINES),
)
#: Where a league's exploiters start (``exploiter_from``).
EXPLOITER_STARTS = ("scratch", "learner")
#: Keys that take one value or a list of them (one is read as a list of one).
_ONE_OR_MANY = {"frozen"}
_NET = NetworkSpec()
#: The most each count may be: far above any run this machine could hold, low enough
#: that a typo (10**8 games) is an error, not a MemoryError deep inside numpy.
_INT_BOUNDS = {
    "num_envs": 65_536,
    "num_steps": 65_536,
    "num_minibatches": 65_536,
    "update_epochs": 1_000,
    "total_decisions": 10**13,
    "snapshot_every": 10**7,
    "pool_size": 1_000,
    "exploiter_pool_size": 1_000,
    "exploiter_decisions": 10**13,
    "eval_matches": 1_000_000,
    "checkpoint_every": 10**7,
    "torch_threads": 256,
}
MAX_BATCH = 1 << 24  # decisions in one rollout
MAX_COEF = 1e3  # the most a coefficient, rate or scale may be


@dataclass
class Config:
    """Every setting of a training run; YAML files and ``--set`` override the defaults."""

    exp_name: str = "ppo"
    """Experiment name, part of the run name."""
    run_name: str = ""
    """Run name (default ``gin__{exp_name}__{seed}__{time}``); letters, digits, ``._-``."""
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
    players: int = 2
    """The table the learner is paid for. 2: a hand's reward is own minus the opponent's
    points. 3, the three-player table (``ginenv.table``, hand mode only), whose every
    hand is a two-player hand and whose third player sits it out scoring nothing: own
    minus the mean of the two others' points, so the opponent's points count half. (The
    four-player teams table is two two-player tables whose partners' totals add up:
    each player's part is 2, in match mode.)"""
    total_decisions: int = 9_000_000
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
    """Discount per decision of the same seat, in [0, 1]."""
    gae_lambda: float = 0.95
    """GAE's lambda, in [0, 1]."""
    num_minibatches: int = 16
    """Minibatches per epoch."""
    update_epochs: int = 4
    """Epochs over each rollout (16 x 4 learns from scratch where 4 x 2 stalled:
    docs/training.md, "Learning from scratch")."""
    clip_coef: float = 0.2
    """PPO's clip."""
    clip_vloss: bool = True
    """Clip the value loss too."""
    ent_coef: float = 0.01
    """Entropy bonus at the start."""
    ent_coef_final: float = 0.001
    """Entropy bonus at the end (linear schedule)."""
    knock_ent_coef: float = 0.5
    """A further entropy bonus on one choice: to knock or not, where a knock is legal (the
    binary entropy of the probability the policy puts on the knocks), annealed linearly
    to 0 over ``knock_ent_decisions``. It keeps that choice open after the early updates
    have taught "knock at once" against weak play (docs/training.md)."""
    knock_ent_decisions: int = 0
    """Decisions over which ``knock_ent_coef`` falls to 0 (then 0); 0: the whole run. A
    long run can keep a shorter run's schedule (``configs/scratch_long.yaml``: 12M)."""
    deadwood_shaping: float = 2.0
    """Training only: a potential-based shaping of the reward (Ng et al. 1999), with the
    potential ``-deadwood_shaping x`` the mover's deadwood (the observation's
    ``own_deadwood``, in points, times ``reward_scale``): each decision is credited with
    ``gamma x potential(next decision of the seat) - potential(now)``, the potential 0
    once the episode is over (the hand, or with ``mode: match`` the match). It pays for
    lowering the deadwood as it happens and sums to a constant over an episode, so the
    best policy is the game's (Ng et al.'s theorem). It kept the belief actor out of the
    stalling loop from scratch under every rules preset (docs/training.md). 0: off."""
    opponent_deadwood_shaping: float = 0.0
    """Training only: adds ``+opponent_deadwood_shaping x`` the opponent's deadwood (in
    points, its real hand, known during training only like the privileged critic's
    input, times ``reward_scale``) to the same potential, so a discard the opponent melds
    is charged when it happens, not when the opponent goes gin a dozen draws later. Still
    potential-based: the shaping sums to the first decision's potential along the seat's
    chain, and a potential that depends only on the state, not the action, leaves the
    policy gradient unbiased even though the actor cannot see it. 0: off."""
    undercut_penalty: float = 0.0
    """Training only: points (times ``reward_scale``) taken from a knock that the opponent
    undercut, on top of the hand's score. Not potential-based: it changes the game the
    learner plays, towards knocks at a lower deadwood (or none), a price on the knocks
    a camper waits for (docs/training.md, "Against campers"). 0: off."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient norm clip."""
    target_kl: float = 0.0
    """Stop an update's epochs early above this KL (0: never)."""
    hidden_sizes: list = field(default_factory=lambda: list(_NET.hidden_sizes))
    """Hidden layer widths of the actor and of the critic (``NetworkSpec``)."""
    activation: str = _NET.activation
    """relu, tanh or gelu."""
    architecture: str = "belief"
    """Actor: ``cards`` (a head shared by the 52 cards), ``belief`` (that head also reads
    each card's neighbours and a learnt belief over the opponent's unseen cards; the
    default: with ``deadwood_shaping`` it learns every rules preset from scratch) or
    ``mlp`` (see ``agents.training.network``). ``NetworkSpec``'s own default stays
    ``cards``: what a ``policy.json`` without the key was trained with."""
    privileged_critic: bool = _NET.privileged_critic
    """The critic also sees the opponent's hand (training only)."""
    belief_coef: float = 1.0
    """Weight of the belief net's cross-entropy (``belief``; its gradients are clipped
    apart from the policy's and the critic's)."""
    deadwood_aux_coef: float = 0.0
    """Above 0: an auxiliary loss, this times the squared error of a linear head on the
    actor's trunk that estimates the opponent's deadwood / 100 (the opponent's real hand,
    known during training only, like the belief net's target). It shapes what the trunk,
    and so the knock decision, reads; the head is not part of the policy (the network's
    ``deadwood_head``)."""
    opponents: dict = field(
        default_factory=lambda: {"self": 0.6, "snapshot": 0.2, "knock_early": 0.1, "gin_hunter": 0.1}
    )
    """Shares of the episodes by who sits opposite the learner: ``self`` (both seats
    train), ``snapshot`` (a past snapshot from the pool) or a baseline name. Shares are
    normalised; kinds left out get 0."""
    pfsp: float = 0.0
    """Prioritised fictitious self-play: 0 keeps the ``opponents`` shares; p > 0 moves the
    shares of every opponent but ``self`` towards the ones the learner loses to, each in
    proportion to its share times (1 - w)**p, w the learner's recent share of episodes won
    against it (an average over its last ~100 finished episodes); the snapshots of the
    pool are weighted the same way among themselves. train.py only."""
    exploiter_every: int = 0
    """League: every this many updates (0: never), train a main exploiter: a best response
    to the learner as it is then (frozen), trained by this trainer for
    ``exploiter_decisions``, added to the exploiter pool, which the ``exploiter`` share of
    ``opponents`` plays (until the first exists, ``self`` does)."""
    league_exploiter_every: int = 0
    """League: every this many updates (0: never), train a league exploiter: a best
    response to the whole league (the learner as it is then, each snapshot of its pool,
    each exploiter so far, all frozen, sharing the episodes of ``self``, ``snapshot`` and
    ``exploiter``, PFSP-weighted; and the baselines of ``opponents`` at their shares),
    added to the same exploiter pool."""
    exploiter_from: str = "scratch"
    """Where each exploiter starts: ``scratch`` (fresh weights of the learner's shape, with
    the exploitability tool's PPO settings) or ``learner`` (the learner's weights as they
    are then, and this config's learning rate and entropy settings)."""
    exploiter_decisions: int = 1_000_000
    """Each exploiter's training budget, both seats."""
    exploiter_pool_size: int = 3
    """Exploiters kept (oldest dropped)."""
    frozen: list = field(default_factory=list)
    """A checkpoint, or a list of them, that sit opposite the learner in the episodes the
    ``opponents`` mix gives to ``frozen``, shared among them (PFSP-weighted when ``pfsp``
    is on); their weights never change (the exploitability tool's target)."""
    eval_opponents: list = field(default_factory=lambda: ["knock_early", "gin_hunter"])
    """Who each evaluation plays: baseline names, or ``frozen`` (the first of the frozen
    checkpoints)."""
    init_from: str = ""
    """Start from the network weights of this checkpoint (a run or step directory) instead
    of fresh ones; its actor (architecture, sizes) must be this config's. If the critic's
    inputs differ (``privileged_critic``), the critic starts fresh (give it
    ``critic_warmup_updates``)."""
    bc_teacher: str = ""
    """Warm start: a baseline whose moves the actor imitates before PPO, or a checkpoint
    (a run or step directory) whose policy it is distilled from: the checkpoint plays
    both seats by sampling its own policy and the actor learns its probabilities (a
    network of another size can start from a trained one so). "" for none."""
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
    torch_threads: int = 1
    """Intra-op threads torch may use (on each of the update's two threads, with
    ``split_update``). One by default: two train the default recipe fastest on an idle
    2-core machine, but beside one busy neighbour their OpenMP threads spin and the run
    falls to a sixth of its speed (docs/speed.md, the thread table)."""
    split_update: bool = True
    """The PPO update runs the critic's loss (and a belief net's) on a second thread
    beside the actor's: the same weights, bit for bit, with both cores at work; 1.35x one
    thread idle, never slower beside busy neighbours (docs/speed.md). CPU only; on a GPU
    the two would share one stream. With ``torch_threads=2`` on an idle machine of your
    own, set it false."""
    update_dtype: str = "float32"
    """The PPO update's matrix products: ``float32``, or ``bfloat16`` (torch's autocast:
    the products in bfloat16, the weights, the optimizer, the losses and the
    log-probabilities in float32). On a CPU with bfloat16 instructions (AVX-512 BF16, AMX)
    its products run about 3x faster; without them, slower. It changes the update's
    floats, not its algorithm (docs/speed.md, docs/experiments.md)."""
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
        if isinstance(self.frozen, str):  # one checkpoint, as configs before lists give it
            self.frozen = [self.frozen] if self.frozen else []
        if not isinstance(self.frozen, list) or not all(isinstance(f, str) and f for f in self.frozen):
            problems.append(f"frozen must be a checkpoint or a list of checkpoints, got {self.frozen!r}")
        if self.exploiter_from not in EXPLOITER_STARTS:
            problems.append(f"exploiter_from must be one of {', '.join(EXPLOITER_STARTS)}, got {self.exploiter_from!r}")
        if self.rules not in PRESETS:
            problems.append(f"rules must be one of {', '.join(PRESETS)}, got {self.rules!r}")
        for key in ("mode", "eval_mode"):
            if getattr(self, key) not in core.MODES:
                problems.append(f"{key} must be one of {', '.join(core.MODES)}, got {getattr(self, key)!r}")
        for name, most in _INT_BOUNDS.items():
            if not 1 <= getattr(self, name) <= most:
                problems.append(f"{name} must be from 1 to {most:,}, got {getattr(self, name)}")
        if self.batch_size > MAX_BATCH:
            problems.append(f"num_envs x num_steps must be at most {MAX_BATCH:,} (one rollout in memory)")
        if not 0 <= self.seed < 1 << 63:
            problems.append(f"seed must be from 0 to 2**63 - 1, got {self.seed}")
        if self.bc_decisions and not self.bc_teacher:  # bc_decisions=0 with a teacher: imitation off
            problems.append(
                "bc_decisions needs bc_teacher: the baseline to imitate for those decisions "
                f"(got bc_decisions={self.bc_decisions} and no bc_teacher)"
            )
        if self.players not in (2, 3):
            problems.append(f"players must be 2 or 3 (the table the learner is paid for), got {self.players!r}")
        elif self.players == 3 and self.mode != "hand":
            problems.append("players=3 needs mode=hand (the three-player table's hands are two-player hands)")
        if self.num_minibatches > self.num_envs * self.num_steps:
            problems.append(
                "num_minibatches must be at most the decisions of an update, num_envs x num_steps "
                f"({self.num_envs * self.num_steps}; a minibatch would be empty)"
            )
        exploiters = self.exploiter_every or self.league_exploiter_every
        if isinstance(self.opponents, dict) and self.opponents.get("exploiter") and not exploiters:
            problems.append(
                "opponents give episodes to exploiter, but exploiter_every and league_exploiter_every "
                "are 0 (none is ever trained)"
            )
        for name in (
            "eval_every",
            "bc_decisions",
            "knock_ent_decisions",
            "critic_warmup_updates",
            "exploiter_every",
            "league_exploiter_every",
        ):
            if getattr(self, name) < 0:
                problems.append(f"{name} must be >= 0")
        for name in (
            "match_win_reward",
            "ent_coef",
            "ent_coef_final",
            "knock_ent_coef",
            "deadwood_shaping",
            "opponent_deadwood_shaping",
            "undercut_penalty",
            "vf_coef",
            "target_kl",
            "belief_coef",
            "deadwood_aux_coef",
            "pfsp",
        ):
            value = getattr(self, name)
            if not math.isfinite(value) or not 0 <= value <= MAX_COEF:
                problems.append(f"{name} must be a number from 0 to {MAX_COEF:g}, got {value}")
        for name in ("learning_rate", "bc_learning_rate", "reward_scale", "max_grad_norm"):
            value = getattr(self, name)
            if not math.isfinite(value) or not 0 < value <= MAX_COEF:
                problems.append(f"{name} must be a number > 0 and at most {MAX_COEF:g}, got {value}")
        if not 0.0 < self.clip_coef <= 1.0:  # 0 would freeze the policy and the clipped critic
            problems.append(f"clip_coef must be a number > 0 and at most 1, got {self.clip_coef}")
        for name in ("gamma", "gae_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name} must be between 0 and 1, got {getattr(self, name)}")
        if self.bc_teacher and self.bc_teacher not in BASELINES and not Path(self.bc_teacher).exists():
            problems.append(
                f"bc_teacher must be empty, a baseline name ({', '.join(BASELINES)}) or a checkpoint "
                f"directory, got {self.bc_teacher!r} (no baseline of that name, no such path)"
            )
        problems += _opponent_problems(self.opponents)
        if isinstance(self.opponents, dict) and self.opponents.get("frozen") and not self.frozen:
            problems.append("opponents give episodes to frozen, but no frozen checkpoint is set")
        evals = self.eval_opponents
        if not isinstance(evals, list) or any(e not in (*BASELINES, "frozen") for e in evals):
            problems.append(f"eval_opponents must be a list of baseline names or frozen, got {evals!r}")
        elif "frozen" in evals and not self.frozen:
            problems.append("eval_opponents names frozen, but no frozen checkpoint is set")
        for name in ("run_name", "exp_name"):  # both end up in a directory name
            value = getattr(self, name)
            if (value or name == "exp_name") and not re.fullmatch(r"[A-Za-z0-9._-]+", value) or value in (".", ".."):
                problems.append(f"{name} may hold only letters, digits and ._- (it names a directory), got {value!r}")
        try:
            self.network_spec()
        except ValueError as e:
            problems.append(str(e).removeprefix("bad network spec: "))
        problems += _device_problems(self.device)
        if self.update_dtype not in UPDATE_DTYPES:
            problems.append(f"update_dtype must be {' or '.join(UPDATE_DTYPES)}, got {self.update_dtype!r}")
        if problems:
            raise ValueError("bad config: " + "; ".join(problems))

    def network_spec(self) -> NetworkSpec:
        """The network this config trains."""
        return NetworkSpec(
            tuple(self.hidden_sizes),
            self.activation,
            self.architecture,
            self.privileged_critic,
            deadwood_head=self.deadwood_aux_coef > 0,
        )

    def opponent_mix(self):
        """The opponents' shares over ``OPPONENT_KINDS``, normalised."""
        shares = [float(self.opponents.get(kind, 0.0)) for kind in OPPONENT_KINDS]
        total = sum(shares)
        return [s / total for s in shares]

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def num_updates(self) -> int:
        return max(1, self.total_decisions // self.batch_size)


def _opponent_problems(mix) -> list:
    if not isinstance(mix, dict):
        return [f"opponents must be a mapping of kind to share, got {mix!r}"]
    unknown = [k for k in mix if k not in OPPONENT_KINDS]
    if unknown:
        return [f"opponents: unknown kind(s) {', '.join(map(str, unknown))}; valid: {', '.join(OPPONENT_KINDS)}"]
    bad = [
        k
        for k, v in mix.items()
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0
    ]
    if bad:
        return [f"opponents: the shares of {', '.join(bad)} must be finite numbers >= 0"]
    if sum(mix.values()) <= 0:
        return ["opponents: the shares must not all be 0"]
    return []


def _device_problems(name: str) -> list:
    import torch

    try:
        device = torch.device(name)
    except (RuntimeError, ValueError, TypeError):
        return [f"device must be cpu, cuda or cuda:<n>, got {name!r}"]
    if device.type not in ("cpu", "cuda"):
        return [f"device must be cpu, cuda or cuda:<n>, got {name!r}"]
    if device.type == "cuda" and not torch.cuda.is_available():
        return [f"device {name!r} asks for a GPU but torch sees none here (torch {torch.__version__}); use device=cpu"]
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        return [f"device {name!r}: torch sees only {torch.cuda.device_count()} GPU(s)"]
    return []


_KINDS = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "dict": dict}


def _coerce(name: str, text, kind):
    expected = _KINDS.get(kind, typing.get_origin(kind) or kind)
    if isinstance(text, str) and expected is bool:
        if text.lower() in ("true", "1", "yes"):
            return True
        if text.lower() in ("false", "0", "no"):
            return False
        raise ValueError(f"{name} must be true or false, got {text!r}")
    try:
        value = yaml.safe_load(text) if isinstance(text, str) and expected is not str else text
    except yaml.YAMLError:
        raise ValueError(f"{name} must be a {expected.__name__}, got {text!r} (not valid YAML)") from None
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if expected is float and type(value) is str:  # YAML 1.1 reads 1e308 (no dot) as text
        try:
            value = float(value)
        except ValueError:
            pass
    if name in _ONE_OR_MANY and isinstance(value, str):
        value = [value] if value else []
    if not isinstance(value, expected) or (expected in (int, float) and isinstance(value, bool)):
        raise ValueError(f"{name} must be a {expected.__name__}, got {text!r}")
    return value


_RENAMED = {f"opponent_{kind}": "opponents" for kind in OPPONENT_KINDS}


class _Quoted(str):
    """A YAML string written in quotes: text, even where it looks like a number."""


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (the plain loader
    keeps the last one silently) and marking quoted strings (``gamma: '0.9'`` is text)."""

    def construct_yaml_str(self, node):
        value = super().construct_yaml_str(node)
        return _Quoted(value) if node.style in ("'", '"') else value

    def construct_mapping(self, node, deep=False):
        keys = [self.construct_object(k, deep=deep) for k, _ in node.value]
        dup = sorted({str(k) for k in keys if keys.count(k) > 1})
        if dup:
            raise yaml.constructor.ConstructorError(None, None, f"key(s) {', '.join(dup)} given twice", node.start_mark)
        return super().construct_mapping(node, deep=deep)


def set_item(key: str, value) -> str:
    """``key=value`` as ``--set`` reads it: strings as they are, the rest as YAML (JSON)."""
    return f"{key}={value if isinstance(value, str) else json.dumps(value)}"


def read_config_file(config_file) -> dict:
    """A YAML config file's mapping, its typed values checked (a number written in quotes
    is an error); its keys are checked where they are merged. ``stages``, a list of such
    mappings, is checked the same way (``agents.training.stages`` runs it)."""
    fields = {f.name: f.type for f in dataclasses.fields(Config)}
    path = Path(config_file)
    if not path.is_file():
        raise ValueError(f"config file {path} not found")
    try:
        data = yaml.load(path.read_text(), Loader=_StrictLoader) or {}
    except yaml.YAMLError as e:
        raise ValueError(f"config file {path} is not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(f"config file {path} must hold a mapping of keys to values")
    stages = data.get("stages")
    mappings = [data, *(x for x in stages if isinstance(x, dict))] if isinstance(stages, list) else [data]
    for mapping in mappings:
        for key, value in mapping.items():  # a YAML file's values are typed: '0.9' is a string there
            kind = _KINDS.get(fields.get(key), fields.get(key))
            if isinstance(value, _Quoted) and kind is not str and key in fields and key not in _ONE_OR_MANY:
                raise ValueError(
                    f"config file {path}: {key} must be a {getattr(kind, '__name__', kind)}, got the string {value!r}"
                )
    return data


def make_config(overrides: dict | None = None, config_file=None, sets=()) -> Config:
    """Defaults, then a YAML file, then ``key=value`` strings; unknown keys are errors."""
    fields = {f.name: f.type for f in dataclasses.fields(Config)}
    values = {}

    def merge(source, items):
        for key, value in items:
            if key not in fields:
                hint = (
                    f" (the opponent mix is one mapping now: opponents: {{{key.removeprefix('opponent_')}: ...}})"
                    if key in _RENAMED
                    else ""
                )
                raise ValueError(f"unknown config key {key!r} in {source}{hint}; valid keys: {', '.join(fields)}")
            values[key] = _coerce(key, value, fields[key])

    if config_file is not None:
        data = read_config_file(config_file)
        if "stages" in data:
            raise ValueError(
                f"config file {config_file} lists stages: each is a run of its own, which "
                f"python train.py --config {config_file} runs one after another"
            )
        merge(str(config_file), data.items())
    merge("overrides", (overrides or {}).items())
    for item in sets:
        if "=" not in item:
            raise ValueError(f"--set takes key=value, got {item!r}")
        key, value = item.split("=", 1)
        merge("--set", [(key.strip(), value)])
    return Config(**values)


#: Settings of variants that have left the product (docs/experiments.md), with the value
#: at which a saved config did not use them.
_RETIRED = {"feed_penalty": 0.0, "critic_lookahead": 0, "danger_coef": None, "danger_learning_rate": 0.0}
#: Settings added or whose default changed after runs were saved without them: the value
#: such a run trained with (not today's default), so resuming it keeps its recipe. The
#: knock bonus and the shaping came after ``checkpoints/champion``; the default actor
#: was ``cards`` until the belief recipe became the default.
_UNSAID = {"knock_ent_coef": 0.0, "deadwood_shaping": 0.0, "architecture": "cards"}


def from_saved(saved: dict) -> dict:
    """A config saved by this or an earlier version, as ``Config``'s keys: the
    ``opponent_<kind>`` shares become ``opponents``; the settings of retired variants are
    dropped where unused and refused where used; a setting it lacks that came later (or
    changed its default) takes the value the run had (``_UNSAID``)."""
    if not isinstance(saved, dict):
        raise ValueError(f"a saved config must be a mapping, got {type(saved).__name__}")
    out = {**_UNSAID, **saved}
    shares = {k.removeprefix("opponent_"): out.pop(k) for k in list(out) if k in _RENAMED}
    if shares:
        out["opponents"] = {k: v for k, v in shares.items() if v}
    for key, unused in _RETIRED.items():
        if key in out:
            value = out.pop(key)
            if unused is not None and value != unused:
                raise ValueError(
                    f"this run used {key}={value!r}, a variant this version no longer has "
                    "(see docs/experiments.md for the commit that had it)"
                )
    if out.get("architecture") in ("relational", "danger"):
        raise ValueError(
            f"this run trained the {out['architecture']!r} actor, a variant this version no longer "
            "has (see docs/experiments.md for the commit that had it)"
        )
    return out


_StrictLoader.add_constructor("tag:yaml.org,2002:str", _StrictLoader.construct_yaml_str)
