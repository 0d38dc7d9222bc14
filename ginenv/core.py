"""The batched game engine: B games of gin rummy per call, each in its own phase.

``init(batch_size, rules, seed)`` deals B games; ``legal_action_mask(state)`` gives the
``(B, NUM_ACTIONS)`` mask of the player to move; ``step(state, actions)`` applies one
action per game. No Python loop runs over the batch: each phase is a boolean mask and
the games in it are updated together.

``step`` updates the state **in place** and returns it (copying ~40 arrays a step would
cost more than the rules); ``state.copy()`` keeps a snapshot. An illegal action raises
``ValueError`` naming the game, the action and the phase, before anything is changed.

Phases: ``OFFER`` (the first-turn upcard offer: the non-dealer, then the dealer, may take
it or pass), ``FORCED_DRAW`` (both passed: the non-dealer must draw from the stock),
``DRAW`` (stock or discard pile), ``DISCARD`` (discard, knock, or big gin), ``DONE``.

A hand ends by a knock (or gin, or big gin, scored by ``ginenv.scoring``), as a dead
hand (the player who drew the third-last stock card discards without knocking, leaving
2), or truncated after ``rules.max_turns`` draws (house rule; no score, like a dead
hand). In ``"hand"`` mode a game is one hand; in ``"match"`` mode hands are dealt until
a running total reaches the target, the dealer following the preset's rule (the same
dealer after a dead, truncated or drawn hand), or until ``rules.max_hands`` hands were
played (then the match ends truncated: ``truncated(state)``, no bonuses, no winner).
With ``auto_reset=True`` a finished game is dealt anew in place, so a training loop never stops; the step's events
(``hand_ended``, ``game_ended``, ``hand_points``, ``final_scores``, ``winner``) describe
the game that finished.

Determinism: game i of ``init(B, rules, seed)`` has the game seed
``splitmix64(splitmix64(seed) + i)``, and every random choice of that game (the cut
for the first dealer, each deal) is a hash of its game seed, its game counter (for
auto-reset) and its hand counter. ``init(1, rules, game_seeds_=[that seed])`` therefore
plays exactly game i, whatever the batch size.

A seed may hold up to 128 bits. Its high 64 bits give each game a second private key
(``_game_key``, 0 for a seed below 2**64, which deals exactly as before) that is mixed
into every deal and cut, so a deal made from 128 bits of OS randomness cannot be found
by searching a 64-bit space (``agents``' games against a person use such seeds).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import numpy as np

from ginenv import actions as A
from ginenv import melds
from ginenv.cards import CARD_VALUES, NUM_CARDS, format_card
from ginenv.rules import Rules, resolve
from ginenv.scoring import KIND_NAMES, match_final, score_hands

# Phases.
OFFER, FORCED_DRAW, DRAW, DISCARD, DONE = 0, 1, 2, 3, 4
PHASE_NAMES = ("offer", "forced_draw", "draw", "discard", "done")
# How a hand ended (``State.hand_kind``): the scoring kinds, then these.
DEAD, TRUNCATED, NONE = len(KIND_NAMES), len(KIND_NAMES) + 1, -1
HAND_KIND_NAMES = KIND_NAMES + ("dead", "truncated")
MODES = ("hand", "match")

HAND_SIZE = 10
STOCK_START = 2 * HAND_SIZE + 1  # deck[0:20] dealt, deck[20] the upcard, the rest the stock
DEAD_STOCK = 2  # the hand is dead when a discard leaves this many stock cards

_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
SEED_BITS = 128  # a seed is an integer 0 <= seed < 2**SEED_BITS


def splitmix64(x):
    """The splitmix64 finaliser, on uint64 arrays (wrapping arithmetic)."""
    z = np.asarray(x, dtype=_U64) + _GOLDEN
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


def game_seeds(seed: int, batch_size: int) -> np.ndarray:
    """The seeds of the B games of ``init(B, rules, seed)``."""
    return splitmix64(splitmix64(np.array([seed % (1 << 64)], _U64)) + np.arange(batch_size, dtype=_U64))


def game_keys(seed: int, batch_size: int) -> np.ndarray:
    """The second keys of the B games of ``init(B, rules, seed)``: from the seed's high 64
    bits, never 0 where those bits are not all 0, and all 0 otherwise."""
    high = int(seed) >> 64
    if not high:
        return np.zeros(batch_size, _U64)
    return game_seeds(high, batch_size) | _U64(1)


def _stream(game_seed, game_no, hand_no):
    """The random key of one deal (hand_no >= 0) or one cut (hand_no = -1)."""
    g = splitmix64(np.asarray(game_seed, _U64) + np.asarray(game_no, _U64) * _U64(0xD1B54A32D192ED03))
    return splitmix64(g + (np.asarray(hand_no, np.int64) + 1).astype(_U64))


def _keyed(game_key, game_no, hand_no):
    """``(mixed, second)``: which games have a second key, and that key's stream."""
    k = np.asarray(game_key, _U64).reshape(-1)
    mixed = k != 0
    return mixed, _stream(k[mixed], np.asarray(game_no).reshape(-1)[mixed], np.asarray(hand_no).reshape(-1)[mixed])


def shuffled_decks(game_seed, game_no, hand_no, game_key=None) -> np.ndarray:
    """``(k, 52)`` int8 decks: the order of the cards for each deal."""
    key = _stream(game_seed, game_no, hand_no)
    card_keys = splitmix64(key[:, None] ^ (np.arange(NUM_CARDS, dtype=_U64) * _GOLDEN))
    if game_key is not None:
        mixed, second = _keyed(game_key, game_no, hand_no)
        if mixed.any():  # 128 bits into every card's key
            card_keys[mixed] = splitmix64(card_keys[mixed] ^ second[:, None])
    return np.argsort(card_keys, axis=1, kind="stable").astype(np.int8)


def first_dealers(game_seed, game_no, game_key=None) -> np.ndarray:
    """The cut for the first dealer: player 0 or 1, a fair coin from the game's stream."""
    bits = _stream(game_seed, game_no, -1)
    if game_key is not None:
        mixed, second = _keyed(game_key, game_no, np.full(len(bits), -1))
        bits[mixed] ^= second
    return (bits >> _U64(63)).astype(np.int8)


