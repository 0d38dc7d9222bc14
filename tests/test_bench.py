"""The rules that the bench scripts wrap around agents (``bench/bench_denial.py``,
``bench/bench_probes.py``, ``bench/bench_search.py``, ``bench/bench_belief.py``,
``bench/bench_oracle.py``, ``bench/bench_model_reader.py``, ``bench/bench_danger_net.py``), each
against a per-game loop over the engine's own state."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from agents import make_agent
from ginenv import actions as A
from ginenv import core
from ginenv import melds
from ginenv.cards import CARD_VALUES, NUM_CARDS
from test_agents import self_play


def load_bench(name):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_denial, bench_probes = load_bench("bench_denial"), load_bench("bench_probes")
bench_search = load_bench("bench_search")
bench_belief = load_bench("bench_belief")
bench_oracle = load_bench("bench_oracle")
bench_model_reader = load_bench("bench_model_reader")


def reference_danger(opp_taken):
    """A card is dangerous if some card the opponent took and holds has its rank, or is
    next to it in the same suit (card id = suit * 13 + rank)."""
    out = np.zeros(NUM_CARDS, bool)
    for c in range(NUM_CARDS):
        for t in np.flatnonzero(opp_taken):
            same_rank = c % 13 == t % 13
            next_in_suit = c // 13 == t // 13 and abs(c % 13 - t % 13) == 1
            out[c] |= same_rank or next_in_suit
    return out


def test_denier_swaps_a_dangerous_discard_for_the_best_safe_one_within_tolerance():
    tol = 3
    agent, patient = bench_denial.Denier(tolerance=tol), make_agent("patient")
    swaps = {"swapped": 0, "kept": 0}

    def check(state, obs, mask, acts):
        base = patient.act(obs, mask)
        for i in range(len(acts)):
            if not A.is_discard(base[i]):
                assert acts[i] == base[i]
                continue
            me = state.current[i]
            danger = reference_danger(state.took[i, 1 - me] & state._hands[i, 1 - me])
            chosen = A.card_of(base[i])
            after = state.after_discard[i]
            safe = [c for c in range(NUM_CARDS) if mask[i, A.DISCARD + c] and not danger[c]
                    and after[c] <= after[chosen] + tol]
            if danger[chosen] and safe:
                best = min(safe, key=lambda c: (after[c], -CARD_VALUES[c], c))
                assert acts[i] == A.DISCARD + best
                swaps["swapped"] += 1
            else:
                assert acts[i] == base[i]
                swaps["kept"] += 1

    self_play(agent, steps=300, check=check)
    assert min(swaps.values()) > 0, swaps  # both branches were exercised


def test_forced_knock_knocks_at_the_limit_with_the_least_deadwood_else_defers():
    limit = 6
    agent = bench_probes.ForcedKnock(make_agent("gin_hunter"), limit)
    seen = {"forced": 0, "deferred": 0}

    def check(state, obs, mask, acts):
        own = agent.base.act(obs, mask)
        for i in range(len(acts)):
            knocks = [c for c in range(NUM_CARDS) if mask[i, A.KNOCK + c]]
            after = state.after_discard[i]
            if not mask[i, A.BIG_GIN] and any(after[c] <= limit for c in knocks):
                best = min(knocks, key=lambda c: (after[c], -CARD_VALUES[c], c))
                assert acts[i] == A.KNOCK + best
                seen["forced"] += 1
            else:
                assert acts[i] == own[i]
                seen["deferred"] += 1

    self_play(agent, steps=300, check=check)
    assert min(seen.values()) > 0, seen


def test_held_back_knock_removes_only_the_knocks_above_the_limit():
    limit = 4
    agent = bench_probes.HeldBackKnock(make_agent("knock_early"), limit)  # knock_early knocks whenever it can
    seen = {"knocked": 0, "held back": 0}

    def best(cards, after):
        return min(cards, key=lambda c: (after[c], -CARD_VALUES[c], c))

    def check(state, obs, mask, acts):
        for i in range(len(acts)):
            if state.phase[i] != core.DISCARD:
                continue
            after = state.after_discard[i]
            knocks = [c for c in range(NUM_CARDS) if mask[i, A.KNOCK + c]]
            low = [c for c in knocks if after[c] <= limit]
            if mask[i, A.BIG_GIN]:
                assert acts[i] == A.BIG_GIN
            elif low:
                assert acts[i] == A.KNOCK + best(low, after)
                seen["knocked"] += 1
            else:
                discards = [c for c in range(NUM_CARDS) if mask[i, A.DISCARD + c]]
                assert acts[i] == A.DISCARD + best(discards, after)
                seen["held back"] += bool(knocks)

    self_play(agent, steps=300, check=check)
    assert min(seen.values()) > 0, seen


def test_scores_zeroed_hides_only_the_match_totals():
    seen = []

    class Spy:
        def act(self, obs, mask):
            seen.append(obs.copy())
            return make_agent("knock_early").act(obs, mask)

    agent = bench_probes.ScoresZeroed(Spy())
    env_obs = []

    def check(state, obs, mask, acts):
        env_obs.append(obs.copy())
        expected = np.stack([state.scores[i, state.current[i]] for i in range(len(acts))]) / state.rules.target
        np.testing.assert_allclose(obs[:, bench_probes.SCORES], expected, rtol=1e-6)

    self_play(agent, steps=200, check=check)
    moved = [o[:, bench_probes.SCORES:bench_probes.SCORES + 2].any() for o in env_obs]
    assert any(moved)  # match totals did appear in the real observations
    for real, given in zip(env_obs, seen):
        assert not given[:, bench_probes.SCORES:bench_probes.SCORES + 2].any()
        rest = np.delete(real, [bench_probes.SCORES, bench_probes.SCORES + 1], axis=1)
        np.testing.assert_array_equal(rest, np.delete(given, [bench_probes.SCORES, bench_probes.SCORES + 1], axis=1))


def reference_rollout_value(world, candidate, model, opponent=None):
    """One world, one candidate, played out one step at a time on a single game."""
    import torch

    from ginenv import core
    from ginenv.observation import observe
    g = world.select([0])
    g.mode = "hand"
    me = int(g.current[0])
    core.step(g, np.array([candidate]))
    while not g.done[0]:
        obs, mask = observe(g, g.current), core.legal_action_mask(g).copy()
        if opponent is not None and g.current[0] != me:
            a = opponent.act(obs, mask)
        else:
            a = model.act_greedy(torch.as_tensor(obs), torch.as_tensor(mask)).numpy()
        core.step(g, a)
    return float(g.final_scores[0, me] - g.final_scores[0, 1 - me])


def random_play(games, seed, steps, rng):
    """``games`` single hands dealt with ``seed``, ``steps`` random legal moves in."""
    from ginenv import core
    state = core.init(games, "standard", seed=seed, mode="hand")
    for _ in range(steps):
        mask = core.legal_action_mask(state)
        core.step(state, np.where(mask.any(1), (rng.random(mask.shape) * mask).argmax(1), 0))
    return state


@pytest.mark.parametrize("opponent", [None, "knock_early"])
def test_search_values_match_single_game_rollouts(opponent):
    from agents.policy import load_policy
    from ginenv import core
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    opp = make_agent(opponent) if opponent else None
    search = bench_search.RolloutSearch(policy, worlds=3, top_k=3, seed=4, opponent_model=opp)
    rng = np.random.default_rng(2)
    state = random_play(40, 8, rng.integers(8, 14), rng)  # into the hand, some games in a discard turn
    d = np.flatnonzero(state.phase == core.DISCARD)[:8]
    assert d.size >= 4
    worlds = core.resample_hidden(state.select(d), state.current[d], rng)
    cands = np.stack([np.flatnonzero(m)[[0, -1, len(np.flatnonzero(m)) // 2]] for m in core.legal_action_mask(worlds)])
    got = search.values(worlds, cands)
    for w in range(d.size):
        for k in range(3):
            assert got[w, k] == reference_rollout_value(worlds.select([w]), cands[w, k], policy.model, opp), (w, k)
    assert len(set(got.ravel().tolist())) > 1  # the outcomes differ: the test can tell them apart


def reference_critic_value(world, candidate, model, opponent=None):
    """One world, one candidate: the opponent's turn one step at a time, then the
    critic on the searcher's observation and the world's opponent hand (in points),
    or the hand's net points if it ended first."""
    import torch

    from ginenv import core
    from ginenv.observation import observe
    g = world.select([0])
    g.mode = "hand"
    me = int(g.current[0])
    core.step(g, np.array([candidate]))
    while not g.done[0] and g.current[0] != me:
        obs, mask = observe(g, g.current), core.legal_action_mask(g).copy()
        if opponent is not None:
            a = opponent.act(obs, mask)
        else:
            a = model.act_greedy(torch.as_tensor(obs), torch.as_tensor(mask)).numpy()
        core.step(g, a)
    if g.done[0]:
        return float(g.final_scores[0, me] - g.final_scores[0, 1 - me])
    with torch.no_grad():
        v = model.get_value(torch.as_tensor(observe(g, me)), torch.as_tensor(g._hands[:, 1 - me], dtype=torch.float32))
    return float(v[0]) / 0.01


