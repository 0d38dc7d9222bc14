"""The exported Kaggle submission under the arena's own harness, for many games.

Exports a checkpoint with ``python -m agents.export --kaggle`` (or takes an unpacked
submission folder), loads its ``main.py`` with kaggle-environments' own loader, and plays
``--games`` games of ``open_spiel_gin_rummy`` through ``env.run``: seats alternating,
opponents alternating between Kaggle's ``random`` agent and the submission itself (both
seats). Counts, per game and agent: statuses other than DONE (an error, a timeout, an
invalid action: each one a forfeit), the arena's "INVALID ACTION" reports, the agent's
own fallbacks (a legal move played after something inside it raised), and times every
call of the submission: the median and slowest move against the arena's per-move limit
(``actTimeout``). ``--processes`` splits the games. Prints the figures; ``--json``
writes them. Exit status 1 on any illegal move, forfeit or exception.

Run: ``python bench/kaggle_arena.py --games 10000 --processes 2`` (``--search 64:patient``:
the bundle that searches at decision time).
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from agents import SHIPPED

ROOT = Path(__file__).resolve().parent.parent


class InvalidCounter(logging.Handler):
    def __init__(self):
        super().__init__()
        self.count = 0

    def emit(self, record):
        if "INVALID ACTION" in record.getMessage():
            self.count += 1


def play_chunk(job: tuple) -> dict:
    """Games ``first`` .. ``first + games - 1`` (the seat and opponent follow the number)."""
    folder, first, games = job
    import kaggle_environments as ke
    from kaggle_environments.agent import get_last_callable

    counter = InvalidCounter()
    logging.getLogger("kaggle_environments").addHandler(counter)
    main = Path(folder) / "main.py"
    bot = get_last_callable(main.read_text(), path=str(main))
    fallbacks = sys.modules["ginbot.kaggle_bot"].FALLBACKS  # the bundle's own record
    times = []

    def timed(observation, configuration):
        t = time.perf_counter()
        out = bot(observation, configuration)
        if observation.get("serializedGameAndState"):
            times.append(time.perf_counter() - t)
        return out

    out = {"games": 0, "not_done": {}, "rewards": {"random": [], "self": []}, "steps": 0}
    limit = None
    for g in range(first, first + games):
        env = ke.make("open_spiel_gin_rummy", configuration={"includeLegalActions": True, "seed": g})
        limit = env.configuration.actTimeout
        opponent = "random" if g % 2 == 0 else "self"
        seat = (g // 2) % 2
        agents = [timed, "random" if opponent == "random" else timed]
        if seat == 1:
            agents = agents[::-1]
        steps = env.run(agents)
        last = steps[-1]
        out["games"] += 1
        out["steps"] += len(steps)
        for k, s in enumerate(last):
            if s["status"] != "DONE":
                key = f"seat {k} ({'ours' if agents[k] is timed else 'random'}): {s['status']}"
                out["not_done"][key] = out["not_done"].get(key, 0) + 1
        out["rewards"][opponent].append(last[seat]["reward"])
        if out["games"] % 500 == 0:
            print(f"  games {first}..{g}: {out['games']} played, {len(times)} moves timed", flush=True)
    out["invalid_reports"] = counter.count
    out["fallbacks"] = [list(f) for f in fallbacks]
    out["times"] = times
    out["act_timeout"] = limit
    return out


def export(checkpoint: str, search: str | None = None) -> Path:
    where = Path(tempfile.mkdtemp(prefix="ginenv-kaggle-"))
    tar = where / "submission.tar.gz"
    extra = ["--search", search] if search else []
    r = subprocess.run(
        [sys.executable, "-m", "agents.export", checkpoint, "--kaggle", str(tar), *extra], cwd=ROOT, text=True
    )
    if r.returncode:
        raise SystemExit(r.returncode)
    with tarfile.open(tar) as t:
        t.extractall(where / "agent", filter="data")
    return where / "agent"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", nargs="?", default=str(SHIPPED), help="default: the shipped bot")
    p.add_argument("--submission", default=None, help="an unpacked submission folder (instead of exporting)")
    p.add_argument("--search", default=None, help="export with search at decision time at this budget (64:patient)")
    p.add_argument("--games", type=int, default=10_000)
    p.add_argument("--first", type=int, default=0, help="the first game's number (its seed): to split a run")
    p.add_argument("--processes", type=int, default=1)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    if not 1 <= args.games <= 10**6 or not 1 <= args.processes <= 64 or not 0 <= args.first < 2**31:
        p.error("--games 1..10**6, --processes 1..64, --first 0..2**31-1")
    folder = Path(args.submission) if args.submission else export(args.checkpoint, args.search)
    size = -(-args.games // args.processes)
    jobs = [(str(folder), args.first + k, min(size, args.games - k)) for k in range(0, args.games, size)]
    start = time.time()
    if args.processes == 1:
        parts = [play_chunk(job) for job in jobs]
    else:
        with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
            parts = pool.map(play_chunk, jobs)
    seconds = time.time() - start
    times = [t for part in parts for t in part["times"]]
    not_done: dict = {}
    for part in parts:
        for k, n in part["not_done"].items():
            not_done[k] = not_done.get(k, 0) + n
    rewards = {k: [r for part in parts for r in part["rewards"][k]] for k in ("random", "self")}
    figures = {
        "first": args.first,
        "games": sum(part["games"] for part in parts),
        "times_ms": [round(1000 * t, 2) for t in times],
        "steps": sum(part["steps"] for part in parts),
        "seconds": round(seconds, 1),
        "not_done": not_done,
        "invalid_reports": sum(part["invalid_reports"] for part in parts),
        "fallbacks": [f for part in parts for f in part["fallbacks"]],
        "moves_timed": len(times),
        "move_median_ms": 1000 * statistics.median(times),
        "move_max_ms": 1000 * max(times),
        "act_timeout_s": parts[0]["act_timeout"],
        "vs_random": {"games": len(rewards["random"]), "won": sum(r > 0 for r in rewards["random"])},
        "vs_self_games": len(rewards["self"]),
    }
    print(
        f"{figures['games']} games of open_spiel_gin_rummy through kaggle-environments' env.run "
        f"({figures['steps']} steps, {seconds / 60:.1f} min, {args.processes} process(es)), the submission in both "
        f"seats; against random {figures['vs_random']['games']}, against itself {figures['vs_self_games']}"
    )
    print(
        f"forfeits (a status other than DONE): {sum(not_done.values())} {not_done or ''}; "
        f"the arena's INVALID ACTION reports: {figures['invalid_reports']}; the agent's fallbacks: "
        f"{len(figures['fallbacks'])}"
    )
    print(
        f"moves: {len(times)} timed, median {figures['move_median_ms']:.1f} ms, "
        f"slowest {figures['move_max_ms']:.0f} ms "
        f"(the arena's limit: {figures['act_timeout_s']} s a move); won {figures['vs_random']['won']} of "
        f"{figures['vs_random']['games']} against random"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    bad = sum(not_done.values()) or figures["invalid_reports"] or figures["fallbacks"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
