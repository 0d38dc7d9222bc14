"""The compiled engine against the numpy engine: the same games, bit for bit. Both play
side by side on random, baseline and adversarial games for every preset, in hand and
match mode, batched and one game at a time, and at the three- and four-player tables;
every field of the state, every mask and both seats' observations must be identical
at every decision. The compiled meld maths is checked against ``ginenv.melds`` (itself
checked against brute force in test_melds) on random and crowded hands."""

import contextlib

import numpy as np
import pytest

from ginenv import actions as A
from ginenv import core, melds
from ginenv.baselines import GinHunter, KnockEarly, Patient, RandomAgent
from ginenv.observation import observe
from ginenv.rules import PRESETS

compiled = pytest.importorskip("ginenv.compiled", reason="the numba engine needs numba")


@contextlib.contextmanager
def engine(name):
    before = core.set_engine(name)
    try:
        yield
    finally:
        core.set_engine(before)


def both(fn):
    """``fn()`` once on each engine: (numpy's result, numba's)."""
    with engine("numpy"):
        a = fn()
    with engine("numba"):
        b = fn()
    return a, b


def assert_same_state(a: core.State, b: core.State, where):
    for name, x in a.arrays().items():
        y = b.arrays()[name]
        assert x.dtype == y.dtype and (x == y).all(), (where, name)


class NeverKnocks:
    def act(self, obs, mask):
        m = np.asarray(mask, bool).copy()
        m[:, A.KNOCK : A.DRAW_STOCK] = False
        m[:, A.BIG_GIN] = False
        m[~m.any(1)] = np.asarray(mask, bool)[~m.any(1)]
        return m.argmax(1)


class KnocksFirst:
    """Big gin, then any knock, then the lowest legal action: every hand ends early."""

    def act(self, obs, mask):
        m = np.asarray(mask, bool)
        pick = m.argmax(1)
        knock = m[:, A.KNOCK : A.DRAW_STOCK]
        pick = np.where(knock.any(1), A.KNOCK + knock.argmax(1), pick)
        return np.where(m[:, A.BIG_GIN], A.BIG_GIN, pick)


POLICIES = {
    "random": lambda: RandomAgent(7),
    "knock_early": lambda: KnockEarly(),
    "gin_hunter": lambda: GinHunter(),
    "patient": lambda: Patient(),
    "never_knocks": NeverKnocks,
    "knocks_first": KnocksFirst,
}


def crowded_decks(n, rng):
    """Decks dealt in rank order within random blocks: hands full of sets and quads (and
    big gins), the set-option enumeration's hardest cases."""
    decks = np.empty((n, 52), np.int8)
    for i in range(n):
        ranks = rng.permutation(13)
        order = np.concatenate([r + 13 * rng.permutation(4) for r in ranks])
        cut = rng.integers(0, 8)
        decks[i] = np.roll(order, cut)
    return decks


def play_side_by_side(rules, mode, batch, policy, seed, steps=400, decks=None):
    """Both engines play the same games with the same actions; compared at every step."""
    agents = {0: POLICIES[policy](), 1: POLICIES[policy]()}
    with engine("numpy"):
        a = core.init(batch, rules, seed=seed, mode=mode, auto_reset=True, decks=decks)
    with engine("numba"):
        b = core.init(batch, rules, seed=seed, mode=mode, auto_reset=True, decks=decks)
    assert_same_state(a, b, "init")
    for t in range(steps):
        for seat in (0, 1):
            oa, ob = both(lambda seat=seat: observe(a if core.engine() == "numpy" else b, seat, True))
            assert (oa == ob).all(), (rules, mode, policy, t, seat, np.argwhere(oa != ob)[:3])
        mask = core.legal_action_mask(a)
        assert (mask == core.legal_action_mask(b)).all(), (t, "mask")
        obs = observe(a, a.current)
        actions = np.zeros(batch, np.int64)
        for seat in (0, 1):
            idx = np.flatnonzero((a.current == seat) & mask.any(1))
            if idx.size:
                actions[idx] = agents[seat].act(obs[idx], mask[idx])
        with engine("numpy"):
            core.step(a, actions)
        with engine("numba"):
            core.step(b, actions)
        assert_same_state(a, b, (rules, mode, policy, t))
        ra, rb = both(lambda: core.rewards(a if core.engine() == "numpy" else b, 0.01, 1.0))
        assert (ra == rb).all()
    return a


