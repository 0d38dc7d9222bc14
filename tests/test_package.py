"""The package as a user installs it: a wheel built from the repo, installed into a
fresh virtual environment (reusing the installed dependencies), run from another folder:
the shipped bot and the recipes inside it, the console commands, no top-level ``train``."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the venv's python, its bin folder, an empty folder outside the clone)."""
    tmp = tmp_path_factory.mktemp("package")
    build = [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp / "dist")]
    try:
        import setuptools

        if int(setuptools.__version__.split(".")[0]) >= 77:
            build.append("--no-build-isolation")  # the installed setuptools builds it
    except ImportError:
        pass
    subprocess.run(build, check=True, timeout=600, cwd=tmp)
    wheel = next((tmp / "dist").glob("ginenv-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(tmp / "venv")], check=True, timeout=300)
    bin_dir = tmp / "venv" / "bin"
    subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=600,
    )
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    return wheel, bin_dir, elsewhere


def run(cmd, cwd, stdin="", timeout=600):
    r = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, (cmd, r.stdout[-2000:], r.stderr[-2000:])
    return r.stdout


def test_the_wheel_carries_the_shipped_bot_and_the_recipes_and_no_top_level_train(installed):
    wheel, _, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("ginenv-")}
    assert tops == {"agents", "ginenv"}, tops  # no train.py beside them
    assert "agents/bots/anticamper_priced/LATEST" in names
    assert any(n.endswith("anticamper_priced/step_0000000488/policy.safetensors") for n in names)
    assert {"agents/configs/default.yaml", "agents/configs/past_marjj.yaml"} <= set(names)
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    for command in ("ginenv-train", "ginenv-evaluate", "ginenv-play", "ginenv-serve", "ginenv-export"):
        assert command in entry


def test_installed_it_plays_evaluates_loads_and_exports_the_shipped_bot_from_any_folder(installed):
    _, bin_dir, elsewhere = installed
    python = str(bin_dir / "python")
    where = run([python, "-c", "import agents; print(agents.__file__); print(agents.SHIPPED)"], elsewhere)
    assert all(str(bin_dir.parent) in line for line in where.split())  # the installed copy, not the clone
    out = run([str(bin_dir / "ginenv-evaluate"), "shipped", "knock_early", "--matches", "20"], elsewhere)
    assert "shipped vs knock_early: 20 matches" in out
    out = run([python, "-m", "agents.evaluate", "shipped", "marjj", "--matches", "10"], elsewhere)
    assert "win rate shipped" in out
    code = "from agents import load_policy; print(load_policy('shipped').model.spec.hidden_sizes)"
    assert run([python, "-c", code], elsewhere).strip() == "(256, 256)"
    out = run([str(bin_dir / "ginenv-play")], elsewhere, stdin="quit\n")
    assert "gin rummy against anticamper_priced" in out
    out = run([python, "-m", "agents.play"], elsewhere, stdin="quit\n")
    assert "your hand:" in out
    out = run([str(bin_dir / "ginenv-export"), "shipped", "--kaggle", "sub.tar.gz"], elsewhere)
    assert (elsewhere / "sub.tar.gz").is_file() and "wrote sub.tar.gz" in out
    assert "--onnx FILE | --kaggle OUT" in run([str(bin_dir / "ginenv-export"), "--help"], elsewhere)
    assert "--opponent" in run([str(bin_dir / "ginenv-serve"), "--help"], elsewhere)


def test_installed_it_trains_from_a_recipe_the_package_carries(installed):
    _, bin_dir, elsewhere = installed
    sets = ["--set", "total_decisions=16384", "--set", "eval_every=0", "--set", "run_name=tiny"]
    out = run([str(bin_dir / "ginenv-train"), "--config", "smoke", *sets], elsewhere)
    assert "done: checkpoints/tiny/step_0000000002" in out
    assert (elsewhere / "checkpoints" / "tiny" / "step_0000000002" / "policy.safetensors").is_file()


def test_the_first_run_says_once_that_the_engine_compiles(tmp_path):
    """With an empty numba cache the first command says, in one line, that the engine is
    compiling and that it is cached after; the same command again says nothing."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "GINENV_QUIET"} | {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "agents.evaluate", "knock_early", "gin_hunter", "--matches", "20"]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=ROOT)
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert first.returncode == again.returncode == 0, first.stderr
    said = [line for line in first.stderr.splitlines() if "compiling the game engine" in line]
    assert len(said) == 1 and "first run only" in said[0] and "cached after" in said[0]
    assert "compiling" not in again.stderr
