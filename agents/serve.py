"""``python -m agents.serve``: the web page and JSON API (``agents.play.server``)."""

from agents.extras import run_command


def run() -> None:
    """The command (``ginenv-serve`` where installed)."""
    run_command("agents.play.server")


if __name__ == "__main__":
    run()
