"""Decision-time search on top of a trained policy: does it add points per hand?
Run: ``python bench/bench_search.py [CHECKPOINT] --hands 2000 --worlds 8 --top-k 4
[--search rollout|critic]``.

At each of the bot's discard turns (discard, knock or big gin) with more than one legal
action, ``RolloutSearch`` takes the policy's ``top_k`` actions among those it gives a
probability of at least ``min_prob`` (so a sure policy is left alone) and scores each in
``worlds`` determinized worlds: ``ginenv.core.resample_hidden`` deals anew what the bot
cannot see (the opponent's unknown cards, the stock order), the candidate is played, and
the hand is played out greedily, both seats by the policy (``--model self``) or the
opponent's seat by the opponent itself (``--model opponent``: an upper bound that knows
the opponent's strategy, not a fair bot). Every candidate meets the same worlds (common
random numbers). It plays the candidate with the best mean hand points (own minus
opponent's), the policy's choice unless another beats it by more than ``margin``. Other
turns use the policy.

``--search critic`` (``CriticSearch``) scores the same candidates one turn deep instead:
the candidate, then the opponent's turn (policy or opponent, as above), then the
privileged critic's value at the bot's next decision, which reads the world's opponent
hand (or the hand's points if it ended). Its worlds deal the opponent's unknown cards by
the belief net's odds (``--uniform``: uniformly). How much of the hands' outcomes the
critic predicts: ``bench/bench_critic.py``.

The bench plays the same deals (single hands, seats alternating) with the plain policy
and with the search, and prints both means and the paired difference with its standard
error. The search reads the engine state to resample it, which a real frontend would
rebuild from what the player saw.
"""

import argparse
import time

import numpy as np
import torch

from agents import make_agent
from agents.evaluate import play
from agents.policy import load_policy
from ginenv import core
from ginenv.observation import observe
from ginenv.rules import Rules



class RolloutSearch:
    def __init__(self, policy, worlds: int = 8, top_k: int = 4, seed: int = 0, opponent_model=None,
                 margin: float = 0.0, min_prob: float = 1e-4):
        self.model = policy.model
        self.worlds, self.top_k, self.margin, self.min_prob = worlds, top_k, margin, min_prob
        self.rng = np.random.default_rng(seed)
        self.opponent_model = opponent_model
        self.name = f"search({worlds} worlds, top {top_k})"

    @torch.no_grad()
    def _greedy(self, obs, mask):
        return self.model.act_greedy(torch.as_tensor(obs), torch.as_tensor(mask)).numpy()

    @torch.no_grad()
    def _probs(self, obs, mask):
        return self.model.action_dist(torch.as_tensor(obs), torch.as_tensor(mask)).probs.numpy()

    def act_state(self, state, games):
        """Actions of the player to move in the games ``games`` of ``state``."""
        sub = state.select(games)
        me = sub.current.astype(np.int64)
        mask = core.legal_action_mask(sub)
        probs = self._probs(observe(sub, me), mask)
        out = probs.argmax(1)
        d = np.flatnonzero((sub.phase == core.DISCARD) & (mask.sum(1) > 1))
        if not d.size:
            return out
        cand = np.argsort(-probs[d], 1, kind="stable")[:, :self.top_k]
        keep = np.take_along_axis(mask[d] & (probs[d] >= self.min_prob), cand, 1)
        cand = np.where(keep, cand, cand[:, :1])  # fewer candidates than top_k: repeat the best
        worlds = self.sample_worlds(sub.select(np.repeat(d, self.worlds)), np.repeat(me[d], self.worlds))
        v = self.values(worlds, np.repeat(cand, self.worlds, 0)).reshape(d.size, self.worlds, -1).mean(1)
        best = v.argmax(1)
        rows = np.arange(d.size)
        out[d] = np.where(v[rows, best] - v[:, 0] > self.margin, cand[rows, best], cand[:, 0])
        return out

    def sample_worlds(self, games, me):
        """Each game of ``games`` with what ``me`` cannot see dealt anew, uniformly."""
        return core.resample_hidden(games, me, self.rng)

    def values(self, worlds, candidates):
        """``(W, K)``: for each world (a game whose mover is the searcher, in its discard
        turn) and candidate action, the searcher's hand points minus the opponent's after
        the candidate and greedy play to the end of the hand."""
        w, k = candidates.shape
        s = worlds.select(np.repeat(np.arange(w), k))
        s.mode, s.auto_reset = "hand", False
        searcher = s.current.astype(np.int64)
        core.step(s, candidates.reshape(-1))
        while not s.done.all():
            live = np.flatnonzero(~s.done)
            part = s.select(live)
            obs, mask = observe(part, part.current), core.legal_action_mask(part)
            acts = np.zeros(s.batch_size, np.int64)
            mine = (part.current == searcher[live]) | (self.opponent_model is None)
            m, t = np.flatnonzero(mine), np.flatnonzero(~mine)
            if m.size:
                acts[live[m]] = self._greedy(obs[m], mask[m])
            if t.size:
                acts[live[t]] = self.opponent_model.act(obs[t], mask[t])
            core.step(s, acts)
        rows = np.arange(s.batch_size)
        net = s.final_scores[rows, searcher] - s.final_scores[rows, 1 - searcher]
        return net.reshape(w, k).astype(np.float64)


