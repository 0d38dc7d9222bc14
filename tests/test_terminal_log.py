"""The terminal game's log: the bot's discards in the order thrown (a passed upcard is not
a throw), each hand's result before the next hand's moves, and each hand's points broken
down as the rule texts score them."""

import io
import re

import numpy as np

from agents import make_agent
from agents.play.game import BOT, Game, parse_move
from agents.play.terminal import run, show_table
from ginenv import actions as A
from ginenv.cards import format_card


def random_lines(game, rng, n=400):
    """Legal moves typed as the terminal reads them, chosen as the game goes."""
    for _ in range(n):
        legal = game.view()["legal_actions"]
        if not legal:
            return
        a = int(rng.choice([x["id"] for x in legal]))
        if a < A.KNOCK:
            yield format_card(a)
        elif a < A.DRAW_STOCK:
            yield f"knock {format_card(a - A.KNOCK)}"
        else:
            yield {A.DRAW_STOCK: "draw", A.TAKE_DISCARD: "take", A.PASS: "pass", A.BIG_GIN: "big gin"}[a]


def test_the_bots_throws_are_listed_in_order_and_a_passed_upcard_is_not_one():
    checked = 0
    for seed in range(12):
        game = Game(make_agent("knock_early"), mode="hand", seed=seed)
        rng = np.random.default_rng(seed)
        for line in random_lines(game, rng, 14):
            if game.over:
                break
            v = game.view()
            game.play(parse_move(line, v["legal_actions"], v["taken"]))
            if game.over:
                break
            v = game.view()
            thrown = [m["action"] for m in game.moves if m["player"] == BOT and m["action"] < A.KNOCK]
            passed = [m for m in game.moves if m["player"] == BOT and m["action"] == A.PASS]
            text = show_table(v)
            found = re.search(r"threw (.*)$", text, flags=re.M)
            got = found.group(1).split() if found else []
            if thrown or v["opponent_took"]:
                assert got == ([format_card(c) for c in thrown] or ["-"]), (text, thrown)
                checked += len(thrown) > 1
            if passed:  # the upcard it passed is never counted as thrown
                assert game.upcard not in got or game.upcard in [format_card(c) for c in thrown]
    assert checked > 5


def test_each_result_comes_before_the_next_hands_moves_and_its_points_add_up():
    results = 0
    for seed in range(6):
        game = Game(make_agent("knock_early"), mode="match", seed=100 + seed)
        out = io.StringIO()
        run(game, random_lines(game, np.random.default_rng(seed), 3000), out)
        lines = out.getvalue().splitlines()
        for k, line in enumerate(lines):
            if line == "bot: knock":  # the bot's knock ends the hand: its result comes next
                assert lines[k + 1].startswith("--- hand"), lines[k : k + 3]
            m = re.match(r"  points: you (\d+), bot (\d+)(.*)$", line)
            if not m:
                continue
            results += 1
            you, bot, how = int(m.group(1)), int(m.group(2)), m.group(3)
            won = max(you, bot)
            if "bonus" in how and "undercut" not in how:
                dd, bonus = map(int, re.findall(r"\d+", how))
                assert won == dd + bonus and bonus in (25, 31), line
            elif "undercut" in how:
                kd, dd, bonus = map(int, re.findall(r"\d+", how))
                assert won == kd - dd + bonus and bonus == 25, line
            elif how:
                dd, kd = map(int, re.findall(r"\d+", how))
                assert won == dd - kd, line
            else:
                assert you == bot == 0, line  # a dead hand or a tie scores nothing
    assert results > 10
