"""The actor-critic network and its spec, defined once and imported by the trainer, the
policy loader and the exporter.

``NetworkSpec`` is the network's shape, with its defaults written once; a checkpoint's
``policy.json`` records it under ``network``, and ``NetworkSpec.from_dict`` reads it back.

Actor architectures (``architecture``):

- ``cards`` (``NetworkSpec``'s default, what a spec without the key means): a trunk MLP
  reads the whole observation into a context vector; from it come the weights of one
  linear head shared by all 52 cards, which reads each card's own features (its 9
  observation planes, its rank and suit) and gives the card's two logits, discard and
  knock; a linear head on the context gives the other four (stock, take, pass, big gin).
  Sharing the card head across cards means "throw the card that leaves the least
  deadwood" is learnt once, not 52 times.
- ``belief`` (the training default, and the shipped bot's): ``cards`` with each card's
  neighbourhood added to its features (for seven planes, how many cards of the same
  rank, and of the same suit one and two ranks away, that plane holds: 21 features a
  card, by fixed shifts of the observation), plus a belief net: an MLP from the
  observation to the probability that the opponent holds each card it has not shown. It
  is trained on the opponent's real hand (known during training only, like the
  privileged critic's input) with a cross-entropy on the unseen cards, and its output,
  detached, is a further card plane for the head: the belief itself and its counts over
  the card's neighbours (4 more features a card). The cards the opponent took and still
  holds count as 1, all other seen cards as 0. At play time the belief comes from the
  observation alone, so the policy stays fair.
- ``mlp``: one MLP from the observation to the 108 logits.

The actor sees only the player's observation; illegal logits are filled with -1e8
before the softmax (never ``log(mask)``; not the smallest float either, which turns
into -inf once normalised and makes the entropy 0 * -inf = nan). The critic sees the same
observation and, with ``privileged_critic``, the opponent's hand too (52 more inputs,
known during training only). The trained policy uses the actor alone, so it stays fair.
"""

from __future__ import annotations

import torch
from torch import nn

from agents.training.spec import (  # noqa: F401 (the contract's names, re-exported)
    ACTIVATION_NAMES,
    ARCHITECTURES,
    MASKED_LOGIT,
    NEIGHBOUR_PLANES,
    NUM_NEIGHBOUR_FEATURES,
    OPPONENT_TOOK_PLANE,
    UNSEEN_PLANE,
    NetworkSpec,
    card_identity,
    relations,
)
from ginenv.actions import KNOCK, NUM_ACTIONS
from ginenv.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from ginenv.observation import NUM_PLANES, OBS_SIZE

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}


def mlp(sizes, activation: str, out_size: int, out_gain: float) -> nn.Sequential:
    layers, last = [], sizes[0]
    for size in sizes[1:]:
        layers += [_init(nn.Linear(last, size), 2**0.5), ACTIVATIONS[activation]()]
        last = size
    layers.append(_init(nn.Linear(last, out_size), out_gain))
    return nn.Sequential(*layers)


