"""The docs: every relative link leads to a file of the repository, a shell block holds
commands to copy (no ``[--optional]`` placeholders), and the scripted terminal game of
docs/play.md plays without a refused entry."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_relative_link_of_the_docs_leads_to_a_file():
    checked = 0
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            assert path.exists(), f"{page.relative_to(ROOT)} links {target}, which is not there"
            assert ROOT in path.parents, f"{page.relative_to(ROOT)} links {target}, outside the repository"
            checked += 1
    assert checked >= 5


def test_shell_blocks_hold_commands_to_copy_not_placeholders():
    for page in PAGES:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(), flags=re.S):
            for line in block.splitlines():
                command = line.split("  #")[0]
                assert not re.search(r"\[--", command), f"{page.name}: {line.strip()}"


def test_the_scripted_game_of_docs_play_md_plays_without_a_refused_entry():
    text = (ROOT / "docs" / "play.md").read_text()
    (command,) = re.findall(r"`(printf '[^`]*' \| python -m agents\.play[^`]*)`", text)
    out = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "\n> ? " not in out.stdout and "? " not in out.stdout.replace("> ", "\n"), out.stdout
    assert out.stdout.count("your move") >= 3  # three entries, three positions
