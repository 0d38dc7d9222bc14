"""Three players and four-player teams: the batched table against a plain per-match
loop, the rotation and the sit-out, the end-of-match bonuses of each preset for three
players, the team totals, and invariants over long random matches."""

import numpy as np
import pytest

from ginenv import core
from ginenv.baselines import GinHunter, KnockEarly, Patient, RandomAgent
from ginenv.observation import observe
from ginenv.rules import PRESETS, Rules
from ginenv.scoring import match_final
from ginenv.table import team_matches, three_player_matches


def reference_match(agents, rules, match_seed, first_dealer):
    """One three-player match, plainly: each hand a one-game engine state between the two
    players after the dealer, who sits out; the dealer moves on after a scored hand."""
    totals, won, dealer, played, dead, log = [0, 0, 0], [0, 0, 0], first_dealer, 0, 0, []
    while max(totals) < rules.target:
        p, q = (dealer + 1) % 3, (dealer + 2) % 3
        s = core.init(
            1,
            rules,
            mode="hand",
            game_seeds_=core.splitmix64(np.array([match_seed + np.uint64(played)])),
            dealers=np.array([1]),
        )
        s.scores[0] = (totals[p], totals[q])
        while not s.done[0]:
            mover = int(s.current[0])
            agent = agents[(p, q)[mover]]
            core.step(s, agent.act(observe(s, mover), core.legal_action_mask(s)))
        points = s.hand_points[0]
        totals[p] += int(points[0])
        totals[q] += int(points[1])
        played += 1
        log.append((dealer, p, q))
        if s.winner[0] >= 0:
            won[(p, q)[int(s.winner[0])]] += 1
            dealer = (dealer + 1) % 3
        else:
            dead += 1
    return totals, won, played, dead, log


@pytest.mark.parametrize("preset", ["standard", "pagat", "wikihow"])
def test_the_batched_table_plays_the_matches_a_plain_loop_plays(preset):
    rules = PRESETS[preset].replace(target=60)
    agents = [KnockEarly(), GinHunter(), Patient()]
    n = 9
    r = three_player_matches(agents, n, rules, seed=4)
    seeds = core.game_seeds(4, n)
    for m in range(n):
        totals, won, played, dead, log = reference_match(agents, rules, seeds[m], m % 3)
        assert r["running"][m].tolist() == totals and r["hands_won"][m].tolist() == won, m
        assert r["hands_played"][m] == played and r["dead_hands"][m] == dead
        # the sit-out: each hand's dealer sat out, and it moved on only after a scored hand
        assert r["sat_out"][m].tolist() == [sum(d == k for d, _, _ in log) for k in range(3)]
        final, winner = match_final(np.array([totals]), np.array([won]), [played], [dead], rules)
        assert r["final"][m].tolist() == final[0].tolist() and r["winner"][m] == winner[0]


def test_a_dead_hand_keeps_the_dealer():
    # Every hand cut short by a turn cap of 2 draws: no hand is scored, so the dealer of
    # each match never moves and always sits out, while the others play on.
    # The hand cap (max_hands=5) then ends every match truncated: no bonuses, no winner.
    rules = Rules(target=10_000, max_turns=2, max_hands=5)
    r = three_player_matches([RandomAgent(1), RandomAgent(2), RandomAgent(3)], 3, rules, seed=1)
    assert r["truncated"].all() and (r["winner"] == -1).all()
    assert (r["hands_played"] == 5).all() and (r["dead_hands"] == 5).all()
    assert r["sat_out"].tolist() == [[5, 0, 0], [0, 5, 0], [0, 0, 5]]  # match i's first dealer i % 3, never moved
    assert (r["final"] == 0).all()


def test_three_player_bonuses_follow_each_preset():
    # Player 0 reached 100 and won 3 hands; player 1 won 2 (40 points); player 2 none.
    running, won, played, dead = np.array([[100, 40, 0]]), np.array([[3, 2, 0]]), [5], [0]
    cases = {
        "standard": [100 + 100 + 3 * 25, 40 + 2 * 25, 0],  # no shutout: player 1 won hands
        "pagat": [100 + 100 + 3 * 20, 40 + 2 * 20, 0],  # player 1 scored: no 200 game bonus
        "casual": [100, 40, 0],  # no bonuses at all
        "wikihow": [100 + 100 + 3 * 25, 40 + 2 * 25, 0],  # player 1 won a hand: no shutout
    }
    for preset, want in cases.items():
        final, winner = match_final(running, won, played, dead, PRESETS[preset])
        assert final[0].tolist() == want and winner[0] == 0, preset
    # Shutouts: both others scoreless and handless.
    running, won = np.array([[104, 0, 0]]), np.array([[4, 0, 0]])
    assert match_final(running, won, [4], [0], PRESETS["standard"])[0][0].tolist() == [104 * 2 + 100 + 100, 0, 0]
    assert match_final(running, won, [4], [0], PRESETS["pagat"])[0][0].tolist() == [104 + 200 + 80, 0, 0]
    assert match_final(running, won, [4], [0], PRESETS["wikihow"])[0][0].tolist() == [104 + 200 + 100, 0, 0]
    # A dead hand spoils the standard shutout; a shared best final total is a draw.
    assert match_final(running, won, [5], [1], PRESETS["standard"])[0][0, 0] == 104 + 100 + 100
    assert match_final(np.array([[100, 100, 0]]), np.array([[1, 1, 0]]), [2], [0], PRESETS["casual"])[1][0] == -1


