"""The rollout buffer, its collection from the vector env, and per-seat GAE.

Each step one player moves in each game. Every decision of the learner is stored with
the step it was made at; its reward is what that seat receives until its next decision
in the same game (``next_t``), and GAE follows each seat's own chain of decisions. A
decision still waiting for its successor when the rollout ends bootstraps from the
critic's value of that seat's view then (``boot``); so does one whose episode a cap cut
short (``close_episodes``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from agents.stats import hand_ends
from agents.training import opponents as O
from agents.training.network import ActorCritic
from ginenv import VectorEnv, core, melds
from ginenv.actions import DRAW_STOCK, NUM_ACTIONS, TAKE_DISCARD
from ginenv.cards import NUM_CARDS
from ginenv.observation import OBS_SIZE, SCALAR, SCALAR_SCALES, observe


@dataclass
class Rollout:
    """Preallocated ``(T, N, ...)`` buffers of one rollout: step t, game n."""

    obs: np.ndarray  # (T, N, OBS_SIZE) float32: the mover's observation
    mask: np.ndarray  # (T, N, 108) bool: its legal actions
    opp: np.ndarray  # (T, N, 52) float32: the other seat's hand (the privileged critic's input)
    actions: np.ndarray  # (T, N) int64
    logprobs: np.ndarray  # (T, N) float32: of the learner's actions
    values: np.ndarray  # (T, N) float32: the critic's, at the learner's decisions
    rewards: np.ndarray  # (T, N) float32: the seat's rewards until its next decision
    dones: np.ndarray  # (T, N) bool: the episode ended before the seat's next decision
    valid: np.ndarray  # (T, N) bool: a decision of the learner (the rest does not train)
    next_t: np.ndarray  # (T, N) int64: the step of the same seat's next decision, -1 none yet
    boot: np.ndarray  # (T, N) float32: the bootstrap value where next_t is -1 and not done
    boot_deadwood: np.ndarray  # (T, N) float32: own_deadwood of the view the bootstrap read
    boot_opp: np.ndarray  # (T, N, 52) float32: the other seat's hand where the bootstrap read (11 if it drew)
    undercut: np.ndarray  # (T, N) bool: the seat knocked at this decision and was undercut
    hands: dict = None  # what the hands that ended in the rollout were like (``hand_stats``)

    @classmethod
    def empty(cls, num_steps: int, num_envs: int) -> Rollout:
        t, n = num_steps, num_envs
        return cls(
            obs=np.zeros((t, n, OBS_SIZE), np.float32),
            mask=np.zeros((t, n, NUM_ACTIONS), bool),
            opp=np.zeros((t, n, NUM_CARDS), np.float32),
            actions=np.zeros((t, n), np.int64),
            logprobs=np.zeros((t, n), np.float32),
            values=np.zeros((t, n), np.float32),
            rewards=np.zeros((t, n), np.float32),
            dones=np.zeros((t, n), bool),
            valid=np.zeros((t, n), bool),
            next_t=np.full((t, n), -1, np.int64),
            boot=np.zeros((t, n), np.float32),
            boot_deadwood=np.zeros((t, n), np.float32),
            boot_opp=np.zeros((t, n, NUM_CARDS), np.float32),
            undercut=np.zeros((t, n), bool),
            hands={
                "kinds": np.zeros(len(core.HAND_KIND_NAMES), np.int64),
                "by_learner": 0,
                "by_opponent": 0,
                # against each kind of opponent: hands ended by the learner, the opponent,
                # nobody (rows), by how they ended (columns)
                "ends": np.zeros((len(O.OPPONENT_KINDS), 3, len(core.HAND_KIND_NAMES)), np.int64),
            },
        )


def _critic_input(model: ActorCritic, hands: np.ndarray, device) -> dict:
    """The privileged critic's extra input, as keyword arguments."""
    return {"opponent_hand": torch.from_numpy(hands).to(device) if model.privileged_critic else None}


def _value(model: ActorCritic, obs: torch.Tensor, critic_in: dict) -> torch.Tensor:
    with torch.inference_mode():  # per thread: entered where it runs
        return model.get_value(obs, **critic_in)


