"""Plot a run's evaluation win rates (with their 95% intervals) over training as a PNG.

``python bench/plot_learning_curve.py runs/<run> [more run dirs] --out docs/learning_curve.png``
Reads the TensorBoard scalars ``eval/<baseline>_win_rate`` (and ``_ci_low`` /
``_ci_high``). Needs matplotlib (the ``plot`` extra).
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("run_dirs", nargs="+", help="TensorBoard run directories (a resumed run may add one)")
    p.add_argument("--out", default="learning_curve.png")
    p.add_argument("--title", default="Match win rate (to 100, standard rules) during training")
    args = p.parse_args()
    # A resumed run adds an event file; read each and keep the latest value per step.
    series: dict = {}
    files = [f for d in args.run_dirs for f in Path(d).glob("events.out.tfevents.*")]
    for path in sorted(files, key=lambda p: p.stat().st_mtime):
        acc = EventAccumulator(str(path), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            series.setdefault(tag, {}).update({e.step: e.value for e in acc.Scalars(tag)})
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=120)
    for name, colour in (("knock_early", "tab:red"), ("gin_hunter", "tab:blue")):
        tag = f"eval/{name}_win_rate"
        if tag not in series:
            continue
        steps = sorted(series[tag])
        x = [s / 1e6 for s in steps]
        ax.plot(x, [series[tag][s] for s in steps], color=colour, label=f"vs {name} (400 matches each)")
        lo, hi = series.get(tag + "_ci_low", {}), series.get(tag + "_ci_high", {})
        if all(s in lo and s in hi for s in steps):
            ax.fill_between(x, [lo[s] for s in steps], [hi[s] for s in steps], color=colour, alpha=0.15)
    ax.axhline(0.5, color="grey", lw=0.8, ls=":")
    ax.axhline(0.6, color="tab:red", lw=0.8, ls="--", label="60% target vs knock_early")
    ax.set_xlabel("decisions played (millions, both seats)")
    ax.set_ylabel("match win rate")
    ax.set_ylim(0, 1)
    ax.set_title(args.title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
