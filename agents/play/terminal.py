"""Play the bot in a terminal: ``python -m agents.play [--opponent SPEC] [--rules PRESET]
[--mode hand|match] [--seed N] [--seat 0|1]``.

The opponent is any agent spec (a baseline name or a checkpoint; default the shipped
bot). Moves are typed one a line: ``draw``, ``take``, ``pass``, a card to discard
(``7h``), ``knock 7h`` (discard 7h face down; gin when nothing is left), ``big gin``;
``help`` lists the legal moves, ``hint`` shows the bot's top moves for your position
with their probabilities, ``quit`` ends. A wrong or illegal entry gets a message and the
prompt again, nothing applied. It reads a pipe as well as a terminal, so a whole game
can be scripted.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import select
import sys
from pathlib import Path

from agents.play.game import BOT, HUMAN, Game, hint, hint_policy, parse_move
from agents.play.lang import LANGUAGES, move_label, phrase, to_english
from agents.registry import SHIPPED, make_agent
from ginenv import actions as A
from ginenv import core
from ginenv.cards import format_card
from ginenv.rules import PRESETS

PROMPT = "> "


def show_hand(a: dict, lang: str = "en") -> str:
    groups = " ".join(f"[{' '.join(m)}]" for m in a["melds"])
    return f"{groups} {' '.join(a['deadwood_cards'])}".strip() + "   " + phrase(lang, "t_deadwood", n=a["deadwood"])


def show_table(v: dict, lang: str = "en") -> str:
    deal = phrase(lang, "you_deal" if v["dealer"] == HUMAN else "bot_deals")
    lines = [
        phrase(
            lang,
            "t_table",
            hand=v["hand_no"],
            you=v["scores"][HUMAN],
            bot=v["scores"][BOT],
            target=v["target"],
            deal=deal,
            stock=v["stock_size"],
            limit=v["knock_limit"],
        )
    ]
    pile = v["discard_pile"]
    pile_line = phrase(lang, "t_pile", cards=" ".join(pile[:-1] + [f"[{pile[-1]}]"])) if pile else None
    lines.append(pile_line or phrase(lang, "t_pile_empty"))
    # The bot's discards this hand, in the order thrown (a passed upcard was never thrown).
    threw = [format_card(m["action"]) for m in v["moves"] if m["player"] == BOT and 0 <= m["action"] < A.KNOCK]
    if v["opponent_took"] or threw:
        lines.append(
            phrase(lang, "t_bot_holds", took=" ".join(v["opponent_took"]) or "-", threw=" ".join(threw) or "-")
        )
    just = (
        "   " + phrase(lang, "t_just_took", card=v["taken"])
        if v["taken"]
        else ("   " + phrase(lang, "t_you_drew", card=v["drawn"]) if v.get("drawn") else "")
    )
    lines.append(phrase(lang, "t_your_hand", hand=show_hand(v["arrangement"], lang)) + just)
    return "\n".join(lines)


def kind_name(kind: str, lang: str = "en") -> str:
    return phrase(lang, "k_" + ("dead" if kind == "truncated" else kind)) if lang != "en" else kind.replace("_", " ")


def show_result(r: dict, lang: str = "en") -> str:
    lines = [phrase(lang, "t_hand_over", n=r["hand"], kind=kind_name(r["kind"], lang))]
    for who in (HUMAN, BOT):
        name = phrase(lang, "t_you" if who == HUMAN else "t_bot")
        mark = phrase(lang, "t_knocked") if r["knocker"] == who else ""
        lines.append(f"  {name:4s}{mark}: {show_hand(r['hands'][who], lang)}")
    if r.get("knock_card"):
        lines.append("  " + phrase(lang, "t_knocked_with", card=r["knock_card"]))
    if r.get("rearranged"):
        lines.append("  " + phrase(lang, "t_rearranged"))
    for lay in r["layoffs"]:
        lines.append("  " + phrase(lang, "t_laid_off", card=lay["card"], meld=" ".join(lay["onto"])))
    lines.append("  " + phrase(lang, "t_points", you=r["points"][HUMAN], bot=r["points"][BOT]) + breakdown(r, lang))
    if "match" in r:
        m = r["match"]
        winner = phrase(lang, {HUMAN: "t_you_win", BOT: "t_bot_wins", None: "t_a_draw"}[m["winner"]])
        lines.append(
            phrase(
                lang,
                "t_match",
                winner=winner,
                you=m["final"][HUMAN],
                bot=m["final"][BOT],
                by=m["bonuses"][HUMAN],
                bb=m["bonuses"][BOT],
            )
        )
    return "\n".join(lines)


def breakdown(r: dict, lang: str = "en") -> str:
    """How a hand's points came about, as the rule texts score them: the deadwood
    difference and the gin, big gin or undercut bonus (`` (22 - 5 deadwood)``)."""
    if r["knocker"] is None or r["kind"] == "tie":
        return ""
    knocker, defender = r["knocker"], BOT if r["knocker"] == HUMAN else HUMAN
    kd, dd = r["hands"][knocker]["deadwood"], r["hands"][defender]["deadwood"]
    if r["kind"] in ("gin", "big_gin"):
        bonus = r["points"][knocker] - dd
        return "  " + phrase(lang, "t_bd_gin", dd=dd, bonus=bonus, kind=kind_name(r["kind"], lang))
    if r["kind"] == "undercut":
        bonus = r["points"][defender] - (kd - dd)
        return "  " + phrase(lang, "t_bd_undercut", kd=kd, dd=dd, bonus=bonus)
    return "  " + phrase(lang, "t_bd_knock", dd=dd, kd=kd)


def summarize(legal: list, lang: str = "en") -> str:
    """The legal moves in a line: ``draw | take | discard 4s 6s ... | knock 9s | big gin``."""
    discards = [a["label"].split()[-1] for a in legal if a["id"] < A.KNOCK]
    knocks = [a["label"].split()[-1] for a in legal if A.KNOCK <= a["id"] < A.DRAW_STOCK]
    words = {A.DRAW_STOCK: "c_draw", A.TAKE_DISCARD: "c_take", A.PASS: "c_pass", A.BIG_GIN: "c_big_gin"}
    parts = [phrase(lang, words[a["id"]]) for a in legal if a["id"] in words]
    if discards:
        parts.append(phrase(lang, "c_discard") + " " + " ".join(discards))
    if knocks:
        parts.append(phrase(lang, "c_knock") + " " + " ".join(knocks))
    return " | ".join(parts)


def typed_lines(stream):
    """The lines typed on ``stream`` (a terminal or a pipe), read so that Ctrl-C ends the
    wait at once: the read waits in short ``select`` calls, between which Python raises
    the KeyboardInterrupt whichever of the process's threads (torch's, numba's) the kernel
    handed the signal to; a read blocked in the main thread is not woken by a signal that
    another thread took. A stream without a pollable file descriptor is read as it is."""
    try:
        fd = stream.fileno()
        select.select([fd], [], [], 0)
    except (AttributeError, OSError, ValueError):
        yield from stream
        return
    encoding = getattr(stream, "encoding", None) or "utf-8"
    pending = b""
    while True:
        while b"\n" not in pending:
            if not select.select([fd], [], [], 0.2)[0]:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:  # the end of input (Ctrl-D)
                if pending:
                    yield pending.decode(encoding, errors="replace")
                return
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        yield line.decode(encoding, errors="replace") + "\n"


def run(game: Game, lines, out, hinter=None, lang: str = "en") -> int:
    """Play ``game`` reading moves from ``lines`` and writing to ``out`` in ``lang`` (moves
    may be typed in its words too); returns the number of moves made."""
    say = lambda text="": print(text, file=out, flush=True)  # noqa: E731
    seen, made = 0, 0

    def report(bot_moves):
        """The bot's moves in order, each finished hand's result before the moves of the
        next hand."""
        nonlocal seen
        for m in bot_moves:
            while seen < len(game.results) and game.results[seen]["hand"] < m["hand"]:
                say(show_result(game.results[seen], lang))
                seen += 1
            say(f"{phrase(lang, 't_bot')}: {move_label(lang, -1 if m['action'] is None else m['action'])}")
        for r in game.results[seen:]:
            say(show_result(r, lang))
        seen = len(game.results)

    report(game.last_bot_moves)
    lines = iter(lines)
    redraw = True
    while not game.over:
        v = game.view()
        if redraw:
            say()
            say(show_table(v, lang))
            say(phrase(lang, "t_your_move", moves=summarize(v["legal_actions"], lang)))
        redraw = False
        out.write(PROMPT)
        out.flush()
        line = next(lines, None)
        word = None if line is None else to_english(lang, line)
        if word is None or word in ("quit", "exit", "q"):
            say("\n" + phrase(lang, "t_bye"))
            return made
        line = word
        if word in ("help", "?"):
            say(phrase(lang, "t_legal") + "; ".join(move_label(lang, a["id"]) for a in v["legal_actions"]))
            say(phrase(lang, "t_type"))
            continue
        if word == "hint":
            # Against the expert level the hint is the expert's: the moves played out by its
            # search, each with the points of the hand after it (yours minus the bot's), or in
            # a match your chance of winning it after the hand.
            search = game.agent if hasattr(game.agent, "analyse") else None
            tips = hint(game, hinter, search=search) if hinter is not None else []
            say(
                phrase(lang, "t_hint")
                + (
                    "; ".join(
                        f"{move_label(lang, t['id'])} ({phrase(lang, 't_match_chance', p=round(t['value'] * 100))})"
                        if t.get("unit") == "match"
                        else f"{move_label(lang, t['id'])} ({t['value']:+.1f})"
                        if "value" in t
                        else f"{move_label(lang, t['id'])} ({t['probability']:.0%})"
                        for t in tips
                    )
                    if tips
                    else phrase(lang, "t_no_hints")
                )
            )
            continue
        try:
            action = parse_move(line, v["legal_actions"], taken=v["taken"], lang=lang)
        except ValueError as e:
            say(f"? {e}")
            continue
        made += 1
        # The expert level searches: a sign while it thinks, and for how long.
        searching = getattr(game.agent, "reads_state", False) and action not in (A.DRAW_STOCK, A.TAKE_DISCARD)
        if searching:
            say(phrase(lang, "t_thinking"))
        replies = game.play(action)
        report(replies)
        if searching and replies:
            say(phrase(lang, "t_thought", s=f"{game.bot_seconds:.2f}"))
        redraw = True
    return made


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m agents.play", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--opponent",
        default=str(SHIPPED),
        help="a baseline name, expert (the shipped bot searching at decision time) or a checkpoint "
        "(default: the shipped bot)",
    )
    p.add_argument("--rules", default="standard", choices=list(PRESETS))
    p.add_argument("--mode", default="match", choices=["hand", "match"])
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="the deal's seed, to replay a game (default: 128 random bits; shown when the game is over)",
    )
    p.add_argument("--seat", type=int, default=0, choices=[0, 1], help="your seat (0 or 1)")
    p.add_argument("--save", metavar="FILE", help="write the game's record (JSON) here when you stop")
    p.add_argument("--load", metavar="FILE", help="replay a saved record (or one from the server's API) and exit")
    p.add_argument(
        "--lang", default="en", choices=LANGUAGES, help="the game's language: en, nl (Nederlands), no (norsk)"
    )
    args = p.parse_args(argv)
    if args.load:
        try:
            record = json.loads(Path(args.load).read_text())
            print(show_record(record.get("record", record), args.lang))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            p.error(f"--load {args.load}: not a game record ({e})")
        return 0
    if args.save:
        try:
            Path(args.save).write_text("{}")  # found unwritable now, not after the game
        except OSError as e:
            p.error(f"--save {args.save}: cannot write there ({e.strerror})")
    if args.seed is not None and not 0 <= args.seed < 1 << core.SEED_BITS:
        p.error(f"--seed must be an integer from 0 to 2**{core.SEED_BITS} - 1, got {args.seed}")
    seed = args.seed if args.seed is not None else secrets.randbits(core.SEED_BITS)
    try:
        opponent = make_agent(args.opponent, seed=seed)
    except (ValueError, ImportError) as e:
        p.error(str(e))
    game = Game(opponent, args.rules, args.mode, seed, args.seat)
    what = phrase(args.lang, "t_one_hand" if args.mode == "hand" else "t_a_match")
    print(phrase(args.lang, "t_intro", name=getattr(opponent, "name", args.opponent), rules=args.rules, what=what))
    code = 0
    try:
        run(game, typed_lines(sys.stdin), sys.stdout, hint_policy(opponent), args.lang)
    except KeyboardInterrupt:  # Ctrl-C: end the game, no traceback
        print("\n" + phrase(args.lang, "t_bye"))
        code = 130
    if args.save:
        Path(args.save).write_text(json.dumps(game.record(), indent=2))
        print(f"record saved to {args.save} (replay it with --load {args.save})")
    if game.over:  # the deal is all known now: the seed replays it (--seed)
        print(f"seed {game.seed}")
    return code


def show_record(record: dict, lang: str = "en") -> str:
    """A saved record as text: each finished hand's moves and result, then the hand in
    play as far as it was seen."""
    lines = [f"a game record: {record['mode']}, rules {record['rules']}, you in seat {record['seat']}"]
    for h in record["hands"]:
        lines.append(f"\nhand {h['result']['hand']}: the upcard {h.get('upcard', '?')}")
        for i, m in enumerate(h["moves"], 1):
            lines.append(f"  {i:3d}. {'you' if m['player'] == HUMAN else 'bot'}: {m['label']}")
        lines.append(show_result(h["result"], lang))
    if record.get("in_play"):
        lines.append("\nthe hand in play (as you saw it):")
        for i, m in enumerate(record["in_play"]["moves"], 1):
            lines.append(f"  {i:3d}. {'you' if m['player'] == HUMAN else 'bot'}: {m['label']}")
    if record.get("seed"):
        lines.append(f"\nseed {record['seed']}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
