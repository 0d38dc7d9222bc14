"""The optional extras and what each frontend needs: ``require("serve", ...)`` at the top
of a command's module turns a missing package into one line naming the extra to install
(``pip install -e ".[serve]"``), not a traceback from deep inside an import."""

from __future__ import annotations

import importlib.util
import sys

#: The import names each extra of pyproject.toml brings.
EXTRAS = {
    "train": ("torch", "safetensors", "yaml", "tensorboard"),
    "serve": ("starlette", "uvicorn", "cryptography"),
    "render": ("PIL", "moviepy"),
    "openspiel": ("pyspiel",),
    "kaggle": ("pyspiel", "kaggle_environments"),
    "sb3": ("stable_baselines3", "sb3_contrib"),
    "rllib": ("ray",),
    "onnx": ("onnx", "onnxruntime", "onnxscript"),
    "textarena": ("textarena",),
}


def install_hint(names: str) -> str:
    """How to install extras: in the clone ``pip install -e ".[x]"``, where the package is
    installed from a wheel ``pip install "ginenv[x]"``."""
    from pathlib import Path

    clone = (Path(__file__).resolve().parent.parent / "pyproject.toml").is_file()
    return f'pip install -e ".[{names}]"' if clone else f'pip install "ginenv[{names}]"'


class MissingExtra(ImportError):
    """A package of an optional extra is not installed; the message says which extra."""


def missing(extra: str) -> list:
    """The packages of ``extra`` that cannot be imported here."""
    return [m for m in EXTRAS[extra] if _absent(m)]


def _absent(module: str) -> bool:
    if module in sys.modules:
        return sys.modules[module] is None  # None: imports of it are blocked
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def require(*extras: str, what: str, main: bool = False) -> None:
    """``MissingExtra`` naming the extras to install unless every package of ``extras``
    is there; ``main=True`` (a module run as a command) exits with the message instead."""
    lacking = {e: missing(e) for e in extras}
    lacking = {e: m for e, m in lacking.items() if m}
    if not lacking:
        return
    names = ",".join(lacking)
    message = (
        f"{what} needs the {names} extra: {install_hint(names)} "
        f"(not installed: {', '.join(m for ms in lacking.values() for m in ms)})"
    )
    if main:
        raise SystemExit(message)
    raise MissingExtra(message)


def run_command(module: str) -> None:
    """Run ``module``'s ``main()`` as a command: a missing extra ends it with one line
    naming the extra, not a traceback."""
    import importlib

    try:
        main = importlib.import_module(module).main
    except MissingExtra as e:
        raise SystemExit(str(e)) from None
    raise SystemExit(main())
