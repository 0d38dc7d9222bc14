"""Score a hand from the command line: ``python -m ginenv.demo [KNOCKER] [DEFENDER] [--rules NAME]``.

With no hands given, it scores the rule book's example from pagat (knock 6 against 14
after lay-offs) and prints each player's arrangement. ``--rules`` defaults to
``standard``, the documented default preset.
"""

import argparse

from ginenv.cards import format_cards, parse_cards, to_hand
from ginenv.melds import deadwood, deadwood_after_discard
from ginenv.rules import PRESETS, Rules
from ginenv.scoring import score_hand

EXAMPLE_KNOCKER = "4h 5h 6h 9s 9c 9d Jc Qc Kc 6d"
EXAMPLE_DEFENDER = "3h 7h 9h 2c 2d 2s Ad 3c 4s 6s"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("hands", nargs="*", metavar="HAND", help="the knocker's hand, then the defender's")
    p.add_argument("--rules", default="standard", choices=list(PRESETS))
    args = p.parse_args(argv)
    if len(args.hands) not in (0, 2):
        p.error(f"give both hands, the knocker's then the defender's, or neither; got {len(args.hands)}")
    args.knocker, args.defender = args.hands or (EXAMPLE_KNOCKER, EXAMPLE_DEFENDER)
    try:
        knocker_ids, defender_ids = parse_cards(args.knocker), parse_cards(args.defender)
    except ValueError as e:
        p.error(str(e))
    both = set(knocker_ids.tolist()) & set(defender_ids.tolist())
    if both:
        p.error(f"a card cannot be in both hands: {format_cards(sorted(both))}")
    if len(knocker_ids) not in (10, 11) or len(defender_ids) != 10:
        p.error(
            f"the knocker holds 10 cards (or 11 before its discard), the defender 10; got "
            f"{len(knocker_ids)} and {len(defender_ids)}"
        )
    rules = Rules.preset(args.rules)
    knocker, defender = to_hand(knocker_ids), to_hand(defender_ids)
    if knocker.sum() == 11:
        after = deadwood_after_discard(knocker)
        best = int(after.argmin())
        print(f"11 cards: the best discard is {format_cards([best])}, leaving deadwood {after[best]}")
        knocker[best] = False
    print(f"knocker  {format_cards(knocker)}  (deadwood {deadwood(knocker)})")
    print(f"defender {format_cards(defender)}  (deadwood {deadwood(defender)} before lay-offs)")
    r = score_hand(knocker, defender, rules)
    print(
        f"knocker shows {' | '.join(format_cards(m) for m in r.knocker_melds)}"
        f"  deadwood [{format_cards(r.knocker_deadwood_cards)}] = {r.knocker_deadwood}"
    )
    print(
        f"defender shows {' | '.join(format_cards(m) for m in r.defender_melds) or '-'}"
        f"  lays off [{format_cards([c for c, _ in r.layoffs])}]"
        f"  deadwood [{format_cards(r.defender_deadwood_cards)}] = {r.defender_deadwood}"
    )
    print(f"{r.kind} under {args.rules}: knocker {r.knocker_points}, defender {r.defender_points}")


if __name__ == "__main__":
    main()
