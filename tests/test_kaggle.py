"""The agent for Kaggle's open_spiel_gin_rummy arena: whole episodes against Kaggle's own
random agent, in either seat."""

import pytest

ke = pytest.importorskip("kaggle_environments")
pytest.importorskip("pyspiel")

from agents.bridges.kaggle import make_kaggle_agent  # noqa: E402


@pytest.mark.parametrize("seat", [0, 1])
def test_a_full_episode_against_kaggles_random_agent(seat):
    env = ke.make("open_spiel_gin_rummy", configuration={"includeLegalActions": True, "seed": 3 + seat}, debug=True)
    agents = [make_kaggle_agent("knock_early"), "random"]
    steps = env.run(agents if seat == 0 else agents[::-1])
    last = steps[-1]
    assert all(s["status"] == "DONE" for s in last), [s["status"] for s in last]
    assert last[seat]["observation"]["isTerminal"]
    assert last[seat]["reward"] is not None and last[seat]["reward"] == -last[1 - seat]["reward"]
    assert len(steps) > 10  # a real hand was played, not a forfeit


def test_the_agent_answers_the_stateless_first_call_with_the_default_action():
    assert make_kaggle_agent("random")({"step": 0, "remainingOverageTime": 60}, {}) == {"submission": -1}


# ------------------------------------------------------------- the submission bundle
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tarfile  # noqa: E402
from pathlib import Path  # noqa: E402

from agents import SHIPPED  # noqa: E402

ROOT = Path(__file__).parent.parent
CHAMPION = ROOT / "checkpoints" / "champion"


def export(checkpoint, out) -> subprocess.CompletedProcess:
    """``python -m agents.export CHECKPOINT --kaggle OUT``, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "agents.export", str(checkpoint), "--kaggle", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """The shipped bot exported by the command a user runs, unpacked in a clean folder."""
    where = tmp_path_factory.mktemp("kaggle")
    tar_path = where / "submission.tar.gz"
    r = export(SHIPPED, tar_path)
    assert r.returncode == 0, r.stderr
    assert f"wrote {tar_path}" in r.stdout
    unpacked = where / "agent"
    unpacked.mkdir()
    with tarfile.open(tar_path) as tar:
        tar.extractall(unpacked, filter="data")
        members = [m for m in tar.getmembers() if m.isfile()]
    # What it says it wrote is what is there: every file at the top, the archive's size.
    listed = r.stdout.split(": ", 1)[1].split(";")[0].split(", ")
    top = sorted({m.name.split("/")[0] + ("/" if "/" in m.name else "") for m in members})
    assert [name.split(" (")[0] for name in listed] == top
    assert {"policy.json", "LICENSE", "main.py", "policy.safetensors"} <= set(top)
    assert f"{len(members)} files, {round(tar_path.stat().st_size / 1024)} KiB compressed" in r.stdout
    assert f"{round(sum(m.size for m in members) / 1024)} KiB unpacked" in r.stdout
    return unpacked


def play_elsewhere(bundle, tmp_path, seed: int) -> subprocess.CompletedProcess:
    """In a fresh interpreter, elsewhere, with torch, ginenv, agents and numba
    unimportable: Kaggle loads the bundle's main.py from its path and plays a game in each
    seat against its random agent; prints each game's steps, then the ginbot modules loaded."""
    script = f"""
import sys
import kaggle_environments as ke
for m in ("torch", "ginenv", "agents", "numba", "train"):
    sys.modules[m] = None
for seat in (0, 1):
    config = {{"includeLegalActions": True, "seed": {seed} + seat}}
    env = ke.make("open_spiel_gin_rummy", configuration=config, debug=True)
    agents = [{str(bundle / "main.py")!r}, "random"]
    steps = env.run(agents if seat == 0 else agents[::-1])
    last = steps[-1]
    assert all(s["status"] == "DONE" for s in last), [s["status"] for s in last]
    assert last[seat]["reward"] == -last[1 - seat]["reward"], last  # 0 for a dead hand
    print("steps", len(steps))
print("loaded", sorted(m for m in sys.modules if m.split(".")[0] == "ginbot"))
"""
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r


