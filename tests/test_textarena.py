"""Gin rummy for language models: the TextArena envs through TextArena's own loop, the
terminal's parser for moves, and no card a seat has not seen in its text."""

import re

import numpy as np
import pytest

ta = pytest.importorskip("textarena")

from test_env import reshuffle_hidden  # noqa: E402

from agents.play import textarena as T  # noqa: E402
from agents.play.game import parse_move  # noqa: E402
from ginenv import actions as A  # noqa: E402
from ginenv import core  # noqa: E402
from ginenv.cards import parse_cards  # noqa: E402
from ginenv.rules import Rules  # noqa: E402

CARD = re.compile(r"(?<![\w\[])([2-9TJQKA][shdc])(?![\w])|\[([2-9TJQKA][shdc])\]")


def legal_words(observation: str) -> list:
    line = [x for x in observation.splitlines() if x.startswith("Your legal moves: ")][-1]
    return line.removeprefix("Your legal moves: ").split(", ")


def first_legal(observation: str) -> str:
    return legal_words(observation)[0]


def play(env, agents, seed):
    env.reset(num_players=len(agents), seed=seed)
    done, turns, seen_ids = False, 0, []
    while not done:
        player_id, observation = env.get_observation()
        seen_ids.append(player_id)
        done, info = env.step(action=agents[player_id](observation))
        turns += 1
    rewards, game_info = env.close()
    return turns, rewards, game_info, seen_ids


def test_the_ids_are_registered_and_make_envs_of_their_presets():
    ids = T.register()
    assert {"GinRummy-v0", "GinRummyVsBot-v0", "GinRummy-v0-pagat", "GinRummy-v0-oklahoma"} <= set(ids)
    assert T.register() == ids  # again: nothing registered twice
    env = ta.make("GinRummy-v0-pagat")
    env.reset(num_players=2, seed=1)
    inner = env.env.env  # under the two default wrappers
    assert inner.rules == "pagat" and inner.game.rules == Rules.preset("pagat")
    _, observation = env.get_observation()
    assert "gin rummy (pagat rules)" in observation and "Your legal moves: " in observation
    with pytest.raises(ValueError, match="num_players=2"):
        ta.make("GinRummy-v0").reset(num_players=1)
    with pytest.raises(ValueError, match="rules must be one of"):
        ta.make("GinRummy-v0", rules="pagatt")


def test_a_scripted_text_agent_plays_a_whole_match_against_a_bot_through_textarenas_loop():
    env = ta.make("GinRummyVsBot-v0", opponent="knock_early")
    turns, rewards, info, ids = play(env, {0: first_legal}, seed=3)
    game = env.env.env.game  # under the two default wrappers
    assert game.done[0] and set(ids) == {0}
    winner = int(game.winner[0])
    assert rewards == {0: 1.0 if winner == 0 else -1.0 if winner == 1 else 0.0}
    a, b = (int(x) for x in game.final_scores[0])
    assert info[0]["reason"] == f"The match is over: {a} to {b} (seat 0 to seat 1)."
    assert max(a, b) >= 100


@pytest.mark.parametrize("mode, seed", [("hand", 11), ("hand", 12)])
def test_two_text_players_alternate_as_the_engine_says_and_the_winner_gets_plus_one(mode, seed):
    rng = np.random.default_rng(0)

    def pick(observation):  # a knock when it may, else a random legal move, in brackets
        words = legal_words(observation)
        knocks = [w for w in words if "knock" in w or "gin" in w]
        return knocks[0] if knocks else rng.choice(words)

    env = ta.make("GinRummy-v0", mode=mode)
    turns, rewards, info, ids = play(env, {0: pick, 1: pick}, seed=seed)
    game = env.env.env.game
    assert game.done[0] and set(ids) == {0, 1}
    scores = game.final_scores[0] if mode == "match" else game.hand_points[0]
    if scores[0] == scores[1]:
        assert rewards == {0: 0, 1: 0}
    else:
        w = int(np.argmax(scores))
        assert rewards == {w: 1, 1 - w: -1}


def test_every_move_word_reads_back_as_its_action_with_the_terminals_parser():
    legal = [{"id": a, "label": T.move_words(a)} for a in range(A.NUM_ACTIONS)]
    for a in range(A.NUM_ACTIONS):
        assert parse_move(T.move_words(a), legal) == a
        assert parse_move(f"[{T.move_words(a)}]".strip("[]"), legal) == a


def test_an_unreadable_or_illegal_move_gets_the_parsers_message_then_loses_past_the_allowance():
    env = ta.make("GinRummy-v0", error_allowance=1)
    env.reset(num_players=2, seed=2)
    player, observation = env.get_observation()
    done, _ = env.step("[zz]")
    assert not done
    again, message = env.get_observation()
    assert again == player and "invalid move" in message and "zz" in message, message
    done, _ = env.step("[7q]")
    assert done
    rewards, info = env.close()
    assert rewards == {player: -1, 1 - player: 1} and info[player]["invalid_move"]


def test_the_text_never_names_a_card_the_seat_has_not_seen():
    """The resample test over the text: deal anew what the seat cannot see (the stock's
    order, the opponent's unknown cards) and its text is the same; and over whole
    games, every card a seat's messages name is one it has seen."""
    rng = np.random.default_rng(4)
    state = core.init(1, "standard", seed=9)
    checked = 0
    for _ in range(120):
        if state.done[0]:
            state = core.init(1, "standard", seed=int(rng.integers(1 << 30)))
        for seat in (0, 1):
            other = reshuffle_hidden(state, seat, rng)
            assert T.seat_text(state, seat) == T.seat_text(other, seat)
            checked += 1
        core.step(state, np.array([rng.choice(np.flatnonzero(core.legal_action_mask(state)[0]))]))
    assert checked == 240

    seen = {0: set(), 1: set()}
    names = 0

    def look():
        g = env.env.env.game
        for seat in (0, 1):
            seen[seat] |= set(np.flatnonzero(g.hands_of(seat)[0]))
            seen[seat] |= set(int(c) for c in g.pile[0, : g.pile_size[0]])
            seen[seat] |= set(np.flatnonzero(g.took[0, 1 - seat] & g.hands_of(1 - seat)[0]))
            if g.hand_ended[0]:
                seen[seat] |= set(np.flatnonzero(g.last_hands[0].any(0)))

    for seed in range(3):
        env = ta.make("GinRummy-v0", mode="hand")  # TextArena's wrappers keep their messages across resets
        env.reset(num_players=2, seed=seed)
        seen = {0: set(), 1: set()}
        look()
        done = False
        while not done:
            player, observation = env.get_observation()
            game_text = observation.replace(T.rules_text("standard", "hand"), "")  # its examples name 7h, Td
            tokens = [a or b for a, b in CARD.findall(game_text)]
            named = {int(parse_cards(t)[0]) for t in tokens}
            assert named <= seen[player], sorted(named - seen[player])
            names += len(named)
            words = legal_words(observation)
            knocks = [w for w in words if "knock" in w]
            done, _ = env.step(knocks[0] if knocks and rng.random() < 0.5 else rng.choice(words))
            look()
    assert names > 100
