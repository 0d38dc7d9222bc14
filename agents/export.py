"""``python -m agents.export``: a checkpoint as one ONNX file (``agents.training.export``)."""

from agents.extras import run_command

if __name__ == "__main__":
    run_command("agents.training.export")
