"""The README: every Python code block runs as written, and the size stays newcomer-sized."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_the_readme_has_its_python_examples_and_stays_under_15_kb():
    assert len(BLOCKS) >= 3
    assert len(README.encode()) <= 15 * 1024


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_readme_python_block_runs_as_written(index, tmp_path):
    imported = re.findall(r"^(?:from|import) (\w+)", BLOCKS[index], flags=re.M)
    if "RecordVideo" in BLOCKS[index]:
        imported.append("moviepy")  # the render extra writes the video
    absent = [m for m in imported if importlib.util.find_spec(m) is None]
    if absent:  # an extra the install left out (the sb3 block needs the sb3 extra)
        pytest.skip(f"README block {index} needs {', '.join(absent)}, not installed")
    # In a folder of its own beside the checkouts' files, so what a block writes (a video)
    # stays out of the tree; the paths the README names resolve as in a checkout.
    for name in ("checkpoints", "configs", "docs"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    code = BLOCKS[index]
    # A guard against a hang, not a timing: the SB3 block trains 20,000 steps, seconds
    # alone and once over five minutes on two cores shared with a training run.
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, f"README block {index} failed:\n{code}\n{out.stderr}"
    said = re.search(r"prints\s+`([^`]+)`:\s*\n+```python\n" + re.escape(code), README)
    if said:  # the text before the block says what it prints
        assert out.stdout.strip() == said.group(1), out.stdout


def test_the_readme_commands_name_files_that_exist():
    for path in re.findall(r"(?:--config |python )((?:configs|bench)/[\w./]+)", README):
        assert (ROOT / path).exists(), path