@pytest.mark.parametrize("rules", sorted(PRESETS))
@pytest.mark.parametrize("mode", ["hand", "match"])
def test_both_engines_play_the_same_random_games(rules, mode):
    s = play_side_by_side(rules, mode, 48, "random", seed=11, steps=250)
    assert s.game_no.sum() + s.hands_played.sum() > 48  # many hands ended, by every way a hand ends


@pytest.mark.parametrize("policy", ["knock_early", "gin_hunter", "patient", "never_knocks", "knocks_first"])
def test_both_engines_play_the_same_baseline_and_adversarial_games(policy):
    for rules, mode in (("standard", "match"), ("pagat", "hand"), ("oklahoma", "match")):
        play_side_by_side(rules, mode, 32, policy, seed=5, steps=200)


def test_both_engines_agree_on_crowded_deals_with_sets_quads_and_big_gin():
    rng = np.random.default_rng(3)
    s = play_side_by_side("standard", "hand", 64, "knocks_first", seed=2, steps=60, decks=crowded_decks(64, rng))
    assert (s.hand_kind == 2).any() or (s.hand_kind == 1).any()  # big gin or gin came up


def test_one_game_at_a_time_equals_the_batch_on_both_engines():
    batch = play_side_by_side("standard", "match", 8, "random", seed=9, steps=120)
    for g in range(8):
        seeds = core.game_seeds(9, 8)[[g]]
        one_a, one_b = both(
            lambda seeds=seeds: core.init(1, "standard", mode="match", auto_reset=True, game_seeds_=seeds)
        )
        assert_same_state(one_a, one_b, g)
    assert batch.batch_size == 8


def test_the_tables_play_the_same_matches_on_both_engines():
    from ginenv import table

    ra, rb = both(lambda: table.three_player_matches([RandomAgent(1), KnockEarly(), GinHunter()], 30, seed=4))
    for k in ra:
        assert (np.asarray(ra[k]) == np.asarray(rb[k])).all(), k
    ta, tb = both(lambda: table.team_matches([RandomAgent(1), KnockEarly(), GinHunter(), Patient()], 20, seed=4))
    for k in ta:
        assert (np.asarray(ta[k]) == np.asarray(tb[k])).all(), k


def test_the_pettingzoo_env_plays_the_same_episodes_on_both_engines():
    import ginenv

    def episode_log():
        env = ginenv.env(mode="match")
        env.reset(seed=12)
        rng = np.random.default_rng(0)
        log = []
        for agent in env.agent_iter(max_iter=5000):
            obs, reward, term, trunc, _ = env.last()
            log.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc))
            action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
        return log

    a, b = both(episode_log)
    assert len(a) > 100 and a == b


# ---------------------------------------------------------------- the meld maths
def random_hands(n, size, rng, crowded=False):
    hands = np.zeros((n, 52), bool)
    for i in range(n):
        if crowded:  # few ranks: sets and quads everywhere
            ranks = rng.choice(13, size=4, replace=False)
            pool = np.concatenate([r + 13 * np.arange(4) for r in ranks])
            pool = np.concatenate([pool, rng.choice(52, 8, replace=False)])
            cards = rng.choice(np.unique(pool), size=size, replace=False)
        else:
            cards = rng.choice(52, size=size, replace=False)
        hands[i, cards] = True
    return hands


@pytest.mark.parametrize("crowded", [False, True])
def test_compiled_deadwood_after_discard_equals_the_numpy_meld_maths(crowded):
    rng = np.random.default_rng(1 + crowded)
    for size in (1, 2, 5, 10, 11, 12):
        hands = random_hands(1500, size, rng, crowded)
        want = melds.deadwood_after_discard(hands)
        got = np.empty_like(want)
        for i, h in enumerate(hands):
            compiled.after_discard(h, got[i])
        assert (got == want).all(), size
        dead = np.array([compiled.hand_deadwood(h) for h in hands])
        assert (dead == melds.deadwood(hands)).all(), size
        batch, batch_after = np.empty(len(hands), np.int64), np.empty_like(want)  # a batch a call
        compiled.hands_deadwood(hands, batch)
        compiled.hands_after_discard(hands, batch_after)
        assert (batch == dead).all() and (batch_after == want).all(), size


