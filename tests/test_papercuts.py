"""A new user's second round of papercuts, one test each: bad values repeated in their
errors, the engine's seeding arguments checked, a State from read-only buffers usable."""

import pickle

import numpy as np
import pytest

import train
from ginenv import core


@pytest.mark.parametrize(
    "key, value",
    [
        ("rules", "pagatt"),
        ("mode", "matc"),
        ("eval_mode", "hnad"),
        ("activation", "relux"),
        ("architecture", "celsl"),
        ("update_dtype", "fp8"),
        ("device", "tpu"),
        ("exploiter_from", "nowhere"),
        ("bc_teacher", "no_such_teacher"),
        ("eval_opponents", "[no_such_bot]"),
        ("opponents", "{no_such_kind: 1}"),
        ("num_envs", "-3"),
        ("gamma", "1.5"),
        ("hidden_sizes", "[0]"),
    ],
)
def test_every_bad_set_value_is_repeated_in_its_error(key, value):
    with pytest.raises(ValueError) as e:
        train.make_config(sets=[f"{key}={value}"])
    shown = value.strip("[]{}").split(":")[0]
    assert key in str(e.value) and shown in str(e.value), str(e.value)


def test_game_keys_without_game_seeds_are_refused_not_ignored():
    with pytest.raises(ValueError, match="game_keys_ are the second keys of game_seeds_"):
        core.init(2, game_keys_=np.array([1, 2], np.uint64))
    with pytest.raises(ValueError, match="game_keys_ are the second keys"):
        core.init(2, game_keys_=0.5)
    seeds = np.array([5, 6], np.uint64)
    a = core.init(2, game_seeds_=seeds, game_keys_=np.array([1, 2], np.uint64))
    b = core.init(2, game_seeds_=seeds)
    assert (a._game_key == [1, 2]).all() and not (a._deck == b._deck).all()  # the keys deal other games
    with pytest.raises(ValueError, match="game_keys_ must hold 2 integers"):
        core.init(2, game_seeds_=seeds, game_keys_=np.array([0.5, 1.5]))


def test_a_state_unpickled_from_read_only_buffers_steps_like_the_original():
    """Protocol 5 with out-of-band buffers, read-only as Ray's object store hands them."""
    state = core.init(8, seed=3)
    buffers = []
    data = pickle.dumps(state, protocol=5, buffer_callback=buffers.append)
    frozen = [memoryview(bytes(b.raw())) for b in buffers]  # read-only copies
    assert frozen and all(m.readonly for m in frozen)
    other = pickle.loads(data, buffers=frozen)
    for _ in range(30):
        actions = core.legal_action_mask(state).argmax(1)
        core.step(state, actions)
        core.step(other, actions)
    assert (other._games == state._games).all()


@pytest.mark.slow
def test_ctrl_c_before_the_first_update_leaves_no_folders_and_a_resume_names_its_step(tmp_path):
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    sets = [f"checkpoint_dir={tmp_path / 'ck'}", f"log_dir={tmp_path / 'runs'}", "run_name=early"]
    sets += ["num_envs=16", "num_steps=8", "total_decisions=1280", "eval_every=0", "hidden_sizes=[16, 16]"]
    argv = [sys.executable, str(root / "train.py"), *(a for s in sets for a in ("--set", s))]
    early = 0
    for delay in (0.2, 0.8):
        proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
        if "before the first update: nothing written" in out:
            early += 1
            assert not (tmp_path / "ck" / "early").exists() and not (tmp_path / "runs" / "early").exists()
    assert early  # the start-up (imports, a few seconds) is longer than the delays
    stopped = subprocess.run([*argv, "--stop-after-minutes", "0"], cwd=tmp_path, capture_output=True, text=True)
    assert stopped.returncode == 0, stopped.stderr
    resumed = subprocess.run(
        [sys.executable, str(root / "train.py"), "--resume", str(tmp_path / "ck" / "early")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    step = tmp_path / "ck" / "early" / "step_0000000001"
    assert f"resuming from {step} (update 1 of 10, 128 decisions)" in resumed.stdout
