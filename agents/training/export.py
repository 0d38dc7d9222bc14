"""Export a trained policy to ONNX: ``python -m agents.export <checkpoint> --onnx out.onnx``.

One self-contained file (the weights inside). The model takes ``observation`` (B, 487)
float32 and ``action_mask`` (B, 108) int8, 1 for a legal action (the PettingZoo env's
mask as it is; a bool mask from the vector or Gymnasium env: ``mask.astype(np.int8)``),
and returns ``logits`` (B, 108) float32 with illegal actions at -1e8, and ``action``
(B,) int64, the greedy legal action. Needs the ``onnx`` extra: ``pip install -e
".[onnx]"`` (onnx, onnxruntime, onnxscript). ``--kaggle submission.tar.gz`` instead writes
a Kaggle submission (``agents.bridges.kaggle_export``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agents.extras import install_hint, require

require("train", "onnx", what="the ONNX export (python -m agents.export)", main=__name__ == "__main__")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from agents.training.checkpoint import command_parser  # noqa: E402
from agents.training.network import masked_logits  # noqa: E402
from agents.training.policy import CheckpointError, load_policy  # noqa: E402
from ginenv.actions import NUM_ACTIONS  # noqa: E402
from ginenv.observation import OBS_SIZE  # noqa: E402


class _Greedy(nn.Module):
    def __init__(self, actor: nn.Module):
        super().__init__()
        self.actor = actor

    def forward(self, observation, action_mask):
        logits = masked_logits(self.actor(observation), action_mask != 0)
        return logits, logits.argmax(-1)


def export_onnx(checkpoint, out_path) -> None:
    """Write the checkpoint's actor as one self-contained ONNX file (weights inside)."""
    policy = load_policy(checkpoint)
    module = _Greedy(policy.model.actor).eval()
    obs = torch.zeros(2, OBS_SIZE)
    mask = torch.ones(2, NUM_ACTIONS, dtype=torch.int8)
    batch = torch.export.Dim("batch")
    torch.onnx.export(
        module,
        (obs, mask),
        str(out_path),
        input_names=["observation", "action_mask"],
        output_names=["logits", "action"],
        opset_version=18,
        dynamo=True,
        external_data=False,
        dynamic_shapes=({0: batch}, {0: batch}),
    )


def main(argv=None) -> int:
    p = command_parser("python -m agents.export", __doc__)
    args = p.parse_args(argv)
    if args.search is not None:
        p.error("--search goes with --kaggle (an ONNX file holds the policy alone; search needs the engine)")
    out = Path(args.onnx)
    if out.is_dir():
        p.error(f"--onnx {out} is a folder; give the file to write, e.g. {out / 'policy.onnx'}")
    if not out.parent.resolve().is_dir() or not os.access(out.parent.resolve(), os.W_OK):
        p.error(f"--onnx {out}: cannot write in {out.parent.resolve()} (missing or not writable)")
    try:
        export_onnx(args.checkpoint, args.onnx)
    except CheckpointError as e:
        p.error(str(e))
    except ImportError as e:
        print(f"ONNX export needs the onnx extra: {install_hint('onnx')} ({e})", file=sys.stderr)
        return 2
    print(f"wrote {args.onnx}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
