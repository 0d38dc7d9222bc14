"""How well can a player's view predict that its knock would be undercut?

``python bench/undercut_net.py BOT --opponents camper,gin_hunter,... --matches 1000
--seed 99 --test-seed 98 --out undercut.pt``

Plays BOT against each opponent (``--matches`` matches to 100 each, ``--seed``; then
again with ``--test-seed`` against ``--test-opponents``) and records, at every discard
turn where BOT may knock, its observation and whether its best knock (the least
deadwood) would be undercut by the opponent's real hand. Trains a classifier on the
observation and BOT's belief over the opponent's hand (an MLP, 2 x 256, dropout,
``--epochs`` passes) and prints its cross-entropy and AUC on the test games after each
pass; saves its weights for ``bench/knock_probe.py --rule net``.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from knock_probe import best_knock, undercut
from torch import nn

from agents import make_agent
from agents.evaluate import play
from ginenv import actions as A
from ginenv.baselines import check_batch
from ginenv.cards import NUM_CARDS
from ginenv.observation import OBS_SIZE
from ginenv.rules import Rules


def make_net() -> nn.Module:
    return nn.Sequential(
        nn.Linear(OBS_SIZE + NUM_CARDS, 256),
        nn.ReLU(),
        nn.Dropout(0.3),
        nn.Linear(256, 256),
        nn.ReLU(),
        nn.Linear(256, 1),
    )


class Recorder:
    name = "recorder"
    pure = True
    reads_state = True

    def __init__(self, bot, rules):
        self.bot, self.rules, self.x, self.y = bot, rules, [], []

    def act(self, observations, action_masks, state=None, seats=None):
        a = self.bot.act(observations, action_masks)
        obs, mask = check_batch(observations, action_masks)
        knocks = mask[:, A.KNOCK : A.DRAW_STOCK]
        rows = np.flatnonzero(knocks.any(1))
        if rows.size:
            seat = np.asarray(seats)[rows]
            card = best_knock(obs[rows], knocks[rows])
            hit = undercut(
                state._hands[rows, seat], card, state._hands[rows, 1 - seat], self.rules, state.knock_limit[rows]
            )
            self.x.append(obs[rows].astype(np.float32))
            self.y.append(hit.astype(np.float32))
        return a


def collect(bot, opponents, matches, seed, rules):
    rec = Recorder(bot, rules)
    for name in opponents:
        play(rec, make_agent(name, seed=seed), matches, rules, seed)
    x = torch.as_tensor(np.concatenate(rec.x))
    with torch.no_grad():
        x = torch.cat([x, bot.model.actor.belief(x)], 1)
    return x, torch.as_tensor(np.concatenate(rec.y))


def auc(score, y):
    order = np.argsort(score, kind="stable")
    rank = np.empty(len(score))
    rank[order] = np.arange(len(score))
    pos = y > 0.5
    return (rank[pos].mean() - (pos.sum() - 1) / 2) / (~pos).sum()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bot")
    ap.add_argument("--opponents", default="camper,gin_hunter,patient,knock_early")
    ap.add_argument("--test-opponents", default="camper,gin_hunter")
    ap.add_argument("--matches", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=99)
    ap.add_argument("--test-seed", type=int, default=98)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--out", default="undercut.pt")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rules = Rules.preset("standard")
    bot = make_agent(args.bot, seed=args.seed)
    xtr, ytr = collect(bot, args.opponents.split(","), args.matches, args.seed, rules)
    xte, yte = collect(bot, args.test_opponents.split(","), args.matches, args.test_seed, rules)
    print(f"{len(ytr)} training positions ({ytr.mean():.3f} undercut), {len(yte)} test ({yte.mean():.3f})")
    net = make_net()
    opt = torch.optim.Adam(net.parameters(), 1e-3, weight_decay=1e-4)
    for epoch in range(args.epochs):
        net.train()
        perm = torch.randperm(len(ytr))
        for i in range(0, len(perm), 512):
            b = perm[i : i + 512]
            loss = nn.functional.binary_cross_entropy_with_logits(net(xtr[b])[:, 0], ytr[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            s = net(xte)[:, 0]
            bce = nn.functional.binary_cross_entropy_with_logits(s, yte).item()
        print(f"pass {epoch + 1}: test cross-entropy {bce:.4f}, AUC {auc(s.numpy(), yte.numpy()):.3f}")
    torch.save(net.state_dict(), args.out)


if __name__ == "__main__":
    main()
