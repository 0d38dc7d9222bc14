"""The trainer: a short training run that must learn, exact resume, configs, and
checkpoints that load anywhere (and fail clearly)."""

import hashlib
import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

import train
from agents import make_agent
from agents.evaluate import main as evaluate_main
from agents.evaluate import play
from agents.training.checkpoint import CheckpointError, json_text
from agents.training.policy import load_policy
from agents.training.run import resumed_config
from ginenv import VectorEnv, core
from ginenv.rules import Rules

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def smoke_checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    config = train.make_config(
        config_file=ROOT / "configs" / "smoke.yaml",
        sets=[f"log_dir={out / 'runs'}", f"checkpoint_dir={out / 'ck'}", "run_name=smoke"],
    )
    return train.train(config, quiet=True), out


def test_smoke_training_beats_random_in_most_hands(smoke_checkpoint):
    path, _ = smoke_checkpoint
    r = play(load_policy(path), make_agent("random"), 600, Rules(), seed=123, mode="hand")
    assert r["hands_won_a"] / r["games"] >= 0.80, r  # an untrained or broken PPO wins ~0%


def test_tensorboard_logs_the_training(smoke_checkpoint):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _, out = smoke_checkpoint
    acc = EventAccumulator(str(out / "runs" / "smoke"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in (
        "losses/value_loss",
        "losses/policy_loss",
        "losses/entropy",
        "losses/approx_kl",
        "losses/clipfrac",
        "losses/explained_variance",
        "charts/decisions_per_second",
    ):
        assert tag in tags
    assert len(acc.Scalars("losses/value_loss")) > 10


def test_checkpoint_holds_config_spec_and_weights_without_pickle(smoke_checkpoint):
    path, _ = smoke_checkpoint
    meta = json.loads((path / "policy.json").read_text())
    assert meta["spec"]["obs_version"] == 1 and meta["spec"]["num_actions"] == 108
    assert meta["config"]["exp_name"] == "smoke" and meta["rules"]["gin_bonus"] == 25
    assert (path.parent / "LATEST").read_text().strip() == path.name
    assert not list(path.parent.rglob("*.pt")) and not list(path.parent.rglob("*.pkl"))
    assert load_file(str(path / "policy.safetensors"))


def test_policy_acts_on_one_observation_or_a_batch_and_never_illegally(smoke_checkpoint):
    policy = load_policy(smoke_checkpoint[0].parent)  # the run dir resolves through LATEST
    env = VectorEnv(64, "standard", seed=5)
    obs, mask, _ = env.reset()
    for _ in range(50):
        acts = policy.act(obs, mask)
        assert mask[np.arange(64), acts].all()
        single = policy.act(obs[3], mask[3])
        assert isinstance(single, int) and single == acts[3]
        sampled = policy.act(obs, mask, deterministic=False)
        assert mask[np.arange(64), sampled].all()
        out = env.step(acts)
        obs, mask = out.obs.copy(), out.action_mask


def test_evaluate_cli_takes_a_checkpoint(smoke_checkpoint, capsys):
    assert evaluate_main([str(smoke_checkpoint[0].parent), "random", "--hands", "50"]) == 0
    assert "hands won" in capsys.readouterr().out


def interrupt_train(sets, at: str, cwd=None, timeout: float = 300, close_stdout: bool = False) -> tuple:
    """Run ``train.py --set ...`` and send it SIGINT once a line starts with ``at``
    (``close_stdout``: closing its stdout first, as ``| tee`` ended by the same Ctrl-C
    does); its exit code, stdout and stderr."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "train.py"), *(a for s in sets for a in ("--set", s))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith(at):
            break
    if close_stdout:
        proc.stdout.close()
    proc.send_signal(signal.SIGINT)
    if close_stdout:
        rest, err = "", proc.stderr.read()
        proc.wait(timeout=timeout)
    else:
        rest, err = proc.communicate(timeout=timeout)
    return proc.returncode, "".join(lines) + rest, err


def tiny_config(tmp_path, **extra):
    sets = {
        "num_envs": 16,
        "num_steps": 8,
        "total_decisions": 16 * 8 * 6,
        "num_minibatches": 2,
        "update_epochs": 2,
        "hidden_sizes": "[16, 16]",
        "snapshot_every": 1,
        "pool_size": 2,
        "opponents": "{self: 0.4, snapshot: 0.3, knock_early: 0.3}",
        "eval_every": 2,
        "eval_matches": 4,
        "eval_mode": "hand",
        "checkpoint_every": 100,
        "log_dir": str(tmp_path / "runs"),
        "checkpoint_dir": str(tmp_path / "ck"),
        "run_name": "tiny",
        **extra,
    }
    return train.make_config(sets=[f"{k}={v}" for k, v in sets.items()])


def trainer_meta(step_dir):
    return json.loads((step_dir / "trainer.json").read_text())


def assert_same_files(a, b):
    for name in ("policy.safetensors", "trainer.safetensors"):
        ta, tb = load_file(str(a / name)), load_file(str(b / name))
        assert ta.keys() == tb.keys()
        for k in ta:
            assert (ta[k] == tb[k]).all(), (name, k)


# Every kind of opponent: the random baseline draws from its own generator, which a
# resume must restore too.
@pytest.mark.parametrize(
    "opponents",
    ["{self: 0.4, snapshot: 0.3, knock_early: 0.3}", "{random: 0.5, gin_hunter: 0.25, patient: 0.25}", "{random: 1.0}"],
)
def test_a_resumed_run_matches_an_uninterrupted_one(tmp_path, opponents):
    whole = train.train(tiny_config(tmp_path / "a", opponents=opponents), quiet=True)
    half = train.train(tiny_config(tmp_path / "b", opponents=opponents), quiet=True, stop_after=3)
    _resumed_equals(tmp_path, whole, half)


def test_a_resumed_pfsp_run_matches_an_uninterrupted_one(tmp_path):
    """PFSP's win rates and the returns of episodes in progress go into the checkpoint."""
    mix = "{self: 0.2, snapshot: 0.3, random: 0.25, gin_hunter: 0.25}"
    longer = {"num_steps": 16, "total_decisions": 16 * 16 * 6}  # hands end in every update
    whole = train.train(tiny_config(tmp_path / "a", opponents=mix, pfsp=2.0, **longer), quiet=True)
    half = train.train(tiny_config(tmp_path / "b", opponents=mix, pfsp=2.0, **longer), quiet=True, stop_after=3)
    _resumed_equals(tmp_path, whole, half)
    rates = load_file(str(whole / "trainer.safetensors"))["opponents.win_rate"].numpy()
    assert not np.allclose(rates, 0.5)  # the records moved


def test_a_training_state_from_before_camper_resumes_with_camper_in_the_mix(tmp_path):
    """A checkpoint written when the opponent kinds ended at the league's (its PFSP win
    rates one entry short) resumes into a mix that plays camper: the old kinds keep their
    places and camper's rate starts at 0.5."""
    from agents.training.checkpoint import json_text
    from agents.training.config import OPPONENT_KINDS

    old_kinds = ("self", "snapshot", "knock_early", "gin_hunter", "random", "patient", "frozen", "exploiter")
    assert OPPONENT_KINDS[: len(old_kinds)] == old_kinds
    mix = "{self: 0.3, camper: 0.7}"
    half = train.train(tiny_config(tmp_path, opponents=mix, pfsp=1.0), quiet=True, stop_after=3)
    tensors = load_file(str(half / "trainer.safetensors"))
    tensors["opponents.win_rate"] = tensors["opponents.win_rate"][: len(old_kinds)].clone()
    save_file(tensors, str(half / "trainer.safetensors"))
    meta = trainer_meta(half)
    meta.pop("json_sha256")
    meta["sha256"]["trainer.safetensors"] = hashlib.sha256((half / "trainer.safetensors").read_bytes()).hexdigest()
    (half / "trainer.json").write_text(json_text(meta))
    resumed = train.train(tiny_config(tmp_path), resume=half.parent, quiet=True)
    rates = load_file(str(resumed / "trainer.safetensors"))["opponents.win_rate"].numpy()
    assert len(rates) == len(OPPONENT_KINDS) and rates[OPPONENT_KINDS.index("camper")] != 0.5  # it played camper


def _resumed_equals(tmp_path, whole, half):
    assert half.name == "step_0000000003"
    resumed = train.train(tiny_config(tmp_path / "b"), resume=half.parent, quiet=True)
    assert resumed.name == whole.name == "step_0000000006"
    assert_same_files(whole, resumed)
    assert trainer_meta(whole)["baseline_rngs"] == trainer_meta(resumed)["baseline_rngs"]


def test_a_resumed_bfloat16_run_matches_an_uninterrupted_one(tmp_path):
    """``update_dtype=bfloat16`` keeps the run deterministic and its resume exact."""
    whole = train.train(tiny_config(tmp_path / "a", update_dtype="bfloat16"), quiet=True)
    half = train.train(tiny_config(tmp_path / "b", update_dtype="bfloat16"), quiet=True, stop_after=3)
    _resumed_equals(tmp_path, whole, half)
    fp32 = train.train(tiny_config(tmp_path / "c"), quiet=True)
    assert load_file(str(whole / "policy.safetensors"))["actor.trunk.0.weight"].dtype == torch.float32
    a, b = load_file(str(whole / "policy.safetensors")), load_file(str(fp32 / "policy.safetensors"))
    assert not all(torch.equal(a[k], b[k]) for k in a)  # it did run in bfloat16


def test_a_time_limit_stops_at_a_resumable_checkpoint(tmp_path):
    stopped = train.train(tiny_config(tmp_path), quiet=True, time_limit=0.0)
    assert stopped.name == "step_0000000001"  # the first update ends past a limit of 0 s
    assert (stopped.parent / "LATEST").read_text().strip() == stopped.name
    resumed = train.train(tiny_config(tmp_path), resume=stopped.parent, quiet=True)
    assert resumed.name == "step_0000000006"


def test_device_must_be_one_torch_has():
    with pytest.raises(ValueError, match="device must be cpu, cuda or cuda:<n>, got 'tpu'"):
        train.make_config(sets=["device=tpu"])
    with pytest.raises(ValueError, match="device must be cpu, cuda or cuda:<n>"):
        train.make_config(sets=["device=meta"])
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="asks for a GPU but torch sees none"):
            train.make_config(sets=["device=cuda"])


def test_a_gpu_run_trains_and_its_checkpoint_loads_and_resumes_on_the_cpu(tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("no GPU here")
    half = train.train(tiny_config(tmp_path, device="cuda", architecture="belief"), quiet=True, stop_after=3)
    assert trainer_meta(half)["config"]["device"] == "cuda"
    last = train.train(tiny_config(tmp_path), resume=half.parent, quiet=True)  # device defaults to cpu
    assert last.name == "step_0000000006" and trainer_meta(last)["config"]["device"] == "cpu"
    policy = load_policy(last)
    env = VectorEnv(64, "standard", seed=3)
    obs, mask, _ = env.reset()
    act = policy.act(obs, mask)
    assert mask[np.arange(64), act].all()


def test_config_errors_name_the_valid_keys(tmp_path):
    with pytest.raises(ValueError, match="unknown config key 'learning_rat'.*valid keys: exp_name"):
        train.make_config(sets=["learning_rat=0.1"])
    with pytest.raises(ValueError, match="learning_rate must be a float"):
        train.make_config(sets=["learning_rate=fast"])
    with pytest.raises(ValueError, match="key=value"):
        train.make_config(sets=["learning_rate"])
    with pytest.raises(ValueError, match="rules must be one of"):
        train.make_config(sets=["rules=vegas"])
    with pytest.raises(ValueError, match="bc_teacher must be empty, a baseline name .*patient.* or a checkpoint"):
        train.make_config(sets=["bc_teacher=knock_late"])
    with pytest.raises(ValueError, match="players must be 2 or 3"):
        train.make_config(sets=["players=4"])
    with pytest.raises(ValueError, match="players=3 needs mode=hand"):
        train.make_config(sets=["players=3", "mode=match"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_envs: [1, 2\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        train.make_config(config_file=bad)
    bad.write_text("nums_envs: 4\n")
    with pytest.raises(ValueError, match="unknown config key 'nums_envs'"):
        train.make_config(config_file=bad)
    with pytest.raises(ValueError, match="not found"):
        train.make_config(config_file=tmp_path / "missing.yaml")
    with pytest.raises(ValueError, match=r"opponents: unknown kind\(s\) nobody; valid: self, snapshot, knock_early"):
        train.make_config(sets=["opponents={nobody: 1}"])
    with pytest.raises(ValueError, match="the opponent mix is one mapping now"):
        train.make_config(sets=["opponent_random=1"])
    for bad, message in (
        ("gamma=2", "gamma must be between 0 and 1"),
        ("gae_lambda=-0.5", "gae_lambda must be"),
        ("learning_rate=.nan", "learning_rate must be a number > 0 and at most"),
        ("ent_coef=-1", "ent_coef must be a number from 0 to"),
        ("hidden_sizes=[64.5]", "hidden_sizes must be a non-empty list of positive integers"),
        ("run_name=../../escape", "run_name may hold only"),
        ("num_minibatches=40000", "num_minibatches must be at most the decisions of an update"),
    ):
        with pytest.raises(ValueError, match=message):
            train.make_config(sets=[bad])


def test_cli_refuses_a_bad_config(capsys):
    with pytest.raises(SystemExit):
        train.main(["--set", "num_envs=0"])
    assert "num_envs must be from 1 to" in capsys.readouterr().err


def test_broken_checkpoints_fail_clearly(smoke_checkpoint, tmp_path):
    import shutil

    src = smoke_checkpoint[0]
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        load_policy(tmp_path / "nowhere")
    corrupt = tmp_path / "corrupt"
    shutil.copytree(src, corrupt)
    (corrupt / "policy.safetensors").write_bytes(b"not a safetensors file at all")
    with pytest.raises(CheckpointError, match="corrupted"):
        load_policy(corrupt)
    old = tmp_path / "old"
    shutil.copytree(src, old)
    meta = json.loads((old / "policy.json").read_text())
    meta["spec"]["obs_version"] = 0
    (old / "policy.json").write_text(json_text(meta))  # as an older version would have written it
    with pytest.raises(CheckpointError, match="spec"):
        load_policy(old)
    (old / "policy.json").write_text("{ not json")
    with pytest.raises(CheckpointError, match="corrupted"):
        load_policy(old)
    missing = tmp_path / "missing"
    shutil.copytree(src, missing)
    (missing / "policy.safetensors").unlink()
    with pytest.raises(CheckpointError, match="no policy.safetensors"):
        load_policy(missing)


def test_onnx_export_picks_the_same_actions_as_torch(smoke_checkpoint, tmp_path):
    ort = pytest.importorskip("onnxruntime")
    assert_onnx_matches_torch(ort, smoke_checkpoint[0], tmp_path, games=1000, steps=4)


def assert_onnx_matches_torch(ort, checkpoint, tmp_path, games, steps):
    """Export ``checkpoint`` and check that ONNX Runtime picks the policy's greedy
    actions on ``games`` games for ``steps`` steps of sampled play."""
    from agents.training.export import main as export_main

    out = tmp_path / "policy.onnx"
    assert export_main([str(checkpoint), "--onnx", str(out)]) == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("policy.onnx")] == ["policy.onnx"]  # one file
    policy = load_policy(checkpoint)
    env = VectorEnv(games, "standard", seed=11)
    obs, mask, _ = env.reset()
    session = ort.InferenceSession(str(out))
    for _ in range(steps):
        _, actions = session.run(None, {"observation": obs, "action_mask": mask.astype(np.int8)})
        assert (actions == policy.act(obs, mask)).all()
        step = env.step(policy.act(obs, mask, deterministic=False))
        obs, mask = step.obs.copy(), step.action_mask
    return policy


def test_resume_keeps_the_runs_config_except_keys_given_again(tmp_path):
    half = train.train(tiny_config(tmp_path), quiet=True, stop_after=2)
    longer = tiny_config(tmp_path, total_decisions=16 * 8 * 8, learning_rate=0.5, num_envs=99)
    last = train.train(longer, resume=half.parent, quiet=True, resume_overrides=("total_decisions",))
    assert last.name == "step_0000000008" and last.parent == half.parent  # continued in place
    saved = trainer_meta(last)["config"]
    assert saved["total_decisions"] == 16 * 8 * 8
    assert saved["learning_rate"] == trainer_meta(half)["config"]["learning_rate"] and saved["num_envs"] == 16


def test_resume_writes_where_checkpoint_dir_says_when_given_again(tmp_path):
    half = train.train(tiny_config(tmp_path), quiet=True, stop_after=2)
    elsewhere = tiny_config(tmp_path, checkpoint_dir=str(tmp_path / "elsewhere"))
    last = train.train(elsewhere, resume=half.parent, quiet=True, resume_overrides=("checkpoint_dir",), stop_after=1)
    assert last.parent == tmp_path / "elsewhere" / "tiny"
    assert sorted(p.name for p in half.parent.glob("step_*")) == [half.name]  # untouched


def test_belief_actor_trains_logs_loads_and_exports(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    path = train.train(
        tiny_config(tmp_path, architecture="belief", bc_teacher="knock_early", bc_decisions=256), quiet=True
    )
    policy = assert_onnx_matches_torch(ort, path, tmp_path, games=300, steps=3)
    assert policy.meta["network"]["architecture"] == "belief"
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "runs" / "tiny"))
    events.Reload()
    values = [e.value for e in events.Scalars("losses/belief_cross_entropy")]
    assert len(values) == 6 and all(0 < v < 1 for v in values)
    assert len(events.Scalars("bc/loss")) >= 1


def test_a_checkpoint_teacher_is_distilled_into_a_network_of_another_size(tmp_path):
    """``bc_teacher`` as a checkpoint: the student (another width) learns the teacher's
    probabilities. On fresh games the teacher plays, the KL divergence from the teacher
    to the distilled student must fall well below a fresh student's, and the greedy
    moves mostly agree; a directory that is no checkpoint is a clear error."""
    teacher_dir = train.train(  # a peaked policy: knock_early's moves, imitated
        tiny_config(tmp_path / "t", bc_teacher="knock_early", bc_decisions=40_000, total_decisions=128), quiet=True
    )
    student_sets = dict(hidden_sizes="[32]", bc_teacher=str(teacher_dir.parent), total_decisions=128, eval_every=0)
    fresh = train.train(tiny_config(tmp_path / "f", **student_sets, bc_decisions=0), quiet=True, stop_after=0)
    student = train.train(tiny_config(tmp_path / "s", **student_sets, bc_decisions=60_000), quiet=True, stop_after=0)
    teacher, fresh, student = (load_policy(p) for p in (teacher_dir, fresh, student))
    assert student.meta["network"]["hidden_sizes"] == [32] != teacher.meta["network"]["hidden_sizes"]
    env = VectorEnv(256, "standard", seed=99)
    env.reset()
    obs, mask = env.observe(), core.legal_action_mask(env.state)
    observations, masks = [], []
    for _ in range(12):
        observations.append(obs.copy())
        masks.append(mask.copy())
        out = env.step(teacher.act(obs, mask, deterministic=False))
        obs, mask = out.obs, out.action_mask
    obs, mask = np.concatenate(observations), np.concatenate(masks)
    p = teacher.probabilities(obs, mask)

    def kl(q):
        legal = p > 0
        return float(np.mean(np.sum(np.where(legal, p * (np.log(np.where(legal, p, 1)) - np.log(q + 1e-12)), 0), 1)))

    kl_fresh, kl_student = kl(fresh.probabilities(obs, mask)), kl(student.probabilities(obs, mask))
    assert kl_student < 0.5 * kl_fresh, (kl_student, kl_fresh)
    assert np.mean(student.act(obs, mask) == teacher.act(obs, mask)) > 0.8
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="bc_teacher .*empty"):
        train.train(tiny_config(tmp_path / "e", bc_teacher=str(tmp_path / "empty"), bc_decisions=128), quiet=True)


def test_a_deadwood_head_is_saved_apart_from_the_policy_and_starts_fresh_from_a_checkpoint_without(tmp_path):
    """``deadwood_aux_coef``: the head is in the checkpoint (``deadwood_head`` in its
    spec) but not in the actor: the exported policy matches torch's; init_from a run
    without it loads that run's actor and critic and starts the head fresh."""
    ort = pytest.importorskip("onnxruntime")
    plain = train.train(tiny_config(tmp_path / "a", architecture="belief"), quiet=True, stop_after=2)
    head = train.train(
        tiny_config(tmp_path / "b", architecture="belief", deadwood_aux_coef=1.0, init_from=str(plain.parent)),
        quiet=True,
        stop_after=0,
    )
    old, new = load_file(str(plain / "policy.safetensors")), load_file(str(head / "policy.safetensors"))
    assert sorted(k for k in new if k not in old) == ["deadwood_head.bias", "deadwood_head.weight"]
    assert all((new[k] == old[k]).all() for k in old)
    assert json.loads((head / "policy.json").read_text())["network"]["deadwood_head"] is True
    trained = train.train(tiny_config(tmp_path / "c", architecture="belief", deadwood_aux_coef=1.0), quiet=True)
    assert load_policy(trained).model.deadwood_head is not None
    assert_onnx_matches_torch(ort, trained, tmp_path, games=100, steps=3)


def test_init_from_starts_from_a_checkpoints_weights_and_refuses_another_network(tmp_path):
    first = train.train(tiny_config(tmp_path / "a"), quiet=True, stop_after=2)
    weights = load_file(str(first / "policy.safetensors"))
    second = train.train(tiny_config(tmp_path / "b", init_from=str(first.parent)), quiet=True, stop_after=0)
    assert second.name == "step_0000000000"
    for k, v in load_file(str(second / "policy.safetensors")).items():
        assert (v == weights[k]).all(), k
    fresh = train.train(tiny_config(tmp_path / "c"), quiet=True, stop_after=0)
    assert any((v != weights[k]).any() for k, v in load_file(str(fresh / "policy.safetensors")).items())
    # Only the critic's inputs differ: the actor is loaded, the critic starts fresh.
    third = train.train(
        tiny_config(tmp_path / "d", init_from=str(first), privileged_critic="false"), quiet=True, stop_after=0
    )
    got = load_file(str(third / "policy.safetensors"))
    assert all((got[k] == weights[k]).all() for k in got if k.startswith("actor."))
    assert got["critic.0.weight"].shape[1] == weights["critic.0.weight"].shape[1] - 52
    with pytest.raises(ValueError, match=r"init_from .*hidden_sizes is \[16, 16\] there, \[8\] here"):
        train.train(tiny_config(tmp_path / "e", init_from=str(first), hidden_sizes="[8]"), quiet=True)
    with pytest.raises(CheckpointError):
        train.train(tiny_config(tmp_path / "f", init_from=str(tmp_path / "missing")), quiet=True)


def test_the_shipped_run_resumes_from_its_old_format_trainer_state(tmp_path):
    import shutil

    shipped = ROOT / "checkpoints" / "champion"
    copy = tmp_path / "champion"
    shutil.copytree(shipped, copy)
    step = copy / "step_0000001525"
    step_dir, config = resumed_config(copy, train.make_config(sets=[f"log_dir={tmp_path / 'runs'}"]))
    assert config.opponents == {"self": 0.1, "snapshot": 0.1, "knock_early": 0.45, "gin_hunter": 0.35}
    assert config.network_spec().architecture == "belief"
    files = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in copy.rglob("*") if p.is_file()}
    logs = f"log_dir={tmp_path / 'runs'}"
    assert train.train(train.make_config(sets=[logs]), resume=copy, quiet=True) == step  # 1525 updates of 1525
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in copy.rglob("*") if p.is_file()} == files
    # One update more: the old engine-state names (game_seed, ...) come back under the new ones.
    more = train.make_config(sets=[logs, f"total_decisions={1526 * 512 * 64}", "eval_every=0"])
    last = train.train(more, resume=copy, quiet=True, resume_overrides=("total_decisions", "eval_every"))
    assert last.name == "step_0000001526"
    meta = trainer_meta(last)
    assert meta["update"] == 1526 and meta["pool_size"] == 5 and meta["decisions"] == 49971200 + 512 * 64
    old = load_file(str(step / "trainer.safetensors"))
    assert (load_file(str(last / "trainer.safetensors"))["env._game_seed"] == old["env.game_seed"]).all()


