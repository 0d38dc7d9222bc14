"""Is the order of the discard pile worth a new observation version? A probe.

Plays the shipped bot against an opponent (marjj by default), both seats, and keeps each
decision's observation (version 1), a *recency plane* (for each card in the discard pile,
1 / its depth from the top: 1 for the top card, 1/2 below it, ...; what version 1 lacks:
it shows the pile as a set), and the opponent's hand. Networks of the same shape then
learn to read the opponent's hand, one from version 1, one from version 1 plus the recency
plane, on the same positions, from fresh weights and from the shipped bot's own belief net
(the recency columns at zero weight); the held-out log loss on the cards the player has not seen
(and the share of the opponent's unseen cards among the 3 most likely) says how much the
order adds to what the belief net can know.

    python bench/order_probe.py --games 1024 --steps 300 --epochs 6
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agents.base import choose
from agents.registry import make_agent
from ginenv import core
from ginenv.cards import NUM_CARDS
from ginenv.observation import OBS_SIZE, observe, plane


def recency(s: core.State, rows: np.ndarray) -> np.ndarray:
    """``(len(rows), 52)``: 1 / depth from the top of each pile card, 0 off the pile."""
    out = np.zeros((len(rows), NUM_CARDS), np.float32)
    for k, i in enumerate(rows):
        n = int(s.pile_size[i])
        for depth, c in enumerate(s.pile[i, :n][::-1]):
            out[k, c] = 1.0 / (depth + 1)
    return out


def collect(opponent: str, games: int, steps: int, seed: int):
    bot, opp = make_agent("shipped"), make_agent(opponent, seed=seed)
    s = core.init(games, "standard", seed, mode="hand", auto_reset=True)
    bot_seat = np.arange(games) % 2
    xs, rs, ys, us = [], [], [], []
    for _ in range(steps):
        mover = s.current.astype(np.int64)
        obs = observe(s, mover)
        mask = core.legal_action_mask(s)
        live = s.phase != core.DONE
        rows = np.flatnonzero(live)
        xs.append(obs[rows])
        rs.append(recency(s, rows))
        ys.append(s.hands_of(1 - mover)[rows])
        us.append(plane(obs[rows], "unseen") > 0)
        actions = np.zeros(games, np.int64)
        for who, agent in ((True, bot), (False, opp)):
            sel = np.flatnonzero(live & ((mover == bot_seat) == who))
            if sel.size:
                actions[sel] = choose(agent, obs[sel], mask[sel])
        s = core.step(s, actions)
        bot_seat = np.where(s.game_ended, 1 - bot_seat, bot_seat)
    return (np.concatenate(a) for a in (xs, rs, ys, us))


def start_net(width: int, from_shipped: bool, seed: int):
    """A belief-shaped MLP: fresh, or the shipped bot's belief net (extra inputs at zero weight)."""
    torch.manual_seed(seed)
    net = torch.nn.Sequential(
        torch.nn.Linear(width, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, NUM_CARDS),
    )
    if from_shipped:
        own = make_agent("shipped").model.actor.belief_net
        with torch.no_grad():
            for k in (0, 2, 4):
                net[k].bias.copy_(own[k].bias)
                net[k].weight.zero_()
                net[k].weight[:, : own[k].weight.shape[1]].copy_(own[k].weight)
    return net


def fit(net, x, y, unseen, train, test, epochs, seed, lr):
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    xt, yt, ut = (torch.as_tensor(a) for a in (x, y.astype(np.float32), unseen.astype(np.float32)))
    rng = np.random.default_rng(seed)

    def loss_of(rows):
        logits = net(xt[rows])
        bce = torch.nn.functional.binary_cross_entropy_with_logits(logits, yt[rows], reduction="none")
        return (bce * ut[rows]).sum() / ut[rows].sum(), logits

    for _ in range(epochs):
        for b in np.array_split(rng.permutation(train), max(1, len(train) // 512)):
            loss = loss_of(b)[0]
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        bce, logits = loss_of(test)
        top = logits.masked_fill(ut[test] == 0, -1e9).topk(3, dim=1).indices
        hit = yt[test].gather(1, top).mean()
    return float(bce), float(hit)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--opponent", default="marjj")
    p.add_argument("--games", type=int, default=1024)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--seed", type=int, default=2026)
    a = p.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    x, r, y, u = collect(a.opponent, a.games, a.steps, a.seed)
    keep = u.sum(1) > 0
    x, r, y, u = x[keep], r[keep], y[keep], u[keep]
    print(f"{len(x)} positions against {a.opponent} in {time.perf_counter() - t0:.0f} s")
    # Hold out whole stretches of play (the last fifth), not random rows of the same hands.
    cut = int(len(x) * 0.8)
    train, test = np.arange(cut), np.arange(cut, len(x))
    assert x.shape[1] == OBS_SIZE
    # The reference: the shipped bot's own belief net (trained inside PPO) on the same positions.
    prob = np.clip(make_agent("shipped").belief(x[test]), 1e-6, 1 - 1e-6)
    yt, ut = y[test], u[test]
    own = -(yt * np.log(prob) + (1 - yt) * np.log(1 - prob))[ut].mean()
    hit = np.take_along_axis(yt, np.argsort(-np.where(ut, prob, -1.0), 1)[:, :3], 1).mean()
    name = "the shipped belief net"
    print(f"{name:30s}: held-out log loss {own:.4f}, top-3 unseen in the opponent's hand {hit:.3f}")
    for start in ("fresh", "shipped"):
        for name, feats in (("version 1", x), ("version 1 + recency", np.concatenate([x, r], 1))):
            for seed in (0, 1):
                net = start_net(feats.shape[1], start == "shipped", seed)
                lr = 1e-4 if start == "shipped" else 1e-3
                bce, hit = fit(net, feats, y, u, train, test, a.epochs, seed, lr)
                print(
                    f"{start:7s} {name:22s} seed {seed}: held-out log loss {bce:.4f}, "
                    f"top-3 unseen in the opponent's hand {hit:.3f}"
                )


if __name__ == "__main__":
    main()