class CriticSearch(RolloutSearch):
    """``RolloutSearch``'s candidates and worlds, scored one turn deep by the critic.

    In each world the candidate is played, then the opponent's turn (by the policy,
    greedy, or by ``opponent_model``); the score is the hand's net points if it ended,
    else the privileged critic's value (net points to come, which it reads with the
    world's opponent hand) at the searcher's next decision. With ``belief`` (and a
    belief net) the worlds deal the opponent's unknown cards by the belief's odds
    ``p / (1 - p)`` instead of uniformly."""

    def __init__(self, policy, worlds: int = 16, top_k: int = 4, seed: int = 0, opponent_model=None,
                 margin: float = 0.0, min_prob: float = 1e-4, belief: bool = True):
        super().__init__(policy, worlds, top_k, seed, opponent_model, margin, min_prob)
        if not self.model.privileged_critic:
            raise ValueError("CriticSearch needs a checkpoint trained with privileged_critic: true")
        self.belief = belief and self.model.has_belief
        self.reward_scale = float(policy.meta["config"]["reward_scale"])  # the critic's values: net points times this
        self.name = f"critic search({worlds} {'belief' if self.belief else 'uniform'} worlds, top {top_k})"

    @torch.no_grad()
    def sample_worlds(self, games, me):
        if not self.belief:
            return super().sample_worlds(games, me)
        p = self.model.actor.belief(torch.as_tensor(observe(games, me))).double().numpy().clip(1e-6, 1 - 1e-6)
        return core.resample_hidden(games, me, self.rng, p / (1 - p))

    @torch.no_grad()
    def values(self, worlds, candidates):
        w, k = candidates.shape
        s = worlds.select(np.repeat(np.arange(w), k))
        s.mode, s.auto_reset = "hand", False
        searcher = s.current.astype(np.int64)
        core.step(s, candidates.reshape(-1))
        out = np.zeros(w * k)
        idx = np.arange(w * k)
        while idx.size:
            me = searcher[idx]
            rows = np.arange(idx.size)
            ended = s.done
            out[idx[ended]] = (s.final_scores[rows, me] - s.final_scores[rows, 1 - me])[ended]
            back = np.flatnonzero(~ended & (s.current == me))
            if back.size:
                part = s.select(back)
                value = self.model.get_value(torch.as_tensor(observe(part, me[back])),
                                             torch.as_tensor(part._hands[np.arange(back.size), 1 - me[back]],
                                                             dtype=torch.float32))
                out[idx[back]] = value.double().numpy() / self.reward_scale
            go = np.flatnonzero(~ended & (s.current != me))
            idx, s = idx[go], s.select(go)
            if idx.size:
                obs, mask = observe(s, s.current), core.legal_action_mask(s)
                model = self._greedy if self.opponent_model is None else self.opponent_model.act
                core.step(s, model(obs, mask))
        return out.reshape(w, k)


def play_hands(agent, opponent, n: int, rules: Rules, seed: int, watch=None, watch_b=None) -> np.ndarray:
    """n single hands (``agents.evaluate.play``: ``agent`` in seat ``i % 2`` of hand i,
    acting on the state or on observations): per hand, its points minus the opponent's.
    ``watch`` and ``watch_b`` see ``agent``'s and the opponent's moves as in ``play``."""
    seen = {}

    def keep(state, games, actions):
        seen["state"] = state  # the games' state, stepped in place to their end
        if watch is not None:
            watch(state, games, actions)

    play(agent, opponent, n, rules, seed, mode="hand", watch=keep, watch_b=watch_b)
    s, rows = seen["state"], np.arange(n)
    seat = rows % 2
    return (s.final_scores[rows, seat] - s.final_scores[rows, 1 - seat]).astype(np.float64)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", nargs="?", default="checkpoints/champion")
    p.add_argument("--opponent", default="gin_hunter")
    p.add_argument("--hands", type=int, default=2000)
    p.add_argument("--worlds", type=int, default=8)
    p.add_argument("--top-k", type=int, default=4)
    p.add_argument("--margin", type=float, default=0.0)
    p.add_argument("--min-prob", type=float, default=1e-4,
                   help="candidates need at least this probability under the policy (0: any legal action)")
    p.add_argument("--model", choices=("self", "opponent"), default="self",
                   help="who plays the opponent's seat in the rollouts")
    p.add_argument("--search", choices=("rollout", "critic"), default="rollout",
                   help="score candidates by greedy playouts to the end of the hand, or one turn deep by the critic")
    p.add_argument("--uniform", action="store_true", help="critic search: uniform worlds, not the belief's")
    p.add_argument("--seed", type=int, default=2026)
    args = p.parse_args(argv)
    torch.set_num_threads(2)
    rules = Rules.preset("standard")
    policy = load_policy(args.checkpoint)
    opponent = make_agent(args.opponent)
    t = time.time()
    base = play_hands(policy, opponent, args.hands, rules, args.seed)
    t_base = time.time() - t
    kind = RolloutSearch if args.search == "rollout" else CriticSearch
    extra = {} if args.search == "rollout" else {"belief": not args.uniform}
    search = kind(policy, args.worlds, args.top_k, seed=1, margin=args.margin, min_prob=args.min_prob,
                  opponent_model=make_agent(args.opponent) if args.model == "opponent" else None, **extra)
    t = time.time()
    searched = play_hands(search, opponent, args.hands, rules, args.seed)
    t_search = time.time() - t
    diff = searched - base
    se = lambda x: x.std(ddof=1) / np.sqrt(len(x))  # noqa: E731
    print(f"{args.hands} hands vs {args.opponent}, seed {args.seed}; {search.name}, min prob {args.min_prob}, "
          f"rollouts: {args.model}")
    print(f"  policy alone : {base.mean():+.2f} points a hand (se {se(base):.2f})  {t_base:.0f} s")
    print(f"  with search  : {searched.mean():+.2f} points a hand (se {se(searched):.2f})  {t_search:.0f} s")
    print(f"  difference   : {diff.mean():+.2f} (paired se {se(diff):.2f}); hands that changed: {(diff != 0).mean():.2f}")


if __name__ == "__main__":
    main()
