"""A trained actor run with numpy alone: the same logits as ``ActorCritic.actor`` (the
tests compare them for every architecture and activation), for places that have no
torch, such as the Kaggle bundle (``python -m agents.export --kaggle``).

``NumpyActor(tensors, spec)`` takes the actor's tensors by their torch names (``actor.``
and the module path, as ``policy.safetensors`` holds them) and a ``NetworkSpec``;
``NumpyPolicy`` is an agent (``act(observation, action_mask)``, greedy). Imports numpy,
``ginenv`` and ``agents.training.spec`` only.
"""

from __future__ import annotations

import math

import numpy as np

from agents.training.spec import (
    MASKED_LOGIT,
    NEIGHBOUR_PLANES,
    OPPONENT_TOOK_PLANE,
    UNSEEN_PLANE,
    NetworkSpec,
    card_identity,
    relations,
)
from ginenv.actions import NUM_ACTIONS
from ginenv.cards import NUM_CARDS
from ginenv.observation import NUM_PLANES, OBS_SIZE

_ERF = np.vectorize(math.erf, otypes=[np.float32])

ACTIVATIONS = {
    "relu": lambda x: np.maximum(x, 0),
    "tanh": np.tanh,
    "gelu": lambda x: 0.5 * x * (1.0 + _ERF(x / math.sqrt(2.0))),  # torch's exact GELU
}


class NumpyActor:
    """The actor's forward pass in numpy (see ``agents.training.network`` for what each
    architecture computes)."""

    def __init__(self, tensors: dict, spec: NetworkSpec):
        self.spec = spec
        self.act_fn = ACTIVATIONS[spec.activation]
        t = {k[len("actor.") :]: np.asarray(v, np.float32) for k, v in tensors.items() if k.startswith("actor.")}
        if not t:
            raise ValueError("no actor tensors (names starting with 'actor.') among the weights")
        self.t = t
        self.belief = None  # the belief net's layers (the belief architecture)
        if spec.architecture == "mlp":
            self.layers = self._sequential("")
        else:
            self.trunk = self._sequential("trunk.")
            self.belief = self._sequential("belief_net.") if spec.architecture == "belief" else None
            self.identity = card_identity()
            self.relations = relations()
            for name in ("plane_weights", "identity_weights", "other_head"):
                if f"{name}.weight" not in t:
                    raise ValueError(f"the actor's tensors lack {name}.weight")

    def _sequential(self, prefix: str) -> list:
        """The ``(weight, bias)`` of an ``nn.Sequential``'s linear layers, in order."""
        idx = sorted(
            int(k[len(prefix) :].split(".")[0])
            for k in self.t
            if k.startswith(prefix) and k.endswith(".weight") and k[len(prefix) :].split(".")[0].isdigit()
        )
        if not idx:
            raise ValueError(f"the actor's tensors lack the layers {prefix or 'actor.'}<n>.weight")
        return [(self.t[f"{prefix}{i}.weight"], self.t[f"{prefix}{i}.bias"]) for i in idx]

    def _linear(self, name: str, x: np.ndarray) -> np.ndarray:
        return x @ self.t[f"{name}.weight"].T + self.t[f"{name}.bias"]

    def _run(self, layers: list, x: np.ndarray, last_activation: bool) -> np.ndarray:
        for k, (w, b) in enumerate(layers):
            x = x @ w.T + b
            if last_activation or k < len(layers) - 1:
                x = self.act_fn(x)
        return x

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """``(B, 108)`` raw logits (before the mask) for ``(B, OBS_SIZE)`` observations."""
        obs = np.asarray(obs, np.float32)
        if self.spec.architecture == "mlp":
            return self._run(self.layers, obs, last_activation=False)
        b = len(obs)
        g = self._run(self.trunk, obs, last_activation=True)  # the trunk ends with its activation
        planes = obs[:, : NUM_PLANES * NUM_CARDS].reshape(b, NUM_PLANES, NUM_CARDS)
        feats = [planes.transpose(0, 2, 1)]
        if self.belief is not None:
            x = (planes[:, list(NEIGHBOUR_PLANES)] > 0.5).astype(np.float32)
            feats.append(self._related(x))
            p = self.belief_probabilities(obs)
            feats += [p[:, :, None], self._related(p[:, None])]
        feats = np.concatenate(feats, 2)
        w = self._linear("plane_weights", g).reshape(b, feats.shape[2], 2)
        card = np.matmul(feats, w) + np.matmul(self.identity, self._linear("identity_weights", g).reshape(b, -1, 2))
        return np.concatenate([card[..., 0], card[..., 1], self._linear("other_head", g)], 1)

    def belief_probabilities(self, obs: np.ndarray) -> np.ndarray:
        """``(B, 52)``: the belief net's P(the opponent holds the card) on the unseen cards,
        1 on the cards the opponent took and holds, 0 on every other seen card (the
        belief architecture only)."""
        obs = np.asarray(obs, np.float32)
        planes = obs[:, : NUM_PLANES * NUM_CARDS].reshape(len(obs), NUM_PLANES, NUM_CARDS)
        belief_logits = self._run(self.belief, obs, last_activation=False)
        took = (planes[:, OPPONENT_TOOK_PLANE] > 0.5).astype(np.float32)
        return np.where(planes[:, UNSEEN_PLANE] > 0.5, 1.0 / (1.0 + np.exp(-belief_logits)), took).astype(np.float32)

    def _related(self, x: np.ndarray) -> np.ndarray:
        """``(B, P, 52)`` -> ``(B, 52, 3 P)``: each plane's sums over each card's
        same-rank, one-away and two-away cards."""
        return np.matmul(x, self.relations).reshape(len(x), -1, NUM_CARDS).transpose(0, 2, 1)


