"""``python -m agents.export``: a checkpoint as one ONNX file (``--onnx``,
``agents.training.export``) or as a Kaggle submission (``--kaggle``,
``agents.bridges.kaggle_export``)."""

import sys

from agents.extras import run_command


def run() -> None:
    """The command (``ginenv-export`` where installed): one parser, ``--onnx`` or
    ``--kaggle`` (``agents.training.checkpoint.command_parser``), run by the module of that form."""
    kaggle = any(a == "--kaggle" or a.startswith("--kaggle=") for a in sys.argv[1:])
    run_command("agents.bridges.kaggle_export" if kaggle else "agents.training.export")


if __name__ == "__main__":
    run()
