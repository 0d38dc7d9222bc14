"""The trainer: a short training run that must learn, exact resume, configs, and
checkpoints that load anywhere (and fail clearly)."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

import train
from agents import make_agent
from agents.evaluate import main as evaluate_main
from agents.evaluate import play
from agents.policy import CheckpointError, load_policy
from ginenv import VectorEnv
from ginenv.rules import Rules

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def smoke_checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    config = train.make_config(config_file=ROOT / "configs" / "smoke.yaml",
                               sets=[f"log_dir={out / 'runs'}", f"checkpoint_dir={out / 'ck'}", "run_name=smoke"])
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
    for tag in ("losses/value_loss", "losses/policy_loss", "losses/entropy", "losses/approx_kl",
                "losses/clipfrac", "losses/explained_variance", "charts/decisions_per_second"):
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


def tiny_config(tmp_path, **extra):
    sets = {"num_envs": 16, "num_steps": 8, "total_decisions": 16 * 8 * 6, "num_minibatches": 2,
            "update_epochs": 2, "hidden_sizes": "[16, 16]", "snapshot_every": 1, "pool_size": 2,
            "opponent_self": 0.4, "opponent_snapshot": 0.3, "opponent_knock_early": 0.3,
            "opponent_gin_hunter": 0.0, "eval_every": 2, "eval_matches": 4, "eval_mode": "hand",
            "checkpoint_every": 100, "log_dir": str(tmp_path / "runs"), "checkpoint_dir": str(tmp_path / "ck"),
            "run_name": "tiny", **extra}
    return train.make_config(sets=[f"{k}={v}" for k, v in sets.items()])


@pytest.mark.parametrize("extra", [{}, {"architecture": "danger", "danger_learning_rate": 0.01}])
def test_a_resumed_run_matches_an_uninterrupted_one(tmp_path, extra):
    whole = train.Trainer(tiny_config(tmp_path / "a", **extra), quiet=True).train()
    first = train.Trainer(tiny_config(tmp_path / "b", **extra), quiet=True)
    half = first.train(stop_after=3)
    assert half.name == "step_0000000003"
    resumed = train.Trainer(tiny_config(tmp_path / "b"), resume_dir=half.parent, quiet=True).train()
    assert resumed.name == whole.name == "step_0000000006"
    a, b = load_file(str(whole / "policy.safetensors")), load_file(str(resumed / "policy.safetensors"))
    assert a.keys() == b.keys()
    for k in a:
        assert (a[k] == b[k]).all(), k
    ta, tb = load_file(str(whole / "trainer.safetensors")), load_file(str(resumed / "trainer.safetensors"))
    for k in ta:
        assert (ta[k] == tb[k]).all(), k


def test_a_time_limit_stops_at_a_resumable_checkpoint(tmp_path):
    stopped = train.Trainer(tiny_config(tmp_path), quiet=True).train(time_limit=0.0)
    assert stopped.name == "step_0000000001"  # the first update ends past a limit of 0 s
    assert (stopped.parent / "LATEST").read_text().strip() == stopped.name
    resumed = train.Trainer(tiny_config(tmp_path), resume_dir=stopped.parent, quiet=True).train()
    assert resumed.name == "step_0000000006"


def test_device_must_be_one_torch_has():
    with pytest.raises(ValueError, match="device must be cpu, cuda or cuda:<n>, got 'tpu'"):
        train.make_config(sets=["device=tpu"])
    with pytest.raises(ValueError, match="device must be cpu, cuda or cuda:<n>"):
        train.make_config(sets=["device=meta"])
    import torch
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="asks for a GPU but torch sees none"):
            train.make_config(sets=["device=cuda"])


def test_a_gpu_run_trains_and_its_checkpoint_loads_and_resumes_on_the_cpu(tmp_path):
    import torch
    if not torch.cuda.is_available():
        pytest.skip("no GPU here")
    trainer = train.Trainer(tiny_config(tmp_path, device="cuda", architecture="relational"), quiet=True)
    assert next(trainer.model.parameters()).is_cuda
    half = trainer.train(stop_after=3)
    again = train.Trainer(tiny_config(tmp_path, device="cuda", architecture="relational"),
                          resume_dir=half.parent, quiet=True)
    assert next(again.model.parameters()).is_cuda
    for name, value in load_file(str(half / "policy.safetensors")).items():
        assert torch.equal(again.model.state_dict()[name].cpu(), value), name
    on_cpu = train.Trainer(tiny_config(tmp_path), resume_dir=half.parent, quiet=True)  # device defaults to cpu
    assert not next(on_cpu.model.parameters()).is_cuda
    last = on_cpu.train()
    assert last.name == "step_0000000006"
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
    with pytest.raises(ValueError, match="bc_teacher must be empty or a baseline name .*patient"):
        train.make_config(sets=["bc_teacher=knock_late"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_envs: [1, 2\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        train.make_config(config_file=bad)
    bad.write_text("nums_envs: 4\n")
    with pytest.raises(ValueError, match="unknown config key 'nums_envs'"):
        train.make_config(config_file=bad)
    with pytest.raises(ValueError, match="not found"):
        train.make_config(config_file=tmp_path / "missing.yaml")


def test_cli_refuses_a_bad_config(capsys):
    with pytest.raises(SystemExit):
        train.main(["--set", "num_envs=0"])
    assert "num_envs must be at least 1" in capsys.readouterr().err


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
    (old / "policy.json").write_text(json.dumps(meta))
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
    from agents.export import main as export_main

    out = tmp_path / "policy.onnx"
    assert export_main([str(checkpoint), "--onnx", str(out)]) == 0
    policy = load_policy(checkpoint)
    env = VectorEnv(games, "standard", seed=11)
    obs, mask, _ = env.reset()
    session = ort.InferenceSession(str(out))
    for _ in range(steps):
        _, actions = session.run(None, {"observation": obs, "action_mask": mask})
        assert (actions == policy.act(obs, mask)).all()
        step = env.step(policy.act(obs, mask, deterministic=False))
        obs, mask = step.obs.copy(), step.action_mask
    return policy


def test_resume_keeps_the_runs_config_except_keys_given_again(tmp_path):
    first = train.Trainer(tiny_config(tmp_path), quiet=True)
    half = first.train(stop_after=2)
    longer = tiny_config(tmp_path, total_decisions=16 * 8 * 8, learning_rate=0.5, num_envs=99)
    t = train.Trainer(longer, resume_dir=half.parent, quiet=True, resume_overrides=("total_decisions",))
    assert t.num_updates == 8 and t.update == 2
    assert t.config.learning_rate == first.config.learning_rate and t.config.num_envs == 16
    assert t.train().name == "step_0000000008"
    assert t.run_dir == half.parent  # continued in place


def test_resume_writes_where_checkpoint_dir_says_when_given_again(tmp_path):
    half = train.Trainer(tiny_config(tmp_path), quiet=True).train(stop_after=2)
    elsewhere = tiny_config(tmp_path, checkpoint_dir=str(tmp_path / "elsewhere"))
    t = train.Trainer(elsewhere, resume_dir=half.parent, quiet=True, resume_overrides=("checkpoint_dir",))
    last = t.train(stop_after=1)
    assert last.parent == tmp_path / "elsewhere" / t.config.run_name
    assert sorted(p.name for p in half.parent.glob("step_*")) == [half.name]  # untouched


def reference_neighbours(obs):
    """Per-card loops: for each card and plane, cards of the same rank, and of the same
    suit one and two ranks away (``agents.network.neighbours``)."""
    from agents.network import NEIGHBOUR_PLANES
    planes = NEIGHBOUR_PLANES
    out = np.zeros((len(obs), 52, 3 * len(planes)))
    for g in range(len(obs)):
        for c in range(52):
            suit, rank = divmod(c, 13)
            for i, k in enumerate(planes):
                held = obs[g, k * 52:(k + 1) * 52] > 0.5
                out[g, c, 3 * i] = sum(held[s * 13 + rank] for s in range(4) if s != suit)
                out[g, c, 3 * i + 1] = sum(held[suit * 13 + r] for r in (rank - 1, rank + 1) if 0 <= r < 13)
                out[g, c, 3 * i + 2] = sum(held[suit * 13 + r] for r in (rank - 2, rank + 2) if 0 <= r < 13)
    return out


def test_neighbour_features_match_per_card_counts():
    import torch

    from agents.network import neighbours
    env = VectorEnv(40, "standard", seed=5)
    obs, mask, _ = env.reset()
    rng = np.random.default_rng(0)
    seen = [obs.copy()]
    for _ in range(25):
        step = env.step((rng.random(mask.shape) * mask).argmax(1))
        obs, mask = step.obs.copy(), step.action_mask
        seen.append(obs)
    real = np.concatenate(seen)[::7]
    noise = (rng.random((40, real.shape[1])) < rng.random((40, 1))).astype(np.float32)  # any 0/1 planes
    for batch in (real, noise):
        got = neighbours(torch.as_tensor(batch)).numpy()
        assert (got == reference_neighbours(batch)).all()


def test_relational_actor_trains_loads_and_exports(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    path = train.Trainer(tiny_config(tmp_path, architecture="relational"), quiet=True).train()
    policy = assert_onnx_matches_torch(ort, path, tmp_path, games=500, steps=3)
    assert policy.meta["network"]["architecture"] == "relational"


def _states_with_opponent_hands(games=64, steps=60, seed=11, agent="gin_hunter"):
    """Observations of the player to move in games the agent plays with itself, and the
    opponent's real hand at each."""
    env = VectorEnv(games, "standard", seed=seed)
    obs, mask, _ = env.reset()
    player = make_agent(agent)
    rows, xs, ys = np.arange(games), [], []
    for _ in range(steps):
        xs.append(obs.copy())
        ys.append(env.state._hands[rows, 1 - env.state.current.astype(np.int64)].astype(np.float32))
        step = env.step(player.act(obs, mask))
        obs, mask = step.obs, step.action_mask
    return np.concatenate(xs), np.concatenate(ys)


