"""A soak of the game server: many clients playing whole games for minutes while its
workers are killed.

Starts ``python -m agents.serve --workers W`` (uvicorn, the shipped bot by default, the
games in a fresh SQLite file) on a free port of 127.0.0.1 and runs ``--clients`` clients
at once for ``--seconds``. Each plays whole games as a person's page would: creates one
(hand or match), plays random legal moves with a think time between them (exponential,
mean ``--think-ms``), now and then asks for a hint, reads its record, or reloads the game.
Every ``--kill-every`` seconds one worker gets SIGKILL (the server starts another).

A request cut by a killed worker is retried; a move whose answer was lost is looked up in
the game's record (applied or not) before the client goes on. At the end every game is
read back from the server: its state must be the last one its client saw, and the moves
in its record exactly the client's. Prints requests/s, p50/p99/max latency (all requests,
and moves alone), each worker's resident memory at its start, after its first minute and
at its end, 5xx answers, games finished, lost or changed; ``--json`` writes them.
Exit status 1 if a target is missed (0 5xx, 0 games lost or changed, p99 under 200 ms,
memory growth under 10% after the first minute). Bounded in time; loopback only.

Run: ``python bench/soak_serve.py`` (10 minutes, 64 clients, 2 workers, a kill every 2
minutes); ``--seconds 30 --kill-every 10`` is the test suite's version.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents import SHIPPED  # noqa: E402

TARGET_P99_MS = 200.0
TARGET_MEMORY_GROWTH = 0.10
AFTER_KILL_S = 15.0  # a kill's window: the requests that end this long after it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int | None:
    """Resident memory of ``pid`` in KiB (Linux), None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def workers_of(pid: int) -> list:
    """The worker processes of the server ``pid`` (its children, Linux)."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    # the spawn context's resource tracker is a child too: a worker is a python serving
    return [int(k) for k in kids if "resource_tracker" not in Path(f"/proc/{k}/cmdline").read_text(errors="replace")]


class Stats:
    def __init__(self):
        self.latency = []  # (kind, when it ended (monotonic), seconds)
        self.status = {}  # status -> count
        self.errors = {}  # connection errors by kind
        self.finished = 0
        self.games = {}  # gid -> {"actions": [...], "state": last seen}
        self.retried = 0
        self.served_by = []  # (when it ended (monotonic), the worker's pid from X-Served-By)

    def count(self, status: int) -> None:
        self.status[status] = self.status.get(status, 0) + 1


async def request(client, stats: Stats, kind: str, method: str, path: str, **kw):
    """One request, retried (up to 20 times, 0.25 s apart) when the connection fails
    (a killed worker). Returns the response, or None when ``kind`` is a move whose
    answer was lost (the caller looks the move up)."""
    for _ in range(20):
        t = time.perf_counter()
        try:
            r = await client.request(method, path, **kw)
        except httpx.TransportError as e:
            stats.errors[type(e).__name__] = stats.errors.get(type(e).__name__, 0) + 1
            if kind == "move":
                return None  # it may have been applied: the record says
            stats.retried += 1
            await asyncio.sleep(0.25)
            continue
        stats.latency.append((kind, time.monotonic(), time.perf_counter() - t))
        stats.count(r.status_code)
        stats.served_by.append((time.monotonic(), r.headers.get("x-served-by", "?")))
        return r
    raise RuntimeError(f"{method} {path}: no answer after 20 tries")


def human_actions(record: dict) -> list:
    """The person's moves in a game's record, in order."""
    moves = [m for hand in record["hands"] for m in hand["moves"]]
    moves += (record.get("in_play") or {}).get("moves", [])
    return [m["action"] for m in moves if m["player"] == "human"]


#: One TLS context for every client (the soak speaks plain HTTP): httpx builds a new one,
#: loading the CA bundle, for each client otherwise, ~28 ms of the clients' one event
#: loop each, which the first requests' latencies measured (1.4-1.8 s at the start).
TLS = ssl.create_default_context()


async def player(k: int, url: str, end: float, stats: Stats, think: float, seed: int) -> None:
    rng = random.Random(seed * 1000 + k)
    await asyncio.sleep(rng.uniform(0, 2 * think))  # people arrive one by one, not all at the same instant
    async with httpx.AsyncClient(base_url=url, timeout=60, verify=TLS) as client:
        while time.monotonic() < end:
            mode = rng.choice(["hand", "match"])
            r = await request(client, stats, "create", "POST", "/api/games", json={"mode": mode})
            if r.status_code != 201:
                await asyncio.sleep(0.5)
                continue
            gid, state = r.json()["id"], r.json()["state"]
            game = stats.games[gid] = {"actions": [], "state": state}
            while not state["over"] and time.monotonic() < end:
                await asyncio.sleep(rng.expovariate(1.0 / think) if think > 0 else 0)
                roll = rng.random()
                if roll < 0.05:
                    await request(client, stats, "hint", "GET", f"/api/games/{gid}/hint")
                elif roll < 0.08:
                    await request(client, stats, "record", "GET", f"/api/games/{gid}/record")
                elif roll < 0.11:  # a reload: the page reads the game again
                    r = await request(client, stats, "read", "GET", f"/api/games/{gid}")
                    if r.status_code == 200 and r.json()["state"] != state:
                        raise AssertionError(f"game {gid}: a reload shows another state than the last one")
                action = rng.choice([a["id"] for a in state["legal_actions"]])
                r = await request(client, stats, "move", "POST", f"/api/games/{gid}/actions", json={"action": action})
                if r is None:  # the answer was lost with its worker: was the move kept?
                    rec = (await request(client, stats, "record", "GET", f"/api/games/{gid}/record")).json()
                    if human_actions(rec["record"]) == [*game["actions"], action]:
                        game["actions"].append(action)
                    state = (await request(client, stats, "read", "GET", f"/api/games/{gid}")).json()["state"]
                    game["state"] = state
                    continue
                if r.status_code != 200:
                    continue  # a 5xx is counted; the game stays as it was
                game["actions"].append(action)
                state = game["state"] = r.json()["state"]
            if state["over"]:
                stats.finished += 1


async def verify(url: str, stats: Stats) -> tuple:
    """Every game read back: ``(lost, changed)``."""
    lost = changed = 0
    async with httpx.AsyncClient(base_url=url, timeout=60, verify=TLS) as client:
        for gid, game in stats.games.items():
            r = await client.get(f"/api/games/{gid}")
            rec = await client.get(f"/api/games/{gid}/record")
            if r.status_code != 200 or rec.status_code != 200:
                lost += 1
            elif r.json()["state"] != game["state"] or human_actions(rec.json()["record"]) != game["actions"]:
                changed += 1
    return lost, changed


def percentile(values: list, q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


async def soak(args) -> dict:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    folder = tempfile.mkdtemp(prefix="ginenv-soak-")
    cmd = [sys.executable, "-m", "agents.serve", "--opponent", args.opponent, "--port", str(port)]
    cmd += ["--workers", str(args.workers), "--db", os.path.join(folder, "games.sqlite3")]
    cmd += ["--max-games", "100000", "--creates-per-minute", "1000000"]
    env = {**os.environ, "XDG_CONFIG_HOME": folder}  # the store's key in the soak's own folder
    server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    memory = {}  # pid -> {"start": (t, kib), "minute": kib, "end": kib}
    kills = []
    try:
        serving = set()  # the workers that answered: the soak starts once every one serves
        for _ in range(1200):
            try:
                r = httpx.get(url + "/api/text/en", timeout=1)  # a new connection each time
                if r.status_code == 200:
                    serving.add(r.headers.get("x-served-by"))
            except httpx.TransportError:
                pass
            if len(serving) >= args.workers:
                break
            if server.poll() is not None:
                raise RuntimeError(f"the server did not start: {server.stderr.read()[-2000:]}")
            time.sleep(0.05)
        else:
            raise RuntimeError(f"only {len(serving)} of {args.workers} workers answered within a minute")
        stats = Stats()
        cpu = time.process_time()
        start = time.monotonic()
        end = start + args.seconds

        async def watch():
            next_kill = start + args.kill_every
            while time.monotonic() < end:
                now = time.monotonic()
                for pid in workers_of(server.pid):
                    kib = rss_kib(pid)
                    if kib is None:
                        continue
                    m = memory.setdefault(pid, {"start": (now, kib), "minute": None, "end": kib})
                    m["end"] = kib
                    if m["minute"] is None and now - m["start"][0] >= 60:
                        m["minute"] = kib
                if args.kill_every > 0 and now >= next_kill:
                    alive = workers_of(server.pid)
                    if alive:
                        victim = alive[len(kills) % len(alive)]
                        os.kill(victim, signal.SIGKILL)
                        kills.append((round(now - start, 1), victim))
                    next_kill += args.kill_every
                await asyncio.sleep(1.0)

        await asyncio.gather(
            watch(), *(player(k, url, end, stats, args.think_ms / 1000, args.seed) for k in range(args.clients))
        )
        seconds = time.monotonic() - start
        client_cpu = time.process_time() - cpu
        lost, changed = await verify(url, stats)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    everything = [s for _, _, s in stats.latency]
    moves = [s for kind, _, s in stats.latency if kind == "move"]
    slowest = sorted(stats.latency, key=lambda x: -x[2])[:5]
    kill_times = [start + t for t, _ in kills]
    calm = [d for _, t, d in stats.latency if not any(0 <= t - k < AFTER_KILL_S for k in kill_times)]
    workers = []
    for pid, m in memory.items():
        growth = None if m["minute"] is None else (m["end"] - m["minute"]) / m["minute"]
        workers.append(
            {"pid": pid, "start_kib": m["start"][1], "minute_kib": m["minute"], "end_kib": m["end"], "growth": growth}
        )
    errors_5xx = sum(n for status, n in stats.status.items() if status >= 500)
    return {
        "seconds": round(seconds, 1),
        "clients": args.clients,
        "workers": args.workers,
        "think_ms": args.think_ms,
        "requests": len(everything),
        "requests_per_s": len(everything) / seconds,
        "p50_ms": 1000 * percentile(everything, 0.5),
        "p99_ms": 1000 * percentile(everything, 0.99),
        "max_ms": 1000 * max(everything, default=float("nan")),
        "p99_calm_ms": 1000 * percentile(calm, 0.99),
        "calm_requests": len(calm),
        "client_cpu_s": round(client_cpu, 1),
        "move_p50_ms": 1000 * percentile(moves, 0.5),
        "move_p99_ms": 1000 * percentile(moves, 0.99),
        "status": {str(k): v for k, v in sorted(stats.status.items())},
        "errors_5xx": errors_5xx,
        "connection_errors": stats.errors,
        "kills": kills,
        "games": len(stats.games),
        "games_finished": stats.finished,
        "games_lost": lost,
        "games_changed": changed,
        "worker_memory": workers,
        "busiest_share": busiest_share(stats.served_by, start, args.seconds),
        "slowest": [{"kind": k, "at_s": round(t - start, 1), "ms": round(1000 * d, 1)} for k, t, d in slowest],
    }


def busiest_share(served_by: list, start: float, seconds: float, window: float = 10.0) -> list:
    """Per ``window`` seconds of the soak: the share of its requests that the busiest
    worker answered (0.5 is an even split between two)."""
    counts: dict = {}
    for t, who in served_by:
        k = int((t - start) // window)
        counts.setdefault(k, {}).setdefault(who, 0)
        counts[k][who] += 1
    return [round(max(c.values()) / sum(c.values()), 2) for _, c in sorted(counts.items())]


def report(r: dict) -> list:
    """The figures as lines; returns the targets missed."""
    print(
        f"soak: {r['clients']} clients, {r['workers']} workers, {r['seconds']:.0f} s, think time {r['think_ms']:g} ms, "
        f"{len(r['kills'])} workers killed (SIGKILL at {', '.join(f'{t:g} s' for t, _ in r['kills']) or 'none'})"
    )
    print(f"requests: {r['requests']} ({r['requests_per_s']:.1f}/s); statuses {r['status']}")
    print(
        f"latency: p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms, max {r['max_ms']:.0f} ms "
        f"(moves: p50 {r['move_p50_ms']:.1f} ms, p99 {r['move_p99_ms']:.1f} ms)"
    )
    print(
        f"p99 outside the {AFTER_KILL_S:g} s after each kill: {r['p99_calm_ms']:.1f} ms "
        f"({r['calm_requests']} requests); "
        f"the clients' own CPU: {r['client_cpu_s']:.0f} s of {r['seconds']:.0f} s (on the same machine)"
    )
    print(f"connections cut by the kills: {sum(r['connection_errors'].values())} {r['connection_errors'] or ''}")
    print(
        f"5xx: {r['errors_5xx']}; games: {r['games']} played, {r['games_finished']} finished, "
        f"{r['games_lost']} lost, {r['games_changed']} changed"
    )
    for w in r["worker_memory"]:
        minute = "-" if w["minute_kib"] is None else f"{w['minute_kib'] / 1024:.0f} MiB"
        growth = "" if w["growth"] is None else f" ({100 * w['growth']:+.1f}% after the first minute)"
        start, end = f"{w['start_kib'] / 1024:.0f} MiB", f"{w['end_kib'] / 1024:.0f} MiB"
        print(f"worker {w['pid']}: {start} at start, {minute} at 1 min, {end} at end{growth}")
    print("the busiest worker's share of each 10 s: " + " ".join(f"{x:.2f}" for x in r["busiest_share"]))
    print("slowest: " + ", ".join(f"{x['kind']} {x['ms']:.0f} ms at {x['at_s']:g} s" for x in r["slowest"]))
    missed = []
    if r["errors_5xx"]:
        missed.append(f"{r['errors_5xx']} 5xx")
    if r["games_lost"] or r["games_changed"]:
        missed.append(f"{r['games_lost']} games lost, {r['games_changed']} changed")
    if not r["p99_ms"] < TARGET_P99_MS:
        missed.append(f"p99 {r['p99_ms']:.0f} ms >= {TARGET_P99_MS:g} ms")
    grown = [w for w in r["worker_memory"] if w["growth"] is not None and w["growth"] >= TARGET_MEMORY_GROWTH]
    if grown:
        missed.append(f"memory grew >= 10% after the first minute in {len(grown)} worker(s)")
    print("targets: " + ("all met" if not missed else "missed: " + "; ".join(missed)))
    return missed


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=600.0)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--kill-every", type=float, default=120.0, help="SIGKILL a worker this often (0: never)")
    p.add_argument("--think-ms", type=float, default=500.0, help="mean think time between a client's moves")
    p.add_argument("--opponent", default=str(SHIPPED))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="write the figures here")
    args = p.parse_args(argv)
    if not (0 < args.seconds <= 3600 and 1 <= args.clients <= 512 and 1 <= args.workers <= 16):
        p.error("--seconds 0..3600, --clients 1..512, --workers 1..16")
    if args.kill_every < 0 or args.think_ms < 0:
        p.error("--kill-every and --think-ms must be >= 0")
    r = asyncio.run(soak(args))
    missed = report(r)
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2) + "\n")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
