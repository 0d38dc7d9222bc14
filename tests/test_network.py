"""The network: the spec and its refusals, the card features against per-card loops,
the belief net's plane and its loss, old checkpoints still loading."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import make_agent
from agents.training.network import (
    NEIGHBOUR_PLANES,
    ActorCritic,
    NetworkSpec,
    belief_loss,
)
from agents.training.policy import CheckpointError, build_model, load_policy
from ginenv import VectorEnv
from ginenv.observation import plane

ROOT = Path(__file__).parent.parent


def reference_neighbours(obs):
    """Per-card loops: for each card and plane, cards of the same rank, and of the same
    suit one and two ranks away (the belief actor's neighbour features)."""
    planes = NEIGHBOUR_PLANES
    out = np.zeros((len(obs), 52, 3 * len(planes)))
    for g in range(len(obs)):
        for c in range(52):
            suit, rank = divmod(c, 13)
            for i, k in enumerate(planes):
                held = obs[g, k * 52 : (k + 1) * 52] > 0.5
                out[g, c, 3 * i] = sum(held[s * 13 + rank] for s in range(4) if s != suit)
                out[g, c, 3 * i + 1] = sum(held[suit * 13 + r] for r in (rank - 1, rank + 1) if 0 <= r < 13)
                out[g, c, 3 * i + 2] = sum(held[suit * 13 + r] for r in (rank - 2, rank + 2) if 0 <= r < 13)
    return out


def reference_card_logits(actor, obs):
    """The card actor's 108 logits by per-card loops over its documented form: card c's
    two logits are its features (its 9 planes, with ``belief`` its 21 neighbour counts
    and 4 belief features, then its one-hot rank and suit) times the (features x 2)
    weights the trunk's context gives, the other four from the context's own head."""
    x = torch.as_tensor(obs)
    with torch.no_grad():
        g = actor.trunk(x)
        w_planes = actor.plane_weights(g).numpy().reshape(len(obs), -1, 2)
        w_identity = actor.identity_weights(g).numpy().reshape(len(obs), -1, 2)
        others = actor.other_head(g).numpy()
        belief = actor.belief(x).numpy() if actor.belief_net is not None else None
    neigh = reference_neighbours(obs) if actor.belief_net is not None else None
    out = np.zeros((len(obs), 108))
    for i in range(len(obs)):
        for c in range(52):
            suit, rank = divmod(c, 13)
            feats = [obs[i, k * 52 + c] for k in range(9)]
            if neigh is not None:
                feats += list(neigh[i, c])
            if belief is not None:
                p = belief[i]
                feats += [
                    p[c],
                    sum(p[s * 13 + rank] for s in range(4) if s != suit),
                    sum(p[suit * 13 + r] for r in (rank - 1, rank + 1) if 0 <= r < 13),
                    sum(p[suit * 13 + r] for r in (rank - 2, rank + 2) if 0 <= r < 13),
                ]
            identity = np.zeros(17)
            identity[rank], identity[13 + suit] = 1, 1
            out[i, c], out[i, 52 + c] = np.array(feats) @ w_planes[i] + identity @ w_identity[i]
        out[i, 104:] = others[i]
    return out


@pytest.mark.parametrize("architecture", ["cards", "belief"])
def test_card_actor_logits_match_per_card_loops(architecture):
    torch.manual_seed(3)
    actor = ActorCritic(NetworkSpec((32, 16), architecture=architecture)).actor
    for layer in (actor.plane_weights, actor.identity_weights):  # weights of a trained size
        torch.nn.init.normal_(layer.weight, std=0.5)
    real, _ = _states_with_opponent_hands(games=6, steps=40)
    rng = np.random.default_rng(0)
    noise = (rng.random((12, real.shape[1])) < rng.random((12, 1))).astype(np.float32)  # any 0/1 planes
    obs = np.concatenate([real[::9], noise])
    with torch.no_grad():
        got = actor(torch.as_tensor(obs)).numpy()
    want = reference_card_logits(actor, obs)
    assert np.abs(want[:, :104]).max() > 1  # the card logits are not all near 0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _states_with_opponent_hands(games=64, steps=60, seed=11, agent="gin_hunter"):
    """Observations of the player to move in games the agent plays with itself, and the
    opponent's real hand at each."""
    env = VectorEnv(games, "standard", seed=seed)
    obs, mask, _ = env.reset()
    player = make_agent(agent)
    xs, ys = [], []
    for _ in range(steps):
        xs.append(obs.copy())
        ys.append(env.state.hands_of(1 - env.state.current.astype(np.int64)).astype(np.float32))
        step = env.step(player.act(obs, mask))
        obs, mask = step.obs, step.action_mask
    return np.concatenate(xs), np.concatenate(ys)


def test_belief_plane_is_the_net_on_unseen_cards_and_known_elsewhere():
    torch.manual_seed(0)
    actor = ActorCritic(NetworkSpec((16, 16), architecture="belief")).actor
    obs, opp = _states_with_opponent_hands(games=8, steps=30)
    x = torch.as_tensor(obs)
    with torch.no_grad():
        p = actor.belief(x).numpy()
        z = actor.belief_net(x).numpy()
    for g in range(len(obs)):
        for c in range(52):
            if plane(obs, "unseen")[g, c] > 0.5:
                assert p[g, c] == pytest.approx(1 / (1 + np.exp(-z[g, c])), rel=1e-5)
            else:  # seen: held by the opponent only if it took the card from the pile
                assert p[g, c] == float(plane(obs, "opponent_took")[g, c] > 0.5)
                if p[g, c] == 1.0:
                    assert opp[g, c] == 1.0


def test_only_the_belief_loss_trains_the_belief_net():
    model = ActorCritic(NetworkSpec((16, 16), architecture="belief"))
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


def test_the_belief_net_learns_more_than_the_base_rate():
    torch.manual_seed(0)
    obs, opp = _states_with_opponent_hands(games=256, steps=120)
    x, y = torch.as_tensor(obs), torch.as_tensor(opp)
    cut = len(x) * 3 // 4
    unseen = torch.as_tensor(plane(obs, "unseen")) > 0.5
    rate = y[:cut][unseen[:cut]].mean()
    held_out = y[cut:][unseen[cut:]]
    base = torch.nn.functional.binary_cross_entropy(torch.full_like(held_out, float(rate)), held_out)
    model = ActorCritic(NetworkSpec((64, 64), architecture="belief"))
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


@pytest.mark.parametrize("architecture", ["cards", "belief", "mlp"])
def test_the_update_pass_gives_what_the_separate_calls_give(architecture):
    torch.manual_seed(1)
    model = ActorCritic(NetworkSpec((16, 16), architecture=architecture))
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
        want = {"mlp": {"logits"}, "cards": {"logits", "context"}, "belief": {"logits", "context", "belief"}}
        assert set(aux) == want[architecture]
        assert torch.allclose(aux["logits"], model.actor(x))
        if "belief" in aux:
            assert torch.allclose(aux["belief"], model.actor.belief_net(x))


def test_the_spec_has_its_defaults_once_and_refuses_what_it_cannot_build():
    spec = NetworkSpec()
    assert NetworkSpec.from_dict(spec.to_dict()) == spec
    assert NetworkSpec.from_dict({}) == spec  # missing keys take the defaults
    assert NetworkSpec.from_dict({"hidden_sizes": [8], "critic_lookahead": 0}).hidden_sizes == (8,)
    for bad, message in (
        ({"hidden_sizes": [64.5]}, "hidden_sizes"),
        ({"hidden_sizes": []}, "hidden_sizes"),
        ({"activation": "swish"}, "activation must be one of relu, tanh, gelu"),
        ({"architecture": "danger"}, "architecture must be one of cards, belief, mlp"),
        ({"privileged_critic": "yes"}, "privileged_critic"),
        ({"width": 3}, "unknown network spec key"),
        ({"critic_lookahead": 4}, "lookahead critic"),
    ):
        with pytest.raises(ValueError, match=message):
            NetworkSpec.from_dict(bad)
    with pytest.raises(ValueError, match="must be a mapping"):
        NetworkSpec.from_dict([128, 128])
    with pytest.raises(CheckpointError, match="network spec"):
        build_model({"network": {"architecture": "relational"}})


def test_the_shipped_checkpoint_loads_with_its_spec_and_plays_legally():
    meta = json.loads((ROOT / "checkpoints" / "champion" / "step_0000001525" / "policy.json").read_text())
    policy = load_policy(ROOT / "checkpoints" / "champion")
    assert policy.model.spec == NetworkSpec.from_dict(meta["network"])
    assert policy.model.spec.architecture == "belief" and policy.model.spec.hidden_sizes == (128, 128)
    env = VectorEnv(32, "standard", seed=2)
    obs, mask, _ = env.reset()
    for _ in range(20):
        acts = policy.act(obs, mask)
        assert mask[np.arange(32), acts].all()
        step = env.step(acts)
        obs, mask = step.obs.copy(), step.action_mask


def test_knock_entropy_matches_a_row_by_row_reference():
    from agents.training.network import knock_entropy

    torch.manual_seed(3)
    logits = torch.randn(40, 108) * 3
    mask = torch.rand(40, 108) < 0.3
    mask[:, 0] = True  # a plain discard is always legal where a knock is
    mask[::3, 52:104] = False  # and some rows have no knock
    h, rows = knock_entropy(logits, mask)
    expected, expected_rows = [], []
    for i in range(40):
        legal = [a for a in range(108) if mask[i, a]]
        if not any(52 <= a < 104 for a in legal):
            continue
        z = sum(math.exp(logits[i, a].item()) for a in legal)
        p = sum(math.exp(logits[i, a].item()) for a in legal if 52 <= a < 104) / z
        expected.append(-(p * math.log(p) + (1 - p) * math.log(1 - p)))
        expected_rows.append(i)
    assert rows.nonzero().flatten().tolist() == expected_rows
    assert h.tolist() == pytest.approx(expected, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("activation", ["relu", "tanh", "gelu"])
@pytest.mark.parametrize("architecture", ["cards", "belief", "mlp"])
def test_the_numpy_actor_gives_the_torch_actors_logits(architecture, activation):
    """The torch actor is the reference; every weight drawn at random (the heads'
    small initial gains would hide a wrong term)."""
    from agents.training.numpy_actor import NumpyActor

    torch.manual_seed(5)
    model = ActorCritic(NetworkSpec((24, 16), activation=activation, architecture=architecture))
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.3)
    obs, _ = _states_with_opponent_hands(games=8, steps=30)
    tensors = {k: v.numpy() for k, v in model.state_dict().items()}
    got = NumpyActor(tensors, model.spec).logits(obs)
    with torch.no_grad():
        want = model.actor(torch.as_tensor(obs)).numpy()
    assert got.shape == want.shape == (len(obs), 108)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_the_numpy_policy_plays_the_shipped_bots_moves():
    from agents.training.checkpoint import load_tensors, resolve_checkpoint
    from agents.training.numpy_actor import NumpyActor, NumpyPolicy

    torch_policy = load_policy(ROOT / "checkpoints" / "champion")
    step = resolve_checkpoint(ROOT / "checkpoints" / "champion")
    tensors = {k: v.numpy() for k, v in load_tensors(step / "policy.safetensors").items()}
    np_policy = NumpyPolicy(NumpyActor(tensors, torch_policy.model.spec))
    env = VectorEnv(64, "standard", seed=21)
    obs, mask, _ = env.reset()
    checked = 0
    for _ in range(40):
        want = torch_policy.act(obs, mask)
        np.testing.assert_array_equal(np_policy.act(obs, mask), want)
        checked += len(obs)
        step_out = env.step(want)
        obs, mask = step_out.obs, step_out.action_mask
    assert checked == 64 * 40
    with pytest.raises(ValueError, match="greedily"):
        np_policy.act(obs[0], mask[0], deterministic=False)


READ_ONLY_INPUTS = """
import warnings
warnings.filterwarnings("error", message=".*not writable.*")  # torch's warning, as an error
from agents import SHIPPED
from agents.training.policy import load_policy
from ginenv import VectorEnv
obs, mask, _ = VectorEnv(8, "standard", seed=3).reset()
obs.flags.writeable = False
assert not mask.flags.writeable  # the env's own masks are read-only
policy = load_policy(SHIPPED)
acts, greedy = policy.act(obs, mask), policy.greedy(obs, mask)
assert (acts == greedy).all() and mask[range(8), acts].all()
assert policy.belief(obs).shape == (8, 52) and policy.probabilities(obs[0], mask[0]).shape == (108,)
print("no warning")
"""


def test_the_policy_reads_the_envs_read_only_arrays_without_a_torch_warning():
    """The envs hand out read-only masks; torch warns (once a process, so in a process of
    its own) when a tensor would share a read-only array's memory."""
    out = subprocess.run([sys.executable, "-c", READ_ONLY_INPUTS], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "no warning", out.stderr[-2000:]


def test_the_numpy_policy_gives_what_the_search_asks_as_the_torch_policy_does():
    """``probabilities``, ``greedy`` and ``belief`` (what ``SearchAgent`` calls) against the
    torch ``Policy``'s, on the shipped bot (a belief actor) and on champion (none)."""
    from agents import SHIPPED
    from agents.training.checkpoint import load_tensors, resolve_checkpoint
    from agents.training.numpy_actor import NumpyActor, NumpyPolicy

    env = VectorEnv(48, "standard", seed=5)
    obs, mask, _ = env.reset()
    for _ in range(12):
        out = env.step(load_policy(SHIPPED).act(obs, mask))
        obs, mask = out.obs, out.action_mask
    for name in (SHIPPED, ROOT / "checkpoints" / "champion"):
        torch_policy = load_policy(name)
        step = resolve_checkpoint(name)
        tensors = {k: v.numpy() for k, v in load_tensors(step / "policy.safetensors").items()}
        np_policy = NumpyPolicy(NumpyActor(tensors, torch_policy.model.spec))
        np.testing.assert_allclose(np_policy.probabilities(obs, mask), torch_policy.probabilities(obs, mask), atol=1e-4)
        np.testing.assert_allclose(
            np_policy.probabilities(obs[3], mask[3]), torch_policy.probabilities(obs[3], mask[3]), atol=1e-4
        )
        np.testing.assert_array_equal(np_policy.greedy(obs, mask), torch_policy.greedy(obs, mask))
        assert (np_policy.probabilities(obs, mask)[~mask] == 0).all()
        want = torch_policy.belief(obs)
        if want is None:
            assert np_policy.belief(obs) is None and not torch_policy.model.has_belief
        else:
            assert want.shape == (48, 52)
            np.testing.assert_allclose(np_policy.belief(obs), want, atol=1e-5)
