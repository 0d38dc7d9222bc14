"""A learnt reader of the cards the opponent needs: can a network, trained on the truth,
read them better than the belief net, and is denial on it worth anything?

The shipped bot's danger (``BeliefDeny.danger``: the share of opponent hands drawn from
its per-card belief in which a card joins a meld) ranks the bot's cards with an AUC of
about 0.79 against gin_hunter; the exact posterior, given gin_hunter's code and every
move it made, about 0.83-0.85 (``bench_model_reader.py``), and the oracle's flip test
says denial needs about 0.9. This bench trains a network directly on the question:
at the bot's discard turns, for each card it holds, does the card join a meld in the
opponent's real hand? Trained with a cross-entropy on that truth, the network's output
tends to the posterior of that event given its input (and the opponent it was trained
against), joint structure included (two of a card's neighbours held together), which
the per-card belief cannot express. With ``--history`` it also reads when the opponent
took, passed and threw each card (``History``), which the observation leaves out.

Steps (one run): play ``--train-hands`` single hands of the policy against the
opponent and record the input, the bot's hand and the truth at each of its discard
turns; fit ``DangerNet`` on them; on ``--test-hands`` other hands (seed + 1000), print
its AUC and cross-entropy beside the belief's danger on the same cards; then play the
policy with ``BeliefDeny``'s swap rule on the net's danger (``NetReader`` in
``bench_model_reader.ReaderDeny``) over
``--matches`` matches (seed 2026), beside the policy alone on the same deals, or with
``--soft w`` the softer ``bench_oracle.soft_deny``; each line counts the discard turns the rule
changed and the share of the bot's discards that join a meld of the opponent's.
``--weighted`` weights each held card's loss by the policy's probability of throwing
it, and the test also scores the card the policy means to throw.
``--truth misses,false-alarms`` adds hybrids (shown the opponent's hand: not fair)
that keep only one kind of the net's errors, to see which kind costs.
``--save``/``--load`` keep a trained net (safetensors). ``--actor`` scores instead the
danger net a ``danger`` checkpoint trained with its policy. Run:
``python bench/bench_danger_net.py [CHECKPOINT] --train-hands 160000 --epochs 3
--history`` (about 20 minutes on 2 cores, then a few minutes per 2000 matches).
"""

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch import nn

from agents import make_agent
from agents.evaluate import play
from agents import network
from agents.network import NUM_NEIGHBOUR_FEATURES, _relations, belief_features, belief_probabilities, neighbours
from agents.policy import load_policy
from ginenv import actions as A
from ginenv import core, melds
from ginenv.cards import NUM_CARDS
from ginenv.observation import NUM_PLANES, OBS_SIZE, observe
from ginenv.rules import Rules

_spec = importlib.util.spec_from_file_location("bench_model_reader", Path(__file__).resolve().parent / "bench_model_reader.py")
bench_model_reader = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_model_reader)
bench_oracle, top_card = bench_model_reader.bench_oracle, bench_model_reader.top_card


class History:
    """When the opponent made each of its moves this hand, which the observation does
    not say (it marks the cards it took, threw or passed, not when): for ``n`` games, the
    draw count (``state.turn``) at which it took each card from the pile, passed on each
    face-up card, and threw each card. ``watch_opponent`` is ``play``'s ``watch_b``; the
    record of a game is cleared when a new hand is dealt in it."""

    EVENTS = 3  # took, passed, threw

    def __init__(self, n: int):
        self.when = np.full((n, self.EVENTS, NUM_CARDS), -1, np.int16)
        self.hand_no = np.zeros(n, np.int64)

    def _new_hands(self, state, games):
        new = games[state.hand_no[games] != self.hand_no[games]]
        self.when[new] = -1
        self.hand_no[new] = state.hand_no[new]

    def watch_opponent(self, state, games, actions):
        self._new_hands(state, games)
        top = top_card(state, games)
        turn = state.turn[games]
        drawing = np.isin(state.phase[games], (core.OFFER, core.DRAW)) & (top >= 0)
        took = drawing & (actions == A.TAKE_DISCARD)
        passed = drawing & np.isin(actions, (A.PASS, A.DRAW_STOCK))
        threw = (state.phase[games] == core.DISCARD) & (actions < A.KNOCK)
        self.when[games[took], 0, top[took]] = turn[took]
        self.when[games[passed], 1, top[passed]] = turn[passed]
        self.when[games[threw], 2, actions[threw]] = turn[threw]

    def features(self, state, games):
        """``(len(games), 3 * 52)``: for each event and card, (draws since it + 1) / 20,
        0 where it did not happen."""
        self._new_hands(state, games)
        when = self.when[games].astype(np.float32)
        age = (state.turn[games].astype(np.float32)[:, None, None] - when + 1) / 20
        return np.where(when >= 0, age, 0).reshape(len(games), -1).astype(np.float32)


