"""Training entry point: self-play PPO (not built yet; it arrives with the trainer issue)."""

import sys


def main() -> int:
    print("train.py: self-play PPO training is not implemented yet. The rules core is "
          "(see README: `python -m ginenv.demo`).", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
