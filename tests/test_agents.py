"""Baselines and the evaluator."""

import json
import re

import numpy as np
import pytest
from test_env import reshuffle_hidden

from agents import BASELINES, evaluate, make_agent
from agents.evaluate import main, merge, play, report, tally
from agents.stats import bradley_terry, wilson
from ginenv import VectorEnv, core
from ginenv import actions as A
from ginenv.observation import observe
from ginenv.rules import Rules


def self_play(agent, steps=400, n=64, seed=0, check=None):
    env = VectorEnv(n, "standard", seed=seed, mode="match")
    obs, mask, _ = env.reset()
    for _ in range(steps):
        acts = agent.act(obs, mask)
        assert mask[np.arange(n), acts].all(), "an illegal action"
        if check is not None:
            check(env.state, obs, mask, acts)
        out = env.step(acts)
        obs, mask = out.obs, out.action_mask


@pytest.mark.parametrize("name", list(BASELINES))
def test_baselines_never_pick_an_illegal_action(name):
    self_play(make_agent(name, seed=1))


def test_knock_early_knocks_whenever_it_legally_can():
    def check(state, obs, mask, acts):
        can = mask[:, A.KNOCK : A.DRAW_STOCK].any(1) & ~mask[:, A.BIG_GIN]
        assert A.is_knock(acts[can]).all()
        assert (acts[mask[:, A.BIG_GIN]] == A.BIG_GIN).all()

    self_play(make_agent("knock_early"), check=check)


def test_gin_hunter_knocks_only_at_gin_until_the_endgame():
    def check(state, obs, mask, acts):
        knocked = np.flatnonzero(A.is_knock(acts))
        for i in knocked:
            after = state._after_discard[i, A.card_of(acts[i])]
            assert after == 0 or state.stock_size[i] <= 6

    self_play(make_agent("gin_hunter"), check=check)


def test_patient_knocks_early_in_the_hand_then_only_at_gin_until_the_endgame():
    seen = {"early": 0, "gin": 0, "endgame": 0}

    def check(state, obs, mask, acts):
        can = mask[:, A.KNOCK : A.DRAW_STOCK].any(1) & ~mask[:, A.BIG_GIN]
        stock = state.stock_size
        gin = np.array(
            [state._after_discard[i, mask[i, A.KNOCK : A.DRAW_STOCK]].min(initial=99) == 0 for i in range(len(acts))]
        )
        must = can & ((stock >= 25) | (stock <= 4) | gin)
        assert A.is_knock(acts[must]).all()
        assert not A.is_knock(acts[can & ~must]).any()
        seen["early"] += int((can & (stock >= 25)).sum())
        seen["gin"] += int((can & gin & (stock < 25) & (stock > 4)).sum())
        seen["endgame"] += int((can & (stock <= 4)).sum())

    self_play(make_agent("patient"), check=check)
    assert min(seen.values()) > 0, seen  # every branch of the rule was exercised


def test_camper_knocks_at_will_only_in_its_first_three_turns_then_only_for_gin():
    seen = {"early": 0, "gin": 0, "waited": 0}

    def check(state, obs, mask, acts):
        can = mask[:, A.KNOCK : A.DRAW_STOCK].any(1) & ~mask[:, A.BIG_GIN]
        rows = np.arange(len(acts))
        own_turn = state.discarded[rows, state.current].sum(1) + 1  # its discards so far, plus this one
        gin = np.array([state._after_discard[i, mask[i, A.KNOCK : A.DRAW_STOCK]].min(initial=99) == 0 for i in rows])
        must = can & ((own_turn <= 3) | gin)
        assert A.is_knock(acts[must]).all()
        assert not A.is_knock(acts[can & ~must]).any()
        seen["early"] += int((can & (own_turn <= 3) & ~gin).sum())
        seen["gin"] += int((can & gin & (own_turn > 3)).sum())
        seen["waited"] += int((can & ~must).sum())

    self_play(make_agent("camper"), steps=600, check=check)
    assert min(seen.values()) > 0, seen  # every branch of the rule was exercised


