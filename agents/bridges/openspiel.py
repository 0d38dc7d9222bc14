"""Any agent of this project as a bot in OpenSpiel's ``gin_rummy`` (the ``openspiel`` extra):
the bot (``agents.bridges.openspiel_bot``: the seat's view, the moves' translation, and
what OpenSpiel's phases map to), whole hands, the replay check and the evaluator's
``--engine openspiel``."""

from __future__ import annotations

from agents.extras import require

require("openspiel", what="the OpenSpiel bridge (agents.bridges.openspiel)", main=__name__ == "__main__")

import numpy as np  # noqa: E402
import pyspiel  # noqa: E402

from agents.bridges.openspiel_bot import (  # noqa: E402, F401 (the bot's names, re-exported)
    DRAW_STOCK,
    DRAW_UPCARD,
    KNOCK,
    MELD_BASE,
    PASS,
    OpenSpielAgent,
    Phase,
    least_deadwood_plan,
    meld_ids,
    rules_for,
    seat_view,
    split_run,
    to_os,
    to_ours,
)
from ginenv import core  # noqa: E402
from ginenv.observation import observe  # noqa: E402


def play_hand(game, bots, rng: np.random.Generator, on_decision=None):
    """Play one OpenSpiel hand with ``bots`` (one a seat), chance drawn from ``rng``;
    returns the final state and the chance outcomes in order. ``on_decision(player,
    bot)`` is called after each move of a bridged agent."""
    state, chance = game.new_initial_state(), []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = [a for a, _ in state.chance_outcomes()]
            chance.append(int(outcomes[rng.integers(len(outcomes))]))
            state.apply_action(chance[-1])
            continue
        player = state.current_player()
        bot = bots[player]
        bridged = isinstance(bot, OpenSpielAgent)
        if bridged:
            bot.last = None
        state.apply_action(bot.step(state))
        if on_decision is not None and bridged and bot.last is not None:
            on_decision(player, bot)
    return state, chance


def replay_check(game, agents: tuple, hands: int, seed: int = 0) -> dict:
    """Play ``hands`` OpenSpiel hands between two agents through the bridge, replay each
    in this project's engine with the same deck and moves, and compare the observation
    and the legal mask at every decision of both seats. Returns the counts (and the
    first difference, if any)."""
    rules = rules_for(game.get_parameters())
    rng = np.random.default_rng(seed)
    out = {"hands": hands, "decisions": 0, "differences": 0, "refused_knocks": 0, "first_difference": None}
    for h in range(hands):
        bots = [OpenSpielAgent(agents[(h + p) % 2], game, p) for p in (0, 1)]
        record = []
        _, chance = play_hand(game, bots, rng, lambda p, bot, record=record: record.append((p, *bot.last)))
        deal = [to_ours(c) for c in chance]
        deck = np.empty(52, np.int64)
        deck[0:20:2], deck[1:20:2], deck[20] = deal[0:10], deal[10:20], deal[20]  # OpenSpiel's p0 deals second
        rest = deal[21:] + [c for c in range(52) if c not in deal]
        deck[21:] = rest
        ours = core.init(1, rules, mode="hand", decks=deck[None], dealers=np.array([1]))
        for player, obs, mask, action in record:
            same = (
                ours.current[0] == player
                and np.array_equal(observe(ours, player)[0], obs)
                and np.array_equal(core.legal_action_mask(ours)[0], mask)
            )
            out["decisions"] += 1
            if not same:
                out["differences"] += 1
                out["first_difference"] = out["first_difference"] or {"hand": h, "decision": out["decisions"]}
                break
            core.step(ours, np.array([action]))
        out["refused_knocks"] += sum(b.refused_knocks for b in bots)
    return out


SIMPLE = "openspiel_simple"  # OpenSpiel's simple bot (Neller's simple player), as an agent spec


