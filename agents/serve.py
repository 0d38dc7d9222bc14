"""``python -m agents.serve``: the web page and JSON API (``agents.play.server``)."""

from agents.extras import run_command

if __name__ == "__main__":
    run_command("agents.play.server")
