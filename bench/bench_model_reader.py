"""Readers that know gin_hunter's rules: how far can a fair reading of its hand go?
Run: ``python bench/bench_model_reader.py [CHECKPOINT] --reader exact --hands 500 --seed 11``
(or ``--matches N``; ``--reader last-move`` is the cheaper reader; with ``--hands``,
``--compare-net NET`` also reads the same decisions with a danger net saved by
``bench_danger_net.py --save``, and ``--deny 2/0`` never swaps).

``bench_oracle.py`` shows the bot reaching 0.88 against gin_hunter if it never feeds it
a melding card, with the opponent's hand revealed, while the belief net, which reads
that hand from the observation, ranks the dangerous cards with an AUC of 0.79 and gives
no gain. Is a better fair reading possible? These readers see only what the bot sees
but know gin_hunter's strategy, its code: they are fair for no other opponent, and
measure what reading gin_hunter's hand from its moves would be worth.

- ``ExactReader``: the posterior over gin_hunter's hand given everything it did this
  hand. gin_hunter is deterministic, so the posterior is uniform over the deals and
  stock draws under which its code makes exactly the moves it made; Markov chain Monte
  Carlo over them (see the class).
- ``LastMoveReader``: opponent hands drawn from the belief net, weighted by whether
  gin_hunter's code, holding them, would have made its last draw and discard.

``ReaderDeny`` plays the bot's policy with the swap rule of ``bench_oracle.BeliefDeny``:
a discard whose danger (the share of the reader's hands in which it joins a meld) is at
the threshold or above is swapped for the policy's most probable action below it.
"""

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np
import torch

from agents.baselines import _PHASE, _STOCK, GinHunter
from agents.evaluate import play
from agents.policy import load_policy
from ginenv import actions as A
from ginenv import core, melds
from ginenv.cards import CARD_VALUES, NUM_CARDS
from ginenv.observation import OBS_SIZE, observe
from ginenv.rules import Rules


def _bench(name):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_oracle, bench_search = _bench("bench_oracle"), _bench("bench_search")
_VALUES = CARD_VALUES.astype(np.int64)


def top_card(state, games):
    """``(len(games),)``: the face-up card of the discard pile, -1 if it is empty."""
    size = state.pile_size[games].astype(np.int64)
    return np.where(size > 0, state.pile[games, np.maximum(size - 1, 0)], -1).astype(np.int64)


def model_observations(hands, phase, top, stock_size, knock_limit, taken, big_gin_rule):
    """What a player holding ``hands`` ``(M, 52)`` would observe and may do, as far as the
    heuristic baselines read it: plane 0 (the hand), plane 1 (the face-up card), plane 7
    in the discard turn (deadwood after each discard), the phase and the stock size; and
    the legal-action mask the engine would give. ``phase``, ``top``, ``stock_size``,
    ``knock_limit`` and ``taken`` (-1: none) are ``(M,)`` arrays of the real game."""
    m = len(hands)
    rows = np.arange(m)
    obs = np.zeros((m, OBS_SIZE), np.float32)
    mask = np.zeros((m, A.NUM_ACTIONS), bool)
    obs[:, :NUM_CARDS] = hands
    has_top = top >= 0
    obs[rows[has_top], NUM_CARDS + top[has_top]] = 1.0
    obs[rows, _PHASE + phase] = 1.0
    obs[:, _STOCK] = stock_size / 31.0
    mask[:, A.TAKE_DISCARD] = (phase == core.OFFER) | (phase == core.DRAW)
    mask[:, A.PASS] = phase == core.OFFER
    mask[:, A.DRAW_STOCK] = (phase == core.FORCED_DRAW) | (phase == core.DRAW)
    d = np.flatnonzero(phase == core.DISCARD)
    if d.size:
        masks = melds.suit_masks(hands[d])
        after = melds.masks_after_discard(masks).astype(np.int64)
        held = hands[d].copy()
        t = np.flatnonzero(taken[d] >= 0)
        held[t, taken[d][t]] = False
        obs[d, 7 * NUM_CARDS:8 * NUM_CARDS] = np.where(hands[d], after, 0) * np.float32(0.01)
        mask[d, A.DISCARD:A.KNOCK] = held
        mask[d, A.KNOCK:A.DRAW_STOCK] = held & (after <= knock_limit[d, None])
        if big_gin_rule:
            mask[d, A.BIG_GIN] = (after.min(1) == 0) & (melds.masks_deadwood(masks) == 0)
    return obs, mask