def test_a_checkpoint_of_a_retired_variant_is_refused_by_name(tmp_path):
    from agents.training.config import from_saved

    with pytest.raises(ValueError, match="feed_penalty=5.0, a variant this version no longer has"):
        from_saved({"feed_penalty": 5.0})
    with pytest.raises(ValueError, match="'danger' actor"):
        from_saved({"architecture": "danger"})
    assert from_saved({"opponent_self": 1.0, "opponent_random": 0.0, "critic_lookahead": 0}) == {
        "opponents": {"self": 1.0},
        **{"knock_ent_coef": 0.0, "deadwood_shaping": 0.0, "architecture": "cards"},
    }


def test_a_run_saved_before_a_default_changed_resumes_with_its_own_recipe():
    """The shipped champion was saved before the knock bonus, the shaping and the belief
    default: read back, its config is what it trained with, not today's defaults."""
    from agents.training.checkpoint import read_training_meta
    from agents.training.config import Config, from_saved

    saved = read_training_meta(ROOT / "checkpoints" / "champion" / "step_0000001525", "train.py")["config"]
    assert "deadwood_shaping" not in saved and "knock_ent_coef" not in saved
    c = Config(**from_saved(saved))
    assert (c.deadwood_shaping, c.knock_ent_coef, c.architecture) == (0.0, 0.0, "belief")
    assert Config().deadwood_shaping == 2.0 and Config().knock_ent_coef == 0.5
    fresh = from_saved({"architecture": "belief", "deadwood_shaping": 2.0, "knock_ent_coef": 0.5})
    assert (fresh["deadwood_shaping"], fresh["knock_ent_coef"]) == (2.0, 0.5)


