"""``python -m agents.rllib``: self-play PPO on Ray RLlib (``agents.bridges.rllib``)."""

from agents.extras import run_command

if __name__ == "__main__":
    run_command("agents.bridges.rllib")