def test_camper_takes_the_face_up_card_only_when_it_joins_a_meld_and_lowers_the_deadwood():
    from ginenv import melds

    def check(state, obs, mask, acts):
        for i in np.flatnonzero(mask[:, A.TAKE_DISCARD]):
            p = state.current[i]
            hand = state._hands[i, p].copy()
            top = state.pile[i, state.pile_size[i] - 1]
            now = int(melds.deadwood(hand[None])[0])
            hand[top] = True
            after = melds.deadwood_after_discard(hand[None])[0].astype(np.int64)
            after[top] = 1 << 20
            joins = int(melds.deadwood(hand[None])[0]) < now + int(melds.CARD_VALUES[top])
            assert (acts[i] == A.TAKE_DISCARD) == (joins and after.min() < now)

    self_play(make_agent("camper"), steps=200, check=check)


def test_camper_lookahead_is_the_mean_of_the_best_deadwood_over_each_unseen_draw():
    from ginenv import melds
    from ginenv.baselines import lookahead

    rng = np.random.default_rng(4)
    hand = np.zeros((3, 52), bool)
    unseen = np.zeros((3, 52), bool)
    for i in range(3):
        cards = rng.permutation(52)
        hand[i, cards[:11]] = True
        unseen[i, cards[11 : 11 + 5 + 7 * i]] = True
    got = lookahead(hand, unseen, hand)
    for i in range(3):
        for c in np.flatnonzero(hand[i]):
            kept = hand[i].copy()
            kept[c] = False
            best = []
            for u in np.flatnonzero(unseen[i]):  # each draw, then the best of the 11 discards
                drawn = kept.copy()
                drawn[u] = True
                best.append(
                    min(int(melds.deadwood((drawn & (np.arange(52) != d))[None])[0]) for d in np.flatnonzero(drawn))
                )
            assert got[i, c] == pytest.approx(np.mean(best))
        assert (got[i, ~hand[i]] == 0).all()


@pytest.mark.parametrize("name", ["knock_early", "gin_hunter", "patient", "camper", "marjj"])
def test_baselines_act_the_same_batched_and_one_by_one(name):
    agent = make_agent(name)
    env = VectorEnv(40, "standard", seed=3)
    obs, mask, _ = env.reset()
    for _ in range(60):
        batched = agent.act(obs, mask)
        single = np.array([agent.act(obs[i : i + 1], mask[i : i + 1])[0] for i in range(len(obs))])
        assert (batched == single).all()
        out = env.step(batched)
        obs, mask = out.obs, out.action_mask


@pytest.mark.parametrize("name", list(BASELINES))
def test_baselines_ignore_hidden_cards(name):
    rng = np.random.default_rng(0)
    state = core.init(64, "standard", seed=8)
    for _ in range(3):
        for _ in range(9):
            mask = core.legal_action_mask(state)
            core.step(state, make_agent("knock_early").act(observe(state, state.current), mask))
        mover = int(state.current[0])
        other = reshuffle_hidden(state, mover, rng)
        rows = np.flatnonzero(state.current == mover)
        mask = core.legal_action_mask(state)[rows]
        a1 = make_agent(name, seed=5).act(observe(state, mover)[rows], mask)
        a2 = make_agent(name, seed=5).act(observe(other, mover)[rows], mask)
        assert (a1 == a2).all()


def test_knock_early_beats_random_in_almost_every_hand():
    r = play(make_agent("knock_early"), make_agent("random"), 400, Rules(), seed=1, mode="hand")
    assert r["hands_won_a"] / r["hands"] > 0.98  # public figures: above 98%


