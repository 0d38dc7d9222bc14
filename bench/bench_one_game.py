"""Every env that plays one game at a time, random legal play, decisions per CPU-second.

    python bench/bench_one_game.py [--seconds 1] [--repeats 5]

- the single-agent Gymnasium env (``ginenv.single.SingleAgentEnv``, a random opponent);
- the three-player table (``gin_rummy_table_v0.env()``) and the four-player teams
  (``gin_rummy_table_v0.env(num_players=4)``), PettingZoo AEC loops;
- the OpenSpiel bridge's state: ``seat_view`` (a one-game ``core.State`` built from an
  OpenSpiel state, as the bot builds one at each of its decisions) with the seat's
  observation, over the decisions of random OpenSpiel hands (the ``openspiel`` extra);
- the page's game (``agents.play.game.Game``): a person's random moves against
  knock_early, the engine's work of each move (the bot's replies included, the
  baseline's own work too).

Medians of ``--repeats`` runs taken in turn. To compare with an older commit in one run
(the engines' state layout, say), copy this script into its tree:
``python bench/compare.py REV --copy bench/bench_one_game.py -- python bench/bench_one_game.py``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ginenv import core  # noqa: E402
from ginenv.observation import observe  # noqa: E402


def cpu_rate(fn, seconds: float) -> float:
    """Work units per CPU-second: ``fn()`` returns the units it did."""
    n, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        n += fn()
    return n / (time.process_time() - start)


def single_case(seconds: float) -> float:
    from ginenv.single import SingleAgentEnv

    env = SingleAgentEnv(opponent="random")
    rng = np.random.default_rng(0)
    env.reset(seed=0)

    def episode():
        n, done = 0, False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            _, _, term, trunc, _ = env.step(int(legal[rng.integers(len(legal))]))
            done, n = term or trunc, n + 1
        env.reset()
        return n

    return cpu_rate(episode, seconds)


def table_case(players: int, seconds: float) -> float:
    from ginenv import gin_rummy_table_v0

    env = gin_rummy_table_v0.env(num_players=players)
    rng = np.random.default_rng(0)
    env.reset(seed=0)

    def episode():
        n = 0
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            n += 1
        env.reset()
        return n

    return cpu_rate(episode, seconds)


def openspiel_states(hands: int = 20) -> list:
    """(state, player) at every decision of ``hands`` random OpenSpiel hands that the
    bridge plays with this project's rules (OpenSpiel's laying out of melds, its wall
    and its lay-offs are played by the bridge's own code, not the engine's)."""
    import pyspiel

    from agents.bridges.openspiel_bot import seat_view
    from ginenv.rules import PRESETS

    game = pyspiel.load_game("gin_rummy")
    rng = np.random.default_rng(0)
    out = []
    for _ in range(hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                try:
                    seat_view(state, state.current_player(), PRESETS["openspiel"])
                    out.append((state.clone(), state.current_player()))
                except ValueError:  # not a decision of this project's rules
                    pass
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
                continue
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
    return out


def seat_view_case(states: list, seconds: float) -> float:
    from agents.bridges.openspiel_bot import seat_view
    from ginenv.rules import PRESETS

    rules = PRESETS["openspiel"]

    def all_states():
        for state, player in states:
            observe(seat_view(state, player, rules), 0)
        return len(states)

    return cpu_rate(all_states, seconds)


def page_case(seconds: float) -> float:
    from agents import make_agent
    from agents.play.game import Game

    agent = make_agent("knock_early")
    rng = np.random.default_rng(0)
    seeds = iter(range(1 << 30))

    def game():
        g, n = Game(agent, "standard", mode="hand", seed=next(seeds)), 0
        while not g.over:
            legal = g.legal_actions()
            g.play(legal[rng.integers(len(legal))]["id"])
            n += 1 + len(g.last_bot_moves)
        return n

    return cpu_rate(game, seconds)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per measurement")
    p.add_argument("--repeats", type=int, default=5, help="runs of each case, taken in turn")
    args = p.parse_args(argv)
    cases = {
        "single-agent Gymnasium env": lambda: single_case(args.seconds),
        "three-player table (AEC)": lambda: table_case(3, args.seconds),
        "four-player teams (AEC)": lambda: table_case(4, args.seconds),
        "the page's game against knock_early": lambda: page_case(args.seconds),
    }
    try:
        states = openspiel_states()
        cases["OpenSpiel bridge: seat_view and observation"] = lambda: seat_view_case(states, args.seconds)
    except ImportError:
        print("(OpenSpiel is not installed: the bridge's case is left out)")
    for fn in (lambda: single_case(0.05), lambda: table_case(3, 0.05), lambda: page_case(0.05)):
        fn()  # compile (or load numba's cache) before timing
    runs: dict = {name: [] for name in cases}
    for r in range(args.repeats):
        for name, case in cases.items():
            runs[name].append(case())
        print(f"run {r + 1}/{args.repeats} done", flush=True)
    print(f"\n{'case (engine: ' + core.engine() + ')':52s} {'decisions per CPU-second':>26s}")
    for name, values in runs.items():
        print(f"{name:52s} {statistics.median(values):26,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