def check_seed(seed, name: str = "seed") -> int:
    """``seed`` as an int if it is an integer 0 <= seed < 2**128, else ``ValueError``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{name} must be an integer from 0 to 2**{SEED_BITS} - 1, got {seed!r}")
    if not 0 <= int(seed) < 1 << SEED_BITS:
        raise ValueError(f"{name} must be an integer from 0 to 2**{SEED_BITS} - 1, got {seed}")
    return int(seed)


def check_reset(seed, options) -> int | None:
    """An env's ``reset(seed, options)`` arguments checked: ``seed`` None or an integer
    from 0 to 2**128 - 1 (returned as an int); ``options`` None or a mapping. The envs
    take no reset options (their settings are constructor arguments): keys given are
    ignored with a warning naming them, not refused, since PettingZoo's ``api_test``
    passes ``{"options": 1}`` to every env to check that reset takes the argument."""
    if options is not None:
        if not isinstance(options, dict):
            raise ValueError(f"options must be None or a dict, got {options!r}")
        if options:
            import warnings

            warnings.warn(
                f"reset ignores the option(s) {', '.join(map(repr, options))}: this env takes none "
                "(rules, mode and the rest are arguments of its constructor)",
                stacklevel=3,
            )
    return None if seed is None else check_seed(seed)


def check_players(player, b: int, name: str = "player") -> np.ndarray:
    """``player`` (0, 1, or one of them per game: a ``(b,)`` integer array) as a ``(b,)``
    int64 array, else ``ValueError`` naming ``name`` and what is valid."""
    valid = f"{name} must be 0, 1 or an integer array of them, one per game ({b} games)"
    if isinstance(player, (bool, np.bool_)):
        raise ValueError(f"{valid}; got {player!r}")
    if isinstance(player, (int, np.integer)):
        if player not in (0, 1):
            raise ValueError(f"{valid}; got {player!r}")
        return np.full(b, int(player), np.int64)
    arr = np.asarray(player)
    if arr.ndim != 1 or len(arr) != b or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"{valid}; got {f'shape {arr.shape} of {arr.dtype}' if arr.ndim else repr(player)}")
    if arr.size and (arr.min() < 0 or arr.max() > 1):  # (np.isin costs ~50 µs a call)
        raise ValueError(f"{valid}; got values {sorted(set(arr.tolist()) - {0, 1})[:5]}")
    return arr.astype(np.int64)


def _check_uint64s(values, name: str, b: int) -> np.ndarray:
    """``values`` as ``(b,)`` uint64: integers from 0 to 2**64 - 1, one per game."""
    valid = f"{name} must hold {b} integers from 0 to 2**64 - 1, one per game"
    arr = np.asarray(values) if not isinstance(values, np.ndarray) else values
    if arr.dtype == object:  # Python ints beyond int64
        flat = arr.reshape(-1).tolist()
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in flat):
            raise ValueError(f"{valid}; got {values!r}")
    elif arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise ValueError(f"{valid}; got {arr.dtype} values")
    flat = arr.reshape(-1).tolist()
    if len(flat) != b:
        raise ValueError(f"{valid}; got {len(flat)}")
    if any(not 0 <= v < 1 << 64 for v in flat):
        raise ValueError(f"{valid}; got {min(flat)} .. {max(flat)}")
    return np.array(flat, dtype=_U64).reshape(b)


#: The layout of a game's state, owned here: each array field of ``State`` but the
#: legal mask (``_legal``, made anew by every step), its dtype, its shape in one game, and
#: its value in a fresh state. All of them live in one record per game (``GAME_DTYPE``,
#: the widest fields first), and ``State``'s fields are named views of that one array
#: (``State._games``): the compiled engine takes the whole state as one argument.
_LAYOUT = (
    ("_game_seed", np.uint64, (), 0),
    ("_game_key", np.uint64, (), 0),
    ("scores", np.int32, (2,), 0),
    ("hand_points", np.int32, (2,), 0),
    ("final_scores", np.int32, (2,), 0),
    ("bonus_points", np.int32, (2,), 0),
    ("hand_no", np.int32, (), 0),
    ("game_no", np.int32, (), 0),
    ("turn", np.int16, (), 0),
    ("_deadwood", np.int16, (2,), 0),
    ("hands_won", np.int16, (2,), 0),
    ("hands_played", np.int16, (), 0),
    ("dead_hands", np.int16, (), 0),
    ("hand_turns", np.int16, (), 0),
    ("_hands", bool, (2, NUM_CARDS), 0),
    ("_deck", np.int8, (NUM_CARDS,), 0),
    ("pile", np.int8, (NUM_CARDS,), -1),
    ("pile_mask", bool, (NUM_CARDS,), 0),
    ("took", bool, (2, NUM_CARDS), 0),
    ("discarded", bool, (2, NUM_CARDS), 0),
    ("passed", bool, (2, NUM_CARDS), 0),
    ("_after_discard", np.uint8, (NUM_CARDS,), melds.NOT_IN_HAND),
    ("last_hands", bool, (2, NUM_CARDS), 0),
    ("stock_pos", np.int8, (), 0),
    ("pile_size", np.int8, (), 0),
    ("taken", np.int8, (), -1),
    ("knock_card", np.int8, (), -1),
    ("phase", np.int8, (), 0),
    ("current", np.int8, (), 0),
    ("dealer", np.int8, (), 0),
    ("knock_limit", np.int8, (), 0),
    ("_big_gin_ok", bool, (), 0),
    ("hand_ended", bool, (), 0),
    ("game_ended", bool, (), 0),
    ("game_truncated", bool, (), 0),
    ("hand_kind", np.int8, (), NONE),
    ("last_knocker", np.int8, (), -1),
    ("hand_knock_limit", np.int8, (), 0),
    ("winner", np.int8, (), -1),
)
#: One game's record: the fields of ``_LAYOUT`` without their leading underscore,
#: booleans as uint8 (numba's records hold no nested booleans; the views are bool).
GAME_DTYPE = np.dtype(
    [(name.lstrip("_"), np.uint8 if dtype is bool else dtype, shape) for name, dtype, shape, _ in _LAYOUT],
    align=True,
)
#: Every array field of ``State``, the ones a saved state holds (``State.arrays``).
ARRAY_FIELDS = tuple(name for name, *_ in _LAYOUT) + ("_legal",)


def _new_games_array(b: int) -> np.ndarray:
    """``b`` records of a fresh state (every field at its ``_LAYOUT`` start value)."""
    games = np.zeros(b, GAME_DTYPE)
    for name, _, _, start in _LAYOUT:
        if start:
            games[name.lstrip("_")] = start
    return games


def _state_of(rules: Rules, mode: str, auto_reset: bool, games: np.ndarray, legal: np.ndarray) -> State:
    """The State over the records ``games`` (kept, not copied) and the mask ``legal``."""
    views = {}
    for name, dtype, _, _ in _LAYOUT:
        v = games[name.lstrip("_")]
        views[name] = v.view(np.bool_) if dtype is bool else v
    legal.flags.writeable = False  # read-only like every engine-made mask
    return State(rules=rules, mode=mode, auto_reset=auto_reset, _legal=legal, _games=games, **views)


@dataclass
class State:
    """B games. Every field is a ``(B, ...)`` numpy array.

    Fields starting with ``_`` are private: no player may see them whole (each player
    sees its own row of ``_hands``). The rest is public table knowledge or bookkeeping.

    Every array field but ``_legal`` is a view of one record array, ``_games``
    (``GAME_DTYPE``, one record per game): write into the fields (``s.phase[g] = ...``),
    never rebind them. ``copy``, ``select``, ``with_arrays`` and pickling keep the views
    on their records.
    """

    rules: Rules
    mode: str
    auto_reset: bool
    _hands: np.ndarray  # (B, 2, 52) bool: [game, player, card] cards held
    _deck: np.ndarray  # (B, 52) int8: this hand's deck; the stock is _deck[stock_pos:], top first
    stock_pos: np.ndarray  # (B,) int8: index in _deck of the top stock card; stock size = 52 - stock_pos
    pile: np.ndarray  # (B, 52) int8: discard pile bottom first, pile[:pile_size]; rest -1
    pile_size: np.ndarray  # (B,) int8
    pile_mask: np.ndarray  # (B, 52) bool: the cards in the discard pile
    took: np.ndarray  # (B, 2, 52) bool: cards each player took from the discard pile this hand
    discarded: np.ndarray  # (B, 2, 52) bool: cards each player discarded face up this hand
    passed: np.ndarray  # (B, 2, 52) bool: the upcard, where that player passed on it
    taken: np.ndarray  # (B,) int8: card taken from the pile this turn (may not be discarded), -1 none
    knock_card: np.ndarray  # (B,) int8: the face-down knock card of the last hand, -1 none
    phase: np.ndarray  # (B,) int8: OFFER, FORCED_DRAW, DRAW, DISCARD or DONE
    current: np.ndarray  # (B,) int8: the player to move (0 or 1)
    dealer: np.ndarray  # (B,) int8
    turn: np.ndarray  # (B,) int16: draws so far this hand (both players)
    knock_limit: np.ndarray  # (B,) int8: this hand's knock limit (Oklahoma: from the upcard)
    _after_discard: np.ndarray  # (B, 52) uint8: in DISCARD, the mover's deadwood after each discard
    _big_gin_ok: np.ndarray  # (B,) bool: in DISCARD, the mover may declare big gin
    _legal: np.ndarray  # (B, NUM_ACTIONS) bool, read-only: the mover's legal actions (its discards show its hand)
    _deadwood: np.ndarray  # (B, 2) int16: each player's least deadwood of the 10 cards last kept
    scores: np.ndarray  # (B, 2) int32: running match totals (hand points)
    hands_won: np.ndarray  # (B, 2) int16
    hands_played: np.ndarray  # (B,) int16: including dead and truncated hands
    dead_hands: np.ndarray  # (B,) int16: dead and truncated hands
    hand_no: np.ndarray  # (B,) int32: hands dealt in this game (the deal's stream)
    game_no: np.ndarray  # (B,) int32: games played in this slot (auto-reset)
    _game_seed: np.ndarray  # (B,) uint64
    _game_key: np.ndarray  # (B,) uint64: the second key of a 128-bit seed, 0 none
    # Events of the last step (overwritten by every step):
    hand_ended: np.ndarray  # (B,) bool: a hand ended in this step
    game_ended: np.ndarray  # (B,) bool: the game ended in this step (then maybe auto-reset)
    game_truncated: np.ndarray  # (B,) bool: ... cut by rules.max_hands (match) or max_turns (hand)
    hand_kind: np.ndarray  # (B,) int8: how the last hand ended (HAND_KIND_NAMES), -1 none yet
    hand_points: np.ndarray  # (B, 2) int32: points of the hand that ended in this step
    last_hands: np.ndarray  # (B, 2, 52) bool: both hands as they ended (knocker after the knock)
    last_knocker: np.ndarray  # (B,) int8: who knocked (or went gin) to end the last hand, -1 none
    hand_turns: np.ndarray  # (B,) int16: draws in the hand that ended in this step
    hand_knock_limit: np.ndarray  # (B,) int8: the knock limit of the hand that ended in this step
    final_scores: np.ndarray  # (B, 2) int32: totals with bonuses of a game that ended (match mode)
    bonus_points: np.ndarray  # (B, 2) int32: end-of-match bonuses awarded in this step
    winner: np.ndarray  # (B,) int8: winner of a game that ended: 0, 1, or -1 (draw / none)
    _games: np.ndarray = dataclasses.field(default=None, repr=False)  # (B,) GAME_DTYPE: the fields above

    @property
    def batch_size(self) -> int:
        return len(self.phase)

    @property
    def stock_size(self) -> np.ndarray:
        return NUM_CARDS - self.stock_pos.astype(np.int16)

    @property
    def done(self) -> np.ndarray:
        return self.phase == DONE

    def copy(self) -> State:
        return _state_of(self.rules, self.mode, self.auto_reset, self._games.copy(), self._legal.copy())

    def arrays(self) -> dict:
        """Every array field by name, private ones included (to save a state whole)."""
        return {name: getattr(self, name) for name in ARRAY_FIELDS}

    def with_arrays(self, arrays: dict) -> State:
        """A copy with every array field taken from ``arrays`` (``arrays()`` of a state of
        the same batch size); a missing or unknown name, or a shape that differs, is a
        ``ValueError``."""
        missing, unknown = sorted(set(ARRAY_FIELDS) - set(arrays)), sorted(set(arrays) - set(ARRAY_FIELDS))
        if missing or unknown:
            raise ValueError(
                f"state arrays do not match State's fields: missing {missing or 'none'}, unknown {unknown or 'none'}"
            )
        for name in ARRAY_FIELDS:
            shape, want = np.shape(arrays[name]), getattr(self, name).shape
            if shape != want:
                raise ValueError(f"state array {name} has shape {shape}, expected {want}")
        legal = np.asarray(arrays["_legal"]).astype(bool, copy=True)
        out = _state_of(self.rules, self.mode, self.auto_reset, np.zeros(self.batch_size, GAME_DTYPE), legal)
        for name, dtype, _, _ in _LAYOUT:
            getattr(out, name)[...] = np.asarray(arrays[name]).astype(dtype)
        return out

    def select(self, games) -> State:
        """A new State of the games ``games`` (indices 0 .. B-1, repeats allowed; arrays
        copied)."""
        idx = np.asarray(games)
        b = self.batch_size
        if idx.ndim != 1 or (idx.size and (not np.issubdtype(idx.dtype, np.integer) or idx.dtype == np.bool_)):
            raise ValueError(f"games must be a list of game indices from 0 to {b - 1}; got {games!r}")
        if idx.size and (idx.min() < 0 or idx.max() >= b):
            raise ValueError(f"games must be game indices from 0 to {b - 1} (a batch of {b}); got {idx.tolist()}")
        idx = idx.astype(np.int64)
        return _state_of(self.rules, self.mode, self.auto_reset, self._games[idx], self._legal[idx])

    def __getstate__(self) -> dict:
        """Pickled as its records and mask (the views are made anew on loading)."""
        return {
            "rules": self.rules,
            "mode": self.mode,
            "auto_reset": self.auto_reset,
            "_games": self._games,
            "_legal": self._legal,
        }

    def __setstate__(self, d: dict) -> None:
        legal = np.array(d["_legal"])
        if d.get("_games") is None:  # pickled as separate arrays (before the records)
            blank = np.zeros(len(legal), GAME_DTYPE)
            s = _state_of(d["rules"], d["mode"], d["auto_reset"], blank, legal)
            s = s.with_arrays({name: d[name] for name in ARRAY_FIELDS})
        else:
            games = d["_games"]
            if not games.flags.writeable:  # out-of-band buffers (pickle protocol 5, Ray's store)
                games = games.copy()
            s = _state_of(d["rules"], d["mode"], d["auto_reset"], games, legal)
        self.__dict__.update(s.__dict__)

    def stock(self, game: int) -> np.ndarray:
        """The stock of one game, top card first (private)."""
        return self._deck[game, self.stock_pos[game] :].astype(np.int64)

    def hands_of(self, players) -> np.ndarray:
        """``(B, 52)`` bool: the cards held by ``players[g]`` in each game g (an int or a
        ``(B,)`` array). Private to those players: for the engine's own use and for a
        training-time critic, never an input a player's policy may read."""
        who = np.broadcast_to(np.asarray(players, np.int64), (self.batch_size,))
        return self._hands[np.arange(self.batch_size), who]

    def hand(self, game: int, player: int) -> np.ndarray:
        """The card ids one player holds (private to that player)."""
        return np.flatnonzero(self._hands[game, player])


