"""Evaluate agents: ``python -m agents.evaluate A B --matches N`` or ``--round-robin A B C``.

A and B are baseline names (``random``, ``knock_early``, ``gin_hunter``) or checkpoint
paths. Every match is played at once on the batched engine; seats and the first dealer
alternate between matches. Reports matches won (with a 95% Wilson interval), hands won,
mean points per hand, gin / knock / undercut / dead-hand rates and mean hand length, as
a table and optionally JSON (which also splits the hands by who ended them and how).
``--hands N`` plays single hands instead of matches.

The round robin plays every pair and fits Bradley-Terry strengths to the match results
(draws count half; minorisation-maximisation, Hunter 2004), shown on the Elo scale
(400 log10, mean 1500).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np

from agents.base import choose
from agents.extras import install_hint
from agents.registry import BASELINES, make_agent
from agents.stats import bradley_terry, hand_ends, wilson
from ginenv import core
from ginenv.observation import observe
from ginenv.rules import PRESETS, Rules


def play(
    agent_a,
    agent_b,
    n: int,
    rules: Rules,
    seed: int = 0,
    mode: str = "match",
    progress=None,
    max_steps: int = 200_000,
    first: int = 0,
) -> dict:
    """Play n games (matches or hands) of agent_a against agent_b and count everything.

    Game i seats agent_a as player ``i % 2`` and deals first from player ``(i // 2) % 2``.
    Each agent acts on the observations of its seat (``act(obs, mask)``). ``first``: play
    games ``first`` .. ``first + n - 1`` of the seed's games (a slice: with pure agents,
    slices add up to the whole, see ``merge``).
    """
    counts = tally(agent_a, agent_b, n, rules, seed, mode, progress, max_steps, first)
    return report(counts, getattr(agent_a, "name", str(agent_a)), getattr(agent_b, "name", str(agent_b)))


def tally(
    agent_a, agent_b, n: int, rules: Rules, seed=0, mode="match", progress=None, max_steps=200_000, first: int = 0
) -> dict:
    """``play``'s counts (integers and integer arrays, which add up over slices)."""
    g = np.arange(first + n)  # the seed's games up to the slice's end, then the slice kept
    state = core.init(first + n, rules, seed, mode=mode, dealers=((g // 2) % 2).astype(np.int8)).select(g[first:])
    a_seat = (g[first:] % 2).astype(np.int8)
    rows = np.arange(n)
    kinds = np.zeros((len(core.HAND_KIND_NAMES),), np.int64)
    # By who ended the hand (0: a, 1: b, 2: nobody) and how: hands, a's net points, draws.
    by_ender = np.zeros((3, len(core.HAND_KIND_NAMES), 3), np.int64)
    hands_won_a = hands_won_b = hands = turns = 0
    points_a = points_b = 0
    for _ in range(max_steps):
        live = ~state.done
        if not live.any():
            break
        mask = core.legal_action_mask(state)
        obs = observe(state, state.current)
        actions = np.zeros(n, np.int64)
        a_moves = live & (state.current == a_seat)
        b_moves = live & ~a_moves
        for agent, who in ((agent_a, a_moves), (agent_b, b_moves)):
            idx = np.flatnonzero(who)
            if idx.size:
                sub = state.select(idx) if getattr(agent, "reads_state", False) else None
                actions[idx] = choose(agent, obs[idx], mask[idx], sub, state.current[idx])
        core.step(state, actions)
        ended = np.flatnonzero(state.hand_ended)
        if ended.size:
            np.add.at(kinds, state.hand_kind[ended], 1)
            pa = state.hand_points[ended, a_seat[ended]]
            pb = state.hand_points[ended, 1 - a_seat[ended]]
            knocker = state.last_knocker[ended]
            ender = np.where(knocker < 0, 2, np.where(knocker == a_seat[ended], 0, 1))
            cell = (ender, state.hand_kind[ended])
            np.add.at(by_ender[..., 0], cell, 1)
            np.add.at(by_ender[..., 1], cell, pa.astype(np.int64) - pb)
            np.add.at(by_ender[..., 2], cell, state.hand_turns[ended].astype(np.int64))
            hands_won_a += int((pa > 0).sum())
            hands_won_b += int((pb > 0).sum())
            points_a += int(pa.sum())
            points_b += int(pb.sum())
            hands += ended.size
            turns += int(state.hand_turns[ended].sum())
        if progress is not None:
            progress(int(state.done.sum()), n)
    else:
        raise RuntimeError(f"games still running after {max_steps} steps")
    if mode == "match":
        w = state.winner
        wins_a, wins_b = int((w == a_seat).sum()), int(((w >= 0) & (w != a_seat)).sum())
    else:
        pa = state.final_scores[rows, a_seat]  # in hand mode: that hand's points
        pb = state.final_scores[rows, 1 - a_seat]
        wins_a, wins_b = int((pa > 0).sum()), int((pb > 0).sum())
    return {
        "mode": mode,
        "games": n,
        "wins_a": wins_a,
        "wins_b": wins_b,
        "hands": hands,
        "hands_won_a": hands_won_a,
        "hands_won_b": hands_won_b,
        "points_a": points_a,
        "points_b": points_b,
        "turns": turns,
        "kinds": kinds,
        "by_ender": by_ender,
    }


def merge(tallies: list) -> dict:
    """The counts of several slices' ``tally`` as one (they add up)."""
    out = dict(tallies[0])
    for t in tallies[1:]:
        for k, v in t.items():
            if k != "mode":
                out[k] = out[k] + v
    return out


def report(t: dict, name_a: str, name_b: str) -> dict:
    """``play``'s report from a ``tally`` of the agents named ``name_a`` and ``name_b``."""
    n, hands, by_ender = t["games"], t["hands"], t["by_ender"]
    wins_a, wins_b = t["wins_a"], t["wins_b"]
    draws = n - wins_a - wins_b
    score = wins_a + 0.5 * draws
    lo, hi = wilson(score, n)
    named = dict(zip(core.HAND_KIND_NAMES, t["kinds"].tolist()))
    return {
        "a": name_a,
        "b": name_b,
        "mode": t["mode"],
        "games": n,
        "wins_a": wins_a,
        "wins_b": wins_b,
        "draws": draws,
        "win_rate_a": score / n,
        "win_rate_a_ci95": [lo, hi],
        "hands": hands,
        "hands_won_a": t["hands_won_a"],
        "hands_won_b": t["hands_won_b"],
        "points_per_hand_a": t["points_a"] / max(hands, 1),
        "points_per_hand_b": t["points_b"] / max(hands, 1),
        "gin_rate": (named["gin"] + named["big_gin"]) / max(hands, 1),
        "knock_rate": (named["knock"] + named["tie"]) / max(hands, 1),
        "undercut_rate": named["undercut"] / max(hands, 1),
        "dead_rate": (named["dead"] + named["truncated"]) / max(hands, 1),
        "mean_hand_length": t["turns"] / max(hands, 1),
        "hand_kinds": named,
        "hand_ends": hand_ends(by_ender[..., 0], core.HAND_KIND_NAMES),
        "hands_by_ender": {
            f"{who}/{kind}": {"hands": int(c), "net_points_a": int(pts), "draws": int(d)}
            for who, row in zip(("a", "b", "-"), by_ender)
            for kind, (c, pts, d) in zip(core.HAND_KIND_NAMES, row)
            if c
        },
    }


def _progress_bar(label):
    """A tqdm bar over the games that have finished (shown on a terminal only; none
    without tqdm, which the env-only install leaves out)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None

    bar = None

    def show(done, total):
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=label, unit="game", disable=not sys.stderr.isatty(), leave=False)
        bar.update(done - bar.n)
        if done == total:
            bar.close()

    return show


def format_report(r: dict) -> str:
    unit = "matches" if r["mode"] == "match" else "hands"
    lo, hi = r["win_rate_a_ci95"]
    if r["mode"] == "match":
        lines = [
            f"{r['a']} vs {r['b']}: {r['games']} matches",
            f"  matches won      {r['a']}: {r['wins_a']}  {r['b']}: {r['wins_b']}  draws: {r['draws']}",
            f"  win rate {r['a']}: {r['win_rate_a']:.3f}  (95% CI {lo:.3f}-{hi:.3f}; a drawn match counts half)",
            f"  hands won       {r['a']}: {r['hands_won_a']}  {r['b']}: {r['hands_won_b']}  of {r['hands']}",
        ]
    else:  # single hands: one line of hands won, dead hands said as such
        decided = r["wins_a"] + r["wins_b"]
        lines = [
            f"{r['a']} vs {r['b']}: {r['games']} hands",
            f"  hands won       {r['a']}: {r['wins_a']}  {r['b']}: {r['wins_b']}  dead or drawn: {r['draws']}",
            f"  win rate {r['a']}: {r['win_rate_a']:.3f}  (95% CI {lo:.3f}-{hi:.3f}; a dead or drawn hand counts half)",
            f"  of the {decided} hands decided {r['a']} won "
            + (f"{r['wins_a'] / decided:.3f}" if decided else "none (every hand was dead)"),
        ]
    lines += [
        f"  points / hand   {r['a']}: {r['points_per_hand_a']:.2f}  {r['b']}: {r['points_per_hand_b']:.2f}",
        f"  gin {r['gin_rate']:.3f}  knock {r['knock_rate']:.3f}  undercut {r['undercut_rate']:.3f}  "
        f"dead {r['dead_rate']:.3f}  mean hand length {r['mean_hand_length']:.1f} draws",
    ]
    lines += _hand_ends_lines(r)
    if r["mode"] == "match" and (r["wins_a"] - r["wins_b"]) * (r["hands_won_a"] - r["hands_won_b"]) < 0:
        lines.append(
            "  (fewer hands won, more matches won: a gin or an undercut scores a bonus on top of the deadwood, so "
            "fewer hands can add up to more points: see points / hand and how the hands were won)"
        )
    if "seconds" in r:
        lines.append(f"  {r['seconds']:.1f} s, {r['games'] / r['seconds']:.1f} {unit}/s")
    return "\n".join(lines)


def _hand_ends_lines(r: dict) -> list:
    """How each side won its hands, and the share of its knocks that were undercut."""
    width = max(len(r["a"]), len(r["b"]))
    lines = [f"  {'won by':<{width + 2}}   knock  undercut    gin  big gin   its knocks undercut"]
    for side in ("a", "b"):
        e = r["hand_ends"][side]
        lines.append(
            f"    {r[side]:<{width}}  {e['won_by_knock']:>6}  {e['won_by_undercut']:>8}  {e['won_by_gin']:>5}  "
            f"{e['won_by_big_gin']:>7}   {e['undercut']:>5} of {e['knocks']:<5} ({e['undercut_rate']:.3f})"
        )
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m agents.evaluate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "agents",
        nargs="*",
        help=f"two agents (or more with --round-robin): baseline names ({', '.join(BASELINES)}) or checkpoint paths",
    )
    p.add_argument("--matches", type=int, default=1000, help="matches per pair (default 1000)")
    p.add_argument("--hands", type=int, default=None, help="evaluate N single hands instead of matches")
    p.add_argument(
        "--rules",
        default=None,
        help=f"rules preset ({', '.join(PRESETS)}; default standard, and openspiel with --engine openspiel)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--round-robin", action="store_true", help="play every pair of the agents given")
    p.add_argument(
        "--teams",
        action="store_true",
        help="four agents: team A+B against C+D, partners at different tables, totals added",
    )
    p.add_argument("--json", default=None, help="write the results as JSON to this file")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="split each pair's games over this many processes (one torch thread each); the figures are "
        "those of one process wherever the agents are pure (baselines but random, checkpoints, search by worlds)",
    )
    p.add_argument(
        "--engine",
        default="ginenv",
        choices=["ginenv", "openspiel"],
        help="play in this project's engine or in OpenSpiel's gin_rummy (--hands N hands; either agent "
        "may be openspiel_simple; needs the openspiel extra)",
    )
    args = p.parse_args(argv)
    n = _checked_args(p, args, argv)
    table = args.teams or (len(args.agents) == 3 and not args.round_robin)
    if table:
        return _table_main(p, args, n)
    if args.engine == "openspiel":
        return _openspiel_main(p, args)
    mode = "hand" if args.hands is not None else "match"
    try:
        agents = [make_agent(spec, seed=args.seed + i) for i, spec in enumerate(args.agents)]
    except (ValueError, ImportError) as e:
        p.error(str(e))
    rules = Rules.preset(args.rules)
    names = list(args.agents)
    results, reports = {}, []
    warm_up(rules)  # the engine's first compile is not counted in the matches/s
    for i, j in combinations(range(len(agents)), 2) if args.round_robin else [(0, 1)]:
        t = time.time()
        bar = _progress_bar(f"{names[i]} vs {names[j]}")
        if args.workers > 1:
            r = _play_split((names[i], names[j]), (args.seed + i, args.seed + j), n, args, mode, bar)
        else:
            r = play(agents[i], agents[j], n, rules, args.seed, mode, bar)
        r["a"], r["b"], r["seconds"] = names[i], names[j], time.time() - t
        results[(i, j)] = (r["wins_a"], r["wins_b"], r["draws"])
        reports.append(r)
        print(format_report(r))
    out = {"rules": args.rules, "seed": args.seed, "results": reports}
    if args.round_robin:
        ratings = bradley_terry(names, results)
        rate = np.full((len(names), len(names)), np.nan)
        for r, (i, j) in zip(reports, results):
            rate[i, j], rate[j, i] = r["win_rate_a"], 1 - r["win_rate_a"]
        width = max(len(x) for x in names) + 2
        print("\nwin rate of the row against the column:")
        print(" " * width + "".join(f"{x:>{width}}" for x in names) + f"{'rating':>10}")
        for i, x in enumerate(names):
            cells = "".join(f"{'-':>{width}}" if i == j else f"{rate[i, j]:>{width}.3f}" for j in range(len(names)))
            print(f"{x:<{width}}{cells}{ratings[i]:>10.0f}")
        print("ratings: Bradley-Terry fitted to the match results, Elo scale (400 log10), mean 1500")
        out["ratings"] = dict(zip(names, ratings.tolist()))
    if args.json:
        write_json(args.json, out)
    return 0


def warm_up(rules) -> None:
    """Two matches of fresh baselines (their own agents, so no agent's random stream
    moves): the compiled engine and meld maths are built before the clock starts."""
    from ginenv.baselines import Camper, KnockEarly

    play(KnockEarly(), Camper(), 2, rules, 0, "match")


MAX_GAMES = 10_000_000  # matches or hands in one call (the batch holds them all at once)
MAX_WORKERS = 64
SLICE_GAMES = 100  # games a worker plays at a time (a stopped run has reported its finished slices)


def _play_split(specs, seeds, n: int, args, mode: str, progress) -> dict:
    """``play`` of two agent specs with the games cut into slices of at most
    ``SLICE_GAMES``, shared by ``args.workers`` processes (spawned: each loads its own
    agents and uses one torch thread). Off a terminal a line per finished slice gives
    the games so far and their win rate, so a long run that is stopped still tells."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    size = max(1, min(SLICE_GAMES, -(-n // args.workers)))
    cuts = [*range(0, n, size), n]
    jobs = [(specs, seeds, b - a, a, args.rules, args.seed, mode) for a, b in zip(cuts, cuts[1:])]
    done, parts = 0, []
    with ProcessPoolExecutor(min(args.workers, len(jobs)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_slice, job): job[2] for job in jobs}
        for f in as_completed(futures):
            parts.append(f.result())
            done += futures[f]
            if progress:
                progress(done, n)
            if not sys.stderr.isatty() and done < n:
                r = report(merge(parts), *specs)
                print(
                    f"{specs[0]} vs {specs[1]}: {done}/{n} games, win rate {r['win_rate_a']:.3f} so far",
                    file=sys.stderr,
                )
    return report(merge(parts), *specs)


def _slice(job) -> dict:
    """One worker's slice of ``_play_split``."""
    specs, seeds, n, first, rules, seed, mode = job
    agents = [make_agent(s, seed=x) for s, x in zip(specs, seeds)]
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    return tally(agents[0], agents[1], n, Rules.preset(rules), seed, mode, first=first)


def _checked_args(p, args, argv) -> int:
    """Every argument checked before any game is played (``p.error`` otherwise); returns
    the number of matches or hands."""
    if args.engine == "openspiel" and args.rules not in (None, "openspiel"):
        p.error(
            f"--engine openspiel plays OpenSpiel's own gin_rummy rules (this project's preset 'openspiel'), "
            f"not --rules {args.rules}; drop --rules or give --rules openspiel"
        )
    if args.rules is None:
        args.rules = "openspiel" if args.engine == "openspiel" else "standard"
    if args.rules not in PRESETS:
        p.error(f"unknown rules preset {args.rules!r}; valid presets: {', '.join(PRESETS)}")
    given = sys.argv[1:] if argv is None else list(argv)
    if args.hands is not None and any(a == "--matches" or a.startswith("--matches=") for a in given):
        p.error("give --matches (whole matches) or --hands (single hands), not both")
    n = args.hands if args.hands is not None else args.matches
    flag = "--hands" if args.hands is not None else "--matches"
    if not 1 <= n <= MAX_GAMES:
        p.error(f"{flag} must be from 1 to {MAX_GAMES:,}, got {n}")
    if args.seed < 0 or args.seed >= 1 << 63:
        p.error(f"--seed must be a non-negative integer below 2**63, got {args.seed}")
    if not 1 <= args.workers <= MAX_WORKERS:
        p.error(f"--workers must be from 1 to {MAX_WORKERS} (processes to split the games over), got {args.workers}")
    if args.workers > 1 and (args.engine == "openspiel" or args.teams or len(args.agents) == 3):
        p.error(
            "--workers splits two-agent evaluations in this engine (not --engine openspiel, three players or --teams)"
        )
    if args.teams and len(args.agents) != 4:
        p.error(f"--teams takes four agents (A B against C D), got {len(args.agents)}")
    table = args.teams or (len(args.agents) == 3 and not args.round_robin)
    if not table and (len(args.agents) < 2 or (len(args.agents) > 2 and not args.round_robin)):
        p.error("give two agents, three for a three-player match, four with --teams, or more with --round-robin")
    if args.engine == "openspiel" and (table or args.round_robin):
        p.error("--engine openspiel plays two agents (no --round-robin, three players or --teams)")
    if table and args.hands is not None:
        p.error("three-player and team evaluations play whole matches: give --matches, not --hands")
    if args.json is not None:  # refuse an unwritable path now, not after the evaluation
        target = Path(args.json).resolve()
        if (
            target.is_dir()
            or not target.parent.is_dir()
            or not os.access(target.parent, os.W_OK)
            or (target.exists() and not os.access(target, os.W_OK))
        ):
            p.error(f"--json {args.json}: cannot write there (is it a directory, or does its folder not exist?)")
    return n


def write_json(path, data) -> None:
    """``data`` as JSON at ``path``, atomically (a reader never sees half a file)."""
    tmp = Path(path).with_name(f".{Path(path).name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


def _table_main(p, args, n: int) -> int:
    """Three-player matches (every seating of the three, first dealers rotating) or
    team matches (A+B against C+D), reported with Wilson intervals."""
    from itertools import permutations

    from ginenv import table

    try:
        agents = [make_agent(spec, seed=args.seed + i) for i, spec in enumerate(args.agents)]
    except (ValueError, ImportError) as e:
        p.error(str(e))
    rules = Rules.preset(args.rules)
    names = list(args.agents)
    out = {"rules": args.rules, "seed": args.seed, "matches": n}
    if args.teams:
        r = table.team_matches(agents, n, rules, seed=args.seed)
        wins = [int((r["winner"] == t).sum()) for t in (0, 1)]
        lines = [
            f"team {names[0]}+{names[1]} vs team {names[2]}+{names[3]}: {n} team matches (partners at "
            "different tables, final totals added)"
        ]
        for t, team in enumerate((f"{names[0]}+{names[1]}", f"{names[2]}+{names[3]}")):
            score = wins[t] + 0.5 * (n - sum(wins))
            lo, hi = wilson(score, n)
            lines.append(
                f"  {team}: won {wins[t]}, win rate {score / n:.3f} (95% CI {lo:.3f}-{hi:.3f}), "
                f"mean team total {r['teams'][:, t].mean():.1f}"
            )
            out[team] = {"won": wins[t], "win_rate": score / n, "ci95": [lo, hi]}
    else:
        seatings = list(permutations(range(3)))
        wins, draws, totals, played = np.zeros(3), 0, np.zeros(3), 0
        for k, seating in enumerate(seatings):  # every seating of the three agents
            m = n // len(seatings) + (k < n % len(seatings))
            if not m:
                continue
            r = table.three_player_matches([agents[i] for i in seating], m, rules, seed=args.seed + 7919 * k)
            for seat, i in enumerate(seating):
                wins[i] += (r["winner"] == seat).sum()
                totals[i] += r["final"][:, seat].sum()
            draws += int((r["winner"] < 0).sum())
            played += m
        lines = [
            f"{' vs '.join(names)}: {played} three-player matches (every seating, first dealer rotating; "
            "the dealer sits each hand out)"
        ]
        for i, name in enumerate(names):
            lo, hi = wilson(wins[i], played)
            lines.append(
                f"  {name}: won {int(wins[i])}, win rate {wins[i] / played:.3f} (95% CI {lo:.3f}-{hi:.3f}), "
                f"mean final total {totals[i] / played:.1f}"
            )
            out[name] = {"won": int(wins[i]), "win_rate": wins[i] / played, "ci95": [lo, hi]}
        lines.append(f"  draws (the best final total shared): {draws}")
    print("\n".join(lines))
    if args.json:
        write_json(args.json, out)
    return 0


def _openspiel_main(p, args) -> int:
    """``--engine openspiel``: hands in OpenSpiel's engine (its rules: the openspiel preset)."""
    if len(args.agents) != 2 or args.round_robin:
        p.error("--engine openspiel plays two agents")
    try:
        from agents.bridges import openspiel
    except ImportError as e:
        p.error(f"--engine openspiel needs the openspiel extra: {install_hint('openspiel')} ({e})")
    try:
        r = openspiel.evaluate(*args.agents, hands=args.hands or 1000, seed=args.seed)
    except ValueError as e:
        p.error(str(e))
    print(openspiel.format_report(r))
    if args.json:
        write_json(args.json, r)
    return 0


def run() -> None:
    """The command (``ginenv-evaluate`` where installed)."""
    raise SystemExit(main())


if __name__ == "__main__":
    run()