def test_evaluator_counts_add_up_and_repeat_with_a_seed():
    rules = Rules.preset("standard", target=50)
    r1 = play(make_agent("knock_early"), make_agent("gin_hunter"), 60, rules, seed=4)
    r2 = play(make_agent("knock_early"), make_agent("gin_hunter"), 60, rules, seed=4)
    assert r1 == r2
    assert r1["wins_a"] + r1["wins_b"] + r1["draws"] == 60
    assert sum(r1["hand_kinds"].values()) == r1["hands"]
    assert r1["hands_won_a"] + r1["hands_won_b"] <= r1["hands"]
    assert r1["win_rate_a_ci95"][0] <= r1["win_rate_a"] <= r1["win_rate_a_ci95"][1]
    # The split by who ended each hand adds up to the totals kept apart from it.
    split = r1["hands_by_ender"]
    assert sum(c["hands"] for c in split.values()) == r1["hands"]
    for kind, count in r1["hand_kinds"].items():
        assert sum(c["hands"] for k, c in split.items() if k.endswith("/" + kind)) == count
    net = sum(c["net_points_a"] for c in split.values())
    assert net == round((r1["points_per_hand_a"] - r1["points_per_hand_b"]) * r1["hands"])
    assert sum(c["draws"] for c in split.values()) == round(r1["mean_hand_length"] * r1["hands"])
    # And it names the right player: a knocker who is undercut loses, one who goes gin wins.
    for key, c in split.items():
        who, kind = key.split("/")
        sign = {"a": 1, "b": -1, "-": 0}[who]
        if kind in ("gin", "big_gin", "knock"):
            assert sign * c["net_points_a"] > 0, key
        if kind == "undercut":
            assert sign * c["net_points_a"] < 0, key
    assert {k.split("/")[0] for k in split} >= {"a", "b"}


