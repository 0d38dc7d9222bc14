"""Worlds for determinized search: resample_hidden keeps what the viewer has seen and
deals the rest anew, uniformly or by weight."""

import numpy as np
import pytest
from test_core import DE, ND, _fields, check_invariants, random_actions, scripted

from ginenv import core
from ginenv.core import DISCARD
from ginenv.worlds import resample_hidden


@pytest.mark.parametrize("viewer_is_mover", [True, False])
def test_resample_hidden_keeps_the_viewers_view_and_a_playable_deal(viewer_is_mover):
    from ginenv import melds
    from ginenv.observation import observe

    rng = np.random.default_rng(11)
    state = core.init(128, "standard", seed=12, mode="match")
    for steps in (0, 1, 9, 40):
        for _ in range(steps):
            core.step(state, random_actions(core.legal_action_mask(state), rng))
        viewer = state.current if viewer_is_mover else 1 - state.current
        viewer = viewer.astype(np.int64)
        r = resample_hidden(state, viewer, np.random.default_rng(steps))
        live = ~state.done
        assert (observe(r, viewer) == observe(state, viewer))[live].all()
        check_invariants(r)
        rows = np.arange(128)
        opp = 1 - viewer
        known = state.took[rows, opp] & state._hands[rows, opp]
        assert (r._hands[rows, opp] >= known).all()  # the cards seen taken stay
        assert (r._hands[rows, viewer] == state._hands[rows, viewer]).all()
        assert (r._hands != state._hands)[live].any()
        # The mover's knock test and legal actions are those of its (new) hand.
        d = np.flatnonzero(r.phase == DISCARD)
        expect = melds.deadwood_after_discard(r._hands[d, r.current[d]])
        assert (r._after_discard[d] == expect).all()
        ten = np.flatnonzero(live & (r._hands[rows, opp].sum(1) == 10))
        assert (r._deadwood[ten, opp[ten]] == melds.deadwood(r._hands[ten, opp[ten]])).all()
        # The resampled games play on under the rules.
        for _ in range(30):
            core.step(r, random_actions(core.legal_action_mask(r), rng))
            check_invariants(r)


@pytest.mark.parametrize("viewer", [0, 1])
def test_resample_hidden_depends_only_on_what_the_viewer_has_seen(viewer):
    from test_env import reshuffle_hidden

    rng = np.random.default_rng(viewer)
    # A 128-bit seed: its high half (_game_key) is part of the hidden deal too.
    state = core.init(64, "standard", seed=21 + (7 << 64), mode="match")
    for steps in (0, 5, 23):
        for _ in range(steps):
            core.step(state, random_actions(core.legal_action_mask(state), rng))
        other = reshuffle_hidden(state, viewer, rng)  # the slow per-game reshuffle
        other._game_seed = other._game_seed ^ np.uint64(12345)
        other._game_key = other._game_key ^ np.uint64(678)
        other._deck[:, :5] = other._deck[:, 4::-1]  # the dealt part of the deck recorded the deal
        assert (other._hands != state._hands).any()
        for lean in (1, 3):  # the least-deadwood choice of lean deals reads only the deals
            a = resample_hidden(state, viewer, np.random.default_rng(99), lean=lean)
            b = resample_hidden(other, viewer, np.random.default_rng(99), lean=lean)
            fa, fb = _fields(a), _fields(b)
            assert {"_game_seed", "_game_key", "_deck", "_hands"} <= set(fa)  # every field, hidden ones included
            for name in fa:
                assert np.array_equal(fa[name], fb[name]), name


def test_resample_hidden_deals_the_unseen_cards_uniformly():
    # One opening position copied 4000 times: the viewer (the non-dealer) holds 10 cards
    # and sees the upcard, so 41 cards are unseen: the dealer holds 10 of them.
    state = scripted(ND, DE, "Qc", "Ah").select(np.zeros(4000, np.int64))
    r = resample_hidden(state, 1 - state.dealer.astype(np.int64), np.random.default_rng(3))
    dealer = r._hands[np.arange(4000), r.dealer]
    unseen = np.ones(52, bool)
    unseen[state._hands[0, 1 - state.dealer[0]]] = False
    unseen[state.pile_mask[0]] = False
    assert unseen.sum() == 41
    freq = dealer.mean(0)
    assert (freq[~unseen] == 0).all()
    assert np.abs(freq[unseen] - 10 / 41).max() < 0.04  # about 6 standard deviations
    top = np.bincount(r._deck[:, r.stock_pos[0]], minlength=52) / 4000
    assert (top[~unseen] == 0).all() and np.abs(top[unseen] - 1 / 41).max() < 0.02


def _successive_sample(weights, k, rng):
    """The slow reference: k draws without replacement, each with probability
    proportional to the weights of the cards left."""
    w = weights.astype(np.float64).copy()
    out = []
    for _ in range(k):
        c = rng.choice(len(w), p=w / w.sum())
        out.append(c)
        w[c] = 0.0
    return out