def _zeros(*shape, dtype):
    return np.zeros(shape, dtype=dtype)


def init(
    batch_size: int,
    rules: Rules | str | None = None,
    seed: int = 0,
    *,
    mode: str = "match",
    auto_reset: bool = False,
    game_seeds_: np.ndarray | None = None,
    game_keys_: np.ndarray | None = None,
    decks: np.ndarray | None = None,
    dealers: np.ndarray | None = None,
) -> State:
    """Deal B new games.

    ``seed`` is an integer 0 <= seed < 2**128. ``game_seeds_`` (``(B,)`` uint64) replaces
    the seeds derived from ``seed``, and ``game_keys_`` (``(B,)`` uint64, default 0) their
    second keys. For
    scripted games, ``decks`` (``(B, 52)`` card orders) and ``dealers`` (``(B,)``) set
    the first deal: the non-dealer gets ``deck[0:20:2]``, the dealer ``deck[1:20:2]``,
    ``deck[20]`` is the upcard and ``deck[21:]`` the stock, top first. Later deals come
    from the seeds.
    """
    rules = resolve(rules)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if not isinstance(auto_reset, (bool, np.bool_)):
        raise ValueError(f"auto_reset must be True or False, got {auto_reset!r}")
    b = int(batch_size)
    if dealers is not None:
        dealers = np.asarray(dealers)
        if dealers.shape != (b,) or not np.isin(dealers, (0, 1)).all():
            raise ValueError(f"dealers must be {b} values, each 0 or 1 (one per game); got {dealers.tolist()!r}")
        dealers = dealers.astype(np.int8)
    if decks is not None:
        decks = np.asarray(decks)
        if decks.shape != (b, NUM_CARDS) or not np.issubdtype(decks.dtype, np.integer):
            raise ValueError(
                f"decks must be a ({b}, {NUM_CARDS}) array of card ids, one deck per game; got shape {decks.shape}"
            )
    if game_seeds_ is None:
        if game_keys_ is not None:
            raise ValueError(
                "game_keys_ are the second keys of game_seeds_: give game_seeds_ too, or neither (seed then makes both)"
            )
        seed = check_seed(seed)
        seeds, keys = game_seeds(seed & ((1 << 64) - 1), b), game_keys(seed, b)
    else:
        seeds = _check_uint64s(game_seeds_, "game_seeds_", b)
        keys = np.zeros(b, _U64) if game_keys_ is None else _check_uint64s(game_keys_, "game_keys_", b)
    games = _new_games_array(b)
    games["game_seed"], games["game_key"] = seeds, keys
    state = _state_of(rules, mode, auto_reset, games, np.zeros((b, A.NUM_ACTIONS), bool))
    _new_games(state, np.arange(b), decks, dealers)
    _update_legal(state)
    return state


