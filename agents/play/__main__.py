"""``python -m agents.play``: the terminal game (``agents.play.terminal``)."""

from agents.extras import run_command


def run() -> None:
    """The command (``ginenv-play`` where installed)."""
    run_command("agents.play.terminal")


if __name__ == "__main__":
    run()
