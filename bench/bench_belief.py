"""How well a ``belief`` policy reads its opponent's hand.

Plays single hands of the policy against an opponent (default gin_hunter) and, at each
of the policy's decisions, scores its belief net's probabilities for the unseen cards
against the opponent's real hand. Prints the mean cross-entropy per unseen card, in
nats, beside the uniform prior (each unseen card equally likely to be one of the
opponent's unknown cards: its hand size less the cards it took and still holds,
over the unseen count), and the same split by the stock's size. Run:
``python bench/bench_belief.py <checkpoint> [--opponent gin_hunter] [--games 2000]``.
"""

import argparse

import numpy as np
import torch

from agents import make_agent
from agents.baselines import _stock_size
from agents.network import UNSEEN_PLANE
from agents.policy import load_policy
from ginenv import VectorEnv
from ginenv.cards import NUM_CARDS


def collect(policy, opponent, games: int, seed: int):
    """Observations at the policy's decisions and the opponent's hand at each."""
    env = VectorEnv(games, "standard", seed=seed, mode="hand")
    obs, mask, _ = env.reset()
    rows = np.arange(games)
    seat = rows % 2  # the policy's seat alternates between games
    done = np.zeros(games, bool)
    xs, ys = [], []
    while not done.all():
        mover = env.state.current.astype(np.int64)
        mine = (mover == seat) & ~done
        xs.append(obs[mine])
        ys.append(env.state._hands[rows[mine], 1 - mover[mine]].astype(np.float32))
        act = np.zeros(games, np.int64)
        if mine.any():
            act[mine] = policy.act(obs[mine], mask[mine])
        theirs = ~mine & ~done
        if theirs.any():
            act[theirs] = opponent.act(obs[theirs], mask[theirs])
        act[done] = np.argmax(mask[done], 1)  # finished games: any legal filler, ignored
        step = env.step(act)
        done |= step.terminated | step.truncated
        obs, mask = step.obs, step.action_mask
    return np.concatenate(xs), np.concatenate(ys)


def cross_entropy(p, y):
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint")
    ap.add_argument("--opponent", default="gin_hunter")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    policy = load_policy(args.checkpoint)
    if not policy.model.has_belief:
        raise SystemExit(f"{args.checkpoint} has no belief net (architecture "
                         f"{policy.meta['network'].get('architecture')!r}; it needs 'belief')")
    x, y = collect(policy, make_agent(args.opponent), args.games, args.seed)
    with torch.no_grad():
        belief = policy.model.actor.belief(torch.as_tensor(x)).numpy()
    unseen = x[:, UNSEEN_PLANE * NUM_CARDS:(UNSEEN_PLANE + 1) * NUM_CARDS] > 0.5
    hidden_held = (y * unseen).sum(1)  # the opponent's cards this player has not seen
    prior = np.where(unseen, (hidden_held / np.maximum(unseen.sum(1), 1))[:, None], 0.0)
    stock = _stock_size(x)
    print(f"{policy.name} against {args.opponent}: {len(x)} decisions of {args.games} hands, "
          f"{int(unseen.sum())} unseen cards")
    print("stock size    decisions   belief (nats/card)   uniform prior   gain")
    for name, keep in [("all", np.ones(len(x), bool)), ("31-21", stock >= 21), ("20-11", (stock <= 20) & (stock >= 11)),
                       ("10-0", stock <= 10)]:
        m = unseen & keep[:, None]
        b, u = cross_entropy(belief, y)[m].mean(), cross_entropy(prior, y)[m].mean()
        print(f"{name:>10}    {int(keep.sum()):9d}   {b:18.4f}   {u:13.4f}   {u - b:+.4f}")


if __name__ == "__main__":
    main()