def _new_games(s: State, idx: np.ndarray, decks=None, dealers=None) -> None:
    """Start fresh games in the slots ``idx``: zero scores, cut for the dealer, deal."""
    s.scores[idx] = 0
    s.hands_won[idx] = 0
    s.hands_played[idx] = 0
    s.dead_hands[idx] = 0
    s.hand_no[idx] = 0
    if dealers is None:
        if _compiled is not None:
            for g in idx:
                s.dealer[g] = _compiled.first_dealer(s._game_seed[g], s._game_key[g], s.game_no[g])
        else:
            s.dealer[idx] = first_dealers(s._game_seed[idx], s.game_no[idx], s._game_key[idx])
    else:
        s.dealer[idx] = dealers
    _deal(s, idx, decks)


def _deal(s: State, idx: np.ndarray, decks=None) -> None:
    """Deal a hand in the games ``idx`` (dealer already set)."""
    if decks is None and _compiled is not None:
        _compiled.deal(np.asarray(idx, np.int64), s._games, _rule_vector(s))
        return
    if decks is None:
        deck = shuffled_decks(s._game_seed[idx], s.game_no[idx], s.hand_no[idx], s._game_key[idx])
    else:
        deck = np.asarray(decks, np.int8).reshape(len(idx), NUM_CARDS)
        if (np.sort(deck, axis=1) != np.arange(NUM_CARDS)).any():
            raise ValueError("each deck must hold the 52 cards once each")
    s._deck[idx] = deck
    hands = np.zeros((len(idx), 2, NUM_CARDS), bool)
    rows = np.arange(len(idx))[:, None]
    # Alternate dealing: the non-dealer gets deck[0], deck[2], ...; the dealer deck[1], ...
    nondealer = 1 - s.dealer[idx].astype(np.int64)
    hands[rows, nondealer[:, None], deck[:, 0 : 2 * HAND_SIZE : 2]] = True
    hands[rows, 1 - nondealer[:, None], deck[:, 1 : 2 * HAND_SIZE : 2]] = True
    s._hands[idx] = hands
    upcard = deck[:, 2 * HAND_SIZE]
    s.pile[idx] = -1
    s.pile[idx, 0] = upcard
    s.pile_size[idx] = 1
    s.pile_mask[idx] = False
    s.pile_mask[idx, upcard] = True
    s._deadwood[idx] = melds.masks_deadwood(melds.suit_masks(hands.reshape(-1, NUM_CARDS))).reshape(-1, 2)
    s.stock_pos[idx] = STOCK_START
    s.took[idx] = False
    s.discarded[idx] = False
    s.passed[idx] = False
    s.taken[idx] = -1
    s.phase[idx] = OFFER
    s.current[idx] = nondealer
    s.turn[idx] = 0
    limit = s.rules.knock_limit
    if s.rules.oklahoma:  # the upcard's value; an ace means gin only
        value = CARD_VALUES[upcard]
        s.knock_limit[idx] = np.where(value == 1, 0, np.minimum(value, limit))
    else:
        s.knock_limit[idx] = limit
    s._big_gin_ok[idx] = False
    s._after_discard[idx] = melds.NOT_IN_HAND
    s.hand_no[idx] += 1


