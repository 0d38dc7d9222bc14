"""One game as fast as a batch: the compiled engine against the numpy engine and the
anchors, random legal play, CPU time per decision, interleaved runs, medians.

    python bench/bench_engine.py [--seconds 1] [--repeats 5] [--pettingzoo-venv DIR]

- the PettingZoo AEC env (``ginenv.env()``) on each engine, against PettingZoo 1.26's
  ``gin_rummy_v4`` (RLCard) run in its own venv (``--pettingzoo-venv``: made there with
  pip on first use) and OpenSpiel's Python API with observation tensors;
- the core (``core.step``) at batch 1, 64, 1024 and 4096 on each engine, against
  OpenSpiel playing from a clone of a dealt state;
- the solver: the least deadwood of a 10-card hand, one hand a call (compiled, numpy,
  OpenSpiel's ``min_deadwood``) and 4096 hands a call (compiled, numpy).

Every figure is decisions (or hands) per CPU-second of this process (the PettingZoo
venv's own process for gin_rummy_v4), the median of ``--repeats`` runs taken in turn.
Random actions come from one compiled sampler for both engines, so the sampler costs
each engine the same.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ginenv  # noqa: E402
from ginenv import compiled, core, melds  # noqa: E402

PZ_SNIPPET = """
import sys, time, numpy as np
from pettingzoo.classic import gin_rummy_v4
env = gin_rummy_v4.env(); env.reset(seed=0)
rng = np.random.default_rng(0); n = 0; t = time.process_time()
while time.process_time() - t < float(sys.argv[1]):
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None); continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))])); n += 1
    env.reset()
print(n / (time.process_time() - t))
"""


@njit(cache=True)
def pick(mask, u, out):
    """A uniformly random legal action per game (``u`` uniform in [0, 1))."""
    for g in range(mask.shape[0]):
        n = 0
        for a in range(mask.shape[1]):
            n += mask[g, a]
        k = int(u[g] * n)
        for a in range(mask.shape[1]):
            if mask[g, a]:
                if k == 0:
                    out[g] = a
                    break
                k -= 1


def cpu_rate(fn, seconds: float) -> float:
    """Work units per CPU-second: ``fn()`` returns the units it did."""
    n, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        n += fn()
    return n / (time.process_time() - start)


# ------------------------------------------------------------------------ cases
def aec_case(engine: str, seconds: float) -> float:
    core.set_engine(engine)
    env = ginenv.env()
    env.reset(seed=0)
    rng = np.random.default_rng(0)

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


def core_case(engine: str, batch: int, seconds: float) -> float:
    core.set_engine(engine)
    s = core.init(batch, "standard", seed=1, mode="hand", auto_reset=True)
    rng = np.random.default_rng(0)
    actions = np.zeros(batch, np.int64)

    def one_step():
        pick(core.legal_action_mask(s), rng.random(batch), actions)
        core.step(s, actions)
        return batch

    return cpu_rate(one_step, seconds)


def openspiel_api_case(seconds: float) -> float:
    """OpenSpiel's Python API as an RL env is used: observation tensor, legal actions."""
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    rng = np.random.default_rng(0)

    def episode():
        state, n = game.new_initial_state(), 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            state.observation_tensor(state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
            n += 1
        return n

    return cpu_rate(episode, seconds)


def openspiel_clone_case(seconds: float) -> float:
    """OpenSpiel's engine alone: play from a clone of a dealt state, legal actions only."""
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    rng = np.random.default_rng(0)
    dealt = game.new_initial_state()
    while dealt.is_chance_node():
        outcomes = dealt.chance_outcomes()
        dealt.apply_action(outcomes[rng.integers(len(outcomes))][0])

    def episode():
        state, n = dealt.clone(), 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
            n += 1
        return n

    return cpu_rate(episode, seconds)


def hands10(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 52), bool)
    for i in range(n):
        out[i, rng.choice(52, 10, replace=False)] = True
    return out


HANDS = hands10(4096)


