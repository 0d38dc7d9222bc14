"""The architecture: ``ginenv`` stands alone (numpy, gymnasium and pettingzoo; never
torch, ``agents`` or ``bench``), and ``State``'s public surface is pinned: a field no
player may see is private (a leading underscore), as pgx's ``_validate_state`` demands."""

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np

from ginenv import core
from ginenv.worlds import resample_hidden

ROOT = Path(__file__).parent.parent
GINENV = sorted((ROOT / "ginenv").glob("*.py"))


def imported_modules(path: Path) -> set:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_ginenv_module_imports_agents_bench_or_torch():
    assert len(GINENV) > 10
    for path in GINENV:
        upward = imported_modules(path) & {"agents", "bench", "torch", "train"}
        assert not upward, f"{path.name} imports {upward}"


def test_ginenv_imports_and_plays_with_torch_unimportable():
    names = [f"ginenv.{p.stem}" for p in GINENV if p.stem != "__init__"]
    script = f"""
import sys
sys.modules["torch"] = None  # any import of torch now raises ImportError
import importlib
for name in {names!r}:
    importlib.import_module(name)
import gymnasium, numpy as np
env = gymnasium.make("ginenv/GinRummy-v0", opponent="knock_early")
obs, info = env.reset(seed=3)
done = False
while not done:
    obs, reward, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    done = term or trunc
assert "agents" not in sys.modules
print("ok", reward)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")


#: Every field of State a player may read. A new field is private unless it is added
#: here, with the reason it reveals nothing a player may not know.
PUBLIC_FIELDS = {
    "rules",
    "mode",
    "auto_reset",  # the game's settings
    "stock_pos",
    "pile",
    "pile_size",
    "pile_mask",
    "took",
    "discarded",
    "passed",
    "taken",
    "knock_card",
    "phase",
    "current",
    "dealer",
    "turn",
    "knock_limit",  # the table as both players see it
    "scores",
    "hands_won",
    "hands_played",
    "dead_hands",
    "hand_no",
    "game_no",  # the score sheet
    # events of the last step; a finished hand's hands are laid out face up for both
    "hand_ended",
    "game_ended",
    "game_truncated",
    "hand_kind",
    "hand_points",
    "last_hands",
    "last_knocker",
    "hand_turns",
    "hand_knock_limit",
    "final_scores",
    "bonus_points",
    "winner",
}


def test_states_public_fields_are_the_pinned_ones():
    names = {f.name for f in dataclasses.fields(core.State)}
    public = {n for n in names if not n.startswith("_")}
    assert public == PUBLIC_FIELDS
    assert {n for n in names if n.startswith("_")} == {
        "_hands",
        "_deck",
        "_after_discard",
        "_big_gin_ok",
        "_deadwood",
        "_game_seed",
        "_game_key",
        "_legal",
        "_games",  # the records every other field but _legal is a view of: private as a whole
    }


def _assert_public_fields_unchanged_when_dealt_anew(viewer: str):
    """Deal anew what one seat (the mover or the other) cannot see: no public field may
    change, or that field tells the seat something about the cards it cannot see."""
    rng = np.random.default_rng(8)
    for mode in ("hand", "match"):
        state = core.init(128, "standard", seed=5, mode=mode)
        for steps in (0, 1, 2, 5, 13, 40):
            for _ in range(steps):
                mask = core.legal_action_mask(state)
                core.step(state, np.where(mask.any(1), (rng.random(mask.shape) * mask).argmax(1), 0))
            live = np.flatnonzero(~state.done)
            s = state.select(live)
            seat = s.current.astype(np.int64) if viewer == "mover" else 1 - s.current.astype(np.int64)
            other = resample_hidden(s, seat, rng)
            assert (other._hands != s._hands).any() or steps == 0 or not live.size
            for name in PUBLIC_FIELDS:
                a, b = getattr(s, name), getattr(other, name)
                if isinstance(a, np.ndarray):
                    assert (a == b).all(), (viewer, mode, steps, name)


def test_dealing_anew_what_the_mover_cannot_see_changes_no_public_field():
    _assert_public_fields_unchanged_when_dealt_anew("mover")


def test_dealing_anew_what_the_waiting_seat_cannot_see_changes_no_public_field():
    # The audit's leak: in the discard phase the legal discards plus the taken card were
    # the mover's 11 cards, readable by the seat waiting for its turn.
    _assert_public_fields_unchanged_when_dealt_anew("waiting")


# ------------------------------------------------------------- agents' rooms
AGENTS = ROOT / "agents"
#: Which rooms each room of ``agents`` may import (the ground floor: the factory
#: ``agents.registry``, ``base``, ``extras``, ``stats``; the evaluator; the three rooms).
#: No module imports the package's face ``agents`` (its ``__init__`` only hands names on).
#: The command shims (``serve``, ``export``, ``rllib``) only name the module they run.
TOP = {"agents.registry", "agents.bots", "agents.base", "agents.extras", "agents.stats", "agents.strict_json"}
ALLOWED = {
    "top": TOP | {"agents.training"},  # the factory loads policies (lazily)
    "agents.evaluate": TOP | {"agents.bridges"},  # --engine openspiel (lazily)
    "agents.training": TOP | {"agents.training", "agents.evaluate"},  # exploit measures with the evaluator
    "agents.play": TOP | {"agents.play"},
    "agents.bridges": TOP | {"agents.training", "agents.evaluate", "agents.bridges"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def agents_imports(path: Path) -> set:
    """The ``agents`` modules ``path`` imports, at the top or inside a function."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "agents"}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] == "agents":
            for a in node.names:  # `from agents.training import ppo` imports the module agents.training.ppo
                sub = f"{node.module}.{a.name}"
                is_module = (ROOT / Path(*sub.split("."))).with_suffix(".py").exists()
                out.add(sub if is_module else node.module)
    return out