def test_belief_plane_is_the_net_on_unseen_cards_and_known_elsewhere():
    import torch

    from agents.network import ActorCritic
    torch.manual_seed(0)
    actor = ActorCritic((16, 16), "relu", True, "belief").actor
    obs, opp = _states_with_opponent_hands(games=8, steps=30)
    x = torch.as_tensor(obs)
    with torch.no_grad():
        p = actor.belief(x).numpy()
        z = actor.belief_net(x).numpy()
    for g in range(len(obs)):
        for c in range(52):
            if obs[g, 5 * 52 + c] > 0.5:
                assert p[g, c] == pytest.approx(1 / (1 + np.exp(-z[g, c])), rel=1e-5)
            else:  # seen: held by the opponent only if it took the card from the pile
                assert p[g, c] == float(obs[g, 3 * 52 + c] > 0.5)
                if p[g, c] == 1.0:
                    assert opp[g, c] == 1.0
    # the neighbour counts of the belief, against per-card sums
    from agents.network import _related_counts, _relations
    with torch.no_grad():
        got = _related_counts(torch.as_tensor(p)[:, None], _relations()).numpy()
    for g in range(0, len(obs), 17):
        for c in range(52):
            suit, rank = divmod(c, 13)
            want = [sum(p[g, s * 13 + rank] for s in range(4) if s != suit),
                    sum(p[g, suit * 13 + r] for r in (rank - 1, rank + 1) if 0 <= r < 13),
                    sum(p[g, suit * 13 + r] for r in (rank - 2, rank + 2) if 0 <= r < 13)]
            assert got[g, c] == pytest.approx(want, abs=1e-5)


