"""The network's contract without torch: ``NetworkSpec`` (what ``policy.json`` records
under ``network``), the masked logit, and the fixed card tables the actors read (each
card's rank and suit, and its neighbours). ``agents.training.network`` builds the torch
network from them; ``agents.training.numpy_actor`` runs a trained actor with numpy alone
(the Kaggle bundle). Imports numpy and ``ginenv`` only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ginenv.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from ginenv.observation import PLANE

ARCHITECTURES = ("cards", "belief", "mlp")
ACTIVATION_NAMES = ("relu", "tanh", "gelu")
#: What an illegal action's logit is set to before the softmax (``masked_logits``).
MASKED_LOGIT = -1e8


@dataclass(frozen=True)
class NetworkSpec:
    """The network's shape: what ``policy.json`` records under ``network``."""

    hidden_sizes: tuple = (128, 128)
    """Hidden layer widths of the actor's trunk (and belief net) and of the critic."""
    activation: str = "relu"
    """relu, tanh or gelu."""
    architecture: str = "cards"
    """The actor: ``cards``, ``belief`` or ``mlp`` (see the module docstring)."""
    privileged_critic: bool = True
    """The critic also sees the opponent's hand (training only; the actor never does)."""
    deadwood_head: bool = False
    """A training-only linear head on the actor's trunk that predicts the opponent's
    deadwood (``cards`` and ``belief`` actors; the config's ``deadwood_aux_coef``): its
    loss shapes the trunk, the trained policy never reads it."""

    def __post_init__(self):
        object.__setattr__(self, "hidden_sizes", tuple(self.hidden_sizes))
        problems = []
        if not self.hidden_sizes or any(
            isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in self.hidden_sizes
        ):
            problems.append(
                f"hidden_sizes must be a non-empty list of positive integers, got {list(self.hidden_sizes)}"
            )
        if self.activation not in ACTIVATION_NAMES:
            problems.append(f"activation must be one of {', '.join(ACTIVATION_NAMES)}, got {self.activation!r}")
        if self.architecture not in ARCHITECTURES:
            problems.append(f"architecture must be one of {', '.join(ARCHITECTURES)}, got {self.architecture!r}")
        if not isinstance(self.privileged_critic, bool):
            problems.append(f"privileged_critic must be true or false, got {self.privileged_critic!r}")
        if not isinstance(self.deadwood_head, bool):
            problems.append(f"deadwood_head must be true or false, got {self.deadwood_head!r}")
        elif self.deadwood_head and self.architecture == "mlp":
            problems.append("deadwood_head needs the cards or belief actor (a trunk to read)")
        if problems:
            raise ValueError("bad network spec: " + "; ".join(problems))

    def to_dict(self) -> dict:
        return {**asdict(self), "hidden_sizes": list(self.hidden_sizes)}

    @classmethod
    def from_dict(cls, data) -> NetworkSpec:
        """A spec from ``policy.json``'s ``network``: missing keys take the defaults; an
        unknown key is refused, but for ``critic_lookahead`` at 0, which older files
        wrote (the variant it set has left the product; see docs/experiments.md)."""
        if not isinstance(data, dict):
            raise ValueError(f"the network spec must be a mapping, got {type(data).__name__}")
        data = dict(data)
        if data.get("critic_lookahead", 0) != 0:
            raise ValueError(
                "this network has a lookahead critic (critic_lookahead "
                f"{data['critic_lookahead']}), a variant this version no longer builds"
            )
        data.pop("critic_lookahead", None)
        names = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown network spec key(s) {', '.join(unknown)}; valid: {', '.join(sorted(names))}")
        return cls(**data)


def card_identity() -> np.ndarray:
    """(52, 17) float32: the one-hot rank and suit of each card id."""
    ident = np.zeros((NUM_CARDS, NUM_RANKS + NUM_SUITS), np.float32)
    for c in range(NUM_CARDS):
        ident[c, c % NUM_RANKS] = 1.0
        ident[c, NUM_RANKS + c // NUM_RANKS] = 1.0
    return ident


#: The planes whose neighbourhoods the ``belief`` actor reads, in the order of its
#: features (see ``agents.training.network``: the ``belief`` actor).
NEIGHBOUR_PLANES = tuple(
    PLANE[name]
    for name in (
        "own_hand",
        "rest_of_pile",
        "opponent_took",
        "opponent_discarded",
        "unseen",
        "own_discards",
        "top_discard",
    )
)
NUM_NEIGHBOUR_FEATURES = 3 * len(NEIGHBOUR_PLANES)
UNSEEN_PLANE, OPPONENT_TOOK_PLANE = PLANE["unseen"], PLANE["opponent_took"]


def relations() -> np.ndarray:
    """(52, 3 * 52) float32: for each relation (same rank, same suit one rank away, same
    suit two ranks away), 1 where card i is related to card j."""
    rel = np.zeros((3, NUM_CARDS, NUM_CARDS), np.float32)
    for i in range(NUM_CARDS):
        for j in range(NUM_CARDS):
            si, ri, sj, rj = i // NUM_RANKS, i % NUM_RANKS, j // NUM_RANKS, j % NUM_RANKS
            rel[0, i, j] = float(ri == rj and i != j)
            rel[1, i, j] = float(si == sj and abs(ri - rj) == 1)
            rel[2, i, j] = float(si == sj and abs(ri - rj) == 2)
    return rel.transpose(1, 0, 2).reshape(NUM_CARDS, 3 * NUM_CARDS)
