"""The test suite itself: a session leaves nothing behind in the temporary folder."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_a_test_session_leaves_no_folder_in_the_temporary_folder(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    test = "tests/test_agents.py::test_wilson_interval_known_values"
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", test],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed" in out.stdout
    assert not [p.name for p in tmp.iterdir() if p.name.startswith("ginenv-test-config-")]