class NumpyPolicy:
    """A greedy agent over a ``NumpyActor``: ``act(observation, action_mask)`` for one
    observation (an int) or a batch (an array); illegal actions are never chosen. It
    offers what the search (``agents.training.search.SearchAgent``) asks of a policy, as
    ``agents.training.policy.Policy`` does: ``probabilities``, ``greedy`` and ``belief``."""

    pure = True

    def __init__(self, actor: NumpyActor, name: str = "policy"):
        self.actor, self.name = actor, name

    def _inputs(self, observation, action_mask):
        o, m = np.asarray(observation, np.float32), np.asarray(action_mask).astype(bool)
        single = o.ndim == 1
        o, m = (o[None], m[None]) if single else (o, m)
        if o.shape[1:] != (OBS_SIZE,) or m.shape != (len(o), NUM_ACTIONS):
            raise ValueError(
                f"expected observations (B, {OBS_SIZE}) and masks (B, {NUM_ACTIONS}); got {o.shape} and {m.shape}"
            )
        if not m.any(1).all():
            raise ValueError("every observation needs at least one legal action (a mask is all false)")
        return o, m, single

    def act(self, observation, action_mask, deterministic: bool = True):
        if not deterministic:
            raise ValueError("NumpyPolicy plays greedily only (deterministic=True)")
        o, m, single = self._inputs(observation, action_mask)
        out = self.greedy(o, m)
        return int(out[0]) if single else out

    def greedy(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``(B,)`` the greedy action of each of a batch of observations."""
        return np.where(masks, self.actor.logits(observations), MASKED_LOGIT).argmax(1)

    def probabilities(self, observation, action_mask) -> np.ndarray:
        """The policy's probability of each action (0 for illegal ones): ``(108,)`` for one
        observation, ``(B, 108)`` for a batch."""
        o, m, single = self._inputs(observation, action_mask)
        x = np.where(m, self.actor.logits(o).astype(np.float64), -np.inf)
        e = np.exp(x - x.max(1, keepdims=True))
        out = (e / e.sum(1, keepdims=True)).astype(np.float32)
        return out[0] if single else out

    def belief(self, observations: np.ndarray) -> np.ndarray | None:
        """``(B, 52)``: P(the opponent holds each card), ``None`` without a belief net."""
        return None if self.actor.belief is None else self.actor.belief_probabilities(observations)
