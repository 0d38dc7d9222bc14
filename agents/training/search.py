"""Search at decision time: a trained policy that looks ahead in sampled worlds.

``SearchAgent(policy, worlds=8, candidates=4)`` chooses, in each game, among the
policy's ``candidates`` likeliest legal actions and every legal knock (``knocks=True``):
it deals ``worlds`` worlds consistent
with what the player has seen (``ginenv.worlds.resample_hidden``; the opponent's unseen
cards drawn by the belief net's odds where the policy has one), plays each candidate
in each world and then the rest of the hand with the policy, greedy, for both seats (on
the batched engine: all games x worlds x candidates in one batch), and takes the
candidate whose hands end with the best mean points, own minus opponent's, where its
gain over the policy's own choice is more than 2 standard errors (paired over the
worlds). A game with one candidate is not searched.

Budgets: ``worlds`` is the most worlds a move; with ``seconds`` the search is anytime, it
deals them in chunks of ``chunk`` until the time is spent (at least one chunk), so a
fast machine searches more (a time budget is then not a function of the position alone:
use a worlds budget where games must replay). A deepening budget (``most``, ``+search=W-M``
in the spec) deals W worlds, then as many again, and again, up to M, to the games where a
candidate gains over the policy's choice more than ``UNSURE`` (one) standard error but not
yet ``Z``: more worlds where the choice is open, not where it is settled; a worlds budget
still (the same worlds for the same observation). Rollouts (``rollouts``): ``greedy`` (the
policy for both seats), or ``patient`` (the searching seat never knocks short of gin in
its rollouts, the other seat plays the policy: the setting the strongest Monte Carlo bot
found best). The agent spec ``<checkpoint>+search`` (the default budget, the expert
level's: ``EXPERT_BUDGET``), ``+search=W`` (W worlds), ``+search=0.5s`` (anytime, half a
second a move, up to 512 worlds) and ``:patient`` after either (``+search=64:patient``)
build one (``make_agent``).

Worlds that lean (``lean``, ``:lean=M`` in the spec, after ``:vs=``): each world is the
best of M deals for the opponent's hand, the one where it holds the least deadwood
(``resample_hidden``'s ``lean``): hands drawn card by card from the belief meld less than
the hands players keep, so without it the opponent looks weaker than it is and knocks
look safer than they are.

The opponent's moves in the rollouts (``opponent``): the policy's, or a baseline's
(``:vs=marjj`` after the rollouts in the spec: ``+search=64:patient:vs=marjj``), a model
of the player across the table.

Values (``value``): ``points`` (the hand's points, own minus the opponent's, bonuses
included) or ``match`` (``:match`` in the spec; in match mode): the chance of winning
the match after the hand, from the scores it leaves (``match_equity``: a race to the
target where each hand is a coin flip for points drawn as between equal bots,
``HAND_POINTS``), so that near the end of a match a hand's points count for what they
do to the match. Hand-mode games are valued by points either way.

It needs the game's state besides the observation (``reads_state``: the evaluator
passes it): it reads it only through ``resample_hidden``, which deals anew everything
the player cannot see, so its choice never depends on hidden cards (a test checks
that two states differing only in them give the same choices).
"""

from __future__ import annotations

import functools
import hashlib
import re
import time

import numpy as np

from ginenv import actions as A
from ginenv import core
from ginenv.baselines import BASELINES, make_baseline
from ginenv.observation import observe
from ginenv.worlds import MAX_LEAN, resample_hidden

