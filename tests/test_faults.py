"""A full disk and a read-only disk under a training run and under the game server.

Each fault is made two ways: a writer patched to fail half-way through a file (ENOSPC,
EROFS: runs everywhere), and, where this process may mount one (root on Linux), a real
small tmpfs filled up or remounted read-only. The run must stop with one line naming the
folder and the cause, keep its last good checkpoint loadable and nothing half-written
beside it, and ``--resume`` must then continue exactly (the same files as a run never
interrupted). The server must refuse the move with a 503 and keep the game as stored.

Shown to fail against broken variants (the closing note of issue 53): without the
``OSError`` handling in ``save_checkpoint`` the run ends in a traceback and leaves a
``.tmp_step_*`` folder; without the ``fsync`` calls the ordering test below fails; a store
whose failed write left the moved game in the server's cache serves a state the store
never held (the server test's last assertion).
"""

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from safetensors import SafetensorError
from test_train import assert_same_files, tiny_config

import train
from agents.training import checkpoint as ck
from agents.training.policy import load_policy

ROOT = Path(__file__).parent.parent


def failing_writer(monkeypatch, fail_on_call: int, code: int):
    """Patch the safetensors writer: its ``fail_on_call``-th call writes half the file,
    then fails with ``code`` the way safetensors does (a ``SafetensorError`` quoting the
    OS error, not an ``OSError``: the real full disk below showed it), as a disk that
    fills up (or turns read-only) mid-write."""
    real = ck.save_file
    calls = []

    def save_file(tensors, path):
        calls.append(path)
        if len(calls) == fail_on_call:  # as safetensors' own writer reports it
            real(tensors, path)
            data = Path(path).read_bytes()
            Path(path).write_bytes(data[: len(data) // 2])
            raise SafetensorError(f"Error while serializing: I/O error: {os.strerror(code)} (os error {code})")
        return real(tensors, path)

    monkeypatch.setattr(ck, "save_file", save_file)


def steps_of(run_dir: Path) -> list:
    return sorted(p.name for p in run_dir.iterdir() if p.name != "LATEST")


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """The tiny run never interrupted: what every resumed run must equal."""
    return train.train(tiny_config(tmp_path_factory.mktemp("whole"), checkpoint_every=3), quiet=True)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_checkpoint_that_fails_half_way_keeps_the_last_good_one_and_resume_continues_exactly(
    tmp_path, monkeypatch, code, whole
):
    run_dir = tmp_path / "b" / "ck" / "tiny"
    # each checkpoint writes two tensor files: the 4th call is the second one's trainer state
    failing_writer(monkeypatch, 4, code)
    with pytest.raises(ck.CheckpointWriteError) as e:
        train.train(tiny_config(tmp_path / "b", checkpoint_every=3), quiet=True)
    message = str(e.value)
    assert "\n" not in message and str(run_dir) in message and os.strerror(code) in message
    assert errno.errorcode[code] in message and "step_0000000003" in message and "update 6" in message
    assert steps_of(run_dir) == ["step_0000000003"]  # nothing half-written left beside it
    assert (run_dir / "LATEST").read_text().strip() == "step_0000000003"
    load_policy(run_dir)  # the last good checkpoint loads
    monkeypatch.undo()
    resumed = train.train(tiny_config(tmp_path / "b", checkpoint_every=3), resume=run_dir, quiet=True)
    assert resumed.name == whole.name == "step_0000000006"
    assert_same_files(whole, resumed)


def test_a_write_that_fails_while_an_older_copy_of_the_step_is_moved_aside_puts_it_back(tmp_path, monkeypatch):
    """Writing a step number again (a checkpoint at the same update) moves the old one
    aside first; a failure then brings it back, whole."""
    model = train.train(tiny_config(tmp_path, total_decisions=16 * 8), quiet=True)
    run_dir = model.parent
    before = {p.name: p.read_bytes() for p in model.iterdir()}
    net = load_policy(run_dir).model
    real_replace = os.replace

    def replace(src, dst):
        if Path(src).name.startswith(".tmp_step_"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(ck.os, "replace", replace)
    with pytest.raises(ck.CheckpointWriteError, match="Read-only file system"):
        ck.save_checkpoint(run_dir, 1, net, {"network": {}})
    monkeypatch.undo()
    assert steps_of(run_dir) == ["step_0000000001"]
    assert {p.name: p.read_bytes() for p in model.iterdir()} == before


def test_every_file_is_flushed_to_the_disk_before_it_is_renamed_into_place(tmp_path, monkeypatch):
    """A power cut after a rename must not find an empty file under the new name: each
    file and the step's folder are fsynced before the step is renamed, the run's folder
    after, and LATEST before its rename."""
    synced, events = set(), []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        synced.add(os.path.realpath(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    def replace(src, dst):
        src = os.path.realpath(src)
        events.append(src)
        if Path(src).is_dir():
            for f in Path(src).iterdir():
                assert str(f) in synced, f"{f.name} renamed into place before it was flushed"
        assert src in synced, f"{Path(src).name} renamed before it was flushed"
        return real_replace(src, dst)

    monkeypatch.setattr(ck.os, "fsync", fsync)
    monkeypatch.setattr(ck.os, "replace", replace)
    last = train.train(tiny_config(tmp_path, total_decisions=16 * 8), quiet=True)
    monkeypatch.undo()
    assert len(events) == 2 and str(last.parent) in synced  # the step, then LATEST; the run's folder flushed


# ------------------------------------------------------------- a real small disk
@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB tmpfs of this test's own (root on Linux only; skipped elsewhere)."""
    where = tmp_path / "disk"
    where.mkdir()
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root on Linux")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(where)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` but ``leave`` bytes."""
    st = os.statvfs(disk)
    filler = disk / "filler"
    filler.write_bytes(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
    return filler


def train_cmd(tmp_path, disk, *extra):
    sets = [
        "num_envs=16",
        "num_steps=8",
        f"total_decisions={16 * 8 * 6}",
        "num_minibatches=2",
        "update_epochs=2",
        "hidden_sizes=[16, 16]",
        "opponents={self: 0.5, knock_early: 0.5}",
        "eval_every=100",
        "checkpoint_every=3",
        f"log_dir={tmp_path / 'runs'}",
        f"checkpoint_dir={disk}",
        "run_name=tiny",
    ]
    return [sys.executable, str(ROOT / "train.py"), *(x for s in sets for x in ("--set", s)), *extra]


def test_a_disk_that_fills_up_under_train_py_stops_it_with_one_line_and_resume_continues(tmp_path, small_disk):
    # the run never interrupted, in this process: the command's config is the default's with these keys
    sets = [a for a in train_cmd(tmp_path / "w", tmp_path / "whole")[2:] if a != "--set"]
    whole = train.train(train.make_config(config_file=train.DEFAULT_CONFIG, sets=sets), quiet=True)
    assert whole == tmp_path / "whole" / "tiny" / "step_0000000006"
    half = subprocess.run(
        [*train_cmd(tmp_path, small_disk), "--stop-after-minutes", "0"], capture_output=True, text=True, cwd=ROOT
    )
    assert half.returncode == 0, half.stderr[-2000:]
    run_dir = small_disk / "tiny"
    first = (run_dir / "LATEST").read_text().strip()
    filler = fill(small_disk, 64 * 1024)  # room for less than one checkpoint
    full = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "--resume", str(run_dir)], capture_output=True, text=True, cwd=ROOT
    )
    assert full.returncode == 1, (full.stdout[-1000:], full.stderr[-2000:])
    err = full.stderr.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in full.stderr, full.stderr[-2000:]
    assert str(run_dir) in err[0] and "No space left on device (ENOSPC)" in err[0] and first in err[0]
    assert steps_of(run_dir) == [first] and (run_dir / "LATEST").read_text().strip() == first
    load_policy(run_dir)
    filler.unlink()
    done = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "--resume", str(run_dir)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert_same_files(tmp_path / "whole" / "tiny" / "step_0000000006", run_dir / "step_0000000006")


def test_a_disk_turned_read_only_under_a_run_stops_it_with_one_line(tmp_path, small_disk):
    half = subprocess.run(
        [*train_cmd(tmp_path, small_disk), "--stop-after-minutes", "0"], capture_output=True, text=True, cwd=ROOT
    )
    assert half.returncode == 0, half.stderr[-2000:]
    run_dir = small_disk / "tiny"
    first = (run_dir / "LATEST").read_text().strip()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    r = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "--resume", str(run_dir)], capture_output=True, text=True, cwd=ROOT
    )
    err = r.stderr.strip().splitlines()
    # found before any training (the folder is probed first): argparse's usage, then one error line
    assert r.returncode == 2 and err[-1].startswith("train.py: error: ") and "Traceback" not in r.stderr
    assert str(run_dir) in err[-1] and "Read-only file system" in err[-1]
    assert steps_of(run_dir) == [first]
    load_policy(run_dir)


# ------------------------------------------------------------- the game server's store
def server_app(db):
    from agents import make_agent
    from agents.play.server import make_app
    from agents.play.store import GameStore

    return make_app(make_agent("knock_early"), allow_seed=True, creates_per_minute=1e6, store=GameStore(db))


def first_legal(state) -> int:
    return state["legal_actions"][0]["id"]


@pytest.mark.parametrize("cause", ["database or disk is full", "attempt to write a readonly database"])
def test_a_store_write_that_fails_refuses_the_move_with_503_and_keeps_the_game_as_stored(tmp_path, monkeypatch, cause):
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("starlette")
    import sqlite3

    from conftest import live_server

    from agents.play.store import GameStore

    with live_server(server_app(str(tmp_path / "games.sqlite3"))) as url, httpx.Client(base_url=url) as client:
        gid = client.post("/api/games", json={"seed": 5, "mode": "hand"}).json()["id"]
        before = client.get(f"/api/games/{gid}").json()

        def full(*args, **kwargs):
            raise sqlite3.OperationalError(cause)

        monkeypatch.setattr(GameStore, "save", full)
        monkeypatch.setattr(GameStore, "create", full)
        monkeypatch.setattr(GameStore, "expire", full)
        r = client.post(f"/api/games/{gid}/actions", json={"action": first_legal(before["state"])})
        assert r.status_code == 503 and cause in r.json()["error"], r.text
        assert "not applied" in r.json()["error"]
        assert client.get(f"/api/games/{gid}").json() == before  # as stored: the live game was not kept
        r = client.post("/api/games", json={"seed": 6})
        assert r.status_code == 503 and "no game was started" in r.json()["error"]
        monkeypatch.undo()
        r = client.post(f"/api/games/{gid}/actions", json={"action": first_legal(before["state"])})
        assert r.status_code == 200 and r.json()["state"] != before["state"]


def test_the_store_on_a_disk_that_fills_up_refuses_the_move_and_loses_nothing(small_disk):
    """A real full disk under SQLite (a read-only remount is refused while the database
    is open, so the read-only store is the patched test's)."""
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("starlette")
    from conftest import live_server

    with live_server(server_app(str(small_disk / "games.sqlite3"))) as url, httpx.Client(base_url=url) as client:
        gid = client.post("/api/games", json={"seed": 5, "mode": "match"}).json()["id"]
        state = client.get(f"/api/games/{gid}").json()["state"]
        for _ in range(3):
            state = client.post(f"/api/games/{gid}/actions", json={"action": first_legal(state)}).json()["state"]
        filler = fill(small_disk, 0)
        refused = 0
        for _ in range(200):
            if state["over"]:
                break
            stored = client.get(f"/api/games/{gid}").json()
            r = client.post(f"/api/games/{gid}/actions", json={"action": first_legal(state)})
            assert r.status_code in (200, 503), r.text
            if r.status_code == 503:
                refused += 1
                assert "cannot be written" in r.json()["error"]
                assert client.get(f"/api/games/{gid}").json() == stored
                break
            state = r.json()["state"]
        assert refused == 1
        filler.unlink()
        r = client.post(f"/api/games/{gid}/actions", json={"action": first_legal(stored["state"])})
        assert r.status_code == 200, r.text
