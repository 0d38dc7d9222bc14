"""The environments: hidden information, the PettingZoo contract, the old gin_rummy_v4
bugs, the vector env and the Gymnasium env."""

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, render_test, seed_test

from ginenv import SingleAgentEnv, VectorEnv, core, gin_rummy_v0
from ginenv import actions as A
from ginenv.cards import parse_cards
from ginenv.observation import NUM_PLANES, OBS_SIZE, PERFECT_OBS_SIZE, observe
from ginenv.rules import Rules

N = 52


def random_play(state, steps, rng):
    for _ in range(steps):
        mask = core.legal_action_mask(state)
        core.step(state, np.where(mask.any(1), (rng.random(mask.shape) * mask).argmax(1), 0))
    return state


def reshuffle_hidden(state, viewer, rng):
    """A copy of the state where everything ``viewer`` has not seen is dealt again at
    random: the stock order and the opponent's cards that did not come from the pile."""
    s = state.copy()
    opp = 1 - viewer
    for g in range(s.batch_size):
        if s.done[g]:
            continue
        known = s.took[g, opp] & s._hands[g, opp]
        hidden_opp = np.flatnonzero(s._hands[g, opp] & ~known)
        stock = s.stock(g)
        pool = rng.permutation(np.concatenate([hidden_opp, stock]))
        s._hands[g, opp, hidden_opp] = False
        s._hands[g, opp, pool[: hidden_opp.size]] = True
        s._deck[g, s.stock_pos[g] :] = pool[hidden_opp.size :]
    return s


@pytest.mark.parametrize("viewer", [0, 1])
def test_observation_is_blind_to_the_stock_and_the_opponents_unseen_cards(viewer):
    rng = np.random.default_rng(viewer)
    state = core.init(64, "standard", seed=4)
    changed = 0
    for steps in (0, 7, 30):
        random_play(state, steps, rng)
        other = reshuffle_hidden(state, viewer, rng)
        changed += int((other._hands[:, 1 - viewer] != state._hands[:, 1 - viewer]).any())
        assert (observe(state, viewer) == observe(other, viewer)).all()
        # ... while the opponent's own view does see its hand change
        assert (observe(state, 1 - viewer) != observe(other, 1 - viewer)).any()
    assert changed


def test_perfect_information_adds_the_opponents_hand_only_when_asked():
    state = core.init(4, "standard", seed=1)
    plain, full = observe(state, 0), observe(state, 0, perfect_information=True)
    assert plain.shape == (4, OBS_SIZE) and full.shape == (4, PERFECT_OBS_SIZE)
    opp_plane = full[:, NUM_PLANES * N : (NUM_PLANES + 1) * N]
    assert (opp_plane == state._hands[:, 1]).all()


def plane(obs, k):
    return obs[..., k * N : (k + 1) * N]


def test_every_card_is_accounted_for_in_a_players_view_including_the_knock_card():
    # own hand + top of pile + rest of pile + opponent's known cards + unseen = 52,
    # also at the end of a hand, where the knock card lies on the pile.
    e = gin_rummy_v0.raw_env()
    for seed in range(20):
        e.reset(seed=seed)
        ended = False
        while not ended:
            e.step(simple_move(e.observe(e.agent_selection)["action_mask"]))
            ended = all(e.terminations.values()) or all(e.truncations.values())
            for who in e.possible_agents:
                obs = e.observe(who)["observation"]
                parts = sum(plane(obs, k) for k in (0, 1, 2, 3, 5))
                assert (parts == 1).all(), (seed, who)
        if e._state.knock_card[0] >= 0:
            top = np.flatnonzero(plane(e.observe("player_0")["observation"], 1))
            assert top.tolist() == [e._state.knock_card[0]]


def test_pettingzoo_api_seed_and_render_tests_pass():
    api_test(gin_rummy_v0.env(), num_cycles=400)
    api_test(gin_rummy_v0.env(mode="match"), num_cycles=1500)
    seed_test(gin_rummy_v0.env, num_cycles=300)
    render_test(lambda render_mode=None: gin_rummy_v0.env(render_mode=render_mode))


# --------------------------------------------------- the five bugs of gin_rummy_v4
def simple_move(mask):
    """Knock if possible, else draw from the stock, else pass, else the first discard."""
    knocks = np.flatnonzero(mask[A.KNOCK : A.DRAW_STOCK])
    if knocks.size:
        return int(A.KNOCK + knocks[0])
    for a in (A.DRAW_STOCK, A.PASS):
        if mask[a]:
            return a
    return int(np.flatnonzero(mask)[0])