def room(module: str) -> str:
    for r in ("agents.training", "agents.play", "agents.bridges", "agents.evaluate"):
        if module == r or module.startswith(r + "."):
            return r
    return "top"


def test_agents_is_in_rooms_with_few_modules_at_the_top():
    top = sorted(p.stem for p in AGENTS.glob("*.py"))
    assert top == [
        "__init__",
        "base",
        "evaluate",
        "export",
        "extras",
        "registry",
        "rllib",
        "serve",
        "stats",
        "strict_json",
    ]
    for sub in ("training", "play", "bridges"):
        doc = ast.get_docstring(ast.parse((AGENTS / sub / "__init__.py").read_text()))
        assert doc and "May import" in doc, sub


def test_each_room_of_agents_imports_only_what_its_rules_allow():
    checked = 0
    for path in sorted(AGENTS.rglob("*.py")):
        me = module_name(path)
        if me in ("agents.serve", "agents.export", "agents.rllib"):  # command shims
            assert agents_imports(path) == {"agents.extras"}, me
            continue
        allowed = ALLOWED[room(me)]
        for target in agents_imports(path):
            assert target in allowed or room(target) in allowed, f"{me} imports {target}"
            checked += 1
    assert checked > 30


def test_no_module_of_the_package_imports_the_script():
    """train.py uses the package; agents/ and ginenv/ never import it back (the
    exploitability tool and the league call ``agents.training.loop.train``)."""
    paths = [*AGENTS.rglob("*.py"), *GINENV]
    assert len(paths) > 40
    for path in paths:
        assert "train" not in imported_modules(path), f"{path} imports train.py"


def test_no_import_circle_among_the_modules_of_agents():
    graph = {module_name(p): agents_imports(p) for p in AGENTS.rglob("*.py")}

    def visit(node, path):
        if node in path:
            raise AssertionError("import circle: " + " -> ".join([*path, node]))
        for nxt in graph.get(node, ()):
            if nxt != node and not node.startswith(nxt + "."):  # a package's own __init__ is no circle
                visit(nxt, [*path, node])

    for start in graph:
        visit(start, [])