def hand_kind(state) -> str:
    """How a finished OpenSpiel hand ended: gin, knock, undercut, or none (no knock)."""
    knocked = state.knocked()
    if not any(knocked):
        return "none"
    k = 0 if knocked[0] else 1
    if state.deadwood()[k] == 0:
        return "gin"
    return "undercut" if state.returns()[k] < 0 else "knock"


def evaluate(spec_a, spec_b, hands: int, seed: int = 0, params: dict | None = None, target: int = 100) -> dict:
    """``hands`` hands of A against B in OpenSpiel's engine, seats alternating (A is
    player 0 in even hands), chance seeded. Either side may be ``openspiel_simple``.
    Matches to ``target`` are built from consecutive hands: each hand's points go to its
    winner, and a match ends when a total reaches the target (no end-of-match bonuses;
    an unfinished last match is not counted)."""
    from agents.registry import make_agent
    from agents.stats import wilson

    game = pyspiel.load_game("gin_rummy", params or {})
    agents = [None if s == SIMPLE else make_agent(s, seed=seed + i) for i, s in enumerate((spec_a, spec_b))]

    def bot(side, player):
        if agents[side] is None:
            return pyspiel.make_simple_gin_rummy_bot(game.get_parameters(), player)
        return OpenSpielAgent(agents[side], game, player)

    rng = np.random.default_rng(seed)
    points, kinds, refused = [], {"gin": 0, "knock": 0, "undercut": 0, "none": 0}, 0
    totals, matches = [0, 0], [0, 0]
    for h in range(hands):
        a_seat = h % 2
        bots = [bot(0, 0), bot(1, 1)] if a_seat == 0 else [bot(1, 0), bot(0, 1)]
        state, _ = play_hand(game, bots, rng)
        r = state.returns()[a_seat]
        points.append(r)
        kinds[hand_kind(state)] += 1
        refused += sum(b.refused_knocks for b in bots if isinstance(b, OpenSpielAgent))
        if r:
            totals[0 if r > 0 else 1] += abs(int(r))
            if max(totals) >= target:
                matches[0 if totals[0] >= target else 1] += 1
                totals = [0, 0]
    p = np.asarray(points, np.float64)
    n_matches = sum(matches)
    return {
        "a": spec_a,
        "b": spec_b,
        "engine": "openspiel",
        "hands": hands,
        "hands_won_a": int((p > 0).sum()),
        "hands_won_b": int((p < 0).sum()),
        "points_per_hand_a": float(p.mean()),
        "points_per_hand_se": float(p.std(ddof=1) / np.sqrt(len(p))) if len(p) > 1 else float("nan"),
        "gin_rate": kinds["gin"] / hands,
        "knock_rate": kinds["knock"] / hands,
        "undercut_rate": kinds["undercut"] / hands,
        "no_knock_rate": kinds["none"] / hands,
        "matches": n_matches,
        "matches_won_a": matches[0],
        "match_win_rate_a": matches[0] / n_matches if n_matches else float("nan"),
        "match_win_rate_a_ci95": list(wilson(matches[0], n_matches)),
        "refused_knocks": refused,
    }


def format_report(r: dict) -> str:
    lo, hi = r["match_win_rate_a_ci95"]
    return "\n".join(
        [
            f"{r['a']} vs {r['b']} in OpenSpiel's gin_rummy: {r['hands']} hands, seats alternating",
            f"  hands won       {r['a']}: {r['hands_won_a']}  {r['b']}: {r['hands_won_b']}",
            f"  points / hand   {r['a']}: {r['points_per_hand_a']:+.2f} (se {r['points_per_hand_se']:.2f})",
            f"  gin {r['gin_rate']:.3f}  knock {r['knock_rate']:.3f}  undercut {r['undercut_rate']:.3f}  "
            f"no knock {r['no_knock_rate']:.3f}",
            f"  matches to 100 from consecutive hands: {r['matches']}, {r['a']} won {r['matches_won_a']} "
            f"({r['match_win_rate_a']:.3f}, 95% CI {lo:.3f}-{hi:.3f})",
            f"  knocks OpenSpiel refused (played as discards): {r['refused_knocks']}",
        ]
    )
