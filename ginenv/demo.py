"""Score a hand from the command line: ``python -m ginenv.demo [KNOCKER] [DEFENDER] [--rules NAME]``.

With no hands given, it scores the rule book's pagat example (knock 6 against 14 after
lay-offs) and prints each player's arrangement.
"""

import argparse

from ginenv.cards import format_cards, parse_cards, to_hand
from ginenv.melds import deadwood, deadwood_after_discard
from ginenv.rules import PRESETS, Rules
from ginenv.scoring import score_hand


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("knocker", nargs="?", default="4h 5h 6h 9s 9c 9d Jc Qc Kc 6d")
    p.add_argument("defender", nargs="?", default="3h 7h 9h 2c 2d 2s Ad 3c 4s 6s")
    p.add_argument("--rules", default="pagat", choices=list(PRESETS))
    args = p.parse_args(argv)
    rules = Rules.preset(args.rules)
    knocker, defender = to_hand(parse_cards(args.knocker)), to_hand(parse_cards(args.defender))
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
