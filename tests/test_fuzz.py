"""Fuzzing the public entry points with hypothesis: a valid input works; an invalid one
raises ``ValueError`` (``CheckpointError``, a ``ValueError``, for checkpoints) whose
message names the parameter; and a refused call changes nothing."""

import json
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.training.checkpoint import json_text
from ginenv import SingleAgentEnv, VectorEnv, core, gin_rummy_v0
from ginenv.actions import NUM_ACTIONS
from ginenv.cards import RANKS, SUITS, parse_cards
from ginenv.rules import (
    DEALER_RULES,
    MAX_KNOCK_LIMIT,
    MAX_POINTS,
    MAX_TURNS,
    SHUTOUT_RULES,
    TIE_RULES,
    Rules,
)
from ginenv.view import position

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.lists(st.integers(-3, 60), max_size=3),
)


def unchanged(before: core.State, after: core.State) -> bool:
    a, b = before.arrays(), after.arrays()
    return all(np.array_equal(a[k], b[k]) for k in a)


# ------------------------------------------------------------------------ Rules
INT_SPANS = {
    "knock_limit": (0, MAX_KNOCK_LIMIT),
    "gin_bonus": (0, MAX_POINTS),
    "big_gin_bonus": (0, MAX_POINTS),
    "undercut_bonus": (0, MAX_POINTS),
    "target": (1, MAX_POINTS),
    "game_bonus": (0, MAX_POINTS),
    "line_bonus": (0, MAX_POINTS),
    "shutout_bonus": (0, MAX_POINTS),
    "max_turns": (1, MAX_TURNS),
}
CHOICES = {"knock_tie": TIE_RULES, "shutout": SHUTOUT_RULES, "next_dealer": DEALER_RULES}


def rule_is_valid(name, value) -> bool:
    """The rule book's bounds, spelled out plainly."""
    if name in INT_SPANS:
        lo, hi = INT_SPANS[name]
        return type(value) is int and lo <= value <= hi
    if name in CHOICES:
        return isinstance(value, str) and value in CHOICES[name]
    return type(value) is bool  # oklahoma, big_gin


RULE_NAMES = list(INT_SPANS) + list(CHOICES) + ["oklahoma", "big_gin"]
RULE_VALUES = st.one_of(ANYTHING, st.integers(-5, MAX_POINTS + 5), st.sampled_from(TIE_RULES + SHUTOUT_RULES))


@FAST
@given(name=st.sampled_from(RULE_NAMES), value=RULE_VALUES)
def test_rules_take_valid_values_and_name_the_bad_one(name, value):
    if rule_is_valid(name, value):
        assert getattr(Rules(**{name: value}), name) == value
    else:
        with pytest.raises(ValueError, match=f"rule {name} must be"):
            Rules(**{name: value})


# ------------------------------------------------------------------ parse_cards
TOKENS = st.one_of(
    st.builds(
        lambda r, s: r + s,
        st.sampled_from(list(RANKS) + ["10", "1", "X", "t", "a"]),
        st.sampled_from(list(SUITS) + ["H", "x", ""]),
    ),
    st.text(max_size=3),
)


def card_or_none(token: str):
    """The card id of a token, by a plain reading of the notation, or None."""
    t = token.strip()
    if len(t) < 2:
        return None
    rank, suit = t[:-1].upper(), t[-1].lower()
    rank = "T" if rank == "10" else rank
    if len(rank) != 1 or rank not in RANKS or suit not in SUITS:
        return None
    return SUITS.index(suit) * 13 + RANKS.index(rank)


@FAST
@given(tokens=st.lists(TOKENS, max_size=8))
def test_parse_cards_reads_valid_notation_and_names_the_bad_token(tokens):
    ids = [card_or_none(t) for t in tokens]
    if all(i is not None for i in ids) and len(set(ids)) == len(ids):
        assert parse_cards(tokens).tolist() == ids
    else:
        with pytest.raises(ValueError, match="bad card|appears twice"):
            parse_cards(tokens)


# -------------------------------------------------------------------- core.init
@FAST
@given(batch=ANYTHING, seed=ANYTHING, mode=st.one_of(st.sampled_from(["hand", "match"]), st.text(max_size=5)))
def test_init_deals_for_valid_arguments_and_names_the_bad_one(batch, seed, mode):
    ok_batch = type(batch) is int and 1 <= batch <= 64
    if type(batch) is int and batch > 64:
        return  # valid but large: not worth dealing here
    ok_seed = type(seed) is int and 0 <= seed < 1 << 128
    ok_mode = mode in ("hand", "match")
    if ok_batch and ok_seed and ok_mode:
        assert core.init(batch, "standard", seed, mode=mode).batch_size == batch
        return
    bad = [name for name, ok in (("batch_size", ok_batch), ("seed", ok_seed), ("mode", ok_mode)) if not ok]
    with pytest.raises(ValueError) as e:
        core.init(batch, "standard", seed, mode=mode)
    assert any(str(e.value).startswith(name) for name in bad), (bad, str(e.value))


