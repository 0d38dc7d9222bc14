"""Expert iteration (an experiment): the search's choices as the policy's targets.

``collect``: games of ``<policy>+search`` against an opponent, each of the searching
seat's decisions kept with the search's choice (``label``) and whether it searched (more
than one candidate). ``distill``: the policy's actor trained on those positions, cross
entropy to the search's choice where it searched, saved as a checkpoint beside the
policy's own metadata.

    python -m agents.training.expert collect CKPT+search=16:patient:lean=3:match marjj \
        --matches 400 --seed 11 --out data/a.npz
    python -m agents.training.expert distill CKPT data/a.npz data/b.npz --out checkpoints/x
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agents.evaluate import tally
from agents.registry import make_agent
from agents.training import checkpoint
from agents.training.network import masked_logits
from agents.training.policy import load_policy
from ginenv.rules import PRESETS


class Recorder:
    """A searching agent that keeps every decision it is asked for."""

    reads_state = True
    pure = True

    def __init__(self, search):
        self.search, self.name = search, search.name
        self.obs, self.mask, self.label, self.prior = [], [], [], []

    def act(self, observations, action_masks, state=None, seats=None):
        choice = np.atleast_1d(self.search.act(observations, action_masks, state=state, seats=seats))
        self.obs.append(np.asarray(observations, np.float32).reshape(len(choice), -1).copy())
        self.mask.append(np.asarray(action_masks, bool).reshape(len(choice), -1).copy())
        self.label.append(choice.astype(np.int64))
        return choice if np.ndim(observations) > 1 else int(choice[0])

    def arrays(self) -> dict:
        obs, mask, label = (np.concatenate(x) for x in (self.obs, self.mask, self.label))
        probs = self.search.policy.probabilities(obs, mask)
        greedy = probs.argmax(1)
        searched = self.search._candidates(probs, mask)[1].sum(1) > 1  # as act: more than one candidate
        return {"obs": obs, "mask": mask, "label": label, "greedy": greedy, "searched": searched}


def collect(search_spec: str, opponent: str, matches: int, seed: int, out: str, rules: str = "standard") -> None:
    start = time.time()
    rec = Recorder(make_agent(search_spec, seed=seed))
    t = tally(rec, make_agent(opponent, seed=seed), matches, PRESETS[rules], seed, "match")
    data = rec.arrays()
    np.savez_compressed(out, **data)
    changed = (data["label"] != data["greedy"]).sum()
    print(
        f"{out}: {len(data['label'])} decisions, {int(data['searched'].sum())} searched, {int(changed)} changed; "
        f"wins {t['wins_a']}-{t['wins_b']}; {time.time() - start:.0f} s"
    )


def distill(
    base: str,
    files: list,
    out: str,
    lr: float = 3e-5,
    epochs: int = 4,
    batch: int = 512,
    seed: int = 0,
    changed_weight: float = 1.0,
) -> None:
    torch.manual_seed(seed)
    policy = load_policy(base)
    model = policy.model.train()
    parts = [np.load(f) for f in files]
    obs, mask, label, greedy, searched = (
        np.concatenate([p[k] for p in parts]) for k in ("obs", "mask", "label", "greedy", "searched")
    )
    keep = searched
    obs, mask, label, greedy = obs[keep], mask[keep], label[keep], greedy[keep]
    weight = np.where(label != greedy, changed_weight, 1.0).astype(np.float32)
    print(f"{len(label)} searched decisions, {int((label != greedy).sum())} where the search changed the move")
    x, m, y, w = (torch.from_numpy(a) for a in (obs, mask, label, weight))
    opt = torch.optim.Adam(model.actor.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        total = agree = 0.0
        for part in np.array_split(rng.permutation(len(x)), max(1, len(x) // batch)):
            idx = torch.from_numpy(part)
            raw, _ = model.actor_with_aux(x[idx])
            logits = masked_logits(raw, m[idx])
            loss = (torch.nn.functional.cross_entropy(logits, y[idx], reduction="none") * w[idx]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(part)
            agree += (logits.argmax(-1) == y[idx]).float().sum().item()
        print(f"epoch {epoch + 1}: loss {total / len(x):.4f}  agrees with the search {agree / len(x):.4f}")
    meta = {k: v for k, v in policy.meta.items() if k not in ("spec", "sha256", checkpoint.JSON_SUM)}
    meta["distilled"] = {"from": base, "files": [str(f) for f in files], "lr": lr, "epochs": epochs}
    path = checkpoint.save_checkpoint(out, 1, model.eval(), meta)
    print(f"saved {path}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m agents.training.expert", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("search")
    c.add_argument("opponent")
    c.add_argument("--matches", type=int, default=200)
    c.add_argument("--seed", type=int, default=11)
    c.add_argument("--out", required=True)
    d = sub.add_parser("distill")
    d.add_argument("base")
    d.add_argument("files", nargs="+")
    d.add_argument("--out", required=True)
    d.add_argument("--lr", type=float, default=3e-5)
    d.add_argument("--epochs", type=int, default=4)
    d.add_argument("--changed-weight", type=float, default=1.0)
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    if a.command == "collect":
        collect(a.search, a.opponent, a.matches, a.seed, a.out)
    else:
        distill(a.base, a.files, a.out, a.lr, a.epochs, changed_weight=a.changed_weight)


if __name__ == "__main__":
    main()
