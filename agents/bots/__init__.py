"""The bots that travel inside the package, as package data: one folder a bot, each a
checkpoint (``LATEST`` and its step's ``policy.json`` and ``policy.safetensors``).

``SHIPPED`` is the shipped bot (docs/champion.md), ``shipped`` its name wherever a
checkpoint is taken (``checkpoint_path``). In the clone ``checkpoints/anticamper_priced``
points here.
"""

from __future__ import annotations

from pathlib import Path

#: The shipped bot's name as an agent spec or a checkpoint, anywhere the package is installed.
SHIPPED_NAME = "shipped"
#: The shipped bot: what the terminal game, the server and the Kaggle agent play by default.
SHIPPED = Path(__file__).resolve().parent / "anticamper_priced"


def checkpoint_path(spec) -> Path:
    """The checkpoint a spec names: ``shipped`` is the shipped bot, else the path."""
    return SHIPPED if str(spec) == SHIPPED_NAME else Path(str(spec))