# -------------------------------------------------------------------- core.step
@pytest.fixture(scope="module")
def states():
    """States of 8 games after 0..40 random moves."""
    rng = np.random.default_rng(5)
    out = []
    state = core.init(8, "standard", seed=3, mode="match")
    for _ in range(40):
        out.append(state.copy())
        mask = core.legal_action_mask(state)
        core.step(state, np.where(mask.any(1), (rng.random(mask.shape) * mask).argmax(1), 0))
    return out


@FAST
@given(k=st.integers(0, 39), data=st.data())
def test_step_applies_legal_actions_and_refuses_anything_else_unchanged(states, k, data):
    state = states[k].copy()
    mask = core.legal_action_mask(state)
    kind = data.draw(st.sampled_from(["legal", "any_int", "shape", "float"]))
    if kind == "legal":
        acts = np.array([data.draw(st.sampled_from(np.flatnonzero(m).tolist() or [0])) for m in mask])
    elif kind == "any_int":
        acts = np.array(data.draw(st.lists(st.integers(-5, NUM_ACTIONS + 5), min_size=8, max_size=8)))
    elif kind == "shape":
        acts = np.zeros(data.draw(st.sampled_from([(7,), (9,), (8, 1), ()])), np.int64)
    else:
        acts = np.full(8, 104.5)
    moving = (state.phase != core.DONE) & (acts != core.SKIP) if acts.shape == (8,) else None
    legal = (
        acts.shape == (8,)
        and np.issubdtype(acts.dtype, np.integer)
        and ((acts >= core.SKIP) & (acts < NUM_ACTIONS)).all()
        and mask[np.arange(8)[moving], acts[moving]].all()
    )
    before = state.copy()
    if legal:
        core.step(state, acts)
    else:
        with pytest.raises(ValueError, match="action"):
            core.step(state, acts)
        assert unchanged(before, state)


# ------------------------------------------------------------------------- envs
ACTIONS = st.one_of(ANYTHING, st.integers(0, NUM_ACTIONS - 1), st.just(np.int64(104)), st.just(np.array([105])))


def as_legal_int(action, mask):
    """The action as an int if it is one integer and legal, else None (plain reading)."""
    if isinstance(action, np.ndarray):
        if action.size != 1 or not np.issubdtype(action.dtype, np.integer):
            return None
        action = action.reshape(()).item()
    if type(action) is not int and not isinstance(action, np.integer):
        return None
    return int(action) if 0 <= action < NUM_ACTIONS and mask[int(action)] else None


@FAST
@given(seed=st.integers(0, 50), moves=st.integers(0, 6), action=ACTIONS)
def test_pettingzoo_env_steps_legal_moves_and_refuses_the_rest_unchanged(seed, moves, action):
    env = gin_rummy_v0.raw_env()
    env.reset(seed=seed)
    for _ in range(moves):
        if env.terminations[env.agent_selection]:
            return
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    if env.terminations[env.agent_selection]:
        return
    mask = env.observe(env.agent_selection)["action_mask"]
    before = env._state.copy()
    if as_legal_int(action, mask) is not None:
        env.step(action)
    else:
        with pytest.raises(ValueError, match="action"):
            env.step(action)
        assert unchanged(before, env._state)


@FAST
@given(seed=st.integers(0, 50), action=ACTIONS)
def test_gymnasium_env_steps_legal_moves_and_refuses_the_rest_unchanged(seed, action):
    env = SingleAgentEnv(opponent="knock_early", illegal_action="raise")
    _, info = env.reset(seed=seed)
    before = env._state.copy()
    if as_legal_int(action, info["action_mask"]) is not None:
        env.step(action)
    else:
        with pytest.raises(ValueError, match="action"):
            env.step(action)
        assert unchanged(before, env._state)


@FAST
@given(seed=st.integers(0, 50), num_envs=ANYTHING)
def test_vector_env_takes_a_positive_batch_and_names_a_bad_one(seed, num_envs):
    if type(num_envs) is int and 1 <= num_envs <= 32:
        env = VectorEnv(num_envs, seed=seed)
        obs, mask, _ = env.reset()
        assert obs.shape[0] == num_envs and mask.any(1).all()
    elif not (type(num_envs) is int and num_envs > 32):
        with pytest.raises(ValueError, match="num_envs"):
            VectorEnv(num_envs, seed=seed)


# ------------------------------------------------------------------ view.position
HAND = "As 2s 3s 7h 7d 7c Jd Qd Kd 9c"


