"""Ceilings: what would seeing the opponent's hand be worth to the bot?
Run: ``python bench/bench_oracle.py [CHECKPOINT] --matches 2000 --seed 2026``.

The bot plays its own policy, but a wrapper that is shown the opponent's hand (not a
fair bot: a measure of what the hidden information is worth, and so of how far a better
belief could take it) overrides it at its discard turns:

- ``deny``: never throw a card that joins a meld in the opponent's hand (the cards
  gin_hunter takes from the pile) while another legal discard or knock does not: play
  the policy's most probable action among those instead.
- ``alarm``: knock whenever a knock is legal and the opponent is one card from gin
  (some card the bot does not hold would complete its gin), with the legal knock that
  leaves the least deadwood.
- ``both``: the two together.
- ``deny, q wrong``: ``deny`` with each card's answer flipped with probability q, to see
  how exact a fair reader of the hand would have to be; ``--errors m/f`` splits the
  errors: a card that joins is missed with probability m, a card that does not is
  flagged with probability f (a false alarm).

And the fair counterpart, ``BeliefDeny`` (``belief deny t/m``): no hand is revealed; a
card's danger is the share of 32 opponent hands drawn from the belief net in which it
joins a meld, and a discard of danger t or more is swapped for the policy's most
probable action below t of probability m or more. ``--reader-hands N`` measures that
danger against the truth instead (calibration and AUC), and how often the bot's own
discards join a meld of the opponent's.

Matches to 100, standard rules, seats and first dealers alternating, the same deals for
every variant; the win rate with its 95% Wilson interval.
"""

import argparse

import numpy as np
import torch

from agents import make_agent
from agents.baselines import _discard_key
from agents.evaluate import play
from agents.network import OPPONENT_TOOK_PLANE, UNSEEN_PLANE
from agents.policy import load_policy
from ginenv import actions as A
from ginenv import core, melds
from ginenv.cards import NUM_CARDS
from ginenv.melds import joins_meld, with_each_card
from ginenv.observation import observe
from ginenv.rules import Rules

def gin_cards(hands):
    """``(n, 52)`` bool: card c would give the 10-card hand gin (11 cards with a discard
    that leaves no deadwood)."""
    n = len(hands)
    after = melds.masks_after_discard(melds.suit_masks(with_each_card(hands)))
    return (after.min(1) == 0).reshape(n, NUM_CARDS) & ~hands


class Oracle:
    """The policy, overridden at discard turns with the opponent's hand revealed (see the
    module docstring). ``flip``: each card's "joins a meld" answer is flipped with that
    probability before ``deny`` uses it (a reader of the hand that errs that often); or,
    split, a card that joins is missed with probability ``miss`` and one that does not
    is flagged with probability ``false_alarm``."""

    def __init__(self, policy, deny: bool, alarm: bool, flip: float = 0.0, seed: int = 0,
                 miss: float = 0.0, false_alarm: float = 0.0):
        self.model, self.deny, self.alarm = policy.model, deny, alarm
        self.miss, self.false_alarm = (flip, flip) if flip else (miss, false_alarm)
        self.rng = np.random.default_rng(seed)

    @torch.no_grad()
    def act_state(self, state, games):
        sub = state.select(games)
        me = sub.current.astype(np.int64)
        mask = core.legal_action_mask(sub)
        obs = observe(sub, me)
        probs = self.model.action_dist(torch.as_tensor(obs), torch.as_tensor(mask)).probs.numpy()
        out = probs.argmax(1)
        d = np.flatnonzero(sub.phase == core.DISCARD)
        if not d.size:
            return out
        theirs, mine = sub._hands[d, 1 - me[d]], sub._hands[d, me[d]]
        m = mask[d]
        if self.deny:
            joins = joins_meld(theirs)
            if self.miss or self.false_alarm:
                r = self.rng.random(joins.shape)
                joins = np.where(joins, r >= self.miss, r < self.false_alarm)
            out[d] = swap_dangerous(out[d], probs[d], m, joins.astype(float), 0.5, 0.0)
        if self.alarm:
            knocks = m[:, A.KNOCK:A.DRAW_STOCK]
            ready = (gin_cards(theirs) & ~mine).any(1)
            after = melds.deadwood_after_discard(mine).astype(np.int64)
            best = np.argmin(_discard_key(knocks, after), 1)
            force = ready & knocks.any(1) & ~m[:, A.BIG_GIN]
            out[d[force]] = A.KNOCK + best[force]
        return out


def pick_cards(pool, k, rng, log_odds=None):
    """``(M, 52)`` bool: ``k[i]`` cards of ``pool[i]`` drawn without replacement,
    uniformly or, given ``log_odds`` ``(M, 52)``, with weights ``exp(log_odds)``
    (successive sampling by Gumbel top-k keys)."""
    score = rng.gumbel(size=pool.shape) if log_odds is None else log_odds + rng.gumbel(size=pool.shape)
    order = np.argsort(np.where(pool, -score, np.inf), 1, kind="stable")
    rank = np.empty_like(order)
    rank[np.arange(len(order))[:, None], order] = np.arange(NUM_CARDS)
    return pool & (rank < np.asarray(k)[:, None])


