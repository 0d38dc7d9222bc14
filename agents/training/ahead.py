"""Rollouts made ahead (``Config.overlap_rollout``): while the PPO update trains on one
rollout, the next one is played on a thread of its own, acting with a copy of the
weights from before that update (one update old when it is trained on, as in
asynchronous PPO: the ratio's old log-probabilities are the ones it acted with).

Torch's kernels and most of the engine's work leave the GIL, so the rollout and the
update share the two cores. Each thread is the only one drawing from the random streams
it uses while the other runs: the rollout from torch's generator (the policy's samples),
the run's numpy generator (the opponents) and the baselines'; the update from a numpy
generator of its own (``Run.update_rng``: the minibatches). So a seed still gives the
same games and weights on every run.

A checkpoint taken while a rollout is ahead holds the state from before it began (the
games, the opponents' arrays, those random streams) and the weights it acts with: a
resume plays it again, move for move, before going on. Nothing else changes those
between its start and the checkpoint: the loop adds snapshots to the pool, trains
exploiters and evaluates only while no rollout runs.
"""

from __future__ import annotations

import copy
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from agents.training import rollout
from agents.training.checkpoint import rollout_state


class RolloutAhead:
    """The rollout thread, the weights it acts with, and the rollout in flight or made
    and not yet trained on (``state``: its ``rollout_state`` from before it began)."""

    def __init__(self, model: torch.nn.Module, threads: int):
        self.pool = ThreadPoolExecutor(
            1, thread_name_prefix="rollout", initializer=torch.set_num_threads, initargs=(threads,)
        )
        self.actor = copy.deepcopy(model)  # the weights the rollouts act with
        self.state = None
        self.future = None

    @property
    def in_flight(self) -> bool:
        return self.future is not None

    def launch(self, run, acting: dict | None = None) -> None:
        """Start the next rollout of ``run`` on the thread, acting with the model's weights
        now (or ``acting``: the saved ones of a rollout a resume plays again)."""
        assert self.future is None, "one rollout at a time"
        self.actor.load_state_dict(run.model.state_dict() if acting is None else acting)
        self.state = rollout_state(run.env.state, run.opponents, run.rng, run.device)
        self.future = self.pool.submit(self._collect, run)

    def _collect(self, run):
        t0 = time.time()
        buf, learner_decisions = rollout.collect(
            run.env, self.actor, run.opponents, run.rng, run.c.num_steps, run.device, None
        )
        return buf, learner_decisions, time.time() - t0

    def wait(self) -> None:
        """Until the rollout in flight (if any) has ended: after it nothing runs beside."""
        if self.future is not None:
            self.future.exception()

    def take(self, run):
        """The rollout in flight, once it has ended (one is started first if none is):
        ``(buffer, learner decisions, seconds)``. It is no longer pending: a rollout
        launched next takes its place in checkpoints."""
        if self.future is None:
            self.launch(run)
        out = self.future.result()
        self.future, self.state = None, None
        return out

    def checkpoint_part(self):
        """``save_training``'s ``ahead``: the pending rollout's state from before it began,
        and the weights it acts with; None when none is pending."""
        if self.state is None:
            return None
        acting = {f"acting.{k}": v for k, v in self.actor.state_dict().items()}
        return self.state, (acting, {"pending_rollout": True})

    def close(self) -> None:
        self.pool.shutdown()