def test_ctrl_c_writes_a_checkpoint_and_says_how_to_resume(tmp_path):
    sets = [
        "num_envs=16",
        "num_steps=8",
        "num_minibatches=2",
        "hidden_sizes=[16]",
        "total_decisions=10000000",
        "eval_every=0",
        "checkpoint_every=100000",
        f"log_dir={tmp_path / 'runs'}",
        f"checkpoint_dir={tmp_path / 'ck'}",
        "run_name=stopped",
    ]
    code, out, err = interrupt_train(sets, "update 2/", cwd=tmp_path)  # after the first updates
    assert code == 0, out + err
    assert "SIGINT: stopping at the end of this update" in out
    assert f"continue with --resume {tmp_path / 'ck' / 'stopped'}" in out
    step = (tmp_path / "ck" / "stopped" / "LATEST").read_text().strip()
    assert json.loads((tmp_path / "ck" / "stopped" / step / "trainer.json").read_text())["update"] >= 2


def test_the_exploitability_tool_trains_a_best_response_and_reports_it(tmp_path, capsys):
    from agents.training.exploit import main as exploit_main

    report = tmp_path / "exploit.json"
    champion = str(ROOT / "checkpoints" / "champion")
    sets = [
        "num_envs=16",
        "num_steps=8",
        "num_minibatches=2",
        "hidden_sizes=[16]",
        "eval_every=1",
        "eval_matches=6",
        "checkpoint_every=1",
        "torch_threads=1",
        f"log_dir={tmp_path / 'runs'}",
        f"checkpoint_dir={tmp_path / 'ck'}",
    ]
    argv = [champion, "--decisions", "256", "--matches", "20", "--json", str(report)]
    assert exploit_main([*argv, *(a for s in sets for a in ("--set", s))]) == 0
    r = json.loads(report.read_text())
    assert r["target"] == champion and r["decisions"] == 256 and r["matches"] == 20
    assert r["won"] + r["lost"] + r["draws"] == 20 and abs(r["win_rate"] - (r["won"] + r["draws"] / 2) / 20) < 1e-9
    lo, hi = r["ci95"]
    assert 0 <= lo <= r["win_rate"] <= hi <= 1
    assert [c["decisions"] for c in r["learning_curve"]] == [128, 256]  # one evaluation a checkpoint
    logs = list((tmp_path / "runs").rglob("events.out.tfevents.*"))
    assert logs and any(b"eval/frozen_win_rate" in p.read_bytes() for p in logs)
    assert "exploiter of" in capsys.readouterr().out
    from agents.training.exploit import exploiter_config

    started = exploiter_config(champion, 256, init_from=champion, sets=sets)  # the bot's own network
    assert started.network_spec().architecture == "belief" and started.init_from == champion
    with pytest.raises(SystemExit):
        exploit_main([str(tmp_path / "missing"), "--decisions", "256"])
    assert "no checkpoint at" in capsys.readouterr().err


