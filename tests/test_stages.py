"""A stages config: several runs from one command, each from the one before; resumed
exactly in the middle of any stage; one TensorBoard log; bad stages refused up front."""

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from safetensors.torch import load_file
from test_train import assert_same_files, trainer_meta

from agents.training.policy import load_policy
from agents.training.stages import run_stages

ROOT = Path(__file__).resolve().parent.parent
TINY = {
    "num_envs": 16,
    "num_steps": 8,
    "num_minibatches": 2,
    "update_epochs": 2,
    "hidden_sizes": [16, 16],
    "snapshot_every": 1,
    "pool_size": 2,
    "eval_every": 2,
    "eval_matches": 4,
    "eval_mode": "hand",
    "eval_opponents": ["knock_early"],
    "checkpoint_every": 100,
    "torch_threads": 1,
}
TWO = [
    {"name": "first", "total_decisions": 16 * 8 * 3, "opponents": {"self": 0.5, "knock_early": 0.5}},
    {"name": "second", "total_decisions": 16 * 8 * 3, "learning_rate": 0.0001, "opponents": {"self": 0.5, "marjj": 1}},
]


def stages_file(tmp_path, stages=TWO, run_name="two", **extra):
    data = TINY | {"run_name": run_name, "checkpoint_dir": str(tmp_path / "ck"), "log_dir": str(tmp_path / "runs")}
    path = tmp_path / f"{run_name}.yaml"
    tmp_path.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data | extra | {"stages": stages}))
    return path


