"""Ray RLlib over the batched engine (agents.bridges.rllib): the env runners' vector env
against the engine it steps, the project's network inside RLlib's module, training from
the shipped bot into checkpoints that load everywhere, resuming, and a two-node cluster."""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

from agents import load_policy, make_agent  # noqa: E402
from agents.bridges import rllib as R  # noqa: E402
from agents.evaluate import play  # noqa: E402
from agents.training.checkpoint import CheckpointError, load_tensors, read_meta  # noqa: E402
from agents.training.config import OPPONENT_KINDS, make_config  # noqa: E402
from agents.training.network import MASKED_LOGIT, ActorCritic, NetworkSpec  # noqa: E402
from ginenv import core  # noqa: E402
from ginenv.actions import NUM_ACTIONS  # noqa: E402
from ginenv.observation import OBS_SIZE, SCALAR, SCALAR_SCALES, observe  # noqa: E402
from ginenv.rules import Rules  # noqa: E402

CHAMPION = R.DEFAULT_CONFIG.parent.parent / "checkpoints" / "champion"
MIX = "opponents={self: 0.3, snapshot: 0.2, knock_early: 0.2, gin_hunter: 0.2, random: 0.1}"


def config(tmp_path, *sets):
    base = [
        "num_envs=32",
        "num_steps=16",
        "total_decisions=1024",
        "eval_every=0",
        "torch_threads=1",
        "num_minibatches=4",
    ]
    base += [f"log_dir={tmp_path / 'runs'}", f"checkpoint_dir={tmp_path / 'ck'}", "run_name=r"]
    return make_config(config_file=R.DEFAULT_CONFIG, sets=base + list(sets))


def make_env(tmp_path, n=16, *sets):
    c = config(tmp_path, f"num_envs={n}", MIX, *sets)
    env = R.RLlibGinEnv({"config": dataclasses.asdict(c), "num_envs": n})
    env.attach_current(ActorCritic(c.network_spec()))
    env.add_snapshot(ActorCritic(c.network_spec()).state_dict())
    return env


def random_actions(rng, rows):
    mask = rows[:, R.MASK_AT : R.HAND_AT] > 0.5
    return np.array([rng.choice(np.flatnonzero(m)) for m in mask])


# ------------------------------------------------------------------------- the env
def test_each_row_is_the_learners_view_its_mask_and_the_opponents_hand(tmp_path):
    env = make_env(tmp_path)
    rows, _ = env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(300):
        s, seat = env.league.state, env.league.seat
        assert rows.shape == (16, OBS_SIZE + NUM_ACTIONS + 52) and rows.dtype == np.float32
        assert np.array_equal(rows[:, :OBS_SIZE], observe(s, seat))
        mask = core.legal_action_mask(s)
        assert np.array_equal(rows[:, R.MASK_AT : R.HAND_AT] > 0.5, mask)
        assert (s.current == seat).all() and mask.any(1).all()  # every game waits for the learner
        assert np.array_equal(rows[:, R.HAND_AT :], s.hands_of(1 - seat).astype(np.float32))
        rows, *_ = env.step(random_actions(rng, rows))


def test_the_shaping_adds_the_potentials_difference_along_each_episode(tmp_path):
    """With ``deadwood_shaping`` (gamma 1) each episode's rewards are the game's plus
    the potential's change from its first view to its end: 0 at a hand's end, the last
    view's where the episode was truncated (the critic bootstraps there). Written out
    with the potential, -coef x deadwood points x reward_scale, not with the code's."""
    envs = []
    for coef in (0.0, 2.0):
        c = config(tmp_path, "num_envs=8", "opponents={random: 1.0}", "gamma=1.0", f"deadwood_shaping={coef}")
        envs.append(R.RLlibGinEnv({"config": dataclasses.asdict(c), "num_envs": 8}))
    (plain, _), (shaped, _) = (e.reset(seed=3) for e in envs)
    assert c.reward_scale == 0.01
    points = lambda rows: rows[:, SCALAR["own_deadwood"]] * SCALAR_SCALES["own_deadwood"]  # noqa: E731
    first, sums, ended = -2.0 * 0.01 * points(shaped), np.zeros((2, 8)), 0
    rng, hold = np.random.default_rng(0), np.zeros(8, bool)
    for _ in range(400):
        acts = random_actions(rng, plain)
        (plain, r0, term, trunc, _), (shaped, r1, term1, trunc1, _) = (e.step(acts) for e in envs)
        assert np.array_equal(plain, shaped) and np.array_equal(term, term1) and np.array_equal(trunc, trunc1)
        sums += np.stack([r0, r1])
        for g in np.flatnonzero(term | trunc):
            last = 0.0 if term[g] else -2.0 * 0.01 * points(shaped)[g]
            assert sums[1, g] - sums[0, g] == pytest.approx(last - first[g], abs=1e-5)
            ended += 1
        new = hold  # the step after an end deals the next hand: its view starts the episode
        first[new], sums[:, new] = -2.0 * 0.01 * points(shaped)[new], 0.0
        assert (r0[new] == 0).all() and (r1[new] == 0).all()
        hold = term | trunc
    assert ended >= 20