@pytest.mark.parametrize("opponent", [None, "gin_hunter"])
def test_critic_search_values_match_single_game_lookahead(opponent):
    from agents.policy import load_policy
    from ginenv import core
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    opp = make_agent(opponent) if opponent else None
    search = bench_search.CriticSearch(policy, worlds=3, top_k=3, seed=4, opponent_model=opp)
    rng = np.random.default_rng(3)
    state = random_play(60, 9, rng.integers(10, 16), rng)
    d = np.flatnonzero(state.phase == core.DISCARD)[:10]
    assert d.size >= 4
    worlds = search.sample_worlds(state.select(d), state.current[d].astype(np.int64))
    masks = core.legal_action_mask(worlds)
    # A knock where one is legal, so that some candidates end the hand at once.
    cands = np.stack([np.flatnonzero(m)[[0, -1, len(np.flatnonzero(m)) // 2]] for m in masks])
    got = search.values(worlds, cands)
    for w in range(d.size):
        for k in range(3):
            want = reference_critic_value(worlds.select([w]), cands[w, k], policy.model, opp)
            assert got[w, k] == pytest.approx(want, rel=1e-5, abs=1e-3), (w, k)
    assert len(set(np.round(got, 3).ravel().tolist())) > 3


def test_critic_search_worlds_follow_the_belief():
    """The belief-weighted worlds give the opponent the cards its belief favours more
    often than uniform worlds do, and keep everything the searcher has seen."""
    import torch

    from agents.policy import load_policy
    from ginenv import core
    from ginenv.observation import observe
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    state = core.init(1, "standard", seed=3, mode="hand")
    gh, rng = make_agent("gin_hunter"), np.random.default_rng(0)
    while int(state.stock_size[0]) > 16:  # gin_hunter against random play, well into the hand
        mask = core.legal_action_mask(state)
        a = gh.act(observe(state, state.current), mask) if state.current[0] == 1 else (rng.random(mask.shape) * mask).argmax(1)
        core.step(state, a)
    me = np.zeros(2000, np.int64)
    games = state.select(np.zeros(2000, np.int64))
    with torch.no_grad():
        p = policy.model.actor.belief(torch.as_tensor(observe(state, 0)))[0].numpy()
    unseen = observe(state, 0)[0, 5 * 52:6 * 52] > 0.5
    freq = {}
    for belief in (True, False):
        search = bench_search.CriticSearch(policy, worlds=1, seed=1, belief=belief)
        w = search.sample_worlds(games, me)
        assert (observe(w, me) == observe(games, me)).all()
        freq[belief] = w._hands[:, 1].mean(0)
    liked, disliked = unseen & (p > np.median(p[unseen])), unseen & (p <= np.median(p[unseen]))
    assert freq[True][liked].sum() > freq[False][liked].sum() + 0.5
    assert freq[True][disliked].sum() < freq[False][disliked].sum() - 0.5


def test_critic_fit_scales_each_critic_to_points_and_gives_it_its_training_inputs(monkeypatch, tmp_path):
    import torch

    import train
    from agents import policy as policy_module
    from ginenv.rules import Rules
    bench_critic = load_bench("bench_critic")
    champion = Path(__file__).resolve().parents[1] / "checkpoints" / "champion"
    config = train.make_config(config_file=Path(__file__).resolve().parents[1] / "configs" / "smoke.yaml", sets=[
        "total_decisions=1", "critic_lookahead=3", f"log_dir={tmp_path}", f"checkpoint_dir={tmp_path}", "run_name=r"])
    lookahead_run = train.train(config, quiet=True)
    real_load, calls, outcome = policy_module.load_policy, [], {}

    def load(path):  # each critic answers a constant in its own units, and records its inputs
        policy = real_load(path)
        value = 0.07 if Path(path) == champion else 0.0

        def constant(obs, opponent_hand=None, lookahead=None):
            calls.append((policy.model.critic_lookahead, opponent_hand, lookahead))
            return torch.full((obs.shape[0],), value)

        policy.model.get_value = constant
        return policy

    monkeypatch.setattr(bench_critic, "load_policy", load)
    real_explained = bench_critic.explained

    def explained(values, y):
        outcome[len(outcome)] = (values, y)
        return real_explained(values, y)

    monkeypatch.setattr(bench_critic, "explained", explained)
    scores = bench_critic.critic_fit([champion, lookahead_run], make_agent("knock_early"), 40, 2)
    (v0, y), (v1, _) = outcome[0], outcome[1]
    assert np.allclose(v0, 7.0) and (v1 == 0.0).all()  # 0.07 at the reward scale of 0.01
    assert scores == [pytest.approx(0.0, abs=1e-9)] * 2  # a constant explains nothing
    base = bench_critic.bench_search.play_hands(real_load(champion), make_agent("knock_early"), 40,
                                                Rules.preset("standard"), 2)
    assert set(np.unique(y)) <= set(base)  # the champion's own hands, each decision scored by its hand
    for k, hand, look in calls:
        assert ((hand.sum(1) == 10) | (hand.sum(1) == 11)).all()  # the opponent's whole hand, as in training
        assert (look is None) == (k == 0) and (k == 0 or look.shape[1] == 4 * 3 + 2)


def test_search_leaves_a_sure_policy_alone_and_otherwise_searches():
    from agents.policy import load_policy
    from ginenv import core
    from ginenv.observation import observe
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    state = random_play(64, 6, 11, np.random.default_rng(1))
    games = np.flatnonzero(state.phase == core.DISCARD)
    greedy = policy.act(observe(state.select(games), state.current[games]), core.legal_action_mask(state)[games])
    sure = bench_search.RolloutSearch(policy, worlds=2, top_k=4, min_prob=2.0)  # no action is that likely
    assert (sure.act_state(state, games) == greedy).all()
    anything = bench_search.RolloutSearch(policy, worlds=2, top_k=4, min_prob=0.0)
    assert (anything.act_state(state, games) != greedy).any()  # noisy 2-world means overrule it somewhere


def test_belief_bench_pairs_each_decision_with_the_opponents_hand():
    x, y = bench_belief.collect(make_agent("knock_early"), make_agent("gin_hunter"), games=40, seed=3)
    assert len(x) == len(y) > 40
    planes = x[:, :9 * NUM_CARDS].reshape(len(x), 9, NUM_CARDS) > 0.5
    held = y > 0.5
    assert (held.sum(1) == 10).all()  # the opponent waits with 10 cards while the player moves
    assert not (held & planes[:, 0]).any()  # never a card of the player's own hand
    assert not (held & (planes[:, 1] | planes[:, 2] | planes[:, 4])).any()  # nor one lying in the pile
    assert (held | ~planes[:, 3]).all()  # the cards it took and holds are in its hand
    assert (held <= (planes[:, 5] | planes[:, 3])).all()  # the rest are unseen ones
    assert (held & planes[:, 5]).sum() > (held & planes[:, 3]).sum() > 0


def test_belief_bench_cross_entropy_is_the_binary_one():
    p, y = np.array([0.5, 0.9, 0.2]), np.array([1.0, 1.0, 0.0])
    assert np.allclose(bench_belief.cross_entropy(p, y), [np.log(2), -np.log(0.9), -np.log(0.8)])


def test_oracle_meld_and_gin_cards_match_brute_force():
    import reference
    rng = np.random.default_rng(7)
    hands = np.zeros((36, NUM_CARDS), bool)
    for i in range(36):  # random hands, and hands built around melds so that many cards join
        if i % 2:
            hands[i, rng.choice(NUM_CARDS, 10, replace=False)] = True
        else:
            suit, start = rng.integers(4), rng.integers(0, 9)
            hands[i, suit * 13 + start + np.arange(4)] = True
            rank = rng.integers(13)
            hands[i, rank + 13 * np.array([0, 1, 2])] = True
            free = np.flatnonzero(~hands[i])
            hands[i, rng.choice(free, 10 - hands[i].sum(), replace=False)] = True
    joins, gin = melds.joins_meld(hands), bench_oracle.gin_cards(hands)
    for i in range(36):
        cards = list(np.flatnonzero(hands[i]))
        now = reference.deadwood(cards)
        for c in range(NUM_CARDS):
            if hands[i, c]:
                assert not joins[i, c] and not gin[i, c]
                continue
            assert joins[i, c] == (reference.deadwood(cards + [c]) < now + reference.value(c)), (i, c)
            assert gin[i, c] == (min(reference.deadwood_after_discard(cards + [c]).values()) == 0), (i, c)
    assert joins.any() and gin.any() and not joins.all()


@pytest.mark.parametrize("deny,alarm", [(True, False), (False, True)])
def test_oracle_denies_melding_cards_and_knocks_before_a_gin(deny, alarm):
    from agents.policy import load_policy
    from ginenv import core
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    oracle = bench_oracle.Oracle(policy, deny, alarm)
    changed = 0
    for state, live, mask, _, plain in policy_positions(policy, 160, seed=4):
        got = oracle.act_state(state, live)
        for j, g in enumerate(live):
            if state.phase[g] != core.DISCARD:
                assert got[j] == plain[j]
                continue
            me = int(state.current[g])
            theirs, mine = state._hands[g, 1 - me], state._hands[g, me]
            legal = np.flatnonzero(mask[g])
            if deny:
                joins = melds.joins_meld(theirs[None])[0]
                bad = lambda a: A.DISCARD <= a < A.KNOCK and joins[a - A.DISCARD]  # noqa: E731
                if any(not bad(a) for a in legal):
                    assert not bad(got[j])
                if not bad(plain[j]):
                    assert got[j] == plain[j]
            else:
                ready = (bench_oracle.gin_cards(theirs[None])[0] & ~mine).any()
                knocks = mask[g, A.KNOCK:A.DRAW_STOCK]
                if ready and knocks.any() and not mask[g, A.BIG_GIN]:
                    assert A.KNOCK <= got[j] < A.DRAW_STOCK
                else:
                    assert got[j] == plain[j]
            changed += got[j] != plain[j]
    assert changed > 0


def policy_positions(policy, n: int, seed: int, steps: int = 60):
    """``(state, live, mask, obs, plain)`` at each step of n single hands in which both
    seats play the policy greedily: the games still going, the full legal mask, their
    observations and the policy's moves, which are then played."""
    from ginenv import core
    from ginenv.observation import observe
    state = core.init(n, "standard", seed=seed, mode="hand")
    for _ in range(steps):
        live = np.flatnonzero(~state.done)
        if not live.size:
            return
        mask = core.legal_action_mask(state)
        obs = observe(state.select(live), state.current[live])
        plain = policy.act(obs, mask[live])
        yield state, live, mask, obs, plain
        actions = np.zeros(n, np.int64)
        actions[live] = plain
        core.step(state, actions)


def test_belief_deny_samples_consistent_hands_and_swaps_only_dangerous_discards(monkeypatch):
    from agents.policy import load_policy
    from ginenv import core
    from ginenv.observation import observe
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    state = core.init(120, "standard", seed=5, mode="hand")
    for _ in range(9):
        mask = core.legal_action_mask(state)
        live = np.flatnonzero(~state.done)
        actions = np.zeros(120, np.int64)
        actions[live] = policy.act(observe(state.select(live), state.current[live]), mask[live])
        core.step(state, actions)
    d = np.flatnonzero(~state.done & (state.phase == core.DISCARD))
    assert d.size > 20
    obs, mask = observe(state.select(d), state.current[d]), core.legal_action_mask(state)[d]
    # Sampled hands: ten cards, the ones seen taken and held, the rest unseen; a belief of
    # (almost) 1 on ten cards and (almost) 0 elsewhere is followed.
    unseen, known = obs[:, 5 * 52:6 * 52] > 0.5, obs[:, 3 * 52:4 * 52] > 0.5
    rng = np.random.default_rng(0)
    belief = np.full((d.size, NUM_CARDS), 1e-6)
    for i in range(d.size):
        belief[i, np.flatnonzero(unseen[i])[:10 - known[i].sum()]] = 1 - 1e-6
    hands = bench_oracle.sample_opponent_hands(obs, belief, 4, rng).reshape(d.size, 4, NUM_CARDS)
    assert (hands.sum(2) == 10).all()
    assert (hands >= known[:, None]).all() and not (hands & ~(unseen | known)[:, None]).any()
    assert (hands == (known | (unseen & (belief > 0.5)))[:, None]).all()
    # The swap rule, on a danger fixed by the test.
    deny = bench_oracle.BeliefDeny(policy, threshold=0.5, min_prob=0.0)
    danger = rng.random((d.size, NUM_CARDS))
    monkeypatch.setattr(deny, "danger", lambda o: danger)
    plain, got = policy.act(obs, mask), deny.act(obs, mask)
    probs = policy.model.action_dist(torch_tensor(obs), torch_tensor(mask)).probs.detach().numpy()
    swapped = 0
    for i in range(d.size):
        risk = lambda a: danger[i, a - A.DISCARD] if A.DISCARD <= a < A.KNOCK else 0.0  # noqa: E731
        ok = [a for a in np.flatnonzero(mask[i]) if risk(a) < 0.5]
        if risk(plain[i]) < 0.5 or not ok:
            assert got[i] == plain[i]
        else:
            assert got[i] == max(ok, key=lambda a: probs[i, a])
            swapped += 1
    assert swapped > 0


def torch_tensor(x):
    import torch
    return torch.as_tensor(x)


def test_auc_counts_ordered_pairs_with_ties_half():
    rng = np.random.default_rng(2)
    for _ in range(20):
        score = rng.integers(0, 6, 40) / 5  # many ties
        truth = rng.random(40) < 0.3
        truth[:2] = [True, False]
        pos, neg = score[truth], score[~truth]
        want = np.mean([(p > q) + 0.5 * (p == q) for p in pos for q in neg])
        assert bench_oracle.auc(score, truth) == pytest.approx(want)


def test_reader_danger_ranks_the_cards_that_feed_gin_hunter_above_chance():
    from agents.policy import load_policy
    from ginenv.rules import Rules
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    danger, truth, fed = bench_oracle.reader_quality(policy, make_agent("gin_hunter"), 120, Rules(), seed=3, worlds=8)
    assert len(danger) == len(truth) and len(danger) % 11 == 0 and 0 < len(fed) <= len(danger) // 11
    assert ((danger >= 0) & (danger <= 1)).all() and 0.05 < truth.mean() < 0.4
    assert bench_oracle.auc(danger, truth) > 0.7  # about 0.8 on many hands; 0.5 is chance


def test_play_takes_agents_that_read_the_state_and_shows_their_moves_to_watch():
    from agents.evaluate import play
    from ginenv import core
    from ginenv.observation import observe
    from ginenv.rules import Rules
    ke = make_agent("knock_early")

    class ViaState:  # knock_early, reached through the engine state
        def act_state(self, state, games):
            sub = state.select(games)
            return ke.act(observe(sub, sub.current), core.legal_action_mask(sub))

    seen = {0: [], 1: []}

    def watcher(seat):
        def watch(state, games, actions):  # agent a sits at game % 2, agent b at the other seat
            assert (state.current[games] == (games + seat) % 2).all() and not state.done[games].any()
            assert (core.legal_action_mask(state)[games, actions]).all()
            seen[seat].append(len(games))
        return watch

    got = play(ViaState(), make_agent("gin_hunter"), 30, Rules(), seed=4, mode="hand", watch=watcher(0),
               watch_b=watcher(1))
    want = play(ke, make_agent("gin_hunter"), 30, Rules(), seed=4, mode="hand")
    assert {k: v for k, v in got.items() if k != "a"} == {k: v for k, v in want.items() if k != "a"}
    assert sum(seen[0]) > 30 * 5 and sum(seen[1]) > 30 * 5


def test_model_observations_give_gin_hunter_its_own_moves_and_the_engines_mask():
    from agents.evaluate import play
    from agents.policy import load_policy
    from ginenv import core
    from ginenv.observation import observe
    from ginenv.rules import Rules
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    gh = make_agent("gin_hunter")
    checked = {p: 0 for p in range(4)}

    def check(state, g, actions):  # gin_hunter to move in games g
        o = state.current[g].astype(np.int64)
        obs, mask = bench_model_reader.model_observations(
            state._hands[g, o], state.phase[g].astype(np.int64), bench_model_reader.top_card(state, g),
            state.stock_size[g].astype(np.int64), state.knock_limit[g].astype(np.int64),
            state.taken[g].astype(np.int64), state.rules.big_gin)
        real = core.legal_action_mask(state)[g]
        assert (mask == real).all()
        assert (gh.act(obs, mask) == gh.act(observe(state.select(g), o), real)).all()
        assert (gh.act(obs, mask) == actions).all()
        for p in range(4):
            checked[p] += int((state.phase[g] == p).sum())

    play(policy, gh, 200, Rules(), seed=8, mode="hand", watch_b=check)
    assert min(checked.values()) > 0 and sum(checked.values()) > 2000


def test_exact_reader_never_breaks_the_real_deal_and_its_consistent_chains_keep_to_what_is_public():
    from agents.evaluate import play
    from ginenv import core
    from ginenv.rules import Rules
    from agents.policy import load_policy
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    n = 16
    reader = bench_model_reader.ExactReader(n, chains=8, sweeps=2, seed=1, track_truth=True)
    plain = bench_model_reader.ReaderDeny(policy, reader, threshold=2.0)  # never swaps: the policy's own play
    zero, checked = [], []

    def watch(state, games, actions):
        reader.watch_bot(state, games, actions)
        d = games[(state.phase[games] == core.DISCARD) & (reader.hand_no[games] == state.hand_no[games])]
        if not d.size:
            return
        me = state.current[d].astype(np.int64)
        theirs = state._hands[d, 1 - me]
        energy, hands = reader.replay(d, reader.slots[d])
        assert (energy[:, 0] == 0).all() and (hands[:, 0] == theirs).all()  # the real deal and draws
        ok = energy == 0
        held = state.took[d, 1 - me] & theirs
        assert (hands.sum(2)[ok] == np.broadcast_to(theirs.sum(1)[:, None], ok.shape)[ok]).all()
        assert (hands >= held[:, None]).all(2)[ok].all()
        assert not (hands & (state._hands[d, me] | state.pile_mask[d])[:, None]).any(2)[ok].any()
        zero.append(ok[:, 1:].mean())
        checked.append(d.size)

    got = play(plain, make_agent("gin_hunter"), n, Rules(), seed=6, mode="hand", watch=watch,
               watch_b=reader.watch_opponent)
    want = play(policy, make_agent("gin_hunter"), n, Rules(), seed=6, mode="hand")
    assert {k: v for k, v in got.items() if k != "a"} == {k: v for k, v in want.items() if k != "a"}
    assert sum(checked) > 60 and np.mean(zero) > 0.3  # the other chains mostly find consistent deals too


def test_last_move_reader_accepts_the_real_hand_and_rejects_some_others():
    from agents.evaluate import play
    from ginenv import core
    from ginenv.rules import Rules
    from agents.policy import load_policy
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    n = 60
    reader = bench_model_reader.LastMoveReader(policy, n, worlds=16, seed=2)
    rng = np.random.default_rng(3)
    share = []

    def watch(state, games, actions):
        d = games[state.phase[games] == core.DISCARD]
        if not d.size:
            return
        me = state.current[d].astype(np.int64)
        theirs = state._hands[d, 1 - me]
        assert reader.consistent(state, d, theirs).all()
        # Other hands of the same size, the cards it took and holds kept, the rest at random.
        held = state.took[d, 1 - me] & theirs
        pool = ~(state._hands[d, me] | state.pile_mask[d] | held)
        other = held | bench_oracle.pick_cards(pool, theirs.sum(1) - held.sum(1), rng)
        share.append(reader.consistent(state, d, other).mean())

    play(policy, make_agent("gin_hunter"), n, Rules(), seed=6, mode="hand", watch=watch,
         watch_b=reader.watch_opponent)
    assert len(share) > 20 and 0.05 < np.mean(share) < 0.9


def test_weighted_danger_is_the_weighted_share_of_hands_a_card_joins():
    rng = np.random.default_rng(4)
    g, n = 5, 7
    hands = np.zeros((g, n, NUM_CARDS), bool)
    mine = np.zeros((g, NUM_CARDS), bool)
    for i in range(g):
        cards = rng.permutation(NUM_CARDS)
        mine[i, cards[:11]] = True
        for j in range(n):
            hands[i, j, rng.choice(cards[11:], 10, replace=False)] = True
    weights = rng.random((g, n)) * (rng.random((g, n)) < 0.7)
    weights[0] = 0  # no weight at all: every hand counts the same
    got = bench_model_reader.weighted_danger(hands, mine, weights)
    joins = melds.joins_meld(hands.reshape(-1, NUM_CARDS)).reshape(g, n, NUM_CARDS)
    for i in range(g):
        w = weights[i] if weights[i].sum() else np.ones(n)
        for c in range(NUM_CARDS):
            want = (w * joins[i, :, c]).sum() / w.sum() if mine[i, c] else 0.0
            assert got[i, c] == pytest.approx(want)


bench_danger_net = load_bench("bench_danger_net")


def test_history_records_when_the_opponent_took_passed_and_threw_each_card():
    """Against a per-game loop over the engine's state, over whole matches (so the record
    must clear at each new hand); the cards it marks as taken and thrown are the engine's."""
    from agents.evaluate import play
    from ginenv import core
    from ginenv.rules import Rules
    n = 12
    hist = bench_danger_net.History(n)
    ref = [dict(hand=-1, when={}) for _ in range(n)]
    checked = []

    def watch_b(state, games, actions):
        hist.watch_opponent(state, games, actions)
        for g, a in zip(games, actions):
            r = ref[g]
            if state.hand_no[g] != r["hand"]:
                r["hand"], r["when"] = state.hand_no[g], {}
            size = state.pile_size[g]
            top = state.pile[g, size - 1] if size else -1
            if state.phase[g] in (core.OFFER, core.DRAW) and top >= 0 and a in (A.TAKE_DISCARD, A.PASS, A.DRAW_STOCK):
                r["when"][(0 if a == A.TAKE_DISCARD else 1, top)] = state.turn[g]
            elif state.phase[g] == core.DISCARD and a < A.KNOCK:
                r["when"][(2, a)] = state.turn[g]

    def watch(state, games, actions):
        g = games[state.phase[games] == core.DISCARD]
        if not g.size:
            return
        got = hist.features(state, g).reshape(len(g), 3, NUM_CARDS)
        for row, i in zip(got, g):
            want = np.zeros((3, NUM_CARDS), np.float32)
            if ref[i]["hand"] == state.hand_no[i]:
                for (event, card), turn in ref[i]["when"].items():
                    want[event, card] = (state.turn[i] - turn + 1) / 20
            np.testing.assert_allclose(row, want, rtol=1e-6)
            opp = 1 - state.current[i]
            assert ((row[0] > 0) == state.took[i, opp]).all() and ((row[2] > 0) == state.discarded[i, opp]).all()
        checked.append(len(g))

    play(make_agent("knock_early"), make_agent("gin_hunter"), n, Rules(), seed=4, watch=watch, watch_b=watch_b)
    assert sum(checked) > 500


def test_net_reader_that_never_swaps_plays_the_policys_own_games():
    from agents.evaluate import play
    from agents.policy import load_policy
    from ginenv.rules import Rules
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    net = bench_danger_net.DangerNet(policy.model.actor.belief_net, hidden=16, card_hidden=8, extra=3)
    n = 8
    reader = bench_danger_net.NetReader(net, n)
    agent = bench_model_reader.ReaderDeny(policy, reader, threshold=2.0)
    got = play(agent, make_agent("gin_hunter"), n, Rules(), seed=3, watch_b=reader.watch_opponent)
    want = play(policy, make_agent("gin_hunter"), n, Rules(), seed=3)
    assert {k: v for k, v in got.items() if k != "a"} == {k: v for k, v in want.items() if k != "a"}
    assert agent.turns > 100 and agent.changed == 0


def test_reader_deny_records_compared_readers_on_the_same_cards_as_its_own():
    """A compared reader is only read: the games are the policy's own, and what it
    records under its name is what it would record as the reader, card for card, at
    every turn and at the card the policy meant to throw."""
    import torch

    from agents.evaluate import play
    from agents.policy import load_policy
    from ginenv.rules import Rules
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    torch.manual_seed(1)
    one = bench_danger_net.DangerNet(policy.model.actor.belief_net, hidden=16, card_hidden=8)
    other = bench_danger_net.DangerNet(policy.model.actor.belief_net, hidden=16, card_hidden=8)
    n = 6

    def run(reader, compare=None):
        agent = bench_model_reader.ReaderDeny(policy, bench_danger_net.NetReader(reader), 2.0, record=True,
                                              compare=compare)
        play(agent, make_agent("gin_hunter"), n, Rules(), seed=5)
        return {k: np.concatenate(v) for k, v in agent.log.items()}

    alarmed = bench_danger_net.DangerNet(policy.model.actor.belief_net, hidden=16, card_hidden=8)
    with torch.no_grad():
        alarmed.card[-1].weight.zero_()
        alarmed.card[-1].bias.fill_(50.0)
    knows = bench_danger_net.NetReader(alarmed, truth="misses")  # reads 1 exactly where a card joins
    both = run(one, {"twin": bench_danger_net.NetReader(one), "other": bench_danger_net.NetReader(other),
                     "knows": knows})
    alone = run(other)
    assert (both["twin"] == both["danger"]).all() and (both["meant/twin"] == both["meant/danger"]).all()
    assert (both["other"] == alone["danger"]).all() and (both["meant/other"] == alone["meant/danger"]).all()
    assert not np.allclose(both["other"], both["danger"])
    # never swapping, the card it meant to throw is the card it threw: the truth there is whether it fed
    assert (both["meant/truth"] == both["fed"]).all() and both["fed"].any() and len(both["fed"]) > 50
    assert (both["knows"] == both["truth"]).all() and (both["meant/knows"] == both["meant/truth"]).all()
    assert len(both["danger"]) == len(both["truth"]) == len(both["belief"])


def test_actor_danger_reads_a_danger_actors_own_net_and_refuses_others():
    import torch

    from agents.network import ActorCritic
    from agents.policy import load_policy
    from test_train import _states_with_opponent_hands
    torch.manual_seed(4)
    actor = ActorCritic((16, 16), "relu", True, "danger").actor
    obs, _ = _states_with_opponent_hands(games=4, steps=8)
    got = bench_danger_net.ActorDanger(actor).danger(obs)
    with torch.no_grad():
        planes = actor.forward_with_aux(torch.as_tensor(obs))[1]["danger"]
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-planes.numpy())), rtol=1e-5)
    assert ((got > 0) & (got < 1)).all()
    with pytest.raises(SystemExit, match="architecture 'danger'"):
        bench_danger_net.ActorDanger(load_policy(Path(__file__).resolve().parents[1] / "checkpoints"
                                                 / "champion").model.actor)


def test_soft_deny_maximises_the_policys_log_probability_plus_the_weighted_log_safety():
    rng = np.random.default_rng(5)
    n = 300
    mask = rng.random((n, A.NUM_ACTIONS)) < 0.3
    mask[:, A.DISCARD] = True
    probs = rng.dirichlet(np.full(A.NUM_ACTIONS, 0.3), n) * mask
    probs /= probs.sum(1, keepdims=True)
    danger = rng.choice([0.0, 0.2, 0.5, 0.9, 1.0], (n, NUM_CARDS))
    for weight in (0.0, 1.0, 3.0):
        got = bench_oracle.soft_deny(probs, mask, danger, weight)
        for i in range(n):
            def score(a):
                safety = 1 - danger[i, a] if a < A.KNOCK else 1.0
                return np.log(max(probs[i, a], 1e-30)) + weight * np.log(min(max(safety, 1e-6), 1.0))
            legal = np.flatnonzero(mask[i])
            assert mask[i, got[i]] and np.isclose(score(got[i]), max(score(a) for a in legal))
        if weight == 0.0:
            assert (got == np.where(mask, probs, -1).argmax(1)).all()


def test_danger_net_saves_and_loads_its_weights_and_refuses_a_mismatched_file(tmp_path):
    from agents.policy import load_policy
    import torch
    belief = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion").model.actor.belief_net
    net = bench_danger_net.DangerNet(belief, extra=0)
    bench_danger_net.save_net(net, tmp_path / "net.safetensors")
    x = torch.rand(5, bench_danger_net.OBS_SIZE)
    back = bench_danger_net.load_net(tmp_path / "net.safetensors", belief, 0)
    assert torch.equal(net(x), back(x))
    with pytest.raises(SystemExit, match="0 history planes, not 3"):
        bench_danger_net.load_net(tmp_path / "net.safetensors", belief, 3)


def test_oracle_split_errors_miss_every_melding_card_or_flag_every_card():
    """miss=1: nothing is flagged, so the policy's own move; false_alarm=1 with no misses:
    every card is flagged, so a discard becomes the policy's most probable knock if one
    is legal."""
    from agents.policy import load_policy
    import torch
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    blind = bench_oracle.Oracle(policy, True, False, miss=1.0)
    alarmed = bench_oracle.Oracle(policy, True, False, false_alarm=1.0)
    knocked = 0
    for state, live, mask, obs, plain in policy_positions(policy, 120, seed=8):
        mask = mask[live]
        assert (blind.act_state(state, live) == plain).all()
        got = alarmed.act_state(state, live)
        with torch.no_grad():
            probs = policy.model.action_dist(torch.as_tensor(obs), torch.as_tensor(mask)).probs.numpy()
        for j in range(len(live)):
            knocks = np.flatnonzero(mask[j, A.KNOCK:A.DRAW_STOCK]) + A.KNOCK
            if A.DISCARD <= plain[j] < A.KNOCK and knocks.size:
                assert got[j] == knocks[np.argmax(probs[j, knocks])]
                knocked += 1
            else:
                assert got[j] == plain[j]
    assert knocked > 0


@pytest.mark.parametrize("truth,bias", [("false-alarms", -50.0), ("misses", 50.0)])
def test_net_reader_hybrids_with_a_net_that_is_never_or_always_alarmed_play_the_oracles_deny(truth, bias):
    """Keeping only the false alarms of a net that raises none, or only the misses of a
    net that misses nothing, leaves the truth: the oracle's ``deny``, game for game."""
    from agents.evaluate import play
    from agents.policy import load_policy
    from ginenv.rules import Rules
    import torch
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    net = bench_danger_net.DangerNet(policy.model.actor.belief_net, hidden=16, card_hidden=8)
    with torch.no_grad():
        net.card[-1].weight.zero_()
        net.card[-1].bias.fill_(bias)
    n = 8
    hybrid = bench_model_reader.ReaderDeny(policy, bench_danger_net.NetReader(net, n, truth), 0.5)
    got = play(hybrid, make_agent("gin_hunter"), n, Rules(), seed=2)
    want = play(bench_oracle.Oracle(policy, True, False), make_agent("gin_hunter"), n, Rules(), seed=2)
    plain = play(policy, make_agent("gin_hunter"), n, Rules(), seed=2)
    def games(r):
        return {k: v for k, v in r.items() if k != "a"}

    assert games(got) == games(want) and games(got) != games(plain)
    assert 0 < hybrid.changed < hybrid.turns
    with pytest.raises(ValueError, match="unknown truth 'both'"):
        bench_danger_net.NetReader(net, truth="both")


def test_weighted_collection_weights_each_held_card_by_the_policys_chance_of_throwing_it():
    from agents.policy import load_policy
    import torch
    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion")
    obs, held, truth = bench_danger_net.collect(policy, make_agent("gin_hunter"), 6, seed=3)
    obs_w, weights, truth_w = bench_danger_net.collect(policy, make_agent("gin_hunter"), 6, seed=3, weighted=True)
    assert (obs == obs_w).all() and (truth == truth_w).all() and ((weights > 0) == held).all()
    with torch.no_grad():
        logits = policy.model.actor(torch.as_tensor(obs))[:, A.DISCARD:A.KNOCK].numpy()
    for row in range(len(obs)):  # the policy's discard odds between two held cards, from its own logits
        cards = np.flatnonzero(held[row])
        a, b = cards[0], cards[-1]
        ratio = (weights[row, a] - 0.05) / max(weights[row, b] - 0.05, 1e-12)
        if min(weights[row, a], weights[row, b]) - 0.05 > 1e-4:
            assert np.isclose(np.log(ratio), logits[row, a] - logits[row, b], atol=1e-3)
    assert (weights[held] >= 0.05).all() and (weights.sum(1) - 0.05 * held.sum(1) <= 1 + 1e-5).all()