def sample_opponent_hands(obs, belief, worlds: int, rng):
    """``(B * worlds, 52)`` opponent hands consistent with the observations of a player in
    its discard turn (the opponent holds 10 cards): the cards it took and still holds,
    plus unseen cards drawn without replacement by the belief's odds (Gumbel top-k)."""
    unseen = np.repeat(obs[:, UNSEEN_PLANE * NUM_CARDS:(UNSEEN_PLANE + 1) * NUM_CARDS] > 0.5, worlds, 0)
    known = np.repeat(obs[:, OPPONENT_TOOK_PLANE * NUM_CARDS:(OPPONENT_TOOK_PLANE + 1) * NUM_CARDS] > 0.5, worlds, 0)
    odds = np.repeat(np.log(belief / (1 - belief)), worlds, 0)
    return known | pick_cards(unseen, 10 - known.sum(1), rng, odds)


class BeliefDeny:
    """The fair counterpart of ``deny``: each card's danger is the share of ``worlds``
    opponent hands, drawn from the belief net, in which it joins a meld. If the policy's
    discard has danger ``threshold`` or more, play the policy's most probable legal action
    below it (a discard of lower danger, or a knock) of probability at least
    ``min_prob``, if there is one. Acts on observations alone."""

    def __init__(self, policy, threshold: float, min_prob: float = 0.0, worlds: int = 32, seed: int = 0):
        if not policy.model.has_belief:
            raise ValueError("BeliefDeny needs a checkpoint with a belief net (architecture: belief)")
        self.model, self.threshold, self.min_prob, self.worlds = policy.model, threshold, min_prob, worlds
        self.rng = np.random.default_rng(seed)

    @torch.no_grad()
    def danger(self, obs):
        """``(B, 52)``: the share of the sampled opponent hands each card joins a meld in."""
        belief = self.model.actor.belief(torch.as_tensor(obs)).double().numpy().clip(1e-6, 1 - 1e-6)
        hands = sample_opponent_hands(obs, belief, self.worlds, self.rng)
        return joins_meld(hands).reshape(len(obs), self.worlds, NUM_CARDS).mean(1)

    @torch.no_grad()
    def act(self, obs, mask):
        probs = self.model.action_dist(torch.as_tensor(obs), torch.as_tensor(mask)).probs.numpy()
        out = probs.argmax(1)
        d = np.flatnonzero(mask[:, A.DISCARD:A.KNOCK].any(1))
        if not d.size:
            return out
        out[d] = swap_dangerous(out[d], probs[d], mask[d], self.danger(obs[d]), self.threshold, self.min_prob)
        return out


def swap_dangerous(out, probs, mask, card_danger, threshold: float, min_prob: float):
    """The denial rule of ``BeliefDeny``: where the chosen action ``out`` discards a card
    of danger ``threshold`` or more (``card_danger``: ``(B, 52)``), the most probable
    legal action below it (a safer discard, or a knock) of probability at least
    ``min_prob``, if any; the other choices unchanged."""
    danger = np.zeros((len(out), A.NUM_ACTIONS))
    danger[:, A.DISCARD:A.KNOCK] = card_danger
    ok = mask & (danger < threshold) & (probs >= min_prob)
    use = (danger[np.arange(len(out)), out] >= threshold) & ok.any(1)
    out = out.copy()
    out[use] = np.where(ok[use], probs[use], -1.0).argmax(1)
    return out


def soft_deny(probs, mask, card_danger, weight: float):
    """A softer rule than the swap: the legal action that maximises log P_policy(a) +
    ``weight`` * log P(the card thrown does not join a meld), the second term 0 for
    actions that throw no card face up (knocks included). ``weight`` 0: the policy's
    own choice; large: the safest discard the policy gives any weight."""
    score = np.where(mask, np.log(np.maximum(probs, 1e-30)), -np.inf)
    score[:, A.DISCARD:A.KNOCK] += weight * np.log(np.clip(1 - card_danger, 1e-6, 1))
    return score.argmax(1)


def auc(score, truth) -> float:
    """Area under the ROC curve: the chance that a random positive scores above a random
    negative (ties count half; Mann-Whitney)."""
    _, inverse, counts = np.unique(score, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)
    ranks = ((last - counts + 1 + last) / 2)[inverse]  # 1-based ranks, ties averaged
    pos = int(truth.sum())
    return float((ranks[truth].sum() - pos * (pos + 1) / 2) / (pos * (len(truth) - pos)))