# ------------------------------------------------------------------------ legality
def legal_action_mask(s: State) -> np.ndarray:
    """``(B, NUM_ACTIONS)`` bool: the legal actions of the player to move (none when DONE).

    Computed once per ``init`` / ``step`` and kept in the private ``state._legal``
    (read-only): in the discard phase it names the mover's cards, so it is the mover's
    alone."""
    return s._legal


def _update_legal(s: State) -> None:
    if _compiled is not None:
        return _compiled_legal(s)
    b = s.batch_size
    mask = np.zeros((b, A.NUM_ACTIONS), bool)
    phase = s.phase
    offer = phase == OFFER
    mask[:, A.TAKE_DISCARD] = offer | (phase == DRAW)
    mask[:, A.PASS] = offer
    mask[:, A.DRAW_STOCK] = (phase == FORCED_DRAW) | (phase == DRAW)
    d = np.flatnonzero(phase == DISCARD)
    if d.size:
        hand = s._hands[d, s.current[d]]
        taken = s.taken[d]
        has_taken = np.flatnonzero(taken >= 0)
        hand[has_taken, taken[has_taken]] = False  # never the card just taken
        mask[d, A.DISCARD : A.KNOCK] = hand
        mask[d, A.KNOCK : A.DRAW_STOCK] = hand & (s._after_discard[d] <= s.knock_limit[d, None])
        mask[d, A.BIG_GIN] = s._big_gin_ok[d]
    mask.flags.writeable = False
    s._legal = mask


def refresh(s: State, games) -> None:
    """After a state's cards were set by hand (``from_view``, ``worlds``): recompute, in
    the games ``games``, the mover's knock test where it is to discard, and every game's
    legal mask."""
    games = np.asarray(games, np.int64)
    moving = games[s.phase[games] == DISCARD]
    if moving.size:
        _prepare_discard(s, moving, s.current.astype(np.int64))
    _update_legal(s)