def test_only_the_belief_loss_trains_the_belief_net():
    import torch

    from agents.network import ActorCritic, belief_loss
    model = ActorCritic((16, 16), "relu", True, "belief")
    obs, opp = _states_with_opponent_hands(games=8, steps=20)
    x, y = torch.as_tensor(obs), torch.as_tensor(opp)
    belief = {id(p) for p in model.actor.belief_net.parameters()}
    belief_loss(model.actor.belief_net(x), x, y).backward()
    for p in model.parameters():
        grown = p.grad is not None and bool(p.grad.abs().sum() > 0)
        assert grown == (id(p) in belief)
    model.zero_grad(set_to_none=True)
    model.actor(x).square().sum().backward()  # any loss on the policy's logits
    for p in model.actor.belief_net.parameters():
        assert p.grad is None or not p.grad.any()


@pytest.mark.parametrize("architecture", ["belief", "relational", "danger"])
def test_the_update_pass_gives_what_the_separate_calls_give(architecture):
    import torch

    from agents.network import ActorCritic
    torch.manual_seed(1)
    model = ActorCritic((16, 16), "relu", True, architecture)
    obs, opp = _states_with_opponent_hands(games=8, steps=20)
    x, y = torch.as_tensor(obs), torch.as_tensor(opp)
    mask = torch.ones(len(x), 108, dtype=torch.bool)
    mask[:, 100:] = False  # a mask that rules actions out (its legality does not matter here)
    action = torch.randint(0, 100, (len(x),), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        logprob, entropy, value, aux = model.evaluate_actions(x, mask, action, y)
        dist = model.action_dist(x, mask)
        assert torch.allclose(logprob, dist.log_prob(action)) and torch.allclose(entropy, dist.entropy())
        assert torch.allclose(value, model.get_value(x, y))
        assert set(aux) == {"relational": set(), "belief": {"belief"}, "danger": {"belief", "danger"}}[architecture]
        if "belief" in aux:
            assert torch.allclose(aux["belief"], model.actor.belief_net(x))


def test_the_belief_net_learns_more_than_the_base_rate():
    import torch

    from agents.network import ActorCritic, belief_loss
    torch.manual_seed(0)
    obs, opp = _states_with_opponent_hands(games=256, steps=120)
    x, y = torch.as_tensor(obs), torch.as_tensor(opp)
    cut = len(x) * 3 // 4
    unseen = x[:, 5 * 52:6 * 52] > 0.5
    rate = y[:cut][unseen[:cut]].mean()
    held_out = y[cut:][unseen[cut:]]
    base = torch.nn.functional.binary_cross_entropy(torch.full_like(held_out, float(rate)), held_out)
    model = ActorCritic((64, 64), "relu", True, "belief")
    opt = torch.optim.Adam(model.actor.belief_net.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(0)
    for _ in range(300):
        idx = torch.randint(0, cut, (512,), generator=gen)
        loss = belief_loss(model.actor.belief_net(x[idx]), x[idx], y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        learnt = belief_loss(model.actor.belief_net(x[cut:]), x[cut:], y[cut:])
    assert learnt < base - 0.01


@pytest.mark.parametrize("architecture", ["belief", "danger"])
def test_belief_actor_trains_logs_loads_and_exports(tmp_path, architecture):
    ort = pytest.importorskip("onnxruntime")
    path = train.Trainer(tiny_config(tmp_path, architecture=architecture, bc_teacher="knock_early",
                                     bc_decisions=256), quiet=True).train()
    policy = assert_onnx_matches_torch(ort, path, tmp_path, games=300, steps=3)
    assert policy.meta["network"]["architecture"] == architecture
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(str(tmp_path / "runs" / "tiny"))
    events.Reload()
    for name in ("belief", "danger") if architecture == "danger" else ("belief",):
        values = [e.value for e in events.Scalars(f"losses/{name}_cross_entropy")]
        assert len(values) == 6 and all(0 < v < 1 for v in values), name


def test_the_danger_net_learns_from_its_own_loss_only():
    import torch

    from agents.network import ActorCritic, belief_loss, danger_loss
    from ginenv import melds
    torch.manual_seed(0)
    model = ActorCritic((16, 16), "relu", True, "danger")
    obs, opp = _states_with_opponent_hands(games=8, steps=20)
    x, y = torch.as_tensor(obs), torch.as_tensor(opp)
    joins = torch.as_tensor(melds.joins_meld(opp > 0.5).astype(np.float32))
    nets = {k: {id(p) for p in getattr(model.actor, f"{k}_net").parameters()} for k in ("belief", "danger")}

    def trained_by(loss):
        model.zero_grad(set_to_none=True)
        loss.backward()
        return {id(p) for p in model.parameters() if p.grad is not None and bool(p.grad.abs().sum() > 0)}

    _, aux = model.actor.forward_with_aux(x)
    assert trained_by(danger_loss(aux["danger"], x, joins)) == nets["danger"]
    _, aux = model.actor.forward_with_aux(x)
    assert trained_by(belief_loss(aux["belief"], x, y)) == nets["belief"]
    grown = trained_by(model.actor(x).square().sum())  # any loss on the policy's logits
    assert grown and not grown & (nets["belief"] | nets["danger"])


def test_danger_loss_is_the_cross_entropy_over_the_held_cards():
    import torch

    from agents.network import danger_loss
    obs, _ = _states_with_opponent_hands(games=4, steps=6)
    rng = np.random.default_rng(3)
    logits, joins = rng.normal(size=(len(obs), 52)), rng.random((len(obs), 52)) < 0.3
    terms = []
    for g in range(len(obs)):
        for c in range(52):
            if obs[g, c] > 0.5:  # plane 0: the player's own hand
                q = 1 / (1 + np.exp(-logits[g, c]))
                terms.append(-np.log(q) if joins[g, c] else -np.log(1 - q))
    got = danger_loss(torch.as_tensor(logits), torch.as_tensor(obs), torch.as_tensor(joins, dtype=torch.float64))
    assert got.item() == pytest.approx(np.mean(terms), rel=1e-9)
    assert len(terms) >= 10 * len(obs)


def test_the_danger_feature_is_the_danger_nets_probability():
    import torch

    from agents.network import ActorCritic
    torch.manual_seed(2)
    model = ActorCritic((16, 16), "relu", True, "danger")
    obs, _ = _states_with_opponent_hands(games=8, steps=10)
    x = torch.as_tensor(obs)
    with torch.no_grad():
        before = model.actor(x)
        last = model.actor.plane_weights
        last.weight[-2:] = 0  # the head's weights on the danger feature (its last two rows)
        last.bias[-2:] = 0
        unchanged = model.actor(x)
        model.actor.danger_net.card[-1].bias += 3.0  # every card more dangerous
        assert torch.equal(model.actor(x), unchanged)  # at weight 0 it does not matter
        last.bias[-2:] = 1.0  # each card's two logits (discard, knock) now add its danger
        raised = model.actor(x)
        model.actor.danger_net.card[-1].bias -= 3.0
        lowered = model.actor(x)
    assert not torch.equal(before, unchanged)
    _, aux = model.actor.forward_with_aux(x)
    danger = torch.sigmoid(aux["danger"]).detach()
    plain = unchanged[:, :104]
    torch.testing.assert_close(lowered[:, :104] - plain, torch.cat([danger, danger], 1))
    assert (raised[:, :104] > lowered[:, :104]).all()


def test_feed_penalty_charges_the_discard_the_opponent_takes(tmp_path):
    from ginenv import actions as A
    from ginenv.observation import NUM_PLANES
    penalty, scale = 7.0, 0.01
    common = dict(opponent_self=1.0, opponent_snapshot=0.0, opponent_knock_early=0.0, num_envs=64, num_steps=48)
    plain = train.Trainer(tiny_config(tmp_path / "a", **common), quiet=True).rollout()
    fed = train.Trainer(tiny_config(tmp_path / "b", feed_penalty=penalty, **common), quiet=True).rollout()
    assert (plain["actions"] == fed["actions"]).all()  # the penalty changes rewards only
    assert plain["valid"].all()  # self-play: every decision is the learner's
    draw_phase = plain["obs"][:, :, NUM_PLANES * 52 + 2] > 0.5  # phase one-hot: offer, forced draw, draw, ...
    taken = (plain["actions"] == A.TAKE_DISCARD) & draw_phase
    want = np.zeros_like(plain["rewards"])
    want[:-1] = -penalty * scale * taken[1:]  # the decision before a take is the discard taken
    np.testing.assert_allclose(fed["rewards"] - plain["rewards"], want, atol=1e-6)
    assert taken.sum() > 10


def test_init_from_starts_from_a_checkpoints_weights_and_refuses_another_network(tmp_path):
    first = train.Trainer(tiny_config(tmp_path / "a"), quiet=True).train(stop_after=2)
    weights = load_file(str(first / "policy.safetensors"))
    second = train.Trainer(tiny_config(tmp_path / "b", init_from=str(first.parent)), quiet=True)
    assert second.update == 0
    for k, v in second.model.state_dict().items():
        assert (v == weights[k]).all(), k
    fresh = train.Trainer(tiny_config(tmp_path / "c"), quiet=True)
    assert any((v != weights[k]).any() for k, v in fresh.model.state_dict().items())
    with pytest.raises(ValueError, match=r"init_from .*hidden_sizes is \[16, 16\] there, \[8\] here"):
        train.Trainer(tiny_config(tmp_path / "d", init_from=str(first), hidden_sizes="[8]"), quiet=True)
    with pytest.raises(CheckpointError):
        train.Trainer(tiny_config(tmp_path / "e", init_from=str(tmp_path / "missing")), quiet=True)
    with pytest.raises(ValueError, match="feed_penalty"):
        tiny_config(tmp_path, feed_penalty=-1)


def reference_lookahead(own, opponent, top):
    """``lookahead_features`` one game at a time, by brute force over the discards."""
    from ginenv import melds

    def to_ten(hand):
        if hand.sum() == 11:  # the deadwood-minimising discard, lowest card id on ties
            options = [(melds.deadwood(hand & (np.arange(52) != c)), c) for c in np.flatnonzero(hand)]
            hand = hand & (np.arange(52) != min(options)[1])
        return hand

    def best_after_drawing(hand, card):
        if card < 0:
            return melds.deadwood(hand)
        drawn = hand.copy()
        drawn[card] = True
        return min(melds.deadwood(drawn & (np.arange(52) != c)) for c in np.flatnonzero(drawn))

    k = top.shape[1]
    out = np.zeros((len(top), 4 * k + 2), np.float32)
    for g in range(len(top)):
        hands = [to_ten(own[g]), to_ten(opponent[g])]
        for side, hand in enumerate(hands):
            out[g, 4 * k + side] = melds.deadwood(hand) / 100
            for j in range(k):
                best = best_after_drawing(hand, top[g, j])
                out[g, 2 * j + side] = best / 100
                out[g, 2 * k + 2 * j + side] = best == 0
    return out


def test_lookahead_features_match_a_brute_force_over_the_discards():
    from agents.network import lookahead_features
    from ginenv import core
    rng = np.random.default_rng(3)
    state = core.init(48, "standard", seed=4, mode="match")
    checked = 0
    for steps in (0, 1, 2, 7, 30, 31, 90):
        for _ in range(steps):
            mask = core.legal_action_mask(state)
            core.step(state, np.where(mask.any(1), (rng.random(mask.shape) * mask).argmax(1), 0))
        live = np.flatnonzero(~state.done)
        me = state.current[live].astype(np.int64)
        own, opp = state._hands[live, me], state._hands[live, 1 - me]
        for top in (state.stock_top(5)[live], state.stock_top(31)[live]):
            got = lookahead_features(own, opp, top)
            np.testing.assert_allclose(got, reference_lookahead(own, opp, top), atol=1e-6)
            checked += len(live)
        # Adversarial: near-gin hands, so that gin in reach (a feature of 1) happens.
        gin = np.zeros((6, 52), bool)
        gin[:, [0, 1, 2, 13, 14, 15, 26, 27, 28]] = True  # ace-2-3 in three suits: the fourth ace is gin
        gin[np.arange(6), [40, 41, 42, 43, 44, 45]] = True
        far = np.zeros((6, 52), bool)
        far[:, [3, 5, 7, 9, 11, 16, 20, 24, 30, 34]] = True
        near = np.array([[4, 39, 12, -1], [46, 39, 12, 4], [-1, -1, -1, -1], [4, 4, 4, 4], [29, 17, 18, 38],
                         [39, 40, 41, 42]])
        got = lookahead_features(gin, far, near)
        np.testing.assert_allclose(got, reference_lookahead(gin, far, near), atol=1e-6)
        assert got[:, 8:16].max() == 1
    assert checked > 300


def test_the_lookahead_critic_sees_the_cards_to_come(tmp_path):
    from agents.network import lookahead_features
    k = 3
    trainer = train.Trainer(tiny_config(tmp_path, critic_lookahead=k, opponent_self=0.5, opponent_snapshot=0.0,
                                        opponent_knock_early=0.5, num_envs=32, num_steps=40), quiet=True)
    states = []
    real_step = trainer.env.step

    def step(actions):  # the state each decision was taken in, copied before the step
        states.append(trainer.env.state.copy())
        return real_step(actions)

    trainer.env.step = step
    b = trainer.rollout()
    assert len(states) == 40 and b["valid"].any() and not b["valid"].all()
    for t, state in enumerate(states):
        rows = np.flatnonzero(b["valid"][t])
        me = state.current[rows].astype(np.int64)
        want = lookahead_features(state._hands[rows, me], state._hands[rows, 1 - me], state.stock_top(k)[rows])
        np.testing.assert_array_equal(b["lookahead"][t, rows], want)
        assert (b["lookahead"][t, ~b["valid"][t]] == 0).all()
    # The critic reads them, and cannot be called without them.
    obs, opp = trainer._tensor(b["obs"][0]), trainer._tensor(b["opp"][0])
    look = trainer._tensor(b["lookahead"][0])
    v = trainer.model.get_value(obs, opp, look)
    assert not torch.allclose(v, trainer.model.get_value(obs, opp, look.flip(0)))
    with pytest.raises(ValueError, match="lookahead features of the next 3 stock cards"):
        trainer.model.get_value(obs, opp)
    # It trains, and its checkpoint loads with the lookahead critic's shape.
    trainer.env.step = real_step
    path = trainer.train()
    policy = load_policy(path)
    assert policy.meta["network"]["critic_lookahead"] == k
    assert policy.model.critic[0].in_features == b["obs"].shape[2] + 52 + 4 * k + 2


def test_init_from_loads_the_actor_alone_when_only_the_critic_differs(tmp_path):
    first = train.Trainer(tiny_config(tmp_path / "a"), quiet=True).train(stop_after=2)
    weights = load_file(str(first / "policy.safetensors"))
    old = load_policy(first).model
    second = train.Trainer(tiny_config(tmp_path / "b", init_from=str(first), critic_lookahead=4), quiet=True)
    for name, v in second.model.actor.state_dict().items():
        assert (v == weights["actor." + name]).all(), name
    # The critic gains inputs: kept, the new inputs' weights 0, so the same values.
    w = second.model.critic[0].weight
    assert w.shape[1] == weights["critic.0.weight"].shape[1] + 18
    assert (w[:, :-18] == weights["critic.0.weight"]).all() and (w[:, -18:] == 0).all()
    b = second.rollout()
    obs, opp = second._tensor(b["obs"][0]), second._tensor(b["opp"][0])
    with torch.no_grad():
        torch.testing.assert_close(second.model.get_value(obs, opp, second._tensor(b["lookahead"][0])),
                                   old.get_value(obs, opp))
    # Without the opponent's hand the inputs are no prefix: a fresh critic.
    third = train.Trainer(tiny_config(tmp_path / "c", init_from=str(first), privileged_critic="false"), quiet=True)
    assert third.model.critic[0].weight.shape[1] == weights["critic.0.weight"].shape[1] - 52
    for name, v in third.model.actor.state_dict().items():
        assert (v == weights["actor." + name]).all(), name
    with pytest.raises(ValueError, match=r"actor does not match.*architecture is 'cards' there, 'belief' here.*a "
                       "belief actor may be loaded into a danger one"):
        train.Trainer(tiny_config(tmp_path / "d", init_from=str(first), critic_lookahead=4, architecture="belief"),
                      quiet=True)
    with pytest.raises(ValueError, match="critic_lookahead needs privileged_critic"):
        tiny_config(tmp_path, critic_lookahead=2, privileged_critic="false")
    with pytest.raises(ValueError, match="critic_lookahead must be between 0 and 31"):
        tiny_config(tmp_path, critic_lookahead=32)


def test_init_from_grows_a_belief_actor_into_a_danger_one(tmp_path):
    first = train.Trainer(tiny_config(tmp_path / "a", architecture="belief"), quiet=True).train(stop_after=2)
    weights = load_file(str(first / "policy.safetensors"))
    old = load_policy(first).model
    second = train.Trainer(tiny_config(tmp_path / "b", init_from=str(first), architecture="danger",
                                       danger_learning_rate=0.01), quiet=True)
    fresh_danger = train.Trainer(tiny_config(tmp_path / "c", architecture="danger"), quiet=True).model.actor.danger_net
    for name, v in second.model.state_dict().items():
        if name.startswith("actor.danger_net."):  # untrained, as a fresh run's (same seed)
            assert (v == fresh_danger.state_dict()[name[len("actor.danger_net."):]]).all(), name
        elif name.startswith("actor.plane_weights."):  # one more feature: two more rows, at 0
            assert (v[:-2] == weights[name]).all() and (v[-2:] == 0).all(), name
        else:
            assert (v == weights[name]).all(), name
    b = second.rollout()
    obs, mask = second._tensor(b["obs"][0]), second._tensor(b["mask"][0])
    with torch.no_grad():  # the same policy to start with
        torch.testing.assert_close(second.model.action_dist(obs, mask).probs, old.action_dist(obs, mask).probs)
    # the danger net's own learning rate stays; the rest anneals
    groups = second.optimizer.param_groups
    assert len(groups) == 2 and groups[1]["lr"] == 0.01
    assert {id(p) for p in groups[1]["params"]} == {id(p) for p in second.model.actor.danger_net.parameters()}
    path = second.train(stop_after=2)
    assert groups[0]["lr"] < second.config.learning_rate and groups[1]["lr"] == 0.01
    resumed = train.Trainer(tiny_config(tmp_path / "b"), resume_dir=path.parent, quiet=True)
    assert resumed.optimizer.param_groups[1]["lr"] == 0.01
    with pytest.raises(ValueError, match=r"actor does not match.*architecture is 'danger' there, 'belief' here"):
        train.Trainer(tiny_config(tmp_path / "d", init_from=str(path), architecture="belief"), quiet=True)
    with pytest.raises(ValueError, match="danger_learning_rate"):
        tiny_config(tmp_path, danger_learning_rate=-1)