def _init(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
    return layer


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return logits.masked_fill(~mask, MASKED_LOGIT)


def trunk(sizes, activation: str) -> nn.Sequential:
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [_init(nn.Linear(a, b), 2**0.5), ACTIVATIONS[activation]()]
    return nn.Sequential(*layers)


def _card_identity() -> torch.Tensor:
    """(52, 17): one-hot rank and suit of each card id (``spec.card_identity``)."""
    return torch.from_numpy(card_identity())


def _stacked_relations() -> torch.Tensor:
    """(3 x 52, 52): ``spec.relations``' three matrices stacked, row ``r * 52 + i``,
    column j: 1 where card i is related to card j by relation r."""
    rel = relations().reshape(NUM_CARDS, 3, NUM_CARDS).transpose(1, 0, 2)
    return torch.from_numpy(rel.reshape(3 * NUM_CARDS, NUM_CARDS).copy())


class CardActor(nn.Module):
    """Per-card logits from a head shared by the 52 cards (see the module docstring).

    The context sets, per game, the weights of a linear head over each card's features
    (its 9 observation planes, with ``belief`` its 21 neighbourhood counts and 4 belief
    features, its rank and suit): logit[c] = features[c] @ W(context). Cheap (a few
    batched matrix products) and the same head for every card."""

    def __init__(self, hidden, activation: str, belief: bool = False):
        super().__init__()
        self.trunk = trunk([OBS_SIZE] + list(hidden), activation)
        self.register_buffer("identity", _card_identity(), persistent=False)
        self.register_buffer("relations", _stacked_relations() if belief else torch.zeros(0), persistent=False)
        n_feats = NUM_PLANES + (NUM_NEIGHBOUR_FEATURES if belief else 0)
        self.belief_net = None
        if belief:
            self.belief_net = mlp([OBS_SIZE] + list(hidden), activation, NUM_CARDS, 1.0)
            n_feats += 4
        self.plane_weights = _init(nn.Linear(hidden[-1], n_feats * 2), 0.01)
        self.identity_weights = _init(nn.Linear(hidden[-1], (NUM_RANKS + NUM_SUITS) * 2), 0.01)
        self.other_head = _init(nn.Linear(hidden[-1], NUM_ACTIONS - 2 * NUM_CARDS), 0.01)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.forward_with_aux(obs)[0]

    def forward_with_aux(self, obs: torch.Tensor, belief=None):
        """The 108 logits and, by name, the trunk's output (``context``) and, with
        ``belief``, the belief net's ``(B, 52)`` logits, from one pass, for the training losses.
        ``belief``: a callable that gives the belief net's logits (the update runs the
        belief net on its second thread meanwhile), else the belief net is run here."""
        b = obs.shape[0]
        g = self.trunk(obs)
        # Card-major features would need a transposed copy of every plane and a cat a
        # group; instead each group of features (B, F, 52) meets its slice of the head's
        # weights, (B, 2, F), in a product of its own, and the logits come out (B, 2, 52).
        w = self.plane_weights(g).reshape(b, -1, 2).transpose(1, 2)
        planes = obs[:, : NUM_PLANES * NUM_CARDS].reshape(b, NUM_PLANES, NUM_CARDS)  # a view
        logits = torch.bmm(w[:, :, :NUM_PLANES], planes)
        aux = {}
        if self.belief_net is not None:  # the belief actor: the neighbours and the belief
            # The neighbour counts are the planes times fixed relation matrices R_r (same
            # rank, one away, two away), so their share of the logits is
            # sum_r (sum_p w[p, r] plane_p) @ R_r: the planes are weighed first, (B, 2 x 3,
            # 52), then one product with the stacked R_r, (3 x 52, 52), for the batch. The
            # (B, 21, 52) counts are never built; the belief's sums join the same product.
            x = (planes[:, list(NEIGHBOUR_PLANES)] > 0.5).to(obs.dtype)  # (B, 7, 52)
            end = NUM_PLANES + NUM_NEIGHBOUR_FEATURES
            wn = w[:, :, NUM_PLANES:end].reshape(b, 2, len(NEIGHBOUR_PLANES), 3).transpose(2, 3)
            y = torch.bmm(wn.reshape(b, 6, len(NEIGHBOUR_PLANES)), x)  # (B, 2 x 3, 52)
            aux["belief"] = self.belief_net(obs) if belief is None else belief()
            p = belief_probabilities(obs, aux["belief"]).detach()[:, None]  # the policy loss never trains it
            wb = w[:, :, end:]  # (B, 2, 4): the card's own belief, then its three sums
            logits = logits + wb[:, :, :1] * p
            y = y + wb[:, :, 1:].reshape(b, 6, 1) * p
            logits = logits + torch.mm(y.reshape(2 * b, -1), self.relations).reshape(b, 2, NUM_CARDS)
        aux["context"] = g  # the trunk's output (the deadwood head reads it)
        identity = self.identity_weights(g).reshape(b, -1, 2).transpose(1, 2)  # (B, 2, 17)
        logits = logits + torch.matmul(identity, self.identity.T)  # one product for the batch
        return torch.cat([logits.reshape(b, 2 * NUM_CARDS), self.other_head(g)], 1), aux  # discard, knock, others

    def belief(self, obs: torch.Tensor) -> torch.Tensor:
        """``(B, 52)``: P(the opponent holds the card) (see ``belief_probabilities``)."""
        return belief_probabilities(obs, self.belief_net(obs))


def belief_probabilities(obs: torch.Tensor, belief_logits: torch.Tensor) -> torch.Tensor:
    """``(B, 52)``: the belief net's probability on the unseen cards, 1 on the cards the
    opponent took and still holds, 0 on every other seen card."""
    planes = obs[:, : NUM_PLANES * NUM_CARDS].reshape(obs.shape[0], NUM_PLANES, NUM_CARDS)
    took = (planes[:, OPPONENT_TOOK_PLANE] > 0.5).to(obs.dtype)
    return torch.where(planes[:, UNSEEN_PLANE] > 0.5, torch.sigmoid(belief_logits), took)


def belief_loss(belief_logits: torch.Tensor, obs: torch.Tensor, opponent_hand: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of the belief net's logits against the opponent's real
    hand, over the cards the player has not seen."""
    unseen = obs[:, UNSEEN_PLANE * NUM_CARDS : (UNSEEN_PLANE + 1) * NUM_CARDS] > 0.5
    bce = nn.functional.binary_cross_entropy_with_logits(belief_logits, opponent_hand, reduction="none")
    return (bce * unseen).sum() / unseen.sum().clamp(min=1)


def masked_logsumexp(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``(B,)``: the log of the sum of ``exp(x)`` over the entries ``mask`` keeps (bool or
    0/1; at least one a row), the same as ``torch.logsumexp`` with the others at -inf.
    Written in float arithmetic that never exponentiates a left-out entry: on a CPU,
    ``exp`` of a large negative float takes a slow path (30x slower on this project's
    machine; the illegal logits sit at ``MASKED_LOGIT``), and ``masked_fill`` or
    ``where`` with a bool mask cost 10x a multiplication. The shift by the row's largest
    kept entry is held fixed (the sum does not depend on it)."""
    keep = mask.to(x.dtype)
    top = (x + (keep - 1) * 1e30).amax(-1, keepdim=True).detach()
    e = ((x - top) * keep).exp() * keep
    return top.squeeze(-1) + e.sum(-1).log()


class MaskedCategorical:
    """The policy's distribution: torch's ``Categorical`` over ``masked_logits(logits,
    mask)``, with the same probabilities, log-probabilities of the legal actions and
    entropy (tested against it), computed with ``masked_logsumexp``: the illegal actions'
    probabilities are exactly 0 (their entries of ``logits`` mean nothing). ``sample``
    draws by the inverse of the cumulative distribution, one uniform number a row
    (``torch.multinomial`` draws an exponential for every entry: 30% of the policy's
    forward in the rollout). Every row needs a legal action."""

    def __init__(self, logits: torch.Tensor, mask: torch.Tensor):
        keep = mask.to(logits.dtype)
        self.logits = logits - masked_logsumexp(logits, keep).unsqueeze(-1)  # log-probabilities, where legal
        self.probs = (self.logits * keep).exp() * keep

    def log_prob(self, action: torch.Tensor) -> torch.Tensor:
        return self.logits.gather(-1, action.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        return -(self.logits * self.probs).sum(-1)

    def sample(self) -> torch.Tensor:
        """One action a row, from the global torch generator."""
        cdf = self.probs.cumsum(-1)
        total = cdf[..., -1:]
        u = torch.rand(total.shape, dtype=cdf.dtype, device=cdf.device) * total
        drawn = (cdf <= u).sum(-1)  # the first action whose cumulative probability passes u
        return torch.minimum(drawn, (cdf < total).sum(-1))  # u rounded up to the total: the last legal one


def knock_entropy(logits: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The entropy of the choice to knock or not: ``(H, rows)``, ``H`` the binary entropy
    of the probability mass the masked ``logits`` put on the knocks, for the ``rows``
    where a knock is legal (then a plain discard is legal too)."""
    rows = mask[:, KNOCK : KNOCK + NUM_CARDS].any(1)
    x, m = logits[rows], mask[rows].to(logits.dtype)
    knocks = torch.zeros_like(m)
    knocks[:, KNOCK : KNOCK + NUM_CARDS] = m[:, KNOCK : KNOCK + NUM_CARDS]
    knock, rest = masked_logsumexp(x, knocks), masked_logsumexp(x, m - knocks)
    total = torch.logaddexp(knock, rest)
    log_k, log_r = knock - total, rest - total
    return -(log_k.exp() * log_k + log_r.exp() * log_r), rows


class ActorCritic(nn.Module):
    """The actor (``architecture``) and the critic, built from a ``NetworkSpec``."""

    def __init__(self, spec: NetworkSpec | None = None):
        super().__init__()
        self.spec = spec = spec or NetworkSpec()
        self.privileged_critic = spec.privileged_critic
        hidden = list(spec.hidden_sizes)
        if spec.architecture in ("cards", "belief"):
            self.actor = CardActor(hidden, spec.activation, belief=spec.architecture == "belief")
        else:
            self.actor = mlp([OBS_SIZE] + hidden, spec.activation, NUM_ACTIONS, 0.01)
        critic_in = OBS_SIZE + (NUM_CARDS if spec.privileged_critic else 0)
        self.critic = mlp([critic_in] + hidden, spec.activation, 1, 1.0)
        # Training only, beside the actor (its weights are "deadwood_head.*", never "actor.*").
        self.deadwood_head = _init(nn.Linear(hidden[-1], 1), 0.01) if spec.deadwood_head else None

    @property
    def has_belief(self) -> bool:
        return getattr(self.actor, "belief_net", None) is not None

    def get_value(self, obs: torch.Tensor, opponent_hand: torch.Tensor | None = None) -> torch.Tensor:
        """The critic's value; ``opponent_hand`` ``(B, 52)`` with ``privileged_critic``."""
        if not self.privileged_critic:
            return self.critic(obs).squeeze(-1)
        if opponent_hand is None:
            raise ValueError("this critic needs the opponent's hand (privileged_critic)")
        return self.critic(torch.cat([obs, opponent_hand], 1)).squeeze(-1)

    def action_dist(self, obs: torch.Tensor, mask: torch.Tensor) -> MaskedCategorical:
        """The actor's distribution over the legal actions."""
        return MaskedCategorical(self.actor(obs), mask)

    def actor_with_aux(self, obs: torch.Tensor, belief=None):
        """The actor's logits and, by name, its trunk's output and belief net's logits
        (``CardActor.forward_with_aux``; empty for the ``mlp`` actor)."""
        return self.actor.forward_with_aux(obs, belief) if isinstance(self.actor, CardActor) else (self.actor(obs), {})

    def opponent_deadwood(self, context: torch.Tensor) -> torch.Tensor:
        """``(B,)``: the deadwood head's estimate of the opponent's deadwood / 100, from the
        trunk's output (``actor_with_aux``'s ``context``)."""
        return self.deadwood_head(context).squeeze(-1)

    def evaluate_actions(self, obs, mask, action, opponent_hand=None):
        """The PPO update's passes in one call (the update itself runs the actor's and the
        critic's apart, to put them on two threads; the bench counts their work here):
        log-probabilities of ``action``, entropies, values and the
        belief net's logits (``actor_with_aux``; with them, ``logits``: the actor's raw
        logits), each network run once."""
        logits, aux = self.actor_with_aux(obs)
        aux = {**aux, "logits": logits}
        dist = MaskedCategorical(logits, mask)
        return dist.log_prob(action), dist.entropy(), self.get_value(obs, opponent_hand), aux

    def get_action_and_value(self, obs, mask, action=None, opponent_hand=None):
        dist = self.action_dist(obs, mask)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.get_value(obs, opponent_hand)

    def act_greedy(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return masked_logits(self.actor(obs), mask).argmax(-1)
