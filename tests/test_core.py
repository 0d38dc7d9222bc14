"""The batched engine against the plain one-game reference, invariants on long random
runs, and scripted stories for each rule."""

import numpy as np
import pytest
import reference_engine as RE

from ginenv import actions as A
from ginenv import core
from ginenv.cards import parse_cards
from ginenv.core import DEAD, DISCARD, DONE, DRAW, FORCED_DRAW, HAND_KIND_NAMES, OFFER, TRUNCATED
from ginenv.rules import Rules
from ginenv.scoring import score_match


# ------------------------------------------------------------------ shared players
def random_actions(mask, rng):
    return np.where(mask.any(1), (rng.random(mask.shape) * mask).argmax(1), 0)


def greedy_actions(state, mask, rng):
    """Knock when it can (lowest card id); otherwise discard the card leaving the least
    deadwood (lowest id on ties); draw from the stock 70% of the time."""
    out = random_actions(mask, rng)
    knock = mask[:, A.KNOCK : A.DRAW_STOCK]
    after = np.where(mask[:, A.DISCARD : A.KNOCK], state._after_discard.astype(np.int64), 999)
    discard_phase = state.phase == DISCARD
    out = np.where(discard_phase, A.DISCARD + after.argmin(1), out)
    out = np.where(discard_phase & knock.any(1), A.KNOCK + knock.argmax(1), out)
    draw = (state.phase == DRAW) & (rng.random(len(out)) < 0.7)
    return np.where(draw, A.DRAW_STOCK, out)


