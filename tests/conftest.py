import sys
from pathlib import Path

# The brute-force references live beside the tests.
sys.path.insert(0, str(Path(__file__).parent))

import contextlib  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

# The game store's key file goes to a folder of the test session's own, not the user's
# (the servers the tests start inherit it).
CONFIG_HOME = tempfile.mkdtemp(prefix="ginenv-test-config-")
os.environ["XDG_CONFIG_HOME"] = CONFIG_HOME
os.environ.pop("GINENV_STORE_KEY", None)
# The first-compile line stays out of the outputs the tests read (tests/test_package.py
# checks it with a cold numba cache of its own).
os.environ["GINENV_QUIET"] = "1"


def pytest_sessionfinish(session, exitstatus):
    """The session's config folder goes with it (nothing left in the temporary folder)."""
    import shutil

    shutil.rmtree(CONFIG_HOME, ignore_errors=True)


#: The modules whose tests train, start servers, a browser, Ray or other processes: the
#: ``slow`` marker (``python -m pytest -m "not slow"`` runs the rest, the quick check).
SLOW_MODULES = {
    "test_train",
    "test_league",
    "test_rllib",
    "test_play",
    "test_store",
    "test_openspiel",
    "test_kaggle",
    "test_search",
    "test_hardening",
    "test_hardening_round2",
    "test_hardening_round3",
    "test_diagnostics",
    "test_readme",
    "test_docs",
    "test_network",
    "test_picture",
    "test_api_schema",
    "test_faults",
    "test_soak",
    "test_package",
    "test_stages",
    "test_marjj",
}


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        if item.module.__name__ in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


def serve_cmd(port, db, *extra) -> list:
    """``python -m agents.serve`` against knock_early on ``port`` with the store ``db``."""
    cmd = [sys.executable, "-m", "agents.serve", "--opponent", "knock_early", "--port", str(port), "--db", str(db)]
    return [*cmd, *extra]


def wait_up(proc, url: str) -> None:
    """Wait until the server of ``proc`` answers at ``url`` (its stderr if it died)."""
    import httpx

    for _ in range(300):
        try:
            httpx.get(url + "/", timeout=1)
            return
        except httpx.HTTPError:
            if proc.poll() is not None:
                err = proc.stderr.read()
                raise AssertionError(err.decode()[-2000:] if isinstance(err, bytes) else err[-2000:]) from None
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("the server did not start")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def live_server(app):
    """``app`` on a real uvicorn server on a free loopback port; yields its base URL."""
    import uvicorn

    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", proxy_headers=False))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(timeout=10)


# ---------------------------------------------------------------- what a person has seen
# (the play tests and the API's fuzzing hold every answer of the server to these)
def visible_cards(game) -> set:
    """Every card the person has seen this hand: its hand, the pile, what the bot took
    from it and still holds, what the bot threw or passed."""
    import numpy as np

    from ginenv.cards import format_card

    s, me, bot = game.state, game.seat, 1 - game.seat
    seen = s.hands_of(me)[0] | s.pile_mask[0] | s.took[0, bot] | s.discarded[0, bot] | s.passed[0, bot]
    seen |= s.discarded[0, me]
    return {format_card(c) for c in np.flatnonzero(seen)}


def seen_discards(game) -> set:
    """Every card discarded face up this hand (seen by both, even if taken back since)."""
    import numpy as np

    from ginenv.cards import format_card

    s = game.state
    return {format_card(c) for c in np.flatnonzero(s.discarded[0].any(0) | s.passed[0].any(0))}


def cards_in(data) -> set:
    """Every card named anywhere in a JSON-ready structure."""
    import json
    import re

    return set(re.findall(r'"([AT2-9JQK][shdc])"', json.dumps(data)))
