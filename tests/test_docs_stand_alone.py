"""The repository's text stands alone (issue 40): no page, comment, docstring, template or help text cites the
team's design notes (the word DESIGN and a section number) or the folder beside the repository, which a user has neither
of. What they meant is said in place, or a page of ``docs/`` is named."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# built from parts, so that this file does not match itself
CITATIONS = re.compile("|".join([r"\bDESIGN" + r"(?:\s*§|'s\b|\s+\d)", r"\.\./" + "shared", r"\bshared/" + "seeds"]))
TEXT = {".py", ".md", ".html", ".txt", ".js", ".css", ".c", ".cu", ".toml", ".cfg", ".ini", ".sh", ".yml", ".yaml"}


def _tracked_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = [n for n in out.decode().split("\0") if n]
    return [ROOT / n for n in names if Path(n).suffix in TEXT or Path(n).name in {"Makefile", "README"}]


def test_nothing_cites_the_design_notes_or_a_folder_outside_the_repository():
    found = []
    for path in _tracked_text_files():
        if not path.is_file():  # deleted in the working tree, not yet committed
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            if CITATIONS.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


def test_the_pattern_finds_what_it_is_for():
    for text in ("(DESIGN" + " §1)", "DESIGN" + "'s (v, u)", "see ../" + "shared/" + "seeds/003.txt"):
        assert CITATIONS.search(text), text
    for text in ("docs/measure.md", "designed for", "the design of the page", "a shared cache"):
        assert not CITATIONS.search(text), text