def reference_greedy(game, legal, rng_value):
    if game.phase == "discard":
        knocks = [a for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
        if knocks:
            return knocks[0]
        after = game.after_discard()
        return A.DISCARD + min((after[a], a) for a in legal if a < A.KNOCK)[1]
    if game.phase == "draw" and rng_value < 0.7:
        return A.DRAW_STOCK
    return None


def play_both(rules, seed, n_games, mode, policy, max_steps=400):
    """Play n games batched and one by one in the reference; compare every step."""
    state = core.init(n_games, rules, seed, mode=mode)
    seeds = core.game_seeds(seed, n_games)
    games = [RE.Game(rules, int(seeds[i]), mode) for i in range(n_games)]
    rng = np.random.default_rng(seed)
    for _ in range(max_steps):
        mask = core.legal_action_mask(state)
        for i, g in enumerate(games):
            assert np.flatnonzero(mask[i]).tolist() == g.legal_actions(), (i, g.phase)
        if state.done.all():
            break
        u = rng.random(n_games)
        acts = random_actions(mask, rng) if policy == "random" else greedy_actions(state, mask, rng)
        if policy == "greedy":  # the reference picks its own greedy move; it must agree
            for i, g in enumerate(games):
                if not g.done:
                    mine = reference_greedy(g, g.legal_actions(), u[i])
                    if mine is not None and state.phase[i] in (DISCARD,):
                        assert mine == acts[i], (i, mine, acts[i])
        core.step(state, acts)
        for i, g in enumerate(games):
            if not g.done:
                g.step(int(acts[i]))
            assert g.done == bool(state.done[i])
            assert sorted(g.hands[0]) == state.hand(i, 0).tolist()
            assert sorted(g.hands[1]) == state.hand(i, 1).tolist()
            assert g.pile == state.pile[i, : state.pile_size[i]].tolist()
            assert g.scores == state.scores[i].tolist()
    assert state.done.all(), "games did not finish"
    for i, g in enumerate(games):
        if mode == "match":
            assert g.final == state.final_scores[i].tolist()
            assert (g.winner if g.winner is not None else -1) == state.winner[i]
        assert HAND_KIND_NAMES[state.hand_kind[i]] == g.history[-1][1]
    return state, games


# --------------------------------------------------------- against the reference
@pytest.mark.parametrize("preset", ["standard", "pagat", "wikihow"])
def test_greedy_hands_match_the_reference(preset):
    state, games = play_both(Rules.preset(preset), 11, 60, "hand", "greedy")
    kinds = {g.history[-1][1] for g in games}
    assert {"knock"} <= kinds  # the comparison did cover scored knocks


def test_random_hands_match_the_reference():
    play_both(Rules.preset("standard"), 3, 40, "hand", "random", max_steps=500)


def test_greedy_matches_match_the_reference():
    play_both(Rules.preset("standard", target=40), 5, 12, "match", "greedy", max_steps=2000)


def test_oklahoma_matches_match_the_reference():
    play_both(Rules.preset("oklahoma", target=30), 8, 12, "match", "greedy", max_steps=2000)


# -------------------------------------------------------------------- determinism
def test_game_i_of_a_batch_equals_the_game_played_alone():
    rules = Rules.preset("standard")
    batch = core.init(16, rules, seed=42, mode="match")
    seeds = core.game_seeds(42, 16)
    alone = core.init(1, rules, game_seeds_=seeds[[9]], mode="match")
    assert (batch._hands[9] == alone._hands[0]).all() and (batch._deck[9] == alone._deck[0]).all()
    rng = np.random.default_rng(0)
    for _ in range(300):
        mask = core.legal_action_mask(batch)
        acts = random_actions(mask, rng)
        core.step(batch, acts)
        core.step(alone, acts[[9]])
        assert (batch._hands[9] == alone._hands[0]).all()
        assert (batch.scores[9] == alone.scores[0]).all()


def test_same_seed_same_games_other_seed_other_games():
    a, b, c = (core.init(64, "standard", s) for s in (1, 1, 2))
    assert (a._deck == b._deck).all() and (a.dealer == b.dealer).all()
    assert (a._deck != c._deck).any()
    assert 10 < a.dealer.sum() < 54  # the cut is not constant


# -------------------------------------------------------------------- invariants
def check_invariants(state):
    b = state.batch_size
    for i in range(b):
        if state.done[i]:
            continue
        cards = (
            state.hand(i, 0).tolist()
            + state.hand(i, 1).tolist()
            + state.pile[i, : state.pile_size[i]].tolist()
            + state.stock(i).tolist()
        )
        assert sorted(cards) == list(range(52)), i  # each card in exactly one place
    sizes = state._hands.sum(2)
    mover = sizes[np.arange(b), state.current]
    other = sizes[np.arange(b), 1 - state.current]
    live = ~state.done
    assert (mover[live] == np.where(state.phase == DISCARD, 11, 10)[live]).all()
    assert (other[live] == 10).all()
    assert ((state.hand_points > 0).sum(1) <= 1).all()  # one player scores a hand


def test_invariants_hold_through_long_random_matches():
    rules = Rules.preset("standard")
    state = core.init(256, rules, seed=9, mode="match", auto_reset=True)
    rng = np.random.default_rng(1)
    hands = {i: [] for i in range(256)}
    finished = 0
    for t in range(1500):
        mask = core.legal_action_mask(state)
        acts = greedy_actions(state, mask, rng) if t % 2 else random_actions(mask, rng)
        core.step(state, acts)
        check_invariants(state)
        for i in np.flatnonzero(state.hand_ended):
            k = state.hand_kind[i]
            hands[i].append(None if k in (DEAD, TRUNCATED) else tuple(state.hand_points[i].tolist()))
        for i in np.flatnonzero(state.game_ended):
            m = score_match(hands[i], rules)  # totals = hand points plus the bonuses
            assert list(m.final) == state.final_scores[i].tolist()
            assert (m.winner if m.winner is not None else -1) == state.winner[i]
            hands[i] = []
            finished += 1
        # after an auto-reset the new game starts clean
        assert (state.scores[state.game_ended] == 0).all()
    assert finished > 20


# ----------------------------------------------------------- scripted stories
def scripted(nondealer, dealer, upcard, stock, rules="standard", mode="hand", dealer_id=0):
    """A game with a chosen deal: the non-dealer (player 1 - dealer_id) and dealer hands,
    the upcard, and the stock from the top (the rest of the deck follows)."""
    nd, de = parse_cards(nondealer), parse_cards(dealer)
    up, st = parse_cards(upcard), parse_cards(stock)
    used = set(nd) | set(de) | set(up) | set(st)
    assert len(used) == 21 + len(st), "a card is dealt twice"
    rest = [c for c in range(52) if c not in used]
    deck = np.empty(52, np.int64)
    deck[0:20:2], deck[1:20:2], deck[20] = nd, de, up[0]
    deck[21:] = list(st) + rest
    return core.init(1, rules, mode=mode, decks=deck[None], dealers=np.array([dealer_id]))


def act(state, *names):
    for name in names:
        core.step(state, np.array([name]))
    return state


def legal(state):
    return np.flatnonzero(core.legal_action_mask(state)[0]).tolist()


ND = "As 2s 3s 7h 7d 7c Jd Qd Kd 9c"  # 9 cards melded, 9c deadwood
DE = "2h 4h 6h 8c Tc 3d 5d 9s Js Ks"


def test_upcard_passed_by_both_then_the_non_dealer_must_draw():
    s = scripted(ND, DE, "5c", "4c 6c")
    assert s.phase[0] == OFFER and s.current[0] == 1 and legal(s) == [A.TAKE_DISCARD, A.PASS]
    act(s, A.PASS)
    assert s.phase[0] == OFFER and s.current[0] == 0  # now the dealer is offered it
    act(s, A.PASS)
    assert s.phase[0] == FORCED_DRAW and s.current[0] == 1 and legal(s) == [A.DRAW_STOCK]
    act(s, A.DRAW_STOCK)
    assert s.hand(0, 1).tolist().count(parse_cards("4c")[0]) == 1


def test_upcard_taken_by_the_dealer_who_then_discards_and_play_alternates():
    s = scripted(ND, DE, "5c", "4c 6c")
    act(s, A.PASS, A.TAKE_DISCARD)
    five_c = parse_cards("5c")[0]
    assert s.phase[0] == DISCARD and s.current[0] == 0 and s.taken[0] == five_c
    assert A.discard(five_c) not in legal(s)  # the card just taken stays
    act(s, A.discard(parse_cards("Ks")[0]))
    assert s.phase[0] == DRAW and s.current[0] == 1


def test_knock_on_the_first_turn():
    # With 9c the only deadwood, taking the upcard 4c and knocking with 9c leaves 4.
    s = scripted(ND, DE, "4c", "5c 6c")
    act(s, A.TAKE_DISCARD)
    assert A.knock(parse_cards("9c")[0]) in legal(s)
    act(s, A.knock(parse_cards("9c")[0]))
    assert s.done[0] and HAND_KIND_NAMES[s.hand_kind[0]] == "knock" and s.hand_points[0, 1] > 0
    assert s.knock_card[0] == parse_cards("9c")[0] and s.pile[0, s.pile_size[0] - 1] == parse_cards("9c")[0]


def test_knock_with_the_card_just_taken_is_refused():
    # Taking the upcard 2c leaves 9c + 2c as deadwood: knocking with 9c is legal, but not
    # with 2c itself, even though discarding it would leave 9 points.
    s = scripted(ND, DE, "2c", "5c 6c")
    act(s, A.TAKE_DISCARD)
    two_c = parse_cards("2c")[0]
    assert A.knock(two_c) not in legal(s) and A.knock(parse_cards("9c")[0]) in legal(s)
    before = s.copy()
    with pytest.raises(ValueError, match="just taken"):
        act(s, A.knock(two_c))
    assert (s._hands == before._hands).all() and (s.phase == before.phase).all()  # unchanged


def test_gin_cannot_be_undercut_in_play():
    # The dealer holds 0 deadwood too; the non-dealer's gin still scores the bonus.
    s = scripted("As 2s 3s 7h 7d 7c Jd Qd Kd 9c", "4h 5h 6h 8s 8d 8c 2c 3c 4c 5c", "Td", "6s 9h")
    act(s, A.TAKE_DISCARD, A.knock(parse_cards("9c")[0]))
    assert HAND_KIND_NAMES[s.hand_kind[0]] == "gin" and s.hand_points[0].tolist() == [0, 25]


def test_big_gin_under_standard_and_refused_under_pagat():
    nd = "As 2s 3s 7h 7d 7c Jd Qd Kd Td"
    for rules, allowed in (("standard", True), ("pagat", False)):
        s = scripted(nd, "4h 5h 6h 8s 2d 8c 2c 3c 4c 5c", "9d", "6s 9h", rules=rules)
        act(s, A.TAKE_DISCARD)
        assert (A.BIG_GIN in legal(s)) == allowed
        if allowed:
            act(s, A.BIG_GIN)
            assert HAND_KIND_NAMES[s.hand_kind[0]] == "big_gin"
            assert s.hand_points[0, 1] == 31 + 8 + 2 + 8  # the defender keeps 8s 2d 8c
        else:
            with pytest.raises(ValueError, match="big gin"):
                act(s, A.BIG_GIN)


def play_to_the_last_stock_draw(s):
    """Both players draw from the stock and throw back what they drew until 3 remain."""
    while s.stock_size[0] > 3:
        act(s, A.DRAW_STOCK if s.phase[0] != OFFER else A.PASS)
        if s.phase[0] == DISCARD:
            drawn = s._deck[0, s.stock_pos[0] - 1]
            act(s, A.discard(drawn))
    return s


def test_dead_hand_at_two_stock_cards_but_knocking_on_that_draw_is_allowed():
    s = scripted(ND, DE, "Qc", "")
    play_to_the_last_stock_draw(s)
    act(s, A.DRAW_STOCK)
    assert s.stock_size[0] == 2 and s.phase[0] == DISCARD
    knock_state = s.copy()
    drawn = s._deck[0, s.stock_pos[0] - 1]
    act(s, A.discard(drawn))
    assert s.done[0] and s.hand_kind[0] == DEAD and s.hand_points[0].tolist() == [0, 0]
    # The same position, but the mover knocks instead: allowed on that last draw.
    knocks = [a for a in np.flatnonzero(core.legal_action_mask(knock_state)[0]) if A.is_knock(a)]
    assert knocks and knock_state.current[0] == 1  # the non-dealer, 9 cards melded
    act(knock_state, knocks[0])
    assert knock_state.hand_kind[0] != DEAD


def test_knock_allowed_on_the_draw_of_the_third_last_card():
    # The non-dealer's 9 melded cards wait: with any drawn card, knocking with 9c leaves
    # at most 10. The non-dealer draws the 1st, 3rd, ... 29th stock card: the third-last.
    s = scripted(ND, DE, "Qc", "")
    play_to_the_last_stock_draw(s)
    assert s.current[0] == 1  # the non-dealer draws the third-last card
    act(s, A.DRAW_STOCK)
    assert s.stock_size[0] == 2
    act(s, A.knock(parse_cards("9c")[0]))
    assert HAND_KIND_NAMES[s.hand_kind[0]] in ("knock", "undercut")


def test_turn_cap_truncates_the_hand_without_score():
    s = scripted(ND, DE, "Qc", "4c 5c 6c 8h 9h", rules=Rules.preset("standard", max_turns=3))
    act(s, A.PASS, A.PASS)
    for _ in range(3):
        act(s, A.DRAW_STOCK)
        act(s, A.discard(s._deck[0, s.stock_pos[0] - 1]))
    assert s.done[0] and s.hand_kind[0] == TRUNCATED and s.hand_points[0].tolist() == [0, 0]


@pytest.mark.parametrize(
    "preset, expected", [("standard", "alternate"), ("pagat", "winner"), ("casual", "loser"), ("wikihow", "loser")]
)
def test_each_presets_dealer_rule(preset, expected):
    rules = Rules.preset(preset)
    state = core.init(64, rules, seed=3, mode="match")
    rng = np.random.default_rng(2)
    seen = 0
    for _ in range(600):
        dealer_before = state.dealer.copy()
        mask = core.legal_action_mask(state)
        core.step(state, greedy_actions(state, mask, rng))
        for i in np.flatnonzero(state.hand_ended & ~state.done):
            w = np.flatnonzero(state.hand_points[i] > 0)
            if state.hand_kind[i] in (DEAD, TRUNCATED) or not w.size:
                assert state.dealer[i] == dealer_before[i]  # same dealer after a dead hand
            else:
                want = {"alternate": 1 - dealer_before[i], "winner": w[0], "loser": 1 - w[0]}[expected]
                assert state.dealer[i] == want
                seen += 1
    assert seen > 20


def test_illegal_and_malformed_actions_are_refused():
    s = scripted(ND, DE, "5c", "4c 6c")
    with pytest.raises(ValueError, match=r"game 0: illegal action 104 \(draw from the stock\) in phase offer"):
        act(s, A.DRAW_STOCK)
    with pytest.raises(ValueError, match="shape"):
        core.step(s, np.array([1, 2]))
    with pytest.raises(ValueError, match="integers"):
        core.step(s, np.array([1.0]))
    with pytest.raises(ValueError, match="out of range"):
        core.step(s, np.array([999]))
    with pytest.raises(ValueError, match="mode"):
        core.init(2, "standard", mode="tournament")
    with pytest.raises(ValueError, match="unknown rules preset"):
        core.init(2, "nope")


def test_done_games_have_an_empty_mask():
    s = scripted(ND, DE, "4c", "5c 6c")
    act(s, A.TAKE_DISCARD, A.knock(parse_cards("9c")[0]))
    assert s.phase[0] == DONE and not core.legal_action_mask(s).any()


# -------------------------------------------------------------------- resampling
def _fields(state):
    return {f: v for f, v in vars(state).items() if isinstance(v, np.ndarray)}


def test_a_skipped_game_stays_as_it_was_while_the_others_move():
    rng = np.random.default_rng(2)
    state = core.init(16, "standard", seed=8, mode="match")
    for _ in range(30):
        before = state.copy()
        mask = core.legal_action_mask(state)
        acts = (rng.random(mask.shape) * mask).argmax(1)
        skip = rng.random(16) < 0.5
        acts[skip] = core.SKIP
        core.step(state, acts)
        mine, theirs = before.arrays(), state.arrays()
        for name in mine:
            if name in ("hand_ended", "game_ended", "hand_points", "bonus_points"):  # the step's events: cleared
                continue
            assert (mine[name][skip] == theirs[name][skip]).all(), name


# ------------------------------------------------------------ the state's records
def _played(batch=6, steps=40, seed=3):
    s = core.init(batch, "standard", seed=seed, mode="match", auto_reset=True)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        legal = core.legal_action_mask(s)
        core.step(s, np.array([rng.choice(np.flatnonzero(m)) for m in legal]))
    return s


def _assert_views_of_own_records(s):
    for name in core.ARRAY_FIELDS:
        field = getattr(s, name)
        assert field.shape[0] == s.batch_size
        assert np.shares_memory(field, s._games) == (name != "_legal"), name


def test_every_field_but_the_mask_is_a_view_of_one_record_per_game():
    s = _played()
    _assert_views_of_own_records(s)
    assert s._games.dtype == core.GAME_DTYPE and s._games.shape == (s.batch_size,)
    # A write through a field is a write into its game's record, and back.
    s.scores[2, 1] = 77
    assert s._games["scores"][2, 1] == 77
    s._games["hands"][1, 0, :] = 0
    assert not s._hands[1, 0].any()
    s.took[0, 1, 5] = True
    assert s._games["took"][0, 1, 5] == 1


@pytest.mark.parametrize("how", ["copy", "select", "with_arrays", "pickle", "deepcopy"])
def test_copies_keep_their_fields_on_records_of_their_own(how):
    import copy
    import pickle

    s = _played()
    make = {
        "copy": lambda: s.copy(),
        "select": lambda: s.select(np.arange(s.batch_size)),
        "with_arrays": lambda: s.with_arrays({k: v.copy() for k, v in s.arrays().items()}),
        "pickle": lambda: pickle.loads(pickle.dumps(s)),
        "deepcopy": lambda: copy.deepcopy(s),
    }
    t = make[how]()
    _assert_views_of_own_records(t)
    assert not np.shares_memory(t._games, s._games)
    for name in core.ARRAY_FIELDS:
        assert np.array_equal(getattr(t, name), getattr(s, name)), name
        assert getattr(t, name).dtype == getattr(s, name).dtype, name
    assert not t._legal.flags.writeable
    # Both play on the same from here, each on its own records.
    legal = core.legal_action_mask(s)
    a = np.argmax(legal, axis=1)
    core.step(s, a)
    core.step(t, a)
    for name in core.ARRAY_FIELDS:
        assert np.array_equal(getattr(t, name), getattr(s, name)), name


def test_a_state_pickled_as_separate_arrays_loads_onto_records():
    s = _played()
    old = {"rules": s.rules, "mode": s.mode, "auto_reset": s.auto_reset}
    old.update({name: np.array(v) for name, v in s.arrays().items()})  # the layout before the records
    t = core.State.__new__(core.State)
    t.__setstate__(old)
    _assert_views_of_own_records(t)
    for name in core.ARRAY_FIELDS:
        assert np.array_equal(getattr(t, name), getattr(s, name)), name


def test_the_compiled_step_takes_the_state_as_one_argument():
    compiled = pytest.importorskip("ginenv.compiled")
    import inspect

    for fn in (compiled.step, compiled.observe, compiled.deal, compiled.legal_mask, compiled.prepare_rows):
        params = list(inspect.signature(fn.py_func).parameters)
        assert "games" in params and len(params) <= 6, (fn.py_func.__name__, params)