def used_cards(slots, live):
    """``(G, C, 52)`` bool: the cards in the live slots of each chain (``slots``
    ``(G, C, S)`` card ids, ``live`` broadcastable to it)."""
    out = np.zeros(slots.shape[:2] + (NUM_CARDS + 1,), bool)
    np.put_along_axis(out, np.where(live, slots, NUM_CARDS), True, 2)  # dead slots mark a spare column
    return out[..., :NUM_CARDS]


class ExactReader:
    """The exact posterior over the opponent's hand, for ``n_games`` games played by
    ``play`` (pass ``watch=reader.watch_bot, watch_b=reader.watch_opponent``), by Markov
    chain Monte Carlo over its deals.

    Given what the bot saw, the opponent's dealt hand and its stock draws are a uniform
    assignment of distinct cards the bot has not seen (not its own dealt hand or draws,
    not the upcard): a deck shuffled uniformly has no other preference. gin_hunter's
    moves keep only the assignments under which its code (``model``) makes every move it
    made this hand, so the posterior is uniform over those. Each game keeps ``chains``
    assignments ("slots": 10 dealt cards, then one per stock draw); a chain's "energy"
    counts the moves its replay through the model would not have made, plus slots
    holding cards the bot has since drawn.

    After each new fact (a move of gin_hunter's, or a card the bot draws that some chain
    had dealt to it), the chains are repaired (a card gin_hunter threw is put into a slot
    of a chain that lacked it; a card the bot drew is replaced), those above their game's
    least energy become copies of the best, and ``sweeps`` heat-bath moves spread them
    out again (``_gibbs``: one slot, or one pair of slots, re-chosen among all choices
    of least energy). At energy 0 a move stays among consistent assignments and is
    uniform over the choices, a Gibbs step for the uniform posterior. The danger of a
    card is its share of the energy-0 chains' hands in which it joins a meld (all chains
    if none). ``track_truth`` gives chain 0 the real deal and draws and never moves it
    (the tests check that it never breaks a move)."""

    MAX_EVENTS, MAX_SLOTS = 128, 48

    def __init__(self, n_games: int, chains: int = 64, sweeps: int = 6, model=None, seed: int = 0,
                 track_truth: bool = False):
        self.c, self.sweeps = chains, sweeps
        self.model = model if model is not None else GinHunter()
        self.rng = np.random.default_rng(seed)
        self.track_truth = track_truth
        self.hand_no = np.full(n_games, -1, np.int64)
        self.seen = np.zeros((n_games, NUM_CARDS), bool)  # the bot's dealt hand, the upcard, its draws
        self.events = np.zeros((n_games, self.MAX_EVENTS, 6), np.int64)  # phase, top, action, stock, limit, taken
        self.n_events = np.zeros(n_games, np.int64)
        self.slots = np.zeros((n_games, chains, self.MAX_SLOTS), np.int64)
        self.n_slots = np.zeros(n_games, np.int64)
        self.energy = np.zeros((n_games, chains), np.int64)
        self.needed = np.zeros((n_games, NUM_CARDS), bool)  # cards it threw and had not taken from the pile

    def _sync(self, state, games, bot):
        new = state.hand_no[games] != self.hand_no[games]
        if not new.any():
            return
        g = games[new]
        self.hand_no[g], self.big_gin = state.hand_no[g], state.rules.big_gin
        self.seen[g] = state._hands[g, bot[new]] | state.pile_mask[g]  # at its first move: dealt hand, upcard
        self.n_events[g], self.n_slots[g], self.needed[g] = 0, 10, False
        pool = np.repeat(~self.seen[g], self.c, 0)
        dealt = bench_oracle.pick_cards(pool, np.full(len(pool), 10), self.rng)
        self.slots[g, :, :10] = np.nonzero(dealt)[1].reshape(g.size, self.c, 10)
        if self.track_truth:
            self.slots[g, 0, :10] = np.nonzero(state._hands[g, 1 - bot[new]])[1].reshape(g.size, 10)

    def watch_bot(self, state, games, actions):
        self._sync(state, games, state.current[games].astype(np.int64))
        s = np.flatnonzero(actions == A.DRAW_STOCK)
        g = games[s]
        card = state._deck[g, state.stock_pos[g]].astype(np.int64)
        self.seen[g, card] = True
        live = np.arange(self.MAX_SLOTS)[None, None] < self.n_slots[g][:, None, None]
        hit = ((self.slots[g] == card[:, None, None]) & live).any((1, 2))
        self._put(g, card, replace=True)  # chains that dealt it to the opponent deal another card
        self._rejuvenate(g[hit])

    def _put(self, games, card, replace: bool):
        """Chains of ``games`` whose slots hold ``card`` (``replace``: it is now known not to
        be the opponent's; give its slot another unused unseen card) or lack it (not
        ``replace``: the opponent threw it, so held it; put it into a random slot of a card
        it did not throw)."""
        if not games.size:
            return
        slots = self.slots[games]
        live = np.arange(self.MAX_SLOTS)[None, None] < self.n_slots[games][:, None, None]
        at = (slots == card[:, None, None]) & live
        gi, ci = np.indices(slots.shape[:2])
        if replace:
            pool = (~self.seen[games][:, None] & ~used_cards(slots, live)).reshape(-1, NUM_CARDS)
            other = bench_oracle.pick_cards(pool, np.ones(len(pool), np.int64), self.rng).argmax(1)
            other = other.reshape(slots.shape[:2])
            self.slots[games] = np.where(at, other[..., None], slots)
        else:
            lack = ~at.any(2)
            free = live & ~self.needed[games][gi[..., None], slots]
            pick = np.where(free, self.rng.random(slots.shape), -1.0).argmax(2)
            ok = lack & free.any(2)
            slots[gi[ok], ci[ok], pick[ok]] = card[gi[ok]]
            self.slots[games] = slots

    def watch_opponent(self, state, games, actions):
        opp = state.current[games].astype(np.int64)
        self._sync(state, games, 1 - opp)
        g = games
        if (self.n_events[g] >= self.MAX_EVENTS).any() or (self.n_slots[g] >= self.MAX_SLOTS).any():
            raise RuntimeError("ExactReader: a hand longer than its event log")
        top = top_card(state, g)
        out = np.flatnonzero(actions < A.DRAW_STOCK)
        thrown = A.card_of(actions[out])
        mine = ~state.took[g[out], opp[out], thrown]  # not a card it took from the pile
        self._put(g[out[mine]], thrown[mine], replace=False)
        self.needed[g[out[mine]], thrown[mine]] = True
        self.events[g, self.n_events[g]] = np.stack(
            [state.phase[g], top, actions, state.stock_size[g], state.knock_limit[g], state.taken[g]], 1)
        self.n_events[g] += 1
        s = np.flatnonzero(actions == A.DRAW_STOCK)
        if s.size:  # a new slot: each chain draws a card it has not used, from those the bot has not seen
            gs = g[s]
            live = np.arange(self.MAX_SLOTS)[None, None] < self.n_slots[gs][:, None, None]
            pool = (~self.seen[gs][:, None] & ~used_cards(self.slots[gs], live)).reshape(-1, NUM_CARDS)
            card = bench_oracle.pick_cards(pool, np.ones(len(pool), np.int64), self.rng).argmax(1)
            card = card.reshape(s.size, self.c)
            self.slots[gs, :, self.n_slots[gs]] = card
            if self.track_truth:
                self.slots[gs, 0, self.n_slots[gs]] = state._deck[gs, state.stock_pos[gs]]
            self.n_slots[gs] += 1
        self._rejuvenate(g[state.phase[g] != core.FORCED_DRAW])

    def replay(self, games, slots):
        """Energy ``(len(games), C)`` of the assignments ``slots`` ``(len(games), C, MAX_SLOTS)``
        and the opponent's hand now under each ``(len(games), C, 52)``."""
        gsz, c = slots.shape[:2]
        energy, hand = self._replay_rows(np.repeat(games, c), slots.reshape(gsz * c, -1))
        return energy.reshape(gsz, c), hand.reshape(gsz, c, NUM_CARDS)

    def _replay_rows(self, row_game, flat):
        """``replay`` for one assignment per row, of game ``row_game[i]``."""
        r = len(flat)
        live_slot = np.arange(self.MAX_SLOTS)[None] < self.n_slots[row_game][:, None]
        rows = np.arange(r)
        energy = (self.seen[row_game[:, None], flat] & live_slot).sum(1)  # cards the bot has seen since
        hand = np.zeros((r, NUM_CARDS), bool)
        hand[rows[:, None], flat[:, :10]] = True
        drawn = np.full(r, 10)
        n_ev = self.n_events[row_game]
        for j in range(int(n_ev.max(initial=0))):
            on = np.flatnonzero(j < n_ev)
            phase, top, action, stock, limit, taken = self.events[row_game[on], j].T
            decide = phase != core.FORCED_DRAW
            if decide.any():
                o = on[decide]
                obs, mask = model_observations(hand[o], phase[decide], top[decide], stock[decide], limit[decide],
                                               taken[decide], self.big_gin)
                energy[o] += self.model.act(obs, mask) != action[decide]
            t = action == A.TAKE_DISCARD
            hand[on[t], top[t]] = True
            d = on[action == A.DRAW_STOCK]
            hand[d, flat[d, drawn[d]]] = True
            drawn[d] += 1
            out = action < A.DRAW_STOCK
            hand[on[out], A.card_of(action[out])] = False
        return energy, hand

    def _gibbs(self, games, slots, energy, swap: bool):
        """One heat-bath move per chain. A random slot of a card the opponent did not
        throw is offered every unused unseen card (or, with ``swap``, a random slot is
        offered an exchange with each slot); the chain takes one of the choices of least
        energy, uniformly. The current assignment is among the choices, so a chain at
        energy 0 stays there and moves uniformly among its consistent neighbours (a
        Gibbs step for the uniform posterior); one above 0 descends."""
        gsz, c = slots.shape[:2]
        gi, ci = np.indices((gsz, c))
        live = np.arange(self.MAX_SLOTS)[None, None] < self.n_slots[games][:, None, None]
        if swap:
            where = np.broadcast_to(live, slots.shape)
        else:
            where = live & ~self.needed[games][gi[..., None], slots]
        s1 = np.where(where, self.rng.random(slots.shape), -1.0).argmax(2)
        movable = where.any(2)
        if self.track_truth:
            movable[:, 0] = False  # the real deal stays as it is
        if swap:
            choice = live & movable[..., None]  # exchange with slot k
        else:
            choice = ~self.seen[games][:, None] & ~used_cards(slots, live) & movable[..., None]  # slot s1 gets card k
            choice[gi, ci, slots[gi, ci, s1]] = True
        g_, c_, k_ = np.nonzero(choice)
        if not g_.size:
            return slots, energy
        new = slots[g_, c_]
        r = np.arange(g_.size)
        at = s1[g_, c_]
        if swap:
            new[r, at], new[r, k_] = slots[g_, c_, k_], slots[g_, c_, at]
        else:
            new[r, at] = k_
        e, _ = self._replay_rows(games[g_], new)
        table = np.full(choice.shape, np.iinfo(np.int64).max)
        table[g_, c_, k_] = e
        best = table.min(2)
        pick = np.where(table == best[..., None], self.rng.random(table.shape), -1.0).argmax(2)
        chosen = np.full(choice.shape, -1)
        chosen[g_, c_, k_] = r
        row = chosen[gi, ci, pick]
        ok = movable & (row >= 0)
        slots = slots.copy()
        slots[ok] = new[row[ok]]
        energy = np.where(ok, best, energy)
        return slots, energy

    def _rejuvenate(self, games):
        """After a new fact: chains that break more moves than the best of their game
        become copies of the best ones, then ``sweeps`` heat-bath moves spread them out
        again."""
        if not games.size:
            return
        slots = self.slots[games]
        energy, _ = self.replay(games, slots)
        best = energy == energy.min(1, keepdims=True)
        order = np.argsort(~best, 1, kind="stable")
        pick = (self.rng.random(best.shape) * best.sum(1, keepdims=True)).astype(np.int64)
        source = np.where(best, np.arange(self.c), np.take_along_axis(order, pick, 1))
        slots = np.take_along_axis(slots, source[..., None], 1)
        energy = np.take_along_axis(energy, source, 1)
        for i in range(self.sweeps):
            slots, energy = self._gibbs(games, slots, energy, swap=i % 3 == 2)
        self.slots[games], self.energy[games] = slots, energy

    def danger(self, state, games):
        energy, hands = self.replay(games, self.slots[games])
        mine = state._hands[games, state.current[games].astype(np.int64)]
        return weighted_danger(hands, mine, (energy == 0).astype(float))


