"""The PPO update's fast paths against their slow references: the masked distribution
against torch's ``Categorical``, the update with its critic on a second thread against
the one-thread update."""

import copy
from pathlib import Path

import numpy as np
import pytest
import reference
import torch
from torch.distributions import Categorical

from agents.training import ppo, rollout
from agents.training.config import make_config
from agents.training.network import ActorCritic, MaskedCategorical, masked_logits, masked_logsumexp
from agents.training.opponents import add_snapshot, make_opponents
from agents.training.policy import load_policy
from ginenv import VectorEnv, core
from ginenv.actions import TAKE_DISCARD
from ginenv.cards import NUM_CARDS
from ginenv.observation import SCALAR as OBS_SCALAR
from ginenv.rules import Rules

CPU = torch.device("cpu")


def _logits_and_mask(rows=400, seed=0):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, 108, generator=g) * 4
    logits[: rows // 4, 3] += 120.0  # rows where the legal logits lie far apart
    mask = torch.rand(rows, 108, generator=g) < 0.2
    mask[:, 3] = True  # at least one legal action a row
    mask[rows // 2 :, 10] = True
    return logits, mask


def test_masked_logsumexp_is_torchs_with_the_masked_entries_at_minus_infinity():
    x, mask = _logits_and_mask()
    x.requires_grad_()
    ours = masked_logsumexp(x, mask)
    ref = torch.logsumexp(x.masked_fill(~mask, float("-inf")), -1)
    assert torch.allclose(ours, ref, atol=1e-5, rtol=1e-6)
    (g_ours,) = torch.autograd.grad(ours.sum(), x)
    (g_ref,) = torch.autograd.grad(ref.sum(), x)
    assert torch.allclose(g_ours, g_ref, atol=1e-6)
    assert (g_ours[~mask] == 0).all()


def test_the_masked_distribution_is_torchs_categorical_on_the_masked_logits():
    x, mask = _logits_and_mask()
    x.requires_grad_()
    ours, ref = MaskedCategorical(x, mask), Categorical(logits=masked_logits(x, mask))
    action = torch.multinomial(mask.float(), 1, generator=torch.Generator().manual_seed(1)).squeeze(-1)
    assert torch.allclose(ours.probs, ref.probs, atol=1e-6)
    assert (ours.probs[~mask] == 0).all()  # exactly: an illegal action is never drawn
    assert torch.allclose(ours.log_prob(action), ref.log_prob(action), atol=1e-5)
    assert torch.allclose(ours.entropy(), ref.entropy(), atol=1e-5)
    (g_ours,) = torch.autograd.grad((ours.log_prob(action) + ours.entropy()).sum(), x)
    (g_ref,) = torch.autograd.grad((ref.log_prob(action) + ref.entropy()).sum(), x)
    assert torch.allclose(g_ours, g_ref, atol=1e-5)
    assert torch.allclose(ours.logits[mask], ref.logits[mask], atol=1e-5)  # every legal action's log-probability


def test_the_masked_distribution_draws_each_action_as_often_as_its_probability(monkeypatch):
    x, mask = _logits_and_mask(rows=6, seed=2)
    x = x / 4  # flatter rows: many actions drawn
    rows = 6
    draws = 40_000
    dist = MaskedCategorical(x.repeat_interleave(draws, 0), mask.repeat_interleave(draws, 0))
    torch.manual_seed(5)
    drawn = dist.sample().reshape(rows, draws)
    assert mask.gather(1, drawn).all()  # never an illegal action
    counts = torch.stack([torch.bincount(drawn[r], minlength=108) for r in range(rows)]).double()
    p = Categorical(logits=masked_logits(x, mask)).probs.double()
    sigma = (draws * p * (1 - p)).sqrt()
    assert ((counts - draws * p).abs() <= 5 * sigma + 1).all()
    # A uniform number that rounds up to the row's total still gives a legal action: the
    # one at which the cumulative probability reaches that total.
    monkeypatch.setattr(torch, "rand", lambda shape, **k: torch.full(shape, 1.0, **k))
    edge = MaskedCategorical(x, mask)
    drawn = edge.sample()
    assert mask.gather(1, drawn[:, None]).all() and (edge.probs.gather(1, drawn[:, None]) > 0).all()
    cdf = edge.probs.cumsum(1)
    for r in range(rows):
        assert cdf[r, drawn[r]] == cdf[r, -1] and (drawn[r] == 0 or cdf[r, drawn[r] - 1] < cdf[r, -1])


def _batch(config, seed=3):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    env = VectorEnv(config.num_envs, config.rules, seed=seed)
    model = ActorCritic(config.network_spec())
    buf, _ = rollout.collect(env, model, make_opponents(config, rng), rng, config.num_steps, CPU)
    adv, returns = rollout.advantages(buf, config.gamma, config.gae_lambda)
    return model, ppo.flatten(buf, adv, returns, CPU)


@pytest.mark.parametrize(
    "sets,critic_only",
    [
        (["architecture=cards"], False),
        (["architecture=belief"], False),
        (["architecture=mlp", "privileged_critic=false", "clip_vloss=false"], False),
        (["architecture=belief"], True),
    ],
)
def test_the_split_update_gives_the_one_thread_updates_weights_bit_for_bit(sets, critic_only):
    config = make_config(
        sets=["num_envs=32", "num_steps=48", "hidden_sizes=[32, 32]", "num_minibatches=4", "update_epochs=2", *sets]
    )
    model, batch = _batch(config)
    worker = ppo.SplitWorker(torch.get_num_threads())  # as the trainer: the same threads on each side
    try:
        results = []
        for split in (None, worker):
            net = copy.deepcopy(model)
            optimizer, groups = ppo.make_optimizer(net, config)
            stats = ppo.update(
                net, optimizer, groups, batch, config, 0.01, critic_only, np.random.default_rng(9), CPU, 0.5, split
            )
            results.append((net.state_dict(), stats, optimizer.state_dict()["state"]))
    finally:
        worker.close()
    (w0, s0, o0), (w1, s1, o1) = results
    assert all(torch.equal(w0[k], w1[k]) for k in w0)
    assert all(torch.equal(o0[i]["exp_avg_sq"], o1[i]["exp_avg_sq"]) for i in o0)
    assert s0 == pytest.approx(s1, nan_ok=True)
    assert not all(torch.equal(w0[k], model.state_dict()[k]) for k in w0)  # it did train
    if critic_only:  # the actor's policy loss stays out of a critic-only update
        assert all(torch.equal(w0[k], model.state_dict()[k]) for k in w0 if k.startswith("actor.trunk"))


@pytest.mark.parametrize("opp_coef", [0.0, 1.5])
def test_deadwood_shaping_is_the_potential_difference_along_each_seats_decisions(opp_coef):
    """A decision by decision reference: gamma x phi(the seat's next decision, or the
    bootstrap's view, or 0 at the hand's end) - phi(now), phi = -coef x deadwood
    (+ opp_coef x the opponent's deadwood, by brute force from its real hand)."""
    config = make_config({"num_envs": 16, "num_steps": 48, "opponents": {"self": 0.5, "knock_early": 0.5}})
    rng = np.random.default_rng(2)
    env = VectorEnv(config.num_envs, seed=5)
    model = ActorCritic(config.network_spec())
    buf, _ = rollout.collect(env, model, make_opponents(config, rng), rng, config.num_steps, CPU)
    shaped = copy.deepcopy(buf)
    rollout.shape_rewards(shaped, 0.9, 2.0, 0.01, opp_coef)
    col = OBS_SCALAR["own_deadwood"]

    def phi(deadwood, opp_hand):  # the scalar is deadwood / 100
        return -2.0 * 0.01 * 100.0 * deadwood + opp_coef * 0.01 * reference.deadwood(np.flatnonzero(opp_hand))

    ends = 0
    for t in range(config.num_steps):
        for n in range(config.num_envs):
            want = buf.rewards[t, n]
            if buf.valid[t, n]:
                if buf.dones[t, n]:
                    after = 0.0
                    ends += 1
                elif buf.next_t[t, n] >= 0:
                    after = phi(buf.obs[buf.next_t[t, n], n, col], buf.opp[buf.next_t[t, n], n])
                else:
                    after = phi(buf.boot_deadwood[t, n], buf.boot_opp[t, n])
                want = want + 0.9 * after - phi(buf.obs[t, n, col], buf.opp[t, n])
            assert shaped.rewards[t, n] == pytest.approx(want, abs=1e-5)
    boot = buf.valid & (buf.next_t < 0) & ~buf.dones
    assert ends > 0 and (buf.boot_deadwood[boot] > 0).any()
    # the opponent's whole hand where the bootstrap read (11 cards if it had drawn)
    assert np.isin(buf.boot_opp[boot].sum(-1), (10, 11)).all()
    unshaped = copy.deepcopy(buf)
    rollout.shape_rewards(unshaped, 0.9, 0.0, 0.01)
    assert np.array_equal(unshaped.rewards, buf.rewards)


def test_the_undercut_penalty_falls_on_the_knocks_whose_own_hand_score_is_negative():
    """A knock (a discard with a knock, one step: the hand is scored then) is undercut
    exactly where the knocker's reward for it is below 0 (a tie scores 0 under
    standard); the penalty is taken from those decisions only, the learner's alone. The
    shipped bot plays (it knocks; fresh weights seldom reach a knock)."""
    config = make_config({"num_envs": 64, "num_steps": 96, "opponents": {"self": 0.5, "camper": 0.5}})
    rng = np.random.default_rng(3)
    model = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "champion").model
    buf, _ = rollout.collect(VectorEnv(config.num_envs, seed=9), model, make_opponents(config, rng), rng, 96, CPU)
    knocks = buf.valid & (buf.actions >= NUM_CARDS) & (buf.actions < 2 * NUM_CARDS)
    want = np.zeros_like(buf.undercut)
    for t, n in zip(*np.nonzero(knocks)):
        want[t, n] = buf.dones[t, n] and buf.rewards[t, n] < 0
    assert want.sum() > 0 and (knocks & ~want & buf.dones).sum() > 0
    assert np.array_equal(buf.undercut, want)
    penalized = copy.deepcopy(buf)
    rollout.penalize_undercuts(penalized, 20.0, 0.01)
    assert np.allclose(penalized.rewards, buf.rewards - 0.2 * want)
    unchanged = copy.deepcopy(buf)
    rollout.penalize_undercuts(unchanged, 0.0, 0.01)
    assert np.array_equal(unchanged.rewards, buf.rewards)


def test_the_rollout_with_the_critic_on_the_workers_thread_is_the_same_rollout():
    """The split's worker computes the rollout's values meanwhile: every buffer the same,
    bit for bit, against a snapshot opponent and self-play alike."""
    config = make_config({"num_envs": 48, "num_steps": 40, "opponents": {"self": 0.5, "snapshot": 0.5}})

    def collected(split):
        torch.manual_seed(4)
        rng = np.random.default_rng(4)
        model = ActorCritic(config.network_spec())
        opp = make_opponents(config, rng)
        add_snapshot(opp, ActorCritic(config.network_spec()), config.pool_size, CPU)
        return rollout.collect(VectorEnv(config.num_envs, seed=4), model, opp, rng, config.num_steps, CPU, split)[0]

    worker = ppo.SplitWorker(1)
    try:
        alone, split = collected(None), collected(worker)
    finally:
        worker.close()
    for name in ("obs", "mask", "opp", "actions", "logprobs", "values", "rewards", "dones", "valid", "next_t", "boot"):
        assert np.array_equal(getattr(alone, name), getattr(split, name)), name
    assert alone.valid.sum() > 1000 and np.abs(alone.values[alone.valid]).sum() > 0


@pytest.mark.parametrize("architecture", ["cards", "belief"])
def test_the_bfloat16_update_follows_the_float32_one_to_bfloat16s_precision(architecture):
    """``update_dtype=bfloat16``: every pass (the actor's, and the critic's and the belief
    net's on the split's thread) runs its products in bfloat16, the weights and Adam's
    state stay float32, and each part's step is float32's to within bfloat16's rounding."""
    sets = ["num_envs=32", "num_steps=48", "hidden_sizes=[32, 32]", "num_minibatches=2", "update_epochs=1"]
    model, batch = _batch(make_config(sets=[*sets, f"architecture={architecture}"]))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    steps = {}
    worker = ppo.SplitWorker(1)
    try:
        for dtype in ("float32", "bfloat16"):
            config = make_config(sets=[*sets, f"architecture={architecture}", f"update_dtype={dtype}"])
            net = copy.deepcopy(model)
            optimizer, groups = ppo.make_optimizer(net, config)
            ppo.update(net, optimizer, groups, batch, config, 0.01, False, np.random.default_rng(9), CPU, 0.5, worker)
            assert all(p.dtype == torch.float32 for p in net.parameters())
            assert all(s["exp_avg"].dtype == torch.float32 for s in optimizer.state_dict()["state"].values())
            steps[dtype] = {k: v - before[k] for k, v in net.state_dict().items()}
    finally:
        worker.close()
    parts = ("actor.trunk", "critic") + (("actor.belief_net",) if architecture == "belief" else ())
    for part in parts:
        a = torch.cat([v.flatten() for k, v in steps["float32"].items() if k.startswith(part)])
        b = torch.cat([v.flatten() for k, v in steps["bfloat16"].items() if k.startswith(part)])
        assert not torch.equal(a, b), part  # the pass ran in bfloat16, on whichever thread
        assert torch.nn.functional.cosine_similarity(a, b, dim=0) > 0.98, part
        assert (a.norm() - b.norm()).abs() < 0.05 * a.norm(), part


def test_update_dtype_must_be_one_the_update_runs():
    with pytest.raises(ValueError, match="update_dtype must be float32 or bfloat16, got 'float16'"):
        make_config(sets=["update_dtype=float16"])


def test_a_hand_kept_alive_by_taking_the_face_up_card_back_and_forth_ends_at_the_cap_and_scores_nothing():
    """The stalling loop: both seats take the face-up card and throw another, every turn.
    The stock never runs down; the turn cap ends the hand as truncated, 0 points, as the
    rules' house choice says (play and evaluation unchanged)."""
    env = VectorEnv(8, seed=3)
    steps, ended = 0, np.zeros(8, bool)
    while not ended.all():
        mask = core.legal_action_mask(env.state)
        take = mask[:, TAKE_DISCARD]
        # after a take: throw the first legal discard (never the card just taken, the rules forbid it)
        throw = np.argmax(mask[:, :NUM_CARDS], axis=1)
        act = np.where(take, TAKE_DISCARD, np.where(mask[:, :NUM_CARDS].any(1), throw, np.argmax(mask, axis=1)))
        act = np.where(ended, core.SKIP, act)
        stock_before = env.state.stock_pos.copy()
        out = env.step(act)
        kept = ~out.hand_ended  # nobody drew from the stock
        assert (env.state.stock_pos[kept] == stock_before[kept]).all()
        assert not (out.terminated & ~ended).any()
        assert (out.rewards[out.truncated] == 0).all()
        ended |= out.truncated
        steps += 1
        assert steps < 10_000
    assert steps == 2 * env.rules.max_turns  # a take and a discard for each of the 100 draws
    assert (env.state.hand_kind == core.HAND_KIND_NAMES.index("truncated")).all()


class _Recorded(VectorEnv):
    """A vector env that keeps each step's mover and its ended and truncated flags (the
    reference's input)."""

    def step(self, actions):
        mover = self.state.current.copy()
        out = super().step(actions)
        self.log.append((mover, out.terminated | out.truncated, out.truncated.copy()))
        return out


def test_a_hand_cut_by_the_turn_cap_bootstraps_from_the_critic_and_one_ended_by_the_rules_does_not():
    """``close_episodes`` against a step-by-step reference: each seat's last decision of an
    episode cut by the cap is not done and bootstraps from its own value; of one ended by
    the rules it is done. A cap of 12 draws cuts many hands of a fresh policy."""
    config = make_config({"num_envs": 24, "num_steps": 64, "opponents": {"self": 0.5, "knock_early": 0.5}})
    rng = np.random.default_rng(6)
    env = _Recorded(config.num_envs, rules=Rules.preset("standard", max_turns=12), seed=6)
    env.log = []
    model = ActorCritic(config.network_spec())
    buf, _ = rollout.collect(env, model, make_opponents(config, rng), rng, config.num_steps, CPU)
    cut = ended = 0
    for n in range(config.num_envs):
        last = {}  # each seat's decision awaiting its successor
        for t in range(config.num_steps):
            mover, over, was_cut = (x[n] for x in env.log[t])
            if buf.valid[t, n]:
                if int(mover) in last:
                    assert buf.next_t[last[int(mover)], n] == t
                last[int(mover)] = t
            if over:
                for t0 in last.values():
                    assert buf.next_t[t0, n] == -1
                    if was_cut:
                        cut += 1
                        assert not buf.dones[t0, n]
                        assert buf.boot[t0, n] == buf.values[t0, n]
                        assert buf.boot_deadwood[t0, n] == buf.obs[t0, n, OBS_SCALAR["own_deadwood"]]
                    else:
                        ended += 1
                        assert buf.dones[t0, n]
                last = {}
    assert cut > 20 and ended > 5


def test_three_player_rewards_are_own_minus_the_mean_of_the_two_others_points():
    """``players=3`` against a reference from each seat's own points: at the table of
    three, the seat sitting the hand out scores 0, so a seat's reward is own - (opponent's
    + 0) / 2, times the scale. Every ended hand of 300 games of knock_early against
    gin_hunter (wins, losses, undercuts, gins, dead hands); 2 leaves them as they are."""
    from types import SimpleNamespace

    from ginenv.baselines import BASELINES
    from ginenv.observation import observe

    s = core.init(300, Rules(), mode="hand", game_seeds_=np.arange(300, dtype=np.uint64))
    agents = BASELINES["knock_early"](), BASELINES["gin_hunter"]()
    seen, lost = 0, 0
    while not s.done.all():
        mover, live = s.current.astype(np.int64), np.flatnonzero(~s.done)
        obs, mask = observe(s, mover)[live], core.legal_action_mask(s)[live]
        actions = np.full(len(mover), core.SKIP, np.int64)
        actions[live] = np.where(mover[live] == 0, agents[0].act(obs, mask), agents[1].act(obs, mask))
        core.step(s, actions)
        ended = np.flatnonzero(s.hand_ended)
        if not ended.size:
            continue
        points = (s.hand_points + s.bonus_points).astype(np.float64)[ended]
        want = (points - 0.5 * points[:, ::-1]) * 0.01
        got = SimpleNamespace(rewards=core.rewards(s, 0.01)[ended].astype(np.float32))
        same = copy.deepcopy(got)
        rollout.table_rewards(got, 3)
        rollout.table_rewards(same, 2)
        assert np.allclose(got.rewards, want, atol=1e-6)
        assert np.array_equal(same.rewards, core.rewards(s, 0.01)[ended].astype(np.float32))
        seen, lost = seen + len(ended), lost + int((want < 0).sum())
    assert seen == 300 and lost > 100


def test_the_deadwood_head_learns_the_opponents_deadwood_from_the_trunk():
    """``deadwood_aux_coef``: the batch's target is the opponent's deadwood / 100 (the
    brute-force reference on each real hand), and PPO updates with the auxiliary loss
    bring the head's squared error below half the best constant guess's."""
    config = make_config(
        {"num_envs": 32, "num_steps": 32, "hidden_sizes": [32, 32], "architecture": "belief"}
        | {"opponents": {"self": 0.5, "knock_early": 0.5}, "deadwood_aux_coef": 2.0, "num_minibatches": 4}
    )
    assert config.network_spec().deadwood_head
    torch.manual_seed(3)
    rng = np.random.default_rng(3)
    model = ActorCritic(config.network_spec())
    buf, _ = rollout.collect(VectorEnv(config.num_envs, seed=3), model, make_opponents(config, rng), rng, 32, CPU)
    adv, returns = rollout.advantages(buf, config.gamma, config.gae_lambda)
    batch = ppo.flatten(buf, adv, returns, CPU, opponent_deadwood=True)
    assert "b_opp_deadwood" not in ppo.flatten(buf, adv, returns, CPU)
    hands = batch["b_opp"].numpy() > 0.5
    for k in range(0, len(hands), 97):
        assert batch["b_opp_deadwood"][k].item() * 100 == pytest.approx(reference.deadwood(np.flatnonzero(hands[k])))

    def mse():
        with torch.no_grad():
            _, aux = model.actor_with_aux(batch["b_obs"])
            return float(((model.opponent_deadwood(aux["context"]) - batch["b_opp_deadwood"]) ** 2).mean())

    before = mse()
    optimizer, groups = ppo.make_optimizer(model, config)
    for _ in range(12):
        stats = ppo.update(model, optimizer, groups, batch, config, 0.0, False, rng, CPU)
    assert "losses/opponent_deadwood_mse" in stats
    # Below half the best constant's error (the target's variance): it reads the hands.
    assert mse() < 0.5 * float(batch["b_opp_deadwood"].var()) < before, (mse(), before)
    off = make_config({"hidden_sizes": [32, 32], "architecture": "belief"})
    assert not off.network_spec().deadwood_head and ActorCritic(off.network_spec()).deadwood_head is None