def test_without_a_privileged_critic_or_belief_the_rows_hold_no_hidden_cards(tmp_path):
    env = make_env(tmp_path, 8, "privileged_critic=false", "architecture=cards")
    rows, _ = env.reset(seed=1)
    assert rows.shape[1] == OBS_SIZE + NUM_ACTIONS
    assert env.single_observation_space.shape == (OBS_SIZE + NUM_ACTIONS,)


def test_an_ended_episode_is_followed_by_one_held_step_next_step_autoreset(tmp_path):
    env = make_env(tmp_path)
    rows, _ = env.reset(seed=2)
    rng = np.random.default_rng(1)
    ended_seen = 0
    for _ in range(600):
        actions = random_actions(rng, rows)
        new, reward, term, trunc, _ = env.step(actions)
        held = env._hold.copy()
        assert not trunc.any()  # hands end; nothing is cut in hand mode
        assert np.array_equal(held, term)  # exactly the games that ended wait a step
        ended_seen += int(term.sum())
        if term.any():
            follow, r2, t2, _, _ = env.step(random_actions(rng, new))
            # the held games: the same row (the new deal's first view), no reward, not done
            assert np.array_equal(follow[held], new[held])
            assert (r2[held] == 0).all() and not t2[held].any()
            new, term = follow, t2
        rows = new
    assert ended_seen > 20


def test_rewards_add_up_to_each_hands_points_from_the_learners_side(tmp_path):
    """Each game's rewards, summed, equal the points of its finished hands from the
    learner's seat (the engine's final scores, times reward_scale), without the shaping
    (its own test is above)."""
    env = make_env(tmp_path, 8, "deadwood_shaping=0")
    rows, _ = env.reset(seed=9)
    rng = np.random.default_rng(3)
    got, want = np.zeros(8), np.zeros(8)
    hands = 0
    for _ in range(400):
        seat = env.league.seat.copy()
        rows, reward, term, _, _ = env.step(random_actions(rng, rows))
        got += reward
        for info in env.league.finished:
            i, own = info["game"], info["final_scores"]
            assert info["seat"] == seat[i] and term[i]
            want[i] += (own[seat[i]] - own[1 - seat[i]]) * env.c.reward_scale
            hands += 1
    assert hands > 20 and np.abs(got - want).max() < 1e-5


def test_opponents_are_drawn_by_the_mix_and_the_learner_takes_both_seats(tmp_path):
    env = make_env(tmp_path, 64)
    rows, _ = env.reset(seed=4)
    rng = np.random.default_rng(2)
    kinds, seats = [], []
    for _ in range(1000):
        rows, _, term, _, _ = env.step(random_actions(rng, rows))
        ended = np.flatnonzero(env._hold)
        kinds += env.league.opp.kind[ended].tolist()
        seats += env.league.seat[ended].tolist()
    counts = np.bincount(kinds, minlength=len(OPPONENT_KINDS)) / len(kinds)
    want = dict(self=0.3, snapshot=0.2, knock_early=0.2, gin_hunter=0.2, random=0.1)
    assert len(kinds) > 1000
    for name, share in want.items():
        assert abs(counts[OPPONENT_KINDS.index(name)] - share) < 0.05, (name, counts)
    assert 0.4 < np.mean(seats) < 0.6


def test_the_same_seed_gives_the_same_games_and_an_illegal_action_is_refused(tmp_path):
    a, b = make_env(tmp_path, 8), make_env(tmp_path, 8)
    b.attach_current(a.league.current)
    b.league.opp.pool = a.league.opp.pool
    ra, _ = a.reset(seed=7)
    rb, _ = b.reset(seed=7)
    torch.manual_seed(0)
    rng = np.random.default_rng(5)
    for _ in range(100):
        assert np.array_equal(ra, rb)
        act = random_actions(rng, ra)
        torch.manual_seed(1)
        ra, xa, *_ = a.step(act)
        torch.manual_seed(1)
        rb, xb, *_ = b.step(act)
        assert np.array_equal(xa, xb)
    bad = np.flatnonzero(ra[0, R.MASK_AT : R.HAND_AT] < 0.5)[0]
    act = random_actions(rng, ra)
    act[0] = bad
    with pytest.raises(ValueError, match=f"action {bad} is not legal; legal: "):
        a.step(act)