def play_to_a_knock(e, seed):
    """Play a hand with ``simple_move``. Returns the rewards and the final state."""
    e.reset(seed=seed)
    while not (all(e.terminations.values()) or all(e.truncations.values())):
        e.step(simple_move(e.observe(e.agent_selection)["action_mask"]))
    return dict(e._cumulative_rewards), e._state


def test_v4_bug_seeded_reset_does_not_change_rewards():
    seeded, unseeded = gin_rummy_v0.raw_env(), gin_rummy_v0.raw_env()
    for seed in range(8):
        r, s = play_to_a_knock(seeded, seed)
        points = s.hand_points[0] if s.hand_ended[0] else np.zeros(2)
        assert r["player_0"] == pytest.approx(0.01 * (points[0] - points[1]))
        assert r["player_0"] == -r["player_1"]
    # after a seeded reset the rewards start at zero, and the same deal gives the same rewards
    seeded.reset(seed=3)
    assert set(seeded.rewards.values()) == {0.0}
    unseeded.reset(seed=3)
    assert play_to_a_knock(unseeded, 3)[0] == play_to_a_knock(seeded, 3)[0]


def test_v4_bug_observe_of_the_player_not_on_move_shows_its_own_hand():
    e = gin_rummy_v0.raw_env()
    e.reset(seed=5)
    mover = e.agent_selection
    other = [a for a in e.possible_agents if a != mover][0]
    obs = e.observe(other)
    assert (plane(obs["observation"], 0) == e._state._hands[0, e.possible_agents.index(other)]).all()
    assert not obs["action_mask"].any()  # and its mask is all zeros
    assert e.observe(mover)["action_mask"].any()


def test_v4_bug_no_knock_with_the_card_just_picked_up():
    s = core.init(
        1,
        "standard",
        decks=_deck("As 2s 3s 7h 7d 7c Jd Qd Kd 9c", "2h 4h 6h 8c Tc 3d 5d 9s Js Ks", "2c"),
        dealers=np.array([0]),
    )
    core.step(s, np.array([A.TAKE_DISCARD]))
    mask = core.legal_action_mask(s)[0]
    assert not mask[A.knock(parse_cards("2c")[0])] and mask[A.knock(parse_cards("9c")[0])]


def test_v4_bug_knock_limits_below_ten_are_enforced_and_above_ten_refused():
    deck = _deck("As 2s 3s 7h 7d 7c Jd Qd Kd 9c", "2h 4h 6h 8c Tc 3d 5d 9s Js Ks", "5c")
    for limit, can in ((10, True), (5, True), (4, False)):
        s = core.init(1, Rules(knock_limit=limit), decks=deck, dealers=np.array([0]))
        core.step(s, np.array([A.TAKE_DISCARD]))
        assert core.legal_action_mask(s)[0, A.knock(parse_cards("9c")[0])] == can  # leaves 5c: 5
    with pytest.raises(ValueError, match="knock_limit"):
        gin_rummy_v0.raw_env(rules=Rules.preset("standard", knock_limit=15))


def test_v4_bug_the_knock_card_stays_in_the_observation():
    for seed in range(2, 30):
        e = gin_rummy_v0.raw_env()
        _, s = play_to_a_knock(e, seed)
        if s.knock_card[0] >= 0:
            break
    card = s.knock_card[0]
    assert card >= 0
    for p in (0, 1):
        assert plane(observe(s, p)[0], 1)[card] == 1  # on top of the pile, seen by both


def _deck(nondealer, dealer, upcard):
    nd, de, up = parse_cards(nondealer), parse_cards(dealer), parse_cards(upcard)
    rest = [c for c in range(52) if c not in set(nd) | set(de) | set(up)]
    deck = np.empty(52, np.int64)
    deck[0:20:2], deck[1:20:2], deck[20], deck[21:] = nd, de, up[0], rest
    return deck[None]


def test_raw_env_raises_on_illegal_actions_and_env_penalises_them():
    e = gin_rummy_v0.raw_env()
    e.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action 0 .*legal: take the discard, pass"):
        e.step(0)
    w = gin_rummy_v0.env()
    w.reset(seed=0)
    offender = w.agent_selection
    w.step(0)
    assert w.terminations[offender] and w.rewards[offender] == -1


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="unknown rules preset"):
        gin_rummy_v0.raw_env(rules="vegas")
    with pytest.raises(ValueError, match="mode"):
        gin_rummy_v0.raw_env(mode="tournament")
    with pytest.raises(ValueError, match="render_mode"):
        gin_rummy_v0.raw_env(render_mode="rgb")