MAX_MOVES = 400  # per rollout: far beyond any hand (a hand has at most ~70 moves)
MIN_PRIOR = 0.02  # a candidate the policy gives less is not searched
Z = 2.0  # the search overrides the policy only where the gain is this many standard errors
#: A deepening budget (``W-M``) deals more worlds to a game while one of its candidates gains
#: over the policy's choice more than this many standard errors but not yet ``Z``.
UNSURE = 1.0
MAX_WORLDS = 512  # the most worlds one move may deal
ROLLOUTS = ("greedy", "patient")
VALUES = ("points", "match")
#: The baselines that may play the opponent's moves in the rollouts (``:vs=NAME``): the
#: deterministic ones.
ROLLOUT_OPPONENTS = tuple(name for name in BASELINES if name != "random")
#: The match valuation's model of a hand between equal bots (``python bench/hand_outcomes.py``:
#: 4000 hands of the shipped bot against itself, seed 0): the share of dead hands, then of
#: the winner's points in bands of ``BAND`` (1-5, 6-10, ..., the last from 96 up), each
#: band counted at its middle (3, 8, ...).
BAND = 5
HAND_POINTS = (
    0.0625,
    *(0.0788, 0.1027, 0.0757, 0.0800, 0.0730, 0.1978, 0.1440, 0.0745, 0.0385, 0.0253),
    *(0.0180, 0.0132, 0.0067, 0.0045, 0.0022, 0.0010, 0.0008, 0.0003, 0.0000, 0.0005),
)
#: The default budget (a bare ``+search``) and the "expert" level's (the agent spec
#: ``expert``, the page's and the terminal's level): within 0.5 s median and 3 s at the
#: 99th percentile a move on one core (docs/training.md, "Search at decision time").
EXPERT_BUDGET = "64:patient:lean=3:match"


