"""Self-play PPO on Ray RLlib: ``python -m agents.rllib [--iterations N]
[--num-env-runners K] [--address auto] [--out DIR]`` (the ``rllib`` extra).

RLlib's multi-agent PPO (its new API stack) trains one shared policy for both seats of
this project's PettingZoo env (``gin_rummy_v0.env()``), with RLlib's action-masking
RLModule (illegal logits pushed to the float minimum). The observation dict is renamed
to the keys that module reads (``observations``, ``action_mask``). Every
``--eval-every`` iterations it plays the policy against the baselines with this
project's evaluator; TensorBoard scalars go to ``runs/<name>``.

It runs on one machine with ``--num-env-runners`` sampling workers, or on a Ray cluster:
start one with ``ray start --head`` (and ``ray start --address=HEAD:6379`` on the
others), then pass ``--address auto`` or set ``RAY_ADDRESS``.

The trained network is RLlib's, not this project's actor-critic, so ``load_policy``
cannot load it; ``--out`` saves its weights as safetensors with a JSON spec (no pickle),
and ``load_rllib_policy(dir)`` rebuilds it as an agent (``act(obs, mask)``) for the
evaluator, the envs' opponents and the frontends.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from agents.extras import require

require("rllib", "train", what="the RLlib trainer (python -m agents.rllib)", main=__name__ == "__main__")

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from pettingzoo.utils import BaseWrapper  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

from ginenv import gin_rummy_v0  # noqa: E402
from ginenv.actions import NUM_ACTIONS  # noqa: E402
from ginenv.observation import OBS_SIZE  # noqa: E402

ENV_NAME = "ginenv_gin_rummy_v0"
POLICY = "shared"


class RLlibKeys(BaseWrapper):
    """The env's observation dict under the keys RLlib's action-masking module reads."""

    def observation_space(self, agent):
        return gymnasium.spaces.Dict(
            {
                "observations": self.env.observation_space(agent)["observation"],
                "action_mask": gymnasium.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
            }
        )

    def observe(self, agent):
        o = self.env.observe(agent)
        return {"observations": o["observation"], "action_mask": o["action_mask"].astype(np.float32)}


def _module_spec(hidden):
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    return RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config={"head_fcnet_hiddens": list(hidden)})


def make_algo(num_env_runners: int = 0, hidden=(128, 128), batch: int = 4000, lr: float = 5e-4, seed: int = 0):
    """RLlib's PPO, self-play on the PettingZoo env, one shared policy for both seats."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env

    register_env(ENV_NAME, lambda cfg: PettingZooEnv(RLlibKeys(gin_rummy_v0.env())))
    config = (
        PPOConfig()
        .environment(ENV_NAME)
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, *args, **kwargs: POLICY)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY: _module_spec(hidden)}))
        .env_runners(num_env_runners=num_env_runners)
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=min(1000, batch),
            num_epochs=4,
            lr=lr,
            gamma=0.99,
            entropy_coeff=0.01,
        )
        .debugging(seed=seed)
    )
    return config.build_algo()


class RLlibAgent:
    """An RLlib action-masking module as this project's agent: greedy legal actions."""

    name = "rllib"

    def __init__(self, module):
        self.module = module

    @torch.no_grad()
    def act(self, observations, action_masks):
        from ray.rllib.core.columns import Columns

        obs = torch.as_tensor(np.asarray(observations, np.float32).reshape(-1, OBS_SIZE))
        mask = torch.as_tensor(np.asarray(action_masks, np.float32).reshape(-1, NUM_ACTIONS))
        out = self.module.forward_inference({Columns.OBS: {"observations": obs, "action_mask": mask}})
        logits = out[Columns.ACTION_DIST_INPUTS].masked_fill(mask < 0.5, float("-inf"))
        return logits.argmax(-1).numpy().astype(np.int64)


def save_policy(algo, out) -> Path:
    """The shared policy's weights as safetensors and its spec as JSON."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    module = algo.get_module(POLICY)
    save_file(
        {k: v.detach().cpu().contiguous() for k, v in module.state_dict().items()}, str(out / "rllib.safetensors")
    )
    config = {k: v for k, v in dict(module.model_config).items() if isinstance(v, (int, float, str, bool, list))}
    spec = {"format": 1, "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS, "model_config": config}
    (out / "rllib.json").write_text(json.dumps(spec, indent=2))
    return out


def load_rllib_policy(path) -> RLlibAgent:
    """A policy saved by ``save_policy`` as an agent."""
    path = Path(path)
    try:
        spec = json.loads((path / "rllib.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path} holds no readable rllib.json: {e}") from None
    if spec.get("obs_size") != OBS_SIZE or spec.get("num_actions") != NUM_ACTIONS:
        raise ValueError(
            f"{path} was saved for observations of {spec.get('obs_size')} and {spec.get('num_actions')} "
            f"actions; this version has {OBS_SIZE} and {NUM_ACTIONS}"
        )
    env = RLlibKeys(gin_rummy_v0.env())
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        observation_space=env.observation_space("player_0"),
        action_space=env.action_space("player_0"),
        model_config=spec.get("model_config", {}),
    ).build()
    module.load_state_dict(load_file(str(path / "rllib.safetensors")))
    return RLlibAgent(module.eval())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m agents.rllib", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--num-env-runners", type=int, default=0, help="sampling workers (0: sample in the driver)")
    p.add_argument("--address", default=os.environ.get("RAY_ADDRESS"), help="a Ray cluster's address (e.g. auto)")
    p.add_argument("--hidden", type=int, nargs="+", default=[128, 128])
    p.add_argument("--batch", type=int, default=4000, help="decisions per iteration")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--eval-hands", type=int, default=400)
    p.add_argument("--name", default="rllib")
    p.add_argument("--out", default=None, help="save the trained policy here (safetensors + JSON)")
    args = p.parse_args(argv)
    if args.iterations < 1 or args.num_env_runners < 0 or args.batch < 100:
        p.error("--iterations must be >= 1, --num-env-runners >= 0 and --batch >= 100")
    import ray
    from torch.utils.tensorboard import SummaryWriter

    from agents import make_agent
    from agents.evaluate import play
    from ginenv.rules import Rules

    ray.init(
        address=args.address,
        include_dashboard=False,
        log_to_driver=False,
        **({} if args.address else {"num_cpus": max(2, args.num_env_runners + 1)}),
    )
    algo = make_algo(args.num_env_runners, args.hidden, args.batch, seed=args.seed)
    writer = SummaryWriter(str(Path("runs") / args.name))
    start, steps = time.time(), 0
    for it in range(1, args.iterations + 1):
        result = algo.train()
        steps += args.batch
        writer.add_scalar("charts/decisions_per_second", steps / (time.time() - start), steps)
        line = f"iteration {it}/{args.iterations}  {steps / 1e3:.0f}k decisions  {time.time() - start:.0f} s"
        if it % args.eval_every == 0 or it == args.iterations:
            agent = RLlibAgent(algo.get_module(POLICY))
            for name in ("random", "knock_early"):
                r = play(agent, make_agent(name), args.eval_hands, Rules(), seed=10_000 + it, mode="hand")
                rate = r["hands_won_a"] / r["games"]
                writer.add_scalar(f"eval/{name}_hand_win_rate", rate, steps)
                line += f"  vs {name} {rate:.3f} of hands"
        print(line, flush=True)
        del result
    if args.out:
        print(f"saved the policy to {save_policy(algo, args.out)}")
    writer.close()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
