"""Experiment probe: how far could a perfect knock decision take a policy against marjj?

The policy plays as it does, but where it may knock an oracle that sees the opponent's
hand (a cheat: a bound, never a player) scores every legal knock exactly
(``ginenv.scoring.score_hands`` against the real hand, lay-offs included) and

- ``safe``: replaces a knock that would lose the hand (undercut) by the policy's best
  discard; every other move is the policy's;
- ``eager``: also knocks, with the card that scores best, wherever a knock wins the hand;
- ``none``: the policy as it is (the reference, same deals).

If even ``eager`` stays short of 0.60, knowing which knocks are safe (what decision-time
search buys, and what a learned knock-value head could at best learn) is not enough.

    python bench/knock_oracle.py checkpoints/anticamper_priced --seed 2026 --matches 1000
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from agents import make_agent
from agents.evaluate import play
from ginenv.actions import DRAW_STOCK, KNOCK
from ginenv.cards import NUM_CARDS
from ginenv.rules import PRESETS
from ginenv.scoring import score_hands


def knock_nets(knocks, own, opp, state) -> np.ndarray:
    """``(B, 52)`` int: for each legal knock card (``knocks``), the knocker's points minus
    the defender's if the mover knocked with it against the opponent's real hand ``opp``
    (lay-offs included); ``-10**6`` where the knock is not legal."""
    net = np.full(knocks.shape, -(10**6), np.int64)
    for c in range(NUM_CARDS):
        can = np.flatnonzero(knocks[:, c])
        if can.size:
            kh = own[can].copy()
            kh[:, c] = False
            r = score_hands(kh, opp[can], state.rules, knock_limits=state.knock_limit[can])
            net[can, c] = r["knocker_points"] - r["defender_points"]
    return net


class KnockRule:
    """The policy, with its knocks checked by ``scorer(observations, state, seats, knocks)``
    -> ``(B, 52)`` knock values (points won minus lost): ``safe`` vetoes a knock valued
    under ``veto_at`` (the policy's best discard instead), ``eager`` also knocks with the
    best card where its value is over ``eager_at``; ``none`` is the policy alone."""

    reads_state = True

    def __init__(self, policy, scorer, kind: str, veto_at: float = 0.0, eager_at: float = 0.0):
        self.policy, self.scorer, self.kind = policy, scorer, kind
        self.veto_at, self.eager_at = veto_at, eager_at
        self.name = f"{policy.name}+knocks={kind}"
        self.changed = 0

    def act(self, observations, action_masks, state=None, seats=None):
        actions = np.asarray(self.policy.act(observations, action_masks)).copy()
        if self.kind == "none":
            return actions
        knocks = action_masks[:, KNOCK:DRAW_STOCK]
        rows = np.flatnonzero(knocks.any(1))
        if not rows.size:
            return actions
        value = self.scorer(observations[rows], state.select(rows), seats[rows], knocks[rows])
        value = np.where(knocks[rows], value, -np.inf)
        at = np.arange(rows.size)
        best = value.argmax(1)
        mine = actions[rows]
        policy_knocks = (mine >= KNOCK) & (mine < DRAW_STOCK)
        bad = policy_knocks & (value[at, np.clip(mine - KNOCK, 0, NUM_CARDS - 1)] < self.veto_at)
        no_knock = action_masks[rows].copy()
        no_knock[:, KNOCK:DRAW_STOCK] = False
        fallback = np.asarray(self.policy.act(observations[rows], no_knock))
        new = np.where(bad, fallback, mine)
        if self.kind == "eager":
            good = value[at, best] > self.eager_at
            new = np.where(good, KNOCK + best, new)
        self.changed += int((new != mine).sum())
        actions[rows] = new
        return actions


def oracle(observations, state, seats, knocks):
    """The exact knock values against the opponent's real hand (a cheat: a bound)."""
    return knock_nets(knocks, state.hands_of(seats), state.hands_of(1 - seats), state).astype(np.float64)


def collect(checkpoint: str, opponent: str, games: int, steps: int, seed: int):
    """The checkpoint's own positions where it may knock (both seats, against
    ``opponent``): observations, legal knocks and their exact values."""
    from agents.base import choose
    from ginenv import core
    from ginenv.observation import observe

    bot, opp = make_agent(checkpoint), make_agent(opponent, seed=seed)
    s = core.init(games, "standard", seed, mode="hand", auto_reset=True)
    bot_seat = np.arange(games) % 2
    xs, ks, vs, keys, knocked = [], [], [], [], []
    hand_id = np.zeros(games, np.int64)  # hands finished so far in each game slot
    outcome = {}  # (game, hand) -> the bot's points minus the opponent's in that hand
    for _ in range(steps):
        mover = s.current.astype(np.int64)
        obs, mask = observe(s, mover), core.legal_action_mask(s)
        mine = mover == bot_seat
        rows = np.flatnonzero(mine & mask[:, KNOCK:DRAW_STOCK].any(1))
        if rows.size:
            sub = s.select(rows)
            knocks = mask[rows, KNOCK:DRAW_STOCK]
            xs.append(obs[rows])
            ks.append(knocks)
            vs.append(knock_nets(knocks, sub.hands_of(mover[rows]), sub.hands_of(1 - mover[rows]), sub))
            keys.append(np.stack([rows, hand_id[rows]], 1))
        actions = np.zeros(games, np.int64)
        for who, agent in ((True, bot), (False, opp)):
            sel = np.flatnonzero((mine == who) & (s.phase != core.DONE))
            if sel.size:
                actions[sel] = choose(agent, obs[sel], mask[sel])
        if rows.size:
            knocked.append((actions[rows] >= KNOCK) & (actions[rows] < DRAW_STOCK))
        s = core.step(s, actions)
        for g in np.flatnonzero(s.hand_ended):
            pts = s.hand_points[g]
            outcome[(g, hand_id[g])] = int(pts[bot_seat[g]]) - int(pts[1 - bot_seat[g]])
        hand_id += s.hand_ended
        bot_seat = np.where(s.game_ended, 1 - bot_seat, bot_seat)
    keys = np.concatenate(keys)
    went_on = np.array([outcome.get((int(g), int(h)), np.nan) for g, h in keys], np.float64)
    went_on[np.concatenate(knocked)] = np.nan  # the hand's result where the bot did not knock
    return np.concatenate(xs), np.concatenate(ks), np.concatenate(vs), went_on


def learn(x, knocks, values, epochs: int, seed: int = 0, went_on=None):
    """A network regressing each legal knock's value / 100: the shipped bot's belief-net
    trunk reads the position (a context of 256), and one small head shared by the 52
    cards maps (context, the card's deadwood after the knock, whether that is gin) to the
    knock's value. Returns ``scorer`` for ``KnockRule``, the held-out squared error and the
    held-out share of knocks whose sign (wins or loses the hand) it gets right."""
    import torch

    from ginenv.observation import DEADWOOD_SCALE, plane

    torch.manual_seed(seed)
    own = make_agent("shipped").model.actor.belief_net

    class KnockValue(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = torch.nn.Sequential(
                torch.nn.Linear(x.shape[1], 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU()
            )
            self.head = torch.nn.Sequential(torch.nn.Linear(258, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1))
            self.going_on = torch.nn.Sequential(torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1))
            with torch.no_grad():
                for k in (0, 2):
                    self.trunk[k].weight.copy_(own[k].weight)
                    self.trunk[k].bias.copy_(own[k].bias)

        def forward(self, obs, both=False):
            context = self.trunk(obs)
            g = context[:, None].expand(-1, NUM_CARDS, -1)
            dw = torch.as_tensor(plane(obs.numpy(), "deadwood_after_discard"))[..., None]
            held = torch.as_tensor(plane(obs.numpy(), "own_hand"))[..., None]
            gin = ((dw * DEADWOOD_SCALE < 0.5) & (held > 0.5)).float()
            knock = self.head(torch.cat([g, dw * 10.0, gin], -1))[..., 0]
            return (knock, self.going_on(context)[:, 0]) if both else knock

    net = KnockValue()
    xt = torch.as_tensor(x)
    kt = torch.as_tensor(knocks.astype(np.float32))
    vt = torch.as_tensor(np.where(knocks, values, 0).astype(np.float32) / 100.0)
    cut = int(len(x) * 0.9)
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)

    won = np.zeros(len(x), np.float32) if went_on is None else np.nan_to_num(went_on).astype(np.float32) / 100.0
    wt = torch.as_tensor(won)
    wm = torch.as_tensor(np.zeros(len(x), np.float32) if went_on is None else (~np.isnan(went_on)).astype(np.float32))

    def loss_of(rows):
        knock, on = net(xt[rows], both=True)
        k = (((knock - vt[rows]) ** 2) * kt[rows]).sum() / kt[rows].sum()
        return k + (((on - wt[rows]) ** 2) * wm[rows]).sum() / wm[rows].sum().clamp(min=1)

    for epoch in range(epochs):
        for b in np.array_split(rng.permutation(cut), max(1, cut // 256)):
            loss = loss_of(b)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            print(f"  epoch {epoch + 1}: held-out squared error {float(loss_of(np.arange(cut, len(x)))):.4f}")
    with torch.no_grad():
        held = float(loss_of(np.arange(cut, len(x))))
        sign = ((net(xt[cut:]) > 0) == (vt[cut:] > 0)).float()
        agree = float((sign * kt[cut:]).sum() / kt[cut:].sum())
    net.eval()

    def scorer(observations, state, seats, knocks):
        with torch.no_grad():
            return net(torch.as_tensor(observations)).numpy().astype(np.float64) * 100.0

    def advantage(observations, state, seats, knocks):
        """Each knock's value minus the value of going on (both learned)."""
        with torch.no_grad():
            knock, on = net(torch.as_tensor(observations), both=True)
            return (knock - on[:, None]).numpy().astype(np.float64) * 100.0

    scorer.advantage = advantage
    return scorer, held, agree


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint")
    p.add_argument("--opponent", default="marjj")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--matches", type=int, default=1000)
    p.add_argument("--kinds", nargs="+", default=["none", "safe", "eager"])
    p.add_argument("--learned", action="store_true", help="a network's knock values instead of the oracle's")
    p.add_argument("--train-games", type=int, default=2048)
    p.add_argument("--train-steps", type=int, default=600)
    p.add_argument("--train-seed", type=int, default=5000)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--cache", default="", help="an .npz to keep the collected positions in (and read them from)")
    p.add_argument("--at", type=float, nargs="+", default=[0.0], help="veto and eager thresholds (points)")
    args = p.parse_args()
    scorer, ats = oracle, [0.0]
    if args.learned:
        if args.cache and Path(args.cache).exists():
            with np.load(args.cache) as z:
                x, k, v, w = z["x"], z["k"], z["v"], z["w"]
        else:
            x, k, v, w = collect(args.checkpoint, args.opponent, args.train_games, args.train_steps, args.train_seed)
            if args.cache:
                np.savez(args.cache, x=x, k=k, v=v, w=w)
        print(f"{len(x)} positions where the bot may knock; {int(k.sum())} knocks, {(v[k] > 0).mean():.3f} of them win")
        print(f"{int((~np.isnan(w)).sum())} of them where the bot went on, {np.nanmean(w):.1f} points on average")
        scorer, held, agree = learn(x, k, v, args.epochs, went_on=w)
        print(f"held-out squared error {held:.4f} (value / 100), sign agreement {agree:.3f}")
        ats = args.at
    for kind, at in [(k, t) for k in args.kinds for t in (ats if k != "none" else [0.0])]:
        if kind == "improve":  # knock where a knock beats going on by `at`, veto where it loses to it
            agent = KnockRule(make_agent(args.checkpoint), scorer.advantage, "eager", veto_at=-at, eager_at=at)
        else:
            agent = KnockRule(make_agent(args.checkpoint), scorer, kind, veto_at=at, eager_at=at)
        r = play(agent, make_agent(args.opponent), args.matches, PRESETS["standard"], seed=args.seed)
        ends = r["hand_ends"]["a"]
        print(
            f"{kind:6s} at {at:+5.1f}  win rate {r['win_rate_a']:.3f}  knocks {ends['knocks']}  "
            f"gins {ends['won_by_gin']}  "
            f"undercut {ends['undercut_rate']:.3f}  moves changed {agent.changed}"
        )


if __name__ == "__main__":
    main()