class SearchAgent:
    reads_state = True
    pure = True  # seeded from the observation at every move (agents.base)

    def __init__(
        self,
        policy,
        worlds: int = 16,
        candidates: int = 4,
        seed: int = 0,
        seconds: float | None = None,
        chunk: int = 16,
        rollouts: str = "greedy",
        knocks: bool = True,
        value: str = "points",
        opponent: str | None = None,
        lean: int = 1,
        most: int | None = None,
    ):
        for name, v, top in (("worlds", worlds, MAX_WORLDS), ("candidates", candidates, 256), ("chunk", chunk, 512)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= top:
                raise ValueError(f"search {name} must be an integer from 1 to {top}, got {v!r}")
        if seconds is not None and (
            isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= 600
        ):
            raise ValueError(f"search seconds must be a number of seconds above 0 and at most 600, got {seconds!r}")
        if rollouts not in ROLLOUTS:
            raise ValueError(f"search rollouts must be one of {', '.join(ROLLOUTS)}, got {rollouts!r}")
        if value not in VALUES:
            raise ValueError(f"search value must be one of {', '.join(VALUES)}, got {value!r}")
        if opponent is not None and opponent not in ROLLOUT_OPPONENTS:
            raise ValueError(
                f"search opponent must be one of {', '.join(ROLLOUT_OPPONENTS)} (or none: the policy), got {opponent!r}"
            )
        if isinstance(lean, bool) or not isinstance(lean, (int, np.integer)) or not 1 <= lean <= MAX_LEAN:
            raise ValueError(f"search lean must be an integer from 1 to {MAX_LEAN}, got {lean!r}")
        if most is not None and (
            isinstance(most, bool) or not isinstance(most, (int, np.integer)) or not worlds <= most <= MAX_WORLDS
        ):
            raise ValueError(
                f"search most (the deepening budget's cap) must be an integer from worlds ({worlds}) "
                f"to {MAX_WORLDS}, got {most!r}"
            )
        if most is not None and seconds is not None:
            raise ValueError("search takes a time budget (seconds) or a deepening one (most), not both")
        self.most = int(most) if most is not None else int(worlds)
        self.value, self.opponent, self.lean = value, opponent, int(lean)
        self._opponent = make_baseline(opponent) if opponent else None
        self.policy, self.worlds, self.candidates = policy, int(worlds), int(candidates)
        self.seconds, self.chunk, self.rollouts, self.knocks = seconds, int(chunk), rollouts, bool(knocks)
        self.seed = core.check_seed(seed, "SearchAgent's seed")
        budget = f"{seconds:g}s" if seconds is not None else str(self.worlds)
        budget += f"-{self.most}" if self.most > self.worlds else ""
        self.name = (
            f"{policy.name}+search={budget}"
            + (":patient" if rollouts == "patient" else "")
            + (f":vs={opponent}" if opponent else "")
            + (f":lean={self.lean}" if self.lean > 1 else "")
            + (":match" if value == "match" else "")
        )
        self.pure = seconds is None  # a time budget depends on the machine's speed
        self.last_worlds = 0  # the worlds the last searched move dealt (a time budget's count)
        self.clock = time.perf_counter  # the time budget's clock

    def act(self, observations, action_masks, state: core.State | None = None, seats=None):
        if state is None or seats is None:
            raise ValueError(
                f"{self.name} searches the game: it needs act(obs, mask, state=..., seats=...) "
                "(the evaluator passes them); use the plain checkpoint where only observations are at hand"
            )
        probs = self.policy.probabilities(observations, action_masks)
        seats = core.check_players(seats, 1 if probs.ndim == 1 else len(probs), name="seats")
        self._seed_worlds(observations)
        single = probs.ndim == 1
        probs = probs[None] if single else probs
        masks = np.asarray(action_masks, bool).reshape(probs.shape)
        cand, legal = self._candidates(probs, masks)
        choice = cand[:, 0].copy()
        todo = np.flatnonzero(legal.sum(1) > 1)
        if todo.size:
            v = self._search(state.select(todo), seats[todo], observations, todo, cand[todo])
            gain, sure = _paired(v, legal[todo])
            choice[todo] = cand[todo, np.argmax(np.where(sure, gain, -np.inf), 1)]
        return int(choice[0]) if single else choice.astype(np.int64)

    def _seed_worlds(self, observations) -> None:
        """The worlds' generator: a function of the seed and the observations alone, so a
        replayed game searches the same worlds whatever else the agent played before."""
        digest = hashlib.blake2b(np.ascontiguousarray(observations, np.float32).tobytes(), digest_size=8).digest()
        self.rng = np.random.default_rng([self.seed, int.from_bytes(digest, "little")])

    def unit(self, state: core.State) -> str:
        """What a rollout in ``state``'s games is worth: ``"match"`` (the chance of winning
        the match after the hand) where the search values by the match and the games are a
        match, else ``"points"`` (the hand's points, own minus the opponent's)."""
        return "match" if self.value == "match" and state.mode == "match" else "points"

    def analyse(self, observation, action_mask, state: core.State, seat: int, moves=()) -> list:
        """One game's search laid open (the API's hint with search): the moves it weighs
        (its usual candidates and ``moves``), each as ``{"id", "probability" (the
        policy's), "value" (the mean over the worlds of what the hand after it is worth,
        in ``"unit"``: see ``unit``), "se" (its standard error), "gain" (over the policy's
        choice, paired), "chosen", "unit"}``, the chosen move first, then by value. Searched
        whatever the number of candidates; the worlds as ``act``'s (the same seed and
        observation)."""
        obs = np.asarray(observation, np.float32).reshape(1, -1)
        mask = np.asarray(action_mask, bool).reshape(1, -1)
        probs = self.policy.probabilities(obs, mask).reshape(1, -1)
        self._seed_worlds(obs)
        cand, legal = self._candidates(probs, mask)
        extra = [int(a) for a in moves if mask[0, int(a)] and int(a) not in cand[0, legal[0]]]
        ids = np.array(list(cand[0, legal[0]]) + extra, np.int64)[None]
        seats = core.check_players(np.array([seat]), 1, name="seats")
        v = self._search(state, seats, obs, np.arange(1), ids)[0]  # (W, K)
        gain, sure = _paired(v[None], np.ones(ids.shape, bool))
        pick = int(np.argmax(np.where(sure, gain, -np.inf), 1)[0])
        mean, se = (x[0] for x in _mean_se(v[None]))
        out = [
            {
                "id": int(a),
                "probability": float(probs[0, a]),
                "value": float(mean[i]),
                "se": float(se[i]),
                "gain": float(gain[0, i]),
                "chosen": i == pick,
                "unit": self.unit(state),
            }
            for i, a in enumerate(ids[0])
        ]
        return sorted(out, key=lambda m: (not m["chosen"], -m["value"]))

    def _candidates(self, probs, masks):
        """``(B, K)`` candidates, the policy's choice first, then its likeliest moves with
        at least ``MIN_PRIOR`` (``candidates`` in all) and every legal knock; ``(B, K)``
        which of them are real (the rest repeat the first)."""
        k = self.candidates
        order = np.argsort(-probs, 1, kind="stable")
        top = order[:, :k]
        p = np.take_along_axis(probs, top, 1)
        keep = (p > 0) & ((p >= MIN_PRIOR) | (np.arange(k) == 0))
        want = np.zeros(masks.shape, bool)
        np.put_along_axis(want, top, keep, 1)
        if self.knocks:
            want[:, A.KNOCK : A.DRAW_STOCK] |= masks[:, A.KNOCK : A.DRAW_STOCK]
            want[:, A.BIG_GIN] |= masks[:, A.BIG_GIN]
        want &= masks
        width = int(want.sum(1).max())
        ranked = np.where(np.take_along_axis(want, order, 1), order, -1)  # the wanted, likeliest first
        cand = np.full((len(probs), width), -1, np.int64)
        for i in range(len(probs)):  # small: the wanted moves of each game, in the policy's order
            got = ranked[i][ranked[i] >= 0]
            cand[i, : got.size] = got
        legal = cand >= 0
        cand = np.where(legal, cand, cand[:, :1])
        return cand, legal

    def _search(self, state, seats, observations, rows, cand) -> np.ndarray:
        """``(G, W, K)`` values over the worlds dealt: ``worlds`` at once, or chunks of
        ``chunk`` while ``seconds`` last (at least one), or, deepening (``most``), twice
        the worlds again for the games still unsure (``_unsure``) up to ``most``; a game
        dealt fewer worlds than another has NaN in the rest."""
        if self.seconds is None:
            out = self._values(state, seats, observations, rows, cand, self.worlds)
            if self.most > self.worlds:
                out = self._deepen(out, state, seats, observations, rows, cand)
        else:
            start, parts, dealt = self.clock(), [], 0
            while dealt < self.worlds and (not parts or self.clock() - start < self.seconds):
                n = min(self.chunk, self.worlds - dealt)
                parts.append(self._values(state, seats, observations, rows, cand, n))
                dealt += n
            out = np.concatenate(parts, 1)
        self.last_worlds = int((~np.isnan(out[:, :, 0])).sum(1).max())
        return out

    def _deepen(self, first, state, seats, observations, rows, cand) -> np.ndarray:
        """``first`` ``(G, W, K)`` grown to ``(G, most, K)``: while a game is unsure and
        below ``most`` worlds, as many worlds again (the games still unsure all hold the
        same number), the rest NaN."""
        g, w, k = first.shape
        out = np.full((g, self.most, k), np.nan)
        out[:, :w] = first
        active = np.arange(g)
        while w < self.most:
            active = active[_unsure(out[active, :w])]
            if not active.size:
                break
            n = min(w, self.most - w)
            out[active, w : w + n] = self._values(
                state.select(active), seats[active], observations, rows[active], cand[active], n
            )
            w += n
        return out

    def _values(self, state: core.State, seats, observations, rows, cand, w: int) -> np.ndarray:
        """``(G, w, k)``: the points (own minus opponent's) of the hand that follows each
        candidate in each of ``w`` sampled worlds."""
        g, k = len(rows), cand.shape[1]
        per_world = np.repeat(np.arange(g), w)
        weights = None
        belief = self.policy.belief(np.asarray(observations, np.float32).reshape(-1, observations.shape[-1])[rows])
        if belief is not None:
            p = np.clip(belief, 1e-3, 1 - 1e-3)
            weights = (p / (1 - p))[per_world]
        worlds = resample_hidden(state.select(per_world), seats[per_world], self.rng, weights, self.lean)
        s = worlds.select(np.repeat(np.arange(g * w), k))
        first = np.tile(cand, (1, w)).reshape(-1)  # row (game, world, candidate)
        seat = np.repeat(seats, w * k).astype(np.int64)
        value = rollout(
            self.policy,
            s,
            first,
            seat,
            patient=self.rollouts == "patient",
            match=self.unit(state) == "match",
            opponent=self._opponent,
        )
        return value.reshape(g, w, k)


def _mean_se(x: np.ndarray):
    """The mean over axis 1 of ``x`` ``(G, W, K)`` and its standard error, NaN (worlds a
    game was not dealt) left out; the error infinite where a game has one world."""
    n = (~np.isnan(x)).sum(1)
    mean = np.nansum(x, 1) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(np.nansum((x - mean[:, None]) ** 2, 1) / (n - 1) / n)
    return mean, np.where(n > 1, se, np.inf)


def _paired(v: np.ndarray, legal: np.ndarray):
    """Each candidate's mean gain over the policy's choice (column 0), paired over the
    worlds of ``v`` ``(G, W, K)`` (NaN: a world not dealt), and whether it is sure: more
    than ``Z`` standard errors (the policy's choice always is)."""
    gain, se = _mean_se(v - v[:, :, :1])
    sure = (gain > Z * se) & legal
    sure[:, 0] = True
    return gain, sure


def _unsure(v: np.ndarray) -> np.ndarray:
    """``(G,)``: the games of ``v`` ``(G, W, K)`` with a candidate that gains over the
    policy's choice more than ``UNSURE`` standard errors but not ``Z``: more worlds may make
    it sure (a candidate that repeats the first gains exactly 0 and never is)."""
    gain, se = _mean_se(v - v[:, :, :1])
    return ((gain > UNSURE * se) & (gain <= Z * se)).any(1)


def rollout(
    policy,
    s: core.State,
    first: np.ndarray,
    seat: np.ndarray,
    patient: bool = False,
    match: bool = False,
    opponent=None,
) -> np.ndarray:
    """Play ``first`` in each game of ``s``, then the policy's greedy moves for both seats
    to the end of the hand; returns each game's hand points (bonuses included), ``seat``'s
    minus the other's. ``patient``: ``seat`` never knocks short of gin in the rollout (a
    knock the policy picks becomes the discard of the same card). ``opponent`` (a batched
    agent, e.g. a baseline): plays the other seat's moves instead of the policy. ``match`` (match mode):
    instead, ``seat``'s chance of winning the match after the hand (1 or 0 where the hand
    ends it, 0.5 where the hand cap cuts it, else ``match_equity`` of the scores)."""
    n = s.batch_size
    value = np.zeros(n)
    live = np.ones(n, bool)
    actions = first.astype(np.int64)
    rows = np.arange(n)
    match = match and s.mode == "match"
    equity = match_equity(s.rules.target) if match else None
    for _ in range(MAX_MOVES):
        core.step(s, actions)
        ended = live & s.hand_ended
        if ended.any() and match:
            e, me = np.flatnonzero(ended), seat[ended]
            mine, theirs = s.scores[e, me], s.scores[e, 1 - me]
            over = s.done[e]
            cut = over & (s.winner[e] < 0)
            value[e] = np.where(
                over,
                np.where(cut, 0.5, (s.winner[e] == me).astype(np.float64)),
                equity[np.minimum(mine, s.rules.target - 1), np.minimum(theirs, s.rules.target - 1)],
            )
        elif ended.any():
            pts = (s.hand_points + s.bonus_points).astype(np.float64)
            value[ended] = pts[ended, seat[ended]] - pts[ended, 1 - seat[ended]]
        live &= ~(s.hand_ended | s.done)
        idx = np.flatnonzero(live)
        if not idx.size:
            break
        actions = np.full(n, core.SKIP, np.int64)
        obs, mask = observe(s, s.current)[idx], core.legal_action_mask(s)[idx]
        if opponent is None:
            actions[idx] = policy.greedy(obs, mask)
        else:
            theirs = s.current[idx] != seat[idx]
            if (~theirs).any():
                actions[idx[~theirs]] = policy.greedy(obs[~theirs], mask[~theirs])
            if theirs.any():
                actions[idx[theirs]] = opponent.act(obs[theirs], mask[theirs])
        if patient:
            own = live & (s.current == seat) & A.is_knock(actions)
            own &= s._after_discard[rows, np.where(own, A.card_of(actions), 0)] > 0  # short of gin
            actions[own] = A.card_of(actions[own]) + A.DISCARD
    return value


@functools.lru_cache(maxsize=8)
def match_equity(target: int) -> np.ndarray:
    """``(target, target)``: the chance that a player with ``a`` points wins the match
    against one with ``b`` (both short of ``target``), where each hand is won by either at
    even odds for the points ``HAND_POINTS`` gives (a band at its middle) and dead hands,
    which change no score, are left out. Filled by anti-diagonals from the end: each
    state's chance is the mean over the next hand's outcomes."""
    shares = np.asarray(HAND_POINTS[1:], np.float64)
    shares = shares / shares.sum()
    gains = BAND * np.arange(len(shares)) + (BAND + 1) // 2
    size = target + int(gains.max())
    e = np.zeros((size, size))
    e[target:, :target] = 1.0  # the player reached the target first
    for total in range(2 * target - 2, -1, -1):
        a = np.arange(max(0, total - target + 1), min(total, target - 1) + 1)
        b = total - a
        up = e[a[:, None] + gains, b[:, None]]  # the player wins the hand
        down = e[a[:, None], b[:, None] + gains]  # the opponent does
        e[a, b] = 0.5 * (up + down) @ shares
    return e[:target, :target]


_BUDGET = re.compile(
    r"^(?:(?P<worlds>\d+)(?:-(?P<most>\d+))?|(?P<seconds>\d+(?:\.\d+)?|\.\d+)s)"
    r"(?::(?P<rollouts>patient|greedy))?(?::vs=(?P<opponent>[a-z_]+))?(?::lean=(?P<lean>\d+))?"
    r"(?::(?P<value>match|points))?$"
)


def parse_search(spec: str):
    """``"<path>+search[=BUDGET][:patient][:match]"`` -> ``(path, options)`` for
    ``SearchAgent`` (BUDGET: ``W`` worlds, ``W-M``: W deepening up to M, or ``0.5s``:
    anytime, up to 512 worlds;
    ``:patient`` its rollouts, ``:match`` its valuation); else ``None``. ``+search``
    alone is the default budget, the expert level's (``EXPERT_BUDGET``); options without
    a budget (``+search:patient``) search 16 worlds."""
    path, sep, option = str(spec).rpartition("+")
    if not sep or not (option == "search" or option.startswith(("search=", "search:"))):
        return None
    if not path.strip():
        raise ValueError(f"agent spec {spec!r}: name a checkpoint before +search, e.g. shipped+search")
    text = option[len("search") :].lstrip("=") or EXPERT_BUDGET  # bare: the default budget, the expert's
    if text.startswith(":"):
        text = "16" + text
    m = _BUDGET.match(text)
    worlds = int(m["worlds"]) if m and m["worlds"] else None
    most = int(m["most"]) if m and m["most"] else None
    seconds = float(m["seconds"]) if m and m["seconds"] else None
    if (
        not m
        or (worlds is not None and not 1 <= worlds <= MAX_WORLDS)
        or (most is not None and not worlds < most <= MAX_WORLDS)
        or (seconds is not None and not 0 < seconds <= 600)
        or (m["opponent"] and m["opponent"] not in ROLLOUT_OPPONENTS)
        or (m["lean"] and not 1 <= int(m["lean"]) <= MAX_LEAN)
    ):
        raise ValueError(
            f"agent spec {spec!r}: +search=W needs W, the worlds, an integer from 1 to {MAX_WORLDS} (or W-M: "
            f"W worlds, deepening up to M, W < M <= {MAX_WORLDS}), or a time such as 0.5s (above 0, at most 600), "
            "optionally followed by :patient, then :vs=NAME (the opponent "
            f"in the rollouts: {', '.join(ROLLOUT_OPPONENTS)}), then :lean=M (the best of M deals for the "
            f"opponent's hand, 1 to {MAX_LEAN}), then :match"
        )
    options = {"worlds": worlds} if worlds is not None else {"worlds": MAX_WORLDS, "seconds": seconds}
    if most is not None:
        options["most"] = most
    if m["rollouts"]:
        options["rollouts"] = m["rollouts"]
    if m["opponent"]:
        options["opponent"] = m["opponent"]
    if m["lean"]:
        options["lean"] = int(m["lean"])
    if m["value"]:
        options["value"] = m["value"]
    return path, options
