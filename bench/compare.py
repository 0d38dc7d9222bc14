"""Speed against another commit, in one run: ``python bench/compare.py REV -- CMD ...``.

Checks REV out into a temporary git worktree, then runs CMD (e.g. ``python
bench/bench_core.py``) ``--rounds`` times in each tree, alternating, so both meet the
same machine load. Every number CMD prints is read, line by line and in order; the
report gives, for each, the median in each tree and the ratio of the medians (this
tree over REV). A benchmark's figures must be rates or times printed in the same
order by both trees. Run: ``python bench/compare.py d04c5aa --rounds 5 -- python
bench/bench_eval.py --repeats 1``. ``--copy FILE`` (repeatable) copies a file of this
tree into the other one first: a benchmark written after REV.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NUMBER = re.compile(r"(?<![\d.])-?\d[\d,]*\.?\d*(?:e-?\d+)?")


def figures(text: str) -> list:
    """``(key, label, value)`` for every number printed: the label is the line's text
    with the numbers taken out, and the key the label, which of the lines with that
    label it is, and the number's place in the line; so the same figure pairs up across
    the two trees, and a line only one of them prints (a figure added since) is left out
    without moving the others."""
    out, seen = [], {}
    for line in text.splitlines():
        label = NUMBER.sub("#", line).strip()
        seen[label] = seen.get(label, 0) + 1
        for k, m in enumerate(NUMBER.finditer(line)):
            out.append((f"{label}|{seen[label]}:{k}", label, float(m.group().replace(",", ""))))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rev", help="the commit to compare against")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--this",
        default=None,
        metavar="REV2",
        help="compare this commit instead of the working tree (both then checked out)",
    )
    p.add_argument(
        "--copy",
        action="append",
        default=[],
        metavar="FILE",
        help="copy this file of the working tree into the other tree(s) first (a benchmark newer than REV)",
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        p.error("give the command after --")
    cut = argv.index("--")
    args, cmd = p.parse_args(argv[:cut]), argv[cut + 1 :]
    if not cmd:
        p.error("give the command after --")
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for name, rev in (("other", args.rev), ("this", args.this)):
            if rev is not None:
                trees[name] = Path(tmp) / name
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(trees[name]), rev],
                    check=True,
                    capture_output=True,
                )
                for f in args.copy:
                    (trees[name] / f).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(ROOT / f, trees[name] / f)
        other, this = trees["other"], trees.get("this", ROOT)
        try:
            runs = {"this": [], args.rev: []}
            for _ in range(args.rounds):
                for name, tree in (("this", this), (args.rev, other)):
                    out = subprocess.run(
                        cmd,
                        cwd=tree,
                        capture_output=True,
                        text=True,
                        check=True,
                        env={**os.environ, "PYTHONPATH": str(tree)},
                    )
                    runs[name].append(figures(out.stdout))
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    mine, theirs = runs["this"], runs[args.rev]
    print(f"{' '.join(cmd)}: medians of {args.rounds} alternating runs, {args.this or 'this tree'} against {args.rev}")
    labels = {key: label for key, label, _ in mine[0]}
    for key, label in labels.items():
        a = [v for run in mine for k, _, v in run if k == key]
        b = [v for run in theirs for k, _, v in run if k == key]
        if len(b) != len(a) or not b:
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        if mb:
            print(f"  {ma:>12,.3f}  {mb:>12,.3f}  ratio {ma / mb:6.3f}   {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
