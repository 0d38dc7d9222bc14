"""A checkpoint as a Kaggle submission: ``python -m agents.export CHECKPOINT --kaggle
submission.tar.gz`` (or a folder to fill).

The bundle holds ``main.py`` (Kaggle's entry: the last callable it defines is
``agent(observation, configuration)``), the actor's weights (``policy.safetensors``,
the actor alone) with its spec (``policy.json``), and ``ginbot/``: the modules the
agent imports and nothing else, copied from this project with their imports renamed
(``ginenv.x`` and ``agents.*.x`` -> ``ginbot.x``, so no installed ``ginenv`` can shadow
them). The agent runs the actor in numpy (``agents.training.numpy_actor``; no torch)
over the numpy engine, and needs what Kaggle's ``open_spiel_gin_rummy`` arena already has:
numpy, pyspiel and safetensors. Nothing is downloaded. The set of modules is found by
following the imports from the agent's own (``ROOTS``); an import of anything else (torch,
the trainer, a package the arena lacks) stops the export with its name.
"""

from __future__ import annotations

import ast
import io
import json
import sys
import tarfile
from pathlib import Path

from agents.extras import require

require("train", what="the Kaggle export (python -m agents.export --kaggle)", main=__name__ == "__main__")

import numpy as np  # noqa: E402

from agents.training.checkpoint import (  # noqa: E402
    CheckpointError,
    command_parser,
    load_tensors,
    read_meta,
    resolve_checkpoint,
)
from agents.training.policy import network_spec  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGE = "ginbot"
#: The agent's own modules; the export adds every ``ginenv`` module they import.
ROOTS = ("agents.bridges.kaggle_bot", "agents.training.numpy_actor")
#: The search's module, a root too where the bot searches (``--search``).
SEARCH = "agents.training.search"
#: The modules of ``agents`` the bundle may carry (each imports numpy, pyspiel and
#: ``ginenv`` at most).
AGENT_MODULES = {*ROOTS, SEARCH, "agents.bridges.openspiel_bot", "agents.training.spec"}
#: Imported only when present (``ginenv.core`` falls back to its numpy engine).
OPTIONAL = {"ginenv.compiled"}
#: What the bundle may import besides itself and the standard library.
THIRD_PARTY = {"numpy", "pyspiel", "safetensors"}

MAIN = '''"""{title}

A gin rummy bot for Kaggle's open_spiel_gin_rummy arena, made by ginenv's
`python -m agents.export CHECKPOINT --kaggle`. Kaggle calls agent(observation, configuration)
and takes {{"submission": <OpenSpiel action id>}}. Needs numpy, pyspiel and safetensors.
"""

import json
import os
import sys


def _bundle_dir():
    # Kaggle runs this file with exec() and no __file__; while it runs, this file's folder
    # is the last entry of sys.path.
    here = globals().get("__file__")
    for d in (here and os.path.dirname(os.path.abspath(here)), sys.path[-1] if sys.path else None,
              "/kaggle_simulations/agent", os.getcwd()):
        if d and os.path.isfile(os.path.join(d, "{package}", "__init__.py")):
            return os.path.abspath(d)
    raise ImportError("this submission's folder (the one holding {package}/) was not found")


_DIR = _bundle_dir()
with open(os.path.join(_DIR, "policy.json")) as _f:
    _META = json.load(_f)
# Another bundle loaded in this process (two bots compared locally) left its own {package}
# modules in sys.modules: this one imports its own.
for _name in [m for m in sys.modules if m == "{package}" or m.startswith("{package}.")]:
    del sys.modules[_name]
sys.path.insert(0, _DIR)
try:
    from safetensors.numpy import load_file
    from {package}.kaggle_bot import kaggle_agent
    from {package}.numpy_actor import NumpyActor, NumpyPolicy
    from {package}.spec import NetworkSpec
    if _META.get("search"):
        from {package}.search import SearchAgent, parse_search
finally:
    sys.path.remove(_DIR)

BOT = NumpyPolicy(
    NumpyActor(load_file(os.path.join(_DIR, "policy.safetensors")), NetworkSpec.from_dict(_META["network"])),
    name=_META["name"],
)
if _META.get("search"):  # search at decision time (the export's --search), on the numpy actor
    BOT = SearchAgent(BOT, **parse_search("bot+search=" + _META["search"])[1])
_PLAY = kaggle_agent(BOT)


def agent(observation, configuration=None):
    return _PLAY(observation, configuration)
'''


