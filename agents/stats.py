"""The statistics every report shares (the evaluator, the OpenSpiel bridge, the
exploitability and league reports): Wilson intervals for win rates and Bradley-Terry
ratings from pairwise results. Pure numpy; imports nothing else of ``agents``."""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95):
    """95% Wilson score interval for a proportion (draws may count half)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def bradley_terry(names, results, iterations: int = 500):
    """Strengths from pairwise results ``{(i, j): (wins_i, wins_j, draws)}``, Elo scale."""
    k = len(names)
    w = np.zeros((k, k))
    for (i, j), (wi, wj, d) in results.items():
        w[i, j] += wi + 0.5 * d
        w[j, i] += wj + 0.5 * d
    games = w + w.T
    p = np.ones(k)
    for _ in range(iterations):
        total = w.sum(1)
        denom = np.array([sum(games[i, j] / (p[i] + p[j]) for j in range(k) if j != i) for i in range(k)])
        p = np.where(denom > 0, (total + 1e-3) / np.maximum(denom, 1e-12), p)  # a tiny prior keeps 0 wins finite
        p /= np.exp(np.mean(np.log(p)))
    return 1500 + 400 * np.log10(p)


#: How hands end (``ginenv.core.HAND_KIND_NAMES``, repeated here since this module imports
#: nothing of the game): the kinds a knock can have, gin and big gin apart.
_KNOCK_KINDS = ("knock", "undercut", "tie")


def hand_ends(counts, kind_names) -> dict:
    """Per side, how it won its hands and how its knocks fared, from ``counts`` ``(3, K)``:
    the hands each side ended (row 0: side a knocked, row 1: side b, row 2: nobody, a dead
    or truncated hand) by how they ended (``kind_names``, K of them). Each side gets
    ``won_by_knock`` (its knock scored), ``won_by_undercut`` (it undercut the other's knock),
    ``won_by_gin``, ``won_by_big_gin``, ``knocks`` (its knocks short of gin), ``undercut``
    (of those, the ones undercut) and ``undercut_rate`` (undercut / knocks; 0 without a
    knock)."""
    counts = np.asarray(counts)
    col = {name: k for k, name in enumerate(kind_names)}
    out = {}
    for side, other in (("a", 1), ("b", 0)):
        me = 1 - other
        knocks = int(sum(counts[me, col[k]] for k in _KNOCK_KINDS))
        undercut = int(counts[me, col["undercut"]])
        out[side] = {
            "won_by_knock": int(counts[me, col["knock"]]),
            "won_by_undercut": int(counts[other, col["undercut"]]),
            "won_by_gin": int(counts[me, col["gin"]]),
            "won_by_big_gin": int(counts[me, col["big_gin"]]),
            "knocks": knocks,
            "undercut": undercut,
            "undercut_rate": undercut / knocks if knocks else 0.0,
        }
    return out