def test_the_bundle_plays_whole_games_with_neither_torch_nor_the_project(bundle, tmp_path):
    """Kaggle loads main.py from its path and plays both seats to the end, elsewhere,
    with neither torch nor the project importable."""
    r = play_elsewhere(bundle, tmp_path, seed=7)
    assert all(int(line.split()[1]) > 10 for line in r.stdout.splitlines() if line.startswith("steps"))
    loaded = eval(r.stdout.splitlines()[-1][len("loaded ") :])
    shipped = sorted("ginbot" if p.stem == "__init__" else f"ginbot.{p.stem}" for p in (bundle / "ginbot").glob("*.py"))
    assert loaded == shipped  # it carries what it imports and nothing more
    assert sorted(p.name for p in bundle.iterdir()) == [
        "LICENSE",
        "ginbot",
        "main.py",
        "policy.json",
        "policy.safetensors",
    ]


def test_the_bundle_makes_the_checkpoints_moves(bundle):
    """Loaded the way Kaggle loads it (its own loader, from the file's path), the bundle
    answers every call as the checkpoint does through the project's own Kaggle agent,
    whose default is that checkpoint, the shipped bot (not the bot shipped before it)."""
    from kaggle_environments.agent import get_last_callable

    bundled = get_last_callable((bundle / "main.py").read_text(), path=str(bundle / "main.py"))
    reference = make_kaggle_agent()
    compared = []

    def both(observation, configuration):
        got, want = bundled(observation, configuration), reference(observation, configuration)
        assert got == want, (got, want)
        compared.append(got)
        return got

    for seat in (0, 1):
        env = ke.make(
            "open_spiel_gin_rummy", configuration={"includeLegalActions": True, "seed": 11 + seat}, debug=True
        )
        steps = env.run([both, "random"] if seat == 0 else ["random", both])
        assert all(s["status"] == "DONE" for s in steps[-1])
    assert len(compared) > 20


@pytest.mark.parametrize("case", ["folder with files", "tar name is a folder", "no such parent", "stray file"])
def test_the_kaggle_export_refuses_what_it_cannot_write(tmp_path, case):
    checkpoint, out = CHAMPION, tmp_path / "submission.tar.gz"
    if case == "folder with files":
        out = tmp_path / "sub"
        out.mkdir()
        (out / "keep.txt").write_text("mine")
    elif case == "tar name is a folder":
        out.mkdir()
    elif case == "no such parent":
        out = tmp_path / "missing" / "submission.tar.gz"
    else:
        checkpoint = tmp_path / "notes.txt"
        checkpoint.write_text("x")
    r = export(checkpoint, out)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert ("is a file, not a checkpoint" if case == "stray file" else f"--kaggle {out}") in r.stderr
    if case == "folder with files":
        assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_the_bundle_refuses_a_module_it_cannot_carry(monkeypatch):
    from agents.bridges import kaggle_export

    monkeypatch.setattr(kaggle_export, "ROOTS", ("agents.training.policy",))
    monkeypatch.setattr(kaggle_export, "AGENT_MODULES", {"agents.training.policy"})
    with pytest.raises(ValueError, match="agents.training.policy imports .* which a Kaggle bundle cannot carry"):
        kaggle_export.modules_to_bundle()


def test_an_agent_that_raises_still_plays_a_legal_move_and_logs_it(capsys, caplog):
    """The arena forfeits a game on an exception or an illegal move: the agent function
    answers a legal move instead, says so on stderr, and the episode ends normally."""
    from agents.bridges import kaggle_bot

    class Broken:
        calls = 0

        def act(self, obs, mask):
            Broken.calls += 1
            if Broken.calls % 3 == 0:
                raise RuntimeError("boom")
            return int(mask[0].nonzero()[0][0])

    class Illegal:
        def act(self, obs, mask):
            return int((~mask[0]).nonzero()[0][0])  # a move that is not legal

    before = len(kaggle_bot.FALLBACKS)
    env = ke.make("open_spiel_gin_rummy", configuration={"includeLegalActions": True, "seed": 5}, debug=True)
    steps = env.run([kaggle_bot.kaggle_agent(Broken()), "random"])
    assert all(s["status"] == "DONE" for s in steps[-1]), [s["status"] for s in steps[-1]]
    taken = kaggle_bot.FALLBACKS[before:]
    assert taken and all(kind == "RuntimeError" and msg == "boom" for kind, msg, _ in taken)
    assert "ginbot: the agent raised RuntimeError: boom; playing legal action" in capsys.readouterr().err
    before = len(kaggle_bot.FALLBACKS)
    env = ke.make("open_spiel_gin_rummy", configuration={"includeLegalActions": True, "seed": 6}, debug=True)
    steps = env.run(["random", kaggle_bot.kaggle_agent(Illegal())])
    # Played to its end, not forfeited at the first illegal move (Kaggle's random agent is
    # not seeded: the hand's length varies, and a quick knock ends it in under 10 steps).
    assert all(s["status"] == "DONE" for s in steps[-1]) and len(steps) > 3
    assert kaggle_bot.FALLBACKS[before:] and all(k == "ValueError" for k, _, _ in kaggle_bot.FALLBACKS[before:])
    assert "INVALID ACTION" not in caplog.text  # what the arena logs (and forfeits) for an illegal move
    # a state that cannot be read: the observation's legal actions
    assert kaggle_bot.kaggle_agent(Broken())({"serializedGameAndState": "garbage", "legalActions": [7, 9]}) == {
        "submission": 7
    }


