"""The bridge to OpenSpiel's gin_rummy: card ids, the seat's view (only what it has seen),
every phase played, the replay in this engine with 0 differences, and the evaluation."""

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from agents import make_agent  # noqa: E402
from agents.bridges import openspiel as OS  # noqa: E402
from ginenv import core  # noqa: E402
from ginenv.cards import parse_cards  # noqa: E402
from ginenv.observation import observe  # noqa: E402

GAME = pyspiel.load_game("gin_rummy")


def test_card_ids_map_both_ways_as_openspiel_names_them():
    state = GAME.new_initial_state()
    for card in range(52):
        name = state.action_to_string(-1, card).split(": ")[1]
        assert OS.to_ours(card) == parse_cards(name)[0]
        assert OS.to_os(OS.to_ours(card)) == card


def test_the_games_parameters_map_to_rules_and_others_are_refused():
    rules = OS.rules_for({"knock_card": 8, "gin_bonus": 20, "undercut_bonus": 10, "oklahoma": True})
    assert (rules.knock_limit, rules.gin_bonus, rules.undercut_bonus, rules.oklahoma) == (8, 20, 10, True)
    assert not rules.big_gin and rules.knock_tie == "knocker_zero"
    with pytest.raises(ValueError, match="num_ranks is 10"):
        OS.rules_for({"num_ranks": 10})


def test_long_runs_split_into_openspiel_melds():
    assert [len(p) for p in OS.split_run(list(range(10)))] == [5, 5]
    assert [len(p) for p in OS.split_run(list(range(7)))] == [4, 3]
    assert [len(p) for p in OS.split_run(list(range(6)))] == [3, 3]
    melds = OS.meld_ids(GAME)
    assert len(melds) == 185 and all(3 <= len(m) <= 5 for m in melds)


def test_replayed_in_this_engine_every_decision_sees_the_same_observation_and_mask():
    """OpenSpiel hands between agents through the bridge, replayed here with the same
    deck and moves: the seat's view built from OpenSpiel equals this engine's own
    observation and mask at every decision of both seats."""
    total = 0
    for agents, hands, seed in (
        (("knock_early", "random"), 240, 0),
        (("gin_hunter", "patient"), 160, 1),
        (("random", "gin_hunter"), 160, 2),
    ):
        r = OS.replay_check(GAME, tuple(make_agent(a, seed=i) for i, a in enumerate(agents)), hands, seed)
        assert r["differences"] == 0, r
        total += r["decisions"]
    assert total >= 20_000


def hidden_shuffled(state, player, rng):
    """The same OpenSpiel history with the cards ``player`` has not seen (the opponent's
    cards it never showed, the stock not yet drawn) dealt to one another's places."""
    history = [(s.player, s.action) for s in state.full_history()]
    opp = 1 - player
    shown = set(state.hands()[player]) | set(state.discard_pile()) | set(state.known_cards()[opp])
    if state.upcard() is not None:
        shown.add(state.upcard())
    for p, a in history:
        if p >= 0 and a < 52:
            shown.add(a)
    hidden = [a for p, a in history if p < 0 and a not in shown]
    mapping = dict(zip(hidden, rng.permutation(hidden)))
    other = GAME.new_initial_state()
    for p, a in history:
        other.apply_action(int(mapping.get(a, a)) if p < 0 else a)
    return other


def test_the_seats_view_depends_only_on_what_it_has_seen():
    rng = np.random.default_rng(3)
    bots = [OS.OpenSpielAgent(make_agent("knock_early"), GAME, p) for p in (0, 1)]
    checked = 0
    for _ in range(40):
        state = GAME.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = [a for a, _ in state.chance_outcomes()]
                state.apply_action(int(rng.choice(outcomes)))
                continue
            player = state.current_player()
            if state.current_phase() in (OS.Phase.FIRST_UPCARD, OS.Phase.DRAW, OS.Phase.DISCARD):
                view = OS.seat_view(state, player, bots[0].rules)
                other = OS.seat_view(hidden_shuffled(state, player, rng), player, bots[0].rules)
                assert np.array_equal(observe(view, 0), observe(other, 0))
                assert np.array_equal(core.legal_action_mask(view), core.legal_action_mask(other))
                checked += 1
            state.apply_action(bots[player].step(state))
    assert checked > 500


def test_every_phase_plays_out_and_the_bridge_never_errs():
    kinds = {}
    for agents in (("knock_early", "openspiel_simple"), ("random", "gin_hunter"), ("openspiel_simple", "patient")):
        r = OS.evaluate(*agents, hands=100, seed=4)
        assert r["hands_won_a"] + r["hands_won_b"] <= 100
        assert abs(r["gin_rate"] + r["knock_rate"] + r["undercut_rate"] + r["no_knock_rate"] - 1) < 1e-9
        for k in ("gin_rate", "knock_rate", "undercut_rate", "no_knock_rate"):
            kinds[k] = kinds.get(k, 0) + r[k]
    assert all(kinds[k] > 0 for k in ("gin_rate", "knock_rate", "undercut_rate")), kinds  # every ending occurred


def test_openspiels_simple_bot_against_itself_nets_about_zero():
    r = OS.evaluate("openspiel_simple", "openspiel_simple", hands=600, seed=9)
    assert abs(r["points_per_hand_a"]) < 3 * r["points_per_hand_se"] + 0.5, r


def test_the_evaluator_plays_in_openspiels_engine(capsys):
    from agents.evaluate import main

    assert main(["knock_early", "openspiel_simple", "--engine", "openspiel", "--hands", "20"]) == 0
    out = capsys.readouterr().out
    assert "in OpenSpiel's gin_rummy: 20 hands" in out and "matches to 100 from consecutive hands" in out