def test_the_config_defaults_are_the_default_recipe():
    """``make_config()`` (the dataclass defaults, what ``train.train`` and the tests start
    from) and ``configs/default.yaml`` (what ``python train.py`` reads) are one recipe."""
    import dataclasses

    a, b = train.make_config(), train.make_config(config_file=train.DEFAULT_CONFIG)
    differ = {k for k, v in dataclasses.asdict(a).items() if dataclasses.asdict(b)[k] != v}
    assert differ == {"exp_name"}, differ


@pytest.mark.parametrize("name", ["default", "scratch_long"])
def test_the_from_scratch_configs_learn_without_a_teacher(name):
    """``python train.py`` (and the long from-scratch recipe) learn from scratch: no
    imitation, no starting weights, no frozen bot (baselines sit among its opponents;
    their moves are never targets)."""
    c = train.make_config(config_file=ROOT / "configs" / f"{name}.yaml")
    assert c.bc_teacher == "" and c.bc_decisions == 0
    assert c.init_from == "" and c.frozen == [] and c.critic_warmup_updates == 0
    assert c.opponents.get("self", 0) > 0


def test_the_camper_recipe_imitates_no_heuristic_and_starts_from_the_from_scratch_bot():
    """``configs/camper.yaml`` trains on from ``checkpoints/scratch`` (itself made without a
    teacher) against a mix with camper: no imitation, the baselines only opponents."""
    c = train.make_config(config_file=ROOT / "configs" / "camper.yaml")
    assert c.bc_teacher == "" and c.bc_decisions == 0 and c.frozen == []
    assert c.init_from == "checkpoints/scratch" and (ROOT / c.init_from).is_dir()
    assert c.opponents.get("camper", 0) > 0 and c.opponents.get("self", 0) > 0