def test_team_totals_add_the_partners_final_totals_at_their_tables():
    agents = [KnockEarly(), GinHunter(), Patient(), RandomAgent(0)]
    r = team_matches(agents, 20, "standard", seed=2)
    a, b = r["table_a"], r["table_b"]
    assert (r["teams"][:, 0] == a[:, 0] + b[:, 1]).all() and (r["teams"][:, 1] == a[:, 1] + b[:, 0]).all()
    assert ((r["winner"] == 0) == (r["teams"][:, 0] > r["teams"][:, 1])).all()
    assert (a.max(1) >= 100).all() and (b.max(1) >= 100).all()  # both tables finished: a team match ends then
    assert (r["winner"] == 0).mean() > 0.8  # knock_early + gin_hunter against patient + random
    with pytest.raises(ValueError, match="4 agents"):
        team_matches(agents[:3], 2)


def test_invariants_hold_over_long_random_three_player_matches():
    rules = Rules(target=150)
    r = three_player_matches([RandomAgent(0), KnockEarly(), RandomAgent(1)], 60, rules, seed=9)
    running, won, played, dead = r["running"], r["hands_won"], r["hands_played"], r["dead_hands"]
    assert (running >= 0).all()
    assert ((running >= rules.target).sum(1) == 1).all()  # one player scores per hand: exactly one reached it
    assert (won.sum(1) + dead == played).all()
    assert (r["sat_out"].sum(1) == played).all()
    leader = running.argmax(1)
    assert (r["final"][np.arange(60), leader] >= running[np.arange(60), leader] + rules.game_bonus).all()
    assert (r["winner"] == 1).mean() > 0.8  # knock_early against two random players


def test_the_three_player_pettingzoo_env_passes_api_test_and_plays_the_tables_matches():
    from pettingzoo.test import api_test

    from ginenv.gin_rummy_table_v0 import OBS_SIZE, TABLE_OBS_SIZE, raw_env
    from ginenv.gin_rummy_table_v0 import env as table_env

    api_test(raw_env(), num_cycles=300)
    for n in (3, 4):
        wrapped = table_env(num_players=n)
        wrapped.reset(seed=1)
        assert wrapped.possible_agents == [f"player_{i}" for i in range(n)]
        api_test(table_env(num_players=n), num_cycles=100)
    with pytest.raises(ValueError, match="num_players must be 3 or 4"):
        table_env(num_players=2)
    agents = [KnockEarly(), GinHunter(), Patient()]
    for seed in range(3):
        env = raw_env(rules=Rules(target=80))
        env.reset(seed=seed)
        first_dealer = env.dealer
        returns = dict.fromkeys(env.possible_agents, 0.0)
        for name in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            returns[name] += reward
            i = env.possible_agents.index(name)
            assert obs["observation"].shape == (TABLE_OBS_SIZE,)
            if term:
                env.step(None)
                continue
            assert i in env.parts and obs["observation"][OBS_SIZE] == 0  # the sitting-out player never moves
            sitting = ({0, 1, 2} - set(env.parts)).pop()
            seen = env.observe(env.possible_agents[sitting])
            assert seen["observation"][:OBS_SIZE].sum() == 0 and not seen["action_mask"].any()
            env.step(int(agents[i].act(obs["observation"][None, :OBS_SIZE], obs["action_mask"][None].astype(bool))[0]))
        final = info["final_scores"]
        r = three_player_matches(agents, 1, Rules(target=80), seed=seed, first_dealers=[first_dealer])
        assert final == r["final"][0].tolist()
        assert abs(sum(returns.values())) < 1e-9  # zero-sum
        assert np.argmax(list(returns.values())) == np.argmax(final)


def test_the_team_env_passes_api_test_and_plays_the_team_matches():
    from pettingzoo.test import api_test

    from ginenv.gin_rummy_table_v0 import OBS_SIZE, TEAM_OBS_SIZE, team_env

    api_test(team_env(), num_cycles=300)
    for seed in range(3):
        agents = [KnockEarly(), GinHunter(), Patient(), RandomAgent(0)]
        env = team_env()
        env.reset(seed=seed)
        returns = dict.fromkeys(env.possible_agents, 0.0)
        for name in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            returns[name] += reward
            assert obs["observation"].shape == (TEAM_OBS_SIZE,)
            if term:
                env.step(None)
                continue
            i = env.possible_agents.index(name)
            env.step(int(agents[i].act(obs["observation"][None, :OBS_SIZE], obs["action_mask"][None].astype(bool))[0]))
        r = team_matches([KnockEarly(), GinHunter(), Patient(), RandomAgent(0)], 1, "standard", seed=seed)
        assert info["team_totals"] == r["teams"][0].tolist() and info["winner_team"] == r["winner"][0]
        assert returns["player_0"] == pytest.approx(returns["player_1"]) == pytest.approx(-returns["player_2"])
        assert returns["player_2"] == pytest.approx(returns["player_3"])
        assert returns["player_0"] == pytest.approx((r["teams"][0, 0] - r["teams"][0, 1]) * 0.01)