def collect(
    env: VectorEnv,
    model: ActorCritic,
    opp: O.Opponents,
    rng: np.random.Generator,
    num_steps: int,
    device,
    split=None,
) -> tuple[Rollout, int]:
    """Play ``num_steps`` steps of every game of ``env``; returns the rollout and the
    learner's number of decisions. Episodes that end draw new opponents from ``rng``.
    ``split``: a ``ppo.SplitWorker`` whose thread computes the critic's values meanwhile."""
    n = env.num_envs
    buf = Rollout.empty(num_steps, n)
    pending = np.full((n, 2), -1, np.int64)  # last decision of each seat awaiting its successor
    learner_decisions = 0
    state = env.state
    obs, mask = env.observe(), core.legal_action_mask(state)
    turns = []  # draws in each hand that ended
    for t in range(num_steps):
        mover = state.current.astype(np.int64)
        learner = O.learner_moves(opp, mover)
        act = np.zeros(n, np.int64)
        L = np.flatnonzero(learner)
        buf.obs[t], buf.mask[t] = obs, mask
        buf.opp[t] = state.hands_of(1 - mover)
        mover_obs = torch.from_numpy(obs[L]).to(device)
        critic_in = _critic_input(model, buf.opp[t, L], device)
        # The critic's value on the worker's thread (if any) while this one samples, plays
        # the opponents and steps the games: the same value, the same random stream.
        value = split.submit(_value, model, mover_obs, critic_in) if split is not None else None
        with torch.inference_mode():
            dist = model.action_dist(mover_obs, torch.from_numpy(mask[L]).to(device))
            a = dist.sample()
            lp = dist.log_prob(a)
        act[L], buf.logprobs[t, L] = a.cpu().numpy(), lp.cpu().numpy()
        buf.valid[t, L] = True
        prev = pending[L, mover[L]]
        linked = prev >= 0
        buf.next_t[prev[linked], L[linked]] = t
        pending[L, mover[L]] = t
        O.act(opp, np.flatnonzero(~learner), obs, mask, act, device)
        buf.actions[t] = act
        out = env.step(act)
        buf.values[t, L] = (value.result() if value is not None else _value(model, mover_obs, critic_in)).cpu().numpy()
        learner_decisions += L.size
        _count_hands(buf.hands, turns, out, state, opp)
        _mark_undercuts(buf, pending, out, state)
        for seat in (0, 1):
            has = np.flatnonzero(pending[:, seat] >= 0)
            buf.rewards[pending[has, seat], has] += out.rewards[has, seat]
        ended = np.flatnonzero(out.terminated | out.truncated)
        close_episodes(buf, pending, ended, out.truncated)
        opp.episode_return += out.rewards[np.arange(n), opp.learner_seat]
        O.record(opp, ended, opp.episode_return[ended] > 0)  # PFSP's win rates
        opp.episode_return[ended] = 0.0
        O.assign(opp, ended, rng)
        obs, mask = out.obs, out.action_mask
    buf.hands["turns"] = np.array(turns, np.int64)
    # Decisions still waiting for their successor: bootstrap from the seat's view now.
    for seat in (0, 1):
        has = np.flatnonzero(pending[:, seat] >= 0)
        if has.size:
            with torch.inference_mode():
                seen = observe(state, seat)[has]
                buf.boot_deadwood[pending[has, seat], has] = seen[:, SCALAR["own_deadwood"]]
                view = torch.from_numpy(seen).to(device)
                hands = state.hands_of(np.full(n, 1 - seat))[has].astype(np.float32)
                buf.boot_opp[pending[has, seat], has] = hands
                buf.boot[pending[has, seat], has] = (
                    model.get_value(view, **_critic_input(model, hands, device)).cpu().numpy()
                )
    return buf, learner_decisions