def joins_each(hands, cards):
    """``(M,)`` bool: card ``cards[i]`` (not in it) joins a meld in hand ``hands[i]``."""
    plus = hands.copy()
    plus[np.arange(len(hands)), cards] = True
    now = melds.masks_deadwood(melds.suit_masks(hands)).astype(np.int64)
    more = melds.masks_deadwood(melds.suit_masks(plus)).astype(np.int64)
    return more < now + _VALUES[cards]


def weighted_danger(hands, mine, weights):
    """``(G, 52)``: for each card of ``mine`` ``(G, 52)``, the weighted share of the hands
    ``(G, N, 52)`` it joins a meld in (weights ``(G, N)``; all-zero rows count equally)."""
    g, n = hands.shape[:2]
    weights = np.where(weights.sum(1, keepdims=True) > 0, weights, 1.0)
    weights = weights / weights.sum(1, keepdims=True)
    g_idx, cards = np.nonzero(mine)
    joins = joins_each(hands[g_idx].reshape(-1, NUM_CARDS), np.repeat(cards, n)).reshape(g_idx.size, n)
    out = np.zeros(mine.shape)
    out[g_idx, cards] = (joins * weights[g_idx]).sum(1)
    return out


class LastMoveReader:
    """A cheaper reader: opponent hands drawn from the belief net (as ``BeliefDeny``
    does), each weighted by whether gin_hunter's code, holding it, would have made its
    last moves of the hand: its last discard (the hand now plus the card thrown), and
    the draw before it (taking a face-up card only if it joins a meld; drawing from the
    stock past one that, for some card drawn, does not), or, before its first discard,
    passing the upcard. Pass ``watch_b=reader.watch_opponent`` to ``play``."""

    def __init__(self, policy, n_games: int, worlds: int = 256, model=None, seed: int = 0):
        if not policy.model.has_belief:
            raise ValueError("LastMoveReader needs a checkpoint with a belief net (architecture: belief)")
        self.belief_model, self.worlds = policy.model, worlds
        self.model = model if model is not None else GinHunter()
        self.rng = np.random.default_rng(seed)
        self.hand_no = np.full(n_games, -1, np.int64)  # the hand of the moves below
        self.top = np.full(n_games, -1, np.int64)  # face-up card at its last draw decision
        self.took = np.zeros(n_games, bool)  # ... and whether it took it
        self.offer_pass = np.zeros(n_games, bool)  # it passed the upcard, no discard since
        self.discard = np.full(n_games, -1, np.int64)  # its last discard this hand (-1 none)
        self.stock = np.zeros(n_games, np.int64)  # stock size, knock limit and card taken
        self.limit = np.zeros(n_games, np.int64)  # at that discard
        self.taken = np.full(n_games, -1, np.int64)

    def watch_opponent(self, state, games, actions):
        new = state.hand_no[games] != self.hand_no[games]
        g = games[new]
        self.hand_no[g], self.discard[g], self.offer_pass[g] = state.hand_no[g], -1, False
        draw = np.isin(state.phase[games], (core.OFFER, core.DRAW))
        g, a = games[draw], actions[draw]
        self.top[g] = top_card(state, g)
        self.took[g] = a == A.TAKE_DISCARD
        self.offer_pass[g] = a == A.PASS
        out = actions < A.DRAW_STOCK
        g = games[out]
        self.discard[g] = A.card_of(actions[out])
        self.stock[g], self.limit[g], self.taken[g] = state.stock_size[g], state.knock_limit[g], state.taken[g]
        self.offer_pass[g] = False
        forced = state.phase[games] == core.FORCED_DRAW
        self.top[games[forced]] = -1  # no choice: nothing learnt

    @torch.no_grad()
    def danger(self, state, games):
        me = state.current[games].astype(np.int64)
        obs = observe(state.select(games), me)
        belief = self.belief_model.actor.belief(torch.as_tensor(obs)).double().numpy().clip(1e-6, 1 - 1e-6)
        hands = bench_oracle.sample_opponent_hands(obs, belief, self.worlds, self.rng)  # (G * worlds, 52)
        ok = self.consistent(state, games, hands)
        shape = (len(games), self.worlds)
        return weighted_danger(hands.reshape(*shape, NUM_CARDS), state._hands[games, me], ok.reshape(shape))

    def consistent(self, state, games, hands):
        """``(len(games) * k,)`` bool: whether gin_hunter, holding ``hands`` now
        (``(len(games) * k, 52)``, k hands per game in order), would have made its last
        moves of the hand (see the class docstring)."""
        m = len(hands) // len(games)
        ok = np.ones(len(hands), bool)
        rep = lambda x: np.repeat(x, m)  # noqa: E731
        d, top = rep(self.discard[games]), rep(self.top[games])
        same = rep(self.hand_no[games] == state.hand_no[games])
        idx = np.flatnonzero(same & (d >= 0))
        if idx.size:  # its last discard, from the hand now plus the card thrown
            h11 = hands[idx].copy()
            h11[np.arange(idx.size), d[idx]] = True
            obs_m, mask_m = model_observations(
                h11, np.full(idx.size, core.DISCARD), np.full(idx.size, -1), rep(self.stock[games])[idx],
                rep(self.limit[games])[idx], rep(self.taken[games])[idx], state.rules.big_gin)
            ok[idx] = self.model.act(obs_m, mask_m) == A.DISCARD + d[idx]
            took, t = rep(self.took[games])[idx], top[idx]
            k = np.flatnonzero(took & (t >= 0))
            if k.size:  # it took the face-up card t: t joins the hand before the draw
                pre = h11[k].copy()
                pre[np.arange(k.size), t[k]] = False
                ok[idx[k]] &= joins_each(pre, t[k])
            k = np.flatnonzero(~took & (t >= 0))
            if k.size:  # it drew from the stock past t: for some card x drawn, t does not join
                fit = np.zeros(k.size, bool)
                for x in range(NUM_CARDS):
                    has = np.flatnonzero(h11[k, x] & (t[k] != x))
                    if has.size:
                        pre = h11[k[has]].copy()
                        pre[:, x] = False
                        fit[has] |= ~joins_each(pre, t[k][has])
                ok[idx[k]] &= fit
        idx = np.flatnonzero(same & rep(self.offer_pass[games]) & (top >= 0))
        if idx.size:  # it passed the upcard with the hand it holds now
            ok[idx] &= ~joins_each(hands[idx], top[idx])
        return ok


