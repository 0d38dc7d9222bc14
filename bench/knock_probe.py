"""What the knock decision is worth: a bot with its knocks overridden, against an opponent.

``python bench/knock_probe.py BOT OPPONENT --rule R [--matches 1000] [--seed 2026]``

Where the bot may knock and its policy discards instead, or knocks, a rule decides:

- ``plain``: the bot as it is (the reference, on the same deals);
- ``always``: knock whenever it may (with the discard that leaves the least deadwood);
- ``oracle``: knock whenever that knock would not be undercut, judged on the opponent's
  real hand (cheats: an upper bound on what reading the opponent's hand is worth);
- ``belief``: knock where the undercut's share in ``--worlds`` worlds dealt by the bot's
  own belief net (``ginenv.worlds.resample_hidden`` with the belief's odds) is at most
  ``--threshold``;
- ``net``: knock where a classifier trained by ``bench/undercut_net.py`` gives the
  undercut a probability of at most ``--threshold``.

With ``--veto``, a knock the policy chose is turned into the same card's discard where the
rule judges it unsafe (not with ``always``). Prints the bot's share of matches won, with
its 95% Wilson interval.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from agents import make_agent
from agents.evaluate import play
from ginenv import actions as A
from ginenv.baselines import _discard_key, check_batch
from ginenv.observation import deadwood_after
from ginenv.rules import Rules
from ginenv.scoring import score_hands
from ginenv.worlds import resample_hidden

UNDERCUT = 3  # ginenv.scoring.KIND_NAMES


def best_knock(obs, knocks):
    """The knock card leaving the least deadwood, per row."""
    return np.argmin(_discard_key(knocks, deadwood_after(obs)), 1)


def undercut(hands, card, defender, rules, knock_limits):
    """Would knocking with ``card`` be undercut by ``defender``'s hand?"""
    own = hands.copy()
    own[np.arange(len(own)), card] = False
    return score_hands(own, defender, rules, knock_limits=knock_limits)["kind"] == UNDERCUT


class KnockRule:
    name = "knock_rule"
    pure = False
    reads_state = True

    def __init__(self, bot, rule, rules, threshold=0.0, worlds=32, veto=False, net=None, seed=0):
        self.bot, self.rule, self.rules = bot, rule, rules
        self.threshold, self.worlds, self.veto, self.net = threshold, worlds, veto, net
        self.rng = np.random.default_rng(seed)

    def risk(self, obs, state, rows, seats, card):
        """``(n,)``: the rule's estimate that the knock with ``card`` is undercut."""
        if self.rule == "always":
            return np.zeros(len(rows))
        if self.rule == "oracle":
            hands = state._hands[rows, seats]
            return undercut(hands, card, state._hands[rows, 1 - seats], self.rules, state.knock_limit[rows])
        with torch.no_grad():
            t = torch.as_tensor(obs)
            belief = self.bot.model.actor.belief(t)
            if self.rule == "net":
                return torch.sigmoid(self.net(torch.cat([t, belief], 1))[:, 0]).numpy()
        p = belief.clamp(1e-3, 1 - 1e-3).numpy()
        w = self.worlds
        per = np.repeat(np.arange(len(rows)), w)
        worlds = resample_hidden(state.select(rows[per]), seats[per], self.rng, (p / (1 - p))[per])
        i = np.arange(len(per))
        hands = worlds._hands[i, seats[per]]
        hit = undercut(hands, card[per], worlds._hands[i, 1 - seats[per]], self.rules, worlds.knock_limit)
        return hit.reshape(len(rows), w).mean(1)

    def act(self, observations, action_masks, state=None, seats=None):
        a = np.asarray(self.bot.act(observations, action_masks)).copy()
        if self.rule == "plain":
            return a
        obs, mask = check_batch(observations, action_masks)
        knocks = mask[:, A.KNOCK : A.DRAW_STOCK]
        rows = np.flatnonzero(knocks.any(1))
        if not rows.size:
            return a
        card = best_knock(obs[rows], knocks[rows])
        risk = self.risk(obs[rows].astype(np.float32), state, rows, np.asarray(seats)[rows], card)
        chose_knock = a[rows] >= A.KNOCK
        add = (risk <= self.threshold) & ~chose_knock
        a[rows[add]] = A.KNOCK + card[add]
        if self.veto and self.rule != "always":
            v = (risk > self.threshold) & chose_knock
            a[rows[v]] += A.DISCARD - A.KNOCK
        return a


def load_net(path):
    from undercut_net import make_net

    net = make_net()
    net.load_state_dict(torch.load(path, weights_only=True))
    return net.eval()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bot")
    ap.add_argument("opponent")
    ap.add_argument("--rule", choices=("plain", "always", "oracle", "belief", "net"), default="plain")
    ap.add_argument("--threshold", type=float, default=0.0)
    ap.add_argument("--worlds", type=int, default=32)
    ap.add_argument("--veto", action="store_true")
    ap.add_argument("--net", help="the classifier's weights (bench/undercut_net.py), for --rule net")
    ap.add_argument("--matches", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    rules = Rules.preset("standard")
    bot = make_agent(args.bot, seed=args.seed)
    net = load_net(args.net) if args.rule == "net" else None
    agent = KnockRule(bot, args.rule, rules, args.threshold, args.worlds, args.veto, net, args.seed)
    r = play(agent, make_agent(args.opponent, seed=args.seed), args.matches, rules, args.seed)
    lo, hi = r["win_rate_a_ci95"]
    print(
        f"{args.bot} --rule {args.rule} (threshold {args.threshold}{', veto' if args.veto else ''}) "
        f"vs {args.opponent}: "
        f"{r['win_rate_a']:.3f} ({lo:.3f}-{hi:.3f}) of {args.matches} matches"
    )


if __name__ == "__main__":
    main()
