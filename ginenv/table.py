"""Three and four players, the formats of the wikiHow source (seed 003), over the
two-player core: every hand is an ordinary two-player hand of ``ginenv.core``.

Three players (``three_player_matches``): the dealer sits the hand out and the other
two play it; the dealer's seat moves one place each hand (a dead or truncated hand
keeps it, as in the two-player rule). Each player keeps a running total; the match ends
when a total reaches the target, and the end-of-match bonuses follow the preset
(``scoring.match_final`` with three players: the game bonus to the leader, a line bonus
per hand won to everyone, and the shutouts reading "the loser" as both other players).

House rules this project chose where the source is silent:

- At the three-player table, the player after the dealer plays first (the
  non-dealer's part of the two-player hand) and the player after that takes the
  dealer's part. The sitting-out player sees nothing of either hand (as a dealer would
  see none until the hand is laid out).
- The agents' observation (version 1) holds two match totals: the mover's and its
  opponent's in the hand being played. The sitting-out player's total is not in it.
- A match where the best final total is shared is a draw.

Four players: two separate matches are nothing new (``agents.evaluate`` pairs them);
teams (``team_matches``) play two two-player matches at once, partners at different
tables, and the pair whose partners' final totals add up higher wins. A team match ends
when both tables have finished (each table is a whole match to the target).
"""

from __future__ import annotations

import numpy as np

from ginenv import core
from ginenv.observation import observe
from ginenv.rules import Rules, resolve
from ginenv.scoring import match_final

PLAYERS = 3


def _play_hands(agents, players: np.ndarray, totals: np.ndarray, rules: Rules, game_seeds: np.ndarray) -> dict:
    """One two-player hand in each of B matches at once: ``players`` ``(B, 2)`` are the
    table seats of the hand's non-dealer and dealer; ``totals`` ``(B, 2)`` their running
    totals (shown in their observations). Returns the hand's points per part, the
    scorer (-1 for none) and the hand's kind."""
    b = len(players)
    s = core.init(b, rules, mode="hand", game_seeds_=game_seeds, dealers=np.ones(b, np.int8))
    s.scores[:] = totals
    kinds = np.full(b, core.NONE, np.int64)
    points = np.zeros((b, 2), np.int64)
    while not s.done.all():
        mover = s.current.astype(np.int64)
        who = players[np.arange(b), mover]
        obs, mask = observe(s, mover), core.legal_action_mask(s)
        actions = np.full(b, core.SKIP, np.int64)
        for k, agent in enumerate(agents):
            idx = np.flatnonzero((who == k) & ~s.done)
            if idx.size:
                actions[idx] = agent.act(obs[idx], mask[idx])
        core.step(s, actions)
        ended = np.flatnonzero(s.hand_ended)
        kinds[ended] = s.hand_kind[ended]
        points[ended] = s.hand_points[ended]
    return {"points": points, "winner": s.winner.astype(np.int64), "kind": kinds}


def three_player_matches(agents, n: int, rules=None, seed: int = 0, first_dealers=None) -> dict:
    """``n`` three-player matches of ``agents`` (three agents with ``act``, at table
    seats 0, 1, 2), all at once. ``first_dealers`` ``(n,)``: the table seat that deals
    first in each match (default: match i's first dealer is ``i % 3``). Returns per
    match the final totals with bonuses ``(n, 3)``, the running totals, hands won and
    played, dead hands, the winner (-1 for a draw) and ``truncated``: the match was
    still short of the target after ``rules.max_hands`` hands (no bonuses, no winner)."""
    if len(agents) != PLAYERS:
        raise ValueError(f"three-player matches take 3 agents, got {len(agents)}")
    rules = resolve(rules)
    dealer = np.arange(n) % PLAYERS if first_dealers is None else np.asarray(first_dealers, np.int64).copy()
    if dealer.shape != (n,) or not np.isin(dealer, range(PLAYERS)).all():
        raise ValueError(f"first_dealers must be {n} table seats 0..2")
    seeds = core.game_seeds(seed, n)
    running = np.zeros((n, PLAYERS), np.int64)
    won = np.zeros((n, PLAYERS), np.int64)
    played = np.zeros(n, np.int64)
    dead = np.zeros(n, np.int64)
    sat_out = np.zeros((n, PLAYERS), np.int64)
    live = np.arange(n)
    for _ in range(rules.max_hands):
        if not live.size:
            break
        d = dealer[live]
        players = np.stack([(d + 1) % PLAYERS, (d + 2) % PLAYERS], 1)
        totals = running[live[:, None], players]
        hand = _play_hands(
            agents, players, totals, rules, core.splitmix64(seeds[live] + played[live].astype(np.uint64))
        )
        rows = np.arange(live.size)
        running[live[:, None], players] += hand["points"]
        scored = hand["winner"] >= 0
        won[live[scored], players[rows[scored], hand["winner"][scored]]] += 1
        played[live] += 1
        dead[live] += ~scored
        sat_out[live, d] += 1
        dealer[live] = np.where(scored, (d + 1) % PLAYERS, d)  # a dead hand keeps the dealer
        live = live[running[live].max(1) < rules.target]
    truncated = np.zeros(n, bool)
    truncated[live] = True  # the hand cap came first
    final, winner = match_final(running, won, played, dead, rules)
    final[truncated], winner[truncated] = running[truncated], -1
    return {
        "truncated": truncated,
        "final": final,
        "running": running,
        "hands_won": won,
        "hands_played": played,
        "dead_hands": dead,
        "sat_out": sat_out,
        "winner": winner,
    }


def team_matches(agents, n: int, rules=None, seed: int = 0) -> dict:
    """``n`` team matches of four agents: team 0 is agents 0 and 1, team 1 agents 2 and
    3. At table A agent 0 plays agent 2, at table B agent 3 plays agent 1 (partners at
    different tables, each team in both seats). Each table is a whole two-player match;
    the team whose partners' final totals add up higher wins. Returns the tables' final
    totals, the team totals ``(n, 2)`` and the winning team (-1 for a tie)."""
    if len(agents) != 4:
        raise ValueError(f"team matches take 4 agents, got {len(agents)}")
    rules = resolve(rules)
    seeds = core.game_seeds(seed, 2 * n)
    finals, cut = [], np.zeros(n, bool)
    for table, (first, second) in enumerate(((0, 2), (3, 1))):
        s = core.init(n, rules, mode="match", game_seeds_=seeds[table::2])
        seat_agent = (first, second)
        while not s.done.all():
            obs, mask = observe(s, s.current), core.legal_action_mask(s)
            actions = np.full(n, core.SKIP, np.int64)
            for seat in (0, 1):
                idx = np.flatnonzero((s.current == seat) & ~s.done)
                if idx.size:
                    actions[idx] = agents[seat_agent[seat]].act(obs[idx], mask[idx])
            core.step(s, actions)
            cut |= core.truncated(s)
        finals.append(s.final_scores.astype(np.int64))
    a, b = finals
    teams = np.stack([a[:, 0] + b[:, 1], a[:, 1] + b[:, 0]], 1)  # team 0: agent 0 (A seat 0) + agent 1 (B seat 1)
    winner = np.where((teams[:, 0] == teams[:, 1]) | cut, -1, np.argmax(teams, 1))
    return {"table_a": a, "table_b": b, "teams": teams, "winner": winner, "truncated": cut}
