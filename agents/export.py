"""``python -m agents.export``: a checkpoint as one ONNX file (``--onnx``,
``agents.training.export``) or as a Kaggle submission (``--kaggle``,
``agents.bridges.kaggle_export``)."""

import sys

from agents.extras import run_command

if __name__ == "__main__":
    kaggle = any(a == "--kaggle" or a.startswith("--kaggle=") for a in sys.argv[1:])
    run_command("agents.bridges.kaggle_export" if kaggle else "agents.training.export")