def test_the_self_opponent_needs_its_network(tmp_path):
    c = config(tmp_path, "num_envs=4", "opponents={self: 1.0}")
    env = R.RLlibGinEnv({"config": dataclasses.asdict(c), "num_envs": 4})
    with pytest.raises(RuntimeError, match="attach_current"):
        for seed in range(20):  # the opponent moves first in about half the games
            env.reset(seed=seed)


# ----------------------------------------------------------------------- the module
@pytest.mark.parametrize("architecture", ["cards", "belief", "mlp"])
def test_the_module_is_the_projects_network_masked_as_train_py(architecture, tmp_path):
    spec = NetworkSpec(hidden_sizes=(32, 32), architecture=architecture)
    module = R.GinRLModule(observation_space=None, action_space=None, model_config={"network": spec.to_dict()})
    torch.manual_seed(3)
    net = ActorCritic(spec)
    module.net.load_state_dict(net.state_dict())
    env = make_env(tmp_path, 8)
    rows, _ = env.reset(seed=3)
    x = torch.from_numpy(rows)
    obs, mask = x[:, :OBS_SIZE], x[:, R.MASK_AT : R.HAND_AT] > 0.5
    out = module.forward_inference({"obs": x})["action_dist_inputs"]
    with torch.no_grad():
        want = net.actor(obs).masked_fill(~mask, MASKED_LOGIT)
        assert torch.allclose(out, want)
        assert (out[~mask] == MASKED_LOGIT).all()
        v = module.compute_values({"obs": x})
        assert torch.allclose(v, net.get_value(obs, x[:, R.HAND_AT :]))
        train = module.forward_train({"obs": x})
    assert ("belief_logits" in train) == (architecture == "belief")


# ---------------------------------------------------------------------- training
@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _champion_sets():
    from agents.training.warmstart import init_sets

    return init_sets(CHAMPION)


def test_from_the_champion_two_updates_give_a_checkpoint_every_frontend_loads(local_ray, tmp_path):
    c = config(tmp_path, *_champion_sets(), MIX, "snapshot_every=1", "eval_every=2", "eval_matches=4")
    run = R.build(c, tmp_path / "ck" / "r", None, quiet=True)
    champion = load_policy(CHAMPION).model.state_dict()
    start = R.learner_weights(run.algo)
    assert all(torch.equal(start[k], champion[k]) for k in champion)  # --init-from: the bot's weights
    runner = R.on_env_runners(run.algo, lambda r: {k: v.clone() for k, v in r.module.net.state_dict().items()})[0]
    assert all(torch.equal(runner[k], champion[k]) for k in champion)  # the env runner plays the bot too
    run.algo.stop()
    last = R.train_rllib(c, quiet=True)
    meta = read_meta(last)
    assert meta["trainer"] == "rllib" and meta["update"] == 2 and meta["network"]["architecture"] == "belief"
    assert set(meta["evaluation"]) >= {"knock_early", "gin_hunter"}
    policy = load_policy(last)
    trained = policy.model.state_dict()
    assert any(not torch.equal(trained[k], champion[k]) for k in champion)  # it learnt
    assert json.loads((last / "trainer.json").read_text())["pool_size"] == 2
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logs = EventAccumulator(str(Path(c.log_dir) / c.run_name))
    logs.Reload()
    knock = [e.value for e in logs.Scalars("losses/entropy_knock")]  # train.py's knock bonus ran in RLlib's loss
    assert len(knock) == 2 and all(0 < v <= np.log(2) for v in knock), knock
    r = play(policy, make_agent("knock_early"), 20, Rules(), seed=1, mode="match")  # refuses illegal moves
    assert r["games"] == 20
    assert make_agent(str(last)).name.endswith(last.name)
    out = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", str(last.parent), "random", "--matches", "10"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "matches" in out.stdout
    onnx = pytest.importorskip("onnxruntime")
    from agents.training.export import export_onnx

    export_onnx(last, tmp_path / "p.onnx")
    sess = onnx.InferenceSession(str(tmp_path / "p.onnx"))
    env = make_env(tmp_path, 4)
    rows, _ = env.reset(seed=0)
    obs, mask = rows[:, :OBS_SIZE], rows[:, R.MASK_AT : R.HAND_AT].astype(np.int8)
    got = sess.run(["action"], {"observation": obs, "action_mask": mask})[0]
    assert np.array_equal(got, policy.act(obs, mask.astype(bool)))