@pytest.fixture(scope="module")
def search_bundle(tmp_path_factory):
    """The shipped bot exported with search at decision time (``--search 8:patient``)."""
    where = tmp_path_factory.mktemp("kaggle_search")
    r = subprocess.run(
        [sys.executable, "-m", "agents.export", "shipped", "--kaggle", str(where), "--search", "8:patient"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return where


def test_a_searching_bundle_plays_with_numpy_alone_and_searches(search_bundle, tmp_path):
    """With ``--search`` the bundle carries the search and the worlds' resampler, plays
    whole games in both seats in a fresh interpreter where torch and the project cannot be
    imported, and its moves are those of the same search over the same numpy actor built
    here; its searched moves dealt the budget's worlds."""
    r = play_elsewhere(search_bundle, tmp_path, seed=3)
    loaded = eval(r.stdout.splitlines()[-1][len("loaded ") :])
    assert {"ginbot.search", "ginbot.worlds", "ginbot.numpy_actor"} <= set(loaded)
    assert "playing legal action" not in r.stderr, r.stderr  # no fallback: every move its own

    from kaggle_environments.agent import get_last_callable
    from safetensors.numpy import load_file

    from agents.bridges.kaggle_bot import kaggle_agent
    from agents.training.numpy_actor import NumpyActor, NumpyPolicy
    from agents.training.search import SearchAgent
    from agents.training.spec import NetworkSpec

    bundled = get_last_callable((search_bundle / "main.py").read_text(), path=str(search_bundle / "main.py"))
    searcher = bundled.__globals__["BOT"]
    meta = json.loads((search_bundle / "policy.json").read_text())
    assert meta["search"] == "8:patient" and searcher.worlds == 8 and searcher.rollouts == "patient"
    actor = NumpyActor(load_file(search_bundle / "policy.safetensors"), NetworkSpec.from_dict(meta["network"]))
    reference = kaggle_agent(SearchAgent(NumpyPolicy(actor), worlds=8, rollouts="patient"))
    compared, searched = [], 0

    def both(observation, configuration):
        nonlocal searched
        searcher.last_worlds = 0
        got, want = bundled(observation, configuration), reference(observation, configuration)
        assert got == want, (got, want)
        searched += searcher.last_worlds == 8
        compared.append(got)
        return got

    env = ke.make("open_spiel_gin_rummy", configuration={"includeLegalActions": True, "seed": 21}, debug=True)
    env.run([both, "random"])
    assert len(compared) > 10 and searched >= 1


def test_the_export_refuses_a_search_budget_it_cannot_read(tmp_path):
    def export_with(*args):
        command = [sys.executable, "-m", "agents.export", "shipped", *args]
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)

    r = export_with("--kaggle", str(tmp_path / "s.tar.gz"), "--search", "9000")
    assert r.returncode == 2 and "--search 9000: not a budget" in r.stderr and "1 to 512" in r.stderr, r.stderr
    assert not (tmp_path / "s.tar.gz").exists()
    r = export_with("--onnx", str(tmp_path / "p.onnx"), "--search", "8")
    assert r.returncode == 2 and "--search goes with --kaggle" in r.stderr, r.stderr