@pytest.mark.parametrize("policy", [KnockEarly, GinHunter, Patient])
def test_the_baselines_choose_alike_on_both_engines(policy):
    """The baselines' meld maths (their draw decision, gin_hunter's connection score)
    runs compiled on the numba engine: the same moves as the numpy one's, on real
    decisions of every phase and on crowded deals full of sets."""
    rng = np.random.default_rng(4)
    for decks in (None, crowded_decks(64, rng)):
        s = core.init(64, "standard", seed=9, mode="match", auto_reset=True, decks=decks)
        agent, seen = policy(), 0
        for _ in range(120):
            mask = core.legal_action_mask(s)
            rows = np.flatnonzero(mask.any(1))
            obs, legal = observe(s, s.current)[rows], mask[rows]
            a, b = both(lambda: agent.act(obs, legal))  # noqa: B023 (called at once)
            assert (a == b).all()
            seen += len(rows)
            actions = np.zeros(64, np.int64)
            actions[rows] = a
            core.step(s, actions)
        assert seen > 5000


def test_every_set_option_of_four_quads_is_enumerated():
    hand = np.zeros(52, bool)
    for r in (0, 4, 8):  # three quads: 6**3 options
        hand[r + 13 * np.arange(4)] = True
    opts, k = compiled._options_of(melds_masks(hand))
    assert k == 216
    _, ref, _ = melds.set_options(melds.suit_masks(hand[None]), include_base=True)
    assert sorted(map(tuple, opts[:k].tolist())) == sorted(map(tuple, ref.astype(np.int64).tolist()))


def melds_masks(hand):
    return melds.suit_masks(hand[None])[0].astype(np.int64)


def test_an_illegal_action_is_refused_with_the_numpy_engines_message_and_nothing_changes():
    msgs = []
    for name in ("numpy", "numba"):
        with engine(name):
            s = core.init(4, "standard", seed=1)
            before = s.copy()
            with pytest.raises(ValueError) as e:
                core.step(s, np.array([A.DRAW_STOCK] * 4))  # the offer: draw is not legal
            assert_same_state(before, s, name)
            msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "illegal action 104" in msgs[0]


def test_the_engine_is_chosen_once_and_named():
    assert core.engine() in core.ENGINES
    with pytest.raises(ValueError, match="engine must be one of numba, numpy"):
        core.set_engine("jax")


def test_dealing_anew_and_positions_from_a_view_agree_on_both_engines():
    from ginenv.view import position
    from ginenv.worlds import resample_hidden

    played = play_side_by_side("standard", "match", 32, "knock_early", seed=21, steps=37)
    for seat in (0, 1):
        a, b = both(lambda seat=seat: resample_hidden(played, np.full(32, seat), np.random.default_rng(seat)))
        assert_same_state(a, b, seat)
    hand = "As 2s 3s 7h 7d 7c Jd Qd Kd 9c 9h"
    pa, pb = both(lambda: position(hand, pile="5c 3c", phase="discard", opponent_discarded="5c"))
    assert_same_state(pa, pb, "position")


def test_the_environment_variable_chooses_the_engine_at_import():
    import os
    import subprocess
    import sys

    code = "from ginenv import core; print(core.engine())"
    for wanted, expect in (("numpy", "numpy"), ("numba", "numba")):
        env = {**os.environ, "GINENV_ENGINE": wanted}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.stdout.strip() == expect, out.stderr
    env = {**os.environ, "GINENV_ENGINE": "jax"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "GINENV_ENGINE must be one of numba, numpy" in out.stderr


@pytest.mark.parametrize("rules", sorted(PRESETS))
def test_both_engines_end_matches_alike_every_bonus_and_shutout(rules):
    # knock_early ends hands fast, so matches end (and auto-reset) within the run.
    s = play_side_by_side(rules, "match", 48, "knock_early", seed=31, steps=500)
    assert s.game_no.sum() >= 10  # matches ended: their bonuses and winners compared


def test_both_engines_cut_a_match_at_the_hand_cap_alike():
    from ginenv.rules import Rules

    s = play_side_by_side(Rules(max_hands=2), "match", 32, "never_knocks", seed=8, steps=300)
    assert s.game_no.sum() >= 32  # every slot's first match was cut