def close_episodes(buf: Rollout, pending: np.ndarray, ended: np.ndarray, cut: np.ndarray) -> None:
    """Close the decisions still waiting for a successor in the games ``ended`` this step.

    An episode that ended by the rules (``terminated``) ends its seats' chains: ``dones``.
    One cut by a cap (``truncated``: the turn cap of a hand, the hand cap of a match) did
    not end in the game, only in the env: each seat's last decision bootstraps from the
    critic's value of that decision instead (time-limit truncation; its own view, the
    last the seat had before the cut), so a hand kept alive by taking the face-up card
    back and forth until the cap is worth what the seat's position is worth, not the 0 of
    a dead hand: the cap is no haven for the seat that is behind. Play and evaluation
    still score the cut hand 0, as the rules' house choice says."""
    for seat in (0, 1):
        has = ended[pending[ended, seat] >= 0]
        last = pending[has, seat]
        was_cut = cut[has]
        buf.dones[last[~was_cut], has[~was_cut]] = True
        last, has = last[was_cut], has[was_cut]
        buf.boot[last, has] = buf.values[last, has]
        buf.boot_deadwood[last, has] = buf.obs[last, has, SCALAR["own_deadwood"]]
        buf.boot_opp[last, has] = buf.opp[last, has]
    pending[ended] = -1


def _mark_undercuts(buf: Rollout, pending: np.ndarray, out, state) -> None:
    """Mark the knocks undercut in this step at the knocker's last decision (the knock:
    the knocker does not decide again in that hand) where that seat is the learner's."""
    g = np.flatnonzero(out.hand_ended & (out.hand_kind == core.HAND_KIND_NAMES.index("undercut")))
    if not g.size:
        return
    last = pending[g, state.last_knocker[g].astype(np.int64)]
    mine = last >= 0
    buf.undercut[last[mine], g[mine]] = True


def penalize_undercuts(b: Rollout, penalty: float, reward_scale: float) -> None:
    """``Config.undercut_penalty``: take ``penalty`` points (x ``reward_scale``) from the
    reward of each knock that was undercut, on top of the hand's score. In place."""
    if penalty:
        b.rewards -= np.float32(penalty * reward_scale) * b.undercut


def _count_hands(hands: dict, turns: list, out, state, opp: O.Opponents) -> None:
    """Add the hands that ended in this step to ``hands``: how each ended, who ended it
    (the learner, or the opponent, in the games against another player; in self-play
    both seats are the learner) and its length in draws."""
    ended = np.flatnonzero(out.hand_ended)
    if not ended.size:
        return
    np.add.at(hands["kinds"], out.hand_kind[ended].astype(np.int64), 1)
    turns.extend(state.hand_turns[ended].tolist())
    knocker = state.last_knocker[ended]
    duel = opp.kind[ended] != O.SELF
    knocked = knocker >= 0
    by_learner = knocked & duel & (knocker == opp.learner_seat[ended])
    hands["by_learner"] += int(by_learner.sum())
    hands["by_opponent"] += int((knocked & duel & ~by_learner).sum())
    ender = np.where(knocked, np.where(knocker == opp.learner_seat[ended], 0, 1), 2)
    kind = opp.kind[ended]
    np.add.at(hands["ends"], (kind[duel], ender[duel], out.hand_kind[ended][duel].astype(np.int64)), 1)


def hand_stats(b: Rollout) -> dict:
    """TensorBoard's ``hands/...`` figures of a rollout: the share of the hands that ended
    in each way (knock, gin, big gin, undercut, tie, dead, truncated), the learner's
    share of the hands ended by a knock in its games against another player, the mean
    hand length in draws, and against each kind of opponent (``hands_vs_<kind>/...``) the
    share of those hands it won by a knock, an undercut, gin and big gin and the undercut
    rate of its knocks; and ``decisions/...``: the learner's knock rate (knocks
    of its discard decisions where a knock was legal) and take rate (takes of the face-up
    card of its draw decisions where both that and the stock were legal: a policy at 0
    there has stopped exploring melds made from the pile, the signature of the stall in
    docs/training.md)."""
    h = b.hands
    total = max(1, int(h["kinds"].sum()))
    out = {f"hands/share_{name}": h["kinds"][k] / total for k, name in enumerate(core.HAND_KIND_NAMES)}
    ended = h["by_learner"] + h["by_opponent"]
    if ended:
        out["hands/ended_by_learner"] = h["by_learner"] / ended
    if h["turns"].size:
        out["hands/mean_draws"] = float(h["turns"].mean())
    for k, kind in enumerate(O.OPPONENT_KINDS):  # how the learner's hands against each opponent ended
        played = int(h["ends"][k].sum())
        if not played:
            continue
        e = hand_ends(h["ends"][k], core.HAND_KIND_NAMES)["a"]
        for name in ("won_by_knock", "won_by_undercut", "won_by_gin", "won_by_big_gin"):
            out[f"hands_vs_{kind}/{name}"] = e[name] / played
        if e["knocks"]:
            out[f"hands_vs_{kind}/undercut_rate_of_knocks"] = e["undercut_rate"]
    valid = b.valid
    can_knock = valid & b.mask[..., NUM_CARDS : 2 * NUM_CARDS].any(-1)
    if can_knock.any():
        knocked = (b.actions >= NUM_CARDS) & (b.actions < 2 * NUM_CARDS)
        out["decisions/knock_rate_when_legal"] = float(knocked[can_knock].mean())
    can_take = valid & b.mask[..., DRAW_STOCK] & b.mask[..., TAKE_DISCARD]
    if can_take.any():
        out["decisions/take_rate_when_legal"] = float((b.actions[can_take] == TAKE_DISCARD).mean())
    return out