def print_calibration(danger, truth):
    """For bands of danger: the share of the cards in the band, and of those that join."""
    edges = [0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0001]
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (danger >= lo) & (danger < hi)
        print(f"  danger {lo:.2f}-{min(hi, 1):.2f}: {sel.mean():.3f} of the cards, "
              f"{truth[sel].mean() if sel.any() else float('nan'):.3f} of them join")


def record_reading(log, state, games, danger, actions):
    """Append to ``log`` (lists ``danger``, ``truth``, ``fed``), for the player to move in
    its discard turn in ``games``: each held card's ``danger`` (``(len(games), 52)``) and
    whether it joins a meld in the opponent's real hand, and whether its action, if a
    discard, did. Returns, for every card, whether it joins (``(len(games), 52)``)."""
    me = state.current[games].astype(np.int64)
    hand = state._hands[games, me]
    joins = joins_meld(state._hands[games, 1 - me])
    log["danger"].append(danger[hand])
    log["truth"].append(joins[hand])
    thrown = np.flatnonzero((actions >= A.DISCARD) & (actions < A.KNOCK))
    log["fed"].append(joins[thrown, actions[thrown] - A.DISCARD])
    return joins


def reader_quality(policy, opponent, n: int, rules: Rules, seed: int, worlds: int = 32):
    """The belief's danger against the truth, at the policy's discard turns over n single
    hands against ``opponent``: for the cards in the policy's hand, the danger
    (``BeliefDeny.danger``) and whether the card joins a meld in the opponent's real hand;
    and whether the policy's own discard did. Returns ``(danger, truth, fed)``."""
    reader = BeliefDeny(policy, 1.0, worlds=worlds, seed=seed)
    log = {"danger": [], "truth": [], "fed": []}

    def watch(state, games, actions):
        d = np.flatnonzero(state.phase[games] == core.DISCARD)
        if d.size:
            g = games[d]
            record_reading(log, state, g, reader.danger(observe(state.select(g), state.current[g])), actions[d])

    play(policy, opponent, n, rules, seed, mode="hand", watch=watch)
    return tuple(np.concatenate(log[k]) for k in ("danger", "truth", "fed"))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", nargs="?", default="checkpoints/champion")
    p.add_argument("--opponents", default="gin_hunter,knock_early")
    p.add_argument("--matches", type=int, default=2000)
    p.add_argument("--flips", default="0.05,0.1,0.2",
                   help="deny with each card's answer flipped with these probabilities (a reader that errs)")
    p.add_argument("--errors", default="",
                   help="deny with split errors: miss/false_alarm pairs, e.g. 0.2/0,0/0.05")
    p.add_argument("--fair", default="0.5/0,0.3/0,0.5/0.01,0.3/0.01",
                   help="fair denial by the belief: threshold/min_prob pairs (see BeliefDeny)")
    p.add_argument("--reader-hands", type=int, default=0,
                   help="instead, measure the belief's danger against the truth over this many single hands")
    p.add_argument("--seed", type=int, default=2026)
    args = p.parse_args(argv)
    torch.set_num_threads(2)
    policy = load_policy(args.checkpoint)
    variants = {"none": (False, False, 0.0), "deny": (True, False, 0.0), "alarm": (False, True, 0.0),
                "both": (True, True, 0.0)}
    variants.update({f"deny, {q:.0%} wrong": (True, False, q) for q in map(float, filter(None, args.flips.split(",")))})
    agents = {k: (lambda v=v: Oracle(policy, *v)) for k, v in variants.items()}
    for spec in filter(None, args.errors.split(",")):
        m, f = map(float, spec.split("/"))
        agents[f"deny, {m:.0%} missed, {f:.0%} false"] = lambda m=m, f=f: Oracle(policy, True, False, miss=m, false_alarm=f)
    for spec in filter(None, args.fair.split(",")):
        threshold, min_prob = map(float, spec.split("/"))
        agents[f"belief deny {threshold:g}/{min_prob:g}"] = lambda t=threshold, m=min_prob: BeliefDeny(policy, t, m)
    if args.reader_hands:
        for name in args.opponents.split(","):
            danger, truth, fed = reader_quality(policy, make_agent(name), args.reader_hands, Rules(), args.seed)
            print(f"{args.reader_hands} hands vs {name}, seed {args.seed}: of the bot's hand cards at its discard "
                  f"turns {truth.mean():.3f} join a meld of the opponent's; of its discards, {fed.mean():.3f}. "
                  f"The belief's danger: AUC {auc(danger, truth):.3f}")
            print_calibration(danger, truth)
        return
    print(f"{args.matches} matches to 100 per cell, seed {args.seed}: win rate (95% interval)")
    for name in args.opponents.split(","):
        for label, agent in agents.items():
            r = play(agent(), make_agent(name), args.matches, Rules(), args.seed)
            lo, hi = r["win_rate_a_ci95"]
            print(f"  vs {name:<12} {label:<22} {r['win_rate_a']:.3f} ({lo:.3f}-{hi:.3f})", flush=True)


if __name__ == "__main__":
    main()