def collect(policy, opponent, hands: int, seed: int, history: bool = False, weighted: bool = False):
    """``(obs, held, truth)`` at the policy's discard turns over ``hands`` single hands
    against ``opponent``: the observation (with ``history``, the ``History`` features
    after it), the policy's hand (with ``weighted``, as loss weights: each held card's
    probability of being thrown by the policy, plus 0.05) and, for every card, whether it
    joins a meld in the opponent's real hand."""
    log = {"obs": [], "held": [], "truth": []}
    hist = History(hands) if history else None

    def watch(state, games, actions):
        g = games[state.phase[games] == core.DISCARD]
        if g.size:
            me = state.current[g].astype(np.int64)
            obs = observe(state.select(g), state.current[g])
            log["obs"].append(np.concatenate([obs, hist.features(state, g)], 1) if history else obs)
            held = state._hands[g, me]
            if weighted:  # each held card weighted by the policy's probability of throwing it, plus 0.05
                with torch.no_grad():
                    probs = policy.model.action_dist(torch.as_tensor(obs), torch.as_tensor(
                        core.legal_action_mask(state)[g])).probs.numpy()[:, A.DISCARD:A.KNOCK]
                held = held * (0.05 + probs).astype(np.float32)
            log["held"].append(held)
            log["truth"].append(melds.joins_meld(state._hands[g, 1 - me]))

    play(policy, opponent, hands, Rules(), seed, mode="hand", watch=watch,
         watch_b=hist.watch_opponent if history else None)
    return tuple(np.concatenate(log[k]) for k in ("obs", "held", "truth"))


class DangerNet(network.DangerNet):
    """``network.DangerNet`` (the ``danger`` actor's), on its own: its trunk reads the
    observation (and ``extra`` further card planes after it), its card MLP each card's
    planes, neighbour counts and the given policy's belief (frozen) with the belief's
    neighbour counts."""

    def __init__(self, belief_net, hidden: int = 256, card_hidden: int = 128, extra: int = 0):
        super().__init__(OBS_SIZE + extra * NUM_CARDS, [hidden, hidden],
                         NUM_PLANES + extra + NUM_NEIGHBOUR_FEATURES + 4, card_hidden)
        self.extra = extra  # further card planes after the observation (History's)
        self.belief_net = belief_net
        for p in self.belief_net.parameters():
            p.requires_grad_(False)
        self.register_buffer("relations", _relations(), persistent=False)

    def forward(self, x):
        b, obs = x.shape[0], x[:, :OBS_SIZE]
        planes = obs[:, :NUM_PLANES * NUM_CARDS].reshape(b, NUM_PLANES, NUM_CARDS).transpose(1, 2)
        if self.extra:
            planes = torch.cat([planes, x[:, OBS_SIZE:].reshape(b, self.extra, NUM_CARDS).transpose(1, 2)], 2)
        with torch.no_grad():
            p = belief_probabilities(obs, self.belief_net(obs))
        feats = torch.cat([planes, neighbours(obs, self.relations), belief_features(p, self.relations)], 2)
        return super().forward(x, feats)

    @torch.no_grad()
    def danger(self, x):
        return torch.sigmoid(self(torch.as_tensor(x))).numpy()