def table_rewards(b: Rollout, players: int) -> None:
    """``Config.players``: at the three-player table a hand's reward is own minus the mean
    of the two others' points (the third sits the hand out and scores none). A hand's
    points go to one side only, so a seat's reward r (own minus the opponent's) becomes
    r where it won and r / 2 where it lost. In place; 2 leaves the rewards as they are."""
    if players == 3:
        np.multiply(b.rewards, 0.5, out=b.rewards, where=b.rewards < 0)


def deadwood_potential(own_deadwood: np.ndarray, coef: float, reward_scale: float) -> np.ndarray:
    """The shaping's potential: ``-coef`` x the seat's deadwood in points x
    ``reward_scale``, from the observation's ``own_deadwood`` column (as observed)."""
    return -coef * reward_scale * SCALAR_SCALES["own_deadwood"] * own_deadwood


def shape_rewards(b: Rollout, gamma: float, coef: float, reward_scale: float, opp_coef: float = 0.0) -> None:
    """Add the potential-based shaping of ``Config.deadwood_shaping`` (and
    ``opponent_deadwood_shaping``) to ``b.rewards``, in place: at each decision of the
    learner, ``gamma * phi(next) - phi(now)`` with ``phi`` = ``-coef`` x the seat's
    deadwood (``own_deadwood``, in points) x ``reward_scale``, plus ``opp_coef`` x the
    other seat's deadwood (its real hand, ``opp``) x ``reward_scale``; ``next`` is the
    seat's next decision, the view its bootstrap read at the rollout's end, or the
    episode's end (``phi`` 0)."""
    if not coef and not opp_coef:
        return
    phi = deadwood_potential(b.obs[..., SCALAR["own_deadwood"]], coef, reward_scale)
    boot = deadwood_potential(b.boot_deadwood, coef, reward_scale)
    if opp_coef:
        phi = phi + opp_coef * reward_scale * melds.deadwood(b.opp > 0.5)
        boot = boot + opp_coef * reward_scale * melds.deadwood(b.boot_opp > 0.5)
    cols = np.arange(b.rewards.shape[1])
    nt = b.next_t
    after = np.where(nt >= 0, phi[np.maximum(nt, 0), cols[None, :]], boot)
    after = np.where(b.dones, 0.0, after)
    b.rewards += np.where(b.valid, gamma * after - phi, 0.0).astype(np.float32)


def advantages(b: Rollout, gamma: float, gae_lambda: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE along each seat's own chain of decisions: ``(advantages, returns)``, ``(T, N)``,
    0 where ``valid`` is not set."""
    t_steps, n = b.rewards.shape
    adv = np.zeros((t_steps, n), np.float32)
    cols = np.arange(n)
    for t in reversed(range(t_steps)):
        nt = b.next_t[t]
        has_next = nt >= 0
        safe = np.where(has_next, nt, 0)
        next_value = np.where(b.dones[t], 0.0, np.where(has_next, b.values[safe, cols], b.boot[t]))
        next_adv = np.where(b.dones[t] | ~has_next, 0.0, adv[safe, cols])
        delta = b.rewards[t] + gamma * next_value - b.values[t]
        adv[t] = np.where(b.valid[t], delta + gamma * gae_lambda * next_adv, 0.0)
    return adv, adv + b.values