def solver_cases(seconds: float) -> dict:
    out = {}
    one = [HANDS[i] for i in range(256)]
    out["deadwood, one hand a call: compiled"] = cpu_rate(
        lambda: [compiled.hand_deadwood(h) for h in one] and 256, seconds
    )
    out["deadwood, one hand a call: numpy"] = cpu_rate(lambda: [melds.deadwood(h) for h in one] and 256, seconds)
    try:
        import pyspiel

        utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
        ids = [list(map(int, np.flatnonzero(h))) for h in one]
        out["deadwood, one hand a call: OpenSpiel min_deadwood"] = cpu_rate(
            lambda: [utils.min_deadwood(h) for h in ids] and 256, seconds
        )
    except ImportError:
        pass
    res = np.empty(len(HANDS), np.int64)
    out["deadwood, 4096 hands a call: compiled"] = cpu_rate(
        lambda: compiled.hands_deadwood(HANDS, res) or len(HANDS), seconds
    )
    out["deadwood, 4096 hands a call: numpy"] = cpu_rate(lambda: melds.deadwood(HANDS) is not None and 4096, seconds)
    return out


def pettingzoo_case(venv: Path, seconds: float) -> float | None:
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"making the PettingZoo 1.26 venv in {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "pettingzoo==1.26.1", "rlcard==1.2.0", "pygame", "numpy"],
            check=True,
        )
    out = subprocess.run([str(python), "-c", PZ_SNIPPET, str(seconds)], capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr[-500:])
        return None
    return float(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ breakdown
@njit
def _noop5(a, b, c, d, e):
    return 0


@njit
def _noop6(a, b, c, d, e, f):
    return 0


def per_call_us(fn, calls: int = 20000) -> float:
    """CPU µs a call of ``fn()``, the median of 5 rounds of ``calls`` calls."""
    rounds = []
    for _ in range(5):
        start = time.process_time()
        for _ in range(calls):
            fn()
        rounds.append((time.process_time() - start) / calls * 1e6)
    return statistics.median(rounds)


def per_step_us(step, positions: list) -> float:
    """CPU µs a step: ``step(state, action)`` once on a fresh copy of every position
    (copies made outside the timing), the median of 5 rounds."""
    rounds = []
    for _ in range(5):
        fresh = [(s.copy(), a) for s, a in positions]
        start = time.process_time()
        for s, a in fresh:
            step(s, a)
        rounds.append((time.process_time() - start) / len(fresh) * 1e6)
    return statistics.median(rounds)


DISPATCH_STEP = "step: numba's dispatch (a no-op, same arguments)"


def breakdown() -> dict:
    """Where a decision of one game goes on the compiled engine, in CPU µs a call:
    numba's dispatch (a compiled function that does nothing, called with the same
    arguments), the compiled work (the real call less that), and the Python around it
    (``core.step`` and ``observe`` less the compiled call), for a step and one seat's
    observation; and the AEC env's whole decision (``last`` and ``step``)."""
    from ginenv.observation import _SCALES, obs_size, observe

    core.set_engine("numba")
    s = core.init(1, "standard", seed=1, mode="hand", auto_reset=True)
    rng = np.random.default_rng(0)
    positions = []
    for _ in range(2000):  # positions of random play, each with a legal action
        a = np.zeros(1, np.int64)
        pick(core.legal_action_mask(s), rng.random(1), a)
        positions.append((s.copy(), a))
        core.step(s, a)

    def compiled_step(st, a):
        compiled.step(a, st._games, st._legal, np.zeros((1, 108), bool), core._rule_vector(st))

    st, a = positions[0]
    rule, legal = core._rule_vector(st), np.zeros((1, 108), bool)
    me, out = np.zeros(1, np.int64), np.empty((1, obs_size(False)), np.float32)
    figs = {
        "step: core.step": per_step_us(core.step, positions),
        "step: the compiled call": per_step_us(compiled_step, positions),
        DISPATCH_STEP: per_call_us(lambda: _noop5(a, st._games, st._legal, legal, rule)),
        "observe: observation.observe": per_call_us(lambda: observe(st, 0, out=out)),
        "observe: the compiled call": per_call_us(lambda: compiled.observe(out, me, False, st._games, rule, _SCALES)),
        "observe: numba's dispatch (a no-op, same arguments)": per_call_us(
            lambda: _noop6(out, me, False, st._games, rule, _SCALES)
        ),
        "AEC env: one decision (last and step)": 1e6 / aec_case("numba", 1.0),
    }
    return figs


# ------------------------------------------------------------------------- main
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per measurement")
    p.add_argument("--repeats", type=int, default=5, help="runs of each case, taken in turn")
    p.add_argument("--pettingzoo-venv", default=str(Path.home() / ".cache" / "ginenv-bench" / "pettingzoo-1.26"))
    p.add_argument("--no-pettingzoo", action="store_true", help="skip PettingZoo 1.26's gin_rummy_v4")
    p.add_argument("--breakdown", action="store_true", help="only where one game's decision goes (CPU µs a call)")
    args = p.parse_args(argv)
    if args.breakdown:
        figs = breakdown()
        for name, us in figs.items():
            print(f"{name:58s} {us:8.2f} µs")
        python = figs["step: core.step"] - figs["step: the compiled call"]
        work = figs["step: the compiled call"] - figs[DISPATCH_STEP]
        dispatch = figs[DISPATCH_STEP]
        print(f"a step: Python {python:.2f} µs, numba's dispatch {dispatch:.2f} µs, compiled work {work:.2f} µs")
        return 0
    try:
        import pyspiel  # noqa: F401

        has_openspiel = True
    except ImportError:
        has_openspiel = False
    cases = {}
    for engine in ("numba", "numpy"):
        cases[f"AEC env(), {engine} engine"] = lambda e=engine: aec_case(e, args.seconds)
    if not args.no_pettingzoo:
        cases["AEC PettingZoo 1.26 gin_rummy_v4 (own venv)"] = lambda: pettingzoo_case(
            Path(args.pettingzoo_venv), args.seconds
        )
    if has_openspiel:
        cases["AEC OpenSpiel Python API, observation tensors"] = lambda: openspiel_api_case(args.seconds)
        cases["core OpenSpiel, clone of a dealt state"] = lambda: openspiel_clone_case(args.seconds)
    for batch in (1, 64, 1024, 4096):
        for engine in ("numba", "numpy"):
            cases[f"core batch {batch}, {engine} engine"] = lambda b=batch, e=engine: core_case(e, b, args.seconds)
    core_case("numba", 4, 0.05)  # compile (or load the cache) before timing
    aec_case("numba", 0.05)
    compiled.hands_deadwood(HANDS[:2], np.empty(2, np.int64))
    runs: dict = {name: [] for name in cases}
    solver_runs: dict = {}
    for r in range(args.repeats):
        for name, case in cases.items():
            value = case()
            if value is not None:
                runs[name].append(value)
        for name, value in solver_cases(args.seconds / 2).items():
            solver_runs.setdefault(name, []).append(value)
        print(f"run {r + 1}/{args.repeats} done", flush=True)
    core.set_engine("numba")
    med = {name: statistics.median(v) for name, v in {**runs, **solver_runs}.items() if v}
    print(f"\n{'case':58s} {'per CPU-second':>16s}")
    for name, value in med.items():
        print(f"{name:58s} {value:16,.0f}")
    print("\nratios (medians, this run):")
    pairs = [
        ("AEC env(), numba engine", "AEC PettingZoo 1.26 gin_rummy_v4 (own venv)"),
        ("AEC env(), numba engine", "AEC OpenSpiel Python API, observation tensors"),
        ("AEC env(), numba engine", "AEC env(), numpy engine"),
        ("core batch 1, numba engine", "core OpenSpiel, clone of a dealt state"),
        ("core batch 4096, numba engine", "core OpenSpiel, clone of a dealt state"),
        ("core batch 1, numba engine", "core batch 1, numpy engine"),
        ("core batch 4096, numba engine", "core batch 4096, numpy engine"),
        ("deadwood, one hand a call: compiled", "deadwood, one hand a call: OpenSpiel min_deadwood"),
        ("deadwood, one hand a call: compiled", "deadwood, one hand a call: numpy"),
        ("deadwood, 4096 hands a call: compiled", "deadwood, 4096 hands a call: numpy"),
    ]
    for a, b in pairs:
        if a in med and b in med:
            print(f"  {a} / {b}: {med[a] / med[b]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