def test_a_stopped_run_resumes_with_its_weights_optimizer_and_pool(local_ray, tmp_path):
    c = config(tmp_path, "hidden_sizes=[32, 32]", MIX, "snapshot_every=1", "total_decisions=1536")
    first = R.train_rllib(c, stop_after=2, quiet=True)
    assert read_meta(first)["update"] == 2
    saved = load_tensors(first / "trainer.safetensors")
    c2 = config(tmp_path, "hidden_sizes=[32, 32]")
    from agents.training.run import plan_run

    resumed, step_dir, run_dir = plan_run(c2, first.parent, (), (), trainer="rllib")
    assert resumed.opponents == c.opponents  # the run's own config
    run = R.build(resumed, run_dir, step_dir, quiet=True)
    tensors, _ = R.optimizer_state(run.algo)
    assert all(torch.equal(tensors[k], saved[k]) for k in tensors)
    assert R.on_env_runners(run.algo, lambda r: r.env.unwrapped.pool_size()) == [2]
    assert all(torch.equal(v, run.pool[1][k]) for k, v in R.learner_weights(run.algo).items())  # last snapshot
    run.algo.stop()
    last = R.train_rllib(c2, resume=first.parent, quiet=True)
    assert read_meta(last)["update"] == 3
    with pytest.raises(CheckpointError, match="python -m agents.rllib --resume"):
        import train

        train.train(c2, resume=first.parent, quiet=True)


def test_the_command_names_bad_arguments(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "agents.rllib", *args], capture_output=True, text=True)

    out = run("--num-env-runners", "-1")
    assert out.returncode == 2 and "--num-env-runners must be 0 to 10000" in out.stderr
    out = run("--init-from", str(tmp_path / "nothing"))
    assert out.returncode == 2 and "--init-from" in out.stderr and "no checkpoint" in out.stderr
    out = run("--set", "num_envs=0")
    assert out.returncode == 2 and "num_envs" in out.stderr
    out = run("--address", "127.0.0.1:1")
    assert out.returncode == 2 and "no Ray cluster to join there" in out.stderr
    for league in ("pfsp=1", "league_exploiter_every=4"):
        with pytest.raises(ValueError, match="pfsp, exploiter_every and league_exploiter_every are train.py's"):
            R.ppo_config(config(tmp_path, league))
    for key in ("players=3", "deadwood_aux_coef=1.0", "opponent_deadwood_shaping=1.0", "undercut_penalty=10"):
        with pytest.raises(ValueError, match="opponent_deadwood_shaping and undercut_penalty are train.py's"):
            R.ppo_config(config(tmp_path, key))


# ----------------------------------------------------------------- two Ray nodes
def test_env_runners_on_two_nodes_of_a_ray_cluster_train(tmp_path):
    """A real two-node Ray cluster on this machine (Ray's ``cluster_utils.Cluster``):
    each node offers one ``gin_runner`` slot, so the two env runners land one a node."""
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "resources": {"gin_runner": 1}, "include_dashboard": False},
    )
    worker = cluster.add_node(num_cpus=1, resources={"gin_runner": 1})
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
        nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
        assert len(nodes) == 2 and worker.node_id in nodes
        c = config(tmp_path, "hidden_sizes=[32, 32]", MIX, "snapshot_every=1")
        run = R.build(c, tmp_path / "ck" / "r", None, num_env_runners=2, runner_resources={"gin_runner": 1})
        R.attach_current(run.algo)
        where = R.on_env_runners(run.algo, lambda r: ray.get_runtime_context().get_node_id())
        assert sorted(where) == sorted(nodes)  # one env runner on each node
        sampled = 0
        for update in range(2):
            R.set_schedule(run.algo, c, update)
            result = run.algo.train()
            sampled += result["env_runners"]["num_env_steps_sampled"]
        assert sampled >= 2 * c.batch_size
        steps = R.on_env_runners(run.algo, lambda r: r.env.unwrapped.steps)
        assert len(steps) == 2 and min(steps) > 0  # both nodes sampled
        run.algo.stop()
    finally:
        ray.shutdown()
        cluster.shutdown()
