"""The actor-critic network, defined once and imported by the trainer, the policy
loader and the exporter.

Three actor architectures (``architecture``):

- ``cards`` (default): a trunk MLP reads the whole observation into a context vector;
  from it come the weights of one linear head shared by all 52 cards, which reads
  each card's own features (its 9 observation planes, its rank and suit) and gives the
  card's two logits, discard and knock; a linear head on the context gives the other
  four (stock, take, pass, big gin). Sharing the card head across cards means "throw
  the card that leaves the least deadwood" is learnt once, not 52 times.
- ``relational``: ``cards`` with each card's neighbourhood added to its features: for
  the own hand, the top of the pile, the rest of the pile, the cards the opponent took
  and still holds, the cards it threw or passed, the unseen cards and the own
  discards, how many cards of the same
  rank, and of the same suit one and two ranks away, that plane holds (21 more
  features a card, computed from the observation by fixed shifts; no new inputs). The
  head can then read "this discard would complete a meld with a card the opponent
  took" directly instead of through the trunk.
- ``belief``: ``relational`` plus a belief net, an MLP from the observation to the
  probability that the opponent holds each card it has not shown. It is trained on
  the opponent's real hand (known during training only, like the privileged critic's
  input) with a cross-entropy on the unseen cards, and its output, detached, is a
  further card plane for the head: the belief itself and its counts over the card's
  neighbours (4 more features a card). The cards the opponent took and still holds
  count as 1, all other seen cards as 0. At play time the belief comes from the
  observation alone, so the policy stays fair.
- ``danger``: ``belief`` plus a danger net (``DangerNet``): for each card, the
  probability that it would join a meld in the opponent's hand (what gin_hunter takes
  from the pile, and so what a discard must not give it). It reads the observation,
  each card's planes and neighbour counts and the belief, and is trained on the
  opponent's real hand (``danger_loss``, over the cards the player holds); its output,
  detached, is one more feature a card for the head. The belief gives each card's odds
  alone; whether a card joins depends on two of its neighbours held together, which
  the danger net learns from the games instead.
- ``mlp``: one MLP from the observation to the 108 logits.

The actor sees only the player's observation; illegal logits are filled with -1e8
before the softmax (never ``log(mask)``; not the smallest float either, which turns
into -inf once normalised and makes the entropy 0 * -inf = nan). The critic sees the same
observation and, with ``privileged_critic``, the opponent's hand too (52 more inputs,
known during training only); with ``critic_lookahead`` k > 0, also what each of the
next k stock cards would do to each hand (``lookahead_features``). The trained policy
uses the actor alone, so it stays fair.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from ginenv import melds
from ginenv.actions import NUM_ACTIONS
from ginenv.cards import NUM_CARDS
from ginenv.cards import NUM_RANKS, NUM_SUITS
from ginenv.observation import NUM_PLANES, OBS_SIZE, PLANE_NAMES

ARCHITECTURES = ("cards", "relational", "belief", "danger", "mlp")

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}


def mlp(sizes, activation: str, out_size: int, out_gain: float) -> nn.Sequential:
    layers, last = [], sizes[0]
    for size in sizes[1:]:
        layers += [_init(nn.Linear(last, size), 2 ** 0.5), ACTIVATIONS[activation]()]
        last = size
    layers.append(_init(nn.Linear(last, out_size), out_gain))
    return nn.Sequential(*layers)


def _init(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
    return layer


MASKED_LOGIT = -1e8


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return logits.masked_fill(~mask, MASKED_LOGIT)


def trunk(sizes, activation: str) -> nn.Sequential:
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [_init(nn.Linear(a, b), 2 ** 0.5), ACTIVATIONS[activation]()]
    return nn.Sequential(*layers)


def _card_identity() -> torch.Tensor:
    """(52, 17): one-hot rank and suit of each card id."""
    ident = torch.zeros(NUM_CARDS, NUM_RANKS + NUM_SUITS)
    for c in range(NUM_CARDS):
        ident[c, c % NUM_RANKS] = 1.0
        ident[c, NUM_RANKS + c // NUM_RANKS] = 1.0
    return ident


#: The planes whose neighbourhoods the ``relational`` actor reads, in the order of its
#: features (see ``neighbours``): own hand, rest of the pile, opponent took, opponent
#: threw or passed, unseen, own discards, then the top of the pile.
NEIGHBOUR_PLANES = (0, 2, 3, 4, 5, 8, 1)
NUM_NEIGHBOUR_FEATURES = 3 * len(NEIGHBOUR_PLANES)
DANGER_CARD_HIDDEN = 32  # the width of the danger net's per-card MLP


def _relations() -> torch.Tensor:
    """(52, 3 * 52): for each relation (same rank, same suit one rank away, same suit two
    ranks away), 1 where card i is related to card j."""
    rel = torch.zeros(3, NUM_CARDS, NUM_CARDS)
    for i in range(NUM_CARDS):
        for j in range(NUM_CARDS):
            si, ri, sj, rj = i // NUM_RANKS, i % NUM_RANKS, j // NUM_RANKS, j % NUM_RANKS
            rel[0, i, j] = float(ri == rj and i != j)
            rel[1, i, j] = float(si == sj and abs(ri - rj) == 1)
            rel[2, i, j] = float(si == sj and abs(ri - rj) == 2)
    return rel.permute(1, 0, 2).reshape(NUM_CARDS, 3 * NUM_CARDS)


def _related_counts(x: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
    """``(B, P, 52)`` planes -> ``(B, 52, 3 P)``: for each card, each plane's sum over the
    card's same-rank, one-away and two-away cards."""
    b = x.shape[0]
    return torch.matmul(x, relations).reshape(b, -1, NUM_CARDS).transpose(1, 2)


