"""Time to strength: when a training run first beat an opponent at 0.50 and 0.60 of matches.

Evaluates a run's checkpoints (every ``--every``-th step, oldest first, and the last)
with the project's evaluator (``--matches`` matches to 100 against ``--opponent``, the
same deals for every checkpoint: ``--seed``), and prints each one's decisions, training
minutes and win rate with its 95% interval, then the decisions and minutes at which the
run first reached each ``--thresholds`` share. Training minutes are the wall time of the
run's updates (``policy.json``'s ``seconds``, resumes included; runs saved before it
was recorded show none); a stages run (``train.py --config`` with ``stages``) counts on
from stage to stage. Run: ``python bench/time_to_strength.py checkpoints/<run>
[--opponent knock_early] [--matches 1000] [--every 2] [--json out.json]``.
"""

import argparse
import json
import sys
import time
from pathlib import Path

from agents import make_agent
from agents.evaluate import play, write_json
from agents.training.checkpoint import CheckpointError, read_json
from ginenv.rules import PRESETS, Rules


def steps(run: Path) -> list:
    """The run's step directories, oldest first; a stages run's (``stages.json``) stage
    by stage, as ``(step, decisions, seconds)`` offsets of the stages before it."""
    dirs = [run]
    if (run / "stages.json").is_file():
        dirs = [run / d for d in json.loads((run / "stages.json").read_text())["dirs"] if (run / d).is_dir()]
    found, decisions, seconds = [], 0, 0.0
    for d in dirs:
        mine = sorted(p for p in d.glob("step_*") if (p / "policy.json").is_file())
        found += [(p, decisions, seconds) for p in mine]
        if mine:
            last = read_json(mine[-1] / "policy.json", "policy.json")
            decisions, seconds = decisions + last.get("decisions", 0), seconds + last.get("seconds", 0.0)
    if not found:
        raise CheckpointError(f"no checkpoints (step_*/policy.json) in {run}")
    return found


def crossings(rows: list, thresholds) -> dict:
    """For each threshold, the first row whose win rate reached it (None: never)."""
    return {t: next((r for r in rows if r["win_rate"] >= t), None) for t in thresholds}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", help="a run directory (checkpoints/<run>)")
    p.add_argument("--opponent", default="knock_early")
    p.add_argument("--matches", type=int, default=1000)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--every", type=int, default=1, help="evaluate every N-th checkpoint (and the last)")
    p.add_argument("--thresholds", default="0.5,0.6", help="win rates to report the first crossing of")
    p.add_argument("--rules", default=None, help=f"rules preset (default: the run's; {', '.join(PRESETS)})")
    p.add_argument("--json", default=None, help="write the rows and crossings as JSON here")
    args = p.parse_args(argv)
    if args.matches < 1 or args.every < 1 or args.seed < 0:
        p.error("--matches and --every must be >= 1, --seed >= 0")
    try:
        thresholds = [float(t) for t in args.thresholds.split(",")]
    except ValueError:
        p.error(f"--thresholds must be numbers separated by commas, got {args.thresholds!r}")
    try:
        found = steps(Path(args.run))
        opponent = make_agent(args.opponent, seed=args.seed)
    except (CheckpointError, ValueError) as e:
        p.error(str(e))
    chosen = found[:: args.every]
    if chosen[-1] != found[-1]:
        chosen.append(found[-1])
    rows = []
    for step, done_decisions, done_seconds in chosen:
        meta = read_json(step / "policy.json", "policy.json")
        rules = Rules.preset(args.rules) if args.rules else Rules.from_dict(meta["rules"])
        t = time.time()
        r = play(make_agent(str(step)), opponent, args.matches, rules, args.seed)
        seconds = meta.get("seconds")
        name = step.name if step.parent == Path(args.run) else f"{step.parent.name}/{step.name}"
        row = {
            "step": name,
            "decisions": meta.get("decisions", 0) + done_decisions,
            "minutes": None if seconds is None else (seconds + done_seconds) / 60,
            "win_rate": r["win_rate_a"],
            "ci95": r["win_rate_a_ci95"],
        }
        rows.append(row)
        minutes = "-" if row["minutes"] is None else f"{row['minutes']:.1f}"
        print(
            f"{name}  {row['decisions'] / 1e6:7.2f}M decisions  {minutes:>6} min  "
            f"win rate {row['win_rate']:.3f} ({row['ci95'][0]:.3f}-{row['ci95'][1]:.3f})  [{time.time() - t:.0f} s]",
            flush=True,
        )
    first = crossings(rows, thresholds)
    for t, row in first.items():
        if row is None:
            print(f"never reached {t:.2f} against {args.opponent} ({args.matches} matches, seed {args.seed})")
        else:
            minutes = "unknown" if row["minutes"] is None else f"{row['minutes']:.1f}"
            print(
                f"first reached {t:.2f} against {args.opponent}: {row['step']}, "
                f"{row['decisions'] / 1e6:.2f}M decisions, {minutes} minutes of training"
            )
    if args.json:
        write_json(args.json, {"opponent": args.opponent, "matches": args.matches, "seed": args.seed, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
