"""Search at decision time (agents.training.search): its rollouts against a slow
one-game reference, its fairness (hidden cards never change its choice), the agent spec
and the evaluator."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import SHIPPED, load_policy, make_agent  # noqa: E402
from agents.evaluate import play  # noqa: E402
from agents.training.search import (  # noqa: E402
    EXPERT_BUDGET,
    HAND_POINTS,
    SearchAgent,
    _paired,
    match_equity,
    parse_search,
    rollout,
)
from ginenv import core  # noqa: E402
from ginenv.observation import observe  # noqa: E402
from ginenv.rules import Rules  # noqa: E402
from ginenv.worlds import resample_hidden  # noqa: E402


@pytest.fixture(scope="module")
def policy():
    return load_policy(SHIPPED)


def advanced(policy, n, seed, moves):
    s = core.init(n, Rules(), seed, mode="hand")
    for _ in range(moves):
        live = ~s.done
        a = np.full(n, core.SKIP, np.int64)
        idx = np.flatnonzero(live)
        a[idx] = policy.act(observe(s, s.current)[idx], core.legal_action_mask(s)[idx])
        core.step(s, a)
    return s.select(np.flatnonzero(~s.done))


def reference_value(policy, s, first, seat, patient=False, match=False, opponent=None):
    """One game, move by move: ``first``, then the policy's greedy moves for whoever is on
        move, until the hand ends; the hand's points, ``seat``'s minus the other's.
        ``patient``: ``seat`` never knocks short of gin after ``first``; ``opponent``: plays
    the other seat. ``match``: ``seat``'s
        chance of winning the match after the hand (``match_equity``, tested on its own)."""
    from ginenv import actions as A

    s = s.copy()
    action = int(first)
    while True:
        core.step(s, np.array([action]))
        if (s.hand_ended[0] or s.done[0]) and match:
            if s.done[0]:
                return 0.5 if s.winner[0] < 0 else float(s.winner[0] == seat)
            return float(match_equity(s.rules.target)[s.scores[0, seat], s.scores[0, 1 - seat]])
        if s.hand_ended[0] or s.done[0]:
            pts = s.hand_points[0] + s.bonus_points[0]
            return float(pts[seat] - pts[1 - seat])
        who = int(s.current[0])
        mover = opponent if opponent is not None and who != seat else policy
        action = int(np.asarray(mover.act(observe(s, np.array([who])), core.legal_action_mask(s))).reshape(-1)[0])
        if patient and who == seat and A.is_knock(action) and s._after_discard[0, A.card_of(action)] > 0:
            action = A.discard(A.card_of(action))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batched_rollouts_equal_one_game_at_a_time(policy, seed):
    s = advanced(policy, 24, seed, moves=int(np.random.default_rng(seed).integers(0, 30)))
    rng = np.random.default_rng(seed)
    mask = core.legal_action_mask(s)
    first = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    seat = s.current.astype(np.int64)
    got = rollout(policy, s.copy(), first, seat)
    want = [reference_value(policy, s.select([i]), first[i], seat[i]) for i in range(s.batch_size)]
    assert np.array_equal(got, np.array(want))
    assert (got != 0).any()


def test_hidden_cards_never_change_the_choice(policy):
    """Two states that differ only in what the player on move cannot see (the opponent's
    unseen cards, the stock's order) give the same observations and the same choices."""
    s = advanced(policy, 32, 5, moves=9)
    other = resample_hidden(s, s.current, np.random.default_rng(99))
    assert not np.array_equal(other.hands_of(1 - s.current), s.hands_of(1 - s.current))
    o1, o2 = observe(s, s.current), observe(other, other.current)
    assert np.array_equal(o1, o2)
    m = core.legal_action_mask(s)
    for options in ({"lean": 1}, {"lean": 3}, {"most": 24}):  # deepening deals from the worlds alone too
        a1 = SearchAgent(policy, worlds=6, seed=3, **options).act(o1, m, state=s, seats=s.current)
        a2 = SearchAgent(policy, worlds=6, seed=3, **options).act(o2, m, state=other, seats=other.current)
        assert np.array_equal(a1, a2)
    assert m[np.arange(len(a1)), a1].all()


def test_search_picks_legal_moves_and_sometimes_overrides_the_policy(policy):
    s = advanced(policy, 64, 8, moves=7)
    obs, mask = observe(s, s.current), core.legal_action_mask(s)
    a = SearchAgent(policy, worlds=12, seed=1).act(obs, mask, state=s, seats=s.current)
    assert mask[np.arange(len(a)), a].all()
    plain = policy.act(obs, mask)
    assert (a == plain).mean() > 0.5  # mostly the policy's own move ...
    probs = policy.probabilities(obs, mask)
    assert (probs[np.arange(len(a)), a] >= 0.02).all()  # ... and never one it all but rules out


def test_a_bare_search_is_the_expert_level():
    """``<bot>+search`` with no budget is the expert level: the budget its figures were
    measured with (docs/training.md), the same agent as the spec ``expert``."""
    bare, expert = make_agent("shipped+search"), make_agent("expert")
    assert bare.name == expert.name
    assert (bare.worlds, bare.rollouts, bare.lean, bare.value) == (64, "patient", 3, "match")
    assert make_agent("shipped+search:patient").worlds == 16  # options alone: 16 worlds


def test_the_spec_and_its_errors(policy):
    # A bare +search is the default budget: the expert level's, what its figures were measured with.
    expert = {"worlds": 64, "rollouts": "patient", "lean": 3, "value": "match"}
    assert EXPERT_BUDGET == "64:patient:lean=3:match"
    assert parse_search("checkpoints/champion+search") == ("checkpoints/champion", expert)
    assert parse_search("a+search=") == ("a", expert)
    assert parse_search("a/b+search=4") == ("a/b", {"worlds": 4})
    assert parse_search("shipped+search=0.5s") == ("shipped", {"worlds": 512, "seconds": 0.5})
    assert parse_search("a+search=64:patient") == ("a", {"worlds": 64, "rollouts": "patient"})
    assert parse_search("a+search:patient") == ("a", {"worlds": 16, "rollouts": "patient"})
    assert parse_search("a+search=8:patient:match") == ("a", {"worlds": 8, "rollouts": "patient", "value": "match"})
    assert parse_search("a+search=0.5s:match") == ("a", {"worlds": 512, "seconds": 0.5, "value": "match"})
    assert parse_search("a+search=8:patient:vs=marjj:match") == (
        "a",
        {"worlds": 8, "rollouts": "patient", "opponent": "marjj", "value": "match"},
    )
    assert parse_search("a+search=64:patient:lean=3") == ("a", {"worlds": 64, "rollouts": "patient", "lean": 3})
    assert parse_search("a+search=8:vs=marjj:lean=2:match") == (
        "a",
        {"worlds": 8, "opponent": "marjj", "lean": 2, "value": "match"},
    )
    assert parse_search("a+search=64-512:patient:lean=3") == (
        "a",
        {"worlds": 64, "most": 512, "rollouts": "patient", "lean": 3},
    )
    assert parse_search("checkpoints/champion") is None
    bad_specs = ("x+search=0", "x+search=abc", "x+search=1000", "x+search=0s", "x+search=5:lazy", "x+search=1.5")
    for bad in (
        *bad_specs,
        "x+search=8:match:patient",
        "x+search=8:match:match",
        "x+search=8:vs=random",
        "x+search=8:lean=0",
        "x+search=8:lean=65",
        "x+search=8:match:lean=2",
        "x+search=64-64",
        "x+search=64-32",
        "x+search=64-1024",
        "x+search=0.5s-2s",
    ):
        with pytest.raises(ValueError, match=r"\+search=W needs W"):
            parse_search(bad)
    agent = make_agent(f"{SHIPPED}+search=4", seed=2**127 + 5)  # a game's 128-bit seed, as the terminal gives
    assert isinstance(agent, SearchAgent) and agent.worlds == 4
    with pytest.raises(ValueError, match="needs act\\(obs, mask, state=..., seats=...\\)"):
        agent.act(np.zeros((1, 487), np.float32), np.ones((1, 108), bool))
    with pytest.raises(ValueError, match="worlds must be an integer from 1 to 512"):
        SearchAgent(policy, worlds=0)
    with pytest.raises(ValueError, match="rollouts must be one of greedy, patient"):
        SearchAgent(policy, rollouts="lazy")
    with pytest.raises(ValueError, match="value must be one of points, match"):
        SearchAgent(policy, value="hands")
    assert make_agent("shipped+search=8:patient:match").name.endswith("+search=8:patient:match")
    assert make_agent("shipped+search=8:vs=camper").name.endswith("+search=8:vs=camper")
    assert make_agent("shipped+search=8:patient:lean=3").name.endswith("+search=8:patient:lean=3")
    assert make_agent("shipped+search=64-512:patient:lean=3").name.endswith("+search=64-512:patient:lean=3")
    with pytest.raises(ValueError, match=r"most \(the deepening budget's cap\) must be an integer from worlds \(8\)"):
        SearchAgent(policy, worlds=8, most=4)
    with pytest.raises(ValueError, match="a time budget .* or a deepening one"):
        SearchAgent(policy, worlds=8, most=16, seconds=1.0)
    with pytest.raises(ValueError, match="lean must be an integer from 1 to 64"):
        SearchAgent(policy, lean=0)
    with pytest.raises(ValueError, match="opponent must be one of knock_early, gin_hunter, patient, camper, marjj"):
        SearchAgent(policy, opponent="random")
    timed = make_agent("shipped+search=0.2s:patient")
    assert timed.seconds == 0.2 and timed.rollouts == "patient" and not timed.pure


def test_the_evaluator_plays_it(policy):
    r = play(SearchAgent(policy, worlds=4), make_agent("knock_early"), 6, Rules(), seed=3, mode="hand")
    assert r["games"] == 6 and r["hands"] == 6


def test_a_game_against_the_searching_bot_replays_exactly(policy):
    """The person's game against ``+search``: the bot's moves are a function of what it
    sees, so a stored game rebuilt from the person's moves is the same game."""
    from agents.play.game import Game

    bot = SearchAgent(policy, worlds=4, seed=2)
    game = Game(bot, mode="hand", seed=11)
    rng = np.random.default_rng(0)
    while not game.over:
        game.play(int(rng.choice([a["id"] for a in game.legal_actions()])))
    again = Game(SearchAgent(policy, worlds=4, seed=2), mode="hand", seed=11)
    again.replay(game.actions)
    assert again.over and again.history == game.history
    assert any(m["player"] != "you" for m in game.history[0]["moves"])


@pytest.mark.parametrize("seed", [4, 5])
def test_patient_rollouts_equal_one_game_at_a_time(policy, seed):
    s = advanced(policy, 16, seed, moves=int(np.random.default_rng(seed).integers(0, 20)))
    rng = np.random.default_rng(seed)
    mask = core.legal_action_mask(s)
    first = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    seat = s.current.astype(np.int64)
    got = rollout(policy, s.copy(), first, seat, patient=True)
    want = [reference_value(policy, s.select([i]), first[i], seat[i], patient=True) for i in range(s.batch_size)]
    assert np.array_equal(got, np.array(want))
    greedy = rollout(policy, s.copy(), first, seat)
    assert not np.array_equal(got, greedy)  # the seat's knocks did change hands


def test_every_legal_knock_is_a_candidate_and_a_time_budget_deals_more_worlds_with_more_time(policy):
    from ginenv import actions as A

    for moves in range(9, 60, 2):  # a position where several games may knock
        s = advanced(policy, 96, 6, moves=moves)
        mask = core.legal_action_mask(s)
        knocking = np.flatnonzero(mask[:, A.KNOCK : A.DRAW_STOCK].any(1))
        if knocking.size >= 4:
            break
    assert knocking.size >= 4
    obs = observe(s, s.current)
    agent = SearchAgent(policy, worlds=4, seed=1)
    cand, legal = agent._candidates(policy.probabilities(obs, mask), mask)
    for i in knocking:
        got = set(cand[i][legal[i]].tolist())
        assert set((np.flatnonzero(mask[i, A.KNOCK : A.DRAW_STOCK]) + A.KNOCK).tolist()) <= got
        assert int(policy.act(obs[i], mask[i])) == cand[i, 0]  # the policy's own choice first
    plain = SearchAgent(policy, worlds=4, seed=1, knocks=False)._candidates(policy.probabilities(obs, mask), mask)
    assert plain[1].sum() < legal.sum()
    rows = knocking[:4]
    sub = s.select(rows)

    def ticking(step):  # a clock that moves on by ``step`` seconds at each reading
        t = iter(np.arange(0, 1000, step))
        return lambda: float(next(t))

    dealt = {}
    for seconds in (0.01, 1.0, 100.0):
        agent = SearchAgent(policy, worlds=20, chunk=4, seconds=seconds, seed=1)
        agent.clock = ticking(0.3)
        a = agent.act(obs[rows], mask[rows], state=sub, seats=sub.current)
        assert mask[rows][np.arange(len(rows)), a].all()
        dealt[seconds] = agent.last_worlds
    # one chunk at least; chunks while the time lasts (read at 0.3, 0.6, 0.9, 1.2); the worlds cap
    assert dealt == {0.01: 4, 1.0: 16, 100.0: 20}


def test_analyse_lays_open_the_choice_act_makes_with_values_from_the_reference_rollouts(policy):
    """``analyse`` (the API's hint with search) weighs the same candidates in the same worlds
    as ``act`` on the one game: its chosen move is ``act``'s wherever ``act`` searches, each
    value is the mean of the one-game reference rollouts in those worlds, and hidden cards
    change nothing."""
    s = advanced(policy, 40, 11, moves=9)
    obs, mask = observe(s, s.current), core.legal_action_mask(s)
    checked = 0
    for i in range(s.batch_size):
        one = s.select([i])
        seat = int(s.current[i])
        got = SearchAgent(policy, worlds=5, seed=2).analyse(obs[i], mask[i], one, seat)
        assert got[0]["chosen"] and sum(m["chosen"] for m in got) == 1
        assert all(mask[i, m["id"]] for m in got)
        if len(got) > 1:
            chosen = SearchAgent(policy, worlds=5, seed=2).act(obs[i], mask[i], state=one, seats=np.array([seat]))
            assert got[0]["id"] == chosen
            checked += 1
        hidden = resample_hidden(one, one.current, np.random.default_rng(i))
        again = SearchAgent(policy, worlds=5, seed=2).analyse(obs[i], mask[i], hidden, seat)
        assert again == got
    assert checked >= 3
    # The values: the reference rollout in each of the worlds the search dealt.
    i = next(i for i in range(s.batch_size) if mask[i].sum() > 1)
    one, seat = s.select([i]), int(s.current[i])
    extra = int(np.flatnonzero(mask[i])[-1])
    agent = SearchAgent(policy, worlds=3, seed=4)
    got = agent.analyse(obs[i], mask[i], one, seat, moves=[extra])
    assert extra in {m["id"] for m in got}
    agent._seed_worlds(obs[i])  # the generator the search dealt its worlds from, afresh
    p = np.clip(policy.belief(obs[i][None]), 1e-3, 1 - 1e-3)
    weights = np.repeat(p / (1 - p), 3, 0)
    worlds = resample_hidden(one.select([0, 0, 0]), np.array([seat] * 3), agent.rng, weights)
    for m in got:
        want = np.mean([reference_value(policy, worlds.select([w]), m["id"], seat) for w in range(3)])
        assert m["value"] == pytest.approx(want)


def test_the_match_equity_table_is_the_race_it_describes():
    """Against a slow recursion over the same race (each hand a coin flip for a band's
    points, dead hands left out), on a short match; and on the standard one, its
    symmetries: even scores are even odds, and a's chance plus b's is one."""
    import functools

    from agents.training.search import BAND

    target = 23
    shares = np.array(HAND_POINTS[1:]) / sum(HAND_POINTS[1:])
    gains = [BAND * k + 3 for k in range(len(shares))]

    @functools.cache
    def chance(a, b):
        if a >= target:
            return 1.0
        if b >= target:
            return 0.0
        return sum(q * 0.5 * (chance(a + x, b) + chance(a, b + x)) for q, x in zip(shares, gains))

    table = match_equity(target)
    want = np.array([[chance(a, b) for b in range(target)] for a in range(target)])
    np.testing.assert_allclose(table, want, atol=1e-12)
    e = match_equity(100)
    assert e.shape == (100, 100) and np.allclose(np.diag(e), 0.5) and np.allclose(e + e.T, 1)
    assert e[95, 0] > 0.9 > 0.1 > e[0, 95]
    assert (np.diff(e, axis=0) >= -1e-12).all() and (np.diff(e, axis=1) <= 1e-12).all()  # more points help


@pytest.mark.parametrize("seed", [6, 7])
def test_match_valued_rollouts_equal_one_game_at_a_time(policy, seed):
    """In match mode at scores near the target (where a hand can end the match), the
    batched rollouts valued by the match equal the one-game reference; in hand mode
    ``match`` changes nothing."""
    rng = np.random.default_rng(seed)
    s = core.init(24, Rules(), seed, mode="match")
    s.scores[:] = rng.integers(40, 100, (24, 2))
    for _ in range(int(rng.integers(0, 20))):
        live = np.flatnonzero(~(s.hand_ended | s.done))
        a = np.full(24, core.SKIP, np.int64)
        a[live] = policy.act(observe(s, s.current)[live], core.legal_action_mask(s)[live])
        core.step(s, a)
    s = s.select(np.flatnonzero(~(s.hand_ended | s.done)))
    mask = core.legal_action_mask(s)
    first = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    seat = s.current.astype(np.int64)
    got = rollout(policy, s.copy(), first, seat, match=True)
    want = [reference_value(policy, s.select([i]), first[i], seat[i], match=True) for i in range(s.batch_size)]
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert ((got >= 0) & (got <= 1)).all() and ((got == 0) | (got == 1)).any()  # some hands end the match
    h = advanced(policy, 12, seed, moves=5)
    hm = core.legal_action_mask(h)
    hf = np.array([rng.choice(np.flatnonzero(m)) for m in hm])
    hs = h.current.astype(np.int64)
    assert np.array_equal(rollout(policy, h.copy(), hf, hs, match=True), rollout(policy, h.copy(), hf, hs))


def test_the_unit_of_a_searchs_values_is_the_match_only_where_it_values_and_plays_a_match(policy):
    """``unit``: ``"match"`` for a search valued by the match in match-mode games, else
    ``"points"``; ``analyse`` labels every move with it, and its match values are chances
    (0 to 1) where its points values are not bounded so."""
    hand = advanced(policy, 8, 3, moves=5)
    match = core.init(8, Rules(), 3, mode="match")
    match.scores[:] = 90  # near the target: a hand's points decide the match
    by_match, by_points = SearchAgent(policy, worlds=4, value="match"), SearchAgent(policy, worlds=4)
    assert (by_match.unit(match), by_match.unit(hand)) == ("match", "points")
    assert (by_points.unit(match), by_points.unit(hand)) == ("points", "points")
    obs, mask = observe(match, match.current), core.legal_action_mask(match)
    one, seat = match.select([0]), int(match.current[0])
    chances = by_match.analyse(obs[0], mask[0], one, seat)
    points = by_points.analyse(obs[0], mask[0], one, seat)
    assert {m["unit"] for m in chances} == {"match"} and {m["unit"] for m in points} == {"points"}
    assert all(0 <= m["value"] <= 1 for m in chances)
    assert any(abs(m["value"]) > 1 for m in points)


@pytest.mark.parametrize("opponent", ["marjj", "knock_early"])
def test_rollouts_against_a_baseline_equal_one_game_at_a_time(policy, opponent):
    """``:vs=NAME``: the other seat's rollout moves are the baseline's, the searching
    seat's the policy's (patient here), batched as one game at a time; and they differ
    from the policy's own rollouts somewhere."""
    from ginenv.baselines import make_baseline

    s = advanced(policy, 20, 9, moves=6)
    rng = np.random.default_rng(4)
    mask = core.legal_action_mask(s)
    first = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    seat = s.current.astype(np.int64)
    model = make_baseline(opponent)
    got = rollout(policy, s.copy(), first, seat, patient=True, opponent=model)
    want = [
        reference_value(policy, s.select([i]), first[i], seat[i], patient=True, opponent=model)
        for i in range(s.batch_size)
    ]
    assert np.array_equal(got, np.array(want))
    assert not np.array_equal(got, rollout(policy, s.copy(), first, seat, patient=True))


def test_deepening_deals_twice_the_worlds_again_only_while_a_candidate_is_unsure(policy):
    """``most``: a game is dealt ``worlds`` worlds, then as many again while a candidate
    gains over the policy's choice more than one standard error but not two, up to
    ``most``. Rollout values stand in for a fixed table (each game's alternative gains the
    k-th value of its row in its k-th world; the policy's choice 0); the worlds each game
    is dealt and the choice are checked against a plain loop over the same rule, and the
    hand-worked cases: game 0 sure at once, game 1 unsure at 4 worlds (mean 1, standard
    error 0.91) and sure at 8 (1.25, 0.45), game 2 worse at once, game 3 unsure up to the
    cap and kept on the policy's move."""
    import statistics

    gains = np.array(
        [
            [10, 12, 11, 9] + [0] * 12,
            [2, 0, 3, -1, 2, 1, 2, 1] + [0] * 8,
            [-5, -6, -4, -5] + [0] * 12,
            [2, 0, 3, -1, 0, 1, -1, 2, 1, -2, 3, 0, -1, 1, 2, -2],
        ],
        float,
    )
    s = advanced(policy, 8, 5, moves=9).select([0, 1, 2, 3])
    obs, mask = observe(s, s.current), core.legal_action_mask(s)
    agent = SearchAgent(policy, worlds=4, most=16)
    dealt = {}

    def table(state, seats, observations, rows, cand, w):  # the rollouts' values, from the table
        out = np.zeros((len(rows), w, cand.shape[1]))
        for i, r in enumerate(rows):
            start = dealt.get(int(r), 0)
            out[i, :, 1] = gains[r, start : start + w]
            dealt[int(r)] = start + w
        return out

    agent._values = table
    cand = np.array([[a, b] for a, b in zip(policy.act(obs, mask), np.flatnonzero(mask[0])[:1].repeat(4))])
    v = agent._search(s, s.current, obs, np.arange(4), cand)
    assert v.shape == (4, 16, 2) and agent.last_worlds == 16
    assert dealt == {0: 4, 1: 8, 2: 4, 3: 16}
    gain, sure = _paired(v, np.ones((4, 2), bool))

    def z(values):
        return statistics.mean(values) / (statistics.stdev(values) / len(values) ** 0.5)

    for g in range(4):  # the reference: the rule, one game at a time
        w = 4
        while w < 16 and 1 < z(list(gains[g, :w])) <= 2:
            w *= 2
        assert dealt[g] == w
        assert np.isnan(v[g, w:]).all() and not np.isnan(v[g, :w]).any()
        assert gain[g, 1] == pytest.approx(statistics.mean(gains[g, :w]))
        assert sure[g, 1] == (z(list(gains[g, :w])) > 2)
    assert sure[:, 1].tolist() == [True, True, False, False]