class ReaderDeny:
    """The policy, with a reader's danger (``reader.danger(state, games)``) and
    ``BeliefDeny``'s swap rule, or with ``soft`` > 0 ``bench_oracle.soft_deny`` of that
    weight. Counts its discard turns (``turns``) and those where the rule changed the
    policy's choice (``changed``). With ``record``, keeps for the cards held at each
    discard turn the danger, with ``compare_belief`` the belief's own danger
    (``BeliefDeny.danger``, for comparison on the same decisions), and the truth, and
    whether each discard fed the opponent; for each reader of ``compare`` (a dict of
    name to reader, only read, never used to swap) its danger on the same cards under
    its name; and under ``meant/<name>`` (``meant/danger``, ``meant/truth`` ...) the same
    for the one card the policy meant to throw, where it meant to discard."""

    def __init__(self, policy, reader, threshold: float, min_prob: float = 0.0, record: bool = False,
                 seed: int = 0, compare_belief: bool = True, soft: float = 0.0, compare=None):
        self.model, self.reader, self.threshold, self.min_prob = policy.model, reader, threshold, min_prob
        self.record, self.log, self.soft = record, {"danger": [], "belief": [], "truth": [], "fed": []}, soft
        self.compare = dict(compare or {})
        self.turns = self.changed = 0
        self.belief = None
        if record and compare_belief and policy.model.has_belief:
            self.belief = bench_oracle.BeliefDeny(policy, 1.0, seed=seed)

    @torch.no_grad()
    def act_state(self, state, games):
        sub = state.select(games)
        obs, mask = observe(sub, sub.current), core.legal_action_mask(sub)
        probs = self.model.action_dist(torch.as_tensor(obs), torch.as_tensor(mask)).probs.numpy()
        out = probs.argmax(1)
        d = np.flatnonzero(sub.phase == core.DISCARD)
        if not d.size:
            return out
        danger = self.reader.danger(state, games[d])
        own = out[d]
        out[d] = (bench_oracle.soft_deny(probs[d], mask[d], danger, self.soft) if self.soft else
                  bench_oracle.swap_dangerous(own, probs[d], mask[d], danger, self.threshold, self.min_prob))
        self.turns += d.size
        self.changed += int((out[d] != own).sum())
        if self.record:
            joins = bench_oracle.record_reading(self.log, state, games[d], danger, out[d])
            read = {name: r.danger(state, games[d]) for name, r in self.compare.items()}
            if self.belief is not None:
                read["belief"] = self.belief.danger(obs[d])
            hand = sub._hands[d, sub.current[d]]
            for name, value in read.items():
                self.log.setdefault(name, []).append(value[hand])
            t = np.flatnonzero((own >= A.DISCARD) & (own < A.KNOCK))  # the turns it meant to discard
            card = own[t] - A.DISCARD
            for name, value in {**read, "danger": danger, "truth": joins}.items():
                self.log.setdefault(f"meant/{name}", []).append(value[t, card])
        return out