def test_render_shows_melds_deadwood_and_the_end_of_hand():
    e = gin_rummy_v0.raw_env(render_mode="ansi")
    seed = 2
    while play_to_a_knock(e, seed)[1].knock_card[0] < 0:
        seed += 1
    s = e._state
    text = e.render()
    assert "deadwood" in text and "hand over" in text and "points" in text and "knocked with" in text
    assert "[" in text  # melds are grouped
    from ginenv.render import render_text

    assert "\u2660" in render_text(s, symbols=True) or "\u2665" in render_text(s, symbols=True)
    assert "\u2660" not in render_text(s, symbols=False)


# ---------------------------------------------------------------------- VectorEnv
def test_vector_env_routes_each_game_to_the_player_to_move():
    env = VectorEnv(32, "standard", seed=1, mode="hand")
    obs, mask, player = env.reset()
    assert obs.shape == (32, OBS_SIZE) and obs.dtype == np.float32 and mask.shape == (32, A.NUM_ACTIONS)
    rng = np.random.default_rng(0)
    episodes, total = 0, np.zeros(2)
    for _ in range(600):
        acts = (rng.random(mask.shape) * mask).argmax(1)
        out = env.step(acts)
        assert (out.obs == observe(env.state, env.state.current)).all()
        assert (out.player == env.state.current).all()
        assert np.allclose(out.rewards[:, 0], -out.rewards[:, 1])
        assert (out.rewards[~out.hand_ended] == 0).all()
        episodes += int((out.terminated | out.truncated).sum())
        total += out.rewards.sum(0)
        mask = out.action_mask
        assert mask.any(1).all()  # auto-reset: every game is always playable
    assert episodes > 32


def test_vector_env_is_deterministic_for_a_seed():
    def run(seed):
        env = VectorEnv(8, "pagat", seed=seed, mode="match")
        _, mask, _ = env.reset()
        rng = np.random.default_rng(0)
        seen = []
        for _ in range(200):
            out = env.step((rng.random(mask.shape) * mask).argmax(1))
            mask = out.action_mask
            seen.append(np.concatenate([out.obs.ravel(), out.rewards.ravel()]))
        return np.array(seen)

    assert (run(3) == run(3)).all() and not (run(3) == run(4)).all()


def test_vector_env_match_rewards_sum_to_the_final_difference():
    env = VectorEnv(16, Rules.preset("standard", target=40), seed=2, mode="match", reward_scale=1.0)
    _, mask, _ = env.reset()
    rng = np.random.default_rng(1)
    ret = np.zeros((16, 2))
    checked = 0
    for _ in range(3000):
        acts = (rng.random(mask.shape) * mask).argmax(1)
        knock = mask[:, A.KNOCK : A.DRAW_STOCK]
        acts = np.where(knock.any(1), A.KNOCK + knock.argmax(1), acts)
        out = env.step(acts)
        mask = out.action_mask
        ret += out.rewards
        for i in np.flatnonzero(out.terminated):
            f = out.final_scores[i]
            assert ret[i, 0] == pytest.approx(f[0] - f[1])
            ret[i] = 0
            checked += 1
    assert checked > 5


# ------------------------------------------------------------------ SingleAgentEnv
def test_gymnasium_env_checker_passes():
    import gymnasium

    check_env(gymnasium.make("ginenv/GinRummy-v0", opponent="knock_early").unwrapped)


def test_single_agent_env_exposes_masks_and_alternates_seats():
    env = SingleAgentEnv(opponent="knock_early", rules="standard")
    obs, info = env.reset(seed=1)
    seats = []
    for _ in range(6):
        done = False
        seats.append(info["seat"])
        while not done:
            assert (env.action_masks() == info["action_mask"]).all() and info["action_mask"].any()
            obs, reward, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            done = term or trunc
        obs, info = env.reset()
    assert seats == [0, 1, 0, 1, 0, 1]


def test_single_agent_env_illegal_actions_penalise_or_raise():
    env = SingleAgentEnv(opponent="random")
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    _, reward, term, _, info = env.step(illegal)
    assert term and reward == -1.0 and "illegal" in info["illegal_action"]
    strict = SingleAgentEnv(opponent="random", illegal_action="raise")
    _, info = strict.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(int(np.flatnonzero(~info["action_mask"])[0]))


def test_single_agent_env_unknown_opponent_names_the_baselines():
    with pytest.raises(ValueError, match="knock_early, gin_hunter, random, patient, camper"):
        SingleAgentEnv(opponent="grandmaster")