def test_the_smoke_recipe_ends_by_printing_its_win_rate_against_random(smoke_checkpoint):
    path, _ = smoke_checkpoint
    meta = json.loads((path / "policy.json").read_text())
    ev = meta["evaluation"]
    assert ev["update"] == meta["update"] and ev["random"]["win_rate"] >= 0.8  # the last line printed it
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "train.py"),
            "--config",
            str(ROOT / "configs" / "smoke.yaml"),
            "--set",
            f"checkpoint_dir={path.parent.parent / 'again'}",
            "--set",
            f"log_dir={path.parent.parent / 'again_runs'}",
            "--set",
            "total_decisions=16384",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    last_update = [line for line in r.stdout.splitlines() if line.startswith("update ")][-1]
    assert "vs random " in last_update, r.stdout[-500:]


def capped_share(log_dir: Path, after: float = 0.0) -> float:
    """The share of training hands cut by the turn cap after ``after`` of the run's
    decisions, from its TensorBoard log (``hands/share_truncated``, one a rollout)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    events = acc.Scalars("hands/share_truncated")
    late = [e.value for e in events if e.step >= after * events[-1].step]
    return float(np.mean(late))


def test_a_short_oklahoma_run_does_not_fall_into_the_stalling_loop(tmp_path):
    """The setup that fell fastest into the loop of taking the face-up card back and forth
    (docs/training.md: the belief actor with a knock bonus of 1.0 had 66% of its hands
    capped within 0.3M decisions) under oklahoma, for about a minute: with capped hands
    bootstrapped from the critic and the default's shaping, under 5% of its training
    hands reach the cap even with twice the default's knock bonus."""
    sets = [
        "rules=oklahoma",
        "knock_ent_coef=1.0",
        "num_envs=256",
        "total_decisions=400000",
        "eval_every=1000",
        "checkpoint_every=1000",
        f"log_dir={tmp_path / 'runs'}",
        f"checkpoint_dir={tmp_path / 'ck'}",
        "run_name=okla",
    ]
    train.train(train.make_config(config_file=train.DEFAULT_CONFIG, sets=sets), quiet=True)
    assert capped_share(tmp_path / "runs" / "okla", after=0.5) < 0.05