def from_view(
    hand,
    pile,
    *,
    phase: int,
    taken: int = -1,
    opponent_took=(),
    opponent_discarded=(),
    opponent_passed=(),
    my_discards=(),
    dealer: bool = False,
    scores=(0, 0),
    turn: int = 0,
    rules: Rules | str | None = None,
    knock_limit: int | None = None,
) -> State:
    """A one-game state built from what a player knows, with that player as player 0 and
    on move (``phase`` OFFER, FORCED_DRAW, DRAW or DISCARD). Card arguments are card ids.

    The cards the player cannot see (the opponent's unknown cards, the stock's order)
    are filled in card order: nothing the player observes depends on them. Refuses a
    position the engine could not reach (``ValueError`` naming the problem)."""
    rules = resolve(rules)
    cards = {
        "hand": hand,
        "pile": pile,
        "opponent_took": opponent_took,
        "opponent_discarded": opponent_discarded,
        "opponent_passed": opponent_passed,
        "my_discards": my_discards,
    }
    for name, ids in cards.items():
        ids = np.asarray(list(ids))
        if ids.size and (not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= NUM_CARDS):
            raise ValueError(f"{name} must hold card ids 0..{NUM_CARDS - 1}, got {ids.tolist()}")
    if (
        not isinstance(scores, (tuple, list, np.ndarray))
        or len(scores) != 2
        or any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) for x in scores)
        or not (0 <= min(scores) and max(scores) < rules.target)
    ):
        raise ValueError(f"scores must be two integers from 0 to below the target {rules.target}, got {scores!r}")
    if isinstance(turn, bool) or not isinstance(turn, (int, np.integer)) or not 0 <= turn < rules.max_turns:
        raise ValueError(f"turn must be an integer from 0 to below max_turns {rules.max_turns}, got {turn!r}")
    if knock_limit is not None and (
        isinstance(knock_limit, bool)
        or not isinstance(knock_limit, (int, np.integer))
        or not 0 <= knock_limit <= rules.knock_limit
    ):
        raise ValueError(
            f"knock_limit must be an integer from 0 to the rules' {rules.knock_limit}, got {knock_limit!r}"
        )
    if phase not in (OFFER, FORCED_DRAW, DRAW, DISCARD):
        raise ValueError(f"phase must be one of OFFER, FORCED_DRAW, DRAW, DISCARD ({OFFER}..{DISCARD}); got {phase!r}")
    hand, pile, took = (list(map(int, x)) for x in (hand, pile, opponent_took))
    want = HAND_SIZE + (phase == DISCARD)
    if len(hand) != want:
        raise ValueError(f"in phase {PHASE_NAMES[phase]} the hand holds {want} cards, got {len(hand)}")
    if not pile and phase != DISCARD:
        raise ValueError("the discard pile is empty: there is always a face-up card before a draw")
    seen = hand + pile + took
    if len(set(seen)) != len(seen):
        places = {"hand": hand, "pile": pile, "opponent_took": took}
        twice = sorted({c for c in seen if seen.count(c) > 1})
        where = "; ".join(
            f"{format_card(c)} in {' and '.join(n for n, cs in places.items() if c in cs) or 'one of them twice'}"
            for c in twice
        )
        raise ValueError(f"a card is in two places among the hand, the pile and opponent_took: {where}")
    for name, cards in (
        ("opponent_discarded", opponent_discarded),
        ("opponent_passed", opponent_passed),
        ("my_discards", my_discards),
    ):
        lost = [format_card(int(c)) for c in cards if int(c) not in seen]
        if lost:
            raise ValueError(
                f"{name}: {' '.join(lost)} went face up, so each is now in the pile, the hand or opponent_took; "
                "it is in none of them"
            )
    if len(took) > HAND_SIZE:
        raise ValueError(f"the opponent holds {HAND_SIZE} cards, so at most {HAND_SIZE} it took; got {len(took)}")
    unseen = [c for c in range(NUM_CARDS) if c not in set(seen)]
    opp_hand = took + unseen[: HAND_SIZE - len(took)]
    stock = unseen[HAND_SIZE - len(took) :]
    # A draw needs more than DEAD_STOCK cards; the discard turn after drawing the
    # third-last card has exactly DEAD_STOCK left.
    least = DEAD_STOCK if phase == DISCARD else DEAD_STOCK + 1
    if len(stock) < least:
        raise ValueError(
            f"the stock would hold {len(stock)} cards; in phase {PHASE_NAMES[phase]} it holds at least {least}"
        )
    if isinstance(taken, bool) or not isinstance(taken, (int, np.integer)) or not -1 <= taken < NUM_CARDS:
        raise ValueError(f"taken must be a card id 0..{NUM_CARDS - 1} (or -1: none), got {taken!r}")
    if taken >= 0 and (phase != DISCARD or taken not in hand):
        raise ValueError("taken must be a card of the hand, and only in the discard phase")
    if rules.oklahoma and knock_limit is None:
        raise ValueError("under Oklahoma rules give the hand's knock_limit (the upcard's value; 0 for an ace)")
    s = init(1, rules, mode="hand")
    s._hands[:] = False
    s._hands[0, 0, hand] = True
    s._hands[0, 1, opp_hand] = True
    s._deck[0] = np.array(pile + hand + opp_hand + stock, np.int8)[:NUM_CARDS]
    s.stock_pos[0] = NUM_CARDS - len(stock)
    s._deck[0, s.stock_pos[0] :] = stock
    s.pile[0] = -1
    s.pile[0, : len(pile)] = pile
    s.pile_size[0] = len(pile)
    s.pile_mask[0] = False
    s.pile_mask[0, pile] = True
    for plane, cards in (
        (s.took[0, 1], took),
        (s.discarded[0, 1], opponent_discarded),
        (s.passed[0, 1], opponent_passed),
        (s.discarded[0, 0], my_discards),
    ):
        plane[:] = False
        plane[list(map(int, cards))] = True
    s.took[0, 0] = False
    s.passed[0, 0] = False
    s.phase[0], s.current[0], s.dealer[0] = phase, 0, 0 if dealer else 1
    s.scores[0] = scores
    s.turn[0] = turn
    s.taken[0] = taken
    s.knock_limit[0] = rules.knock_limit if knock_limit is None else knock_limit
    s._deadwood[0] = 0
    if phase != DISCARD:
        s._deadwood[0, 0] = melds.deadwood(s._hands[0, 0])
    refresh(s, [0])
    return s


def rewards(s: State, reward_scale: float, match_win_reward: float = 0.0) -> np.ndarray:
    """``(B, 2)`` float64 rewards of the last step, the rule every env shares: the hand's
    points, and in match mode at the end of a match the bonuses (and ``match_win_reward``
    to the winner, taken from the loser), as own minus opponent, times ``reward_scale``."""
    pts = (s.hand_points + s.bonus_points).astype(np.float64)
    diff = pts[:, 0] - pts[:, 1]
    out = np.stack([diff, -diff], axis=1) * reward_scale
    if s.mode == "match" and match_win_reward:
        w = s.winner
        won = s.game_ended & (w >= 0)
        out[won, w[won]] += match_win_reward
        out[won, 1 - w[won]] -= match_win_reward
    return out


def truncated(s: State) -> np.ndarray:
    """``(B,)`` bool: the game ended in the last step by a cap, not by its rules' end (a
    hand mode hand cut by ``max_turns``, a match cut by ``max_hands``): the envs report
    it as ``truncated``, the rest of the ended games as ``terminated``."""
    return s.game_truncated


SKIP = -1  # the "action" that leaves a game as it is this step (its player moves later)