def test_resample_hidden_with_weights_draws_the_opponents_cards_by_weight():
    n = 4000
    state = scripted(ND, DE, "Qc", "Ah").select(np.zeros(n, np.int64))
    viewer = 1 - state.dealer.astype(np.int64)
    unseen = np.ones(52, bool)
    unseen[state._hands[0, viewer[0]]] = False
    unseen[state.pile_mask[0]] = False
    ids = np.flatnonzero(unseen)
    rng = np.random.default_rng(5)
    weights = np.zeros(52)
    weights[ids] = rng.choice([0.0, 0.3, 1.0, 4.0], size=ids.size)
    weights[~unseen] = 7.0  # seen cards: their weights are never read
    r = resample_hidden(state, viewer, np.random.default_rng(3), np.tile(weights, (n, 1)))
    dealer = r._hands[np.arange(n), r.dealer]
    assert (dealer.sum(1) == 10).all() and not dealer[:, ~unseen].any()
    assert not dealer[:, weights == 0].any()  # enough cards of positive weight: never a weight-0 card
    freq = dealer.mean(0)
    ref = np.zeros(52)
    for _ in range(n):
        ref[_successive_sample(np.where(unseen, weights, 0.0), 10, rng)] += 1 / n
    assert np.abs(freq - ref).max() < 0.05  # both within about 3 standard deviations of the truth
    assert freq[weights == 4.0].mean() > freq[weights == 1.0].mean() > freq[weights == 0.3].mean()
    # The stock's order stays uniform over what the dealer did not get.
    top = np.bincount(r._deck[np.arange(n), r.stock_pos], minlength=52) / n
    assert np.abs(top - (unseen & True) * (1 - freq) / 31).max() < 0.02


def test_resample_hidden_with_weights_is_forced_and_checked():
    state = scripted(ND, DE, "Qc", "Ah").select(np.zeros(8, np.int64))
    viewer = 1 - state.dealer.astype(np.int64)
    unseen = ~(state._hands[0, viewer[0]] | state.pile_mask[0])
    sure = np.flatnonzero(unseen)[[0, 3, 5, 8, 13, 21, 22, 30, 33, 40]]
    weights = np.where(unseen, 1.0, 0.0)
    weights[sure] = 1e12
    r = resample_hidden(state, viewer, np.random.default_rng(1), np.tile(weights, (8, 1)))
    assert (np.flatnonzero(r._hands[0, r.dealer[0]]) == sure).all()
    assert (r._hands[np.arange(8), r.dealer] == r._hands[0, r.dealer[0]]).all()
    only_five = np.where(unseen, 0.0, 1.0)
    only_five[sure[:5]] = 1.0  # five cards of positive weight for ten places: all five dealt, then others
    r = resample_hidden(state, viewer, np.random.default_rng(1), np.tile(only_five, (8, 1)))
    assert r._hands[np.arange(8), r.dealer][:, sure[:5]].all()
    for bad in (np.full((8, 51), 1.0), np.full((8, 52), -1.0), np.full((8, 52), np.nan)):
        with pytest.raises(ValueError, match="weights"):
            resample_hidden(state, viewer, np.random.default_rng(1), bad)


def test_resample_hidden_lean_keeps_the_deal_of_least_opponent_deadwood():
    from ginenv import melds
    from ginenv.observation import observe

    n = 3000
    state = scripted(ND, DE, "Qc", "Ah").select(np.zeros(n, np.int64))
    viewer = 1 - state.dealer.astype(np.int64)
    rows = np.arange(n)
    r = resample_hidden(state, viewer, np.random.default_rng(3), lean=3)
    check_invariants(r)
    assert (observe(r, viewer) == observe(state, viewer)).all()
    hands = r._hands[rows, r.dealer]
    dw = r._deadwood[rows, r.dealer]
    assert (dw == melds.deadwood(hands)).all()
    # The slow reference: three plain deals each, the least of their opponents' deadwood.
    plain = [resample_hidden(state, viewer, np.random.default_rng(10 + i)) for i in range(3)]
    ref = np.min([melds.deadwood(p._hands[rows, p.dealer]) for p in plain], 0)
    assert abs(dw.mean() - ref.mean()) < 1.5  # about 3.5 standard errors
    assert np.abs(np.percentile(dw, [10, 25, 50, 75, 90]) - np.percentile(ref, [10, 25, 50, 75, 90])).max() <= 2
    one = melds.deadwood(plain[0]._hands[rows, plain[0].dealer])
    assert dw.mean() < one.mean() - 5  # it leans: a plain deal holds far more deadwood
    # Each deal still gives the opponent unseen cards only, the stock the rest.
    unseen = ~(state._hands[0, viewer[0]] | state.pile_mask[0])
    assert not hands[:, ~unseen].any() and (hands.sum(1) == 10).all()
    for bad in (0, 65, 2.0, True):
        with pytest.raises(ValueError, match="lean must be an integer from 1 to 64"):
            resample_hidden(state, viewer, np.random.default_rng(1), lean=bad)