def _path_of(module: str) -> Path:
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def _imports(module: str) -> list:
    """``(node, module it imports)`` for each import statement of ``module``'s source, at
    any depth; ``from pkg import name`` counts as the module ``pkg.name`` where that file
    exists."""
    out = []
    for node in ast.walk(ast.parse(_path_of(module).read_text())):
        if isinstance(node, ast.Import):
            out += [(node, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                ours = sub.split(".")[0] in ("ginenv", "agents") and _path_of(sub).exists()
                out.append((node, sub if ours else node.module))
    return out


def modules_to_bundle(search: bool = False) -> list:
    """The project's modules the agent imports, ``ROOTS`` first (and ``SEARCH`` where the
    bot searches); ``ValueError`` naming an import the bundle cannot carry."""
    found, todo = [], list(ROOTS) + ([SEARCH] if search else [])
    while todo:
        m = todo.pop(0)
        if m in found:
            continue
        found.append(m)
        for node, target in _imports(m):
            top = target.split(".")[0]
            if target in OPTIONAL or target == "__future__" or top in sys.stdlib_module_names or top in THIRD_PARTY:
                continue
            if isinstance(node, ast.Import) and top in ("ginenv", "agents"):
                raise ValueError(f"{m}: 'import {target}' cannot be renamed; write 'from ... import ...'")
            if (top == "ginenv" and target != "ginenv") or target in AGENT_MODULES:
                todo.append(target)
                continue
            raise ValueError(f"{m} imports {target}, which a Kaggle bundle cannot carry")
    names = [x.rsplit(".", 1)[1] for x in found]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise ValueError(f"two bundled modules would both be {PACKAGE}.{clash[0]}")
    return found


def _renamed(module: str) -> str:
    return f"{PACKAGE}.{module.rsplit('.', 1)[1]}"


def bundled_source(module: str) -> str:
    """``module``'s source with each import of a bundled module renamed into ``ginbot``."""
    lines = _path_of(module).read_text().split("\n")
    for node, target in _imports(module):
        if not isinstance(node, ast.ImportFrom) or node.module.split(".")[0] not in ("ginenv", "agents"):
            continue
        # ``from pkg import mod`` -> ``from ginbot import mod``; ``from pkg.mod import name`` -> ``from ginbot.mod ...``
        new = PACKAGE if target != node.module else _renamed(node.module)
        k = node.lineno - 1
        lines[k] = lines[k].replace(f"from {node.module} import", f"from {new} import", 1)
    return "\n".join(lines)


def license_text() -> bytes:
    """The project's licence: the clone's LICENSE, or the installed package's copy."""
    if (ROOT / "LICENSE").is_file():
        return (ROOT / "LICENSE").read_bytes()
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("ginenv")
    except PackageNotFoundError:
        dist = None
    text = next((t for t in (dist.read_text(n) for n in ("licenses/LICENSE", "LICENSE")) if t), None) if dist else None
    if text is None:
        raise FileNotFoundError("the ginenv licence was found neither in the clone nor in the installed package")
    return text.encode()


def bundle_files(checkpoint, search: str | None = None) -> dict:
    """The submission's files, ``{relative path: bytes}``; ``search``: the budget of the
    bot's search at decision time (as in ``+search=...``), none by default."""
    from safetensors.numpy import save

    from agents.training.search import parse_search

    if search is not None:
        try:
            parse_search(f"bot+search={search}")
        except ValueError as e:  # what a budget may be
            raise ValueError(f"--search {search}: not a budget: {str(e).split(': ', 1)[1]}") from None

    step = resolve_checkpoint(checkpoint)
    meta = read_meta(step)
    spec = network_spec(meta)
    tensors = {
        k: np.ascontiguousarray(v.float().numpy())
        for k, v in load_tensors(step / "policy.safetensors", meta).items()
        if k.startswith("actor.")
    }
    name = f"{step.parent.name}/{step.name}"
    title = f"ginenv bot {name}" + (f" with search at decision time ({search})" if search else "")
    about = {"name": name, "network": spec.to_dict(), **({"search": search} if search else {})}
    files = {
        "main.py": MAIN.format(title=title, package=PACKAGE).encode(),
        "policy.safetensors": save(tensors),
        "policy.json": json.dumps(about, indent=1).encode(),
        f"{PACKAGE}/__init__.py": (
            f'"""The modules of ginenv that the bot {name} plays with, their imports renamed into\n'
            f'{PACKAGE} (made by python -m agents.export --kaggle). Licence: ../LICENSE."""\n'
        ).encode(),
        "LICENSE": license_text(),
    }
    for module in modules_to_bundle(search=search is not None):
        files[f"{PACKAGE}/{module.rsplit('.', 1)[1]}.py"] = bundled_source(module).encode()
    return files


def export_kaggle(checkpoint, out, search: str | None = None) -> dict:
    """Write the submission to ``out``: a ``.tar.gz`` (what Kaggle takes) or a folder.
    Returns the files' sizes."""
    files = bundle_files(checkpoint, search)
    out = Path(out)
    if out.name.endswith((".tar.gz", ".tgz")):
        tmp = out.with_name(out.name + ".partial")
        with tarfile.open(tmp, "w:gz") as tar:
            for name, data in sorted(files.items()):
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                tar.addfile(info, io.BytesIO(data))
        tmp.replace(out)
    else:
        for name, data in files.items():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(data)
    return {name: len(data) for name, data in files.items()}


def main(argv=None) -> int:
    p = command_parser("python -m agents.export", __doc__)
    args = p.parse_args(argv)
    out = Path(args.kaggle)
    if out.name.endswith((".tar.gz", ".tgz")):
        if out.is_dir():
            p.error(f"--kaggle {out} is a folder; a .tar.gz name is the file to write")
        where = out.parent.resolve()
    else:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            p.error(f"--kaggle {out}: give a .tar.gz file to write, or a new or empty folder")
        where = (out if out.is_dir() else out.parent).resolve()
    if not where.is_dir():
        p.error(f"--kaggle {out}: {where} does not exist")
    try:
        sizes = export_kaggle(args.checkpoint, out, args.search)
    except (CheckpointError, ValueError) as e:
        p.error(str(e))
    print(export_summary(out, sizes))
    return 0


def export_summary(out: Path, sizes: dict) -> str:
    """What the export wrote: every file at the top, the package's module count, and the
    size a user sees (the archive's on disk; a folder's files added up, as unpacked)."""
    top = sorted({name.split("/", 1)[0] + ("/" if "/" in name else "") for name in sizes})
    modules = sum(name.startswith(f"{PACKAGE}/") for name in sizes)
    listed = ", ".join(f"{name} ({modules} files)" if name == f"{PACKAGE}/" else name for name in top)
    unpacked = sum(sizes.values())
    if out.is_file():  # the archive
        size = f"{out.stat().st_size / 1024:.0f} KiB compressed, {unpacked / 1024:.0f} KiB unpacked"
    else:
        size = f"{unpacked / 1024:.0f} KiB"
    return f"wrote {out}: {listed}; {len(sizes)} files, {size}"


if __name__ == "__main__":
    raise SystemExit(main())
