"""``python -m agents.play``: the terminal game (``agents.play.terminal``)."""

from agents.extras import run_command

if __name__ == "__main__":
    run_command("agents.play.terminal")
