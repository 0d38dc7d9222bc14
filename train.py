"""Self-play PPO for gin rummy: ``python train.py --config configs/<name>.yaml [--set key=value ...]``.

The command. The loop it runs, ``train(config)``, reads like CleanRL's ppo.py, top to
bottom (config, seeding, envs, agent, opponents, rollout, advantages, update, logging,
evaluation, checkpoints) in ``agents/training/loop.py``, which the league's exploiters and
the exploitability tool call too (the script uses the package, never the other way
round). Its parts are plain functions in ``agents/training/`` (``config``, ``rollout``,
``ppo``, ``opponents``, ``warmstart``, ``checkpoint``; ``run`` holds a run's state, its
checkpoints and the signals that stop it). What the game adds to PPO:

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

import signal

# Run as a command, Ctrl-C and SIGTERM are caught from the first line on, before the
# imports (seconds): a signal in the start-up stops the run cleanly before its first update.
EARLY_SIGNALS: list = []
if __name__ == "__main__":
    for _s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_s, lambda signum, frame: EARLY_SIGNALS.append(signum))

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402

from agents.extras import require  # noqa: E402

require("train", what="training (train.py)", main=__name__ == "__main__")

from agents.training.stopping import StopSignal  # noqa: E402

STOP = StopSignal(caught=EARLY_SIGNALS) if __name__ == "__main__" else None

from agents.training import stages  # noqa: E402
from agents.training.checkpoint import CheckpointError, CheckpointWriteError  # noqa: E402
from agents.training.config import make_config  # noqa: E402, F401 - train.make_config, as before
from agents.training.loop import DEFAULT_CONFIG, train  # noqa: E402
from agents.training.run import say  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default=None, help="YAML config (default configs/default.yaml)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    p.add_argument(
        "--resume",
        default=None,
        help="continue the run in this checkpoint directory (its own "
        "config; keys given with --set, e.g. total_decisions or learning_rate, replace the saved ones; "
        "new checkpoints go to that directory unless checkpoint_dir is given)",
    )
    p.add_argument(
        "--stop-after-minutes",
        type=float,
        default=None,
        metavar="M",
        help="checkpoint and stop after the first update that ends M minutes or more after the "
        "start (continue later with --resume)",
    )
    args = p.parse_args(argv)
    minutes = args.stop_after_minutes
    if minutes is not None and not (math.isfinite(minutes) and minutes >= 0):
        p.error(f"--stop-after-minutes must be a finite number >= 0, got {minutes}")
    if args.config and args.resume:
        p.error("--config and --resume: a resumed run keeps its own config; change keys with --set KEY=VALUE")
    limit = None if minutes is None else minutes * 60
    if (args.resume and stages.is_stages_run(args.resume)) or (args.config and stages.is_stages_file(args.config)):
        try:  # a config of stages: each stage a run of train() below, one after another
            path = stages.run_stages(args.config, args.set, resume=args.resume, time_limit=limit, stop=STOP)
        except CheckpointError as e:
            p.error(f"--resume {args.resume}: {e}" if args.resume else str(e))
        except CheckpointWriteError as e:
            print(f"train.py: error: {e} (python train.py --resume {e.run_dir})", file=sys.stderr, flush=True)
            return 1
        except ValueError as e:
            p.error(str(e))
        return 0
    try:
        config = make_config(config_file=None if args.resume else args.config or DEFAULT_CONFIG, sets=args.set)
    except ValueError as e:
        p.error(str(e))
    overrides = tuple(item.split("=", 1)[0].strip() for item in args.set)
    try:
        path = train(config, resume=args.resume, resume_overrides=overrides, time_limit=limit, stop=STOP)
    except CheckpointError as e:
        p.error(f"--resume {args.resume}: {e}" if args.resume and not e.args[0].startswith("init_from") else str(e))
    except CheckpointWriteError as e:  # a full or read-only disk mid-run: one line, the last good step kept
        print(f"train.py: error: {e} (python train.py --resume {e.run_dir})", file=sys.stderr, flush=True)
        return 1
    except ValueError as e:  # an output directory that cannot be written, found before any work
        p.error(str(e))
    if path is not None:
        say(f"done: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
