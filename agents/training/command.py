"""The training command, ``python train.py`` in the clone and ``ginenv-train`` where the
package is installed: its arguments, a stages config or one run, and the one-line
errors. The loop it runs is ``agents.training.loop.train``; the clone's ``train.py`` is
this command with Ctrl-C caught from its first line."""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
from pathlib import Path

from agents.extras import require

DESCRIPTION = """Self-play PPO for gin rummy: train from a YAML config (configs/<name>.yaml;
a config may list stages), --set key=value overrides, --resume a run exactly where its
last checkpoint left it, --stop-after-minutes to stop cleanly (resumable). Details:
docs/training.md."""


def config_path(name) -> Path:
    """A config file as given, or else one of the package's own by name (``past_marjj``)."""
    from agents.training.loop import CONFIGS

    path = Path(name)
    if path.is_file() or path.suffix or os.sep in str(name):
        return path
    return CONFIGS / f"{name}.yaml"


def prog() -> str:
    return "train.py" if os.path.basename(sys.argv[0]) == "train.py" else os.path.basename(sys.argv[0]) or "train.py"


def main(argv=None, stop=None) -> int:
    """The command: ``python train.py`` in the clone, ``ginenv-train`` where installed.
    ``stop``: the signals' catcher of a script that caught them from its first line."""
    from agents.training import stages
    from agents.training.checkpoint import CheckpointError, CheckpointWriteError
    from agents.training.config import make_config
    from agents.training.loop import DEFAULT_CONFIG, train
    from agents.training.run import say

    p = argparse.ArgumentParser(
        prog=prog(), description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--config",
        default=None,
        help="a YAML config file, or the name of one the package ships (default, smoke, past_marjj, ...; "
        "default: default)",
    )
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
    if args.config:
        args.config = str(config_path(args.config))
    if (args.resume and stages.is_stages_run(args.resume)) or (args.config and stages.is_stages_file(args.config)):
        try:  # a config of stages: each stage a run of train() below, one after another
            path = stages.run_stages(args.config, args.set, resume=args.resume, time_limit=limit, stop=stop)
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
        path = train(config, resume=args.resume, resume_overrides=overrides, time_limit=limit, stop=stop)
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


def run() -> int:
    """The ``ginenv-train`` console command: Ctrl-C and SIGTERM caught from here on."""
    from agents.training.stopping import StopSignal

    caught: list = []
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, lambda signum, frame: caught.append(signum))
    require("train", what="training (ginenv-train)", main=True)
    return main(stop=StopSignal(caught=caught))