@FAST
@given(
    field=st.sampled_from(["hand", "pile", "opponent_took", "knock_limit", "scores", "turn", "phase", "taken"]),
    value=st.one_of(
        ANYTHING, st.lists(st.integers(-2, 55), max_size=12), st.tuples(st.integers(-5, 120), st.integers(-5, 120))
    ),
)
def test_position_builds_what_a_player_may_know_and_names_what_it_refuses(field, value):
    kwargs = {"hand": HAND, "pile": "5c 3c", field: value}
    try:
        state = position(**kwargs)
    except ValueError as e:
        assert field in str(e) or "card" in str(e) or "pile" in str(e), (field, value, str(e))
        return
    mask = core.legal_action_mask(state)[0]
    assert mask.any()  # a position it accepts is one a player can move from


# --------------------------------------------------------------- load_policy
@pytest.fixture(scope="module")
def small_checkpoint(tmp_path_factory):
    from agents.training.checkpoint import save_checkpoint
    from agents.training.network import ActorCritic, NetworkSpec

    spec = NetworkSpec((8,))
    return save_checkpoint(tmp_path_factory.mktemp("ck"), 1, ActorCritic(spec), {"network": spec.to_dict()})


JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.text(max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6,
)


@FAST
@given(key=st.sampled_from(["network", "spec", "sha256"]), value=JSONISH)
def test_load_policy_loads_or_names_what_is_wrong_with_its_json(small_checkpoint, tmp_path_factory, key, value):
    from agents.training.checkpoint import CheckpointError
    from agents.training.policy import load_policy

    step = tmp_path_factory.mktemp("edit") / "step"
    shutil.copytree(small_checkpoint, step)
    meta = json.loads((step / "policy.json").read_text())
    meta[key] = value
    (step / "policy.json").write_text(json_text(meta))  # sealed: its content is what is tested
    try:
        policy = load_policy(step)
    except CheckpointError as e:
        assert "policy.json" in str(e) or "spec" in str(e) or "network" in str(e) or "checksum" in str(e), str(e)
        return
    obs, mask = np.zeros((1, 487), np.float32), np.zeros((1, NUM_ACTIONS), bool)
    mask[0, 104] = True
    assert policy.act(obs, mask)[0] == 104


# -------------------------------------------------------------- config parser
@FAST
@given(
    key=st.sampled_from(
        [
            "gamma",
            "learning_rate",
            "num_envs",
            "hidden_sizes",
            "opponents",
            "run_name",
            "architecture",
            "anneal_lr",
            "target_kl",
            "rules",
        ]
    ),
    text=st.one_of(
        st.text(max_size=8),
        st.sampled_from(["0.5", "-1", "2", "[64]", "[0]", "{self: 1}", "nan", "true", "cards", "../x", "pagat"]),
    ),
)
def test_config_takes_valid_settings_and_names_the_bad_key(key, text):
    from agents.training.config import Config, make_config

    try:
        config = make_config(sets=[f"{key}={text}"])
    except ValueError as e:
        assert key in str(e), str(e)
        return
    assert isinstance(config, Config)


# ----------------------------------------------- the second audit's entry points
@FAST
@given(action=ANYTHING)
def test_the_wrapped_pettingzoo_env_takes_a_legal_int_or_raises_valueerror(action):
    env = gin_rummy_v0.env()
    env.reset(seed=1)
    mask = env.last()[0]["action_mask"]
    legal = as_legal_int(action, mask)
    if legal is not None or (isinstance(action, int) and not isinstance(action, bool) and 0 <= action < NUM_ACTIONS):
        env.step(action)  # legal, or in range and illegal: PettingZoo's -1 and the end
        return
    with pytest.raises(ValueError, match="action"):
        env.step(action)


OPTIONS = st.sampled_from(
    ["rules", "mode", "reward_scale", "render_mode", "perfect_information", "match_win_reward", "foo"]
)


@FAST
@given(key=OPTIONS, value=ANYTHING)
def test_env_options_are_taken_or_named_in_a_valueerror(key, value):
    try:
        gin_rummy_v0.env(**{key: value})
    except ValueError as e:
        assert key in str(e) or "rules" in str(e), str(e)


@FAST
@given(card=st.one_of(ANYTHING, st.integers(0, 51)))
def test_format_card_takes_a_card_id_or_names_what_is_wrong(card):
    from ginenv.cards import format_card

    if type(card) is int and 0 <= card < 52:
        assert len(format_card(card)) == 2
    else:
        with pytest.raises(ValueError, match="card"):
            format_card(card)


@FAST
@given(text=st.text(max_size=12))
def test_parse_move_reads_a_move_or_says_what_is_wrong(text):
    from agents.play.game import parse_move

    legal = [{"id": 104, "label": "draw from the stock"}, {"id": 105, "label": "take the discard"}]
    try:
        assert parse_move(text, legal) in (104, 105)
    except ValueError as e:
        assert str(e)