def make_reader(kind: str, policy, n_games: int, size: int, seed: int, sweeps: int = 6):
    """``(reader, watch, watch_b)`` for ``play``: ``last-move`` (``LastMoveReader``,
    ``size`` belief worlds) or ``exact`` (``ExactReader``, ``size`` chains)."""
    if kind == "exact":
        reader = ExactReader(n_games, size, sweeps, seed=seed)
        return reader, reader.watch_bot, reader.watch_opponent
    if kind == "last-move":
        reader = LastMoveReader(policy, n_games, size, seed=seed)
        return reader, None, reader.watch_opponent
    raise ValueError(f"unknown reader {kind!r}; valid: last-move, exact")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", nargs="?", default="checkpoints/champion")
    p.add_argument("--reader", default="last-move", choices=("last-move", "exact"))
    p.add_argument("--size", type=int, default=None,
                   help="belief worlds (last-move, default 128) or chains (exact, default 64)")
    p.add_argument("--sweeps", type=int, default=6, help="exact: heat-bath sweeps after each new fact")
    p.add_argument("--matches", type=int, default=1000)
    p.add_argument("--hands", type=int, default=0,
                   help="instead of matches: this many single hands, each variant's points per hand paired with "
                        "the policy's own on the same deals, and the reader's danger against the truth beside the "
                        "belief's on the same decisions")
    p.add_argument("--deny", default="0.5/0.01,0.3/0.01,0.5/0",
                   help="threshold/min_prob pairs for the swap rule (see BeliefDeny)")
    p.add_argument("--compare-net", metavar="PATH",
                   help="with --hands: also read the same decisions with a danger net saved by "
                        "bench_danger_net.py --save (only read, never used to swap), and print its AUC beside the "
                        "reader's; --deny 2/0 never swaps, for a comparison on the policy's own play")
    p.add_argument("--seed", type=int, default=2026)
    args = p.parse_args(argv)
    if args.compare_net and not args.hands:
        p.error("--compare-net needs --hands")
    torch.set_num_threads(2)
    policy = load_policy(args.checkpoint)
    size = args.size or (64 if args.reader == "exact" else 128)
    unit = f"{args.hands} single hands" if args.hands else f"{args.matches} matches to 100"
    print(f"{unit} per cell against gin_hunter, seed {args.seed}, {args.reader} reader of size {size}"
          + (f", {args.sweeps} sweeps" if args.reader == "exact" else ""))
    compare = {}
    if args.compare_net:
        bench_danger_net = _bench("bench_danger_net")
        net = bench_danger_net.load_net(args.compare_net, policy.model.actor.belief_net, extra=0)
        compare["net"] = bench_danger_net.NetReader(net)
    if args.hands:
        base = bench_search.play_hands(policy, GinHunter(), args.hands, Rules(), args.seed)
        print(f"  the policy alone: {base.mean():+.2f} points a hand (se {base.std() / np.sqrt(args.hands):.2f})")
    for spec in filter(None, args.deny.split(",")):
        threshold, min_prob = map(float, spec.split("/"))
        reader, watch, watch_b = make_reader(args.reader, policy, args.hands or args.matches, size, args.seed,
                                             args.sweeps)
        t = time.time()
        if args.hands:
            agent = ReaderDeny(policy, reader, threshold, min_prob, record=True, seed=args.seed, compare=compare)
            diff = bench_search.play_hands(agent, GinHunter(), args.hands, Rules(), args.seed, watch, watch_b) - base
            log = {k: np.concatenate(v) for k, v in agent.log.items() if v}
            print(f"  deny {threshold:g}/{min_prob:g}: {diff.mean():+.2f} points a hand against the policy alone "
                  f"(paired se {diff.std() / np.sqrt(args.hands):.2f}), {np.mean(diff != 0):.0%} of hands changed; "
                  f"{log['fed'].mean():.3f} of its discards feed the opponent; AUC of the reader's danger "
                  f"{bench_oracle.auc(log['danger'], log['truth']):.3f}, of the belief's on the same decisions "
                  f"{bench_oracle.auc(log['belief'], log['truth']):.3f}; {time.time() - t:.0f} s", flush=True)
            aucs = ", ".join(f"{name} {bench_oracle.auc(log[f'meant/{name}'], log['meant/truth']):.3f}"
                             for name in ("danger", "belief", *compare) if f"meant/{name}" in log)
            print(f"    on the card the policy meant to throw ({log['meant/truth'].mean():.3f} of them join): "
                  f"AUC {aucs}" + "".join(f"; {name} on the held cards {bench_oracle.auc(log[name], log['truth']):.3f}"
                                          for name in compare))
            bench_oracle.print_calibration(log["danger"], log["truth"])
        else:
            r = play(ReaderDeny(policy, reader, threshold, min_prob), GinHunter(), args.matches, Rules(), args.seed,
                     watch=watch, watch_b=watch_b)
            lo, hi = r["win_rate_a_ci95"]
            print(f"  deny {threshold:g}/{min_prob:g}: {r['win_rate_a']:.3f} ({lo:.3f}-{hi:.3f}), points per hand "
                  f"{r['points_per_hand_a']:.2f} - {r['points_per_hand_b']:.2f}; {time.time() - t:.0f} s", flush=True)


if __name__ == "__main__":
    main()