UNSEEN_PLANE, OPPONENT_TOOK_PLANE = PLANE_NAMES.index("unseen"), PLANE_NAMES.index("opponent_took")


def neighbours(obs: torch.Tensor, relations: torch.Tensor | None = None) -> torch.Tensor:
    """``(B, 52, 21)``: for each card c and each of the planes ``NEIGHBOUR_PLANES``, the
    number of cards in that plane of c's rank (c itself left out), and of c's suit one
    rank away and two ranks away (no wrap: the ace is low). One matrix product with the
    fixed relation matrix."""
    b = obs.shape[0]
    rel = _relations() if relations is None else relations
    planes = obs[:, :NUM_PLANES * NUM_CARDS].reshape(b, NUM_PLANES, NUM_CARDS)
    x = (planes[:, list(NEIGHBOUR_PLANES)] > 0.5).to(obs.dtype)  # (B, 7, 52)
    return _related_counts(x, rel)


class DangerNet(nn.Module):
    """Per card: the logit of P(it joins a meld in the opponent's hand | the input). A
    trunk reads the input (the observation, and whatever follows it) into a context; a
    small MLP shared by the 52 cards reads the context with each card's features
    (``n_feats`` of them: the ``belief`` actor's, its planes, neighbour counts, belief
    and the belief's neighbour counts) and its rank and suit."""

    def __init__(self, in_size: int, hidden, n_feats: int, card_hidden: int, activation: str = "relu"):
        super().__init__()
        self.trunk = trunk([in_size] + list(hidden), activation)
        self.register_buffer("identity", _card_identity(), persistent=False)
        self.card_in = nn.Linear(n_feats, card_hidden)
        self.identity_in = nn.Linear(NUM_RANKS + NUM_SUITS, card_hidden, bias=False)
        self.context_in = nn.Linear(hidden[-1], card_hidden, bias=False)
        self.card = nn.Sequential(ACTIVATIONS[activation](), nn.Linear(card_hidden, card_hidden),
                                  ACTIVATIONS[activation](), nn.Linear(card_hidden, 1))

    def forward(self, x: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        """``x`` ``(B, in_size)``, ``feats`` ``(B, 52, n_feats)`` -> ``(B, 52)`` logits."""
        # The first layer on [card features, rank and suit, context], each part computed once.
        first = self.card_in(feats) + self.identity_in(self.identity)[None] + self.context_in(self.trunk(x))[:, None]
        return self.card(first).squeeze(-1)


class CardActor(nn.Module):
    """Per-card logits from a head shared by the 52 cards (see the module docstring).

    The context sets, per game, the weights of a linear head over each card's features
    (its 9 observation planes, with ``relational`` its 21 neighbourhood counts, its rank
    and suit): logit[c] = features[c] @ W(context). Cheap (a few batched matrix
    products) and the same head for every card."""

    def __init__(self, hidden, activation: str, relational: bool = False, belief: bool = False,
                 danger: bool = False):
        super().__init__()
        belief = belief or danger
        self.relational = relational or belief
        self.trunk = trunk([OBS_SIZE] + list(hidden), activation)
        self.register_buffer("identity", _card_identity(), persistent=False)
        self.register_buffer("relations", _relations() if self.relational else torch.zeros(0), persistent=False)
        n_feats = NUM_PLANES + (NUM_NEIGHBOUR_FEATURES if self.relational else 0)
        self.belief_net = None
        if belief:
            self.belief_net = mlp([OBS_SIZE] + list(hidden), activation, NUM_CARDS, 1.0)
            n_feats += 4
        self.danger_net = None
        if danger:  # it reads the card features above
            self.danger_net = DangerNet(OBS_SIZE, hidden, n_feats, DANGER_CARD_HIDDEN, activation)
            n_feats += 1
        self.plane_weights = _init(nn.Linear(hidden[-1], n_feats * 2), 0.01)
        self.identity_weights = _init(nn.Linear(hidden[-1], (NUM_RANKS + NUM_SUITS) * 2), 0.01)
        self.other_head = _init(nn.Linear(hidden[-1], NUM_ACTIONS - 2 * NUM_CARDS), 0.01)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.forward_with_aux(obs)[0]

    def forward_with_aux(self, obs: torch.Tensor):
        """The 108 logits and the auxiliary nets' ``(B, 52)`` logits, ``{"belief": ...,
        "danger": ...}`` for the nets this actor has, from one pass of each, for the
        training losses."""
        b = obs.shape[0]
        g = self.trunk(obs)
        planes = obs[:, :NUM_PLANES * NUM_CARDS].reshape(b, NUM_PLANES, NUM_CARDS).transpose(1, 2)
        if self.relational:
            planes = torch.cat([planes, neighbours(obs, self.relations)], 2)
        aux = {}
        if self.belief_net is not None:
            aux["belief"] = self.belief_net(obs)
            p = belief_probabilities(obs, aux["belief"]).detach()  # the policy loss never trains it
            planes = torch.cat([planes, belief_features(p, self.relations)], 2)
            if self.danger_net is not None:  # nor this one: its own loss only
                aux["danger"] = self.danger_net(obs, planes)
                planes = torch.cat([planes, torch.sigmoid(aux["danger"]).detach()[:, :, None]], 2)
        logits = torch.bmm(planes, self.plane_weights(g).reshape(b, planes.shape[2], 2))
        logits = logits + torch.matmul(self.identity, self.identity_weights(g).reshape(b, -1, 2))
        return torch.cat([logits[..., 0], logits[..., 1], self.other_head(g)], 1), aux  # discard, knock, others

    def belief(self, obs: torch.Tensor) -> torch.Tensor:
        """``(B, 52)``: P(the opponent holds the card) (see ``belief_probabilities``)."""
        return belief_probabilities(obs, self.belief_net(obs))


def lookahead_size(k: int) -> int:
    """Number of ``lookahead_features`` for a window of k stock cards (0 for none)."""
    return 4 * k + 2 if k else 0


def lookahead_features(own: np.ndarray, opponent: np.ndarray, top: np.ndarray) -> np.ndarray:
    """What the next stock cards would do to each hand, for a training-time critic.

    ``own`` and ``opponent`` ``(B, 52)`` bool: the deciding player's hand and the
    opponent's, 10 cards each, or 11 for the player in its discard turn (then taken down
    to 10 by its deadwood-minimising discard, the lowest card id on ties); ``top``
    ``(B, k)``: the next k stock cards, top first, -1 past the end (``State.stock_top``).
    Returns ``(B, 4 k + 2)`` float32: for each j < k, the deciding player's and the
    opponent's best deadwood if they drew card j (the 11 cards' deadwood after their best
    discard; the 10 cards' own deadwood past the stock's end), each over 100; then 1
    where those are 0 (gin in reach); then the two 10-card hands' deadwood, over 100."""
    b, k = top.shape
    hands = np.stack([own, opponent])  # (2, B, 52)
    eleven = np.nonzero(hands.sum(2) == 11)
    if eleven[0].size:  # cards not held are NOT_IN_HAND, above any deadwood
        hands[eleven + (melds.deadwood_after_discard(hands[eleven]).argmin(1),)] = False
    now = melds.deadwood(hands).astype(np.float32)  # (2, B)
    # Every hand with every coming card added, in one call of the meld tables.
    drawn = np.repeat(hands[:, None], k, 1)  # (2, k, B, 52)
    side, j, g = np.nonzero(np.broadcast_to(top.T >= 0, (2, k, b)))
    drawn[side, j, g, top[g, j]] = True
    best = np.where(top.T >= 0, melds.deadwood_after_discard(drawn).min(-1), now[:, None])  # (2, k, B)
    per_card = best.transpose(2, 1, 0).reshape(b, 2 * k)  # card j: own, then opponent
    return np.concatenate([per_card / 100, per_card == 0, now.T / 100], 1).astype(np.float32)


def state_lookahead(state, games: np.ndarray, me: np.ndarray, k: int) -> np.ndarray:
    """``lookahead_features`` of the games ``games`` of an engine state, seen by player
    ``me`` (one per game), over the next k stock cards."""
    return lookahead_features(state._hands[games, me], state._hands[games, 1 - me], state.stock_top(k)[games])


def belief_probabilities(obs: torch.Tensor, belief_logits: torch.Tensor) -> torch.Tensor:
    """``(B, 52)``: the belief net's probability on the unseen cards, 1 on the cards the
    opponent took and still holds, 0 on every other seen card."""
    planes = obs[:, :NUM_PLANES * NUM_CARDS].reshape(obs.shape[0], NUM_PLANES, NUM_CARDS)
    took = (planes[:, OPPONENT_TOOK_PLANE] > 0.5).to(obs.dtype)
    return torch.where(planes[:, UNSEEN_PLANE] > 0.5, torch.sigmoid(belief_logits), took)


def belief_features(p: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
    """``(B, 52)`` belief -> ``(B, 52, 4)``: each card's belief and its sums over the
    card's same-rank, one-away and two-away cards."""
    return torch.cat([p[:, :, None], _related_counts(p[:, None], relations)], 2)


def danger_loss(danger_logits: torch.Tensor, obs: torch.Tensor, joins: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of the danger net's logits against ``joins`` (``(B,
    52)``: the card would join a meld in the opponent's real hand, ``melds.joins_meld``),
    over the cards the player holds."""
    held = obs[:, :NUM_CARDS] > 0.5
    bce = nn.functional.binary_cross_entropy_with_logits(danger_logits, joins, reduction="none")
    return (bce * held).sum() / held.sum().clamp(min=1)


def aux_losses(aux: dict, obs: torch.Tensor, opponent_hand: torch.Tensor, joins: torch.Tensor | None) -> dict:
    """The auxiliary nets' losses (``belief_loss``, ``danger_loss``), by name."""
    out = {}
    if "belief" in aux:
        out["belief"] = belief_loss(aux["belief"], obs, opponent_hand)
    if "danger" in aux:
        out["danger"] = danger_loss(aux["danger"], obs, joins)
    return out


def belief_loss(belief_logits: torch.Tensor, obs: torch.Tensor, opponent_hand: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of the belief net's logits against the opponent's real
    hand, over the cards the player has not seen."""
    unseen = obs[:, UNSEEN_PLANE * NUM_CARDS:(UNSEEN_PLANE + 1) * NUM_CARDS] > 0.5
    bce = nn.functional.binary_cross_entropy_with_logits(belief_logits, opponent_hand, reduction="none")
    return (bce * unseen).sum() / unseen.sum().clamp(min=1)


class ActorCritic(nn.Module):
    def __init__(self, hidden_sizes=(256, 256), activation: str = "relu", privileged_critic: bool = False,
                 architecture: str = "cards", critic_lookahead: int = 0):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}; got {activation!r}")
        if architecture not in ARCHITECTURES:
            raise ValueError(f"architecture must be one of {', '.join(ARCHITECTURES)}; got {architecture!r}")
        if critic_lookahead < 0 or (critic_lookahead and not privileged_critic):
            raise ValueError("critic_lookahead must be >= 0, and > 0 only with privileged_critic; "
                             f"got {critic_lookahead}")
        self.privileged_critic, self.critic_lookahead = privileged_critic, critic_lookahead
        hidden = list(hidden_sizes)
        if architecture in ("cards", "relational", "belief", "danger"):
            self.actor = CardActor(hidden, activation, relational=architecture == "relational",
                                   belief=architecture == "belief", danger=architecture == "danger")
        else:
            self.actor = mlp([OBS_SIZE] + hidden, activation, NUM_ACTIONS, 0.01)
        critic_in = OBS_SIZE + (NUM_CARDS if privileged_critic else 0) + lookahead_size(critic_lookahead)
        self.critic = mlp([critic_in] + hidden, activation, 1, 1.0)

    @property
    def has_belief(self) -> bool:
        return getattr(self.actor, "belief_net", None) is not None

    @property
    def has_danger(self) -> bool:
        return getattr(self.actor, "danger_net", None) is not None

    def get_value(self, obs: torch.Tensor, opponent_hand: torch.Tensor | None = None,
                  lookahead: torch.Tensor | None = None) -> torch.Tensor:
        """The critic's value; ``opponent_hand`` ``(B, 52)`` with ``privileged_critic``,
        ``lookahead`` ``(B, 4 k + 2)`` (``lookahead_features``) with ``critic_lookahead`` k."""
        missing = ((["the opponent's hand"] if self.privileged_critic and opponent_hand is None else [])
                   + ([f"the lookahead features of the next {self.critic_lookahead} stock cards"]
                      if self.critic_lookahead and lookahead is None else []))
        if missing:
            raise ValueError("this critic needs " + " and ".join(missing))
        parts = [obs] + ([opponent_hand] if self.privileged_critic else [])
        parts += [lookahead] if self.critic_lookahead else []
        return self.critic(torch.cat(parts, 1) if len(parts) > 1 else obs).squeeze(-1)

    def action_dist(self, obs: torch.Tensor, mask: torch.Tensor) -> Categorical:
        """The actor's distribution over the legal actions."""
        return Categorical(logits=masked_logits(self.actor(obs), mask))

    def actor_with_aux(self, obs: torch.Tensor):
        """The actor's logits and its auxiliary nets' logits by name (``CardActor.forward_with_aux``;
        empty for an actor without them)."""
        return self.actor.forward_with_aux(obs) if self.has_belief else (self.actor(obs), {})

    def evaluate_actions(self, obs, mask, action, opponent_hand=None, lookahead=None):
        """For the PPO update: log-probabilities of ``action``, entropies, values and the
        auxiliary nets' logits (``actor_with_aux``), each network run once."""
        logits, aux = self.actor_with_aux(obs)
        dist = Categorical(logits=masked_logits(logits, mask))
        return dist.log_prob(action), dist.entropy(), self.get_value(obs, opponent_hand, lookahead), aux

    def get_action_and_value(self, obs, mask, action=None, opponent_hand=None, lookahead=None):
        dist = self.action_dist(obs, mask)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.get_value(obs, opponent_hand, lookahead)

    def act_greedy(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return masked_logits(self.actor(obs), mask).argmax(-1)
