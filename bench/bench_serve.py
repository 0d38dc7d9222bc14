"""The web API's latency per bot move, and how it holds up with many games at once.

Starts ``python -m agents.serve`` (uvicorn, the shipped bot by default, the games in a
fresh SQLite file) on a free loopback port with 1, then 2 worker processes
(``--workers``), and for each ``--clients`` level runs that many clients at once, each
creating games and playing random legal moves for ``--seconds``. Prints, per level, the
requests per second and the median and 95th-percentile latency of a move request
divided by the bot moves it carried (the per-bot-move latency), and the memory one held
game takes. Only loopback traffic; bounded in time. Run: ``python bench/bench_serve.py
[--clients 1 8 32] [--seconds 10]``.
"""

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

import httpx
import numpy as np

from agents import SHIPPED, make_agent
from agents.play.game import Game

ROOT = Path(__file__).resolve().parent.parent


def client_loop(url: str, seconds: float, seed: int, out: list) -> None:
    rng = np.random.default_rng(seed)
    end = time.perf_counter() + seconds
    with httpx.Client(base_url=url, timeout=60) as c:
        while time.perf_counter() < end:
            r = c.post("/api/games", json={"mode": "hand", "seed": int(rng.integers(1 << 30))}).json()
            gid, state = r["id"], r["state"]
            while not state["over"] and time.perf_counter() < end:
                action = int(rng.choice([a["id"] for a in state["legal_actions"]]))
                t = time.perf_counter()
                r = c.post(f"/api/games/{gid}/actions", json={"action": action}).json()
                dt = time.perf_counter() - t
                out.append((dt, len(r["bot_moves"])))
                state = r["state"]


def start(args, port: int, workers: int, db: str):
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agents.serve",
            "--opponent",
            args.opponent,
            "--port",
            str(port),
            "--max-games",
            "10000",
            "--allow-seed",  # the bench replays the same deals
            "--creates-per-minute",
            "1000000",
            "--db",
            db,
            "--workers",
            str(workers),
        ],
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            httpx.get(url + "/", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.1)
    return server, url


def run_level(url: str, n: int, seconds: float, workers: int) -> None:
    samples: list = []
    threads = [threading.Thread(target=client_loop, args=(url, seconds, i, samples)) for i in range(n)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t
    per_move = [dt / k for dt, k in samples if k]
    print(
        f"{workers} worker(s), {n:3d} clients: {len(samples) / wall:7.1f} move requests/s, "
        f"{sum(k for _, k in samples) / wall:7.1f} bot moves/s, latency per bot move median "
        f"{statistics.median(per_move) * 1e3:6.1f} ms, p95 {np.percentile(per_move, 95) * 1e3:6.1f} ms "
        f"({len(samples)} requests)",
        flush=True,
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--opponent", default=str(SHIPPED), help="default: the shipped bot")
    p.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="server processes, one run each")
    p.add_argument("--seconds", type=float, default=10.0)
    args = p.parse_args()
    bot = make_agent(args.opponent)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for workers in args.workers:
        with tempfile.TemporaryDirectory() as tmp:
            server, url = start(args, port, workers, str(Path(tmp) / "games.sqlite3"))
            try:
                for n in args.clients:
                    run_level(url, n, args.seconds, workers)
            finally:
                server.terminate()
                server.wait(timeout=30)
    Game(bot, seed=0)  # load the compiled engine first: its code is not a game's memory
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = [Game(bot, seed=i) for i in range(200)]
    per_game = (tracemalloc.get_traced_memory()[0] - before) / len(held)
    print(f"memory per held game: {per_game / 1024:.1f} KiB ({len(held)} games)")


if __name__ == "__main__":
    main()