def test_two_stages_run_one_after_another_the_second_from_the_firsts_weights(tmp_path):
    last = run_stages(stages_file(tmp_path), quiet=True)
    run = tmp_path / "ck" / "two"
    first, second = run / "stage1_first", run / "stage2_second"
    assert last.parent == second and last.name == "step_0000000003"
    c2 = trainer_meta(last)["config"]
    assert c2["init_from"] == str(first)
    assert c2["learning_rate"] == 0.0001 and c2["opponents"]["marjj"] == 1
    assert trainer_meta(first / "step_0000000003")["config"]["learning_rate"] == 0.0003  # the default, stage 1's
    # The run directory loads as its newest stage's checkpoint.
    a, b = load_policy(run).model.state_dict(), load_file(str(last / "policy.safetensors"))
    assert all((a[k] == b[k]).all() for k in b)
    # One TensorBoard log whose steps run on from stage to stage.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "runs" / "two"))
    events.Reload()
    assert [e.step for e in events.Scalars("losses/entropy")] == [128 * k for k in range(1, 7)]
    # bench/time_to_strength.py reads the run stage by stage, counting on across them.
    out = tmp_path / "curve.json"
    subprocess.run(
        [sys.executable, "bench/time_to_strength.py", str(run), "--opponent", "random", "--matches", "4"]
        + ["--json", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    rows = json.loads(out.read_text())["rows"]
    assert [(r["step"], r["decisions"]) for r in rows] == [
        ("stage1_first/step_0000000003", 384),
        ("stage2_second/step_0000000003", 768),
    ]
    assert 0 < rows[0]["minutes"] < rows[1]["minutes"]


def test_a_stages_run_resumed_in_the_middle_of_each_stage_equals_an_uninterrupted_one(tmp_path):
    whole = run_stages(stages_file(tmp_path / "a"), quiet=True)
    run = tmp_path / "b" / "ck" / "two"
    path = run_stages(stages_file(tmp_path / "b"), quiet=True, time_limit=0.0)  # one update, then stop
    assert path.parent.name == "stage1_first" and path.name == "step_0000000001"
    seen = []
    for _ in range(10):
        path = run_stages(resume=run, quiet=True, time_limit=0.0)
        seen.append((path.parent.name, path.name))
        if seen[-1] == ("stage2_second", "step_0000000003"):
            break
    assert ("stage1_first", "step_0000000003") in seen and ("stage2_second", "step_0000000001") in seen
    assert_same_files(whole, path)
    step3 = Path("stage1_first") / "step_0000000003"
    assert_same_files(whole.parent.parent / step3, run / step3)


def test_a_stage_can_distil_the_one_before_into_a_wider_network(tmp_path):
    wider = [
        TWO[0],
        {
            "name": "wide",
            "total_decisions": 16 * 8 * 2,
            "bc_teacher": "previous",
            "bc_decisions": 256,
            "hidden_sizes": [24, 24],
        },
    ]
    last = run_stages(stages_file(tmp_path, wider, run_name="wide"), quiet=True)
    c = trainer_meta(last)["config"]
    assert c["bc_teacher"] == str(tmp_path / "ck" / "wide" / "stage1_first") and c["init_from"] == ""
    assert load_policy(last).model.spec.hidden_sizes == (24, 24)


@pytest.mark.parametrize(
    "stages, message",
    [
        ([], "non-empty list"),
        (["x"], "stage 1 must be a mapping"),
        ([{"learning_rate": 0.1}], "stage 1 needs its length, total_decisions"),
        ([TWO[0], {"total_decisions": 384, "learning_rat": 0.1}], "stage 2: unknown config key 'learning_rat'"),
        ([TWO[0], {"total_decisions": 384, "gamma": 2.5}], "stage 2: bad config: gamma must be between 0 and 1"),
        ([{"total_decisions": 384, "init_from": "previous"}], "stage 1 has no stage before it"),
        ([{"total_decisions": 384, "run_name": "x"}], "stage 1 sets run_name, which the stages run owns"),
        ([{"total_decisions": 384, "name": "a b"}], "stage 1's name must be letters"),
    ],
)
def test_bad_stages_are_refused_before_anything_trains(tmp_path, stages, message):
    with pytest.raises(ValueError, match=message):
        run_stages(stages_file(tmp_path, stages), quiet=True)
    assert not (tmp_path / "ck").exists()


def test_a_stages_run_is_not_started_twice_over_itself(tmp_path):
    one = [dict(TWO[0], total_decisions=128)]
    run_stages(stages_file(tmp_path, one), quiet=True)
    with pytest.raises(ValueError, match="holds a stages run already: continue it with --resume"):
        run_stages(stages_file(tmp_path, one), quiet=True)


def test_the_command_runs_stages_and_ctrl_c_in_the_second_stage_resumes_to_the_same_bot(tmp_path):
    whole = run_stages(stages_file(tmp_path / "a"), quiet=True)
    config = stages_file(tmp_path / "b")
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "train.py"), "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("update 1/3") and any(x.startswith("stages: stage 2/2") for x in lines):
            break
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=300)
    out = "".join(lines) + rest
    run = tmp_path / "b" / "ck" / "two"
    assert proc.returncode == 0, err
    assert f"continue with --resume {run}" in out
    assert json.loads((run / "stages.json").read_text())["dirs"] == ["stage1_first", "stage2_second"]
    r = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "--resume", str(run)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    assert "stages: all 2 done" in r.stdout
    assert_same_files(whole, run / "stage2_second" / "step_0000000003")


def test_the_past_marjj_recipe_starts_from_nothing_and_imitates_no_heuristic():
    """``configs/past_marjj.yaml``: stage 1 from nothing, every later stage from the one
    before (its only teacher), the baselines opponents only, marjj in the mix."""
    from agents.training.stages import read_plan
    from ginenv.baselines import BASELINES

    plan = read_plan(ROOT / "configs" / "past_marjj.yaml")
    first = plan["base"] | plan["stages"][0]
    assert not first.get("init_from") and not first.get("bc_teacher")
    for stage in plan["stages"][1:]:
        assert stage.get("bc_teacher", "previous") == "previous" and "init_from" not in stage
        assert stage.get("bc_teacher") not in BASELINES
    assert any(stage["opponents"].get("marjj", 0) > 0 for stage in plan["stages"])
    assert sum(stage["total_decisions"] for stage in plan["stages"]) == 80_000_000
