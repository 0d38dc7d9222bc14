"""Self-play PPO for gin rummy: ``python train.py --config configs/<name>.yaml [--set key=value ...]``.

The command (``ginenv-train`` where the package is installed: ``agents/training/command.py``).
The loop it runs, ``train(config)``, reads like CleanRL's ppo.py, top to
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

import sys  # noqa: E402

from agents.extras import require  # noqa: E402

require("train", what="training (train.py)", main=__name__ == "__main__")

from agents.training import command  # noqa: E402
from agents.training.config import make_config  # noqa: E402, F401 - train.make_config, as before
from agents.training.loop import DEFAULT_CONFIG, train  # noqa: E402, F401 - train.train, as before
from agents.training.stopping import StopSignal  # noqa: E402

STOP = StopSignal(caught=EARLY_SIGNALS) if __name__ == "__main__" else None


def main(argv=None) -> int:
    return command.main(argv, stop=STOP)


if __name__ == "__main__":
    sys.exit(main())