def test_evaluator_hand_ends_match_a_hand_by_hand_count():
    """How each side won its hands, counted hand by hand from who knocked and who scored
    (a knocker who scores no points was undercut, or tied): the evaluator's ``hand_ends``."""
    rules = Rules.preset("standard", target=50)
    agents = make_agent("knock_early"), make_agent("camper")
    n = 40
    r = play(*agents, n, rules, seed=6)
    state = core.init(n, rules, 6, mode="match", dealers=((np.arange(n) // 2) % 2).astype(np.int8))
    a_seat = np.arange(n) % 2
    want = {
        side: dict.fromkeys(("won_by_knock", "won_by_undercut", "won_by_gin", "won_by_big_gin"), 0) for side in "ab"
    }
    knocks = {"a": [0, 0], "b": [0, 0]}  # [knocks short of gin, undercut]
    while not state.done.all():
        obs, mask = observe(state, state.current), core.legal_action_mask(state)
        acts = np.zeros(n, np.int64)
        for agent, rows in zip(agents, (state.current == a_seat, state.current != a_seat)):
            rows = np.flatnonzero(rows & ~state.done)
            if rows.size:
                acts[rows] = agent.act(obs[rows], mask[rows])
        core.step(state, acts)
        for g in np.flatnonzero(state.hand_ended):
            knocker = state.last_knocker[g]
            if knocker < 0:
                continue
            side = "a" if knocker == a_seat[g] else "b"
            other = "b" if side == "a" else "a"
            kind = core.HAND_KIND_NAMES[state.hand_kind[g]]
            scored = state.hand_points[g, knocker] > 0
            if kind in ("gin", "big_gin"):
                want[side][f"won_by_{kind}"] += 1
                continue
            knocks[side][0] += 1
            if scored:
                want[side]["won_by_knock"] += 1
            elif state.hand_points[g, 1 - knocker] > 0:
                knocks[side][1] += 1
                want[other]["won_by_undercut"] += 1
    for side in "ab":
        got = r["hand_ends"][side]
        assert {k: got[k] for k in want[side]} == want[side]
        assert (got["knocks"], got["undercut"]) == tuple(knocks[side])
        assert got["undercut_rate"] == pytest.approx(knocks[side][1] / knocks[side][0])
    assert knocks["a"][1] > 0 and want["b"]["won_by_gin"] > 0  # camper undercuts and goes gin


def test_wilson_interval_known_values():
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)


def test_bradley_terry_orders_players_by_results():
    ratings = bradley_terry(["a", "b", "c"], {(0, 1): (70, 30, 0), (1, 2): (70, 30, 0), (0, 2): (85, 15, 0)})
    assert ratings[0] > ratings[1] > ratings[2]
    even = bradley_terry(["a", "b"], {(0, 1): (50, 50, 0)})
    assert even[0] == pytest.approx(even[1])


def test_cli_writes_json_and_refuses_bad_input(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["knock_early", "random", "--matches", "20", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["results"][0]["games"] == 20 and data["results"][0]["wins_a"] == 20
    assert "matches won" in capsys.readouterr().out
    for bad, message in (
        (["nobody", "random"], "knock_early, gin_hunter, random, patient, camper"),
        (["random", str(tmp_path / "missing")], "no checkpoint at"),
        (["random", "knock_early", "--matches", "0"], "--matches must be from 1 to"),
        (["random", "knock_early", "--rules", "vegas"], "valid presets"),
    ):
        with pytest.raises(SystemExit):
            main(bad)
        assert message in capsys.readouterr().err


def test_evaluator_slices_add_up_to_the_whole_and_workers_give_its_figures(tmp_path, capsys, monkeypatch):
    rules = Rules.preset("standard", target=50)
    a, b = make_agent("knock_early"), make_agent("camper")
    whole = play(a, b, 30, rules, seed=9)
    parts = [tally(a, b, k, rules, seed=9, first=f) for f, k in ((0, 7), (7, 23))]
    assert report(merge(parts), whole["a"], whole["b"]) == whole
    # A slice of one game is that game of the whole: its seat, first dealer and deal.
    seventh = play(a, b, 1, rules, seed=9, first=7)
    assert seventh != play(a, b, 1, rules, seed=9)
    assert seventh == report(merge([tally(a, b, 1, rules, seed=9, first=7)]), whole["a"], whole["b"])
    # The command line: the same figures from two processes as from one (a trained policy).
    # Slices of at most 4 games shared by two workers: 4 + 4 + 1, a line for each finished
    # slice but the last (stderr is not a terminal here), the same figures again.
    runs = {}
    for workers, slice_games in ((1, 100), (2, 100), (2, 4)):
        monkeypatch.setattr(evaluate, "SLICE_GAMES", slice_games)
        out = tmp_path / f"{workers}-{slice_games}.json"
        args = ["shipped", "knock_early", "--matches", "9", "--seed", "5", "--json", str(out)]
        capsys.readouterr()
        assert main([*args, "--workers", str(workers)]) == 0
        runs[workers, slice_games] = json.loads(out.read_text())["results"][0]
        runs[workers, slice_games].pop("seconds")
        so_far = [line for line in capsys.readouterr().err.splitlines() if "so far" in line]
        assert len(so_far) == {(1, 100): 0, (2, 100): 1, (2, 4): 2}[workers, slice_games]
    assert runs[1, 100] == runs[2, 100] == runs[2, 4] and runs[1, 100]["games"] == 9
    assert re.fullmatch(r"shipped vs knock_early: [4-8]/9 games, win rate [01]\.\d{3} so far", so_far[-1])
    for bad, message in (
        (["knock_early", "random", "--workers", "0"], "--workers must be from 1 to 64"),
        (["knock_early", "random", "--workers", "2", "--engine", "openspiel"], "--workers splits two-agent"),
    ):
        with pytest.raises(SystemExit):
            main(bad)
        assert message in capsys.readouterr().err


def test_round_robin_prints_the_cross_table_and_ratings(capsys):
    assert main(["--round-robin", "random", "knock_early", "gin_hunter", "--matches", "10"]) == 0
    text = capsys.readouterr().out
    assert "rating" in text and "Bradley-Terry" in text


def test_the_hand_mode_report_says_each_count_once_and_how_dead_hands_count(capsys):
    from agents.evaluate import play
    from ginenv.rules import Rules

    r = play(make_agent("random", seed=5), make_agent("random", seed=6), 300, Rules.preset("standard"), 5, "hand")
    assert r["draws"] > 0  # random play leaves hands dead
    assert main(["random", "random", "--hands", "300", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert out.count("hands won") == 1 and "dead or drawn: " + str(r["draws"]) in out
    assert "a dead or drawn hand counts half" in out
    decided = r["wins_a"] + r["wins_b"]
    assert f"of the {decided} hands decided random won {r['wins_a'] / decided:.3f}" in out