def fit(net, obs, held, truth, epochs: int, batch: int = 1024, lr: float = 1e-3, seed: int = 0):
    """Adam on the cross-entropy over the held cards (``held``: a mask or loss weights);
    returns the last epoch's mean loss."""
    gen = torch.Generator().manual_seed(seed)
    x, m, y = torch.as_tensor(obs), torch.as_tensor(held, dtype=torch.float32), torch.as_tensor(truth, dtype=torch.float32)
    params = [p for p in net.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    steps = epochs * (len(x) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=steps)
    for epoch in range(epochs):
        order, total, t0 = torch.randperm(len(x), generator=gen), 0.0, time.time()
        for i in range(len(x) // batch):
            idx = order[i * batch:(i + 1) * batch]
            bce = nn.functional.binary_cross_entropy_with_logits(net(x[idx]), y[idx], reduction="none")
            loss = (bce * m[idx]).sum() / m[idx].sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
        print(f"  epoch {epoch + 1}/{epochs}: loss {total / (len(x) // batch):.4f} ({time.time() - t0:.0f} s)",
              flush=True)
    return total / (len(x) // batch)


def cross_entropy(p, y) -> float:
    """Mean binary cross-entropy in nats, the probabilities clipped to [1e-4, 1 - 1e-4]
    (the belief's danger, a share of 32 sampled hands, can be exactly 0 or 1)."""
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return float(-np.where(y, np.log(p), np.log(1 - p)).mean())


#: NetReader's ``truth``: "" (fair), or a hybrid that is shown the opponent's hand (not a
#: fair bot) and keeps only one kind of the net's errors.
TRUTH = ("", "misses", "false-alarms")


class NetReader:
    """``DangerNet``'s danger as a reader for ``bench_model_reader.ReaderDeny``
    (``danger(state, games)``). For a net that reads ``History``'s features, pass
    ``watch_opponent`` as ``play``'s ``watch_b`` (``n`` games). ``truth`` (see ``TRUTH``),
    to see which of the net's errors cost: ``misses`` zeroes the danger of every card
    that does not join a meld of the opponent's (the net's misses kept, its false alarms
    removed); ``false-alarms`` sets every card that does to 1 (the reverse)."""

    def __init__(self, net, n: int = 0, truth: str = ""):
        if truth not in TRUTH:
            raise ValueError(f"unknown truth {truth!r}; valid: {', '.join(TRUTH)}")
        self.net, self.truth = net, truth
        self.history = History(n) if net.extra else None
        self.watch_opponent = self.history.watch_opponent if self.history else None

    def danger(self, state, games):
        x = observe(state.select(games), state.current[games])
        if self.history:
            x = np.concatenate([x, self.history.features(state, games)], 1)
        danger = self.net.danger(x)
        if self.truth:
            joins = melds.joins_meld(state._hands[games, 1 - state.current[games].astype(np.int64)])
            danger = np.where(joins, danger, 0.0) if self.truth == "misses" else np.where(joins, 1.0, danger)
        return danger


class ActorDanger:
    """The ``danger`` actor's own danger net (trained with the policy), read like a
    ``DangerNet``: ``danger(observations)``."""

    extra = 0

    def __init__(self, actor):
        if getattr(actor, "danger_net", None) is None:
            raise SystemExit("--actor needs a checkpoint with architecture 'danger'")
        self.actor = actor

    @torch.no_grad()
    def danger(self, x):
        return torch.sigmoid(self.actor.forward_with_aux(torch.as_tensor(x))[1]["danger"]).numpy()


def save_net(net, path):
    """The trained weights (the policy's belief net left out) as safetensors."""
    weights = {k: v.contiguous() for k, v in net.state_dict().items() if not k.startswith("belief_net.")}
    save_file(weights, str(path), metadata={"extra": str(net.extra)})


def load_net(path, belief_net, extra: int):
    with safe_open(str(path), "pt") as f:
        saved = int(f.metadata().get("extra", -1))
    if saved != extra:
        raise SystemExit(f"{path} holds a net with {saved} history planes, not {extra}: "
                         f"{'add' if saved else 'drop'} --history to use it")
    net = DangerNet(belief_net, extra=extra)
    missing, unexpected = net.load_state_dict(load_file(str(path)), strict=False)
    if unexpected or any(not k.startswith("belief_net.") for k in missing):
        raise SystemExit(f"{path} does not match DangerNet: missing {missing}, unexpected {unexpected}")
    return net


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", nargs="?", default="checkpoints/champion")
    p.add_argument("--opponent", default="gin_hunter", help="the opponent the net is trained and tested against")
    p.add_argument("--train-hands", type=int, default=160000)
    p.add_argument("--test-hands", type=int, default=2000)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--matches", type=int, default=2000)
    p.add_argument("--deny", default="0.5/0.01,0.3/0.01,0.5/0", help="threshold/min_prob pairs (see BeliefDeny)")
    p.add_argument("--opponents", default="gin_hunter,knock_early", help="the matches' opponents")
    p.add_argument("--history", action="store_true",
                   help="the net also reads when the opponent took, passed and threw each card (History)")
    p.add_argument("--truth", default="", help="also the deny rules with one kind of error only: misses, "
                   "false-alarms (comma-separated; shown the opponent's hand: not fair)")
    p.add_argument("--weighted", action="store_true",
                   help="weight each held card's loss by the policy's probability of throwing it (plus 0.05)")
    p.add_argument("--soft", default="", help="weights for the soft rule (bench_oracle.soft_deny), comma-separated")
    p.add_argument("--save", help="save the trained net here (safetensors)")
    p.add_argument("--load", help="skip the training: load a net saved with --save")
    p.add_argument("--actor", action="store_true",
                   help="skip the training: score the checkpoint's own danger net (architecture 'danger')")
    p.add_argument("--seed", type=int, default=11)
    args = p.parse_args(argv)
    torch.set_num_threads(2)
    torch.manual_seed(args.seed)
    policy = load_policy(args.checkpoint)
    if not policy.model.has_belief:
        raise SystemExit(f"{args.checkpoint} has no belief net; this bench needs architecture 'belief'")
    opponent = make_agent(args.opponent)
    extra = History.EVENTS if args.history else 0
    if args.actor:
        net = ActorDanger(policy.model.actor)
    elif args.load:
        net = load_net(args.load, policy.model.actor.belief_net, extra)
    else:
        t0 = time.time()
        obs, held, truth = collect(policy, opponent, args.train_hands, args.seed, args.history, args.weighted)
        print(f"{len(obs)} discard turns from {args.train_hands} hands against {args.opponent} "
              f"({time.time() - t0:.0f} s); {truth[held > 0].mean():.3f} of the held cards join a meld", flush=True)
        net = DangerNet(policy.model.actor.belief_net, extra=extra)
        fit(net, obs, held, truth, args.epochs, seed=args.seed)
        del obs, held, truth
        if args.save:
            save_net(net, args.save)
    x, weights, truth = collect(policy, opponent, args.test_hands, args.seed + 1000, args.history, weighted=True)
    held = weights > 0
    danger, belief = net.danger(x), bench_oracle.BeliefDeny(policy, 1.0, seed=args.seed).danger(x[:, :OBS_SIZE])
    mine, theirs = danger[held], belief[held]
    print(f"test: {len(x)} discard turns from {args.test_hands} hands (seed {args.seed + 1000}); "
          f"AUC: the net {bench_oracle.auc(mine, truth[held]):.3f}, the belief's danger "
          f"{bench_oracle.auc(theirs, truth[held]):.3f}; cross-entropy (nats a card): the net "
          f"{cross_entropy(mine, truth[held]):.4f}, the belief's danger {cross_entropy(theirs, truth[held]):.4f}, "
          f"a constant {cross_entropy(np.full(len(mine), truth[held].mean()), truth[held]):.4f}")
    rows, meant = np.arange(len(x)), weights.argmax(1)  # the card the policy means to throw
    print(f"on the card the policy means to throw ({truth[rows, meant].mean():.3f} of them join): AUC the net "
          f"{bench_oracle.auc(danger[rows, meant], truth[rows, meant]):.3f}, the belief's danger "
          f"{bench_oracle.auc(belief[rows, meant], truth[rows, meant]):.3f}")
    print("the net's calibration:")
    bench_oracle.print_calibration(mine, truth[held])
    if not args.matches:
        return
    print(f"{args.matches} matches to 100 per cell, seed 2026: win rate (95% interval)")
    for name in args.opponents.split(","):
        def deny(threshold, min_prob=0.0, soft=0.0, truth=""):
            reader = NetReader(net, args.matches, truth)
            return bench_model_reader.ReaderDeny(policy, reader, threshold, min_prob, record=True,
                                                 compare_belief=False, soft=soft)

        agents = {"none": deny(2.0)}  # never swaps: the policy, counted
        for spec in filter(None, args.deny.split(",")):
            t, m = map(float, spec.split("/"))
            agents[f"net deny {t:g}/{m:g}"] = deny(t, m)
            for truth in filter(None, args.truth.split(",")):
                agents[f"net deny {t:g}/{m:g}, {truth} only"] = deny(t, m, truth=truth)
        for w in map(float, filter(None, args.soft.split(","))):
            agents[f"net soft {w:g}"] = deny(1.0, soft=w)
        for label, agent in agents.items():
            r = play(agent, make_agent(name), args.matches, Rules(), 2026, watch_b=agent.reader.watch_opponent)
            lo, hi = r["win_rate_a_ci95"]
            fed = np.concatenate(agent.log["fed"])
            line = (f"  vs {name:<12} {label:<34} {r['win_rate_a']:.3f} ({lo:.3f}-{hi:.3f}); changes "
                    f"{agent.changed / max(agent.turns, 1):.3f} of its discard turns, {fed.mean():.3f} of its "
                    f"discards join a meld of the opponent's")
            print(line, flush=True)


if __name__ == "__main__":
    main()