def _check_actions(s: State, actions) -> np.ndarray:
    a = np.asarray(actions)
    if a.shape != (s.batch_size,):
        raise ValueError(f"actions must have shape ({s.batch_size},), one per game; got {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"actions must be integers, got dtype {a.dtype}")
    a = a.astype(np.int64)
    bad_range = np.flatnonzero((a < SKIP) | (a >= A.NUM_ACTIONS))
    if bad_range.size:
        i = bad_range[0]
        raise ValueError(f"game {i}: action {a[i]} is out of range 0..{A.NUM_ACTIONS - 1} (or {SKIP}: skip the game)")
    bad = np.flatnonzero(~s._legal[np.arange(s.batch_size), np.maximum(a, 0)] & (s.phase != DONE) & (a != SKIP))
    if bad.size:
        i = int(bad[0])
        extra = ""
        if s.phase[i] == DISCARD and A.card_of(a[i]) == s.taken[i] and s.taken[i] >= 0:
            extra = f" ({format_card(s.taken[i])} was just taken from the discard pile)"
        elif A.is_knock(a[i]) and s.phase[i] == DISCARD and s._hands[i, s.current[i], A.card_of(a[i])]:
            extra = f" (deadwood after it would be {s._after_discard[i, A.card_of(a[i])]}, limit {s.knock_limit[i]})"
        raise ValueError(
            f"game {i}: illegal action {a[i]} ({A.describe(a[i])}) in phase "
            f"{PHASE_NAMES[s.phase[i]]} for player {s.current[i]}{extra}; "
            f"{bad.size} illegal action(s) in all, nothing was applied"
        )
    return a


# ---------------------------------------------------------------------------- step
# Step's dispatch codes: discard, knock, then one per action id from DRAW_STOCK on (draw
# from the stock, take the discard, pass, big gin), then "nothing" for finished games.
_DO_DISCARD, _DO_KNOCK, _DO_STOCK, _DO_TAKE, _DO_PASS, _DO_BIG_GIN, _DO_NOTHING = range(7)
assert (A.TAKE_DISCARD - A.DRAW_STOCK, A.PASS - A.DRAW_STOCK, A.BIG_GIN - A.DRAW_STOCK) == (1, 2, 3)


def step(s: State, actions) -> State:
    """Apply one action per game (in place) and return the state. Games that are DONE
    take any action (it is ignored) unless ``auto_reset`` dealt them anew; a game given
    ``SKIP`` (-1) is left as it is, so a caller can move some games and not others (the
    step's events then describe the games that moved)."""
    if _compiled is not None:
        return _compiled_step(s, actions)
    return _numpy_step(s, actions)


def _numpy_step(s: State, actions) -> State:
    a = _check_actions(s, actions)
    a[(s.phase == DONE) | (a == SKIP)] = A.NUM_ACTIONS  # finished or skipped games: match no action below
    s.hand_ended[:] = False
    s.game_ended[:] = False
    s.game_truncated[:] = False
    s.hand_points[:] = 0
    s.bonus_points[:] = 0
    player = s.current.astype(np.int64)

    # One dispatch code per game and one index array per code that occurs: no work for
    # the kinds of action nobody took. The codes follow the action ids' ranges.
    code = np.where(a < A.KNOCK, _DO_DISCARD, np.where(a < A.DRAW_STOCK, _DO_KNOCK, a - A.DRAW_STOCK + _DO_STOCK))
    present = np.bincount(code, minlength=_DO_NOTHING + 1)
    empty = np.zeros(0, np.int64)
    idx = [np.flatnonzero(code == k) if present[k] else empty for k in range(_DO_NOTHING)]
    _draw(s, idx[_DO_STOCK], player, from_stock=True)
    _draw(s, idx[_DO_TAKE], player, from_stock=False)
    drew = present[_DO_STOCK] + present[_DO_TAKE]
    _prepare_discard(s, np.flatnonzero((code == _DO_STOCK) | (code == _DO_TAKE)) if drew else empty, player)
    _pass(s, idx[_DO_PASS], player)
    _discard(s, idx[_DO_DISCARD], a, player)
    _knock(s, idx[_DO_KNOCK], a, player, big=False)
    _knock(s, idx[_DO_BIG_GIN], a, player, big=True)

    if s.auto_reset:
        over = np.flatnonzero(s.game_ended)
        if over.size:
            s.game_no[over] += 1
            _new_games(s, over)
    _update_legal(s)
    return s


def _draw(s: State, idx, player, from_stock: bool) -> None:
    if not idx.size:
        return
    p = player[idx]
    if from_stock:
        card = s._deck[idx, s.stock_pos[idx]].astype(np.int64)
        s.stock_pos[idx] += 1
        s.taken[idx] = -1
    else:
        top = s.pile_size[idx].astype(np.int64) - 1
        card = s.pile[idx, top].astype(np.int64)
        s.pile[idx, top] = -1
        s.pile_size[idx] -= 1
        s.pile_mask[idx, card] = False
        s.took[idx, p, card] = True
        s.taken[idx] = card
    s._hands[idx, p, card] = True
    s.turn[idx] += 1
    s.phase[idx] = DISCARD


def _prepare_discard(s: State, idx, player) -> None:
    """After a draw: the mover's knock test and, where allowed, big gin."""
    if not idx.size:
        return
    if _compiled is not None:
        players = np.ascontiguousarray(np.broadcast_to(np.asarray(player, np.int64), (s.batch_size,)))
        rows = np.asarray(idx, np.int64)
        _compiled.prepare_rows(rows, players, s._games, s.rules.big_gin)
        return
    p = player[idx]
    s._big_gin_ok[idx] = False
    masks = melds.suit_masks(s._hands[idx, p])
    after = melds.masks_after_discard(masks)
    s._after_discard[idx] = after
    if s.rules.big_gin:
        # 11 melded cards include a meld of 4+, so some discard leaves 0: test only those.
        maybe = np.flatnonzero(after.min(1) == 0)
        s._big_gin_ok[idx[maybe]] = melds.masks_deadwood(masks[maybe]) == 0


def _pass(s: State, idx, player) -> None:
    if not idx.size:
        return
    p = player[idx]
    upcard = s.pile[idx, 0].astype(np.int64)
    s.passed[idx, p, upcard] = True
    first = p != s.dealer[idx]  # the non-dealer passed: the dealer is offered the upcard
    s.current[idx] = np.where(first, s.dealer[idx], 1 - s.dealer[idx])
    s.phase[idx] = np.where(first, OFFER, FORCED_DRAW)


def _push(s: State, idx, p, card) -> None:
    s._hands[idx, p, card] = False
    s._deadwood[idx, p] = s._after_discard[idx, card]
    s._after_discard[idx] = melds.NOT_IN_HAND  # the mover's table: nobody's business after the turn
    s.pile[idx, s.pile_size[idx]] = card
    s.pile_mask[idx, card] = True
    s.pile_size[idx] += 1
    s.taken[idx] = -1
    s._big_gin_ok[idx] = False


def _discard(s: State, idx, a, player) -> None:
    if not idx.size:
        return
    p, card = player[idx], a[idx]
    _push(s, idx, p, card)
    s.discarded[idx, p, card] = True
    s.knock_card[idx] = -1
    dead = s.stock_pos[idx] >= NUM_CARDS - DEAD_STOCK
    truncated = ~dead & (s.turn[idx] >= s.rules.max_turns)
    going = ~(dead | truncated)
    on = idx[going]
    s.current[on] = 1 - p[going]
    s.phase[on] = DRAW
    ended = idx[~going]
    if ended.size:
        kind = np.where(dead[~going], DEAD, TRUNCATED)
        s.last_knocker[ended] = -1
        _end_hand(s, ended, kind, np.zeros((ended.size, 2), np.int64), winner=np.full(ended.size, -1))


def _knock(s: State, idx, a, player, big: bool) -> None:
    if not idx.size:
        return
    p = player[idx]
    if big:
        s.knock_card[idx] = -1
    else:
        card = a[idx] - A.KNOCK
        _push(s, idx, p, card)
        s.knock_card[idx] = card
    res = score_hands(
        s._hands[idx, p], s._hands[idx, 1 - p], s.rules, knock_limits=s.knock_limit[idx], big_gin=np.full(idx.size, big)
    )
    kp, dp = res["knocker_points"], res["defender_points"]
    points = np.zeros((idx.size, 2), np.int64)
    rows = np.arange(idx.size)
    points[rows, p] = kp
    points[rows, 1 - p] = dp
    winner = np.where(kp > 0, p, np.where(dp > 0, 1 - p, -1))
    s.last_knocker[idx] = p
    _end_hand(s, idx, res["kind"], points, winner)


def _end_hand(s: State, idx, kind, points, winner) -> None:
    """Book a finished hand, then end the game or deal the next hand."""
    s.hand_ended[idx] = True
    s.hand_kind[idx] = kind
    s.hand_points[idx] = points
    s.last_hands[idx] = s._hands[idx]
    s.hand_turns[idx] = s.turn[idx]
    s.hand_knock_limit[idx] = s.knock_limit[idx]
    s.scores[idx] += points.astype(np.int32)
    rows = np.flatnonzero(winner >= 0)
    s.hands_won[idx[rows], winner[rows]] += 1
    s.hands_played[idx] += 1
    s.dead_hands[idx] += (kind == DEAD) | (kind == TRUNCATED)
    if s.mode == "hand":
        over = np.ones(idx.size, bool)
        cut = kind == TRUNCATED
    else:
        reached = s.scores[idx].max(1) >= s.rules.target
        cut = ~reached & (s.hands_played[idx] >= s.rules.max_hands)
        over = reached | cut
    done = idx[over]
    if done.size:
        s.game_ended[done] = True
        s.game_truncated[done] = cut[over]
        s.phase[done] = DONE
        if s.mode == "match":
            final, win = match_final(
                s.scores[done], s.hands_won[done], s.hands_played[done], s.dead_hands[done], s.rules
            )
            capped = cut[over]  # a match cut by the hand cap: its totals as they stand, no winner
            final[capped] = s.scores[done][capped]
            win[capped] = -1
            s.final_scores[done] = final
            s.bonus_points[done] = final - s.scores[done]
            s.winner[done] = win
        else:
            s.final_scores[done] = s.hand_points[done]
            s.winner[done] = winner[over]
    nxt = idx[~over]
    if nxt.size:
        w = winner[~over]
        dealer = s.dealer[nxt].astype(np.int64)
        rule = s.rules.next_dealer
        if rule == "alternate":
            new = 1 - dealer
        elif rule == "loser":
            new = 1 - w
        else:
            new = w
        s.dealer[nxt] = np.where(w >= 0, new, dealer)  # no winner: the same dealer again
        _deal(s, nxt)


# ------------------------------------------------------------------- the engines
#: The engines: ``numba`` (``ginenv.compiled``: each game's step compiled) where numba is
#: installed, else ``numpy`` (the batched reference above). ``GINENV_ENGINE=numpy``
#: keeps the numpy engine; ``set_engine`` switches (tests, benches). Both give the same
#: games bit for bit.
ENGINES = ("numba", "numpy")
_compiled = None
_announced: list = []  # the first-compile line is said once a process


def engine() -> str:
    """The engine in use: ``"numba"`` or ``"numpy"``."""
    return "numpy" if _compiled is None else "numba"


def set_engine(name: str) -> str:
    """Use the engine ``name`` (``numba`` or ``numpy``) from now on; returns the one it
    replaces. ``ValueError`` for another name, or ``numba`` when numba is missing."""
    global _compiled
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {name!r}")
    before = engine()
    if name == "numpy":
        _compiled = None
    else:
        try:
            from ginenv import compiled
        except ImportError as e:
            raise ValueError(f"the numba engine needs numba (pip install numba): {e}") from None
        assert (compiled.OFFER, compiled.DISCARD, compiled.DONE, compiled.SKIP) == (OFFER, DISCARD, DONE, SKIP)
        if _compiled is None and not _announced:
            _announced.append(compiled.announce_compile())  # a line, the first time on a machine
        _compiled = compiled
    return before


def warm_up() -> None:
    """Compile the engine's entry points now (a few random moves of a few games, their
    observations, the meld maths the baselines use): the first run on a machine pays the
    whole compile at once, as its announcement says, and numba caches it."""
    from ginenv.melds import deadwood_after_discard
    from ginenv.observation import observe

    s = init(4, "standard", seed=0, mode="match")
    rng = np.random.default_rng(0)
    for _ in range(120):
        mask = legal_action_mask(s)
        live = ~s.done
        if not live.any():
            break
        a = np.full(s.batch_size, SKIP, np.int64)
        a[live] = [rng.choice(np.flatnonzero(m)) for m in mask[live]]
        observe(s, s.current)
        step(s, a)
    hand = np.zeros((1, 52), bool)
    hand[0, :11] = True
    if _compiled is not None:
        _compiled.hands_after_discard(hand, np.empty(hand.shape, np.uint8))
    deadwood_after_discard(hand)


def _compiled_legal(s: State) -> None:
    legal = np.zeros((s.batch_size, A.NUM_ACTIONS), bool)
    _compiled.legal_mask(s._games, legal)
    legal.flags.writeable = False
    s._legal = legal


def _rule_vector(s: State) -> np.ndarray:
    """``compiled.rule_vector`` of the state's rules and settings, made once a state."""
    v = s.__dict__.get("_rule_vec")
    if v is None:
        v = s.__dict__["_rule_vec"] = _compiled.rule_vector(s.rules, s.mode == "match", s.auto_reset)
    return v


def _compiled_step(s: State, actions) -> State:
    """``step`` on the compiled engine: one compiled call with the state's records
    (the moves, the ends of hands, the next deals, the new legal mask)."""
    a = actions
    if type(a) is not np.ndarray or a.dtype != np.int64 or a.shape != s.phase.shape:
        a = np.asarray(actions)
        if a.shape != (s.batch_size,) or not np.issubdtype(a.dtype, np.integer):
            _check_actions(s, actions)  # raises, naming the problem
        a = a.astype(np.int64)
    legal = np.zeros((len(a), A.NUM_ACTIONS), bool)
    if _compiled.step(a, s._games, s._legal, legal, _rule_vector(s)) < 0:
        _check_actions(s, actions)  # raises the same message as the numpy engine
    legal.flags.writeable = False
    s._legal = legal
    return s


_wanted = os.environ.get("GINENV_ENGINE", "numba")
if _wanted not in ENGINES:
    raise ValueError(f"GINENV_ENGINE must be one of {', '.join(ENGINES)}; got {_wanted!r}")
try:
    set_engine(_wanted)
except ValueError:  # numba is not installed: the numpy engine
    _compiled = None
