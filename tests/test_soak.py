"""The server's soak, its 30-second version (``bench/soak_serve.py``): 16 clients play
whole games against the shipped bot on two workers while a worker is killed every 10
seconds. No 5xx, no game lost or changed (each read back and its moves compared with its
client's), and the kills really happened. Latency is printed, never asserted (tests do
not time; the 10-minute figures are in docs/play.md)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def test_the_30_second_soak_loses_nothing_and_answers_no_5xx(tmp_path):
    pytest.importorskip("uvicorn")
    if not Path("/proc/self/status").exists():
        pytest.skip("the soak reads the workers' memory and children from /proc (Linux)")
    out = tmp_path / "soak.json"
    cmd = [sys.executable, str(ROOT / "bench" / "soak_serve.py"), "--seconds", "30", "--clients", "16"]
    r = subprocess.run([*cmd, "--kill-every", "10", "--json", str(out)], capture_output=True, text=True, timeout=300)
    print(r.stdout)
    assert out.exists(), r.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["errors_5xx"] == 0 and figures["games_lost"] == 0 and figures["games_changed"] == 0
    assert len(figures["kills"]) >= 2 and len(figures["worker_memory"]) >= 4  # killed workers were replaced
    assert figures["games"] >= 16 and figures["games_finished"] >= 1 and figures["requests"] > 200
